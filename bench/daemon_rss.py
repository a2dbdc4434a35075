"""Memory and cold start of the running daemon with N memories in the store, beside an empty store in the same
run: `twin up` (supervisor + private redis-server + learn worker + embedding worker + scheduler + API), per process
and summed, read from /proc.

    .venv/bin/python bench/daemon_rss.py                   # N = 100,000 (the cache of recall_latency.py)
    .venv/bin/python bench/daemon_rss.py --n 10000 --ingest 300
    .venv/bin/python bench/daemon_rss.py --rest-s 0         # the embedding worker never rests (as before 2026-12)

The cached data dir of `recall_latency.py` (store, vectors, index; built if missing) is copied to a temp dir
and `twin up` runs on it with the shipped defaults; the baseline is the same daemon on an empty data dir.
Cold start: seconds from `twin up` to the supervisor's READY=1 (read on a `NOTIFY_SOCKET` of the bench's), to the
API's first answered search (`POST /v1/search`, the recall warm), and to both workers registered. Samples: (1)
idle, once every child is up, both workers are registered and the summed RSS has been stable for `--settle-s`
(the embedding worker still holds its model and index); (2) rested, once the embedding worker has let go of them
(`TWIN_EMBED_REST_S`, set to `--rest-s`: 30 s here so the bench need not wait the shipped 300 s; the state is the
same) and the RSS is stable again; (3) after `--ingest` texts were pushed through the bus, embedded, and the index
checkpoint that follows was written (N store only), and (4) rested again after it. VmRSS (now), VmHWM (peak) and
PSS (shared pages split, so it sums honestly) per process.
The page cache is warm (the data dir was just copied): a start after a reboot reads the files from disk too.
"""

from __future__ import annotations

import argparse
import math
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import _corpus
from _common import (
    OUT_DIR,
    REPO_ROOT,
    bench_env,
    load_note,
    mib,
    proc_cpu_s,
    proc_pss_kb,
    proc_status_kb,
    proc_tree,
    role,
    stop_process,
    table,
    write_json,
)
from api_latency import free_port

