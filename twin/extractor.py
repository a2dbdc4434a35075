"""Offline extraction: free text -> memory candidates by rules, with no model (DESIGN.md invariant 6).

Seed 000 ("Extraction") fixes the contract shared with the model-backed extractor: at most 12 memories per
call, each one self-contained third-person sentence, and a fallback that keeps "memorable-looking sentences
(12-400 characters)" as low-importance (0.4) memories. This module is that fallback done better; everything
beyond those numbers is our rule: markup-aware splitting, a boilerplate/code filter, first person rewritten
to "Owner", and kind, importance and tags from small keyword tables. Pure and read-only: no I/O, no state.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass

from twin.memory import KINDS

__all__ = ["KINDS", "MAX_PER_CALL", "Candidate", "extract", "split_sentences"]

MAX_PER_CALL = 12
"""Most memories one extraction call returns (seed 000: "max 12")."""
MIN_CHARS, MAX_CHARS = 12, 400
"""Length bounds of a memorable sentence and of a candidate's content, in characters (seed 000)."""
DEFAULT_IMPORTANCE = 0.4
"""Importance of a plain fact or episode (seed 000's fallback value)."""
PERSONAL_IMPORTANCE, SENSITIVE_IMPORTANCE, EMPHASIS_BONUS, DOCUMENT_IMPORTANCE = 0.5, 0.7, 0.1, 0.3
"""Ours: preference/relationship; health, birthday, address, phone, password; "!"/always/never/important/must
(added, capped at 1.0); every document memory (flat)."""
MAX_TAGS = 3
WRAP_MIN_CHARS = 60
"""Ours: a line this long without sentence punctuation is hard-wrapped prose and continues on the next line;
a shorter one (a chat line, a title) ends its sentence at the newline."""
TITLE_MAX_CHARS = 120
_CLEAN_MAX = 4 * MAX_CHARS  # longer pieces can never be memorable: skip inline markup cleanup (keeps it linear)

# --- text hygiene and block structure -------------------------------------------------------------------------
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_WS = re.compile(r"\s+")
_FENCE = re.compile(r"\s*(?:```|~~~|#\+(?:begin|end)_(?:src|example)\b)", re.I)
_RULE = re.compile(r"[\s=\-~^*#+_`:.|'\"<>]{3,}")  # fullmatch: rst/setext underline, rule, table border
_HEADING = re.compile(r"\s{0,3}#{1,6}\s+|\s*#\+title:\s*", re.I)
_ORG_KEYWORD = re.compile(r"\s*#\+\w+:\s*")
_LIST = re.compile(r"\s*(?:>\s*)*(?:[-*+•‣◦▪]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_QUOTE = re.compile(r"\s*(?:>\s*)+")
_INLINE = (
    (re.compile(r"!?\[([^\[\]\n]{0,300})\]\([^()\s]{0,500}\)"), r"\1"),  # [text](url), ![alt](src)
    (re.compile(r"(\*\*|__|`)([^\n]{1,300}?)\1"), r"\2"),  # **bold**, __bold__, `code`
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]{1,300}?)(?<=\S)\*(?![\w*])"), r"\1"),  # *emphasis*
    (re.compile(r"</?[A-Za-z][^<>\n]{0,200}>"), " "),  # html tags
)
# A sentence ends at . ! ? ... before whitespace (closing quotes/brackets kept), or at 。！？ anywhere.
_END = re.compile(r"(?<![.!?…])[.!?…]++[\"'”’»)\]]*+(?=\s|$)|(?<![。！？])[。！？]++[」』”’）)]*+")
_ABBR_KEEP = frozenset("dr mr mrs ms prof st jr sr mt rev hon gen col capt lt sgt e.g i.e vs cf viz approx ca".split())
_ABBR_NUM = frozenset("no nr vol fig p pp ch sec art jan feb mar apr jun jul aug sep sept oct nov dec".split())
_ABBR_CAP = frozenset("etc al inc ltd co corp".split())
_ACRONYM = re.compile(r"(?:[a-z]\.)+[a-z]")  # u.s, a.m, p.m

# --- the memorability filter ----------------------------------------------------------------------------------
_BOILERPLATE_KEYS = ("copyright", "©", "rights reserved", "hereby granted", "warrant", "licen", "free software",
                     "as is", "click here", "unsubscribe", "browser", "table of contents", "sent from my", "....")
