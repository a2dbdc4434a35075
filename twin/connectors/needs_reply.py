"""Whether the owner owes the sender of an email an answer, decided from the mail's own structure first and its
text second (ours; measured on tests/email_corpus.py by bench/email_summaries.py).

Structure: mail sent by a machine never waits for an answer: mailing lists (RFC 2369/2919 `List-*`), bulk mail
(`Precedence`, `Feedback-ID`), auto-replies and notifications (RFC 3834 `Auto-Submitted`, Exchange's
`X-Auto-Response-Suppress`), calendar invitations (a `text/calendar` part or an `.ics` file: they are answered
with the calendar's buttons, not a mail), role senders (noreply, notifications, billing, orders, …) and receipts,
order, shipping and booking confirmations sent from one. Mail with signs of phishing (`phishing_signs`) never
waits either. Text: a person's mail waits when it asks the owner something: a question, or a request in
English, German, French, Spanish, Italian, Dutch or Portuguese; pleasantries ("Let me know if you have any
questions") and service lines ("Questions? Visit our help centre") do not count. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from twin.connectors.email_prose import body_sentences, is_boilerplate, is_filler, without_greeting

_LIST_HEADERS = ("list-id", "list-unsubscribe", "list-post", "list-help", "list-archive", "feedback-id")
_ROLE_SENDER = re.compile(
    r"(?:no-?reply|do-?not-?reply|donotreply|notifications?|notify|alerts?|mailer-daemon|postmaster|bounces?"
    r"|newsletters?|news|marketing|mailer|automated|system|daemon|calendar-notification|billing|invoices?"
    r"|receipts?|orders?|order-update|shipping|shipment|delivery|tracking|payments?|statements?|accounts?"
    r"|security|service|services|info|hello|team|support|kundenservice|service-client|rechnung|factura"
    r"|versand|bestellung|commande|pedidos?|reservations?|bookings?|confirmation)(?:[+._-].*)?")
_MACHINE_ONLY = re.compile(r"(?:no-?reply|do-?not-?reply|donotreply|notifications?|notify|alerts?|mailer-daemon"
                           r"|postmaster|bounces?|newsletters?|mailer|automated|daemon|calendar-notification"
                           r"|benachrichtigung(?:en)?|keine-?antwort|nepasrepondre|ne-?pas-?repondre|no-?responder"
                           r")(?:[+._-].*)?")
_TRANSACTION = re.compile(
    r"(?i)\b(?:order (?:number|no|#|confirmation)|your order|has (?:been )?shipped|tracking (?:number|link)"
    r"|receipt|invoice|payment (?:received|confirmation)|booking (?:confirmation|reference|number)|reservation"
    r"|confirmation number|bestellnummer|ihre bestellung|deine bestellung|sendungsnummer|versandbestätigung"
    r"|rechnung|zahlungseingang|buchungsbestätigung|buchungsnummer|reservierung|quittung"
    r"|numéro de commande|votre commande|facture|reçu|confirmation de réservation|numéro de suivi"
    r"|número de pedido|su pedido|tu pedido|factura|recibo|confirmación de (?:reserva|pedido)|número de seguimiento)")
_NO_REPLY_TEXT = re.compile(
    r"(?i)(?:do not|don['’]t) reply to this (?:e-?mail|message|address|notification)"
    r"|antworten sie nicht auf diese|nicht auf diese (?:e-?mail|nachricht) antworten"
    r"|ne (?:pas )?répondre à ce|no (?:responda|respondas|conteste) a este|automatically generated"
    r"|automatisch (?:erstellt|generiert)|généré automatiquement|generado automáticamente")


def automated_reason(headers: Mapping[str, str], sender_address: str, body: str, calendar: bool) -> str | None:
    """Why a message was sent by a machine ("mailing list", "bulk mail", "automatic reply", "calendar
    invitation", "role sender", "confirmation from a role sender", "says not to reply"), or None for a person's
    mail. `headers` has lower-case names; `calendar` is whether it carries a text/calendar part or an .ics file."""
    if any(name in headers for name in _LIST_HEADERS):
        return "mailing list"
    if headers.get("precedence", "").strip().lower() in ("bulk", "list", "junk", "auto_reply"):
        return "bulk mail"
    if headers.get("auto-submitted", "no").strip().lower() != "no" or "x-autoreply" in headers \
            or "x-autorespond" in headers or "x-auto-response-suppress" in headers:
        return "automatic reply"
    if calendar:
        return "calendar invitation"
    local = sender_address.split("@")[0]
    if _MACHINE_ONLY.fullmatch(local):
        return "role sender"
    if _NO_REPLY_TEXT.search(body):
        return "says not to reply"
    if _ROLE_SENDER.fullmatch(local) and _TRANSACTION.search(body) and not _direct_request(body):
        return "confirmation from a role sender"
    return None


# --- phishing ----------------------------------------------------------------------------------------------------

_URGENT = re.compile(
    r"(?i)\b(?:urgent|immediately|within (?:24|48|72) hours|suspend(?:ed)?|locked|disabled|unusual (?:activity|sign)"
    r"|verify your (?:account|identity|details)|confirm your (?:account|identity|details|password)|action required"
    r"|final notice|will be (?:closed|deleted|terminated)|dringend|sofort|umgehend|innerhalb von (?:24|48) stunden"
    r"|gesperrt|deaktiviert|ungewöhnliche aktivität|verifizieren sie"
    r"|bestätigen sie ihr(?:e|en)? (?:konto|identität|daten)"
    r"|letzte mahnung|immédiatement|dans les (?:24|48) heures|suspendu|bloqué|activité inhabituelle"
    r"|vérifie[rz] votre (?:compte|identité)|urgente|inmediatamente|en (?:24|48) horas|suspendida|bloqueada"
    r"|actividad inusual|verifi(?:car|que) su (?:cuenta|identidad))")
_LOGIN = re.compile(r"(?i)log-?in|sign-?in|logon|verif|account|secure|passw|konto|anmeld|webscr|auth|update-?info"
                    r"|banking|wallet")
_IP_HOST = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_DOMAIN_IN_TEXT = re.compile(r"(?i)\b((?:[a-z0-9-]+\.)+[a-z]{2,})\b")
PHISHING_MIN_SIGNS = 2
"""Signs a message needs to count as phishing (ours: each sign alone occurs in honest mail: a Reply-To to a
colleague, a newsletter's login link, an urgent word)."""


def phishing_signs(headers: Mapping[str, str], sender_address: str, body: str,
                   links: Iterable[tuple[str, str]]) -> list[str]:
    """The phishing signs of a message when there are at least `PHISHING_MIN_SIGNS`, else []: the receiving
    server's SPF/DMARC verdict is fail (`Authentication-Results`), Reply-To or Return-Path on another domain than
    From, a link whose text names another domain than it goes to, a link to a bare IP address, a link to a login
    or account page together with urgent words. `links` are `(href, anchor text)` pairs."""
    signs: list[str] = []
    verdict = headers.get("authentication-results", "").lower()
    if re.search(r"\b(?:dmarc|spf)=fail", verdict):
        signs.append("the sender's domain failed SPF/DMARC")
    sender_domain = _site(sender_address.rpartition("@")[2])
    for name in ("reply-to", "return-path"):
        other = re.search(r"[\w.+-]+@([\w-]+(?:\.[\w-]+)+)", headers.get(name, ""))
        if other and sender_domain and _site(other.group(1)) != sender_domain:
            signs.append(f"{'Reply-To' if name == 'reply-to' else 'Return-Path'} is on another domain")
    login = False
    for href, text in links:
        host = (urlsplit(href).hostname or "").lower()
        if not host:
            continue
        shown = _DOMAIN_IN_TEXT.search(text or "")
        if shown and _site(shown.group(1)) != _site(host) and "link text" not in " ".join(signs):
            signs.append("a link text names another site than the link goes to")
        if _IP_HOST.match(host) and "IP" not in " ".join(signs):
            signs.append("a link goes to a bare IP address")
        login = login or bool(_LOGIN.search(href))
    if login and _URGENT.search(body):
        signs.append("a login link with urgent words")
    return signs if len(signs) >= PHISHING_MIN_SIGNS else []


def _site(host: str) -> str:
    """The registrable part of a host name, approximately: its last two labels, three under a two-letter
    second-level suffix ("bank.co.uk")."""
    labels = host.lower().strip(".").split(".")
    if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in ("co", "com", "org", "net", "ac", "gov", "or"):
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


# --- the text ----------------------------------------------------------------------------------------------------

_QUESTION = re.compile(r"[?？][\"'”’»)\]]*$")
_REQUEST = re.compile(
    r"(?i)\b(?:could|can|would|will) you\b|\bplease\b|\blet me know\b|\bsend me\b|\bare you able\b|\bplease advise\b"
    r"|\b(?:können|könnten|würden|wären) sie\b|\b(?:kannst|könntest|würdest) du\b|\bbitte\b|\bgib mir bescheid\b"
    r"|\bgeben sie mir bescheid\b|\blass(?:en sie)? mich wissen\b|\bschick(?:en sie)? mir\b|\bmelde dich\b"
    r"|\bpourriez-vous\b|\bpouvez-vous\b|\bpeux-tu\b|\bpourrais-tu\b|\bmerci de\b|\bveuillez\b|\bs['’]il vous plaît\b"
    r"|\bs['’]il te plaît\b|\btiens-moi au courant\b|\bdites-moi\b|\bdis-moi\b|\benvoyez-moi\b|\benvoie-moi\b"
    r"|\bpodr(?:ías|ía usted|íais)\b|\bpuedes\b|\bpuede usted\b|\bpor favor\b|\bavísame\b|\bdime\b|\benvíame\b"
    r"|\bmándame\b|\bconfírmame\b|\bpotresti\b|\bpotrebbe\b|\bper favore\b|\bkun je\b|\bkunt u\b|\balsjeblieft\b"
    r"|\bpoderia\b|\bpor favor\b")
_NOT_REQUEST = re.compile(
    r"(?i)\bplease (?:find|see) (?:attached|enclosed|below)\b|\bplease note\b|\battached (?:please )?(?:find|is)\b"
    r"|\bbitte beachten\b|\banbei\b|\bim anhang\b|\bbitte (?:finden sie|sehen sie) (?:anbei|im anhang)\b"
    r"|\bveuillez trouver\b|\bci-joint\b|\bveuillez noter\b|\badjunto\b|\ben el adjunto\b|\btenga en cuenta\b"
    r"|\bin allegato\b|\bin de bijlage\b|\bem anexo\b")
_SERVICE_QUESTION = re.compile(
    r"(?i)^(?:questions|any questions|need help|not you|fragen|noch fragen|haben sie fragen|des questions"
    r"|besoin d['’]aide|¿?preguntas|¿?dudas|¿?necesitas ayuda|didn['’]t (?:request|sign up)|problems)\b.{0,40}$")
_DIRECT = re.compile(
    r"(?i)\b(?:could|can|would|will) you\b|\b(?:können|könnten|würden) sie\b|\b(?:kannst|könntest) du\b"
    r"|\bpourriez-vous\b|\bpouvez-vous\b|\bpeux-tu\b|\bpodr(?:ías|ía usted)\b|\bpuedes\b|\bplease (?:reply|confirm)\b"
    r"|\bbitte (?:antworten|bestätigen)\b|\bmerci de (?:confirmer|répondre)\b|\bpor favor,? (?:confirm|respond)")


def _direct_request(body: str) -> bool:
    return _DIRECT.search(body) is not None


def asks_owner(sentence: str) -> bool:
    """Whether a sentence asks its reader something: a question (not a service line such as "Questions? Call
    us.") or a request (not "please find attached", "bitte beachten", "ci-joint", …), and no pleasantry."""
    text = sentence.strip()
    if is_filler(text) or is_boilerplate(text) or _SERVICE_QUESTION.match(text):
        return False
    if _QUESTION.search(text) or text.startswith("¿"):
        return True
    return _REQUEST.search(text) is not None and _NOT_REQUEST.search(text) is None


def reply_reason(body: str, language: str, max_chars: int) -> str | None:
    """The first sentence of `body` that asks the owner something (`asks_owner`), its salutation cut and at
    most `max_chars` characters (a cut ends with "…"); None when nothing is asked."""
    for sentence in body_sentences(body, language):
        if asks_owner(sentence):
            return clip(without_greeting(sentence), max_chars)
    return None


def clip(text: str, max_chars: int) -> str:
    """`text` cut to `max_chars` at a word boundary when one is near, with "…"."""
    if len(text) <= max_chars:
        return text
    if max_chars <= 1:
        return text[:max(max_chars, 0)]
    cut = text[:max_chars - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > max_chars // 2 else cut).rstrip() + "…"
