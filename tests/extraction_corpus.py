"""A corpus of what people tell a memory app, for measuring the offline extractor (bench/extraction_quality.py).

Written for this project in English, German and French: chat messages, notes (learned as files, with a title)
and e-mails, in the first person, with pronouns across sentences, relative dates, contractions, chat spelling,
short facts, headings and lists. Each text lists the facts a person would want kept, each as its key words: a
fact counts as kept when one memory holds every key word (case and accents folded). Texts of filler keep no
fact. `NOW` is the time every text is read at: Tuesday 1 December 2026, 10:00 UTC.

The texts are data, in tests/data/extraction_corpus.toml; this module reads them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

_DATA = tomllib.loads((Path(__file__).parent / "data" / "extraction_corpus.toml").read_text(encoding="utf-8"))

NOW = _DATA["now"]
"""Tuesday 1 December 2026, 10:00 UTC (an aware datetime)."""

Row = tuple[str, str, list[str]]
"""(kind, text, facts): kind "chat", "note" (a file: learned with its title) or "email"."""
CORPUS: dict[str, list[Row]] = {language: [(kind, text, facts) for kind, text, facts in _DATA[language]]
                                for language in ("English", "German", "French")}
"""The texts by language."""
EN, DE, FR = CORPUS["English"], CORPUS["German"], CORPUS["French"]
