"""The slot of a fact: a `(subject, attribute)` address such as ("owner", "home") or ("owner's sister", "home"),
so that recall can rank the newest value of a slot above the older ones (issue 16's direction, after a project
that measured stale answers 0.000 with slots against 0.838 with similarity thresholds over ten simulated years).

Recall reads slots through one small interface, `SlotOf = Callable[[str], Slot | None]`, so the rule that decides
them can be swapped (capture deciding a slot when it stores a memory is the better place; this module's
`slot_of` is the stand-in recall uses until then). It reads the sentence only:

- the subject is who the memory is about: "owner", or a person of the owner's ("owner's sister" in "Owner's
  sister Mira lives in Porto."), or a named person ("lena" in "Lena works at Zalando."), case-folded;
- the attribute is the first family of `ATTRIBUTES` whose cue words the first words after the subject hold
  (`CUE_WORDS`; "lives", "moved to", "address" → home; "works as", "employed", "job" → work; …): kinds of
  personal fact that change over a life, with cue words in English and a few in German, French, Spanish and
  Portuguese;
- None for what has no slot: an episode told in the first person or as a chat turn ("Caroline: I went …",
  "I moved …"), a sentence without a cue word, an empty text.

Pure and cheap (one regex search per family); no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Slot = tuple[str, str]
SlotOf = Callable[[str], "Slot | None"]

ATTRIBUTES: dict[str, str] = {
    "home": r"lives?|living|lived|moved\s+(?:to|into|in|from|with|back)|address|wohnt|habite|vive|mora",
    "work": r"works?\s+(?:as|at|for)|working\s+(?:as|at|for)|employed|employer|job|started\s+(?:as|at)|joined"
            r"|position|title|tech\s+lead|team\s+lead|arbeitet|travaille|trabaja|trabalha",
    "manager": r"manager|reports?\s+to|boss|supervisor|chef(?:in)?",
    "partner": r"dating|girlfriend|boyfriend|partner|married|wife|husband|relationship|broke\s+up|engaged|fiancée?",
    "diet": r"vegetarian|vegan|pescatarian|eats?\s+(?:meat|fish|everything)|eating\s+(?:meat|fish)|diet",
    "rent": r"rent|miete|loyer|alquiler|renda",
    "salary": r"salary|earns?|income|gehalt|salaire|sueldo|salário",
    "phone": r"phone|smartphone|handy|iphone|pixel\s*\d|galaxy\s+s\d+",
    "computer": r"laptop|computer|macbook|thinkpad|notebook",
    "car": r"car|drives|vehicle|auto|voiture|coche|carro",
    "editor": r"editor|ide|neovim|vim|emacs|vs\s*code",
    "language": r"(?:german|french|spanish|english|portuguese|italian|japanese|chinese)\s+(?:is|level)"
                r"|\b[abc][12]\b|goethe|delf|dele",
    "doctor": r"doctor|gp|physician|hausarzt|médecin|médico",
    "dentist": r"dentist|zahnarzt|dentiste|dentista",
    "therapist": r"physiotherap\w*|physio|therapist|psycholog\w*",
    "gym": r"gym|bouldering|boulders|climbs|climbing\s+(?:gym|hall)|fitness\s+studio",
    "school": r"school|university|studies|studying|enrolled|kita|kindergarten",
    "insurance": r"insurance|insurer|versicherung|krankenkasse",
    "bank": r"bank\s+account|banks\s+with|\bbank\b",
}
"""Kinds of personal fact a newer statement replaces, with their cue words (regular expressions, case-folded)."""
_CUES = [(name, re.compile(rf"\b(?:{rx})\b")) for name, rx in ATTRIBUTES.items()]
CUE_WORDS = 6
"""A cue counts only among the first this many words after the subject, before a comma: a fact names its
attribute there ("Owner now does knee physiotherapy …"); a cue further on is a detail ("… an invoice from
Techniker Krankenkasse for dental cover" is a file, not the owner's insurance)."""
PEOPLE = frozenset("""sister brother mother father mum mom dad parents parent partner girlfriend boyfriend wife husband
    son daughter child kids children cousin aunt uncle niece nephew grandmother grandfather grandma grandpa friend
    colleague neighbour neighbor landlord flatmate roommate cat dog""".split())
"""Relations whose own facts have their own slots ("Owner's sister … lives" is not where the owner lives)."""
_CHAT_TURN = re.compile(r"^[^\s:]{1,40}(?:\s[^\s:]{1,40})?:\s")
_FIRST_PERSON = re.compile(r"^(?:i|we|i'm|i've|we're|my|our)\b")


def subject_of(sentence: str) -> str | None:
    """Who a third-person memory is about, case-folded: "owner", "owner's sister", "lena"; None for an empty text,
    a chat turn ("Caroline: …") or a first-person sentence ("I moved …")."""
    text = sentence.strip().casefold().replace("’", "'")
    if not text or _CHAT_TURN.match(text) or _FIRST_PERSON.match(text):
        return None
    words = text.split()
    head = words[0].strip(",.;")
    if head.endswith("'s") and len(words) > 1 and words[1].strip(",.;") in PEOPLE:
        return f"{head} {words[1].strip(',.;')}"
    return head.removesuffix("'s")


def slot_of(sentence: str) -> Slot | None:
    """`(subject, attribute)` of a memory (module docstring), or None when it has no slot. Pure."""
    subject = subject_of(sentence)
    if subject is None:
        return None
    text = sentence.casefold().replace("’", "'")
    if " " in subject:  # "owner's sister …": look for the attribute after the relation word
        text = text.split(subject.split()[1], 1)[1]
    else:
        text = text.split(None, 1)[1] if " " in text.strip() else ""
    text = " ".join(re.split(r"[,;]", text, maxsplit=1)[0].split()[:CUE_WORDS])
    for name, cue in _CUES:
        if cue.search(text):
            return subject, name
    return None