_BOILERPLATE = re.compile(  # searched only when a key above occurs (keeps the filter cheap)
    r"copyright\s*(?:\(c\)|©|\d{4})|©\s*(?:\d{4}|[a-z])|all rights reserved|permission is hereby granted"
    r"|without (?:any )?warrant|general public licen[cs]e|spdx-license-identifier|licensed under the"
    r"|this (?:program|library|file|software) is free software|provided [\"“']?as is\b|\bclick here\b|unsubscribe"
    r"|view (?:this (?:email|message) )?in (?:your |a )?browser|table of contents|sent from my \w+|\.{4,}\s*\d+\s*$",
    re.I,
)
_BOILERPLATE_START = re.compile(  # matched at the start only: whole-line greetings, sign-offs, mail headers
    r"contents\b|on\b.{0,150}\bwrote:\s*$|-+\s*(?:original|forwarded) message|(?:from|to|cc|bcc|subject|date|sent"
    r"|reply-to):\s|(?:(?:best|kind|warm|warmest|many|with) (?:regards|wishes|thanks)|regards|cheers|sincerely"
    r"|yours (?:truly|sincerely|faithfully)|thanks|thank you|thx|xoxo)\b[\s\w,.!-]{0,25}$"
    r"|(?:hi|hello|hey|dear|good (?:morning|afternoon|evening))\b[\s\w,.'!-]{0,30}$",
    re.I,
)
_GREETING = re.compile(r"^(?:hi|hello|hey|dear|good (?:morning|afternoon|evening))\b(?:\s+[\w.'-]+){0,3}\s*[,!:]\s*"
                       r"(?=\S)", re.I)
_CODE_START = re.compile(  # matched at the start only: prompts, commands, declarations, key=value lines
    r"(?:\$|>>>|#!|PS>)\s|sudo\s|(?:pip3?|npm|pnpm|yarn|apt(?:-get)?|brew|cargo|go|gem)\s+(?:install|add|run|build|get"
    r"|remove)\b|git\s+(?:clone|commit|push|pull|checkout|add|rebase|merge|log|status|diff)\b"
    r"|(?:docker(?:-compose)?|kubectl|systemctl|journalctl)\s|cd\s+[~/.]|(?:ls|chmod|chown|mkdir|rm|cp|mv|cat|curl"
    r"|wget|ssh|scp|tar|grep)\s+-|(?:def|class|func|fn)\s+\w+\s*[(:<{]|from\s+[\w.]+\s+import\s"
    r"|import\s+[\w.]+(?:\s*,\s*[\w.]+)*\s*;?$|(?:const|let|var)\s+\w+\s*=|#include\b"
    r"|[\w.\-\[\]\"']+\s*[:=]\s*\S+$|[\w.\-]+\s*=[^=]"
)
_CODE_ANY = re.compile(r"[;{}]\s*$|==|!=|&&|\|\||=>|\+\+|::|\w\.\w+\([^)]*\)")
_URLISH = re.compile(
    r"(?:https?://|ftp://|www\.)\S+|[\w.+-]+@[\w-]+\.[\w.-]+|(?<!\w)(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?"
    r"|\b[\w-]+\.(?:py|js|ts|md|txt|json|ya?ml|toml|cfg|ini|sh|rs|go|cpp|java|html|css|pdf|docx?|xlsx?|csv)\b",
    re.I,
)
_NON_ASCII_LETTER = re.compile(r"[^\W\d_\x00-\x7f]")
_WORD = re.compile(r"[^\W\d_]+")
_NOSPACE_SCRIPT = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CODE_SYMBOL = re.compile(r"[{}\[\]<>=;$|\\^~]")
_QUESTION = re.compile(r"[?？][!?！？.]*[\"'”’»)\]」』]*$")
_TERMINAL = "。！？!?.…\"'”’»)]」』"

# --- first person -> "Owner" (English only) ---------------------------------------------------------------------
_ADVERBS = ("just|really|always|never|usually|often|sometimes|also|still|actually|totally|absolutely|truly|rarely"
            "|seldom|generally|mostly|only|even|definitely|honestly|normally|typically|currently|already|recently"
            "|occasionally|constantly|literally|simply|strongly|mainly|genuinely|probably|certainly|barely|hardly"
            "|finally|personally|secretly|kinda|basically|now|then|so|kind of|sort of")
