"""Ingest throughput and time-to-searchable through the real pipeline: staged item + Bus.push -> RQ learn worker ->
SQLite -> RQ embedding worker (batched flush) -> vector row, beside the raw embedder in the same run.

    .venv/bin/python bench/ingest.py                    # M = 3000 texts per phase
    .venv/bin/python bench/ingest.py --m 1000 --rate 10

Each phase runs on a temp data dir of its own with a private redis-server (unix socket, as tests/conftest.py starts
it) and the two real workers (`python -m twin.workers learn` and `python -m twin.workers embed`, long-running, not
burst), shipped defaults (flush delay 0.6 s, reschedule 0.2 s, batches of 96), after 10 warm-up texts. Phases: M
texts pushed one `Bus.push` each as fast as possible (single pushes: they share the waiting job), the same with
each text its own `learn_items` job (how single pushes went before: the baseline of that change), M texts handed
over 50 a push (batched), and M single pushes at a steady rate. Each text is a one-sentence owner statement with a
`ref` of its own; a poller reads the store every `--poll-ms` and notes when each staged item is consumed (the
text is done), when a new memory captured from its ref appears and when that memory's vector row appears (it is
searchable: recall readers pick it up by `seq` watermark). What capture made of each phase's texts is reported:
new memories, updated in place, reinforced, rejected.

Targets: sustained rate of the single and the batched pushes >= 0.8 x raw embedder throughput (batches of 96, same
texts, same run); time-to-searchable p50 <= 1.5 s at a steady rate below capacity (default: half the single-push
rate).
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
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(contents), RAW_BATCH):
        embedder.embed(contents[i:i + RAW_BATCH])
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    rss = proc_status_kb()
    return {"texts": len(contents), "seconds": seconds, "per_s": len(contents) / seconds, "threads": embedder.threads,
            "cpu_ms_per_text": 1000 * cpu / len(contents), "peak_rss_mib": mib(rss.get("VmHWM"))}


def pause_ceiling(raw_per_s: float) -> dict:
    """The best rate `flush_pending` can reach on a backlog with the shipped settings: full batches, each starting
    `pause` after the previous one started (the pause overlaps the embedding), with no other cost."""
    from twin.settings import Settings

    batch = Settings.model_fields["embed_batch_max"].default
    pause = Settings.model_fields["embed_reschedule_s"].default
    per_s = batch / max(batch / raw_per_s, pause)
    return {"batch": batch, "pause_s": pause, "per_s": per_s, "ratio": per_s / raw_per_s}


def learn_in_process(texts: list[str], workdir: Path) -> dict:
    """`twin.learn.learning.learn()` alone, in this process, one call and one transaction per text (what a learn job
    does inside the worker, minus RQ, the fork and opening the store)."""
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
    """Reads the store every `interval_s` (its own read-only connection) and records the monotonic time each
    watched staged item was first seen consumed (its row gone from `ingest_items`), each new memory row by the
    `ref` it was captured from (each text has its own), and each memory's first vector row. A memory made and then
    updated in place by another text before a poll counts for the later text."""

    def __init__(self, db: Path, interval_s: float):
        super().__init__(daemon=True, name="poller")
        self.db, self.interval_s = db, interval_s
        self.watched: set[int] = set()
        self.consumed: dict[int, float] = {}
        self.stored: dict[str, tuple[int, float]] = {}  # ref -> (memory id, time)
        self.embedded: dict[int, float] = {}  # memory id -> time
        self.stop = threading.Event()
        self._mid = self._seq = 0

    def watch(self, ids: list[int]) -> None:
        """Follow staged items `ids` (call after they are staged)."""
        self.watched.update(ids)

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
        watched = set(self.watched)  # before the read: every one of these was staged by then
        try:
            left = {r[0] for r in conn.execute("SELECT id FROM ingest_items")}
            rows = conn.execute("SELECT id, json_extract(provenance, '$.captured_from') FROM memories WHERE id > ?"
                                " ORDER BY id", (self._mid,)).fetchall()
            vecs = conn.execute("SELECT seq, memory_id FROM memory_embeddings WHERE seq > ? ORDER BY seq",
                                (self._seq,)).fetchall()
        except sqlite3.OperationalError:  # tables not created yet
            return
        now = time.monotonic()
        for item_id in watched - left - self.consumed.keys():
            self.consumed[item_id] = now
        for mid, ref in rows:
            self.stored.setdefault(ref, (mid, now))
            self._mid = mid
        for seq, mid in vecs:
            self.embedded.setdefault(mid, now)
            self._seq = seq

    def made(self, ref: str) -> int | None:
        """The id of the new memory captured from `ref`, once seen; None if none (yet)."""
        return self.stored[ref][0] if ref in self.stored else None

    def done(self, items: dict[int, str]) -> bool:
        """Every staged item of `items` (id -> its ref) is consumed, and each that made a new memory has its
        vector."""
        return all(i in self.consumed and (ref not in self.stored or self.stored[ref][0] in self.embedded)
                   for i, ref in items.items())

    def wait_for(self, items: dict[int, str], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.done(items):
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
        """CPU seconds so far: each worker plus its reaped children (the learn worker forks one per job), and this
        process (`bench`: staging, pushing, polling)."""
        out = {}
        for role, proc in self.procs.items():
            c = proc_cpu_s(proc.pid)
            out[role] = c["self_s"] + c["children_s"]
        out["bench"] = time.process_time()
        return out

    def jobs_run(self) -> dict[str, int]:
        """Jobs each worker has finished so far (RQ's own count; a learn job is one RQ job whatever it carried)."""
        from rq import Worker

        out = {"learn": 0, "embed": 0}
        for worker in Worker.all(connection=self.redis):
            role = "learn" if "twin-learn" in worker.queue_names() else "embed"
            out[role] += worker.successful_job_count + worker.failed_job_count
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


Pushed = dict[int, tuple[str, float]]
"""staged item id -> (its ref, monotonic push time)"""


def hand_over(pipe: Pipeline, items, one_job_each: bool = False) -> Pushed:
    """What a connector does: stage the texts in SQLite (each with its own `ref`, kept in provenance), then
    `Bus.push` their ids; `one_job_each`: queue each text as its own `learn_items` job instead, as every single push
    did before texts joined one waiting job (the baseline of that change)."""
    from twin import ingest
    from twin.ingest import Ingest

    refs = [f"bench:{sha[:16]}" for _, _, sha in items]
    ids = ingest.stage(pipe.store, [Ingest(BEING, SOURCE, text, ref=ref) for (text, _, _), ref in zip(items, refs,
                                                                                                      strict=True)])
    pipe.poller.watch(ids)
    if one_job_each:
        for item_id in ids:
            [(chunk, job_id)] = pipe.bus.enqueue_items(BEING, [item_id], "text")
            ingest.mark_queued(pipe.store, chunk, job_id)
    else:
        pipe.bus.push(pipe.store, ids, BEING, "text")
    now = time.monotonic()
    return {item_id: (ref, now) for item_id, ref in zip(ids, refs, strict=True)}


def push_burst(pipe: Pipeline, items, one_job_each: bool = False) -> Pushed:
    """One text at a time, one `Bus.push` each, as fast as possible (Telegram messages, a `twin learn` burst)."""
    pushed = {}
    for item in items:
        pushed.update(hand_over(pipe, [item], one_job_each))
    return pushed


def push_batched(pipe: Pipeline, items) -> Pushed:
    """The same burst handed over 50 texts at a time, as a connector's bulk sync does."""
    pushed = {}
    for i in range(0, len(items), 50):
        pushed.update(hand_over(pipe, items[i:i + 50]))
    return pushed


def push_steady(pipe: Pipeline, items, rate: float) -> Pushed:
    pushed, start = {}, time.monotonic()
    for i, item in enumerate(items):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        pushed.update(hand_over(pipe, [item]))
    return pushed


def outcomes(pipe: Pipeline, pushed: Pushed, hits_before: int) -> dict[str, int]:
    """What capture made of the phase's consumed texts: `new` (a new memory row captured from the text's ref),
    `updated` (an older memory now carries its ref: updated in place), `reinforced` (hits the store gained in the
    phase: a duplicate adds one, nothing else in this bench touches) and `rejected` (the rest: nothing kept), plus
    `pending` (not consumed)."""
    poller = pipe.poller
    done = [ref for i, (ref, _) in pushed.items() if i in poller.consumed]
    new = sum(ref in poller.stored for ref in done)
    merged = [ref for ref in done if ref not in poller.stored]
    refs = {r[0] for r in pipe.store.conn.execute(
        "SELECT json_extract(provenance, '$.captured_from') FROM memories WHERE provenance LIKE '%bench:%'")}
    updated = sum(ref in refs for ref in merged)
    hits = pipe.store.conn.execute("SELECT COALESCE(SUM(hits), 0) FROM memories").fetchone()[0] - hits_before
    reinforced = min(hits, len(merged) - updated)
    return {"new": new, "updated": updated, "reinforced": reinforced,
            "rejected": len(merged) - updated - reinforced, "pending": len(pushed) - len(done)}


def phase_figures(name: str, pushed: Pushed, poller: Poller, cpu: dict, complete: bool, made: dict) -> dict:
    """Rates and latencies of one phase: every text is done once its staged item is consumed; the searchable rate
    and time-to-searchable count the texts that became new memories (their vector row stored)."""
    t0 = min(t for _, t in pushed.values())
    last_push = max(t for _, t in pushed.values())
    n = len(pushed)
    consumed = sorted(poller.consumed[i] for i in pushed if i in poller.consumed)
    news = [(poller.stored[ref], t) for i, (ref, t) in pushed.items() if i in poller.consumed and ref in poller.stored]
    embedded = sorted(poller.embedded[mid] for (mid, _), _ in news if mid in poller.embedded)
    to_search = [poller.embedded[mid] - t for (mid, _), t in news if mid in poller.embedded]
    to_store = [stored_t - t for (_, stored_t), t in news]
    k = len(embedded)
    lo, hi = int(0.1 * k), int(0.9 * k) - 1
    mid_rate = (hi - lo) / (embedded[hi] - embedded[lo]) if complete and hi > lo and embedded[hi] > embedded[lo] \
        else None
    return {"phase": name, "texts": n, "complete": complete, "outcomes": made, "consumed": len(consumed),
            "embedded": k, "push_s": last_push - t0, "push_per_s": n / max(last_push - t0, 1e-9),
            "done_per_s": len(consumed) / (consumed[-1] - t0) if consumed else None,
            "learn_per_s": len(news) / (max(stored_t for (_, stored_t), _ in news) - t0) if news else None,
            "searchable_per_s": k / (embedded[-1] - t0) if embedded else None,
            "searchable_per_s_10_90": mid_rate,
            "to_stored_p50_s": percentile(to_store, 50), "to_stored_p99_s": percentile(to_store, 99),
            "to_searchable_p50_s": percentile(to_search, 50), "to_searchable_p90_s": percentile(to_search, 90),
            "to_searchable_p99_s": percentile(to_search, 99), "to_searchable_max_s": max(to_search, default=None),
            "cpu_s": cpu, "cpu_ms_per_memory": {r: 1000 * v / max(k, 1) for r, v in cpu.items()}}


def run_phase(pipe: Pipeline, name: str, items, rate: float | None, timeout_s: float, mode: str = "burst") -> dict:
    """Push `items` (`mode`: `burst`, `one job each`, `batched`; `rate` set: steady), wait until every one is
    consumed and every new memory is searchable (or `timeout_s`), and measure."""
    before, jobs_before = pipe.cpu(), pipe.jobs_run()
    hits_before = pipe.store.conn.execute("SELECT COALESCE(SUM(hits), 0) FROM memories").fetchone()[0]
    if mode == "batched":
        pushed = push_batched(pipe, items)
    elif rate is not None:
        pushed = push_steady(pipe, items, rate)
    else:
        pushed = push_burst(pipe, items, one_job_each=mode == "one job each")
    complete = pipe.poller.wait_for({i: ref for i, (ref, _) in pushed.items()}, timeout_s)
    time.sleep(2 * pipe.poll_s)
    after = pipe.cpu()
    made = outcomes(pipe, pushed, hits_before)
    figures = phase_figures(name, pushed, pipe.poller, {k: after[k] - before[k] for k in after}, complete, made)
    figures["rate_asked_per_s"] = rate
    figures["jobs"] = {k: v - jobs_before[k] for k, v in pipe.jobs_run().items()}
    print(f"ingest: {name} phase done{'' if complete else ' (TIMED OUT)'}: {figures['consumed']}/{figures['texts']}"
          f" consumed, {made}; {figures['embedded']} searchable", flush=True)
    return figures


BURSTS = (("single pushes", "burst", "one Bus.push per text, texts share the waiting job", True),
          ("one job each", "one job each", "each text its own learn job: single pushes before they shared", False),
          ("batched", "batched", "handed over 50 a push", True))
"""The burst phases: name, push mode, what it is, whether the sustained-rate target applies."""


def report(fig: dict) -> None:
    raw = fig["raw_embedder"]
    phases = fig["phases"]
    blank = [None] * (len(phases) - 1)
    rows = [["raw embedder, batches of 96 (texts/s)", raw["per_s"], *blank],
            ["learn() in process, no RQ (texts/s)", fig["learn_in_process"]["per_s"], *blank]]
    head = ["figure"] + [f"{p['phase']}" + (f" @ {p['rate_asked_per_s']:.1f}/s" if p["rate_asked_per_s"] else "")
                         for p in phases]
    rows.append(["texts pushed"] + [p["texts"] for p in phases])
    for key in ("new", "updated", "reinforced", "rejected", "pending"):
        rows.append([f"  {key}" + (" (not consumed at the end)" if key == "pending" else "")]
                    + [p["outcomes"][key] for p in phases])
    rows.append(["learn jobs run"] + [p["jobs"]["learn"] for p in phases])
    for key, label in (("embedded", "new memories searchable at the end"),
                       ("push_per_s", "push rate (texts/s)"), ("done_per_s", "consumed rate (texts/s)"),
                       ("learn_per_s", "stored rate (new memories/s)"),
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
    rows.append(["CPU ms per memory, this process (push, poll)"] + [p["cpu_ms_per_memory"]["bench"] for p in phases])
    rows.append(["raw embedder just before (texts/s)"] + [p["raw_embedder"]["per_s"] for p in phases])
    rows.append(["raw embedder just before (CPU ms a text)"] + [p["raw_embedder"]["cpu_ms_per_text"] for p in phases])
    rows.append(["searchable rate / raw just before"] + [p["ratio"] for p in phases])
    rows.append(["CPU ceiling: raw CPU / pipeline CPU a text"] + [p["cpu_ceiling"] for p in phases])
    print()
    print(table(head, rows, digits=2, title=f"Ingest through the real pipeline ({fig['poll_ms']} ms poll)"))
    ceiling = fig["pause_ceiling"]
    print(f"\nraw embedder: {raw['per_s']:.1f} texts/s ({raw['texts']} texts, {raw['threads']} threads, "
          f"{raw['cpu_ms_per_text']:.2f} CPU ms a text)")
    print(f"ceiling of a backlog flush with the shipped pause: {ceiling['batch']} / max({ceiling['batch']} / raw, "
          f"{ceiling['pause_s']} s) = {ceiling['per_s']:.1f}/s = {ceiling['ratio']:.2f} x raw (no other overhead)")
    for name, _, what, target in BURSTS:
        phase = next((p for p in phases if p["phase"] == name), None)
        if phase is None:
            continue
        ratio, before = phase["ratio"], phase["raw_embedder"]["per_s"]
        verdict = ("PASS" if ratio >= RATE_TARGET and phase["complete"] else "FAIL") if target else "(the before)"
        print(f"sustained rate, {name}: {phase['searchable_per_s'] or 0:.1f}/s = {ratio:.2f} x raw ({before:.1f}/s "
              f"just before; target >= {RATE_TARGET}) -> {verdict}; CPU ceiling {phase['cpu_ceiling']:.2f} x raw; "
              f"{phase['jobs']['learn']} learn jobs ({what})")
    steady = next((p for p in phases if p["phase"] == "steady"), None)
    if steady:
        p50 = steady["to_searchable_p50_s"]
        print(f"target time-to-searchable p50 <= {P50_TARGET_S} s at {steady['rate_asked_per_s']:.1f}/s: {p50:.2f} s "
              f"-> {'PASS' if p50 <= P50_TARGET_S else 'FAIL'}")
    print(f"wall time {fig['wall_s']:.0f} s; each phase on a store of its own (10 warm-up memories first)")
    for p in phases:
        rss = {k: round(v) for k, v in p["workers"]["peak_rss_mib"].items()}
        print(f"  {p['phase']}: worker exit codes {p['workers']['exit_codes']}, failed jobs "
              f"{p['workers']['failed_jobs']}, peak RSS MiB {rss}")
    print(f"{fig['load_before']} before, {fig['load_after']} after")


def fresh_phase(workdir: Path, args, warm, name: str, items, rate: float | None, mode: str) -> dict:
    """One phase on a data dir, Redis and workers of its own, after the warm-up texts: capture's cost grows with
    the store (it compares each new memory with the older ones that share its words), so every phase starts from
    the same store size."""
    raw = raw_throughput([c for _, c, _ in items])  # just before: the load of other processes drifts
    gc.collect()
    pipe = Pipeline(workdir, args.poll_ms / 1000).start()
    try:
        run_phase(pipe, "warm-up", warm, None, 120)
        figures = run_phase(pipe, name, items, rate, args.timeout_s, mode)
    finally:
        workers = pipe.close()
    cpu = figures["cpu_ms_per_memory"]
    figures.update(workers=workers, raw_embedder=raw, ratio=(figures["searchable_per_s"] or 0) / raw["per_s"],
                   cpu_ceiling=raw["cpu_ms_per_text"] / sum(cpu.values()))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--m", type=int, default=3000, help="texts per phase (default 3000)")
    parser.add_argument("--rate", type=float, default=None,
                        help="steady push rate, texts/s (default: half the measured single-push burst rate)")
    parser.add_argument("--steady-m", type=int, default=None, help="texts in the steady phase (default --m)")
    parser.add_argument("--poll-ms", type=int, default=50, help="store polling interval (default 50 ms)")
    parser.add_argument("--timeout-s", type=float, default=600, help="per phase, until every text is consumed and"
                        " every new memory searchable (default 600)")
    parser.add_argument("--skip-steady", action="store_true")
    args = parser.parse_args(argv)
    started = time.monotonic()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    warm = make_texts(10, 303, taken)
    texts = {name: make_texts(args.m, seed, taken) for (name, _, _, _), seed in zip(BURSTS, (101, 505, 404),
                                                                                     strict=True)}
    steady = make_texts(args.steady_m or args.m, 202, taken)
    burst = texts["single pushes"]
    fig: dict = {"m": args.m, "poll_ms": args.poll_ms, "load_before": load_note()}
    print(f"ingest: {fig['load_before']}; measuring the raw embedder on {len(burst)} texts", flush=True)
    fig["raw_embedder"] = raw_throughput([c for _, c, _ in burst])
    fig["pause_ceiling"] = pause_ceiling(fig["raw_embedder"]["per_s"])
    gc.collect()
    with tempfile.TemporaryDirectory(prefix="twin-ingest-") as tmp:
        fig["learn_in_process"] = learn_in_process([t for t, _, _ in burst], Path(tmp))
        fig["phases"] = []
        for name, mode, _, _ in (*BURSTS, *(() if args.skip_steady else (("steady", "steady", "", False),))):
            rate = None
            if mode == "steady":
                rate = args.rate or round(0.5 * (fig["phases"][0]["searchable_per_s"] or 10), 1)
            items = steady if mode == "steady" else texts[name]
            fig["phases"].append(fresh_phase(Path(tmp) / name, args, warm, name, items, rate, mode))
    fig["load_after"] = load_note()
    fig["wall_s"] = time.monotonic() - started
    report(fig)
    print(f"\nfigures written to {write_json(NAME, fig)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
