"""How long a sentence is, measured in what it says rather than in code points (seed 003's length floor, per script).

Seed 003's worthiness gate rejects a memory "< 12 chars" and seed 000 keeps sentences of "12-400 characters". Both
numbers were set on English, where 12 characters is two or three short words ("Owner is ok" is 11). Other
scripts carry far more per character: "我是素食者。" (Owner is vegetarian) is 6 code points. So a character counts
with the weight of its script: how many English characters it takes, on the median, to say what one character of
that script says. Measured by `bench/script_density.py` on tests/data/parallel_facts.json (24 short facts a
person tells a memory app, written in English and each script): Han 3.0 (Chinese, median of en/zh lengths),
kana 1.5 (fitted on Japanese with Han at 3.0), Hangul 1.5, Thai 1.1, Arabic 1.2; Cyrillic measured 1.0, like
Latin; every other character (Latin, digits, spaces, punctuation, scripts not measured) counts 1. The floor stays
seed 003's 12, now in English characters. Pure, linear in the length of the text.
"""

from __future__ import annotations

import re

__all__ = ["MIN_LENGTH", "SCRIPT_WEIGHTS", "script_length", "too_short"]

MIN_LENGTH = 12
"""Seed 003's floor ("trim then reject if < 12 chars") and seed 000's lower bound, in English characters."""

SCRIPT_WEIGHTS: tuple[tuple[str, str, float], ...] = (
    ("Han", "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff", 3.0),
    ("kana", "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f", 1.5),
    ("Hangul", "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f", 1.5),
    ("Thai", "\u0e00-\u0e7f", 1.1),
    ("Arabic", "\u0600-\u06ff\u0750-\u077f", 1.2),
)
"""(script, character ranges, English characters per character), measured as the module docstring says."""

_RUNS = tuple((re.compile(f"[{ranges}]"), weight) for _, ranges, weight in SCRIPT_WEIGHTS)
_ANY_WEIGHTED = re.compile("[" + "".join(ranges for _, ranges, _ in SCRIPT_WEIGHTS) + "]")


def script_length(text: str) -> float:
    """The length of `text` in English characters: each character times its script's weight (`SCRIPT_WEIGHTS`),
    1 for any other. `script_length("Owner is ok")` is 11.0; `script_length("我是素食者。")` is 16.0."""
    if _ANY_WEIGHTED.search(text) is None:
        return float(len(text))
    length = float(len(text))
    for pattern, weight in _RUNS:
        length += (weight - 1.0) * len(pattern.findall(text))
    return length


def too_short(text: str, floor: int = MIN_LENGTH) -> str | None:
    """"shorter than 12 characters" when the trimmed `text` is under `floor` by `script_length`, else None (the
    reason is the one the gate has always given; a Chinese, Japanese, Korean, Thai or Arabic text is measured by
    what it says)."""
    return f"shorter than {floor} characters" if script_length(text.strip()) < floor else None
