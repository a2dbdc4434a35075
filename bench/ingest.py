"""Ingest throughput and time-to-searchable through the real pipeline: staged item + Bus.push -> RQ learn worker ->
SQLite -> RQ embedding worker (batched flush) -> vector row, beside the raw embedder in the same run.

    .venv/bin/python bench/ingest.py                    # M = 3000 texts as a burst, then 3000 at a steady rate
    .venv/bin/python bench/ingest.py --m 1000 --rate 10

A private redis-server (unix socket, as tests/conftest.py starts it) and the two real workers
(`python -m twin.workers learn` and `python -m twin.workers embed`, long-running, not burst) run against a temp
data dir with the shipped defaults (flush delay 0.6 s, reschedule 0.2 s, batches of 96). Each text is a
one-sentence owner statement that the extractor turns into exactly one distinct memory; a poller reads
the store every `--poll-ms` and notes when each memory's row, then its vector row, appears. A memory is
searchable once its vector is stored (recall readers pick it up by `seq` watermark).

Targets: burst (sustained) rate >= 0.8 x raw embedder throughput (batches of 96, same texts, same run);
time-to-searchable p50 <= 1.5 s at a steady rate below capacity (default: half the burst rate).
"""

from __future__ import annotations

import argparse
import gc
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import (
    OUT_DIR,
    REPO_ROOT,
    bench_env,
    load_note,
    mib,
    percentile,
    proc_cpu_s,
    proc_status_kb,
    start_redis,
    stop_process,
    table,
    write_json,
)
from _corpus import owner_statements

NAME = "ingest"
BEING = "owner"
SOURCE = "muse"
RAW_BATCH = 96
"""Batch size of the raw-throughput baseline (seed 000's embedding call size)."""
RATE_TARGET = 0.8
P50_TARGET_S = 1.5


def make_texts(n: int, seed: int, taken: set[str]) -> list[tuple[str, str, str]]:
    """`n` `(text, memory content, content sha)` whose extraction is exactly one memory not in `taken`."""
    from twin.memory import content_sha256
    from twin.text.extractor import extract

    out = []
    for text in owner_statements(int(n * 1.3) + 20, seed):
        cands = extract(text)
        if len(cands) != 1:
            continue
        sha = content_sha256(cands[0].content)
        if sha in taken:
            continue
        taken.add(sha)
        out.append((text, cands[0].content, sha))
        if len(out) == n:
            return out
    raise RuntimeError(f"only {len(out)} usable texts for seed {seed}; lower --m")


def raw_throughput(contents: list[str]) -> dict:
    """The embedder alone on the memories' contents, batches of 96, after one warm-up batch."""
    from twin.settings import Settings
    from twin.vectors.embedder import LocalEmbedder

    embedder = LocalEmbedder(Settings.model_fields["embed_threads"].default)
    embedder.open()
    embedder.embed(contents[:RAW_BATCH])
    started = time.perf_counter()
    for i in range(0, len(contents), RAW_BATCH):
        embedder.embed(contents[i:i + RAW_BATCH])
    seconds = time.perf_counter() - started
    rss = proc_status_kb()
    return {"texts": len(contents), "seconds": seconds, "per_s": len(contents) / seconds, "threads": embedder.threads,
            "peak_rss_mib": mib(rss.get("VmHWM"))}


def pause_ceiling(raw_per_s: float) -> dict:
    """The best rate `flush_pending` can reach on a backlog with the shipped settings: full batches, each starting
    `pause` after the previous one started (the pause overlaps the embedding), with no other cost."""
    from twin.settings import Settings

    batch = Settings.model_fields["embed_batch_max"].default
    pause = Settings.model_fields["embed_reschedule_s"].default
    per_s = batch / max(batch / raw_per_s, pause)
    return {"batch": batch, "pause_s": pause, "per_s": per_s, "ratio": per_s / raw_per_s}


def learn_in_process(texts: list[str], workdir: Path) -> dict:
    """`twin.learn.learning.learn()` alone, in this process, one call and one transaction per text (what a learn job does
    inside the worker, minus RQ, the fork and opening the store)."""
    from twin.learn.learning import learn
    from twin.store import Store

    store = Store(workdir / "learn-only.db").open()
    try:
        started = time.perf_counter()
        for text in texts:
            learn(store, None, BEING, text, SOURCE)
        seconds = time.perf_counter() - started
    finally:
        store.close()
    return {"texts": len(texts), "seconds": seconds, "per_s": len(texts) / seconds}


