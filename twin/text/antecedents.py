"""Pronouns resolved against the text they came from, so a memory stands alone (seed 000).

"My brother Tom is annoying. He never listens to me." gives "Tom never listens to Owner.", not "He never listens
to Owner."; "I have a dog. Her name is Biscuit." gives "Owner's dog's name is Biscuit.". `Antecedents` reads a
text's sentences in order (after the first-person rewrite): each sentence adds the people, animals and things it
names (`observe`), and a sentence whose first third-person pronoun comes before anything it could refer to gets
that pronoun replaced by the last mention of the right kind (`resolve`): he/she -> the last person or animal of
that gender or of unknown gender; they -> the last group; it -> the last animal or thing (a place is never "it":
"It was a great trip" after "Owner went to Rome" is about the trip). With no such mention the sentence cannot
stand alone, and `resolve` returns None (the extractor drops it and says why). German er/sie and French il/elle
opening a sentence are resolved the same way. Rules ours; tests/test_antecedents.py. Linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_MENTIONS", "Antecedents", "Mention"]

MAX_MENTIONS = 32
"""Mentions kept (the latest): a pronoun refers to something named a few sentences before, and the bound keeps
reading linear in the text's length (ours)."""

_FEMALE = ("sister mother mom mum wife girlfriend daughter aunt niece grandmother grandma fiancee fiancée"
           " stepmother stepsister granddaughter queen lady woman girl Schwester Mutter Mama Frau Freundin Tochter"
           " Tante Nichte Oma Großmutter Chefin Kollegin Nachbarin sœur mère maman femme copine fille tante nièce"
           " grand-mère amie voisine collègue")
_MALE = ("brother father dad husband boyfriend son uncle nephew grandfather grandpa fiance stepfather stepbrother"
         " grandson king man boy Bruder Vater Papa Mann Freund Sohn Onkel Neffe Opa Großvater Chef Kollege Nachbar"
         " frère père papa mari copain fils oncle neveu grand-père ami voisin")
_NEUTRAL = ("partner friend colleague coworker boss manager neighbour neighbor cousin kid child baby flatmate"
            " roommate teacher doctor dentist therapist landlord landlady coach trainer")
_GROUPS = ("parents kids children friends colleagues brothers sisters grandparents in-laws neighbours neighbors"
           " cousins twins daughters sons Eltern Kinder Freunde Kollegen parents enfants amis collègues")
_ANIMALS = ("dog cat puppy kitten rabbit hamster parrot horse bird fish turtle tortoise guinea pig pony budgie"
            " Hund Katze Kater Hase Pferd Vogel chien chat chatte chiot lapin cheval oiseau")
_GENDER = {w.lower(): "f" for w in _FEMALE.split()} | {w.lower(): "m" for w in _MALE.split()}
_FEMALE_NAMES = frozenset(
    "anna ana maria marie sophie sofia emma mia lea lena laura sara sarah julia lisa hannah clara claire chloe"
    " olivia emily amelia isabella ella grace lucy alice eva nina elena mei yuki priya fatima aisha zoe leonie"
    " charlotte camille manon ines louise jade lina paula katja petra sabine monika ursula birgit heike natalie"
    " jessica jennifer linda susan karen nancy lisa betty helen sandra donna carol ruth sharon michelle amy kate"
    " rachel rebecca megan hanna jana marta carmen lucia".split())
_MALE_NAMES = frozenset(
    "tom thomas john james david michael peter paul mark luke jonas lukas leon felix max moritz ben finn noah"
    " liam lucas louis hugo jules arthur karim ahmed ali omar raj ken hiroshi wei carlos pedro juan diego marco"
    " luca matteo stefan andreas markus michael daniel jan tim tobias florian sebastian alexander robert william"
    " richard joseph charles george henry jack harry oliver oscar sam adam ryan kevin brian eric steve frank"
    " karl klaus jürgen hans pierre jean nicolas antoine oskar".split())