NAME = "daemon_rss"
REST_LINE = "let go of the model and the index"
"""What the embedding worker logs when it rests (`twin.workers.resting`)."""


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
    """`twin up` on a copy of a data dir (None: an empty one), with the API on a free port and a `NOTIFY_SOCKET` of
    ours; `stop()` sends SIGTERM and waits (the supervisor drains)."""

    def __init__(self, workdir: Path, source_data: Path | None, label: str, rest_s: float):
        self.workdir = workdir
        self.data = workdir / "data"
        if source_data is None:
            self.data.mkdir(mode=0o700)
        else:
            shutil.copytree(source_data, self.data)
        self.port = free_port()
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(str(workdir / "notify.sock"))
        self.ready_at: float | None = None
        self.env = bench_env(self.data, workdir / "run", workdir / "config", None, TWIN_API_PORT=str(self.port),
                             NOTIFY_SOCKET=str(workdir / "notify.sock"), TWIN_EMBED_REST_S=str(rest_s))
        twin_bin = Path(sys.executable).with_name("twin")
        self.argv = [str(twin_bin), "up"] if twin_bin.exists() else [sys.executable, "-m", "twin.cli", "up"]
        self.log_path = OUT_DIR / f"daemon_rss-{label}-twin-up.log"

    def start(self) -> Daemon:
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(self.argv, cwd=REPO_ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        threading.Thread(target=self._read_notify, daemon=True).start()
        return self

    def _read_notify(self) -> None:
        while self.ready_at is None:
            message = self.notify.recv(4096).decode()
            if "READY=1" in message.split("\n"):
                self.ready_at = time.monotonic()

    def cold_start(self, timeout_s: float) -> dict:
        """Seconds from the start to READY=1, to the first search the API answers (200) and to both workers
        registered; polls every 50 ms. Also the CPU seconds each process had used when the first search was
        answered: the supervisor's plus the API's is about the wall time of a start on an idle machine (both start
        single-threaded, one after the other), which a shared machine's timings are not."""
        import httpx
        from rq import Worker

        token_path = self.workdir / "config" / "api-token"
        answered_s = workers_s = None
        cpu: dict[str, float] = {}
        deadline = self.started + timeout_s
        while (answered_s is None or workers_s is None or self.ready_at is None) and time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"twin up exited with {self.proc.returncode}; see {self.log_path}")
            if answered_s is None and token_path.exists():
                try:
                    answer = httpx.post(f"http://127.0.0.1:{self.port}/v1/search", json={"query": "coffee", "limit": 5},
                                        headers={"Authorization": f"Bearer {token_path.read_text().strip()}"},
                                        timeout=60)
                    if answer.status_code == 200:
                        answered_s = time.monotonic() - self.started
                        cpu = {role(pid, self.proc.pid): proc_cpu_s(pid)["self_s"] for pid in proc_tree(self.proc.pid)}
                except httpx.TransportError:
                    pass
            if workers_s is None:
                try:
                    if len(Worker.all(connection=self.redis())) >= 2:
                        workers_s = time.monotonic() - self.started
                except Exception:  # noqa: BLE001 - redis not up yet
                    pass
            time.sleep(0.05)
        ready_s = None if self.ready_at is None else self.ready_at - self.started
        return {"ready_s": ready_s, "first_search_s": answered_s, "workers_s": workers_s, "cpu_s_at_first_search": cpu}

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

    def rests(self) -> int:
        """How many times the embedding worker has let go of its model and index (its log lines)."""
        return self.log_path.read_text(errors="replace").count(REST_LINE)

    def wait_rested(self, seen: int, settle_s: float, timeout_s: float) -> float:
        """Wait for a rest after the `seen` ones, then for the RSS to settle; returns seconds."""
        started = time.monotonic()
        while self.rests() <= seen:
            if self.proc.poll() is not None or time.monotonic() - started > timeout_s:
                raise RuntimeError(f"the embedding worker did not rest within {timeout_s:.0f} s; see {self.log_path}")
            time.sleep(1)
        self.wait_settled(settle_s, timeout_s)
        return time.monotonic() - started

    def stop(self) -> int | None:
        code = stop_process(self.proc, grace_s=60)
        self.log.close()
        self.notify.close()
        return code


def ingest(daemon: Daemon, n: int, timeout_s: float) -> dict:
    """Push `n` owner statements through the bus, wait until every new memory they made that still exists is
    embedded and the next index checkpoint is on disk; track the largest summed RSS/PSS seen meanwhile (1 s
    samples). The checkpoint comes with the supervisor's next request (`index_checkpoint_s`, 300 s) or sooner."""
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
        # waiting = new memories still there without a vector: the dream pass (due at boot on the cached store) may
        # merge some of them into older ones, so counting embedded ones up to len(new) would never finish
        made, waiting = db.execute(
            f"SELECT COUNT(*), COUNT(*) - COUNT(e.memory_id) FROM memories m LEFT JOIN memory_embeddings e"
            f" ON e.memory_id = m.id WHERE m.content_sha256 IN ({marks})", new).fetchone() if new else (0, 0)
        if embedded_s is None and made and not waiting:
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