class Poller(threading.Thread):
    """Reads the store every `interval_s` (its own read-only connection) and records, per content sha, the
    monotonic time its memory row and its vector row were first seen."""

    def __init__(self, db: Path, interval_s: float):
        super().__init__(daemon=True, name="poller")
        self.db, self.interval_s = db, interval_s
        self.stored: dict[str, float] = {}
        self.embedded: dict[str, float] = {}
        self.stop = threading.Event()
        self._mid = self._seq = 0

    def run(self) -> None:
        while not self.db.exists() and not self.stop.is_set():
            time.sleep(self.interval_s)
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=15)
        try:
            while not self.stop.wait(self.interval_s):
                self.poll(conn)
        finally:
            conn.close()

    def poll(self, conn: sqlite3.Connection) -> None:
        try:
            rows = conn.execute("SELECT id, content_sha256 FROM memories WHERE id > ? ORDER BY id",
                                (self._mid,)).fetchall()
            vecs = conn.execute("SELECT e.seq, m.content_sha256 FROM memory_embeddings e JOIN memories m"
                                " ON m.id = e.memory_id WHERE e.seq > ? ORDER BY e.seq", (self._seq,)).fetchall()
        except sqlite3.OperationalError:  # tables not created yet
            return
        now = time.monotonic()
        for mid, sha in rows:
            self.stored.setdefault(sha, now)
            self._mid = mid
        for seq, sha in vecs:
            self.embedded.setdefault(sha, now)
            self._seq = seq

    def wait_for(self, shas: list[str], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if all(s in self.embedded for s in shas):
                return True
            time.sleep(0.1)
        return False


class Pipeline:
    """Redis, the two workers and the poller, in a temp dir; `close()` stops what it started."""

    def __init__(self, workdir: Path, poll_s: float):
        self.workdir, self.poll_s = workdir, poll_s
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self) -> Pipeline:
        from redis import Redis

        from twin.workers.bus import Bus

        self.redis_proc, url = start_redis(self.workdir / "redis")
        self.env = bench_env(self.workdir / "data", self.workdir / "run", self.workdir / "config", url)
        self.redis = Redis.from_url(url)
        self.bus = Bus(self.redis)
        from twin.store import Store

        self.store = Store(self.workdir / "data" / "twin.db").open()
        self.poller = Poller(self.workdir / "data" / "twin.db", self.poll_s)
        self.poller.start()
        for role in ("learn", "embed"):
            log = open(OUT_DIR / f"ingest-{role}.log", "w")  # noqa: SIM115 - closed with the process
            self.procs[role] = subprocess.Popen([sys.executable, "-m", "twin.workers", role], cwd=REPO_ROOT,
                                                env=self.env, stdout=log, stderr=subprocess.STDOUT)
        try:
            self._wait_ready()
        except BaseException:
            self.close()  # leave no redis-server or worker behind
            raise
        return self

    def _wait_ready(self, timeout_s: float = 180) -> None:
        from rq import Worker

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for role, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"the {role} worker exited with {proc.returncode}; "
                                       f"see bench/out/ingest-{role}.log")
            if len(Worker.all(connection=self.redis)) >= 2:
                return
            time.sleep(0.2)
        raise RuntimeError("the workers did not register within 180 s")

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far: each worker plus its reaped children (the learn worker forks one per job)."""
        out = {}
        for role, proc in self.procs.items():
            c = proc_cpu_s(proc.pid)
            out[role] = c["self_s"] + c["children_s"]
        return out

    def close(self) -> dict:
        """Stop the workers (SIGTERM: warm stop), then Redis; returns exit codes, peak RSS and failed jobs."""
        info = {"failed_jobs": None, "peak_rss_mib": {}, "exit_codes": {}}
        try:
            info["failed_jobs"] = {k: v for k, v in self.bus.depths().items() if k.endswith("-failed")}
        except Exception as exc:  # noqa: BLE001 - report, keep stopping
            info["failed_jobs"] = f"unknown ({exc})"
        for role, proc in self.procs.items():
            info["peak_rss_mib"][role] = mib(proc_status_kb(proc.pid).get("VmHWM"))
        for role, proc in self.procs.items():
            info["exit_codes"][role] = stop_process(proc)
        self.poller.stop.set()
        stop_process(self.redis_proc)
        return info


def hand_over(pipe: Pipeline, texts: list[str]) -> None:
    """What a connector does: stage the texts in SQLite, then queue learn jobs carrying their ids (50 a job)."""
    from twin import ingest
    from twin.ingest import Ingest

    ids = ingest.stage(pipe.store, [Ingest(BEING, SOURCE, text) for text in texts])
    pipe.bus.push(pipe.store, ids, BEING, "text")


def push_burst(pipe: Pipeline, items) -> dict[str, float]:
    """One text at a time, each its own job (a Telegram message, a `twin learn` burst)."""
    pushed = {}
    for text, _, sha in items:
        hand_over(pipe, [text])
        pushed[sha] = time.monotonic()
    return pushed


def push_batched(pipe: Pipeline, items) -> dict[str, float]:
    """The same burst handed over 50 texts at a time (50 a job), as a connector's bulk sync does."""
    pushed, batch = {}, []
    for text, _, sha in items:
        batch.append((text, sha))
        if len(batch) == 50:
            hand_over(pipe, [t for t, _ in batch])
            pushed.update({s: time.monotonic() for _, s in batch})
            batch = []
    if batch:
        hand_over(pipe, [t for t, _ in batch])
        pushed.update({s: time.monotonic() for _, s in batch})
    return pushed