_NOT_NAMES = frozenset(
    "the a an this that these those it he she they we i my our his her their its owner owner's and but or so"
    " then also yesterday today tomorrow last next on in at for to from with after before when while if because"
    " monday tuesday wednesday thursday friday saturday sunday january february march april may june july august"
    " september october november december english german french spanish italian chinese japanese christmas"
    " easter der die das ein eine er sie es wir ich und aber le la les un une il elle ils elles et mais".split())
_PLACE_PREPS = frozenset("in to from at near via visit visited visiting nach aus à en de vers depuis".split())
_WORD = re.compile(r"[A-ZÀ-ÖØ-Þ][\w'’-]*|[\w'’-]+")
_RELATION = re.compile(
    r"\b(?P<owner>Owner's|Owners|d'Owner|their)\s+(?:(?:little|big|older|younger|elder|best|new|old|eldest|youngest"
    r"|twin|step|kleine[rn]?|große[rn]?|ältere[rn]?|jüngere[rn]?|beste[rn]?)\s+)?(?P<rel>[\wäöüß-]+)"
    r"(?:\s+(?P<name>[A-Z][a-zäöüéèß]+))?")
_FR_RELATION = re.compile(r"\b(?P<art>[Ll]e|[Ll]a|[Ll]'|[Ll]es)\s*(?P<rel>[\wéèêçœ-]+)\s+d'Owner"
                          r"(?:,\s+(?P<name>[A-Z][a-zéèç]+))?")
_OBJECT = re.compile(r"\bOwner (?:has|had|got|bought|adopted|owns|found|rescued|hat|a)\s+(?:an?|einen?|eine|une?)\s+"
                     r"(?P<np>(?:[a-z]+\s+)?(?P<head>[a-zäöü]+|[A-Z][a-zäöü]+))"
                     r"(?:\s+(?:called|named|namens|nommée?)\s+(?P<name>[A-Z]\w+))?"
                     r"(?=\s*(?:[.,;!]|$)|\s+(?:and|in|at|for|from|with|that|which|called|named|last|on|und|et)\b)")
_NAME_IS = re.compile(r"(?P<subj>\S.*?)(?:'s| 's)\s+name\s+is\s+(?P<name>[A-Z]\w+)")
_EN_PRONOUN = re.compile(r"\b(?P<p>he|she|it|they|him|her|his|its|their|them|hers|theirs)\b", re.IGNORECASE)
_DE_FR_START = re.compile(r"^(?P<p>Er|Sie|Il|Elle|Ils|Elles)\b(?P<plural>\s+(?:sind|haben|waren|werden|wohnen)\b)?")


@dataclass
class Mention:
    """Something a text named: `text` how a memory names it ("Tom", "Owner's brother", "Owner's dog"), `kind`
    "person", "animal", "group", "thing", "place" or "name" (a capitalised word of unknown kind: "Twin", "Karim"),
    `gender` "f", "m" or None."""

    text: str
    kind: str
    gender: str | None = None


