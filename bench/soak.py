"""Soak: a real `twin up` on its embedded defaults fed `--rate` texts a second (staged and queued as a connector
does) with a search through the HTTP API every `--recall-s`, for `--minutes`; the RSS of every process of the
daemon sampled every `--sample-s`. Growth per process = the mean RSS of the last `--window-min` minutes over the
mean of the `--window-min` minutes after `--warmup-min` of warm-up. Target (issue figures): <= 2 % for every
process over a 2-hour soak.

    .venv/bin/python bench/soak.py                   # 120 minutes at 2 texts/s and a search a second
    .venv/bin/python bench/soak.py --minutes 20
    .venv/bin/python bench/soak.py --minutes 30 --rate 0 --preload 3000 --recall-s 0.2  # searches alone, fixed store

`--rate 0` feeds nothing during the soak, so a process whose RSS still grows grows with its searches, not with the
store (`--preload N` learns N texts first, in pushes of 25, and waits until every one is learned and embedded).
`--repeat` feeds, at `--rate`, the preloaded texts again in turn: every job runs the whole path (staged, queued,
learned, compared by capture, reinforced, a diary line) while the store keeps its size (no new memory, no new
vector), so what still grows is a leak, not the store:

    .venv/bin/python bench/soak.py --minutes 90 --preload 3000 --repeat   # the whole path on a store of fixed size

The samples are written to bench/out/soak.json as they are taken, so a run cut short still has its table
(`--report` prints the table of the last run's samples).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import OUT_DIR, REPO_ROOT, load_note, mib, proc_status_kb, proc_tree, role, table, write_json
from faults import daemon_env

sys.path.insert(0, str(REPO_ROOT / "tests"))
from fault_run import BEING, SOURCE, FaultRun, texts  # the test suite's daemon run and texts

NAME = "soak"
QUESTIONS = ("where did I learn to sail?", "what did I do in Hanoi?", "who came along to the salt mine?",
             "ice swimming", "what did I build?", "when did I lose my wallet?", "trip number 77")


def rss_by_role(supervisor: int) -> dict[str, float]:
    """`{role: RSS MiB}` of the daemon's tree now (forks of one role summed under "<role> fork")."""
    out: dict[str, float] = {}
    for pid in proc_tree(supervisor):
        status = proc_status_kb(pid)
        if not status:
            continue
        name = role(pid, supervisor)
        name = name if name not in out else f"{name} fork"
        out[name] = out.get(name, 0.0) + mib(status.get("VmRSS"))
    return out


class Feeder:
    """Stages one text at a time and queues its learn job, on one store connection and one Redis client."""

    def __init__(self, run: FaultRun):
        from redis import Redis

        from twin.store import Store
        from twin.workers.bus import Bus

        settings = run.settings
        self.store = Store(settings.db_path).open()
        self.redis = Redis.from_url(settings.effective_redis_url, socket_timeout=5)
        self.bus = Bus(self.redis)
        run._wait(settings.api_token_path.exists, 120, "the API's token")  # written when the API starts
        self.token = settings.api_token_path.read_text().strip()
        self.api = httpx.Client(base_url=f"http://127.0.0.1:{run.env['TWIN_API_PORT']}", timeout=30,
                                headers={"Authorization": f"Bearer {self.token}"})
        run._wait(self._answers, 120, "the API to answer")

    def _answers(self) -> bool:
        try:
            return self.api.get("/v1/health").status_code == 200
        except httpx.HTTPError:
            return False

    def learn(self, text: str) -> None:
        from twin import ingest
        from twin.ingest import Ingest

        with self.store.atomic():
            ids = ingest.stage(self.store, [Ingest(BEING, SOURCE, text)])
        self.bus.push(self.store, ids, BEING, "text")

    def search(self, query: str) -> float:
        started = time.perf_counter()
        self.api.post("/v1/search", json={"query": query, "limit": 10}).raise_for_status()
        return time.perf_counter() - started

    def close(self) -> None:
        self.api.close()
        self.redis.close()
        self.store.close()