_FIRST = re.compile(
    r"(?P<conj>\b(?:and|but|or)\s+)?(?<![\w/.'’-])(?P<subj>I|we)(?:['’](?P<contr>m|re|ve|ll|d))?(?![\w/'’-]|\.\w)"
    rf"(?P<adv>(?:\s+(?:{_ADVERBS})\b)*)(?:\s+(?P<verb>[a-z]+(?:n['’]t)?)\b(?!['’]))?"
    r"|(?<![\w/'’-])(?P<obj>my|our|mine|ours|myself|ourselves|me|us)(?![\w/'’-])",
    re.I,
)
_COMPOUND = re.compile(  # "My wife and I …" / "Jonas and I …" / "Me and Jonas …" -> "Owner and … " (plural verb)
    r"^(?:(?P<x>(?i:my|our)\s+\w+(?:\s+\w+)?|[A-Z]\w+)\s+and\s+(?i:I|me|we)"
    r"|(?i:I|me|we)\s+and\s+(?P<y>(?i:my|our)\s+\w+(?:\s+\w+)?|[A-Z]\w+))(?![\w'’])"
)
_CLAUSE_BREAK = re.compile(r"\b(?:he|she|they|who|which|that|is|are|was|were)\b|[;:]", re.I)
_CONTRACTED = {"m": "is", "re": "is", "ve": "has", "ll": "will", "d": "would"}
_AGREE = {"am": "is", "are": "is", "were": "was", "be": "is", "have": "has", "do": "does", "go": "goes",
          "don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "weren't": "wasn't"}
_VERB_AS_IS = frozenset(
    "can could will would shall should may might must ought was did had and or but too not went got made saw took"
    " came knew thought told found gave felt left bought ate drank ran met began wrote read put cut set hit let quit"
    " spent sent lost won sat stood heard held kept slept woke swam flew drove rode broke chose spoke forgot became"
    " brought caught taught fought sold built paid said meant lent led fed fell grew threw wore understood".split())
_EN_HINTS = frozenset(  # common English words that are not function words of es/it/fr/pt/nl
    "the and my mine myself with have had was were am are been just really like love hate want need went this"
    " that it of for to from but not don't i'm i've i'll i'd we're we've our ourselves you they she his will can"
    " would should very since last yesterday today tomorrow week weekend weekends every before after about because"
    " when what all some get got make know think see work day time morning night always never often usually".split())
_FOREIGN_HINTS = frozenset(  # function words of the languages where "me", "i" or "we" are also words
    "el la los las que de del y es il di che e per sono le les des est et je tu vous nous une um uma não eu em het"
    " een ik niet zijn ho ha mi ti si lo gli miei mio mia con en por para muy pero al ao da das dos du ce ne pas"
    " ma anche io noi yo ella ele ela wij zij".split())
_EN_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?")
_CAPITAL_I = re.compile(r"(?<![\w'’])I(?![\w/-])")
_TAIL_NOISE = re.compile(r"(?:\s|[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D]"
                         r"|(?<!\w)[:;=]-?[)(DPp/|*]|<3)+$")
_TAIL_PUNCT = re.compile(r"[!.…]+$")

# --- kind, importance, tags -----------------------------------------------------------------------------------
_PREFERENCE = re.compile(
    r"\b(?:(?:dis)?likes|(?:dis)?liked|dislike|(?:i|we|you|they|really|also|do|don't|didn't|would|['’]d)\s+like"
    r"|lov(?:e|es|ed)|prefer(?:s|red)?|hat(?:e|es|ed)|enjoy(?:s|ed)?|adores?|can['’]?t stand|cannot stand"
    r"|favou?rites?|fan of)\b", re.I)
_RELATION = re.compile(
    r"\b(?:sister|brother|mother|mom|mum|father|dad|wife|husband|partner|girlfriend|boyfriend|son|daughter|friend"
    r"|colleague|co-?worker|boss|manager|neighbou?r|cousin|aunt|uncle|grandma|grandpa|grandmother|grandfather"
    r"|parent|kid|child|children|fianc[ée]e?)s?\b", re.I)
_MONTH = "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?" \
         "|nov(?:ember)?|dec(?:ember)?"
_DAY = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_EPISODE = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|this (?:morning|afternoon|evening)|last night|ago"
    rf"|(?:last|this|next|past) (?:week|month|year|weekend|{_DAY}|spring|summer|autumn|fall|winter)"
    rf"|(?:{_DAY})(?!s)|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTH})|(?:{_MONTH}) \d{{1,2}}(?:st|nd|rd|th)?)\b", re.I)