class Antecedents:
    """The mentions of one text, in reading order; `observe` each sentence after `resolve`-ing it."""

    def __init__(self) -> None:
        self.mentions: list[Mention] = []

    def observe(self, sentence: str, language: str | None = None) -> None:
        """Add the people, animals, groups and things `sentence` names, in order (`language` "de": capitalised
        nouns are not names)."""
        found: list[tuple[int, Mention]] = []
        for m in _RELATION.finditer(sentence):
            mention = _relation_mention(m["owner"], m.group()[:m.end("rel") - m.start()], m["rel"], m["name"])
            if mention is not None:
                found.append((m.start(), mention))
        for m in _FR_RELATION.finditer(sentence):
            rel = m["rel"].lower()
            if rel in _GENDER or rel in _GROUPS.lower().split():
                text = m["name"] or f"{m['art'].capitalize()}{'' if m['art'].endswith(chr(39)) else ' '}{rel} d'Owner"
                kind = "group" if rel in _GROUPS.lower().split() else "person"
                found.append((m.start(), Mention(text, kind, _GENDER.get(rel))))
        for m in _OBJECT.finditer(sentence):
            head = m["head"]
            if head.lower() in _ANIMALS.lower().split():
                text = m["name"] or (f"Owners {m['np']}" if language == "de" else f"Owner's {m['np']}")
                found.append((m.start(), Mention(text, "animal")))
            elif head.lower() not in _GENDER and head[:1].islower() and len(head) > 2 and m["np"].count(" ") <= 1:
                found.append((m.start(), Mention(f"Owner's {m['np']}", "thing")))
        # "Owner's dog's name is Biscuit": the dog is Biscuit now
        if " name " in sentence and (named := _NAME_IS.search(sentence)):
            for mention in [mention for _, mention in found] + self.mentions:
                if named["subj"].endswith(mention.text) and mention.kind in ("person", "animal"):
                    mention.text = named["name"]
        known = {mention.text for _, mention in found} | {m.text for m in self.mentions}
        found += self._names(sentence, known, language)
        self.mentions.extend(mention for _, mention in sorted(found, key=lambda pair: pair[0]))
        del self.mentions[:-MAX_MENTIONS]

    def _names(self, sentence: str, known: set[str], language: str | None) -> list[tuple[int, Mention]]:
        """Capitalised words that are not sentence openers, pronouns or calendar words: a person ("Tom called"),
        or a place after in/to/from/at."""
        out = []
        words = list(_WORD.finditer(sentence))
        for k, m in enumerate(words):
            if not m.group()[:1].isupper():
                continue
            word = re.sub(r"['’]s?$", "", m.group())
            if not word[:1].isupper() or word.lower() in _NOT_NAMES or word in known or len(word) < 2:
                continue
            if language == "de" and word.lower() not in _FEMALE_NAMES | _MALE_NAMES:
                continue  # German capitalises every noun
            if k == 0 and word.lower() not in _FEMALE_NAMES | _MALE_NAMES and (
                    len(words) < 2 or not words[1].group()[:1].islower()):
                continue
            before = words[k - 1].group().lower() if k else ""
            gender = _name_gender(word)
            kind = "place" if before in _PLACE_PREPS else "person" if gender else "name"
            out.append((m.start(), Mention(word, kind, gender)))
        return out

    def resolve(self, sentence: str, language: str | None = None) -> str | None:
        """`sentence` with its opening third-person pronoun (one before any name or noun it could refer to)
        replaced by the last mention of the right kind; `sentence` itself when it has no such pronoun; None when
        a pronoun refers to nothing named before."""
        m = _DE_FR_START.match(sentence) if language in ("de", "fr") else _dangling(sentence)
        if m is None:
            return sentence
        word = m["p"]
        target = self._find("they" if m.groupdict().get("plural") else word.lower(), language)
        if target is None:
            return None
        replacement = _form(word, target, sentence, m.end())
        start = m.start("p")
        out = sentence[:start] + replacement + sentence[m.end("p"):]
        return out[:1].upper() + out[1:]

    def _find(self, pronoun: str, language: str | None) -> Mention | None:
        """The last mention a pronoun may refer to (see the module docstring)."""
        if pronoun in ("he", "him", "his", "er", "il"):
            kinds, gender = ("person", "animal"), "m"
        elif pronoun in ("she", "her", "hers", "elle") or (pronoun == "sie" and language == "de"):
            kinds, gender = ("person", "animal"), "f"
        elif pronoun in ("they", "them", "their", "theirs", "ils", "elles"):
            kinds, gender = ("group",), None
        else:
            kinds, gender = ("animal", "thing"), None
        fallback = None
        for mention in reversed(self.mentions):
            if mention.kind in kinds and (gender is None or mention.gender == gender):
                return mention
            if fallback is None and (mention.kind in kinds or mention.kind == "name") and mention.gender is None \
                    and kinds != ("group",):
                fallback = mention  # of unknown gender, or a name of unknown kind: when nothing surer was named
        return fallback


