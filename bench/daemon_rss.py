"""Memory of the running daemon with N memories in the store: `twin up` (supervisor + private redis-server +
learn worker + embedding worker), per process and summed, read from /proc.

    .venv/bin/python bench/daemon_rss.py                   # N = 100,000 (the cache of recall_latency.py)
    .venv/bin/python bench/daemon_rss.py --n 10000 --ingest 300

The cached data dir of `recall_latency.py` (store, vectors, index; built if missing) is copied to a temp dir
and `twin up` runs on it with the shipped defaults. Samples: (1) idle, once every child is up, both workers
are registered and the summed RSS has been stable for `--settle-s`; (2) after `--ingest` texts were pushed
through the bus, embedded, and the index checkpoint that follows was written. VmRSS (now), VmHWM (peak) and
PSS (shared pages split, so it sums honestly) per process; the learn worker's short-lived fork per job is
counted while it exists.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _corpus
from _common import (
    OUT_DIR,
    REPO_ROOT,
    bench_env,
    load_note,
    mib,
    proc_cmdline,
    proc_pss_kb,
    proc_status_kb,
    proc_tree,
    stop_process,
    table,
    write_json,
)

NAME = "daemon_rss"


def role(pid: int, supervisor: int) -> str:
    """What a process of the daemon's tree is, by its command line (and its parent's, for forks)."""
    cmd = proc_cmdline(pid)
    if pid == supervisor:
        return "supervisor (twin up)"
    if "redis-server" in cmd:
        return "redis-server"
    for name in ("embed", "learn"):
        if f"workers {name}" in cmd:
            parent = proc_cmdline(_ppid(pid))
            return f"{name} worker" if f"workers {name}" not in parent else f"{name} worker's child (fork)"
    return f"other ({cmd[:40]})"


def _ppid(pid: int) -> int:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
        return int(raw[raw.rindex(")") + 2:].split()[1])
    except (OSError, ValueError):
        return 0


def sample(supervisor: int) -> list[dict]:
    """One reading of every process in the daemon's tree."""
    rows = []
    for pid in proc_tree(supervisor):
        status = proc_status_kb(pid)
        if status:
            rows.append({"pid": pid, "role": role(pid, supervisor), "rss_mib": mib(status.get("VmRSS")),
                         "hwm_mib": mib(status.get("VmHWM")), "anon_mib": mib(status.get("RssAnon")),
                         "pss_mib": mib(proc_pss_kb(pid))})
    return rows


def total(rows: list[dict], key: str) -> float:
    return sum(r[key] for r in rows if not math.isnan(r[key]))


