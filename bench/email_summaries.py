"""Offline email summaries and needs-reply on the corpus of tests/email_corpus.py, for the code of an earlier
commit ("before") and the current one ("after"), in the same run:

- needs-reply: precision and recall against the corpus labels, and the threads each side gets wrong;
- summaries, read through the current offline extractor (`twin.text.extractor.extract`, as the learn worker does):
  the corpus facts kept (a fact counts when some memory holds it, case-insensitive), memories holding text that
  must never be learned (salutations, sign-offs, signatures, disclaimers, phishing content), and memories cut
  mid-sentence (an opening quote without its closing one);
- `--show N`: the summaries of the first N threads of each language, before and after.

    .venv/bin/python bench/email_summaries.py                  # before = a7bedfd, the commit this work grew from
    .venv/bin/python bench/email_summaries.py --before HEAD~3 --show 3

The "before" code is `twin/connectors/email_text.py` as it was at REV, with its own imports of that revision
(`_common.module_at`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from _common import REPO_ROOT, module_at, table, write_json

sys.path.insert(0, str(REPO_ROOT / "tests"))

from email_corpus import CASES, OWNER, MailCase

from twin.connectors import email_summary, email_text
from twin.text.extractor import extract

BEFORE_REV = "a7bedfd"
"""The last commit before this summary and needs-reply rule (quote of the first sentence; lists and no-reply
senders only)."""


def run(parse, summarise) -> dict:
    """Figures of one side: needs-reply confusion counts, facts kept, junk and cut memories, per-case details."""
    tally: Counter = Counter()
    wrong: list[str] = []
    summaries: dict[str, str] = {}
    for case in CASES:
        thread = parse(case.thread, [OWNER])
        predicted = bool(thread.needs_reply)
        tally[("tp" if case.needs_reply else "fp") if predicted else ("fn" if case.needs_reply else "tn")] += 1
        if predicted != case.needs_reply:
            wrong.append(f"{case.name} ({case.kind})")
        summary = summarise(thread)
        summaries[case.name] = summary
        memories = [m.content for m in extract(summary)]
        low = [m.lower() for m in memories]
        tally["facts"] += len(case.facts)
        tally["kept"] += sum(any(fact.lower() in m for m in low) for fact in case.facts)
        tally["memories"] += len(memories)
        tally["junk"] += sum(any(bad.lower() in m for bad in case.never) for m in low)
        tally["cut"] += sum(m.count("“") != m.count("”") for m in memories)
    precision = tally["tp"] / max(1, tally["tp"] + tally["fp"])
    recall = tally["tp"] / max(1, tally["tp"] + tally["fn"])
    for key in ("tp", "fp", "fn", "tn", "junk", "cut"):
        tally[key] += 0
    return {"tally": dict(tally), "precision": round(precision, 3), "recall": round(recall, 3), "wrong": wrong,
            "summaries": summaries}


def show(cases: list[MailCase], before: dict, after: dict) -> None:
    for case in cases:
        print(f"\n## {case.name} ({case.language}, {case.kind})")
        print(f"before: {before['summaries'][case.name]}")
        print(f"after:  {after['summaries'][case.name]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default=BEFORE_REV, help="git revision of the 'before' code")
    parser.add_argument("--show", type=int, default=0, help="print the summaries of N threads per language")
    args = parser.parse_args()
    old = module_at(args.before, "twin.connectors.email_text")
    before = run(old.parse_thread, old.heuristic_summary)
    after = run(email_text.parse_thread, email_summary.heuristic_summary)
    print(f"{len(CASES)} threads ({Counter(c.language for c in CASES)}), "
          f"{sum(c.needs_reply for c in CASES)} waiting for an answer")
    rows = []
    for name, side in (("before", before), ("after", after)):
        t = side["tally"]
        rows.append([name, f"{side['precision']:.2f}", f"{side['recall']:.2f}",
                     f"{t['tp']}/{t['fp']}/{t['fn']}/{t['tn']}", f"{t['kept']}/{t['facts']}", t["memories"],
                     t["junk"], t["cut"]])
    print(table(["code", "needs-reply precision", "recall", "tp/fp/fn/tn", "facts kept", "memories", "junk",
                 "cut mid-sentence"], rows))
    for name, side in (("before", before), ("after", after)):
        print(f"{name} wrong on needs-reply: {', '.join(side['wrong']) or 'none'}")
    if args.show:
        picked = [c for lang in ("en", "de") for c in [c for c in CASES if c.language == lang][:args.show]]
        show(picked, before, after)
    write_json("email_summaries", {"before_rev": args.before, "threads": len(CASES),
                                   "before": {k: v for k, v in before.items() if k != "summaries"},
                                   "after": {k: v for k, v in after.items() if k != "summaries"}})


if __name__ == "__main__":
    main()
