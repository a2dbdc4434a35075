"""What `twin forget --about TEXT` counts as a mention of a person or thing (README "Forgetting").

The rule, in two parts:

1. **The whole of it**: the words of TEXT in order, as a phrase (case, accents, spacing and punctuation between
   the words ignored, as the full-text index reads them): "ana souza" finds "Ana Souza's clinic" and "ANA SOUZA".
2. **A part of a name**: a name (TEXT with two or more capitalised words) is also mentioned by each of its parts
   alone, the words written with a capital and at least two letters, titles aside ("Dr.", "Frau"): "Ana Souza" is
   mentioned by "Ana sent me the invoice." and "Dr. Souza said my teeth are fine.". A part counts only as a name
   (capitalised where it stands: "the ana bus" does not count), and not where it belongs to someone else's
   name: a part directly followed (a first part) or preceded (a last part) by another capitalised word that is
   not sentence-initial, a title, a weekday or a month ("Ana Lima", "Carlos Souza") is someone else.

Part matches are told apart (`Subject.match` says which part), so a dry run can list what a first name alone
would take. Text with one word, or written without capitals ("the blue boat"), has no parts: only rule 1.
Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from twin.text.query_terms import STOPWORDS

_WORD = re.compile(r"[^\W_]+")
"""A word as FTS5's unicode61 tokenizer cuts it: letters and digits (underscore and punctuation separate)."""
_SENTENCE_END = re.compile(r"[.!?:;\n\"“”«»()\[\]]")
TITLES = frozenset("""dr mr mrs ms mx miss prof sir dame lady lord rev fr hr herr frau sr sra srta dra don dona dom
    mme mlle monsieur madame signor signora sig uncle aunt tante onkel grandma grandpa granny captain capt""".split())
"""Words that may stand before a surname without making it someone else's name (folded, without the dot)."""
CALENDAR_WORDS = frozenset("""monday tuesday wednesday thursday friday saturday sunday january february march april
    may june july august september october november december montag dienstag mittwoch donnerstag freitag samstag
    sonntag januar februar marz juni juli oktober dezember lundi mardi mercredi jeudi vendredi samedi dimanche""".split())
"""Capitalised words next to a name part that are not names ("on Monday Souza called"), folded."""


def fold(word: str) -> str:
    """`word` case-folded with its accents removed (NFKD, combining marks dropped), as the full-text index
    compares words (`remove_diacritics 2`)."""
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


@dataclass(frozen=True)
class Mention:
    """One text's match: `whole` when the whole subject is named, else the `parts` named alone (as TEXT writes
    them)."""

    whole: bool
    parts: tuple[str, ...] = ()


class Subject:
    """The person or thing of `forget --about TEXT` (rules in the module docstring); with `parts` False only the
    whole of it counts (`twin forget --whole`). Raises `ValueError` when TEXT has no letter or digit (it would
    match nothing, or everything), or only function words and "Owner" (`query_terms.STOPWORDS`: `--about the`
    would have forgotten 420 of 490 memories)."""

    def __init__(self, text: str, parts: bool = True):
        words = [m[0] for m in _WORD.finditer(text)]
        if not words:
            raise ValueError("--about needs a word to look for")
        if all(fold(w) in STOPWORDS | {"owner"} for w in words):  # "the", "my", "Owner": nearly every memory
            raise ValueError(f"--about {' '.join(text.split())[:60]!r} names no person or thing (only words nearly "
                             "every memory holds); name who or what to forget")
        self.text = " ".join(text.split())
        self.words = tuple(fold(w) for w in words)
        self._raw = tuple(words)
        capitalised = [i for i, w in enumerate(words) if w[0].isupper() and len(w) >= 2
                       and fold(w) not in TITLES]
        named = parts and len(capitalised) >= 2
        self.parts = tuple(dict.fromkeys(self.words[i] for i in capitalised)) if named else ()
        self._places = {self.words[i]: i for i in capitalised}
        self._written = {self.words[i]: words[i] for i in capitalised}

    def fts_query(self) -> str:
        """An FTS5 query for the candidates: the phrase, or any part (`"ana souza" OR "ana" OR "souza"`); `match`
        decides."""
        written = [self._written[p] for p in self.parts]  # FTS5 folds the query as it folds the memories
        return " OR ".join(f'"{w}"' for w in (" ".join(self._raw), *written))

    def match(self, text: str) -> Mention | None:
        """How `text` mentions the subject: the whole of it, its parts alone, or None."""
        found = list(_WORD.finditer(text))
        folded = [fold(m[0]) for m in found]
        n = len(self.words)
        if any(folded[i:i + n] == list(self.words) for i in range(len(folded) - n + 1)):
            return Mention(True)
        named = tuple(dict.fromkeys(self._written[folded[j]] for j in range(len(found))
                                    if folded[j] in self.parts and self._is_this_name(found, folded, j)))
        return Mention(False, named) if named else None

    def mentions(self, text: str) -> bool:
        """True when `text` mentions the subject at all (`match` is not None)."""
        return self.match(text) is not None

    def _is_this_name(self, found: list[re.Match], folded: list[str], j: int) -> bool:
        """True when word `j` of the text (a part of the subject's name) is written as a name and does not belong
        to someone else's: capitalised, and not joined by a space to another capitalised word on a side where
        the subject's name goes on."""
        if not found[j][0][0].isupper():
            return False
        place = self._places[folded[j]]
        if place + 1 < len(self.words) and j + 1 < len(found) and self._other_name(found, folded, j, j + 1):
            return False
        return not (place > 0 and j > 0 and self._other_name(found, folded, j - 1, j, left=True))

    def _other_name(self, found: list[re.Match], folded: list[str], a: int, b: int, left: bool = False) -> bool:
        """True when words `a` and `b` (adjacent) are joined by spaces only and the one that is not the subject's
        part (`a` when `left`, else `b`) is a capitalised word of another name: not one of the subject's words, a
        title, a weekday or a month, and (on the left) not the first word of a sentence."""
        gap = found[b].string[found[a].end():found[b].start()]
        other = a if left else b
        word = found[other][0]
        if gap.strip() or not word[0].isupper() or folded[other] in self.words or folded[other] in TITLES \
                or folded[other] in CALENDAR_WORDS:
            return False
        if left:
            before = found[other].string[found[other - 1].end():found[other].start()] if other > 0 else "."
            return not _SENTENCE_END.search(before)
        return True
