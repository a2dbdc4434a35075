"""The automatic check that a memory is one self-contained third-person sentence (seed 000's contract).

`standalone_problem(content)` names what keeps a memory from standing alone, or None: it is how
bench/extraction_quality.py counts good memories, how the tests judge the extractor, and what a model-written
memory can be checked with before it is stored. The checks, in order (ours):

1. "first or second person": an English, German or French first- or second-person word (I, me, my, we, you,
   your…; ich, mir, mein…, du, dein…; je, moi, mon…, tu, ton, vous…), outside a quotation.
2. "no subject": the sentence opens with a conjunction (and, but, und, et…) or an English verb form with no
   subject before it ("Went to Rome.", "Loving the new job.").
3. "dangling pronoun": its first third-person pronoun comes before anything it could refer to ("He never
   listens to Owner.", "Sie ist Ärztin.", "Elle est infirmière."; `twin.text.antecedents`).
4. "relative date": a date that only the day of writing gave a meaning to (`twin.text.relative_dates`).
5. "verb agreement": "Owner" followed by a first-person form ("Owner donts like…", "Owner are", "Owner drink",
   "Owner bin", "Owner suis"), or a base verb joined to a present one ("Owner quit coffee and drink tea").
Pure, linear in the sentence.
"""

from __future__ import annotations

import re

from twin.text.antecedents import Antecedents
from twin.text.relative_dates import has_relative_date
from twin.text.third_person import _BASE_VERBS, _PRESENT_AS_IS, agree
from twin.text.third_person_de import third_singular as german_third_singular
from twin.text.third_person_fr import third_singular as french_third_singular

__all__ = ["standalone_problem"]

_QUOTED = re.compile(r"[\"“„«][^\"“”„«»]{0,400}[\"”“»]")
_FIRST_SECOND = re.compile(
    r"(?<![\w'’-])(?:I|(?i:me|my|mine|myself|we|us|our|ours|ourselves|you|your|yours|yourself|i'm|im|i've|ive"
    r"|i'd|i'll|we're|we've|you're|you've|ich|mich|mir|mein|meine[nmrs]?|wir|unser|unsere[nmrs]?|dich|dir"
    r"|dein|deine[nmrs]?|euch|euer|eure[nmrs]?|je|moi|mon|ma|mes|nous|notre|nos|tu|toi|ton|ta|tes|vous|votre"
    r"|vos|j['’]))(?![\w-])")
_GERMAN_DU = re.compile(r"(?i)(?<![\w'’-])du(?![\w-])")
"""German "du" (French "du" is "of the")."""
_OPENERS = frozenset("and but or so because then und aber oder denn weil et mais ou donc car".split())
_EN_VERB_START = re.compile(r"^(?:[A-Z][a-z]+(?:ing|ed)|Went|Got|Had|Was|Were|Am|Is|Are|Did|Do|Does|Have|Has)\b")
_OWNER_VERB = re.compile(r"\bOwner(?:\s+(?:really|never|always|also|still|just|often|usually|now|sometimes"
                         r"|nicht|nie|immer|auch|ne|n['’]))*\s+(?P<verb>[a-zäöüéèêß]+(?:n['’]t)?)(?![\w'’])")
_GLUED_S = frozenset("donts cants wonts didnts isnts wasnts doesnts havents".split())
"""A contraction written without its apostrophe and given an -s (the old rewrite's "Owner donts like…")."""
_EN_WRONG = frozenset("am are were have do don't dont donts haven't aren't weren't wanna gotta bin habe suis ai vais"
                      " peux veux sommes avons".split())


def standalone_problem(content: str) -> str | None:
    """What keeps `content` from being one self-contained third-person sentence (see the module docstring for
    the five reasons, e.g. "dangling pronoun: He"), or None when it passes every check."""
    plain = _QUOTED.sub(" ", content)
    language = _language(plain)
    for m in _FIRST_SECOND.finditer(plain):
        if not (m.group().lower() == "im" and language == "de"):  # German "im" is "in dem"
            return f"first or second person: {m.group()}"
    if language == "de" and (m := _GERMAN_DU.search(plain)) is not None:
        return f"first or second person: {m.group()}"
    words = plain.split()
    if not words:
        return "no subject"
    if words[0].lower().strip(",") in _OPENERS or (language is None and _EN_VERB_START.match(plain)):
        return f"no subject: {words[0]}"
    if Antecedents().resolve(plain, language) is None:
        return f"dangling pronoun: {_first_pronoun(plain)}"
    if has_relative_date(plain):
        return "relative date"
    return _agreement_problem(plain, language)


def _language(sentence: str) -> str | None:
    """"de" or "fr" when `sentence` reads as German or French ("Owner" counted as a first-person word)."""
    if _german_words(sentence):
        return "de"
    if _french_words(sentence):
        return "fr"
    return None


def _german_words(sentence: str) -> bool:
    return len(re.findall(r"(?i)\b(?:ist|hat|und|der|die|das|nicht|mit|ein|eine|seit|wohnt|sich|im|auf|für|bei)\b",
                          sentence)) >= 1 or re.search(r"[äöüß]", sentence) is not None


def _french_words(sentence: str) -> bool:
    return len(re.findall(r"(?i)(?:\b(?:est|et|le|la|les|des|une|du|au|pas|avec|chez|dans|pour|très)\b|\bd['’]Owner)",
                          sentence)) >= 1


def _first_pronoun(sentence: str) -> str:
    m = re.search(r"(?i)\b(?:he|she|it|they|him|her|his|its|their|them|er|sie|il|elle|ils|elles)\b", sentence)
    return m.group() if m else ""


def _agreement_problem(sentence: str, language: str | None) -> str | None:
    """"verb agreement: <verb>" when a verb after "Owner" keeps a first-person form (see the module docstring)."""
    for m in _OWNER_VERB.finditer(sentence):
        verb = m["verb"]
        low = verb.lower().replace("’", "'")
        if language == "de":
            fixed = german_third_singular(verb)
            wrong = fixed is not None and fixed != verb and not low.endswith(("t", "te"))
        elif language == "fr":
            fixed = french_third_singular(verb)
            wrong = low in ("suis", "ai", "vais", "peux", "veux", "sommes", "avons") or (
                low.endswith("ons") and fixed is not None)
        else:
            wrong = low in _EN_WRONG or low in _GLUED_S or (low in _BASE_VERBS and agree(verb) != verb)
        if wrong:
            return f"verb agreement: Owner {verb}"
    m = re.search(r"\bOwner\s+(?P<first>[a-z]+)\b[^,;:]*?\b(?:and|but|or)\s+(?P<verb>[a-z]+)\s+\w", sentence)
    present = m is not None and (m["first"].endswith("s") or m["first"] in _PRESENT_AS_IS) and m["first"] not in (
        "is", "was", "does", "has")
    if m and present and m["verb"].lower() in _BASE_VERBS and not re.search(
            r"(?i)\b(?:to|will|would|can|could|should|must|might|may|doesn't|didn't|not|never)\b",
            sentence[m.start():m.start("verb")]):
        return f"verb agreement: and {m['verb']}"
    return None
