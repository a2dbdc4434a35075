"""Capture rules (seed 003, "Capturing"): the worthiness gate, and how a new memory relates to an existing one.

Seed 003 gates every write (trim, reject under 12 characters, reject canned filler) and then, for a new fact
near an active one, either updates the old memory in place (near-duplicate or refinement) or inserts the new
one and marks the old one superseded (contradiction). Embeddings find the near pairs but cannot tell a
contradiction from a paraphrase (LIBRARY_NOTES §8: "prefers espresso over dark roast" scores almost as high as
a paraphrase of its opposite), so `relate()` decides with the word rules below. Everything beyond seed 003's
gate numbers is ours, measured on `eval/memories.jsonl` (its `dup_of`/`supersedes` fields) by
`tests/test_capture_rules.py`. Pure: stdlib only, no I/O, no state.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, NamedTuple

from twin.text.sentence_length import too_short

__all__ = ["DUPLICATE_JACCARD", "EVENT_JACCARD", "STOPWORDS", "Relation", "RelationKind", "relate", "token_jaccard",
           "tokens", "unworthy"]

RelationKind = Literal["duplicate", "contradiction", "unrelated"]
DUPLICATE_JACCARD = 0.2
"""`relate()` calls two statements of a state (present tense) a duplicate from this `token_jaccard` on. Ours,
measured on eval/memories.jsonl: its 40 restatements (`dup_of`) score a median of 0.29 and at most 0.58, so the
dream cycle's 0.5 (seed 003) would catch almost none; 3,000 random pairs of memories score 0 at the median and
reach 0.2 in 0.2 %."""
EVENT_JACCARD = 0.35
"""… and from this one when either sentence tells an event (main verb in the past tense). Ours: most pairs with
cosine >= 0.6 that are not restatements are two events of one story ("signed the lease" / "viewed the flat");
0.35 cuts them from 49 to 13 of 137 (all-MiniLM-L6-v2, measured once) and costs 3 of the 40 restatements."""
STOPWORDS = frozenset("""
    a an and are as at be been but by can could did do does for from had has have how i if in into is it its me
    my of on or our so than that the their them then there these they this to was we were what when where which
    who whom why will with would you your about any all am also just more most no not now only other some such
    too very s t d ll re ve m owner
    """.split())
"""Left out of `tokens()`: function words (those of twin/recall/hybrid.py) and "owner", the subject of every memory."""

# --- tokens ------------------------------------------------------------------------------------------------------
_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_SCRIPT_RUN = re.compile(rf"{_CJK.pattern}+|(?:(?!{_CJK.pattern})\w)+")
_THOUSANDS = re.compile(r"(?<=\d)[,.](?=\d{3}\b)")  # 1,420 -> 1420; 92.000 -> 92000


def _fold(text: str) -> str:
    """NFKC, case-folded, accents of Latin letters removed (Japanese dakuten kept), typographic apostrophes made
    ASCII: the form every rule reads."""
    out: list[str] = []
    for c in unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold()):
        if not (unicodedata.combining(c) and out and out[-1] < "\u0250"):
            out.append(c)
    return unicodedata.normalize("NFC", "".join(out)).replace("’", "'")


def _stem(word: str) -> str:
    """A plural or third-person -s cut: "lives" -> "live"; "class", "bus", "has", "does" stay."""
    keep = len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is", "as", "oes"))
    return word if keep else word[:-1]


_NUMBER = re.compile(r"^\d+(?:[.,]\d+)?$")
_NUMBER_WORDS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}


PARSED_CACHE = 8192
"""Sentences whose `tokens`, `_numbers_apart` and `_parse` are kept: capture relates each new memory to up to ~50 close older ones,
and the same older memories come back capture after capture (bench/ingest.py: without it, reading the same
sentences again was most of a learn job's CPU)."""


@lru_cache(maxsize=PARSED_CACHE)
def _numbers_apart(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """`(numbers, other content words)` of `text` (`tokens`), number words read as digits ("two" -> "2")."""
    words = {_NUMBER_WORDS.get(t, t) for t in tokens(text)}
    numbers = frozenset(t for t in words if _NUMBER.match(t))
    return numbers, frozenset(words - numbers)


def numbers_changed(new: str, old: str) -> str | None:
    """"2 → 3" when `new` and `old` have the same content words apart from their numbers and the numbers differ
    ("Owner has 2 cats." / "Owner has 3 cats.", "one cat" / "two cats", "Owner weighs 80 kg." / "… 78 kg."),
    else None (ours)."""
    numbers_a, rest_a = _numbers_apart(new)
    numbers_b, rest_b = _numbers_apart(old)
    if not numbers_a or not numbers_b or numbers_a == numbers_b or rest_a != rest_b or not rest_a:
        return None
    return f"{', '.join(sorted(numbers_b - numbers_a))} → {', '.join(sorted(numbers_a - numbers_b))}"


def drops_numbers(new: str, old: str) -> bool:
    """True when `old` states a number and `new` none ("Owner's rent is 900 euros." / "Owner's rent is high."):
    the new statement is a judgement, not a new value, and must not hide the number (ours)."""
    return bool(_numbers_apart(old)[0]) and not _numbers_apart(new)[0]


@lru_cache(maxsize=PARSED_CACHE)
def tokens(text: str) -> frozenset[str]:
    """The content words of `text` as a set: folded (NFKC, case, Latin accents), split on anything but letters and
    digits, `STOPWORDS` left out, a final -s cut ("lives" -> "live"), thousands separators dropped ("1,420" ->
    "1420"). Runs of Chinese, Japanese or Korean characters become character bigrams (no spaces there)."""
    out: set[str] = set()
    for word in _WORD.findall(_THOUSANDS.sub("", _fold(text))):
        for part in _SCRIPT_RUN.findall(word):  # "owner住在柏林" -> "owner", "住在柏林"
            if _CJK.match(part):
                out.update(part[i:i + 2] for i in range(max(1, len(part) - 1)))
            elif part not in STOPWORDS:
                out.add(_stem(part))
    return frozenset(out)


def token_jaccard(a: str, b: str) -> float:
    """|A ∩ B| / |A ∪ B| over `tokens(a)` and `tokens(b)`, 0..1; 0.0 when both are empty.

    Gives 0.33 for "Owner lives in Lisbon." / "Owner lives in Berlin." ({live, lisbon} vs {live, berlin}), so the
    dream cycle's merge bar of 0.5 (seed 003) keeps such contradictions apart; 1.0 for texts that differ only
    in case, stopwords, punctuation or plural -s."""
    ta, tb = tokens(a), tokens(b)
    union = ta | tb
    return len(ta & tb) / len(union) if union else 0.0


# --- the worthiness gate -----------------------------------------------------------------------------------------
_FILLER_WORDS = (
    # English
    "thanks?(?: (?:you|u))?(?: (?:so|very) much| a lot| again| a bunch)?|thank you|thx|thnx|ty|tysm|cheers|ta"
    "|ok(?:ay|ey|ie)?|k+|kk|sure(?: thing)?|got it|noted|cool|nice|great|awesome|perfect|fine|alright|all right"
    "|lol|lmao|rofl|ha(?:ha)+|he(?:he)+|xd|yes|yeah|yep|yup|ya|no|nope|nah|hi|hello|hey|yo|bye|goodbye|bye bye"
    "|see (?:you|ya)|cya|good ?night|gn|np|no problem|(?:you're |you are )?welcome|done|sounds good|will do"
    "|of course|right|true|wow|oh|ah|hm+|uh|um|omg|yay|indeed|exactly|agreed|same|ack"
    # German, French, Spanish, Portuguese, Italian
    "|danke(?: schon| sehr)?|vielen dank|bitte|ja|nein|jawohl|genau|tschuss|hallo|servus|alles klar"
    "|merci(?: beaucoup)?|oui|non|d'accord|salut|bonjour|bonsoir|au revoir|de rien"
    "|gracias|muchas gracias|si|vale|claro|hola|adios|de nada|obrigad[oa]|valeu|tchau|ola|grazie|ciao"
    # Chinese, Japanese
    "|谢谢|多谢|好的?|嗯|是的|再见|你好|ありがとう(?:ございます)?|どうも|はい|いいえ|了解|おはよう|こんにちは|さようなら")
_FILLER = re.compile(rf"(?>{_FILLER_WORDS})(?:[\W_]+(?>{_FILLER_WORDS}))*+")  # atomic: linear on "bye bye bye … x"
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")  # punctuation, emoji and spaces around the words
_REPEATS = re.compile(r"(.)\1{2,}")  # "okkk", "thanksss", "yesss" -> one letter


_FILLER_STATE = re.compile(  # "I'm ok" rewritten: a state that answers "how are you?", not a fact
    r"owner(?: is| was|'s)?(?: (?:all|just|totally|really|so|very|pretty))? (?:ok(?:ay)?|fine|good|great|alright"
    r"|all right|here|back|done|ready|in|out|on it|coming|ist (?:ok|gut|da|fertig)|est (?:ok|bien|la|pret))")


def unworthy(content: str) -> str | None:
    """Why `content` should not become a memory, or None when it passes the gate (seed 003, "The worthiness gate").

    Rules, in order: no letters or digits at all -> "filler: <content>" ("👍", "?!"); once trimmed, case-folded,
    stripped of diacritics and of punctuation/emoji at both ends, with letters repeated 3+ times squeezed
    ("thanksss"), nothing but filler words (any number) in English, German, French, Spanish, Portuguese,
    Italian, Chinese or Japanese ("ok", "Thank you so much!", "ok, got it 👍", "Danke schön", "merci", "谢谢")
    -> "filler: <words>"; a reply about how the owner is doing ("Owner is fine.", "Owner ist ok.", from "I'm
    fine") -> "filler: <words>"; then under 12 characters after trimming, a character counted by its script
    (`twin.text.sentence_length.script_length`: "我是素食者。" is 16, "Owner is ok" 11) -> "shorter than 12
    characters". Read-only."""
    trimmed = content.strip()
    if not any(c.isalnum() for c in trimmed):
        return f"filler: {trimmed}" if trimmed else "empty"
    core = _REPEATS.sub(r"\1", _EDGE.sub("", _fold(trimmed)))
    if _FILLER.fullmatch(core) or _FILLER_STATE.fullmatch(core):
        return f"filler: {core}"
    return too_short(trimmed)


# --- relating a new memory to an old one -------------------------------------------------------------------------
class Relation(NamedTuple):
    """What `relate()` decided. `kind`: "duplicate" (the caller updates the old memory in place),
    "contradiction" (the caller marks the old one superseded) or "unrelated" (the caller just inserts the new
    one); `reason`: one short line for the activity log, e.g. "same subject 'Owner lives in', different object:
    'in lisbon' → 'in berlin'"."""

    kind: RelationKind
    reason: str


_KIN = ("sister|brother|mother|mum|mom|father|dad|wife|husband|partner|girlfriend|boyfriend|fiance|fiancee|son"
        "|daughter|nephew|niece|cousin|aunt|uncle|grandmother|grandma|grandfather|grandpa|friend|neighbour|neighbor"
        "|colleague|coworker|flatmate|roommate|teacher|dentist|doctor|therapist|landlord|buddy")
_KIN_ALIAS = {"mum": "mother", "mom": "mother", "dad": "father", "grandma": "grandmother", "grandpa": "grandfather",
              "neighbor": "neighbour", "coworker": "colleague", "roommate": "flatmate"}
_VERB = ("is|are|was|were|has|have|had|will|would|can|could|cannot|can't|does|doesn't|did|didn't|isn't|wasn't|gets"
         "|got|lives?|works?|moved|reports?|turns|rose|climbed|dropped|fell|went|keeps|owns|runs|uses|eats|plays"
         "|celebrates|stays|starts|started|ended|left|joined|goes|holds|takes|makes|needs|likes|loves|hates|confirms"
         "|shows|costs|expires|meets|comes|sits|faces|requires|grew|ends")  # ends the noun phrase after "Owner's"
_NP_END = re.compile(rf"\b(?:{_VERB})\b")
_ADJECTIVES = re.compile(r"\b(?:new|first|current|old|former|latest|previous|updated|present|usual)\b\s*")
_QUALIFIER = re.compile(r"\s+(?:at|on|in|from|with|for|of|to|by)\b.*")
_CLAUSE_END = re.compile(r",?\s+\b(?:which|who|whom|whose|where|after|because|since|when|while|although|though"
                         r"|so that|but|whereas|as of)\b|;|\s[-–—]\s")
_RELATIONS: tuple[tuple[str, bool, re.Pattern[str]], ...] = tuple(  # key, single-valued, pattern (earliest wins)
    (key, functional, re.compile(pattern)) for key, functional, pattern in (
        ("lives in", True, r"(?<![\w-])(?:lives?|lived|living|resides?|moved|relocated)\b(?!-)"),
        ("works as/at", True, r"\bworks? (?:as|at|for)\b|\bemployed\b|\bstarted (?:as|at|working)\b|\bjob (?:at|as)\b"
         r"|\bjoined [^,]+? as an?\b|\bis (?:now )?(?:an? |the )?(?=(?:[\w-]+ ){0,3}?(?:engineer|developer|lead"
         r"|designer|scientist|researcher|consultant|cto|ceo|founder|head of|director|analyst)\b)"),
        ("'s manager is", True, r"^owner's (?:new |current |line )?(?:manager|boss)\b|\breports? (?:directly )?to\b"),
        ("earns", True, r"^owner's (?:[\w-]+ ){0,3}?(?:salary|pay)\b|\b(?:salary|pay) (?:of|is|rose|went)\b|\bearns\b"
         r"|\bpayslip\b"),
        ("pays rent", True, r"\bpays? (?:\S+ ){0,5}?rent\b|\brent (?:is|of)\b"),
        ("is vegetarian/vegan", True, r"\b(?:vegetarian|vegan|pescatarian|omnivore|(?:eats|eating|eat) (?:meat|fish"
         r"|everything))\b"),
        ("is dating", True, r"\b(?:is|started|been) dating\b|\b(?:relationship with|married to|engaged to|broke up"
         r"|split up|divorced)\b|\b(?:is|are|got) (?:now )?(?:separated|single)\b"
         r"|^owner's (?:girlfriend|boyfriend|partner|wife|husband|fiancee?)\b"),
        ("uses a phone", True, r"\b(?:uses|has|owns|bought|got|carries|switched to|replaced|upgraded to)\b(?= (?:\S+ )"
         r"{0,4}?(?:phone|smartphone|iphone|pixel \d+|galaxy)\b)|^owner's (?:\w+ )?phone is\b"),
        ("drives", True, r"\bdrives\b|^owner's car\b"),
        ("codes in", True, r"\b(?:writes code|codes|programs) in\b|\b(?:code )?editor\b"),
        ("prefers", False, r"\bprefers?\b|\bwould rather\b"),
        ("likes", False, r"\b(?:likes|loves|enjoys|adores|dislikes|hates|detests|avoids|(?:can't|cannot) stand"
         r"|does(?:n't| not) (?:like|enjoy))\b"),
        ("is allergic to", False, r"\ballergic\b|\ballergy\b"),
        ("has visited", False, r"\b(?:has )?visited\b|\bhas been to\b"),
        ("knows", False, r"\bknows\b|\bspeaks\b"),
        ("bought", False, r"\bbought\b"),
        ("read", False, r"\bread\b"),
    ))
_KEYS = frozenset(key for key, _, _ in _RELATIONS)
_ADDITIVE = frozenset(key for key, functional, _ in _RELATIONS if not functional)
_DIETS = (("vegan", "vegan"), ("vegetarian", "vegetarian"), ("pescatarian", "pescatarian"), ("fish", "pescatarian"),
          ("meat", "omnivore"), ("everything", "omnivore"), ("omnivore", "omnivore"))
_ENDED = re.compile(r"\b(?:broke up|split up|separated|divorced|single)\b")  # in a text matching "is dating"
_CHANGE = re.compile(r"\b(?:now|no longer|any ?more|no more|moved|switched|quit|changed|started|became|stopped"
                     r"|replaced|replace|sold|gave up|broke up|split up|rose|raised|increased|dropped|upgraded"
                     r"|instead|resigned|retired|(?:climbed|fell|went up|went down) to)\b|(?<!the )\bleft\b"
                     r"|^owner's (?:[\w-]+ )?(new)\b")  # "new" only for Owner's attribute: "Owner's new manager"
_ENDING = frozenset("quit left sold stopped replaced replace moved switched changed resigned retired".split())
_PAST = re.compile(r"(?:was|were|had|did|didn't|wasn't|weren't|went|got|made|saw|took|came|knew|thought|told|found|gave"
                   r"|felt|left|bought|ate|drank|ran|met|began|wrote|spent|sent|lost|won|sat|stood|heard|held|kept"
                   r"|slept|woke|swam|flew|drove|rode|broke|chose|spoke|forgot|became|brought|caught|taught|sold"
                   r"|built|paid|said|led|fell|grew|threw|wore|\w{2,}(?<!e)ed)\b")
_STATE = re.compile(r"(?:has|have)\b|(?:is|are|was|were) born\b")  # present perfect, birth: states, not events
_WEAK = frozenset("""euro dollar month monthly year week weekly day daily time first last every two three before after
    end start take make get one new old""".split())  # too common to tie a change to an older memory (rule 4)
_NEGATION = re.compile(r"\b(?:not|no longer|never|no more|any ?more|stopped|quit|gave up)\b|n't\b(?! stand)")
_NEGATIVE = re.compile(r"\b(?:dislikes|hates|detests|avoids|(?:can't|cannot) stand|does(?:n't| not) (?:like|enjoy))\b")
_PREFERS = re.compile(r"\b(?:prefers?|would rather) (?P<a>.+?) (?:over|to|than|rather than|instead of) (?P<b>.+)")
_NAME = re.compile(r"(?<!^)\b[\w'’-]*[A-ZÀ-ÞĀ-Ž][\w'’-]*|\d[\d,.]*")  # words with a capital ("iPhone"), numbers
_ADVERBS = re.compile(r"^(?:(?:(?:has|have|had)(?= (?:been|got|\w+ed|\w+en)\b)|doesn't|didn't|still|also|just|now"
                      r"|usually|often|always|never|mostly|no longer|not|been|only|really)\s+)+")
_COPULA = re.compile(r"(?:is|are|was|were)\b")
_FROM = re.compile(r"\bfrom\b.*?(?=\bto\b)|\breplaced\b.*?\bwith\b")  # "from Porto to Copenhagen": not Porto


@dataclass(frozen=True)
class _Clause:
    """One memory sentence as `relate()` reads it: its main clause, folded."""

    text: str  # the folded main clause
    subject: str  # "owner", or the person after "Owner's": "sister mira", "mother"
    relation: str  # as shown in reasons: a `_RELATIONS` key, "'s <noun phrase> <verb>", or the main verb
    topic: str  # what is compared: the key, "'s <noun phrase>", or the main verb
    functional: bool  # the relation holds one value at a time
    obj: str  # what follows the relation
    names: frozenset[str]  # words with a capital and numbers after the subject: what identifies the value
    numbers: frozenset[str]  # numbers of two digits or more
    past: bool  # the main verb is in the past tense: an event, not a state
    words: frozenset[str]  # tokens()
    change: str | None  # the change marker ("moved", "now"), if any
    negated: bool
    negative: bool  # a negative preference: dislikes, hates, can't stand, avoids


@lru_cache(maxsize=PARSED_CACHE)
def _parse(text: str) -> _Clause:
    """Subject, relation and object of one memory sentence, read from its main clause (rules: `relate()`)."""
    original = _THOUSANDS.sub("", _CLAUSE_END.split(text.strip().rstrip(".!?…。！？ "), maxsplit=1)[0])
    main = _fold(original)
    names = {part for n in _NAME.findall(original) for part in re.split(r"[-']", _fold(n).rstrip(",.")) if part}
    subject, rest = _subject(main, frozenset(names))
    relation, topic, functional, obj = _relation(rest, subject == "owner")
    value = _FROM.sub("", rest)
    names = {n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", value)} - {"owner", "s", *subject.split()}
    verb = re.sub(rf"^owner(?:'s [^,]*?(?=\b(?:{_VERB})\b)| and [\w-]+)?\s*", "", rest)
    past = bool(_PAST.match(_ADVERBS.sub("", verb))) and not _STATE.match(verb)
    change = _CHANGE.search(main)
    return _Clause(main, subject, relation, topic, functional, obj, frozenset(names),
                   frozenset(n for n in re.findall(r"\d+(?:\.\d+)?", main) if len(n) > 1), past,
                   tokens(main), change and (change.group(1) or change.group(0)), bool(_NEGATION.search(main)),
                   bool(_NEGATIVE.search(main)))


def _subject(main: str, names: frozenset[str]) -> tuple[str, str]:
    """("owner", main) or, for "owner's sister mira lives …", ("sister mira", "lives …")."""
    m = re.match(rf"owner's (?:[\w-]+ ){{0,2}}?({_KIN})\b(?: ([\w-]+)(?: ([\w-]+))?)?", main)
    if not m or main[m.end(1):].startswith(" is "):
        return "owner", main  # "Owner's girlfriend is Lena": an attribute of Owner
    person = [g for g in m.groups()[1:] if g and g in names]  # "sister Mira", "friend Kenji Watanabe"
    person = person[:1] if m.group(2) in person else []
    kin = _KIN_ALIAS.get(m.group(1), m.group(1))
    return " ".join([kin, *person]), main[m.end(len(person) + 1):].strip(" ,")


def _relation(text: str, owner: bool) -> tuple[str, str, bool, str]:
    """(relation, topic, single-valued, object) of `text`, the sentence after its subject: the earliest
    `_RELATIONS` match; else an attribute ("owner's glasses prescription is …": topic "'s glasses
    prescription", single-valued before a copula); else the first verb as read, "is" for a copula."""
    found = [(m, key, functional) for key, functional, p in _RELATIONS if (m := p.search(text))]
    if found:
        m, key, functional = min(found, key=lambda f: f[0].start())
        return key, key, functional, text[m.end():].strip(" ,") or m.group(0)
    if attribute := re.match(r"(?:owner)?'s ", text):
        np = text[attribute.end():]
        if end := _NP_END.search(np):
            head = _QUALIFIER.sub("", _ADJECTIVES.sub("", np[:end.start()])).strip() or np.split()[0]
            return f"'s {head} {end.group(0)}", f"'s {head}", bool(_COPULA.match(end.group(0))), np[end.end():]
        return f"'s {np.split()[0]}", f"'s {np.split()[0]}", False, np
    if owner:
        text = re.sub(r"^owner (?:and [\w-]+ )?", "", text)
    verb, _, obj = _ADVERBS.sub("", text.strip(" ,")).partition(" ")
    verb = "is" if _COPULA.fullmatch(verb) else _stem(verb)
    return verb, verb, False, obj.strip(" ,")


def relate(new: str, old: str) -> Relation:
    """How memory `new` relates to the older memory `old` of the same owner (two third-person sentences).
    Pure and read-only; never raises on odd text (other languages, emoji, empty strings).

    The caller has found the pair close already (cosine >= ~0.75, or the same subject); this picks what to do
    (seed 003, "Capturing": update a near-duplicate in place, supersede a contradicted fact), because similarity
    cannot (LIBRARY_NOTES §8). Each sentence is read from its main clause (cut at ", which", "after",
    "because", "since", "when", ";" …) as subject, relation and object. Subject: Owner, or the person in
    "Owner's sister Mira …". Relation: the earliest match in `_RELATIONS` ("lives in", "works as/at", "'s
    manager is", "earns", "pays rent", "is vegetarian/vegan", "is dating", "uses a phone", "drives", "codes in"
    hold one value at a time; "prefers", "likes", "is allergic to", "has visited", "knows", "bought", "read"
    add up); else an attribute ("Owner's glasses prescription is …", one value before a copula); else the main
    verb as read (values add up). The value is told by its words with a capital and its numbers, then by its
    other words; one value containing the other ("Berlin" / "Berlin-Neukölln") is the same value.

    Rules, first match wins; 1-5 need the same subject:
    1. same single-valued relation, different value -> contradiction ("Lisbon" -> "Berlin", 92,000 -> 99,000,
       vegetarian -> vegan, dating Sofia -> broke up, "staff engineer" -> "tech lead"); in "from X to Y" and
       "replaced X with Y" the value is Y.
    2. negation flip on the same relation ("is vegetarian" / "is no longer vegetarian") -> contradiction.
    3. opposite preference about a shared word ("loves olives" / "hates olives"), or "prefers A over B"
       turned round -> contradiction.
    4. a change marker in the new sentence ("moved", "now", "switched", "no longer", "quit", "left", "started",
       "became", "stopped", "replaced", "sold", "rose to", "Owner's new …"), the old one a state (not an
       event in the past tense), the relations not two different ones of the table, and a tie: the same
       attribute, the old value named again ("sold the Renault Clio"), or a lowercase content word of the new
       sentence (not in `_WEAK`) found in the old one by its first five letters ("climbs" / "Climbing") ->
       contradiction. Not when rules 1-3 already compared the same relation ("now likes techno").
    5. the same relation adding up, objects without a common word ("likes jazz" / "likes techno") ->
       unrelated; the same single-valued relation and value -> duplicate (a refinement); two different
       single-valued relations ("'s password manager" / "'s manager is") -> unrelated.
    6. two different people; Owner and a person in the same relation, or whom the Owner sentence does not
       name -> unrelated. Both sentences with numbers of 2+ digits, none shared -> unrelated (other dates).
    7. `token_jaccard` >= `DUPLICATE_JACCARD`, or >= `EVENT_JACCARD` when either tells a past event ("has
       finished" and "was born" are states) -> duplicate (a paraphrase); else unrelated.
    Text in other languages matches no table relation: it gets rules 5-7 (by its first word as the verb).
    Measured on eval/memories.jsonl by tests/test_capture_rules.py.
    """
    a, b = _parse(new), _parse(old)
    if _same_subject(a, b):
        if reason := _contradiction(a, b):
            return Relation("contradiction", reason)
        ta, tb = tokens(a.obj), tokens(b.obj)
        if a.topic == b.topic and not a.functional and ta and tb and not ta & tb:
            return Relation("unrelated", f"additive relation '{_show(b)}': '{_cut(b.obj)}' and '{_cut(a.obj)}' both"
                                         " hold")
        if (a.functional or b.functional) and _same_topic(a, b):
            return Relation("duplicate", f"same subject and relation '{_show(b)}', same object: '{_value(b)}' →"
                                         f" '{_value(a)}'")
        if a.functional and b.functional:
            return Relation("unrelated", f"different relations: '{_show(b)}' / '{_show(a)}'")
    elif "owner" not in (a.subject, b.subject) or a.topic == b.topic or not _names_other(a, b):
        return Relation("unrelated", f"different subjects: '{_show(b)}' / '{_show(a)}'")
    if a.numbers and b.numbers and not a.numbers & b.numbers:
        return Relation("unrelated", f"different numbers: {', '.join(sorted(b.numbers))} / "
                                     f"{', '.join(sorted(a.numbers))}")
    jaccard, bar = token_jaccard(new, old), EVENT_JACCARD if a.past or b.past else DUPLICATE_JACCARD
    if jaccard >= bar:
        return Relation("duplicate", f"same statement in other words (token Jaccard {jaccard:.2f} >= {bar})")
    return Relation("unrelated", f"no rule applies (token Jaccard {jaccard:.2f} < {bar})")


def _contradiction(a: _Clause, b: _Clause) -> str | None:
    """Rules 1-4 of `relate()` for new `a` and old `b` of the same subject: the reason, or None."""
    same = _same_topic(a, b)
    if same and (a.functional or b.functional) and _differs(a, b):
        return f"same subject '{_show(b)}', different object: '{_value(b)}' → '{_value(a)}'"
    if same and a.negated != b.negated and (a.functional or tokens(a.obj) & tokens(b.obj)):
        return f"negation flip on '{_show(b)}': '{_cut(b.text)}' → '{_cut(a.text)}'"
    if a.topic == b.topic == "likes" and a.negative != b.negative and (shared := tokens(a.obj) & tokens(b.obj)):
        return f"opposite preference about '{' '.join(sorted(shared))}'"
    pa, pb = _PREFERS.search(a.text), _PREFERS.search(b.text)
    if pa and pb and _overlap(pa["a"], pb["b"]) and _overlap(pa["b"], pb["a"]):
        return f"preference turned round: '{_cut(b.obj)}' → '{_cut(a.obj)}'"
    keyed = a.topic in _KEYS and (a.topic not in _ADDITIVE or b.topic in _KEYS)  # "earns" vs "works as/at"
    compared = same and (a.functional or b.functional or a.topic in _ADDITIVE)  # rules 1-3 have had their say
    if a.change and not b.past and not keyed and not compared and (tie := _tie(a, b)):
        return f"change marker '{a.change}' on the same topic ({tie})"
    return None


def _same_subject(a: _Clause, b: _Clause) -> bool:
    """Owner and Owner, or one person: the same name ("partner lena" / "girlfriend lena"), else the same kin."""
    if a.subject == b.subject:
        return True
    if "owner" in (a.subject, b.subject):
        return False
    sa, sb = a.subject.split(), b.subject.split()
    return sa[1:] == sb[1:] if len(sa) == len(sb) == 2 else sa[0] == sb[0]


def _names_other(a: _Clause, b: _Clause) -> bool:
    """Whether the sentence about Owner names the other person ("Claire", else "nephew")."""
    person, owner = (a, b) if a.subject != "owner" else (b, a)
    return person.subject.split()[-1] in owner.text.split() or bool(tokens(person.subject) & owner.words)


def _same_topic(a: _Clause, b: _Clause) -> bool:
    """The same relation, or attributes of which one ends the other ("'s rapid rating" / "'s lichess rapid
    rating")."""
    if a.topic == b.topic:
        return True
    short, long = sorted((a.topic, b.topic), key=len)
    return short.startswith("'s ") and long.startswith("'s ") and long.endswith(" " + short[3:])


def _differs(a: _Clause, b: _Clause) -> bool:
    """Whether two values of one single-valued relation differ (rule 1 of `relate()`)."""
    if a.topic == "is vegetarian/vegan":
        return bool(_diets(a) and _diets(b)) and _diets(a) != _diets(b)
    if a.topic == "is dating" and bool(_ENDED.search(a.text)) != bool(_ENDED.search(b.text)):
        return True
    if a.names and b.names and not (a.names <= b.names or b.names <= a.names):
        return True
    ta, tb = (tokens(c.obj) - {_stem(n) for n in c.names} for c in (a, b))
    return bool(ta and tb) and not ta & tb  # "tech lead" / "staff engineer"


def _diets(c: _Clause) -> frozenset[str]:
    return frozenset(label for word, label in _DIETS if re.search(rf"\b{word}", c.text))


def _tie(a: _Clause, b: _Clause) -> str:
    """What ties the change in `a` to the older state `b` (rule 4 of `relate()`), "" when nothing does."""
    if a.topic.startswith("'s ") and _same_topic(a, b):
        return f"same attribute '{a.topic[3:]}'"
    for x, y in ((a, b), (b, a)):
        if y.topic.startswith("'s ") and y.topic.split()[-1] in x.words:
            return f"'{y.topic.split()[-1]}' in both"
    if a.change in _ENDING and b.functional and b.topic in _KEYS and (shared := a.names & b.names):
        return f"the old value named again: {', '.join(sorted(shared))}"
    skip = {_stem(n) for n in a.names} | _WEAK | tokens(f"{a.change} {a.subject}")
    ours = {w[:5]: w for w in a.words - skip if not w.isdigit()}
    if a.topic == b.topic:
        ours.pop(a.topic[:5], None)  # the same verb alone ("now uses X" / "uses Y") is no tie
    shared = sorted({ours[w[:5]] for w in b.words - tokens(b.subject) if w[:5] in ours})
    return f"shared words: {', '.join(shared)}" if shared else ""


def _overlap(x: str, y: str) -> bool:
    return bool({w[:5] for w in tokens(x)} & {w[:5] for w in tokens(y)})


def _show(c: _Clause) -> str:
    subject = "Owner" if c.subject == "owner" else f"Owner's {c.subject}"
    return f"{subject}{c.relation}" if c.relation.startswith("'") else f"{subject} {c.relation}"


def _value(c: _Clause) -> str:
    return "/".join(sorted(_diets(c))) if c.topic == "is vegetarian/vegan" else _cut(c.obj)


def _cut(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"
