"""Secret detection on the corpus of tests/secret_corpus.py: detected / missed per secret format and false
positives per negative class, for the detector of an earlier commit ("before") and the current one ("after"),
plus the time each takes on 40 KB of ordinary prose and of worst-case near-secrets (a ratio, same run).

    .venv/bin/python bench/secret_detection.py                   # before = 73c9c06, the commit this detector grew from
    .venv/bin/python bench/secret_detection.py --before HEAD~3   # any revision whose twin/text/sensitivity.py is stdlib-only

The "before" detector is `twin/text/sensitivity.py` as `git show REV:` prints it, loaded as a module of its own; the
"after" one is `twin.text.sensitivity` (its structural part included, `twin.text.secret_shapes`). A secret counts as
detected when every character of each of its values lies inside a finding (a half-redacted key is a miss).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable

from _common import REPO_ROOT, load_note, module_at, percentile, table, write_json

sys.path.insert(0, str(REPO_ROOT / "tests"))

from secret_corpus import NEGATIVES, SECRETS

from twin.text import sensitivity

BEFORE_REV = "73c9c06"
"""The last commit before the structural detector and the corpus (the regex rules alone)."""
SIZE_CHARS = 40_000
"""Input size of the timing runs (the learn path reads texts of this size and more)."""


def covered(find: Callable, text: str, value: str) -> bool:
    inside = set()
    for secret in find(text):
        inside.update(range(secret.start, secret.end))
    start = text.find(value)
    return start >= 0 and inside.issuperset(range(start, start + len(value)))


def score(find: Callable) -> tuple[Counter, Counter, Counter, Counter]:
    """`(detected, missed)` per format and `(flagged, total)` per negative class."""
    detected, missed, flagged, total = Counter(), Counter(), Counter(), Counter()
    for case in SECRETS:
        if all(covered(find, case.text, v) for v in case.values):
            detected[case.fmt] += 1
        else:
            missed[case.fmt] += 1
    for kind, text in NEGATIVES:
        total[kind] += 1
        flagged[kind] += bool(find(text))
    return detected, missed, flagged, total


def timing_ms(find: Callable, text: str, repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        find(text)
        runs.append((time.perf_counter() - start) * 1000)
    return percentile(runs, 50)


def inputs() -> dict[str, str]:
    """40 KB texts: the negatives (ordinary prose full of numbers) and near-secrets that make rules work hard."""
    prose = " ".join(text for _, text in NEGATIVES) + " "
    worst = ("password password is PIN code is the door code for the user a, pass login: a@b.c / seed phrase "
             "abandon ability able about above absent absorb abstract absurd abuse access / Tr0ub4dor ")
    return {name: (unit * (SIZE_CHARS // len(unit) + 1))[:SIZE_CHARS] for name, unit in
            (("ordinary prose", prose), ("near-secrets", worst))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE_REV, help="revision of the 'before' detector")
    parser.add_argument("--repeats", type=int, default=7, help="timing runs per input and detector")
    args = parser.parse_args()
    before = module_at(args.before, "twin.text.sensitivity")
    results = {"before": score(before.find_secrets), "after": score(sensitivity.find_secrets)}
    formats = sorted({c.fmt for c in SECRETS})
    rows = [(fmt, results["before"][0][fmt], results["before"][1][fmt], results["after"][0][fmt],
             results["after"][1][fmt]) for fmt in formats]
    rows.append(("all", *(sum(results[side][i].values()) for side in ("before", "after") for i in (0, 1))))
    print(table(["secret format", "before found", "before missed", "after found", "after missed"], rows,
                title=f"Secrets ({len(SECRETS)} texts)"))
    classes = sorted({k for k, _ in NEGATIVES})
    total = results["after"][3]
    rows = [(k, total[k], results["before"][2][k], results["after"][2][k]) for k in classes]
    rows.append(("all", sum(total.values()), sum(results["before"][2].values()), sum(results["after"][2].values())))
    print()
    print(table(["negative class", "texts", "before flagged", "after flagged"], rows,
                title=f"Hard negatives ({len(NEGATIVES)} texts)"))
    timings = {}
    for name, text in inputs().items():
        b, a = timing_ms(before.find_secrets, text, args.repeats), timing_ms(sensitivity.find_secrets, text,
                                                                             args.repeats)
        timings[name] = {"before_ms": b, "after_ms": a, "ratio": a / b}
    print()
    print(table(["40 KB input", "before p50 ms", "after p50 ms", "after / before"],
                [(k, v["before_ms"], v["after_ms"], v["ratio"]) for k, v in timings.items()], title="find_secrets"))
    print(load_note())
    path = write_json("secret_detection", {
        "before_rev": args.before,
        "secrets": {fmt: {side: {"found": results[side][0][fmt], "missed": results[side][1][fmt]}
                          for side in results} for fmt in formats},
        "negatives": {k: {"texts": total[k], **{side: results[side][2][k] for side in results}} for k in classes},
        "timing": timings})
    print(f"figures: {path}")


if __name__ == "__main__":
    main()
