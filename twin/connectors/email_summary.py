"""The offline summary of an email thread (seed 001: a sync without a model "uses its own heuristic fallback"):
the few sentences of the thread a person would want recalled, each made into one third-person sentence that
stands alone as a memory.

What is kept: per message, its sentences after the salutation and before the sign-off and signature, without
pleasantries, disclaimers, footers, image placeholders and quoted history (`twin.connectors.email_prose`, in the
mail's language), ranked by what they carry (`fact_score`: amounts, dates, times, references, places,
decisions and commitments, questions and requests to the owner). The best `MAX_FACTS` of the thread are kept in
thread order, the newest message's best always among them; a mail with no ranked sentence keeps its first real
one. Mail with signs of phishing is named as such and its content is not learned. Pure functions.
"""

from __future__ import annotations

import re

from twin.connectors.email_prose import (
    body_sentences,
    is_boilerplate,
    is_filler,
    is_greeting,
    is_sign_off,
    without_greeting,
)
from twin.connectors.email_text import REASON_MAX_CHARS, EmailMessage, EmailThread, display_name
from twin.connectors.needs_reply import asks_owner, clip
from twin.text.extractor import split_sentences
from twin.text.reported_speech import reported

MAX_FACTS = 6
"""Content sentences kept per thread (ours: with the reply, thread and attachment sentences a summary stays
within the 12 memories a thread may give, twin.workers.jobs.EMAIL_MEMORIES_PER_THREAD)."""
MAX_FACTS_PER_MESSAGE = 3
"""Content sentences kept per message, so one long mail does not crowd out the rest of the thread."""
MAX_FACTS_AUTOMATED = 3
"""Content sentences kept from a newsletter, notification or confirmation (its order number, amount, date)."""
EXCERPT_MAX_CHARS = 240
"""Longest quote of one sentence (characters)."""
SENTENCE_MAX_CHARS = 390
"""Longest summary sentence (characters): the offline extractor keeps sentences of at most 400 (seed 000)."""
MIN_WORDS = 4
"""A content sentence has at least this many words, or 2 when it holds an amount, a date, a time or a reference
("Total: €89.90")."""

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_MONTH_WORDS = (r"jan(?:uary|uar|vier)?|feb(?:ruary|ruar)?|févr(?:ier)?|mar(?:ch|s|zo)?|märz|apr(?:il|ile)?|avr(?:il)?"
                r"|abr(?:il)?|may|mai|mayo|maggio|jun[ei]?o?|juin|juli?|july|juil(?:let)?|julio|aug(?:ust)?|août"
                r"|agosto|sep(?:t(?:ember|embre|iembre)?)?|oct(?:ober|obre|ubre)?|okt(?:ober)?|nov(?:ember|embre"
                r"|iembre)?|dec(?:ember)?|dez(?:ember)?|déc(?:embre)?|dic(?:iembre)?|ene(?:ro)?")
_DAY_WORDS = (r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|montag|dienstag|mittwoch|donnerstag"
              r"|freitag|samstag|sonntag|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|lunes|martes"
              r"|miércoles|jueves|viernes|sábado|domingo|tomorrow|today|tonight|morgen|übermorgen|heute|demain"
              r"|aujourd['’]hui|ce soir|mañana|hoy|next week|nächste[nr]? woche|la semaine prochaine"
              r"|la próxima semana|la semana que viene")
