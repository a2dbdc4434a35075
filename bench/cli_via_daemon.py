"""`twin recall` wall time with the daemon's API up vs without it, on the same store and the same queries.

    .venv/bin/python bench/cli_via_daemon.py                 # N = 100,000 (the cache of recall_latency.py)
    .venv/bin/python bench/cli_via_daemon.py --n 10000 --rounds 5

The cached data dir of `recall_latency.py` (store, vectors, index; built if missing) is copied to a temp dir. The
API runs as the daemon runs it (`python -m twin.api`, its own recall loaded once); each round runs every query as
`python -m twin recall Q` twice, in turn: through the API (TWIN_API_PORT the live port), and with nothing
listening on the port (the CLI opens the store, loads the model and the index itself: today's path). Each run's
wall time and CPU (user + sys of the child) are recorded; the ratio is taken pair by pair (same query, same
round) so a drift of the machine's speed cancels; both ways must print the same lines. Target (issue 15):
median ratio ≤ 0.2.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _corpus
import httpx
from _common import REPO_ROOT, bench_env, load_note, stop_process, table, write_json

NAME = "cli_via_daemon"


def free_port() -> int:
    """A loopback TCP port nothing listens on now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_api(env: dict[str, str], port: int, token_path: Path, timeout_s: float = 120) -> subprocess.Popen:
    """`python -m twin.api` on `port`; returns once `/v1/status` answers 200 with the token it made."""
    proc = subprocess.Popen([sys.executable, "-m", "twin.api"], env={**env, "TWIN_API_PORT": str(port)},
                            cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the API exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
        try:
            token = token_path.read_text().strip()
            answer = httpx.get(f"http://127.0.0.1:{port}/v1/search", headers={"Authorization": f"Bearer {token}"})
            if answer.status_code in (200, 405):
                # the read lane's recall loads in the background: one search waits for it
                httpx.post(f"http://127.0.0.1:{port}/v1/search", json={"query": "warm up"},
                           headers={"Authorization": f"Bearer {token}"}, timeout=120)
                return proc
        except (OSError, httpx.HTTPError):
            pass
        time.sleep(0.2)
    stop_process(proc)
    raise SystemExit("the API did not answer in time")


def recall_once(env: dict[str, str], query: str) -> tuple[float, float, str]:
    """`python -m twin recall QUERY` as a process: `(wall seconds, CPU seconds of the child, stdout)`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "twin", "recall", query], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"twin recall exited {done.returncode}: {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def run(n: int, n_queries: int, rounds: int) -> dict:
    """The measurement (see the module docstring); returns the figures."""
    source, info = _corpus.ensure_store(n)
    queries = _corpus.queries(n_queries)
    with tempfile.TemporaryDirectory(prefix="twin-bench-cli-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(source, data)
        config = Path(tmp) / "config"
        config.mkdir()
        port, closed = free_port(), free_port()
        env = bench_env(data, Path(tmp) / "run", config, None, TWIN_EMBED_THREADS="1")
        api = start_api(env, port, config / "api-token")
        try:
            up = {**env, "TWIN_API_PORT": str(port)}
            down = {**env, "TWIN_API_PORT": str(closed)}
            rows = []
            for r in range(rounds):
                for q in queries:
                    daemon_wall, daemon_cpu, daemon_out = recall_once(up, q)
                    direct_wall, direct_cpu, direct_out = recall_once(down, q)
                    if daemon_out != direct_out:
                        raise SystemExit(f"the two ways printed different answers for {q!r}:\n{daemon_out}\n---\n"
                                         f"{direct_out}")
                    rows.append({"round": r, "query": q, "daemon_wall_s": daemon_wall, "direct_wall_s": direct_wall,
                                 "daemon_cpu_s": daemon_cpu, "direct_cpu_s": direct_cpu,
                                 "ratio": daemon_wall / direct_wall})
        finally:
            stop_process(api)
    med = {k: statistics.median(row[k] for row in rows) for k in rows[0] if k not in ("round", "query")}
    return {"n": n, "queries": n_queries, "rounds": rounds, "store": info, "runs": rows,
            "median": med, "max_ratio": max(row["ratio"] for row in rows), "target_ratio": 0.2}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="memories in the store (default 100000)")
    parser.add_argument("--queries", type=int, default=5, help="distinct queries (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="times each query runs each way (default 3)")
    args = parser.parse_args(argv)
    os.environ.pop("TWIN_API_PORT", None)
    figures = run(args.n, args.queries, args.rounds)
    med = figures["median"]
    print(table(["", "through the daemon's API", "store opened here", "ratio"], [
        ["wall, median (s)", med["daemon_wall_s"], med["direct_wall_s"], med["ratio"]],
        ["CPU of the CLI, median (s)", med["daemon_cpu_s"], med["direct_cpu_s"],
         med["daemon_cpu_s"] / med["direct_cpu_s"]],
    ], digits=3, title=f"twin recall, {figures['n']} memories, {figures['queries']} queries x {figures['rounds']} "
                       f"rounds (ratio: pair by pair, median; max {figures['max_ratio']:.3f}; target <= 0.2)"))
    print(load_note())
    print(f"figures: {write_json(NAME, figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
