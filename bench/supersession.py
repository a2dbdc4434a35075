"""Supersession on a corpus of pairs (tests/supersession_corpus.py): precision and recall of "the new memory
replaces the old one", English and German, through `twin.learn.capture.capture` on a real SQLite store (offline
rules, no model).

    .venv/bin/python bench/supersession.py            # the table, and each wrong call
    PYTHONPATH=/path/to/other/checkout .venv/bin/python bench/supersession.py   # the same corpus on other code

Each pair gets a being of its own in one store, so no pair sees another's memories; `old` is captured first
and `new` an hour later, both with the pair's kind. A pair counts as superseded when capturing `new` marked
`old` superseded. Precision = right supersessions / all supersessions; recall = right supersessions / pairs
that should supersede.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from _common import REPO_ROOT, table, write_json

sys.path.insert(0, str(REPO_ROOT / "tests"))
from supersession_corpus import HELD_OUT, PAIRS, Pair

from twin.learn.capture import capture
from twin.store import Store
from twin.text.extractor import Candidate

NAME = "supersession"
PROVENANCE = {"source_type": "muse", "captured_from": "bench", "confidence": 0.8}
GERMAN = re.compile(r"\b(?:wohnt|arbeitet|ist|hat|wiegt|fährt|heißt|beträgt|mag)\b|^Owners ")


def language(pair: Pair) -> str:
    """"de" for a pair in German, else "en"."""
    return "de" if GERMAN.search(pair.old) else "en"


def run(pairs: tuple[Pair, ...] = PAIRS) -> list[tuple[str, bool, bool, str]]:
    """`(language, expected, got, old | new)` for every pair of `pairs`."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.db") as store:
        for n, pair in enumerate(pairs):
            being = f"pair{n}"
            with store.atomic():
                old = capture(store, being, Candidate(pair.kind, pair.old, 0.5, ()), "muse", "2026-11-30T10:00:00Z",
                              PROVENANCE)
                new = capture(store, being, Candidate(pair.kind, pair.new, 0.5, ()), "muse", "2026-11-30T11:00:00Z",
                              PROVENANCE)
            got = old.id is not None and old.id in new.superseded
            rows.append((language(pair), pair.supersedes, got, f"{pair.old} | {pair.new}"))
    return rows


def scores(rows: list[tuple[str, bool, bool, str]]) -> dict:
    """`{pairs, should, superseded, right, precision, recall}` of `rows`."""
    right = sum(expected and got for _, expected, got, _ in rows)
    made = sum(got for _, _, got, _ in rows)
    should = sum(expected for _, expected, _, _ in rows)
    return {"pairs": len(rows), "should": should, "superseded": made, "right": right,
            "precision": right / made if made else 1.0, "recall": right / should if should else 1.0}


def figures_of(rows: list[tuple[str, bool, bool, str]]) -> dict:
    """`scores` per language ("en", "de") and for "all"."""
    out = {lang: scores([r for r in rows if r[0] == lang]) for lang in ("en", "de")}
    out["all"] = scores(rows)
    return out


def main() -> int:
    report = {}
    for name, pairs in (("PAIRS", PAIRS), ("HELD_OUT", HELD_OUT)):
        rows = run(pairs)
        report[name] = figures_of(rows)
        print(table(["corpus", "pairs", "should", "superseded", "right", "precision", "recall"],
                    [[k, v["pairs"], v["should"], v["superseded"], v["right"], v["precision"], v["recall"]]
                     for k, v in report[name].items()], digits=3,
                    title=f"supersession on tests/supersession_corpus.py {name}"))
        for lang, expected, got, pair in rows:
            if expected != got:
                print(f"  {'missed' if expected else 'wrong '} [{lang}] {pair}")
        print()
    write_json(NAME, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