def growth_table(samples: list[dict], warmup_min: float, window_min: float) -> tuple[list[list], float]:
    """Per role: mean RSS just after warm-up, mean RSS at the end, growth %, peak; and the worst growth %."""
    end = samples[-1]["t_s"] / 60
    early = [s for s in samples if warmup_min <= s["t_s"] / 60 < warmup_min + window_min]
    late = [s for s in samples if s["t_s"] / 60 >= end - window_min]
    rows, worst = [], float("-inf")
    roles = sorted({r for s in samples for r in s["rss_mib"]})
    for name in [r for r in roles if not r.endswith(" fork")]:
        a = [s["rss_mib"][name] for s in early if name in s["rss_mib"]]
        b = [s["rss_mib"][name] for s in late if name in s["rss_mib"]]
        if not a or not b:
            continue
        first, last = sum(a) / len(a), sum(b) / len(b)
        growth = 100 * (last - first) / first
        worst = max(worst, growth)
        rows.append([name, first, last, growth, max(s["rss_mib"].get(name, 0) for s in samples)])
    return rows, worst


def report(fig: dict) -> None:
    rows, worst = growth_table(fig["samples"], fig["warmup_min"], fig["window_min"])
    minutes = fig["samples"][-1]["t_s"] / 60
    print(table(["process", "RSS after warm-up MiB", "RSS at end MiB", "growth %", "peak MiB"], rows,
                title=f"soak: {minutes:.0f} min, {fig['texts']} texts, {fig['searches']} searches "
                      f"(search p50 {fig.get('search_p50_ms', float('nan')):.1f} ms)"))
    kind = "texts learned again (store of fixed size)" if fig.get("repeat") else "new texts (the store grows)"
    print(f"soak: {kind}; worst growth {worst:+.2f} % (target <= 2 %); {fig['load_before']} -> "
          f"{fig.get('load_after')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=120)
    parser.add_argument("--rate", type=float, default=2.0, help="texts a second (0: none)")
    parser.add_argument("--preload", type=int, default=0, help="texts learned before the soak starts")
    parser.add_argument("--recall-s", type=float, default=1.0, help="seconds between searches")
    parser.add_argument("--sample-s", type=float, default=30.0)
    parser.add_argument("--warmup-min", type=float, default=10.0)
    parser.add_argument("--window-min", type=float, default=10.0)
    parser.add_argument("--repeat", action="store_true", help="feed the preloaded texts again (a store of fixed size)")
    parser.add_argument("--report", action="store_true", help="print the table of bench/out/soak.json")
    args = parser.parse_args(argv)
    if args.repeat and not args.preload:
        parser.error("--repeat feeds the preloaded texts again: give --preload N")
    if args.report:
        report(json.loads((OUT_DIR / f"{NAME}.json").read_text()))
        return 0
    fig = {"minutes": args.minutes, "rate": args.rate, "preload": args.preload, "repeat": args.repeat,
           "recall_s": args.recall_s, "warmup_min": args.warmup_min,
           "window_min": args.window_min, "load_before": load_note(), "texts": 0, "searches": 0, "samples": []}
    lines, took = texts(args.preload + (0 if args.repeat else int(args.minutes * 60 * args.rate) + 10)), []
    with tempfile.TemporaryDirectory(prefix="twin-soak-") as tmp:
        run = FaultRun(daemon_env(Path(tmp) / "daemon"), Path(tmp) / "daemon.log")
        run.start()
        feeder = None
        try:
            feeder = Feeder(run)
            if args.preload:
                run.feed(lines[:args.preload])
                run.wait_settled(1, 3600)
                fig["texts"] = args.preload
            started = time.monotonic()
            next_text = next_search = next_sample = started
            if not args.rate:
                next_text = float("inf")
            while (now := time.monotonic()) - started < args.minutes * 60:
                if now >= next_sample:
                    fig["samples"].append({"t_s": round(now - started, 1), "rss_mib": rss_by_role(run.proc.pid)})
                    fig["load_after"] = load_note()
                    if took:
                        fig["search_p50_ms"] = 1000 * sorted(took)[len(took) // 2]
                    write_json(NAME, fig)
                    next_sample += args.sample_s
                if now >= next_text:
                    feeder.learn(lines[fig["texts"] % len(lines)])  # --repeat: lines are the preloaded ones
                    fig["texts"] += 1
                    next_text += 1 / args.rate
                if now >= next_search:
                    took.append(feeder.search(QUESTIONS[fig["searches"] % len(QUESTIONS)]))
                    fig["searches"] += 1
                    next_search += args.recall_s
                time.sleep(max(0.0, min(next_text, next_search, next_sample) - time.monotonic()))
        finally:
            if feeder is not None:
                feeder.close()
            run.stop()
    fig["load_after"] = load_note()
    write_json(NAME, fig)
    report(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
