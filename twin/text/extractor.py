"""Offline extraction: free text -> memory candidates by rules, with no model (DESIGN.md invariant 6).

Seed 000 ("Extraction") fixes the contract shared with the model-backed extractor: at most 12 memories per
call, each one self-contained third-person sentence, and a fallback that keeps "memorable-looking sentences
(12-400 characters)" as low-importance (0.4) memories. This module is that fallback done better; everything
beyond those numbers is our rule: markup-aware splitting, a boilerplate/code filter, English first person
rewritten to "Owner", and kind, importance and tags from small keyword tables. Pure: no I/O, no state.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from twin.memory import KINDS
from twin.text.antecedents import Antecedents
from twin.text.relative_dates import resolve_dates
from twin.text.sensitivity import contains_secret, find_secrets
from twin.text.sentence_length import script_length
from twin.text.standalone import standalone_problem
from twin.text.structured_lines import spell_out
from twin.text.third_person import agree, language_of, looks_english, third_person

__all__ = ["KINDS", "MAX_PER_CALL", "Candidate", "agree", "extract", "split_sentences", "standalone_problem",
           "third_person"]

MAX_PER_CALL = 12  # most candidates per call (seed 000: "max 12")
MIN_CHARS, MAX_CHARS = 12, 400  # bounds of a memorable sentence and of a content, in characters (seed 000)
MAX_SECRET_CHARS = 16_000  # ours: a candidate holding secret values may be this long, its words around the values
# within MAX_CHARS: a value is kept whole (an RSA-4096 PEM key is ~3.2 KB, a PGP secret key block up to ~10 KB)
DEFAULT_IMPORTANCE = 0.4  # fact / episode (seed 000's fallback value)
PERSONAL_IMPORTANCE = 0.5  # ours: preference / relationship
SENSITIVE_IMPORTANCE = 0.7  # ours: health, allergy, medical, birthday, address, phone, password-like content
EMPHASIS_BONUS = 0.1  # ours: "!" or always/never/important/must; the sum is capped at 1.0
DOCUMENT_IMPORTANCE = 0.3  # ours: every document memory, flat
MAX_TAGS = 3  # ours
WRAP_MIN_CHARS, WRAP_MAX_CHARS = 60, 100  # ours: a text is hard-wrapped when 3+ lines and a third of its
# non-blank lines are this long; there a line of 60+ characters joins the next. Elsewhere (chat) a newline ends
# the sentence unless the line ends with ",".
TITLE_MAX_CHARS = 120  # ours: a longer document title is cut
BLOCK_MIN_CHARS = 5  # ours: shorter blocks are not read; "im ill" (6) becomes "Owner is ill." (13)
HEADING_MAX_WORDS = 6  # ours: a document line this short without sentence punctuation is a heading
_CLEAN_MAX = 4 * MAX_CHARS  # longer pieces can never be memorable: no inline cleanup (keeps the cost linear)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- text hygiene, blocks and sentence ends -------------------------------------------------------------------
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_WS = re.compile(r"\s+")
_SKIPPED = {"```": "```", "~~~": "~~~", "#+begin_src": "#+end_src", "#+begin_example": "#+end_example", "<!--": "-->"}
_SKIP_START = re.compile(r"(?i)```|~~~|#\+begin_(?:src|example)\b|<!--")  # code fences, org blocks, html comments
_FIELD = re.compile(r"[A-Z][\w-]{0,30}:\s")  # "Summary: …", "Note: …" starts a block of its own
_RULE = re.compile(r"[\s=\-~^*#+_`:.|'\"<>]{3,}")  # fullmatch: rst/setext underline, rule, table border
_HEADING = re.compile(r"(?i)#{1,6}\s+|#\+title:\s*")
_ORG_KEYWORD = re.compile(r"#\+\w+:\s*")
_LIST = re.compile(r"(?:>\s*)*(?:[-+•‣◦▪]|\*+|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")  # org: "** item"
_QUOTE = re.compile(r"(?:>\s*)+")
_INLINE = (
    (re.compile(r"!?\[([^\[\]\n]{0,300})\]\([^()\s]{0,500}\)"), r"\1"),  # [text](url), ![alt](src)
    (re.compile(r"(\*\*|__|`)([^\n]{1,300}?)\1"), r"\2"),  # **bold**, __bold__, `code`
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]{1,300}?)(?<=\S)\*(?![\w*])"), r"\1"),  # *emphasis*
)
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>\n]{0,200}>")
"""An html tag, dropped from a document's sentences (a file's markup); what the owner types keeps it ("the <br>
tag has no closing tag", a test string `<script>alert(1)</script>`: the text as written, ours)."""
# A sentence ends at . ! ? ... before whitespace (closing quotes/brackets kept), or at 。！？ anywhere.
_END = re.compile(r"(?<![.!?…])[.!?…]++[\"'”’»)\]]*+(?=\s|$)|(?<![。！？])[。！？]++[」』”’）)]*+")
_ABBR_KEEP = _words("dr mr mrs ms prof st jr sr mt rev hon gen col capt lt sgt e.g i.e vs cf viz approx ca"
                    " bzw ggf evtl inkl zzgl exkl sog vgl bspw hr fr mme mlle sra srta dres min std sek tsd mio mrd")
_ABBR_NUM = _words("no nr vol fig p pp ch sec art jan feb mar apr jun jul aug sep sept oct nov dec"  # "No. 5"
                   " tel str dez okt mo di mi do sa so")
_MONTH_STARTS = _words("Jan Feb Mär Apr Mai Jun Jul Aug Sep Okt Nov Dez")
_ABBR_CAP = _words("etc al inc ltd co corp usw")  # end a sentence only before a capital
# ours: "am 15. Dezember", "der 3. Versuch", "z. B.": a day or ordinal before a month or after a German article or
# preposition, and a one-letter abbreviation followed by another ("z. B.", "d. h.", "p. ej."), end no sentence
_ORDINAL_MONTH = re.compile(
    r"\s*(?i:jan(?:uary|uar|vier)?|feb(?:ruary|ruar)?|févr(?:ier)?|mar(?:ch|s|zo)?|märz|apr(?:il|ile)?|avr(?:il)?"
    r"|abr(?:il)?|may|mai|mayo|maggio|jun[ei]?o?|juin|juli?|july|juil(?:let)?|julio|aug(?:ust)?|août|agosto"
    r"|sep(?:t(?:ember|embre|iembre)?)?|oct(?:ober|obre|ubre)?|okt(?:ober)?|nov(?:ember|embre|iembre)?"
    r"|dec(?:ember)?|dez(?:ember)?|déc(?:embre)?|dic(?:iembre)?|ene(?:ro)?)\b")
_ORDINAL_AFTER = _words("am im zum zur vom bis ab seit vor nach zu der die das den dem des ein eine einen einem einer"
                        " jeden jedes jede mein meine meinen meinem dein deine deinen sein seine seinen ihr ihre"
                        " ihren ihrem unser unsere unseren")
_LETTER_ABBR = re.compile(r"\s*[^\W\d_]{1,3}\.")
_LETTER_BEFORE = re.compile(r"(?:^|\s)[^\W\d_]\.\s*$")
_ACRONYM = re.compile(r"(?:[a-z]\.)+[a-z]")  # u.s, a.m, p.m

# --- the memorability filter ----------------------------------------------------------------------------------
_BOILERPLATE_KEYS = ("copyright", "©", "rights reserved", "hereby granted", "warrant", "licen", "free software",
                     "as is", "click here", "unsubscribe", "browser", "table of contents", "sent from my", "....",
                     "redistribut", "in no event", "merchantab", "express or implied")
_BOILERPLATE = re.compile(  # searched only when one of the keys above occurs (keeps the filter cheap)
    r"(?i)copyright\s*(?:\(c\)|©|\d{4})|©\s*(?:\d{4}|[a-z])|all rights reserved|permission is hereby granted"
    r"|without (?:any )?warrant|general public licen[cs]e|spdx-license-identifier|licensed under the"
    r"|this (?:program|library|file|software) is free software|provided [\"“']?as is\b|\bclick here\b|unsubscribe"
    r"|view (?:this (?:email|message) )?in (?:your |a )?browser|table of contents|sent from my \w+|\.{4,}\s*\d+\s*$"
    r"|redistribution|copyright (?:notice|holder)|in no event shall|merchantability|express or implied"
    r"|[\"“]as is[\"”]|\b(?:bsd|mit|isc|apache)(?: \d-clause)? licen[cs]e")
_BOILERPLATE_START = re.compile(  # at the start: greetings, sign-offs, mail/METADATA headers (Reply-To:), contents
    r"(?i)contents\b|on\b.{0,150}\bwrote:\s*$|-+\s*(?:original|forwarded) message|(?:from|to|cc|bcc|subject|date"
    r"|sent|reply-to|message-id|x-[\w-]+|content-[\w-]+|project-url|author-email|maintainer-email|requires-[\w-]+"
    r"|provides-[\w-]+|description-content-type|license-[\w-]+|metadata-version):\s"
    r"|(?:(?:best|kind|warm|warmest|many|with) (?:regards|wishes|thanks)|regards|cheers|sincerely"
    r"|yours (?:truly|sincerely|faithfully)|thanks|thank you|thx|xoxo)\b[\s\w,.!-]{0,25}$"
    r"|(?:thanks|thank you)(?: so much| a lot| again)? for\b"
    r"|(?:hi|hello|hey|dear|good (?:morning|afternoon|evening))\b[\s\w,.'!-]{0,30}$"
    r"|(?:mit (?:freundlichen|besten|herzlichen) grüßen|viele grüße|liebe grüße|beste grüße|lg|vg|gruß|cordialement"
    r"|bien (?:à (?:toi|vous)|amicalement)|bisous|bises|amitiés|à bientôt|a\+)\b[\s\w,.!-]{0,25}$"
    r"|(?:sehr geehrte[rs]?|liebe[rs]?|hallo|guten tag|moin|bonjour|bonsoir|salut|coucou|chère?s?|madame|monsieur)"
    r"\b[\s\w,.'!-]{0,30}$")
_GREETING = re.compile(r"(?i)^(?:hi|hello|hey|dear|good (?:morning|afternoon|evening))\b(?:\s+[\w.'-]+){0,3}"
                       r"\s*[,!:]\s*(?=\S)")  # "Hi John, I moved…" -> "I moved…"
_CODE_START = re.compile(  # matched at the start: prompts, commands, declarations, key=value lines
    r"(?:\$|>>>|#!|PS>)\s|sudo\s|(?:pip3?|npm|pnpm|yarn|apt(?:-get)?|brew|cargo|go|gem)\s+(?:install|add|run|build|get"
    r"|remove)\b|git\s+(?:clone|commit|push|pull|checkout|add|rebase|merge|log|status|diff)\b"
    r"|(?:docker(?:-compose)?|kubectl|systemctl|journalctl)\s|cd\s+[~/.]|(?:ls|chmod|chown|mkdir|rm|cp|mv|cat|curl"
    r"|wget|ssh|scp|tar|grep)\s+-|(?:def|class|func|fn)\s+\w+\s*[(:<{]|from\s+[\w.]+\s+import\s"
    r"|import\s+[\w.]+(?:\s*,\s*[\w.]+)*\s*;?$|(?:const|let|var)\s+\w+\s*=|#include\b"
    r"|[\w.\-\[\]\"']+\s*[:=]\s*\S+$|[\w.\-]+\s*=[^=]")
_CODE_OPS = ("==", "!=", "&&", "||", "=>", "++", "::", "{{", "{%")
_CODE_CALL = re.compile(r"\w\.\w+\([^)]*\)")  # obj.method(...)
_CODE_SYMBOL = re.compile(r"[{}\[\]<>=;$|\\^~]")
_EXT = r"\.(?:py|js|ts|md|txt|json|ya?ml|toml|cfg|ini|sh|rs|go|cpp|java|html|css|pdf|docx?|xlsx?|csv)\b"
_FILE_EXT = re.compile(_EXT)
_LINK = re.compile(r"(?i)(?:https?://|ftp://|www\.)\S+|[\w.+-]+@[\w-]+\.[\w.-]+|(?<!\w)(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?"
                   rf"|\b[\w-]+{_EXT}")  # URLs, e-mail addresses, paths, file names
_WORD = re.compile(r"[^\W\d_]+")
# one code or number between words (an order number, a digest, "LH2023"): judged as one word, not as its characters
_VALUE_TOKEN = re.compile(r"(?<!\S)#?[^\W_]*\d[\w.:/#-]*[^\W_](?=[.,;!?]?(?:\s|$))")
_NON_ASCII_LETTER = re.compile(r"[^\W\d_\x00-\x7f]")
_NOSPACE_SCRIPT = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_QUESTION = re.compile(r"[?？][!?！？.]*[\"'”’»)\]」』]*$")
_QUESTION_START = re.compile(  # matched at the start: a wh-word or an auxiliary that opens an English question, "¿"
    r"(?i)[\"'“‘(]*(?:¿|(?:what|where|who|whom|whose|how|when|why|which|is|are|am|was|were|do|does|did|can|could"
    r"|will|would|shall|should|may|might|must|have|has|had)(?:n['’]t)?\b|won['’]t\b)")
_MAY_BE_FIRST_PERSON = re.compile(r"(?i)(?<![\w'’])(?:(?:i|im|ive|we|my|me|our|us|mine|ours|myself|ourselves|ich"
                                  r"|mich|mir|mein\w*|wir|uns|unser\w*|je|moi|mon|ma|mes|nous|notre|nos)(?![\w-])"
                                  r"|j['’])")
"""A cheap test before `language_of`: the sentence holds a word that may be the owner's first person."""
_ENDS_SENTENCE = re.compile(r"[.!?…。！？][\"'”’»)\]」』）]*$")

# --- sentence ends after the rewrite -------------------------------------------------------------------------
_TAIL_NOISE = re.compile(r"(?:\s|[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D]"
                         r"|(?<!\w)[:;=]-?[)(DPp/|*]|<3)+$")  # trailing emoji and emoticons
_TAIL_PUNCT = re.compile(r"(?<![!.…])[!.…]+$")  # the look-behind starts a try only where a run starts: linear
TAIL_WINDOW = 200
"""Characters at a sentence's end that trailing emoji are looked for in (linear on a long run of anything)."""
_MASKED = re.compile(r"\x00(\d+)\x00")  # a secret value hidden from the rewrite; control characters never reach it
JOIN_WINDOW = 200
"""Characters of a value's line read around it to decide whether to join the line before (`_join_gap`)."""
_ARMOR = re.compile(r"\s*-----BEGIN [A-Z0-9 ]{1,60}-----\s*")
"""The header line of a PEM or PGP block: a key body after it still starts its line (`_join_gap`)."""

# --- kind, importance, tags (ours) ----------------------------------------------------------------------------
_RELATIONS = {  # singular; the plural in "-s" is added
    "family": "sister brother mother mom mum father dad wife husband partner girlfriend boyfriend son daughter"
              " cousin aunt uncle grandma grandpa grandmother grandfather parent kid child children fiance fiancee",
    "work": "colleague coworker co-worker boss manager",
    "social": "friend neighbour neighbor",
}
_TOPICS = {
    "family": _RELATIONS["family"] + " family baby",
    "work": _RELATIONS["work"] + " job work office meeting client career salary project deadline team",
    "social": _RELATIONS["social"] + " party",
    "health": "allergic allergy allergies health medical medication medicine doctor hospital penicillin sick diet"
              " therapy dentist vaccine asthma diabetes",
    "food": "food coffee tea espresso roast sushi pizza pasta eat eating ate cook cooking restaurant breakfast lunch"
            " dinner vegetarian vegan wine beer chocolate meat",
    "travel": "travel traveling travelling trip flight hotel vacation holiday abroad airport",
    "fitness": "hiking hike gym running run yoga swimming swim cycling bike workout football tennis climbing",
    "sleep": "sleep sleeping wake wake-up woke bedtime nap insomnia 5am 6am",
    "learning": "learning learn study studying course language german spanish french book",
    "home": "home house apartment flat address rent moved live",
    "music": "music song guitar piano concert band",
    "pets": "dog cat pet puppy",
    "tech": "python code coding programming computer laptop linux software rust javascript",
    "money": "money bank budget savings invest investing",
}
_TAG_OF = {form: topic for topic, words in reversed(_TOPICS.items())  # the first topic listed wins
           for word in words.split() for form in (word + "s", word)}
_RELATION_WORDS = frozenset(form for word in " ".join(_RELATIONS.values()).split() for form in (word, word + "s"))
_PREFERENCE_WORDS = _words("likes liked dislike dislikes disliked love loves loved prefer prefers preferred hate"
                           " hates hated enjoy enjoys enjoyed adore adores favourite favorite favourites favorites")
_PREFERENCE_PHRASE = re.compile(r"\b(?:(?:i|we|you|they|really|also|do|don't|didn't|would|['’]d)\s+like"
                                r"|can['’]?t stand|cannot stand|fan of)\b")  # "looks like rain" is no preference
_DAY = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTH = ("jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?"
          "|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
_EPISODE_WORDS = _words(f"yesterday today tonight tomorrow ago {_DAY.replace('|', ' ')}")  # "mondays" is a habit
_EPISODE_PHRASE = re.compile(r"\b(?:this (?:morning|afternoon|evening)|last night|(?:last|this|next|past) "
                             rf"(?:week|month|year|weekend|{_DAY}|spring|summer|autumn|fall|winter))\b")
_DATE = re.compile(rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?"
                   rf"(?:{_MONTH})|(?:{_MONTH}) \d{{1,2}}(?:st|nd|rd|th)?)\b")
_DIGIT = re.compile(r"\d")
_SENSITIVE_WORDS = _words("medical medication medicine doctor surgery disease asthma insulin birthday address"
                          " postcode phone password passcode passport iban")
_SENSITIVE_PARTS = ("allerg", "health", "diagnos", "hospital", "prescri", "diabet", "pregnan", "therap", "vaccin",
                    "blood type", "born on", "live at", "lives at", "zip code", "mobile number", "pin code",
                    "social security", "credit card", "account number")  # substrings of the lowercased sentence
_EMPHASIS_WORDS = _words("always never important must")
_TAG_WORD = re.compile(r"[a-z0-9]+(?:-[a-z]+)*")


@dataclass(frozen=True)
class Candidate:
    """One memory proposed by `extract()`, not yet stored: seed 000's `{kind, content, importance, tags}`.

    `kind` is one of `KINDS`; `content` one self-contained sentence of 12..400 characters (seed 000) when made
    by `extract()`; `importance` is 0..1; `tags` holds up to 3 lowercase topic words (ours), possibly none.
    Raises `ValueError` when `kind` is not in `KINDS` or `importance` is outside 0..1.
    """

    kind: str
    content: str
    importance: float
    tags: tuple[str, ...]
    sensitive: bool = False
    """True when `content` holds a secret value found in the whole text (`twin.text.sensitivity.find_secrets`); capture
    then stores it `sensitive` even where the sentence alone would not show it (a label on the line before)."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"extractor: unknown kind {self.kind!r}; use one of {', '.join(KINDS)}")
        if not 0.0 <= self.importance <= 1.0:
            raise ValueError(f"extractor: importance {self.importance!r} is outside 0..1")


def split_sentences(text: str) -> list[str]:
    """Split prose or light markup into sentences, in text order, whitespace collapsed. Never raises.

    Ours (seed 000 only says "sentence-splitting"): a sentence ends at . ! ? ... before whitespace, at 。！？,
    at a blank line, at the end of a list item, table row or heading, and at a newline, except after a line that
    ends with "," or, in a hard-wrapped text (3+ lines and a third of the non-blank ones 60..100 characters), a
    line of 60+ characters: those join the next line. No split after common
    abbreviations (e.g. i.e. Dr. Mr. vs. …; etc./Inc. and dotted acronyms like U.S. only before a capital; No./Jan.
    only before a digit) or initials, nor inside decimals, versions, URLs, e-mail addresses. Markup is stripped:
    heading `#`s, list markers and checkboxes, `>`, underline/rule lines, fenced code (dropped), table pipes
    (cells joined with ", "), org `#+KEY:`, links, emphasis, inline-code marks, html tags and entities. No
    filtering here (see `extract()`); `bytes` are decoded as UTF-8, other non-`str` input yields [].
    """
    return [sentence for sentence, _ in _iter_sentences(_clean_text(text))]


def extract(text: str, *, document_title: str | None = None, limit: int = MAX_PER_CALL,
            only_secrets: bool = False, now: datetime | None = None, force: bool = False,
            rejected: list[str] | None = None, speaker: str | None = None) -> list[Candidate]:
    """Turn `text` into at most `limit` memory candidates (seed 000: 12 per call), in text order. Never raises.

    Kept: memorable sentences (`_is_memorable`: 12..400 characters per seed 000, a character counted by its
    script, `twin.text.sentence_length`; ours: mostly letters, 3+ words, no code, command, key=value, bare URL/path,
    licence text, greeting/sign-off, "click here", "unsubscribe", table of contents), judged on the memory the
    sentence becomes ("I'm vegetarian." is "Owner is vegetarian."). Ours: a sentence holding a secret value
    (`twin.text.sensitivity.find_secrets`: "IBAN: GB29NWBK60161331926819", "GitHub token ghp_…") is kept whatever
    its letters or shape, with `sensitive` set. Secrets are found in the whole text before it is split, so a
    value is never cut into sentences: a private key block or a seed phrase over several lines stays whole in
    one candidate, up to `MAX_SECRET_CHARS` (its words around the values within 400), with the label on the line
    before it when that line ends with ":" (`_mask_secrets`). `only_secrets` keeps only such candidates (the
    model path learns them locally). Dropped: questions, headings (without sentence punctuation; in a document
    also a short unpunctuated line like an HTML heading), exact duplicates (case-insensitive) within the call,
    and a sentence whose pronoun refers to nothing named before it (`twin.text.antecedents`). A leading greeting
    ("Hi John, …") is cut off. `force` keeps what only the memorability floor would drop (`twin learn --force`).
    `rejected`, when given, receives one reason per dropped sentence ("sentence 2: a question"), never its text.

    Every sentence is made to stand alone (seed 000), in conversation and in documents alike: the owner's first
    person becomes "Owner" in English, German and French with the verb agreed (`twin.text.third_person`: "I hate it"
    -> "Owner hates it.", "Ich bin Vegetarier." -> "Owner ist Vegetarier."); other languages are kept as
    written; an opening pronoun is replaced by what it refers to ("He never listens…" -> "Tom never listens…");
    relative dates are written as dates on `now`, the time the text was written (aware, in the owner's zone;
    None leaves them: `twin.text.relative_dates`). Each is capitalised and ends with a period ("!" becomes ".");
    secret values are never rewritten, and a sentence holding one keeps its last characters (`_finish`).

    Conversation (`document_title` None: chat, notes, "learn TEXT"): kind preference > relationship > episode >
    fact. Importance: 0.4 (seed 000); ours: 0.5 for preference/relationship, at least 0.7 for
    health/birthday/address/phone/password content, +0.1 for "!" or always/never/important/must, capped at 1.0.

    Document (`document_title` given, e.g. a file name): each candidate is `"<title>: <sentence>"`, kind
    "document", importance 0.3. Sentences of 6+ words are preferred over shorter ones, earlier over later; the
    chosen keep document order. The title is whitespace-collapsed and cut to `TITLE_MAX_CHARS`; a sentence that
    would make the content longer than 400 characters is skipped.

    `speaker` (conversation only): the text was written by that person, not the owner (a message the owner
    forwarded or quoted): each sentence becomes what the speaker says (`_reported`: "You owe me 500 euros." from
    Trudy -> "Trudy says that Owner owes Trudy 500 euros."; other languages and imperatives are quoted:
    "Trudy wrote: “…”."), never the owner's own words.

    `bytes` are decoded as UTF-8 (errors replaced); other non-`str` input yields []; `limit` <= 0 yields [].
    Cost is linear in `len(text)`; reading stops once `limit` candidates are found.
    """
    if limit <= 0:
        return []
    clean = spell_out(_clean_text(text))  # table rows and secret key/value lines say what their values are
    reader = _Reader(now, force, rejected, speaker)
    if document_title is None:
        return _extract_conversation(clean, limit, reader, only_secrets)
    title = _WS.sub(" ", _clean_text(str(document_title))).strip().rstrip(":").strip()[:TITLE_MAX_CHARS]
    return _extract_document(clean, title, limit, reader, only_secrets)


def _clean_text(text: object) -> str:
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    elif not isinstance(text, str):
        return ""
    text = _SURROGATE.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub(" ", text.replace("\u2028", "\n").replace("\u2029", "\n"))


def _iter_sentences(text: str, min_chars: int = 0, tags: bool = True) -> Iterator[tuple[str, bool]]:
    """Yield `(sentence, is_heading)` lazily (so `extract()` can stop early); skip blocks under `min_chars`
    characters (counted by script, `script_length`); html tags dropped when `tags` (a document's, `_HTML_TAG`)."""
    for block, heading in _blocks(text):
        if len(block) < min_chars and script_length(block) < min_chars:
            continue
        for piece in _split_block(_WS.sub(" ", block).strip()):
            if len(piece) <= _CLEAN_MAX and any(mark in piece for mark in "[*_`<&"):
                for pattern, repl in _INLINE:
                    piece = pattern.sub(repl, piece)
                if tags:
                    piece = _HTML_TAG.sub(" ", piece)
                piece = _WS.sub(" ", html.unescape(piece) if "&" in piece else piece).strip()
            if piece:
                yield piece, heading


def _blocks(text: str) -> Iterator[tuple[str, bool]]:
    """Yield `(block, is_heading)`: paragraphs, list items, table rows and headings, line markup stripped."""
    cur: list[str] = []
    until = ""  # the line marker that ends a skipped region (code fence, org block, html comment)
    lines = text.split("\n")
    long_lines = sum(WRAP_MIN_CHARS <= len(line) <= WRAP_MAX_CHARS for line in lines)
    wrapped = long_lines >= 3 and 3 * long_lines >= len(lines) - lines.count("")  # hard-wrapped text (mail, docs)
    for raw in lines:
        line = raw.strip()
        if until:
            until = "" if until in line.lower() else until
            continue
        if line[:1].isalpha():  # fast path: plain prose cannot start with markup
            if cur and (_ends_line(cur[-1], wrapped) or _FIELD.match(line)):
                yield from _flush(cur)
            cur.append(line)
            continue
        if skip := _SKIP_START.match(line):
            closer = _SKIPPED[skip.group().lower()]
            until = "" if closer in line[skip.end():] else closer
            yield from _flush(cur)
        elif not line:
            yield from _flush(cur)
        elif _RULE.fullmatch(line):  # an underline makes the single line above it a heading
            yield from _flush(cur, len(cur) == 1 and len(set(line)) == 1 and line[0] in "=-~^\"'`#*+")
        elif line.startswith("|"):
            yield from _flush(cur)
            yield ", ".join(cell.strip() for cell in line.strip("|").split("|") if cell.strip()), False
        elif heading := _HEADING.match(line):
            yield from _flush(cur)
            yield line[heading.end():].strip(" #"), True
        else:
            if keyword := _ORG_KEYWORD.match(line):
                line = line[keyword.end():]
            if item := _LIST.match(line):
                yield from _flush(cur)
                line = line[item.end():]
            else:
                line = line[quote.end():] if (quote := _QUOTE.match(line)) else line
                if cur and _ends_line(cur[-1], wrapped):
                    yield from _flush(cur)
            if line:
                cur.append(line)
    yield from _flush(cur)


def _ends_line(previous: str, wrapped: bool) -> bool:
    """A newline after `previous` ends the sentence unless that line ends with a comma or, in a hard-wrapped text,
    is `WRAP_MIN_CHARS` long or longer."""
    return not previous.endswith(",") and (not wrapped or len(previous) < WRAP_MIN_CHARS)


def _flush(cur: list[str], heading: bool = False) -> Iterator[tuple[str, bool]]:
    if cur:
        yield " ".join(cur), heading
        cur.clear()


def _split_block(block: str) -> Iterator[str]:
    start = 0
    for match in _END.finditer(block):
        if not _no_break(block, start, match):
            if piece := block[start:match.end()].strip():
                yield piece
            start = match.end()
    if tail := block[start:].strip():
        yield tail


def _no_break(block: str, start: int, match: re.Match) -> bool:
    """True when the `.` at `match` belongs to an abbreviation or an initial rather than ending a sentence."""
    punct = match.group()
    if not punct.startswith((".", "…")):
        return False
    lo = max(start, match.start() - 32)
    space = block.rfind(" ", lo, match.start())
    token = block[space + 1 if space >= 0 else lo:match.start()].lstrip("(\"'“‘[").lower()
    following = block[match.end():match.end() + 2].lstrip()[:1]
    if punct.startswith(("..", "…")):
        return not following.isupper()
    if token.isdigit() and (following.islower() or block[match.end():match.end() + 4].lstrip()[:3] in _MONTH_STARTS):
        return True  # a German ordinal: "vom 14. bis 18. Dezember"
    if token in _ABBR_KEEP or (len(token) == 1 and token != "i" and block[match.start() - 1].isupper()):
        return True
    if token.isdigit() and len(token) <= 2 and punct == ".":
        before = block[max(start, space - 12):max(space, 0)].rsplit(" ", 1)[-1].lower()
        return _ORDINAL_MONTH.match(block, match.end()) is not None or before in _ORDINAL_AFTER
    if len(token) == 1 and token.isalpha() and token != "i" and (
            _LETTER_ABBR.match(block, match.end()) or _LETTER_BEFORE.search(block, start, max(space, start))):
        return True
    if token in _ABBR_NUM:
        return following.isdigit()
    return (token in _ABBR_CAP or _ACRONYM.fullmatch(token) is not None) and not following.isupper()


def _is_memorable(sentence: str, min_letters: int = 8) -> bool:
    """Seed 000's 12..400 characters (counted by script: `script_length`); ours: at least half letters (a code or
    number between words counted as one word: "Owner's order number is 112-4456789-1234567."), 3+ words
    (2+ of them longer than a letter) and `min_letters` letters, or, in a script written without spaces (Chinese,
    Japanese, Korean, Thai), letters worth 12 English ones ("我是素食者。"); no boilerplate, code, command,
    key=value line or bare URL/path."""
    if not (len(sentence) >= MIN_CHARS or script_length(sentence) >= MIN_CHARS) or len(sentence) > MAX_CHARS or \
            _is_noise(sentence):
        return False
    low = sentence.lower()
    linky = "/" in low or "@" in low or "www." in low or _FILE_EXT.search(low)
    bare = _LINK.sub(" link ", sentence) if linky else sentence
    bare = _HTML_TAG.sub(" ", bare) if "<" in bare else bare  # judged on its prose: a tag the owner typed is kept
    words = _WORD.findall(bare)
    letters = sum(map(len, words))
    valued = _VALUE_TOKEN.sub("code", bare)  # "order number is 112-4456789-1234567": the value is one word
    if sum(map(len, _WORD.findall(valued))) < 0.5 * (len(valued) - valued.count(" ")) or \
            len(_CODE_SYMBOL.findall(bare)) > 2 + 0.03 * len(bare):
        return False
    if len(words) >= 3 and letters >= min_letters and sum(len(word) > 1 for word in words) >= 2:
        return True
    return _NOSPACE_SCRIPT.search(bare) is not None and script_length("".join(words)) >= MIN_CHARS


def _is_noise(sentence: str) -> bool:
    """Boilerplate (licence, greeting, sign-off, mail header…), code, a command or a key=value line."""
    if _BOILERPLATE_START.match(sentence):
        return True
    low = sentence.lower()
    if any(key in low for key in _BOILERPLATE_KEYS) and _BOILERPLATE.search(sentence):
        return True
    return bool(_CODE_START.match(sentence) or sentence.rstrip()[-1:] in (";", "{", "}") or any(
        op in sentence for op in _CODE_OPS) or ("(" in sentence and _CODE_CALL.search(sentence)))


def _question(sentence: str, holds_secret: bool) -> bool:
    """A question is no memory. Ours: a sentence holding a secret and ending in "?" is a question only when it
    also starts like one (`_QUESTION_START`: "Is my PIN 4821?", "¿…") or ends in a full-width "？": "My PIN is
    7788?" states the PIN, the "?" is doubt or a typo, and it is kept as written."""
    end = _QUESTION.search(sentence)
    return end is not None and (not holds_secret or "？" in end.group() or _QUESTION_START.match(sentence) is not None)


def _drop_reason(sentence: str, memory: str, heading: bool, holds_secret: bool, force: bool,
                 document: bool = False) -> str | None:
    """Why `sentence` (its `memory` the rewritten form) is no memory, or None: "a question", "a heading", "not
    memorable" (`_is_memorable` on the memory: boilerplate, code, too short…). A sentence holding a secret value
    (see `twin.text.sensitivity.find_secrets`) needs only to be no question: "IBAN: GB29NWBK60161331926819" has too
    few letters to look memorable, yet it is what the owner said to keep; capture infers it ``sensitive``.
    `force` skips the memorability floor; `document` also drops a short unpunctuated line (an HTML heading)."""
    if _question(sentence, holds_secret):
        return "a question"
    if holds_secret:
        return None
    if (heading or (document and _looks_like_heading(sentence))) and _ENDS_SENTENCE.search(sentence) is None:
        return "a heading"
    if not force and (not _is_memorable(memory) or (memory != sentence and _is_noise(sentence))):
        return "not memorable"
    return None


def _looks_like_heading(sentence: str) -> bool:
    """A document line of at most `HEADING_MAX_WORDS` words, with no sentence punctuation, no digit and no
    first-person word: "Installation", "Getting started with the daemon"."""
    words = sentence.split()
    return len(words) <= HEADING_MAX_WORDS and not any(c.isdigit() for c in sentence) and language_of(sentence) is None


class _Reader:
    """What `extract()` keeps while it reads one text: the time it was written, `force`, where rejection reasons
    go, who wrote it (`speaker`: someone else, whose words are reported; None: the owner), the mentions pronouns
    may refer to, and the language of the last first-person sentence."""

    def __init__(self, now: datetime | None, force: bool, rejected: list[str] | None,
                 speaker: str | None = None) -> None:
        self.now, self.force, self.rejected, self.speaker = now, force, rejected, speaker
        self.antecedents = Antecedents()
        self.language: str | None = None
        self.count = 0

    def reject(self, reason: str) -> None:
        """Record why the sentence just read was dropped (its number, never its text)."""
        if self.rejected is not None:
            self.rejected.append(f"sentence {self.count}: {reason}")

    def rewrite(self, sentence: str) -> str | None:
        """`sentence` made to stand alone: first person -> Owner, its opening pronoun resolved, relative dates
        written as dates; None when a pronoun refers to nothing before it. The mentions it names are kept."""
        language = language_of(sentence) if _MAY_BE_FIRST_PERSON.search(sentence) else None
        self.language = language or self.language
        rewritten = third_person(sentence, language) if language else sentence
        resolved = self.antecedents.resolve(rewritten, language or self.language)
        self.antecedents.observe(resolved or rewritten, language or self.language)
        if resolved is None:
            return None
        return resolve_dates(resolved, language or self.language, self.now)


def _extract_conversation(text: str, limit: int, reader: _Reader, only_secrets: bool = False) -> list[Candidate]:
    out: list[Candidate] = []
    seen: set[str] = set()  # casefolded contents: the duplicate rule
    read: set[str] = set()  # casefolded input sentences: a repeated one costs nothing
    masked_text, values = _mask_secrets(text)
    for sentence, heading in _iter_sentences(masked_text, 0 if values or reader.force else BLOCK_MIN_CHARS,
                                             tags=False):
        sentence = _GREETING.sub("", sentence)
        if sentence.casefold() in read:
            continue
        read.add(sentence.casefold())
        reader.count += 1
        inside = tuple(values[int(i)] for i in _MASKED.findall(sentence))
        if only_secrets and not inside:
            continue
        rewritten = _reported(sentence, reader.speaker) if reader.speaker else reader.rewrite(sentence)
        if rewritten is None:
            reader.reject("a pronoun that refers to nothing before it")
            continue
        content = _finish(_unmask(rewritten, values), inside)
        if why := _drop_reason(sentence, rewritten, heading, bool(inside), reader.force):
            reader.reject(why)
            continue
        if _fits(content, _MASKED.sub("", rewritten), bool(inside), reader.force) and content.casefold() not in seen:
            seen.add(content.casefold())
            out.append(_classify(sentence, content, bool(inside)))  # a secret's words say nothing of its kind
            if len(out) >= limit:
                break
    return out


def _fits(content: str, words: str, holds_secret: bool, force: bool = False) -> bool:
    """Seed 000's 12..400 characters (counted by script; `force`: any length up to 400); ours: a content holding
    secret values has no floor and may reach `MAX_SECRET_CHARS` as long as its `words` around the values stay
    within 400."""
    shortest = 1 if force else MIN_CHARS
    long_enough = len(content) >= shortest or script_length(content) >= shortest
    if not holds_secret:
        return long_enough and len(content) <= MAX_CHARS
    return len(content) <= MAX_SECRET_CHARS and len(words) <= MAX_CHARS  # "PIN: 4827" is short and worth keeping


def _extract_document(text: str, title: str, limit: int, reader: _Reader,
                      only_secrets: bool = False) -> list[Candidate]:
    prefix = f"{title}: " if title else ""
    strong: list[tuple[int, str]] = []  # 6+ words: preferred
    weak: list[tuple[int, str]] = []
    seen: set[str] = set()
    masked_text, values = _mask_secrets(text)
    for position, (sentence, heading) in enumerate(_iter_sentences(masked_text, 0 if values else BLOCK_MIN_CHARS)):
        key = sentence.casefold()
        holds = _MASKED.search(sentence) is not None
        if key in seen or (only_secrets and not holds):
            continue
        seen.add(key)
        rewritten = reader.rewrite(sentence)
        if rewritten is None or _drop_reason(sentence, rewritten, heading, holds, reader.force, True) \
                or not _fits(prefix + _unmask(rewritten, values), prefix + _MASKED.sub("", rewritten), holds):
            continue
        bucket = strong if len(_WORD.findall(_MASKED.sub(" ", sentence))) >= 6 else weak
        if len(bucket) < limit:
            bucket.append((position, rewritten))
        if len(strong) >= limit:
            break
    chosen = sorted(strong + weak[:limit - len(strong)])
    return [Candidate("document", prefix + _unmask(s, values), DOCUMENT_IMPORTANCE,
                      _tags(_TAG_WORD.findall(_MASKED.sub(" ", s).lower())), sensitive=_MASKED.search(s) is not None)
            for _, s in chosen]


def _mask_secrets(text: str) -> tuple[str, list[str]]:
    """`text` with each secret value (`find_secrets` on the whole text, so a key block or a seed phrase spread
    over lines is seen whole; overlapping spans merged) replaced by a placeholder `NUL<i>NUL`, and the values in
    order. Sentence splitting then cannot cut a value into pieces, nor the first-person rewrite touch one ("My
    password is 'I love you'"). A value's line is joined to the line before (a space for the line break, not
    across a blank line) when the value starts its line and that line ends with ":" or "=", or when the value's
    own lines hold no secret alone ("Password" on one line, "hunter2x" on the next; PuTTY's "Private-Lines: 14"
    above its key lines), so label and value make one sentence. Linear in `len(text)`."""
    spans: list[list[int]] = []
    for secret in find_secrets(text):  # sorted by start
        if spans and secret.start < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], secret.end)
        else:
            spans.append([secret.start, secret.end])
    out, values, pos = [], [], 0
    for start, end in spans:
        gap = _join_gap(text, pos, start, end)
        if gap is not None:
            out += [text[pos:gap[0]], " ", text[gap[1]:start]]
        else:
            out.append(text[pos:start])
        out.append(f"\x00{len(values)}\x00")
        values.append(text[start:end])
        pos = end
    out.append(text[pos:])
    return "".join(out), values


def _join_gap(text: str, pos: int, start: int, end: int) -> tuple[int, int] | None:
    """The line break (with the blanks around it) before the line of the value at `start..end` to replace by a
    space, or None (see `_mask_secrets`); never reaching back before `pos`, the end of the previous value."""
    line_start = text.rfind("\n", pos, start) + 1
    if line_start == 0:
        return None  # the value is on the first line, or on the line of the previous value
    previous_end = len(text[pos:line_start].rstrip()) + pos
    if previous_end <= pos or "\n\n" in text[previous_end:line_start].replace(" ", "").replace("\t", ""):
        return None  # nothing before it, or a blank line between (a new paragraph)
    if start - line_start > JOIN_WINDOW:
        return None  # deep inside a long line: its words are all there, and checking it again would not be linear
    starts_line = not text[line_start:start].strip() or _ARMOR.fullmatch(text, line_start, start) is not None
    line_end = text.find("\n", end, end + JOIN_WINDOW)
    alone = text[line_start:line_end if line_end >= 0 else end + JOIN_WINDOW]
    if (starts_line and text[previous_end - 1] in ":=：") or not contains_secret(alone):
        return previous_end, line_start
    return None


def _unmask(text: str, values: list[str]) -> str:
    """`text` with the placeholders of `_mask_secrets` replaced by their secret values again."""
    return _MASKED.sub(lambda m: values[int(m[1])], text)


def _trim_noise(sentence: str) -> str:
    """`sentence` without its trailing emoji and emoticons (`_TAIL_NOISE`), read `TAIL_WINDOW` characters at a time
    from the end, so a long run of them costs linear time."""
    while sentence:
        head, tail = sentence[:-TAIL_WINDOW], sentence[-TAIL_WINDOW:]
        trimmed = _TAIL_NOISE.sub("", tail)
        if trimmed or not head:
            return head + trimmed
        sentence = head
    return sentence


def _reported(sentence: str, speaker: str) -> str:
    """`sentence` by `speaker` (not the owner) as reported speech or a quotation (`twin.text.reported_speech.report`)."""
    from twin.text.reported_speech import report

    return report(sentence, speaker, looks_english(sentence))


def _finish(sentence: str, secrets: tuple[str, ...] = ()) -> str:
    """Trailing emoji/emoticons dropped, "!"/"..." -> ".", a period added if none, first letter capitalised.

    Ours, for a sentence holding the secret values `secrets`: its last characters stay as written, since "!" or
    "..." may be part of the secret ("Passwort für die Bank: Sommer2024!"); trailing emoji go only when every
    secret survives; a period is added only when it ends neither with sentence punctuation nor with a secret
    ("Owner's IBAN is DE89…", no period glued to the value) nor with a key block's "-----END … KEY-----"; a
    secret at the start is not capitalised."""
    if sentence and not sentence[-1].isalnum() and not _ENDS_SENTENCE.search(sentence):
        trimmed = _trim_noise(sentence)
        sentence = trimmed if all(value in trimmed for value in secrets) else sentence
    if not secrets:
        sentence = _TAIL_PUNCT.sub(".", sentence)
    if sentence and not _ENDS_SENTENCE.search(sentence) and not sentence.endswith((*secrets, "-----")):
        sentence += "。" if "\u3040" <= sentence[-1] <= "\u9fff" else "."
    return sentence if sentence.startswith(secrets) else sentence[:1].upper() + sentence[1:]


def _classify(original: str, content: str, sensitive: bool = False) -> Candidate:
    """Kind, importance and tags of a conversational sentence by the rules in `extract()` (ours)."""
    low = original.lower()
    words = _TAG_WORD.findall(low)
    bag = set(words)
    if bag & _PREFERENCE_WORDS or (bag & {"like", "stand", "fan"} and _PREFERENCE_PHRASE.search(low)):
        kind, importance = "preference", PERSONAL_IMPORTANCE
    elif bag & _RELATION_WORDS:
        kind, importance = "relationship", PERSONAL_IMPORTANCE
    elif (bag & _EPISODE_WORDS or (bag & {"this", "last", "next", "past"} and _EPISODE_PHRASE.search(low))
          or (_DIGIT.search(low) and _DATE.search(low))):
        kind, importance = "episode", DEFAULT_IMPORTANCE
    else:
        kind, importance = "fact", DEFAULT_IMPORTANCE
    if bag & _SENSITIVE_WORDS or any(part in low for part in _SENSITIVE_PARTS):
        importance = max(importance, SENSITIVE_IMPORTANCE)
    if "!" in original or bag & _EMPHASIS_WORDS:
        importance += EMPHASIS_BONUS
    return Candidate(kind, content, round(min(importance, 1.0), 2), _tags(words), sensitive=sensitive)


def _tags(words: list[str]) -> tuple[str, ...]:
    """Up to `MAX_TAGS` topics of `_TOPICS` (plurals in "-s" included), in order of their first keyword in `words`."""
    tags: list[str] = []
    for word in words:
        topic = _TAG_OF.get(word)
        if topic and topic not in tags:
            tags.append(topic)
            if len(tags) == MAX_TAGS:
                break
    return tuple(tags)
