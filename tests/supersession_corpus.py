"""Pairs of memories for measuring supersession (capture's "the new memory replaces the old one"), English and
German: `(old, new, kind of both, should the new one supersede the old?)`. `PAIRS` (87) is what the rules were
measured and tuned on; `HELD_OUT` (28) was written afterwards and never tuned on.

Written for this corpus, not taken from the eval set. "Should" pairs are updates of one state: the same subject
and attribute with a new value (home city, employer, job, manager, partner, diet, phone, car, bank, editor,
rent, salary, age, weight, a count, a version in use). "Must not" pairs are the traps seen in model-written
bursts: separate events that differ in a number or a date, a shared relation verb about different attributes
("moved", "switched", "changed"), other people, past or hedged statements, values that add up. Read by
tests/test_supersession.py and bench/supersession.py. The pairs are data, in tests/data/supersession_corpus.toml;
this module reads them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import NamedTuple


class Pair(NamedTuple):
    """One case: `old` is stored first, then `new`; `kind` is both candidates' kind; `supersedes` the truth."""

    old: str
    new: str
    kind: str
    supersedes: bool


_DATA = tomllib.loads((Path(__file__).parent / "data" / "supersession_corpus.toml").read_text(encoding="utf-8"))
PAIRS: tuple[Pair, ...] = tuple(Pair(*row) for row in _DATA["pairs"])
HELD_OUT: tuple[Pair, ...] = tuple(Pair(*row) for row in _DATA["held_out"])
