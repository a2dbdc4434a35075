"""The email corpus: threads as the Gmail API returns them (tests/gmail_fixtures.py), written for twin's offline
email path, in English and German with some French and Spanish: questions and requests from people, friends'
and colleagues' news, calendar invitations, order, shipping and booking confirmations, receipts, newsletters,
notifications, auto-replies and phishing.

Each case says whether the owner owes an answer (`needs_reply`, the contract of `twin.connectors.needs_reply`), which
key words the offline memories must hold (`facts`: what a person would want recalled: who, amounts, dates,
times, places, references, decisions) and which text must never become a memory (`never`: salutations,
sign-offs, signatures, disclaimers, footers). tests/test_email_corpus.py asserts them; bench/email_summaries.py
counts them for the code of an earlier commit and the current one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from gmail_fixtures import message_json, multipart, text_part, thread_json

OWNER = "owner@example.com"
OWNER_FROM = f"Sam Taylor <{OWNER}>"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class MailCase:
    """One thread and what the offline path must make of it."""

    name: str
    kind: str
    language: str
    thread: dict
    needs_reply: bool
    facts: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)


def mail(sender: str, subject: str, body: str, *, hours: float = 0, to: str = OWNER, html: str | None = None,
         headers: dict | None = None, attachments=(), payload: dict | None = None, labels=("INBOX",)) -> dict:
    mid = f"m{abs(hash((sender, subject, body, hours))) % 10**8}"
    return message_json(mid, sender=sender, to=to, subject=subject, body_text=body, body_html=html,
                        sent_at=T0 + timedelta(hours=hours), extra_headers=headers or {}, attachments=attachments,
                        payload=payload, labels=labels)


def case(name: str, kind: str, language: str, messages: list[dict], needs_reply: bool, facts=(), never=()) -> MailCase:
    return MailCase(name, kind, language, thread_json(f"t-{name}", messages), needs_reply, tuple(facts), tuple(never))


LIST = {"List-Unsubscribe": "<mailto:leave@news.example.com>", "List-Id": "<news.example.com>"}
BULK = {"Precedence": "bulk", "Feedback-ID": "123:campaign:esp"}
CALENDAR = multipart("mixed", [multipart("alternative", [
    text_part("text/plain", "You have been invited to the following event.\nDesign review\nWhen: Tuesday 15 "
                            "December 2026 10:00 - 11:00 (CET)\nWhere: Room 4.12, Main Street 5\nJoining info: "
                            "meet.example.com/abc\nReply for owner@example.com: Yes | No | Maybe"),
    text_part("text/calendar", "BEGIN:VCALENDAR\nMETHOD:REQUEST\nBEGIN:VEVENT\nSUMMARY:Design review\nEND:VEVENT\n"
                               "END:VCALENDAR")])])
CALENDAR_DE = multipart("mixed", [text_part("text/plain", "Sie wurden zu folgendem Termin eingeladen: "
                                                          "Jahresgespräch am 10. Dezember 2026 um 14:00 Uhr in Raum "
                                                          "B2. Nehmen Sie teil?"),
                                  {"mimeType": "application/ics", "filename": "invite.ics", "headers": [],
                                   "body": {"attachmentId": "ANGjdJics", "size": 900}}])

CASES: list[MailCase] = [
    # --- people asking the owner something -------------------------------------------------------------------
    case("slides", "question", "en", [mail("Alice Smith <alice@acme.example>", "Quarterly slides",
         "Hi Sam,\n\nI hope you're well. The numbers for Q4 are final: revenue grew to €1.2m.\nCould you send me the "
         "slides by Friday 4 December?\n\nBest regards,\nAlice Smith\nHead of Sales, Acme Ltd\nTel: +44 20 7946 0000"
         "\n\nThis email and any attachments are confidential and intended only for the named recipient.")],
         True, facts=("€1.2m", "slides", "4 December"), never=("Hi Sam", "Best regards", "confidential", "+44")),
    case("viewing", "question", "de", [mail("Anna Weber <anna@weber-hv.de>", "Besichtigung Lindenstraße",
         "Sehr geehrter Herr Taylor,\n\nvielen Dank für Ihre Anfrage.\nDer Termin zur Besichtigung ist am 15. "
         "Dezember um 9.30 Uhr in der Lindenstraße 12, 10115 Berlin.\nDie Kaution beträgt 1.250,00 € und ist bis "
         "zum 3. Januar 2027 fällig.\nKönnen Sie mir bis Freitag bestätigen, ob Sie kommen?\n\nMit freundlichen "
         "Grüßen\nAnna Weber\nHausverwaltung Weber GmbH\nGeschäftsführer: Max Weber, Amtsgericht Berlin HRB 12345\n"
         "Diese E-Mail enthält vertrauliche Informationen. Wenn Sie nicht der richtige Adressat sind, informieren "
         "Sie bitte sofort den Absender.")],
         True, facts=("15. Dezember um 9.30 Uhr", "Lindenstraße 12", "1.250,00 €", "3. Januar 2027"),
         never=("Sehr geehrter", "Mit freundlichen Grüßen", "HRB", "vertrauliche")),
    case("dentist", "question", "en", [mail("Bright Smile Dental <reception@brightsmile.example>",
         "Your appointment", "Dear Mr Taylor,\n\nYour check-up with Dr. Patel is booked for Thursday 10 December at "
         "2.15 pm at our Kings Road practice.\nCould you confirm that this time still works for you?\n\nKind "
         "regards,\nReception team")],
         True, facts=("Dr. Patel", "10 December", "2.15 pm"), never=("Dear Mr Taylor", "Kind regards")),
    case("offer", "question", "de", [mail("Jonas Becker <jonas.becker@studio-b.de>", "Angebot Webseite",
         "Hallo Sam,\n\nwie besprochen schicke ich dir anbei unser Angebot für die neue Webseite. Der Festpreis "
         "liegt bei 4.800 € zzgl. MwSt., Start wäre am 11. Januar.\nKannst du mir bis zum 18. Dezember Bescheid "
         "geben, ob das passt?\n\nViele Grüße\nJonas", attachments=[("Angebot_2026-117.pdf", 88000)])],
         True, facts=("4.800 €", "11. Januar", "18. Dezember"), never=("Hallo Sam", "Viele Grüße")),
    case("flatmate", "question", "en", [mail("Mia Chen <mia.chen@gmail.example>", "Rent and the boiler",
         "Hey Sam! The landlord says the boiler repair is on Monday between 8 and 10 am. I paid the December rent "
         "of £950 yesterday. Can you be home for the engineer?\n\nCheers,\nMia")],
         True, facts=("boiler", "£950", "Monday"), never=("Cheers", "Hey Sam")),
    case("visa", "question", "fr", [mail("Claire Martin <claire.martin@consulat.example>", "Dossier de visa",
         "Bonjour Monsieur Taylor,\n\nVotre rendez-vous au consulat est fixé au 7 janvier 2027 à 10 h 30, 12 rue de "
         "Rivoli, Paris.\nPourriez-vous nous envoyer une copie de votre passeport avant le 20 décembre ?\n\n"
         "Cordialement,\nClaire Martin")],
         True, facts=("7 janvier 2027", "12 rue de Rivoli", "20 décembre"), never=("Bonjour Monsieur", "Cordialement")),
    case("apartment", "question", "es", [mail("Carmen García <carmen@pisos.example>", "Piso en Valencia",
         "Hola Sam:\n\nEl piso de la calle Colón 14 cuesta 850 € al mes y está libre desde el 1 de febrero.\n"
         "¿Puedes decirme antes del viernes si quieres verlo?\n\nUn saludo,\nCarmen")],
         True, facts=("Colón 14", "850 €", "1 de febrero"), never=("Hola Sam", "Un saludo")),
    case("colleague-review", "question", "en", [mail("Priya Nair <priya@acme.example>", "Contract review",
         "Sam, legal approved clause 7 but wants the penalty capped at 5%. Please review the draft before our call "
         "on Wednesday at 11:00.\n\nThanks,\nPriya\n\n--\nPriya Nair | Legal Counsel")],
         True, facts=("clause 7", "5%", "11:00"), never=("Legal Counsel",)),
    case("school", "question", "de", [mail("Frau Schulz <schulz@grundschule.example>", "Elternabend",
         "Liebe Eltern,\n\nder Elternabend der Klasse 3b findet am 9. Dezember um 19 Uhr in der Aula statt. Bitte "
         "geben Sie mir bis Montag Bescheid, ob Sie teilnehmen.\n\nHerzliche Grüße\nM. Schulz")],
         True, facts=("9. Dezember um 19 Uhr", "Aula"), never=("Liebe Eltern", "Herzliche Grüße")),
    case("answered", "answered", "en", [
        mail("Tom Baker <tom@baker.example>", "Saturday", "Are you still up for the hike on Saturday? We meet at "
             "Eastgate car park at 8:30."),
        mail(OWNER_FROM, "Re: Saturday", "Yes! I will bring the map and some sandwiches.", hours=3,
             to="tom@baker.example", labels=("SENT",))],
         False, facts=("Eastgate", "8:30", "map")),
    case("cc-only", "question", "en", [mail("Dana Fox <dana@acme.example>", "Budget sign-off",
         "Rob, can you sign off the €20,000 budget for the Lisbon offsite by Tuesday?", to="rob@acme.example")],
         False, facts=("€20,000", "Lisbon")),
    # --- friends and colleagues telling the owner something ----------------------------------------------------
    case("tickets", "news", "en", [mail("Carol Diaz <carol@diaz.example>", "Concert tickets",
         "I bought two tickets for the jazz concert in Tartu on 12 December. The show starts at eight and the "
         "tickets cost $45 each.\n\nSee you soon,\nCarol")],
         False, facts=("Tartu", "12 December", "$45"), never=("See you soon",)),
    case("birthday", "news", "de", [mail("Lena Vogel <lena.vogel@web.example>", "Geburtstag",
         "Hallo Sam,\n\nich feiere meinen 40. Geburtstag am 19. Dezember ab 18 Uhr im Café Luna, Schillerstraße 8. "
         "Wir haben den ganzen Raum reserviert.\n\nLiebe Grüße\nLena")],
         False, facts=("40. Geburtstag", "19. Dezember", "Café Luna"), never=("Hallo Sam", "Liebe Grüße")),
    case("flight-friend", "news", "en", [mail("Ben Ortiz <ben.ortiz@mail.example>", "Landing time",
         "Hi Sam,\nMy flight BA 2490 lands at Heathrow Terminal 5 at 17:40 on Friday. I'll take the train to "
         "yours afterwards.\nBen")],
         False, facts=("BA 2490", "17:40", "Heathrow"), never=("Hi Sam",)),
    case("team-decision", "news", "de", [mail("Markus Roth <m.roth@firma.example>", "Entscheidung Standort",
         "Hallo zusammen,\n\nwir haben entschieden: Das neue Büro eröffnet am 1. März 2027 in Leipzig, "
         "Karl-Liebknecht-Straße 20. Der Umzug kostet ca. 35.000 €.\n\nBeste Grüße\nMarkus")],
         False, facts=("1. März 2027", "Leipzig", "35.000 €"), never=("Hallo zusammen", "Beste Grüße")),
    case("recipe", "news", "en", [mail("Grandma Rose <rose@family.example>", "Christmas",
         "Dear Sam,\n\nWe will have Christmas lunch at our house on the 25th at 1 pm. Uncle Joe is bringing the "
         "turkey.\n\nLove,\nGrandma")],
         False, facts=("25th", "1 pm", "turkey"), never=("Dear Sam", "Love,")),
    case("colleague-update", "news", "en", [mail("Priya Nair <priya@acme.example>", "Re: Contract review",
         "Good news: the client signed the contract this morning. Invoice INV-2026-0417 for €12,500 goes out on "
         "Monday.\n\nPriya")],
         False, facts=("INV-2026-0417", "€12,500")),
    case("german-thanks", "news", "de", [mail("Petra Klein <petra@klein.example>", "Danke!",
         "Liebe Sam,\n\nvielen Dank für die schönen Blumen! Ich habe mich sehr gefreut.\n\nHerzliche Grüße\nPetra")],
         False, facts=("Blumen",), never=("Liebe Sam", "Herzliche Grüße")),
    case("spanish-news", "news", "es", [mail("Luis Romero <luis@romero.example>", "Boda",
         "Hola Sam,\n\nNos casamos el 12 de junio de 2027 en Sevilla. La ceremonia empieza a las 18:00 en la "
         "iglesia de Santa Ana.\n\nUn abrazo,\nLuis")],
         False, facts=("12 de junio de 2027", "Sevilla", "18:00"), never=("Hola Sam", "Un abrazo")),
    case("owner-sent", "news", "en", [mail(OWNER_FROM, "Keys", "The spare keys are with the neighbour at number 14 "
         "until Sunday.", to="bob@example.com", labels=("SENT",))],
         False, facts=("spare keys", "number 14")),
    # --- calendar invitations ------------------------------------------------------------------------------------
    case("invite", "invitation", "en", [mail("Priya Nair <priya@acme.example>", "Invitation: Design review @ Tue 15 "
         "Dec 2026 10:00", "", payload=CALENDAR)], False, facts=("Design review",)),
    case("invite-de", "invitation", "de", [mail("Personalabteilung <hr@firma.example>", "Einladung: Jahresgespräch",
         "", payload=CALENDAR_DE)], False, facts=("Jahresgespräch", "10. Dezember 2026")),
    case("invite-google", "invitation", "en", [mail("Google Calendar <calendar-notification@google.example>",
         "Updated invitation: Standup", "This event has been changed. Standup, daily at 09:15. Going? Yes - Maybe "
         "- No")], False, facts=("Standup", "09:15")),
    # --- orders, shipping, bookings, receipts -------------------------------------------------------------------
    case("order", "order", "en", [mail("Shop Example <orders@shop.example>", "Your order 112-4471 is confirmed",
         "Thanks for your order!\nOrder number: 112-4471\nTotal: €89.90\nEstimated delivery: Thursday 3 December.\n"
         "Questions? Visit our help centre.\nView this email in your browser.")],
         False, facts=("112-4471", "€89.90"), never=("View this email",)),
    case("order-de", "order", "de", [mail("Versandhaus <bestellung@versand.example>", "Ihre Bestellung 4455-221",
         "Hallo Sam Taylor,\n\nvielen Dank für Ihre Bestellung.\nBestellnummer: 4455-221\nGesamtbetrag: 129,00 €\n"
         "Voraussichtliche Lieferung am 4. Dezember.\nHaben Sie Fragen? Unser Kundenservice hilft gerne.\n\n"
         "Impressum: Versandhaus GmbH, Amtsgericht Hamburg HRB 998")],
         False, facts=("4455-221", "129,00 €"), never=("Impressum", "HRB")),
    case("shipping", "order", "en", [mail("Parcel Co <no-reply@parcel.example>", "Your parcel is on its way",
         "Your parcel with tracking number JD0142 7788 will arrive tomorrow between 9:00 and 13:00. Not home? "
         "Please choose another day.")],
         False, facts=("JD0142",)),
    case("shipping-de", "order", "de", [mail("Paketdienst <benachrichtigung@paket.example>", "Ihr Paket kommt",
         "Ihre Sendung 00340434161234567890 wird am Mittwoch zwischen 10 und 14 Uhr zugestellt. Bitte antworten Sie "
         "nicht auf diese E-Mail.")],
         False, facts=("00340434161234567890",)),
    case("hotel", "booking", "en", [mail("Hotel Aurora <reservations@aurora.example>", "Booking confirmation "
         "AUR-55812", "Dear Sam Taylor,\nThank you for your reservation.\nBooking reference: AUR-55812\nCheck-in: 18 "
         "December 2026 from 3 pm, check-out 21 December.\nTotal: €540 for 3 nights, paid.\nWe look forward to "
         "welcoming you!")],
         False, facts=("AUR-55812", "18 December 2026", "€540")),
    case("flight", "booking", "de", [mail("Lufthansa <online@booking.lufthansa.example>", "Ihre Buchung ZX7K2P",
         "Buchungsbestätigung\nBuchungscode: ZX7K2P\nFlug LH 1234 von Frankfurt nach Lissabon am 3. März 2027, "
         "Abflug 07:25 Uhr.\nPreis: 312,40 €", headers={"X-Auto-Response-Suppress": "All"})],
         False, facts=("ZX7K2P", "LH 1234", "3. März 2027", "07:25")),
    case("receipt", "receipt", "en", [mail("Stripe <receipts@stripe.example>", "Your receipt from Coffee Club #1203",
         "Receipt #1203-8890\nAmount paid: $18.00\nDate paid: 30 November 2026\nIf you have any questions, contact "
         "us at support@coffee.example.")],
         False, facts=("$18.00",)),
    case("invoice-de", "receipt", "de", [mail("Stadtwerke <rechnung@stadtwerke.example>", "Ihre Rechnung Dezember",
         "Ihre Rechnung Nr. 2026-12-4471 über 84,20 € wird am 15.12.2026 abgebucht. Bei Fragen stehen wir Ihnen "
         "gerne zur Verfügung.")],
         False, facts=("2026-12-4471", "84,20 €")),
    case("restaurant", "booking", "fr", [mail("Le Petit Zinc <reservation@petitzinc.example>", "Votre réservation",
         "Bonjour,\nNous confirmons votre réservation pour 4 personnes le samedi 12 décembre à 20 h 00.\nÀ bientôt !\n"
         "Le Petit Zinc")],
         False, facts=("4 personnes", "12 décembre")),
    # --- newsletters and notifications --------------------------------------------------------------------------
    case("newsletter", "newsletter", "en", [mail("The Weekly <hello@weekly.example>", "This week: 10 tips",
         "Can you guess what our readers loved most this year? Read the top 10 stories now!\nUnsubscribe | Manage "
         "preferences", headers=LIST)], False, never=("Unsubscribe",)),
    case("newsletter-de", "newsletter", "de", [mail("Reisen Aktuell <news@reisen.example>", "Winterangebote",
         "Sind Sie bereit für den Winter? Jetzt 20 % auf alle Reisen nach Tirol sichern!\nNewsletter abbestellen",
         headers=BULK)], False, never=("abbestellen",)),
    case("github", "notification", "en", [mail("GitHub <notifications@github.example>", "[repo] Can you review "
         "PR #42?", "@sam can you review this pull request? It changes the login flow.",
         headers={"List-Id": "<repo.github.example>"})], False),
    case("security-alert", "notification", "en", [mail("Acme Cloud <alerts@cloud.example>", "New sign-in",
         "We noticed a new sign-in to your account from Chrome on Linux on 1 December at 08:12. Was this you?")],
         False),
    case("forum", "notification", "de", [mail("Forum <forum@verein.example>", "Neue Antwort",
         "Peter hat auf Ihren Beitrag geantwortet: Kannst du die Fotos hochladen?",
         headers={"Auto-Submitted": "auto-generated"})], False),
    case("ooo", "notification", "en", [mail("Dana Fox <dana@acme.example>", "Automatic reply: Budget",
         "I am out of the office until 4 January. Could you contact Rob in the meantime?",
         headers={"Auto-Submitted": "auto-replied"})], False),
    case("ooo-de", "notification", "de", [mail("Markus Roth <m.roth@firma.example>", "Abwesenheitsnotiz",
         "Ich bin bis zum 8. Januar nicht im Büro. Bitte wenden Sie sich an Frau Lang.",
         headers={"X-Auto-Response-Suppress": "All", "Auto-Submitted": "auto-replied"})], False),
    case("survey", "notification", "en", [mail("Shop Example <feedback@shop.example>", "How did we do?",
         "How was your order 112-4471? Please rate us in one click.", headers=BULK)], False),
    # --- phishing -----------------------------------------------------------------------------------------------
    case("phish-bank", "phishing", "en", [mail("Bank Support <support@secure-bank.example>", "Urgent: account locked",
         "Dear customer, your account has been suspended. Please verify your account within 24 hours or it will be "
         "closed. Can you log in now?",
         html='<p>Your account has been suspended. <a href="http://203.0.113.9/login">www.bank.example/login</a> '
              'Please verify your account within 24 hours.</p>',
         headers={"Reply-To": "help@mailbox-verify.example",
                  "Authentication-Results": "mx.google.com; spf=fail smtp.mailfrom=secure-bank.example"})],
         False, never=("suspended", "verify your account")),
    case("phish-de", "phishing", "de", [mail("Paypal Service <service@paypa1-konto.example>", "Ihr Konto ist gesperrt",
         "Sehr geehrter Kunde, Ihr Konto wurde gesperrt. Bestätigen Sie Ihre Daten sofort über den Link, sonst wird "
         "es gelöscht. Können Sie das heute erledigen?",
         html='<p>Ihr Konto wurde gesperrt. <a href="https://paypa1-konto.example/anmelden">paypal.com/anmelden</a>'
              ' Bestätigen Sie Ihre Daten sofort.</p>',
         headers={"Return-Path": "<bounce@mass-mailer.example>"})],
         False, never=("Bestätigen Sie Ihre Daten",)),
    case("phish-ceo", "phishing", "en", [mail("Alice Smith <alice.smith.ceo@freemail.example>", "Quick favour",
         "Are you at your desk? I need you to buy 5 gift cards urgently and send me the codes immediately.",
         headers={"Reply-To": "ceo.office@another-domain.example",
                  "Authentication-Results": "mx.google.com; dmarc=fail header.from=freemail.example"})],
         False, never=("gift cards",)),
    # --- more people ---------------------------------------------------------------------------------------------
    case("landlord-repair", "question", "en", [mail("Mr Green <green@lettings.example>", "Window repair",
         "Dear Sam,\n\nThe glazier can replace the kitchen window on 8 December at 10 am; the cost of £320 is "
         "covered by the deposit. Would that date suit you?\n\nYours sincerely,\nD. Green")],
         True, facts=("8 December", "£320"), never=("Yours sincerely",)),
    case("doctor-de", "question", "de", [mail("Praxis Dr. Yilmaz <praxis@yilmaz.example>", "Ihr Befund",
         "Guten Tag Herr Taylor,\n\nIhr Befund ist da. Bitte vereinbaren Sie z. B. telefonisch einen Termin mit Dr. "
         "Yilmaz, möglichst vor dem 20. Dezember.\n\nMit freundlichem Gruß\nIhr Praxisteam")],
         True, facts=("Dr. Yilmaz", "20. Dezember"), never=("Guten Tag", "Mit freundlichem Gruß")),
    case("support-ticket", "question", "en", [mail("Acme Support <support@acme-soft.example>", "Ticket #55102",
         "Hi Sam,\nThanks for the report about the sync error. Could you send us the log file from ~/.acme/logs so "
         "we can reproduce it?\nBest,\nJo from Acme Support")],
         True, facts=("#55102", "log file")),
    case("thread-de", "question", "de", [
        mail("Ole Hansen <ole@hansen.example>", "Umzug", "Hallo Sam, der Transporter ist für Samstag, 12. Dezember, "
             "ab 8 Uhr gebucht."),
        mail(OWNER_FROM, "Re: Umzug", "Super, ich bringe Kartons und Kaffee mit.", hours=2, to="ole@hansen.example",
             labels=("SENT",)),
        mail("Ole Hansen <ole@hansen.example>", "Re: Umzug", "Prima. Kannst du auch den Schlüssel für den Keller "
             "mitbringen?", hours=5)],
         True, facts=("12. Dezember", "Kartons", "Schlüssel")),
    case("friend-plain", "question", "en", [mail("Jess <jess@mail.example>", "hey",
         "how was the trip?? we should catch up soon. free thursday?")],
         True),
]