def _relation_mention(owner: str, phrase: str, rel: str, name: str | None) -> Mention | None:
    """A mention for "Owner's (best) friend (Anna)": `phrase` without the name, its kind and gender by `rel`."""
    low = rel.lower()
    if owner == "their":
        phrase = "Owner's" + phrase[len("their"):]
    if low in _GENDER or low in _NEUTRAL.split():
        return Mention(name or phrase, "person", _GENDER.get(low) or _name_gender(name))
    if low in _GROUPS.lower().split():
        return Mention(phrase, "group")
    if low in _ANIMALS.lower().split():
        return Mention(name or phrase, "animal")
    return None


def _name_gender(name: str | None) -> str | None:
    low = (name or "").lower()
    return "f" if low in _FEMALE_NAMES else "m" if low in _MALE_NAMES else None


_EXPLETIVE_IT = re.compile(
    r"(?i)^it(?:['’]s|\s+is|\s+was|\s+will\s+be|\s+has\s+been)?\s+(?:(?:raining|snowing|sunny|cloudy|windy|foggy|cold"
    r"|hot|warm|freezing|dark|late|early|time|noon|midnight)\b|(?:looks|seems|feels|sounds|appears|takes|took|costs"
    r"|cost|turns out|turned out|rains|rained|snows|snowed)\b)|^it(?:['’]s|\s+is|\s+was)\s+(?:\w+\s+){0,2}?(?:to|that)"
    r"\b")
"""An "it" that refers to nothing: weather, time, "it looks like", "it is hard to…"."""


def _dangling(sentence: str) -> re.Match[str] | None:
    """The first English third-person pronoun of `sentence` when nothing before it could be its antecedent (no
    capitalised word but the first, no "Owner", no noun after a determiner), else None. An expletive "it"
    (`_EXPLETIVE_IT`) is none."""
    m = _EN_PRONOUN.search(sentence)
    if m is None or (m.start() == 0 and _EXPLETIVE_IT.match(sentence)):
        return None
    before = sentence[:m.start()]
    if m["p"].lower() not in ("they", "them", "their", "theirs"):
        before = before.replace("Owner's", "the").replace("Owner", "")  # Owner is "they" in a memory, never "she"
    words = before.split()
    if any(w[:1].isupper() for w in words[1:]) or "Owner" in before or re.search(
            r"(?i)\b(?:the|a|an|this|that|these|those|some|two|three)\s+\w", before):
        return None
    if words and words[0][:1].isupper() and words[0].lower().strip(",") not in _NOT_NAMES:
        return None  # "Tom said he…"
    return m


def _form(word: str, target: Mention, sentence: str, end: int) -> str:
    """The mention in the grammatical place of `word`: "his"/"their"/"its" -> "Tom's"; "her" before a noun too."""
    low = word.lower()
    text = target.text
    possessive = low in ("his", "its", "their", "hers", "theirs") or (low == "her" and _before_noun(sentence, end))
    if possessive:
        return text + ("s" if text.endswith("Owners") else "'s") if not text.endswith("s") else text + "'"
    return text


def _before_noun(sentence: str, end: int) -> bool:
    """True when the word after "her" at `end` reads as a noun it owns ("her name"), not the next phrase ("her a
    book", "her yesterday", "her.")."""
    following = re.match(r"\s+([a-z]+)", sentence[end:])
    return following is not None and following[1] not in (
        "a", "an", "the", "to", "and", "but", "or", "that", "this", "yesterday", "today", "tomorrow", "again",
        "about", "for", "with", "at", "in", "on", "from", "every", "last", "next", "so", "too", "back", "up", "out",
        "though", "very", "much", "anyway", "now", "when", "because", "if", "as", "more", "less", "most", "well",
        "all", "here", "there", "alone", "either", "really", "either", "after", "before", "since", "by", "over")
