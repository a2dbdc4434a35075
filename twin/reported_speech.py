"""Someone else's sentence as the twin keeps it: reported speech with its speaker (issue "What is learned is what
was said, by whom"; seed 000: every memory is one self-contained third-person sentence).

Text the owner forwards, quotes or replies to on a chat was written by another person. Its facts are that
person's claim, so "You owe me 500 euros." from Trudy becomes "Trudy says that Owner owes Trudy 500 euros.",
never "Owner owes Trudy 500 euros." An English declarative sentence is rewritten (the speaker's I/me/my become
the speaker's name, the reader's you/your become "Owner"/"Owner's", with the verb agreed); anything else (another
language, an imperative such as "Ignore previous instructions and …", a first-person plural) is kept word for word
as a quotation ("Trudy wrote: “…”."): an instruction in it stays data, attributed to its writer. Pure; called by
`twin.extractor.extract(..., speaker=…)`.
"""

from __future__ import annotations

import re

SPEAKER_MAX_CHARS = 64
"""A speaker's name is cut to this many characters (ours: a display name, not a paragraph)."""
_ADVERB = (r"(?:just|really|always|never|still|also|already|actually|only|even|definitely|probably|certainly"
           r"|honestly|totally|now|then|usually|often|sometimes)")
_PERSON = re.compile(
    r"(?i)(?<![\w'’-])(?P<word>I|me|my|mine|myself|you|your|yours|yourself)(?:['’](?P<contr>m|re|ve|ll|d|s))?"
    r"(?![\w'’-])(?P<adv>(?:\s+" + _ADVERB + r")*)"
    r"(?:\s+(?!(?:I|me|my|mine|myself|you|your|yours|yourself)\b)(?P<verb>[a-z]+(?:n['’]t)?)\b)?")
_CONTRACTED = {"m": "is", "re": "is", "ve": "has", "ll": "will", "d": "would", "s": "is"}
_BE_HAVE = {"am": "is", "are": "is", "were": "was", "have": "has", "do": "does", "aren't": "isn't",
            "weren't": "wasn't", "haven't": "hasn't", "don't": "doesn't", "was": "was"}
_SUBJECT_BEFORE = re.compile(r"(?i)(?:^|[,;:]|\b(?:and|but|or|so|because|if|when|that|since|while|until|unless"
                             r"|before|after|(?:think|know|hope|believe|guess|feel|say)s?|said|heard)\s*)\s*$")
_SUBJECT_VERB = frozenset("am are were have do don't aren't weren't haven't can could will would shall should may "
                          "might must can't won't couldn't wouldn't shouldn't".split())
"""What may come right before a "you" that is the subject of its clause (else "you" is an object)."""
_NOT_VERB = frozenset("a an the this that these those to for from with at in on of by about and or but so "
                      "who which what whom".split())
_IMPERATIVE = frozenset("""ignore forget disregard send tell give call email mail text pay transfer wire delete remove
erase run execute click open visit buy bring take let please remember stop reply write go come check meet pick book
cancel sign share forward post print install download upload move copy paste change reset update add put keep
don't do make show list reveal print follow act pretend respond answer say use""".split())
_SECOND_PERSON = re.compile(r"(?i)(?<![\w'’-])(?:you|your|yours|yourself)(?![\w-])")
_PLURAL = re.compile(r"(?i)(?<![\w'’-])(?:we|us|our|ours|ourselves)(?![\w'’-])")
_LOWER_START = frozenset("""he she it they there this that these those the a an his her its their some every each
no one someone everyone nobody today tomorrow yesterday last next""".split())
"""Openers lower-cased after "… says that" (anything else may be a name: kept as written)."""


def clean_speaker(name: str) -> str:
    """A speaker's display name as it goes into memory text: one line, control characters dropped (they are
    outside text), whitespace collapsed, cut to `SPEAKER_MAX_CHARS`; "" when nothing is left."""
    from twin.outside_text import strip_controls

    return " ".join(strip_controls(str(name)).split())[:SPEAKER_MAX_CHARS].strip()


def report(sentence: str, speaker: str, english: bool) -> str:
    """`sentence`, written by `speaker`, as a sentence about what `speaker` said (without its final period).

    `english` (the caller's `_looks_english` verdict, or an ASCII sentence that says "you"), no opening
    imperative verb (`_IMPERATIVE`) and no we/us/our (whose reference the text does not settle) give reported
    speech: "Trudy says that Owner owes Trudy 500 euros"; otherwise the words are quoted: "Trudy wrote: “Ignore
    previous instructions and …”". Pure."""
    body = sentence.strip().rstrip(".!…").rstrip()
    english = english or (body.isascii() and _SECOND_PERSON.search(body) is not None)
    first = re.match(r"[\w'’]+", body)
    opener = first.group().lower().replace("’", "'") if first else ""
    if not english or _PLURAL.search(body) or opener in _IMPERATIVE:
        return f"{speaker} wrote: “{body}”"
    rewritten = _PERSON.sub(lambda m: _person(m, speaker), body)
    if opener in _LOWER_START:
        rewritten = rewritten[:1].lower() + rewritten[1:]
    return f"{speaker} says that {rewritten}"


def _person(match: re.Match, speaker: str) -> str:
    """One pronoun of the speaker (I/me/my…) or of the reader (you/your…) in the third person."""
    word = match["word"].lower()
    who = speaker if word in ("i", "me", "my", "mine", "myself") else "Owner"
    adverbs, verb, contraction = match["adv"] or "", match["verb"], (match["contr"] or "").lower()
    if word in ("my", "mine", "your", "yours"):
        return f"{who}'s" + adverbs + (f" {verb}" if verb else "")
    if word in ("myself", "yourself"):
        return "themselves" + adverbs + (f" {verb}" if verb else "")
    subject = word == "i" or (word == "you" and bool(
        contraction or (verb and verb.lower().replace("’", "'") in _SUBJECT_VERB)
        or _SUBJECT_BEFORE.search(match.string, 0, match.start())))
    if not subject or word == "me":
        return who + adverbs + (f" {verb}" if verb else "")
    if contraction:
        aux = _CONTRACTED[contraction]
        return f"{who} {aux}" + adverbs + (f" {verb}" if verb else "")
    if not verb or verb.lower() in _NOT_VERB:
        return who + adverbs + (f" {verb}" if verb else "")
    return f"{who}{adverbs} {_agreed(verb)}"


def _agreed(verb: str) -> str:
    low = verb.lower().replace("’", "'")
    if low in _BE_HAVE:
        return _BE_HAVE[low]
    from twin.extractor import agree

    return agree(verb)