def run_daemon(source: Path | None, label: str, args, ingest_texts: int) -> dict:
    """One `twin up` on a copy of `source` (None: empty): cold start, idle sample, optional ingest, stop."""
    fig: dict = {"label": label}
    with tempfile.TemporaryDirectory(prefix="twin-rss-") as tmp:
        daemon = Daemon(Path(tmp), source, label, args.rest_s).start()
        try:
            fig["cold_start"] = daemon.cold_start(args.timeout_s)
            fig["settled_after_s"] = daemon.wait_settled(args.settle_s, args.timeout_s)
            fig["idle"] = sample(daemon.proc.pid)
            if args.rest_s > 0:
                fig["rested_after_s"] = daemon.wait_rested(0, args.settle_s, args.timeout_s)
                fig["rested"] = sample(daemon.proc.pid)
            if ingest_texts:
                seen = daemon.rests()
                fig["ingest"] = ingest(daemon, ingest_texts, args.timeout_s)
                fig["after_ingest"] = sample(daemon.proc.pid)
                if args.rest_s > 0:  # its rest may have written the checkpoint `ingest` waited for
                    daemon.wait_rested(seen, args.settle_s, args.timeout_s)
                    fig["rested_after_ingest"] = sample(daemon.proc.pid)
        finally:
            fig["exit_code"] = daemon.stop()
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="memories in the store (default 100000)")
    parser.add_argument("--ingest", type=int, default=300, help="texts pushed after the idle sample (0 = none)")
    parser.add_argument("--settle-s", type=float, default=10, help="RSS must be stable this long (default 10 s)")
    parser.add_argument("--rest-s", type=float, default=30,
                        help="TWIN_EMBED_REST_S for both daemons (default 30; shipped 300; 0 = never rests)")
    parser.add_argument("--timeout-s", type=float, default=600)
    args = parser.parse_args(argv)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    data, build = _corpus.ensure_store(args.n, log=lambda m: print(m, flush=True))
    fig: dict = {"n": args.n, "store_db_mib": build.get("db_bytes", 0) / 2**20,
                 "index_mib": build.get("index_bytes", 0) / 2**20, "load_before": load_note()}
    fig["empty"] = run_daemon(None, "empty", args, 0)
    fig["store"] = run_daemon(data, f"n{args.n}", args, args.ingest)
    fig["load_after"] = load_note()
    empty, full = fig["empty"], fig["store"]
    print()
    print_sample(empty["idle"], f"twin up on an empty store (baseline): idle, settled after {empty['settled_after_s']:.0f} s")
    print()
    print_sample(full["idle"], f"twin up with {args.n:,} memories: idle, settled after {full['settled_after_s']:.0f} s")
    if args.rest_s > 0:
        print()
        print_sample(full["rested"], f"the same, rested (the embedding worker let go after {args.rest_s:.0f} s idle)")
    peak = None
    if args.ingest:
        ing = full["ingest"]
        peak = ing["peak_sum_rss_mib"]
        print()
        print_sample(full["after_ingest"], f"after ingesting {ing['texts']} texts, {ing['new_memories']} new "
                                           f"(embedded after {ing['embedded_after_s'] or float('nan'):.0f} s, "
                                           f"checkpoint after {ing['checkpoint_after_s'] or float('nan'):.0f} s)")
    rows = [["idle: summed VmRSS MiB", total(empty["idle"], "rss_mib"), total(full["idle"], "rss_mib")],
            ["idle: summed PSS MiB", total(empty["idle"], "pss_mib"), total(full["idle"], "pss_mib")]]
    if args.rest_s > 0:
        rows += [["rested: summed VmRSS MiB", total(empty["rested"], "rss_mib"), total(full["rested"], "rss_mib")],
                 ["rested: summed PSS MiB", total(empty["rested"], "pss_mib"), total(full["rested"], "pss_mib")]]
        if "rested_after_ingest" in full:
            rows.append(["rested after the ingest: summed VmRSS MiB", None,
                         total(full["rested_after_ingest"], "rss_mib")])
    rows += [["peak: summed VmHWM MiB", total(empty["idle"], "hwm_mib"),
              total(full.get("after_ingest", full["idle"]), "hwm_mib")],
             ["ingest: largest summed VmRSS seen MiB", None, peak]]
    for key, words in (("ready_s", "cold start to READY=1 s"), ("first_search_s", "cold start to a search answered s"),
                       ("workers_s", "cold start to both workers registered s")):
        rows.append([words, empty["cold_start"][key], full["cold_start"][key]])
    def critical_cpu(run: dict) -> float:
        cpu = run["cold_start"]["cpu_s_at_first_search"]
        return cpu.get("supervisor (twin up)", math.nan) + cpu.get("api", math.nan)

    rows.append(["CPU s of supervisor + API at that search", critical_cpu(empty), critical_cpu(full)])
    print()
    print(table(["", "empty store", f"{args.n:,} memories"], rows, digits=2, title="summary (same run)"))
    print(f"store {fig['store_db_mib']:.0f} MiB, index {fig['index_mib']:.0f} MiB on disk; twin up exit codes "
          f"{empty['exit_code']} / {full['exit_code']}; {fig['load_before']} before, {fig['load_after']} after")
    print(f"\nfigures written to {write_json(NAME, fig)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