_SIGNALS: tuple[tuple[float, re.Pattern], ...] = (
    (3.0, re.compile(r"(?i)(?:[$€£¥₹]|\b(?:eur|usd|gbp|chf|sek|nok|dkk|pln)\b)\s?\d"
                     r"|\d[\d.,' ]*\s?(?:[$€£¥₹]|\b(?:eur|usd|gbp|chf|euros?|dollars?|pounds?|francs?)\b)")),
    (2.0, re.compile(rf"(?i)\b\d{{1,2}}(?:st|nd|rd|th|er|º)?\.?\s*(?:de\s+)?(?:{_MONTH_WORDS})\b"
                     rf"|\b(?:{_MONTH_WORDS})\.?\s+\d{{1,2}}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b"
                     r"|\b\d{1,2}[./]\d{1,2}[./](?:\d{2}|\d{4})?\b|" + rf"\b(?:{_DAY_WORDS})\b")),
    (2.0, re.compile(r"(?i)\b\d{1,2}[:.h]\d{2}\b|\b\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.|uhr|h)\b")),
    (2.0, re.compile(r"\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{4,}\b|\b[A-Z]{2}\s?\d{3,4}\b"
                     r"|(?i:#|\bnr\.?|\bno\.|\bn[º°]\.?|\bnummer\b|\bnumber\b|\bnuméro\b|\bnúmero\b|\bref\b\.?)"
                     r"\s*[:#]?\s*[A-Z0-9-]*\d")),
    (1.0, re.compile(r"\b(?:in|at|im|am|an der|à|au|en|dans|nach|to|near|bei)\s+(?:the\s+)?[A-ZÄÖÜÉ][\w'’-]{2,}"
                     r"|(?i:\b(?:straße|str\.|street|road|avenue|rue|calle|platz|gate|gleis|terminal|room|raum|salle"
                     r"|sala|hotel|airport|flughafen|aéroport|aeropuerto|station|bahnhof|gare|estación)\b)")),
    (1.5, re.compile(r"(?i)\b(?:confirm\w*|decided|agreed|approved?|booked|reserved|cancel+ed|postponed|moved"
                     r"|rescheduled|accepted|declined|signed|paid|refund\w*|offer\w*|propos\w*|deadline|due|until"
                     r"|by (?:the )?end of|will (?:send|bring|pay|call|book|arrive|be)|bestätig\w*|entschieden"
                     r"|vereinbart|zugesagt|abgesagt|gebucht|reserviert|storniert|verschoben|genehmigt|angenommen"
                     r"|abgelehnt|unterschrieben|bezahlt|überwiesen|fällig|frist|angebot|bis zum|spätestens"
                     r"|confirm\w*|décidé|convenu|réservé|annulé|reporté|accepté|refusé|signé|payé|échéance"
                     r"|date limite|avant le|decidido|acordado|reservado|cancelado|aplazado|aceptado|rechazado"
                     r"|firmado|pagado|plazo|vence|antes del)\b")),
)


def fact_score(sentence: str) -> float:
    """How much a sentence carries for a memory: the sum of the weights of the signals it holds (each once):
    an amount 3, a date or weekday 2, a time 2, a reference (booking, flight, order or invoice code) 2, a place
    1, a decision, commitment or deadline 1.5, a question or request to the reader 1.5 (ours)."""
    score = sum(weight for weight, pattern in _SIGNALS if pattern.search(sentence))
    return score + (1.5 if asks_owner(sentence) else 0.0)


