"""The offline email path piece by piece, on texts written for these tests (not the corpus): sentences in the
mail's language, salutations and sign-offs, reported speech, the needs-reply rule from structure and text, and
summaries through the offline extractor."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from case_tables import case_tables
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

CASES = case_tables("email_summary")
"""The case tables of this module (tests/data/email_summary_cases.toml)."""

OWNER = "owner@example.com"
T0 = datetime(2027, 2, 3, 8, 30, tzinfo=UTC)


def parsed(body: str, sender: str = "Nora Lind <nora@lind.example>", subject: str = "Plans", **kwargs):
    return parse_thread(thread_json("t1", [message_json("m1", sender=sender, to=OWNER, subject=subject,
                                                        body_text=body, sent_at=T0, **kwargs)]), [OWNER])


# --- language and sentences --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "language"), CASES["test_language_guess"])
def test_language_guess(text, language):
    assert guess_language(text) == language


@pytest.mark.parametrize(("text", "language", "expected"),
    CASES["test_body_sentences_keep_dates_abbreviations_and_amounts_whole"])
def test_body_sentences_keep_dates_abbreviations_and_amounts_whole(text, language, expected):
    assert body_sentences(text, language) == expected


@pytest.mark.parametrize("text", CASES["test_the_extractor_does_not_split_german_dates_and_abbreviations"])
def test_the_extractor_does_not_split_german_dates_and_abbreviations(text):
    assert split_sentences(text) == [text]


@pytest.mark.parametrize("line", CASES["test_salutations"])
def test_salutations(line):
    assert is_greeting(line)


@pytest.mark.parametrize("line", ["Dear Ms Okafor, the parcel is here and I will bring it over tonight.",
                                  "Liebe Grüße ändern nichts daran, dass die Frist am Montag endet."])
def test_a_sentence_is_not_a_salutation(line):
    assert not is_greeting(line)


@pytest.mark.parametrize("line", CASES["test_sign_offs"])
def test_sign_offs(line):
    assert is_sign_off(line)


@pytest.mark.parametrize("line", CASES["test_content_is_not_a_sign_off"])
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

@pytest.mark.parametrize(("text", "language", "expected"), CASES["test_reported_speech"])
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


@pytest.mark.parametrize(("sentence", "asks"), CASES["test_what_asks_the_owner"])
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