_SENSITIVE = re.compile(
    r"\b(?:allerg\w*|health\w*|medical|medication|medicine|doctor|diagnos\w*|surgery|hospital\w*|prescri\w*"
    r"|disease|asthma|diabet\w*|pregnan\w*|therap\w*|insulin|vaccin\w*|blood type|birthday|born on|address"
    r"|lives? at|zip code|postcode|phone|mobile number|password|passcode|pin code|passport|social security|iban"
    r"|credit card|account number)\b", re.I)
_EMPHASIS = re.compile(r"!|\b(?:always|never|important|must)\b", re.I)
_TOPICS = {
    "family": "sister sisters brother brothers mother mom mum father dad parents wife husband partner girlfriend"
              " boyfriend son daughter kids children cousin aunt uncle grandma grandpa family baby",
    "work": "colleague colleagues coworker coworkers boss manager job work works office meeting meetings client"
            " clients career salary project deadline team",
    "social": "friend friends neighbour neighbor neighbours neighbors party",
    "health": "allergic allergy allergies health medical medication medicine doctor hospital penicillin sick diet"
              " therapy dentist vaccine asthma diabetes",
    "food": "food coffee tea espresso roast sushi pizza pasta eat eats eating ate cook cooking restaurant breakfast"
            " lunch dinner vegetarian vegan wine beer chocolate meat",
    "travel": "travel travels traveling travelling trip trips flight flights hotel vacation holiday holidays abroad"
              " airport",
    "fitness": "hiking hike gym running run runs yoga swimming swim cycling bike workout football tennis climbing",
    "sleep": "sleep sleeps sleeping wake wake-up woke bedtime nap insomnia 5am 6am",
    "learning": "learning learn learns study studying course language languages german spanish french book books",
    "home": "home house apartment flat address rent moved lives",
    "music": "music song songs guitar piano concert band",
    "pets": "dog dogs cat cats pet pets puppy",
    "tech": "python code coding programming computer laptop linux software rust javascript",
    "money": "money bank budget savings invest investing",
}
_TAG_OF = {word: topic for topic, words in _TOPICS.items() for word in words.split()}
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

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"extractor: unknown kind {self.kind!r}; use one of {', '.join(KINDS)}")
        if not 0.0 <= self.importance <= 1.0:
            raise ValueError(f"extractor: importance {self.importance!r} is outside 0..1")


def split_sentences(text: str) -> list[str]:
    """Split prose or light markup into sentences, in text order, whitespace collapsed. Never raises.

    Ours (seed 000 only says "sentence-splitting"): a sentence ends at . ! ? ... before whitespace, at 。！？,
    at a blank line, at the end of a list item or heading, and at the end of a line shorter than
    `WRAP_MIN_CHARS` (longer lines are hard-wrapped prose and are joined). No split after common abbreviations
    (e.g., i.e., Dr., Mr., vs., ...; etc. and dotted acronyms only before a capital; No./Jan. before a digit),
    initials, or inside decimals, versions, URLs and e-mail addresses. Markdown/rst/org markup is stripped:
    heading `#`s, list markers, `>`, underline and rule lines, fenced code (dropped), table pipes (cells joined
    with ", "), links, emphasis, inline code marks, html tags. No filtering: see `extract()` for that.
    """
    return [sentence for sentence, _ in _iter_sentences(_clean_text(text))]