def heuristic_summary(thread: EmailThread) -> str:
    """The offline summary of `thread`: third-person sentences about the owner, each naming the subject and the
    day so it stands alone, e.g. "Anna Weber emailed Owner about “Termin” on 1 December 2026: “Der Termin ist am
    15. Dezember um 9.30 Uhr im Büro”.", "Alice Smith emailed Owner about “Slides” on 28 November 2026: “Alice
    Smith will send the slides by Friday”.", "Alice Smith asked Owner about “Slides”: “Can you check the
    numbers?”, and Owner has not replied yet.", "The thread “Slides” has 3 messages between Alice Smith and Owner
    from … to ….", "The thread “Slides” has attachments: slides.pdf.".

    Each quoted sentence is reported (`reported_speech.reported`: the writer's "I" is their name, the owner's is
    "Owner"), so the offline extractor never reads a correspondent's words as the owner's; quotes and lists are
    clipped so every sentence stays under the extractor's 400 characters. A thread whose mail shows phishing
    signs gets one sentence naming the signs instead of its content."""
    first, newest = thread.messages[0], thread.messages[-1]
    subject = _subject(thread)
    suspicious = next((m for m in reversed(thread.messages) if m.phishing), None)
    if suspicious is not None:
        signs = clip("; ".join(suspicious.phishing), 200)
        return (f"{_short_name(suspicious)} ({suspicious.sender_address}) emailed Owner about “{subject}” on "
                f"{_day(suspicious)}, and the mail shows signs of phishing: {signs}.")
    facts = _chosen_facts(thread)
    sentences = [_fact_sentence(thread, message, text, subject) for message, text in facts]
    asked = thread.needs_reply and thread.reply_reason
    if (not facts or facts[-1][0] is not newest) and not asked:  # the newest mail is named once, at least
        sentences.append(_opening(thread, newest, subject) + ".")
    if asked:
        room = min(EXCERPT_MAX_CHARS, SENTENCE_MAX_CHARS - len(_short_name(newest)) - len(subject) - 60)
        reason = _inline(clip(reported(thread.reply_reason, _short_name(newest), newest.language), room))
        sentences.append(f"{_short_name(newest)} asked Owner about “{subject}”: “{reason}”, and Owner has not "
                         "replied yet.")
    if len(thread.messages) > 1:
        others = [m for m in thread.messages if not m.from_owner]
        names = list(dict.fromkeys(_short_name(m) for m in others))[:3]
        people = f"between {', '.join(names)} and Owner" if names else "all from Owner"
        sentences.append(f"The thread “{subject}” has {len(thread.messages)} messages {people} from {_day(first)} "
                         f"to {_day(newest)}.")
    attachments = list(dict.fromkeys(name for m in thread.messages for name in m.attachments))
    if attachments:
        more = f" and {len(attachments) - 5} more" if len(attachments) > 5 else ""
        sentences.append(f"The thread “{subject}” has attachments: {clip(', '.join(attachments[:5]), 200)}{more}.")
    return " ".join(sentences)


def _subject(thread: EmailThread) -> str:
    """The subject reported in its first writer's name, clipped; a final "." "?" or "!" dropped (it would end
    the summary sentence at its closing quote)."""
    first = thread.messages[0]
    text = thread.subject if first.from_owner else reported(thread.subject, _short_name(first), first.language)
    return _inline(clip(text, 80)).rstrip(".!?… ") or "(no subject)"


def _opening(thread: EmailThread, message: EmailMessage, subject: str) -> str:
    """"Alice Smith emailed Owner about “S” on D", "Owner replied to Alice Smith …", "Owner emailed bob@… …"."""
    if not message.from_owner:
        return f"{_short_name(message)} emailed Owner about “{subject}” on {_day(message)}"
    others = [m for m in thread.messages if not m.from_owner and m.sent_at <= message.sent_at]
    if others:
        return f"Owner replied to {_short_name(others[-1])} about “{subject}” on {_day(message)}"
    return f"Owner emailed {clip(', '.join(message.to[:3]), 80) or 'someone'} about “{subject}” on {_day(message)}"


def _fact_sentence(thread: EmailThread, message: EmailMessage, text: str, subject: str) -> str:
    """"<opening>: “<the sentence, reported>”." within `SENTENCE_MAX_CHARS`."""
    opening = _opening(thread, message, subject)
    room = min(EXCERPT_MAX_CHARS, SENTENCE_MAX_CHARS - len(opening) - 5)
    quote = _inline(clip(reported(text, _short_name(message), message.language), room))
    if quote.endswith(".") and not quote.endswith(".."):
        quote = quote[:-1]
    return f"{opening}: “{quote}”."


# --- choosing the sentences --------------------------------------------------------------------------------------