def push_steady(pipe: Pipeline, items, rate: float) -> dict[str, float]:
    pushed, start = {}, time.monotonic()
    for i, (text, _, sha) in enumerate(items):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        hand_over(pipe, [text])
        pushed[sha] = time.monotonic()
    return pushed


def phase_figures(name: str, pushed: dict[str, float], poller: Poller, cpu: dict, complete: bool) -> dict:
    """Rates and latencies of one phase from push, stored and embedded times."""
    shas = list(pushed)
    t0 = min(pushed.values())
    stored = sorted(poller.stored[s] for s in shas if s in poller.stored)
    embedded = sorted(poller.embedded[s] for s in shas if s in poller.embedded)
    n = len(shas)
    to_search = [poller.embedded[s] - pushed[s] for s in shas if s in poller.embedded]
    to_store = [poller.stored[s] - pushed[s] for s in shas if s in poller.stored]
    lo, hi = int(0.1 * n), int(0.9 * n) - 1
    mid_rate = (hi - lo) / (embedded[hi] - embedded[lo]) if len(embedded) == n and embedded[hi] > embedded[lo] else None
    return {"phase": name, "texts": n, "complete": complete, "stored": len(stored), "embedded": len(embedded),
            "push_s": max(pushed.values()) - t0, "push_per_s": n / max(max(pushed.values()) - t0, 1e-9),
            "learn_per_s": len(stored) / (stored[-1] - t0) if stored else None,
            "searchable_per_s": len(embedded) / (embedded[-1] - t0) if embedded else None,
            "searchable_per_s_10_90": mid_rate,
            "to_stored_p50_s": percentile(to_store, 50), "to_stored_p99_s": percentile(to_store, 99),
            "to_searchable_p50_s": percentile(to_search, 50), "to_searchable_p90_s": percentile(to_search, 90),
            "to_searchable_p99_s": percentile(to_search, 99), "to_searchable_max_s": max(to_search, default=None),
            "cpu_s": cpu, "cpu_ms_per_memory": {k: 1000 * v / n for k, v in cpu.items()}}


def run_phase(pipe: Pipeline, name: str, items, rate: float | None, timeout_s: float, batched: bool = False) -> dict:
    before = pipe.cpu()
    if batched:
        pushed = push_batched(pipe, items)
    else:
        pushed = push_burst(pipe, items) if rate is None else push_steady(pipe, items, rate)
    complete = pipe.poller.wait_for(list(pushed), timeout_s)
    time.sleep(2 * pipe.poll_s)
    after = pipe.cpu()
    figures = phase_figures(name, pushed, pipe.poller, {k: after[k] - before[k] for k in after}, complete)
    figures["rate_asked_per_s"] = rate
    print(f"ingest: {name} phase done: {figures['embedded']}/{figures['texts']} searchable", flush=True)
    return figures