def extract(text: str, *, document_title: str | None = None, limit: int = MAX_PER_CALL) -> list[Candidate]:
    """Turn `text` into at most `limit` memory candidates (seed 000: 12 per call), in text order. Never raises.

    Only memorable sentences are kept (`_is_memorable`: 12..400 characters per seed 000; enough letters and
    words; no code, command, key=value, bare URL/path, licence text, greeting/sign-off, "click here",
    "unsubscribe", table of contents); questions and headings without sentence punctuation are dropped, and so
    are exact duplicates (case-insensitive) within the call.

    Conversation (`document_title` None: chat, notes, "learn TEXT"): English first person is rewritten with
    "Owner" as the subject and verbs agreed ("I hate it" -> "Owner hates it."), other sentences are kept as
    written (any language); each ends with a period. Kind: preference > relationship > episode > fact; importance
    0.4 (seed 000), 0.5 for preference/relationship, 0.7 for health/birthday/address/phone/password content,
    +0.1 for "!" or always/never/important/must, capped at 1.0 (ours).

    Document (`document_title` given, e.g. a file name): sentences are not rewritten; each becomes
    `"<title>: <sentence>"` of kind "document" and importance 0.3. Sentences of 6+ words are preferred over
    shorter ones, earlier over later; the chosen ones keep document order. The title is whitespace-collapsed and
    cut to `TITLE_MAX_CHARS`; a sentence that would make the content exceed 400 characters is skipped.

    `bytes` are decoded as UTF-8 (errors replaced); other non-`str` input yields []. `limit` <= 0 yields [].
    Cost is linear in `len(text)`; reading stops once `limit` candidates are found.
    """
    if limit <= 0:
        return []
    clean = _clean_text(text)
    if document_title is None:
        return _extract_conversation(clean, limit)
    title = _WS.sub(" ", _clean_text(str(document_title))).strip().rstrip(":").strip()[:TITLE_MAX_CHARS]
    return _extract_document(clean, title, limit)


def _clean_text(text: object) -> str:
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    elif not isinstance(text, str):
        return ""
    text = _SURROGATE.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub(" ", text.replace("\u2028", "\n").replace("\u2029", "\n"))


def _iter_sentences(text: str) -> Iterator[tuple[str, bool]]:
    """Yield `(sentence, is_heading)` lazily, so `extract()` can stop early."""
    for block, heading in _blocks(text):
        for piece in _split_block(_WS.sub(" ", block).strip()):
            if len(piece) <= _CLEAN_MAX and any(mark in piece for mark in "[*_`<&"):
                for pattern, repl in _INLINE:
                    piece = pattern.sub(repl, piece)
                piece = _WS.sub(" ", html.unescape(piece) if "&" in piece else piece).strip()
            if piece:
                yield piece, heading


def _blocks(text: str) -> Iterator[tuple[str, bool]]:
    """Yield `(block, is_heading)`: paragraphs, list items, table rows and headings, line markup stripped."""
    cur: list[str] = []
    in_code = False
    for raw in text.split("\n"):
        line = raw.strip()
        if line[:1].isalpha() and not in_code:  # fast path: plain prose cannot start with markup
            if cur and len(cur[-1]) < WRAP_MIN_CHARS:
                yield from _flush(cur)
            cur.append(line)
            continue
        if _FENCE.match(line):
            in_code = not in_code
            yield from _flush(cur)
            continue
        if in_code or not line:
            yield from _flush(cur)
            continue
        if _RULE.fullmatch(line):  # an underline makes the single line above it a heading
            yield from _flush(cur, len(cur) == 1 and len(set(line)) == 1 and line[0] in "=-~^\"'`#*+")
            continue
        if line.startswith("|"):
            yield from _flush(cur)
            yield ", ".join(cell.strip() for cell in line.strip("|").split("|") if cell.strip()), False
            continue
        if heading := _HEADING.match(line):
            yield from _flush(cur)
            yield line[heading.end():].strip(" #"), True
            continue
        if keyword := _ORG_KEYWORD.match(line):
            line = line[keyword.end():]
        if item := _LIST.match(line):
            yield from _flush(cur)
            line = line[item.end():]
        else:
            if quote := _QUOTE.match(line):
                line = line[quote.end():]
            if cur and len(cur[-1]) < WRAP_MIN_CHARS:
                yield from _flush(cur)
        if line:
            cur.append(line)
    yield from _flush(cur)


def _flush(cur: list[str], heading: bool = False) -> Iterator[tuple[str, bool]]:
    if cur:
        yield " ".join(cur), heading
        cur.clear()