class Daemon:
    """`twin up` on a copy of a data dir; `stop()` sends SIGTERM and waits (the supervisor drains)."""

    def __init__(self, workdir: Path, source_data: Path):
        self.workdir = workdir
        self.data = workdir / "data"
        shutil.copytree(source_data, self.data)
        self.env = bench_env(self.data, workdir / "run", workdir / "config", None)
        twin_bin = Path(sys.executable).with_name("twin")
        self.argv = [str(twin_bin), "up"] if twin_bin.exists() else [sys.executable, "-m", "twin.cli", "up"]
        self.log_path = OUT_DIR / "daemon_rss-twin-up.log"

    def start(self) -> Daemon:
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(self.argv, cwd=REPO_ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        return self

    def redis(self):
        from redis import Redis

        return Redis.from_url(f"unix://{self.workdir / 'run' / 'redis.sock'}?db=0", socket_timeout=5)

    def wait_settled(self, settle_s: float, timeout_s: float) -> float:
        """Wait until 2 workers are registered and the summed RSS moved < 1 % over `settle_s`; returns seconds."""
        from rq import Worker

        started = time.monotonic()
        history: list[tuple[float, float]] = []
        while time.monotonic() - started < timeout_s:
            if self.proc.poll() is not None:
                raise RuntimeError(f"twin up exited with {self.proc.returncode}; see {self.log_path}")
            time.sleep(1)
            try:
                registered = len(Worker.all(connection=self.redis()))
            except Exception:  # noqa: BLE001 - redis not up yet
                registered = 0
            if registered < 2:
                history.clear()
                continue
            now = time.monotonic()
            history.append((now, total(sample(self.proc.pid), "rss_mib")))
            window = [v for t, v in history if t >= now - settle_s]
            if now - history[0][0] >= settle_s and max(window) - min(window) < 0.01 * max(window):
                return now - started
        raise RuntimeError(f"the daemon did not settle within {timeout_s:.0f} s; see {self.log_path}")

    def stop(self) -> int | None:
        code = stop_process(self.proc, grace_s=60)
        self.log.close()
        return code


def ingest(daemon: Daemon, n: int, timeout_s: float) -> dict:
    """Push `n` owner statements through the bus, wait until every new memory they make is embedded and the next
    index checkpoint is on disk; track the largest summed RSS/PSS seen meanwhile (1 s samples)."""
    from twin import ingest
    from twin.ingest import Ingest
    from twin.memory import content_sha256
    from twin.store import Store
    from twin.text.extractor import extract
    from twin.workers.bus import Bus

    db = sqlite3.connect(f"file:{daemon.data / 'twin.db'}?mode=ro", uri=True, timeout=15)
    texts = _corpus.owner_statements(n, seed=909)
    shas = {content_sha256(c.content) for t in texts for c in extract(t)}
    new = [s for s in shas if not db.execute("SELECT 1 FROM memories WHERE content_sha256 = ?", (s,)).fetchone()]
    meta = daemon.data / "index" / "memories.hnsw.json"
    meta_mtime = meta.stat().st_mtime
    bus = Bus(daemon.redis())
    started = time.monotonic()
    with Store(daemon.data / "twin.db") as store:  # a connector's hand-over: staged, then queued by id
        for text in texts:
            ids = ingest.stage(store, [Ingest(_corpus.BEING, "muse", text)])
            bus.push(store, ids, _corpus.BEING, "text")
    peak_rss = peak_pss = 0.0
    embedded_s = checkpoint_s = None
    marks = ",".join("?" * len(new))
    while time.monotonic() - started < timeout_s:
        rows = sample(daemon.proc.pid)
        peak_rss, peak_pss = max(peak_rss, total(rows, "rss_mib")), max(peak_pss, total(rows, "pss_mib"))
        done = db.execute(f"SELECT COUNT(*) FROM memory_embeddings e JOIN memories m ON m.id = e.memory_id"
                          f" WHERE m.content_sha256 IN ({marks})", new).fetchone()[0] if new else 0
        if embedded_s is None and done >= len(new):
            embedded_s = time.monotonic() - started
        if embedded_s is not None and meta.stat().st_mtime != meta_mtime:
            checkpoint_s = time.monotonic() - started
            break
        time.sleep(1)
    db.close()
    return {"texts": n, "new_memories": len(new), "embedded_after_s": embedded_s, "checkpoint_after_s": checkpoint_s,
            "peak_sum_rss_mib": peak_rss, "peak_sum_pss_mib": peak_pss}


def print_sample(rows: list[dict], title: str) -> None:
    body = [[r["role"], r["pid"], r["rss_mib"], r["hwm_mib"], r["anon_mib"], r["pss_mib"]] for r in rows]
    body.append(["sum", None, total(rows, "rss_mib"), total(rows, "hwm_mib"), total(rows, "anon_mib"),
                 total(rows, "pss_mib")])
    print(table(["process", "pid", "VmRSS MiB", "VmHWM (peak) MiB", "RssAnon MiB", "PSS MiB"], body, digits=1,
                title=title))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="memories in the store (default 100000)")
    parser.add_argument("--ingest", type=int, default=300, help="texts pushed after the idle sample (0 = none)")
    parser.add_argument("--settle-s", type=float, default=10, help="RSS must be stable this long (default 10 s)")
    parser.add_argument("--timeout-s", type=float, default=600)
    args = parser.parse_args(argv)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    data, build = _corpus.ensure_store(args.n, log=lambda m: print(m, flush=True))
    fig: dict = {"n": args.n, "store_db_mib": build.get("db_bytes", 0) / 2**20,
                 "index_mib": build.get("index_bytes", 0) / 2**20, "load_before": load_note()}
    with tempfile.TemporaryDirectory(prefix="twin-rss-") as tmp:
        daemon = Daemon(Path(tmp), data).start()
        try:
            fig["settled_after_s"] = daemon.wait_settled(args.settle_s, args.timeout_s)
            fig["idle"] = sample(daemon.proc.pid)
            if args.ingest:
                fig["ingest"] = ingest(daemon, args.ingest, args.timeout_s)
                fig["after_ingest"] = sample(daemon.proc.pid)
        finally:
            fig["exit_code"] = daemon.stop()
    fig["load_after"] = load_note()
    print()
    print_sample(fig["idle"], f"twin up with {args.n:,} memories: idle, settled after {fig['settled_after_s']:.0f} s")
    if args.ingest:
        ing = fig["ingest"]
        print()
        print_sample(fig["after_ingest"], f"after ingesting {ing['texts']} texts, {ing['new_memories']} new "
                                          f"(embedded after {ing['embedded_after_s'] or float('nan'):.0f} s, "
                                          f"checkpoint after {ing['checkpoint_after_s'] or float('nan'):.0f} s)")
        print(f"largest summed VmRSS seen during the ingest: {ing['peak_sum_rss_mib']:.0f} MiB; "
              f"summed PSS: {ing['peak_sum_pss_mib']:.0f} MiB")
    print(f"store {fig['store_db_mib']:.0f} MiB, index {fig['index_mib']:.0f} MiB on disk; "
          f"twin up exit code {fig['exit_code']}; {fig['load_before']} before, {fig['load_after']} after")
    print(f"\nfigures written to {write_json(NAME, fig)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
