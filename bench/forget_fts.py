"""What 10,000 forgets do to the full-text index: the old optimize-only scrub beside twin's, same store, same run.

    .venv/bin/python bench/forget_fts.py                      # 20,000 memories, 10,000 forgets each way (~5 min)
    .venv/bin/python bench/forget_fts.py --memories 100000 --forgets 2000

Each way starts from its own copy of one store of `--memories` synthetic memories (bench/_corpus.py) and forgets
one memory at a time, oldest first:

- optimize only (what twin did before): `Store.delete_memories`, then FTS5 `'optimize'` and a WAL checkpoint
  (TRUNCATE), until FTS5 refuses the table ("database disk image is malformed") or the forgets run out;
- twin's scrub: `Store.delete_memories`, then `Store.scrub_deleted_text()` (optimize, a rebuild once the structure
  passes `REBUILD_ABOVE_LEVELS` levels, the same checkpoint): the same work as the baseline plus the bound;
- twin forget: `twin.lifecycle.forgetting.forget` (what `twin forget ID` runs: the plan over every table, the transcript
  scan, the removal and the scrub), on the first `--full` forgets.

It prints the structure's level count along the way and the time per forget (p50/p90/mean), and the ratio of
twin's scrub to the baseline over the forgets both completed. Targets: the level count stays at or under
`REBUILD_ABOVE_LEVELS` + 2 after 10,000 forgets; twin's scrub costs at most 1.5x the baseline per forget.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

import _corpus
from _common import load_note, summary_ms, table, write_json

from twin.lifecycle.forgetting import forget
from twin.store import Store, fts_structure

CHECKPOINTS = (1, 10, 100, 500, 1000, 1076, 1077, 2000, 5000, 10000)
"""Forget counts at which the level count is printed (1,077: where the issue saw the old way break)."""


def build_store(path: Path, n: int) -> list[int]:
    """A store of `n` synthetic memories at `path`; returns their ids, oldest first."""
    with Store(path) as store, store.atomic():
        return [store.insert_memory(_corpus.BEING, m["kind"], m["content"], m["source"], m["importance"],
                                    created_at=m["created_at"]) for m in _corpus.memories(n)]


def old_scrub(store: Store) -> None:
    """The scrub twin ran before: optimize, then checkpoint and truncate the WAL."""
    store.conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def run(path: Path, ids: list[int], way: str) -> dict:
    """Forget `ids` one by one with `way` (`optimize-only`, `scrub`, `forget`); returns levels, times, rebuilds and
    where it broke (None if it did not)."""
    levels, seconds, rebuilds, broke = {}, [], 0, None
    with Store(path) as store:
        for n, mid in enumerate(ids, 1):
            started = time.perf_counter()
            try:
                if way == "forget":
                    forget(store, None, _corpus.BEING, [mid])
                else:
                    store.delete_memories([mid])
                    if way == "scrub":
                        rebuilds += store.scrub_deleted_text()["rebuilt"]
                    else:
                        old_scrub(store)
            except sqlite3.DatabaseError as exc:
                # Store.atomic's ROLLBACK fails after SQLite rolled back on its own: report the cause
                broke = {"at_forget": n, "error": str(exc.__context__ or exc)}
                levels[n] = fts_structure.read_levels(store.conn)
                break
            seconds.append(time.perf_counter() - started)
            if n in CHECKPOINTS or n == len(ids):
                levels[n] = fts_structure.read_levels(store.conn)
        try:
            answers = store.conn.execute("SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'owner'")
            readable = answers.fetchone()[0] >= 0
        except sqlite3.DatabaseError:
            readable = False
    return {"levels": levels, "times": summary_ms(seconds), "rebuilds": rebuilds, "broke": broke,
            "readable_after": readable, "forgets_done": len(seconds), "seconds": seconds}


def main() -> None:
    """Build the store once, run each way on its own copy, print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--forgets", type=int, default=10_000)
    parser.add_argument("--full", type=int, default=1_000, help="forgets through twin.lifecycle.forgetting.forget")
    args = parser.parse_args()
    print(f"SQLite {sqlite3.sqlite_version}; {load_note()}")
    with tempfile.TemporaryDirectory(prefix="twin-forget-bench-") as tmp:
        base = Path(tmp) / "base" / "twin.db"
        started = time.perf_counter()
        ids = build_store(base, args.memories)
        print(f"built a store of {len(ids)} memories in {time.perf_counter() - started:.1f} s")
        results = {}
        for way, count in (("optimize-only", args.forgets), ("scrub", args.forgets), ("forget", args.full)):
            copy = Path(tmp) / way / "twin.db"
            copy.parent.mkdir()
            shutil.copy(base, copy)
            results[way] = run(copy, ids[:count], way)
            broke = results[way]["broke"]
            print(f"{way}: {results[way]['forgets_done']} forgets, "
                  + (f"broken at forget #{broke['at_forget']} ({broke['error']})" if broke else "never broke")
                  + f"; rebuilds {results[way]['rebuilds']}")
    marks = sorted({n for r in results.values() for n in r["levels"]})
    print(table(["forgets", *results], [[n, *(r["levels"].get(n, "") for r in results.values())] for n in marks],
                title="FTS5 structure levels (FTS5 refuses more than 2000)"))
    print(table(["way", "forgets", "p50 ms", "p90 ms", "mean ms", "max ms"],
                [[w, r["forgets_done"], r["times"]["p50_ms"], r["times"]["p90_ms"], r["times"]["mean_ms"],
                  r["times"]["max_ms"]] for w, r in results.items()], title="time per forget"))
    both = min(results["optimize-only"]["forgets_done"], results["scrub"]["forgets_done"])
    same = {w: summary_ms(results[w]["seconds"][:both]) for w in ("optimize-only", "scrub")}
    ratio = same["scrub"]["mean_ms"] / same["optimize-only"]["mean_ms"]
    print(f"twin's scrub / optimize-only, mean per forget over the first {both} forgets (the baseline stops where "
          f"it broke): {same['scrub']['mean_ms']:.2f} / {same['optimize-only']['mean_ms']:.2f} ms = {ratio:.2f}")
    for r in results.values():
        r.pop("seconds")
    write_json("forget_fts", {"sqlite": sqlite3.sqlite_version, "memories": args.memories, "forgets": args.forgets,
                              "results": results, "scrub_over_optimize_only_mean": ratio, "load": load_note()})


if __name__ == "__main__":
    main()