def _split_block(block: str) -> Iterator[str]:
    start = 0
    for match in _END.finditer(block):
        if _no_break(block, start, match):
            continue
        piece = block[start:match.end()].strip()
        start = match.end()
        if piece:
            yield piece
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
    if token in _ABBR_KEEP or (len(token) == 1 and token.isalpha() and token != "i"
                               and block[match.start() - 1].isupper()):
        return True
    if token in _ABBR_NUM:
        return following.isdigit()
    if token in _ABBR_CAP or _ACRONYM.fullmatch(token):
        return not following.isupper()
    return False


def _is_memorable(sentence: str) -> bool:
    """Seed 000's 12..400 characters, plus ours: mostly letters, 3+ words (or 6+ letters of a script written
    without spaces), and no boilerplate, code, command, key=value line or bare URL/path."""
    if not MIN_CHARS <= len(sentence) <= MAX_CHARS or _BOILERPLATE_START.match(sentence):
        return False
    low = sentence.lower()
    if any(key in low for key in _BOILERPLATE_KEYS) and _BOILERPLATE.search(sentence):
        return False
    if _CODE_START.match(sentence) or _CODE_ANY.search(sentence):
        return False
    bare = _URLISH.sub(" link ", sentence) if ("/" in low or "@" in low or "." in low[:-1]) else sentence
    words = _WORD.findall(bare)
    letters = sum(map(len, words))
    visible = len(bare) - bare.count(" ")
    if letters < 0.5 * visible or len(_CODE_SYMBOL.findall(bare)) > 2 + 0.03 * len(bare):
        return False
    return (len(words) >= 3 and letters >= 8) or (letters >= 6 and _NOSPACE_SCRIPT.search(bare) is not None)


def _keep(sentence: str, heading: bool) -> bool:
    if heading and sentence[-1] not in _TERMINAL:
        return False
    return not _QUESTION.search(sentence) and _is_memorable(sentence)


def _extract_conversation(text: str, limit: int) -> list[Candidate]:
    out: list[Candidate] = []
    seen: set[str] = set()
    for sentence, heading in _iter_sentences(text):
        sentence = _GREETING.sub("", sentence)
        if not _keep(sentence, heading):
            continue
        english = _FIRST.search(sentence) is not None and _looks_english(sentence)
        content = _finish(_third_person(sentence) if english else sentence)
        key = content.casefold()
        if not MIN_CHARS <= len(content) <= MAX_CHARS or key in seen:
            continue
        seen.add(key)
        out.append(_classify(sentence, content))
        if len(out) >= limit:
            break
    return out


def _extract_document(text: str, title: str, limit: int) -> list[Candidate]:
    prefix = f"{title}: " if title else ""
    strong: list[tuple[int, str]] = []
    weak: list[tuple[int, str]] = []
    seen: set[str] = set()
    for position, (sentence, heading) in enumerate(_iter_sentences(text)):
        key = sentence.casefold()
        if len(prefix) + len(sentence) > MAX_CHARS or key in seen or not _keep(sentence, heading):
            continue
        seen.add(key)
        bucket = strong if len(_WORD.findall(sentence)) >= 6 else weak
        if len(bucket) < limit:
            bucket.append((position, sentence))
        if len(strong) >= limit:
            break
    chosen = sorted(strong + weak[:limit - len(strong)])
    return [Candidate("document", prefix + s, DOCUMENT_IMPORTANCE, _tags(s)) for _, s in chosen]


def _looks_english(sentence: str) -> bool:
    """Ours: rewrite a sentence only when it reads as English: mostly ASCII letters and more English hint words
    (an upper-case "I" counts) than Spanish/Italian/French/Portuguese/Dutch ones, so "me gusta" or Italian
    "i miei" are never touched."""
    if not sentence.isascii():
        letters = sum(map(len, _WORD.findall(sentence)))
        if len(_NON_ASCII_LETTER.findall(sentence)) > 0.15 * letters:
            return False
    words = _EN_TOKEN.findall(sentence.lower().replace("’", "'"))
    english = sum(word in _EN_HINTS for word in words) + len(_CAPITAL_I.findall(sentence))
    return english > sum(word in _FOREIGN_HINTS for word in words)