def _chosen_facts(thread: EmailThread) -> list[tuple[EmailMessage, str]]:
    """The thread's best content sentences, in thread order (see the module docstring)."""
    skip = thread.reply_reason
    ranked: list[tuple[float, int, int, EmailMessage, str]] = []
    newest_index = len(thread.messages) - 1
    for m_index, message in enumerate(thread.messages):
        scored = [(fact_score(text), s_index, text) for s_index, text in enumerate(content_sentences(message))
                  if not (skip and clip(text, REASON_MAX_CHARS) == skip)]
        limit = MAX_FACTS_AUTOMATED if message.automated else MAX_FACTS_PER_MESSAGE
        best = sorted((item for item in scored if item[0] > 0), key=lambda item: (-item[0], item[1]))[:limit]
        if not message.automated or not best:  # a person's short mail is all content; a machine's only its facts
            best += [item for item in scored if item[0] == 0][:limit - len(best) if not message.automated else 1]
        recency = 0.5 if m_index == newest_index else 0.0
        ranked.extend((score + recency, m_index, s_index, message, text) for score, s_index, text in best)
    ranked.sort(key=lambda item: (-item[0], -item[1], item[2]))
    kept = ranked[:MAX_FACTS]
    if ranked and all(item[1] != newest_index for item in kept):
        newest = [item for item in ranked if item[1] == newest_index][:1]
        kept = kept[:MAX_FACTS - len(newest)] + newest
    kept.sort(key=lambda item: (item[1], item[2]))
    return [(message, text) for _, _, _, message, text in kept]


_PS = re.compile(r"(?i)^(?:p\.?\s?){1,2}s(?:[.:]|\s)[\s:.-]*")


def content_sentences(message: EmailMessage) -> list[str]:
    """The sentences of a message worth a memory, in order: the salutation line and everything from the
    sign-off on (the signature) cut, except a "P.S." after it; salutation clauses cut; pleasantries,
    boilerplate, sign-offs and sentences under `MIN_WORDS` words dropped."""
    lines = message.body.split("\n")
    kept: list[str] = []
    for index, line in enumerate(lines):
        text = line.strip()
        if not kept and is_greeting(text):
            continue
        if is_sign_off(text) and _signature_follows(lines[index + 1:]):
            kept.extend(rest for rest in lines[index + 1:] if _PS.match(rest.strip()))
            break
        kept.append(line)
    out = []
    for sentence in body_sentences("\n".join(kept), message.language):
        sentence = _PS.sub("", without_greeting(sentence))
        words = len(sentence.split())
        if words < MIN_WORDS and not (words >= 2 and fact_score(sentence) >= 2):
            continue
        if is_filler(sentence) or is_boilerplate(sentence) or is_sign_off(sentence) or is_greeting(sentence):
            continue
        out.append(sentence)
    return out


def _signature_follows(rest: list[str]) -> bool:
    """Whether the lines after a sign-off are a signature: names, titles, addresses, legal lines, no prose of
    more than 12 words outside a disclaimer or a P.S."""
    lines = [line.strip() for line in rest if line.strip()]
    return all(len(line.split()) <= 12 or is_boilerplate(line) or _PS.match(line) for line in lines[:20])


# --- small pieces ------------------------------------------------------------------------------------------------

_PIECE_END = re.compile(r"[.!?…]+[\"'”’»)\]]*$")


def _inline(fragment: str) -> str:
    """A subject or quote made safe to sit inside one summary sentence: where the offline extractor would end a
    sentence (`twin.text.extractor.split_sentences`: "week? The key", "soon. free thursday"), the pieces are joined
    with a dash ("week – The key"), or without the space after an ordinal ("40.Geburtstag"), so the summary
    sentence reaches the extractor whole. A final "?" or "!" stays (it ends the quote, not the summary
    sentence)."""
    pieces = split_sentences(fragment)
    if len(pieces) < 2:
        return fragment
    out = pieces[0]
    for piece in pieces[1:]:
        if re.search(r"\b\d{1,2}\.$", out):
            out += piece
        else:
            out = _PIECE_END.sub("", out) + " – " + piece
    return out


def _short_name(message: EmailMessage) -> str:
    return "Owner" if message.from_owner else clip(display_name(message), 60)


def _day(message: EmailMessage) -> str:
    """`2026-11-28T09:00:00Z` -> "28 November 2026" (English month names whatever the locale)."""
    year, month, day = message.sent_at[:10].split("-")
    return f"{int(day)} {_MONTHS[int(month) - 1]} {year}"