def report(fig: dict) -> None:
    raw = fig["raw_embedder"]
    phases = fig["phases"]
    rows = [["raw embedder, batches of 96 (texts/s)", raw["per_s"]] + [None] * (len(phases) - 1),
            ["learn() in process, no RQ (texts/s)", fig["learn_in_process"]["per_s"]] + [None] * (len(phases) - 1)]
    head = ["figure"] + [f"{p['phase']}" + (f" @ {p['rate_asked_per_s']:.1f}/s" if p["rate_asked_per_s"] else "")
                         for p in phases]
    for key, label in (("texts", "texts pushed"), ("embedded", "searchable at the end"),
                       ("push_per_s", "push rate (texts/s)"), ("learn_per_s", "stored rate (memories/s)"),
                       ("searchable_per_s", "searchable rate, first push -> last (memories/s)"),
                       ("searchable_per_s_10_90", "searchable rate, 10 %-90 % (memories/s)"),
                       ("to_stored_p50_s", "push -> stored p50 (s)"), ("to_stored_p99_s", "push -> stored p99 (s)"),
                       ("to_searchable_p50_s", "push -> searchable p50 (s)"),
                       ("to_searchable_p90_s", "push -> searchable p90 (s)"),
                       ("to_searchable_p99_s", "push -> searchable p99 (s)"),
                       ("to_searchable_max_s", "push -> searchable max (s)")):
        rows.append([label] + [p[key] for p in phases])
    for role in ("learn", "embed"):
        rows.append([f"CPU ms per memory, {role} worker (+children)"] + [p["cpu_ms_per_memory"][role] for p in phases])
    print()
    print(table(head, rows, digits=2, title=f"Ingest through the real pipeline ({fig['poll_ms']} ms poll)"))
    burst = next(p for p in phases if p["phase"] == "burst")
    steady = next((p for p in phases if p["phase"] == "steady"), None)
    ratio = (burst["searchable_per_s"] or 0) / raw["per_s"]
    ceiling = fig["pause_ceiling"]
    print(f"\nraw embedder: {raw['per_s']:.1f} texts/s ({raw['texts']} texts, {raw['threads']} threads)")
    print(f"ceiling of a backlog flush with the shipped pause: {ceiling['batch']} / max({ceiling['batch']} / raw, "
          f"{ceiling['pause_s']} s) = {ceiling['per_s']:.1f}/s = {ceiling['ratio']:.2f} x raw (no other overhead)")
    print(f"target sustained rate >= {RATE_TARGET} x raw: burst {burst['searchable_per_s']:.1f}/s = {ratio:.2f} x raw "
          f"-> {'PASS' if ratio >= RATE_TARGET else 'FAIL'} (one job per text)")
    batched = next((p for p in phases if p["phase"] == "batched burst"), None)
    if batched:
        b_ratio = (batched["searchable_per_s"] or 0) / raw["per_s"]
        print(f"target sustained rate >= {RATE_TARGET} x raw: batched burst {batched['searchable_per_s']:.1f}/s = "
              f"{b_ratio:.2f} x raw -> {'PASS' if b_ratio >= RATE_TARGET else 'FAIL'} (handed over 50 a job)")
    if steady:
        p50 = steady["to_searchable_p50_s"]
        print(f"target time-to-searchable p50 <= {P50_TARGET_S} s at {steady['rate_asked_per_s']:.1f}/s: {p50:.2f} s "
              f"-> {'PASS' if p50 <= P50_TARGET_S else 'FAIL'}")
    print(f"workers: exit codes {fig['workers']['exit_codes']}, failed jobs {fig['workers']['failed_jobs']}, "
          f"peak RSS MiB {({k: round(v) for k, v in fig['workers']['peak_rss_mib'].items()})}")
    print(f"{fig['load_before']} before, {fig['load_after']} after")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--m", type=int, default=3000, help="texts per phase (default 3000)")
    parser.add_argument("--rate", type=float, default=None,
                        help="steady push rate, texts/s (default: half the measured burst rate)")
    parser.add_argument("--steady-m", type=int, default=None, help="texts in the steady phase (default --m)")
    parser.add_argument("--poll-ms", type=int, default=50, help="store polling interval (default 50 ms)")
    parser.add_argument("--timeout-s", type=float, default=1800, help="per phase, until everything is searchable")
    parser.add_argument("--skip-steady", action="store_true")
    args = parser.parse_args(argv)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    warm = make_texts(10, 303, taken)
    burst = make_texts(args.m, 101, taken)
    steady = make_texts(args.steady_m or args.m, 202, taken)
    batched = make_texts(args.m, 404, taken)
    fig: dict = {"m": args.m, "poll_ms": args.poll_ms, "load_before": load_note()}
    print(f"ingest: {fig['load_before']}; measuring the raw embedder on {len(burst)} texts", flush=True)
    fig["raw_embedder"] = raw_throughput([c for _, c, _ in burst])
    fig["pause_ceiling"] = pause_ceiling(fig["raw_embedder"]["per_s"])
    gc.collect()
    with tempfile.TemporaryDirectory(prefix="twin-ingest-") as tmp:
        fig["learn_in_process"] = learn_in_process([t for t, _, _ in burst], Path(tmp))
        pipe = Pipeline(Path(tmp), args.poll_ms / 1000).start()
        try:
            run_phase(pipe, "warm-up", warm, None, 120)
            fig["phases"] = [run_phase(pipe, "burst", burst, None, args.timeout_s),
                             run_phase(pipe, "batched burst", batched, None, args.timeout_s, batched=True)]
            if not args.skip_steady:
                rate = args.rate or round(0.5 * (fig["phases"][0]["searchable_per_s"] or 10), 1)
                fig["phases"].append(run_phase(pipe, "steady", steady, rate, args.timeout_s))
        finally:
            fig["workers"] = pipe.close()
    fig["load_after"] = load_note()
    report(fig)
    print(f"\nfigures written to {write_json(NAME, fig)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
