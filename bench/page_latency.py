"""The page's cost on a big store: the time of each view's API calls and of a search, measured at the client over
loopback HTTP (so it includes the server's time and a little more), against the API as its own process
(`python -m twin.api`, as the daemon runs it).

    .venv/bin/python bench/page_latency.py                 # N = 100,000 (bench/_corpus.ensure_store's cache)
    .venv/bin/python bench/page_latency.py --n 10000 --rounds 30

Views: `open` (the HTML and its scripts and style sheet), `memories` (the newest 50, then the next page),
`memory` (one memory with its history and neighbours), `stats` (counts and memories per week), `sources` (`twin
status`), `activity`, `search` (`POST /v1/search`, limit 20, the page's query). Target (the issue): p50 of the
first view (`open` + `memories`) and of a search under 300 ms at 100k memories.
"""

from __future__ import annotations

import argparse
import sys
import time

import _corpus
from _common import load_note, summary_ms, table, write_json
from api_latency import served_corpus_api

NAME = "page_latency"
TARGET_MS = 300.0
STATIC = ("/twin", "/twin/static/app.js", "/twin/static/api.js", "/twin/static/dom.js", "/twin/static/search.js",
          "/twin/static/memories.js", "/twin/static/page.css")


def view_calls(client, memory_id: int) -> dict:
    """The requests of each view, as the page makes them: `{view: [callables]}`."""
    def get(path, **params):
        return lambda: client.get(path, params=params)

    def memories_then_older():
        first = client.get("/v1/memories", params={"limit": 50})
        first.raise_for_status()
        return client.get("/v1/memories", params={"limit": 50, "after": first.json()[-1]["id"]})

    return {
        "open": [get(path) for path in STATIC],
        "memories": [memories_then_older],
        "memory": [get(f"/v1/memories/{memory_id}"), get(f"/v1/memories/{memory_id}/history"),
                   get(f"/v1/memories/{memory_id}/neighbors", depth=2)],
        "stats": [get("/v1/stats"), get("/v1/stats/weeks", weeks=26)],
        "sources": [get("/v1/status")],
        "activity": [get("/api/twin/activity"), get("/v1/signals", status="held_back", limit=20)],
    }


def timed_view(calls) -> float:
    """Seconds for one view's calls, one after the other (what the page waits for, at worst)."""
    started = time.perf_counter()
    for call in calls:
        call().raise_for_status()
    return time.perf_counter() - started


def measure(client, rounds: int, questions: list[str]) -> dict:
    """`rounds` of every view, interleaved, after one warm-up round; then one search per question."""
    newest = client.get("/v1/memories", params={"limit": 1}).json()[0]["id"]
    views = view_calls(client, newest)
    for calls in views.values():
        timed_view(calls)
    times: dict[str, list[float]] = {name: [] for name in views}
    for _ in range(rounds):
        for name, calls in views.items():
            times[name].append(timed_view(calls))
    searches = []
    for q in questions:
        started = time.perf_counter()
        client.post("/v1/search", json={"query": q, "limit": 20}).raise_for_status()
        searches.append(time.perf_counter() - started)
    out = {name: summary_ms(xs) for name, xs in times.items()}
    out["first_view"] = summary_ms([a + b for a, b in zip(times["open"], times["memories"], strict=True)])
    out["search"] = summary_ms(searches)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(argv)
    with served_corpus_api(args.n, "page-bench-") as (_, client, _, _):
        figures = measure(client, args.rounds, _corpus.queries(args.queries))
    names = ["open", "memories", "first_view", "memory", "stats", "sources", "activity", "search"]
    print(table(["view", "n", "p50 ms", "p90 ms", "p99 ms", "max ms"],
                [[v, figures[v]["n"], figures[v]["p50_ms"], figures[v]["p90_ms"], figures[v]["p99_ms"],
                  figures[v]["max_ms"]] for v in names],
                title=f"the page's API calls at {args.n} memories, client-side over loopback (target: first view "
                      f"and search p50 < {TARGET_MS:.0f} ms)"))
    ok = figures["first_view"]["p50_ms"] < TARGET_MS and figures["search"]["p50_ms"] < TARGET_MS
    path = write_json(NAME, {"n": args.n, "views": figures, "target_ms": TARGET_MS, "ok": ok, "note": load_note()})
    print(f"written {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
