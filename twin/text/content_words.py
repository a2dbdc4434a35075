"""Whether two memories say the same thing word for word, but for words that carry no content: the dream cycle's
last test before it merges a near-duplicate pair (`twin.lifecycle.cycle`).

Seed 003's merge bar (cosine ≥ 0.97 and token Jaccard ≥ 0.5) lets through two facts that differ in one content
word of a long sentence: "… send the signed rental contract … to the landlord by Friday." and "… to the
accountant by Friday." (Jaccard 0.8), and a merge deletes one of them. Two memories are the same only when every
word that differs is a function word (`twin.text.capture_rules.STOPWORDS`: articles, pronouns, prepositions),
an intensifier or hedge (`INTENSIFIERS`: "really likes" / "likes"), or another inflection of a word of the other
("likes" / "liked", "cities" / "city"). A person, a place, an object, a number or a name that differs keeps them
apart (ours).
"""

from __future__ import annotations

from twin.text.capture_rules import tokens

__all__ = ["INTENSIFIERS", "lemma", "same_content_words"]

INTENSIFIERS = frozenset("""
    really truly quite extremely absolutely definitely actually particularly especially highly deeply totally
    completely incredibly super pretty fairly rather somewhat genuinely certainly indeed simply seriously
    """.split())
"""Words that strengthen or soften a statement without changing what it is about (ours)."""

_NUMBER_WORDS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_SUFFIXES = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def lemma(word: str) -> str:
    """A crude common form of an English inflection, for comparing two words only: "likes", "liked", "liking"
    → "lik"; "cities", "city" → "city"; "stopped", "stops" → "stop"; a number word becomes its digits ("two" →
    "2"). A stem keeps at least 3 letters ("red", "bus" stay)."""
    word = _NUMBER_WORDS.get(word, word)
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + replacement
            break
    if len(word) > 3 and word[-1] == word[-2] and not word[-1].isdigit():
        word = word[:-1]  # "stopp" (stopped) -> "stop"
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def _content(text: str) -> frozenset[str]:
    """The lemmas of `text`'s content words (`tokens`: folded, stop words left out), intensifiers left out."""
    return frozenset(lemma(t) for t in tokens(text) if t not in INTENSIFIERS)


def same_content_words(a: str, b: str) -> bool:
    """True when `a` and `b` differ only in function words, intensifiers and inflections (see the module): the
    same lemmas of content words on both sides. "Owner really likes hiking." / "Owner likes hiking." → True;
    "… to the landlord …" / "… to the accountant …" → False; "… in Porto." / "… in Braga." → False;
    "2 cats" / "3 cats" → False. Read-only, never raises."""
    return _content(a) == _content(b)
