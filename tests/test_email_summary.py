"""The offline email path piece by piece, on texts written for these tests (not the corpus): sentences in the
mail's language, salutations and sign-offs, reported speech, the needs-reply rule from structure and text, and
summaries through the offline extractor."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from gmail_fixtures import message_json, multipart, text_part, thread_json

from twin.connectors.email_prose import (
    body_sentences,
    guess_language,
    is_boilerplate,
    is_filler,
    is_greeting,
    is_sign_off,
    without_greeting,
)
from twin.connectors.email_summary import content_sentences, fact_score, heuristic_summary
from twin.connectors.email_text import parse_thread
from twin.connectors.needs_reply import asks_owner, automated_reason, phishing_signs
from twin.text.extractor import extract, split_sentences
from twin.text.reported_speech import reported

OWNER = "owner@example.com"
T0 = datetime(2027, 2, 3, 8, 30, tzinfo=UTC)


def parsed(body: str, sender: str = "Nora Lind <nora@lind.example>", subject: str = "Plans", **kwargs):
    return parse_thread(thread_json("t1", [message_json("m1", sender=sender, to=OWNER, subject=subject,
                                                        body_text=body, sent_at=T0, **kwargs)]), [OWNER])


# --- language and sentences --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "language"), [
    ("Wir haben die Rechnung bezahlt und das Paket ist unterwegs.", "de"),
    ("Nous avons reçu votre dossier et le rendez-vous est confirmé.", "fr"),
    ("El paquete llega el lunes y la factura está pagada.", "es"),
    ("The parcel arrives on Monday and the invoice is paid.", "en"),
    ("12:30", "en")])
def test_language_guess(text, language):
    assert guess_language(text) == language


@pytest.mark.parametrize(("text", "language", "expected"), [
    ("Die Feier ist am 7. Februar um 20.15 Uhr. Wir bringen z. B. Salate mit.", "de",
     ["Die Feier ist am 7. Februar um 20.15 Uhr.", "Wir bringen z. B. Salate mit."]),
    ("Das ist unser 2. Versuch. Die Miete beträgt 2.340,50 € inkl. Nebenkosten.", "de",
     ["Das ist unser 2. Versuch.", "Die Miete beträgt 2.340,50 € inkl. Nebenkosten."]),
    ("Mme. Roux arrive le 2 avril à 8 h 15. Merci.", "fr", ["Mme. Roux arrive le 2 avril à 8 h 15.", "Merci."]),
    ("Invoice No. 88 is due on Feb. 28. Dr. Lee signed it, e.g. page 2.", "en",
     ["Invoice No. 88 is due on Feb. 28.", "Dr. Lee signed it, e.g. page 2."]),
    ("Wir treffen uns\nam Bahnhof Zoo, Gleis 4, und fahren dann\nweiter nach Potsdam.\nTom Berg", "de",
     ["Wir treffen uns am Bahnhof Zoo, Gleis 4, und fahren dann weiter nach Potsdam.", "Tom Berg"])])
def test_body_sentences_keep_dates_abbreviations_and_amounts_whole(text, language, expected):
    assert body_sentences(text, language) == expected


@pytest.mark.parametrize("text", ["Wir feiern am 7. Februar im Garten.", "Das Paket kommt am 1. April 2027.",
                                  "Bringen Sie z. B. einen Schirm mit.", "Er kommt ca. 10 Min. später, d. h. um 9."])
def test_the_extractor_does_not_split_german_dates_and_abbreviations(text):
    assert split_sentences(text) == [text]


@pytest.mark.parametrize("line", ["Dear Ms Okafor,", "Hello team,", "Liebe Frau Brandt,",
                                  "Sehr geehrter Herr Dr. Kaya,",
                                  "Guten Morgen zusammen!", "Chère Sophie,", "Madame, Monsieur,", "Estimado Sr. Ruiz:",
                                  "Buenos días Lucía,"])
def test_salutations(line):
    assert is_greeting(line)


@pytest.mark.parametrize("line", ["Dear Ms Okafor, the parcel is here and I will bring it over tonight.",
                                  "Liebe Grüße ändern nichts daran, dass die Frist am Montag endet."])
def test_a_sentence_is_not_a_salutation(line):
    assert not is_greeting(line)


@pytest.mark.parametrize("line", ["Warm regards,", "Cheers, Dave", "Freundliche Grüße aus Köln", "LG Jana", "Gruß,",
                                  "Bien cordialement,", "Bises", "Saludos cordiales,", "Atentamente, Pedro Ruiz",
                                  "Merci d'avance", "Thanks again!"])
def test_sign_offs(line):
    assert is_sign_off(line)


@pytest.mark.parametrize("line", ["Thanks for the map, it was exactly what we needed.", "Best price is €40.",
                                  "Love the new kitchen, the tiles are perfect."])
def test_content_is_not_a_sign_off(line):
    assert not is_sign_off(line)


def test_salutation_clauses_fillers_and_boilerplate():
    assert without_greeting("Hallo Jana, der Schlüssel liegt im Briefkasten.") == "Der Schlüssel liegt im Briefkasten."
    assert without_greeting("Hi Ravi,") == "Hi Ravi,"
    assert all(is_filler(s) for s in ["Hope you had a good weekend.", "Ich hoffe, es geht Ihnen gut.",
                                      "Merci pour votre message.", "Espero que estés bien.",
                                      "Please let me know if you have any questions."])
    assert not is_filler("Let me know if the 3 pm slot on Friday works.")
    assert all(is_boilerplate(s) for s in [
        "If you are not the intended recipient, please delete this message.", "Abmelden | Im Browser ansehen",
        "© 2026 Example GmbH. Alle Rechte vorbehalten.", "[image: logo]", "https://t.example/o/abc123def456ghi789",
        "Pour vous désabonner, cliquez ici.", "Tel: +49 89 123456"])
    assert not is_boilerplate("The lease for the flat in Graz is signed.")


# --- reported speech -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "language", "expected"), [
    ("I will send the slides.", "en", "Nora Lind will send the slides."),
    ("I send the report every Monday and I miss our chats.", "en",
     "Nora Lind sends the report every Monday and Nora Lind misses their chats."),
    ("I've moved the meeting; I'm sorry and I try to fix my calendar.", "en",
     "Nora Lind has moved the meeting; Nora Lind is sorry and Nora Lind tries to fix Nora Lind's calendar."),
    ("We're late but we booked the room for us.", "en",
     "Nora Lind and others are late but Nora Lind and others booked the room for Nora Lind and others."),
    ("Ich buche das Hotel und melde mich morgen.", "de", "Nora Lind bucht das Hotel und meldet sich morgen."),
    ("Am Montag arbeite ich von zu Hause, mein Laptop ist kaputt.", "de",
     "Am Montag arbeitet Nora Lind von zu Hause, Nora Linds Laptop ist kaputt."),
    ("Wir sind am Freitag in unserem Büro.", "de", "Nora Lind und andere sind am Freitag in ihrem Büro."),
    ("Je serai à Nantes et je prends le train de 9 h.", "fr",
     "Nora Lind sera à Nantes et Nora Lind prend le train de 9 h."),
    ("J'attends ta réponse, mon ami.", "fr", "Nora Lind attend ta réponse, son ami."),
    ("Je vis à Lyon, je cours le matin et je bats mon record.", "fr",
     "Nora Lind vit à Lyon, Nora Lind court le matin et Nora Lind bat son record."),
    ("Je ne connais pas la date.", "fr", "Nora Lind ne connaît pas la date."),
    ("Yo tengo las llaves de mi casa.", "es", "Nora Lind tiene las llaves de su casa."),
    ("Ik kom morgen.", "nl", "Ik kom morgen.")])
def test_reported_speech(text, language, expected):
    assert reported(text, "Nora Lind", language) == expected


def test_all_caps_words_are_not_pronouns():
    assert reported("The US team and ME region agreed.", "Nora", "en") == "The US team and ME region agreed."


# --- needs a reply: structure and text ----------------------------------------------------------------------------

@pytest.mark.parametrize(("headers", "sender", "body", "calendar", "reason"), [
    ({"list-post": "<mailto:club@lists.example>"}, "ana@club.example", "Who comes?", False, "mailing list"),
    ({"precedence": "junk"}, "ana@club.example", "Who comes?", False, "bulk mail"),
    ({"x-auto-response-suppress": "OOF"}, "ana@club.example", "Who comes?", False, "automatic reply"),
    ({}, "ana@club.example", "Who comes?", True, "calendar invitation"),
    ({}, "bounce-123@mailer.example", "Who comes?", False, "role sender"),
    ({}, "keine-antwort@amt.example", "Kommen Sie?", False, "role sender"),
    ({}, "ana@club.example", "This message was generated automatically. Do not reply to this email.", False,
     "says not to reply"),
    ({}, "orders@store.example", "Your order 5521 has shipped. Questions? Call us.", False,
     "confirmation from a role sender")])
def test_machine_mail_by_its_structure(headers, sender, body, calendar, reason):
    assert automated_reason(headers, sender, body, calendar) == reason


def test_a_role_address_asking_a_real_question_is_a_person():
    body = "About your reservation: could you tell us your arrival time?"
    assert automated_reason({}, "reservations@inn.example", body, False) is None
    assert automated_reason({}, "ana@club.example", "Your order is ready, come by on Monday.", False) is None


def test_phishing_needs_two_signs():
    links = [("https://login.evil.example/verify", "www.mybank.example")]
    assert phishing_signs({"reply-to": "x@other.example"}, "alerts@mybank.example", "Urgent: verify your account.",
                          links) == ["Reply-To is on another domain", "a link text names another site than the link "
                                     "goes to", "a login link with urgent words"]
    assert phishing_signs({"reply-to": "team@other.example"}, "ana@club.example", "See you Friday.", []) == []
    assert phishing_signs({"authentication-results": "mx; dmarc=fail"}, "a@b.example", "Hello.",
                          [("http://198.51.100.7/x", "")]) == ["the sender's domain failed SPF/DMARC",
                                                                 "a link goes to a bare IP address"]


@pytest.mark.parametrize(("sentence", "asks"), [
    ("Kannst du mir die Fotos schicken?", True), ("Könnten Sie den Vertrag unterschreiben.", True),
    ("Merci de confirmer votre présence.", True), ("¿Vienes el sábado", True), ("Please call the plumber.", True),
    ("Questions? Contact our support team.", False), ("Fragen? Rufen Sie uns an.", False),
    ("Anbei die Rechnung, bitte beachten Sie die Frist.", False), ("Veuillez trouver ci-joint le devis.", False),
    ("Don't hesitate to reach out.", False), ("The bus leaves at 7.", False)])
def test_what_asks_the_owner(sentence, asks):
    assert asks_owner(sentence) is asks


def test_a_calendar_part_or_ics_file_is_an_invitation_not_a_question():
    body = "Join us for the kickoff. Will you attend?"
    inline = multipart("alternative", [text_part("text/plain", body), text_part("text/calendar", "BEGIN:VCALENDAR")])
    thread = parsed(body, payload=inline)
    assert thread.messages[0].automated == "calendar invitation" and not thread.needs_reply
    assert not parsed(body, attachments=[("kickoff.ics", 700)]).needs_reply
    assert parsed(body).needs_reply


def test_a_phishing_mail_never_waits_and_says_why():
    thread = parsed("Your mailbox is full and will be closed within 24 hours. Could you log in now?",
                    sender="IT Desk <it@company.example>",
                    body_html='<a href="https://mail-company.example/login">company.example/login</a>',
                    extra_headers={"Reply-To": "desk@quick-help.example"})
    assert not thread.needs_reply and len(thread.messages[0].phishing) == 3
    summary = heuristic_summary(thread)
    assert "signs of phishing" in summary and "log in" not in summary and "mailbox is full" not in summary


# --- summaries ----------------------------------------------------------------------------------------------------

def test_fact_score_ranks_what_matters():
    assert fact_score("The ferry to Hvar leaves at 06:40 on 14 May, tickets cost €32.") > fact_score(
        "The weather was lovely and we walked a lot.") == 0


def test_content_sentences_drop_the_wrapping_and_keep_a_ps():
    body = ("Hallo Jana,\n\nich hoffe, es geht dir gut.\nDer Kurs beginnt am 2. März um 18 Uhr in Raum 3.\n\n"
            "Liebe Grüße\nTom Berg\nVolkshochschule Mitte\nTel. 030 555 0101\n\nP.S. Bring deine Hausschuhe mit!")
    thread = parsed(body, sender="Tom Berg <tom@vhs.example>")
    assert content_sentences(thread.messages[0]) == ["Der Kurs beginnt am 2. März um 18 Uhr in Raum 3.",
                                                     "Bring deine Hausschuhe mit!"]


def test_summary_of_a_german_mail_through_the_extractor():
    body = ("Guten Tag Frau Okafor,\n\nich bestätige Ihren Termin am 4. Februar 2027 um 10.45 Uhr in der "
            "Praxis am Markt 3. Die Behandlung kostet ca. 80,00 €.\nBitte bringen Sie Ihre Versichertenkarte mit.\n\n"
            "Mit freundlichen Grüßen\nDr. Ines Kaya\nZahnarztpraxis Kaya\nUSt-IdNr. DE123456789")
    memories = [m.content for m in extract(heuristic_summary(parsed(body, sender="Dr. Ines Kaya <kaya@praxis.example>",
                                                                    subject="Ihr Termin")))]
    assert memories[0] == ("Dr. Ines Kaya emailed Owner about “Ihr Termin” on 3 February 2027: “Dr. Ines Kaya "
                           "bestätigt Ihren Termin am 4. Februar 2027 um 10.45 Uhr in der Praxis am Markt 3”.")
    assert any("ca. 80,00 €" in m for m in memories)
    assert any("Owner has not replied yet" in m and "Versichertenkarte" in m for m in memories)
    assert not any(word in m for m in memories for word in ("Guten Tag", "Grüßen", "USt", "Zahnarztpraxis"))


def test_summary_keeps_facts_from_every_message_and_reports_each_writer():
    first = message_json("m1", sender="Nora Lind <nora@lind.example>", to=OWNER, subject="Cabin",
                         body_text="I booked the cabin at Lake Vättern for 12-14 March, it costs 4,200 SEK.",
                         sent_at=T0)
    second = message_json("m2", sender=f"Sam <{OWNER}>", to="nora@lind.example", subject="Re: Cabin",
                          body_text="Great, I pay half and I bring the canoe.", sent_at=T0.replace(hour=12),
                          labels=["SENT"])
    memories = [m.content for m in extract(heuristic_summary(parse_thread(thread_json("t1", [first, second]),
                                                                          [OWNER])))]
    assert memories[:2] == [
        "Nora Lind emailed Owner about “Cabin” on 3 February 2027: “Nora Lind booked the cabin at Lake Vättern for "
        "12-14 March, it costs 4,200 SEK”.",
        "Owner replied to Nora Lind about “Cabin” on 3 February 2027: “Great, Owner pays half and Owner brings the "
        "canoe”."]


def test_a_newsletter_gives_few_memories_and_no_footer():
    body = ("Spring sale: 30% off all bikes until 31 March!\nOur new shop opens in Malmö on 2 April.\n"
            "Read our blog for tips.\nYou are receiving this email because you signed up.\nUnsubscribe here.")
    thread = parsed(body, sender="Velo Shop <news@velo.example>", extra_headers={"List-Unsubscribe": "<mailto:u@x>"})
    memories = [m.content for m in extract(heuristic_summary(thread))]
    assert len(memories) <= 3 and any("30% off" in m for m in memories) and any("Malmö" in m for m in memories)
    assert not any("Unsubscribe" in m or "receiving this" in m for m in memories)