def _third_person(sentence: str) -> str:
    """English first person -> "Owner" (ours). I/we -> Owner with the verb agreed; "and/but/or I" after an
    Owner clause drops the subject; my/our -> Owner's, then their; me/us -> Owner; mine/ours -> Owner's, then
    theirs; myself/ourselves -> themselves. All-caps tokens (US, ME) are left alone."""
    if compound := _COMPOUND.match(sentence):
        sentence = "Owner and " + (compound["x"] or compound["y"]) + sentence[compound.end():]
    state = {"named": sentence.startswith("Owner "), "subject_end": -1}

    def replace(m: re.Match) -> str:
        if len(m.group()) > 1 and m.group().isupper() and not m["subj"]:
            return m.group()
        if m["obj"]:
            word, named = m["obj"].lower(), state["named"]
            state["named"] = True
            if word in ("myself", "ourselves"):
                return "themselves"
            if word in ("me", "us"):
                return "Owner"
            return ("their" if named else "Owner's") if word in ("my", "our") else ("theirs" if named else "Owner's")
        adverbs, verb = m["adv"] or "", m["verb"]
        aux = ""
        if m["contr"]:
            aux = " " + _CONTRACTED[m["contr"].lower()]
            if aux == " would" and verb and verb.lower() in ("been", "better"):
                aux = " had"
        verb_out = " " + (verb if m["contr"] else _agree(verb)) if verb else ""
        conj = m["conj"] or ""
        elide = bool(conj) and state["subject_end"] >= 0 and not _CLAUSE_BREAK.search(
            m.string, state["subject_end"], m.start())
        state.update(named=True, subject_end=m.end())
        return conj + (aux + adverbs + verb_out).lstrip() if elide else conj + "Owner" + aux + adverbs + verb_out

    return _FIRST.sub(replace, sentence)


def _agree(verb: str) -> str:
    """Simple-present third-person form of a verb that followed "I"/"we"; past tenses and modals unchanged."""
    low = verb.lower().replace("’", "'")
    if low in _AGREE:
        out = _AGREE[low]
    elif low in _VERB_AS_IS or "'" in low or low.endswith("ed") or (low.endswith("s") and not low.endswith(
            ("ss", "us"))):
        return verb
    elif low.endswith(("s", "sh", "ch", "x", "z", "o")):
        out = low + "es"
    elif low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        out = low[:-1] + "ies"
    else:
        out = low + "s"
    return out.upper() if verb.isupper() and len(verb) > 1 else out


def _finish(sentence: str) -> str:
    """Trailing emoji/emoticons dropped, "!"/"..." -> ".", a period added if none, first letter capitalised."""
    sentence = _TAIL_PUNCT.sub(".", _TAIL_NOISE.sub("", sentence))
    if not sentence:
        return sentence
    if sentence[-1] not in _TERMINAL:
        sentence += "。" if "\u3040" <= sentence[-1] <= "\u9fff" else "."
    return sentence[0].upper() + sentence[1:]


def _classify(original: str, content: str) -> Candidate:
    """Kind, importance and tags of a conversational sentence by the rules in `extract()` (ours)."""
    if _PREFERENCE.search(original):
        kind, importance = "preference", PERSONAL_IMPORTANCE
    elif _RELATION.search(original):
        kind, importance = "relationship", PERSONAL_IMPORTANCE
    elif _EPISODE.search(original):
        kind, importance = "episode", DEFAULT_IMPORTANCE
    else:
        kind, importance = "fact", DEFAULT_IMPORTANCE
    if _SENSITIVE.search(original):
        importance = max(importance, SENSITIVE_IMPORTANCE)
    if _EMPHASIS.search(original):
        importance += EMPHASIS_BONUS
    return Candidate(kind, content, round(min(importance, 1.0), 2), _tags(original))


def _tags(sentence: str) -> tuple[str, ...]:
    """Up to `MAX_TAGS` topics from `_TOPICS`, in order of their first keyword in the sentence."""
    tags: list[str] = []
    for word in _TAG_WORD.findall(sentence.lower()):
        topic = _TAG_OF.get(word)
        if topic and topic not in tags:
            tags.append(topic)
            if len(tags) == MAX_TAGS:
                break
    return tuple(tags)
