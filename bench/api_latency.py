"""The HTTP API's cost, in one run on one store: recall through `POST /v1/search` (the API as its own process,
`python -m twin.api`, as the daemon runs it) beside in-process `Recall.recall`, same queries, interleaved; then
32 concurrent clients x 200 mixed requests (search 80 %, capture 15 %, forget 5 %).

    .venv/bin/python bench/api_latency.py                    # N = 100,000 (bench/recall_latency.py's cache)
    .venv/bin/python bench/api_latency.py --n 10000 --queries 200 --clients 32 --requests 200

The store (real model vectors, the index built by `IndexWriter`) is `bench/_corpus.ensure_store`'s cache, copied
to a temporary data dir (searches touch and captures write). Targets (the issue): API p50 - in-process p50 <= 3
ms; the mixed load ends with 0 errors and no "database is locked".
"""

from __future__ import annotations

import argparse
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import _corpus
from _common import bench_env, load_note, stop_process, summary_ms, table, write_json

NAME = "api_latency"
OVERHEAD_TARGET_MS = 3.0
MIX = (("search", 0.80), ("capture", 0.15), ("forget", 0.05))
"""The mixed load's share of each request kind (the issue)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_api(env: dict, log: Path, url: str, token_path: Path):
    """`python -m twin.api` with `env`; returns `(process, httpx client with the token)` once a search answers."""
    import httpx

    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "twin.api"], env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if token_path.exists():
            client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token_path.read_text().strip()}"},
                                  timeout=120)
            try:
                if client.post("/v1/search", json={"query": "warm up"}).status_code == 200:
                    return proc, client
            except httpx.TransportError:
                pass
            client.close()
        if proc.poll() is not None:
            raise RuntimeError(f"the API exited ({proc.returncode}); see {log}")
        time.sleep(0.2)
    raise RuntimeError("the API did not answer within 180 s")


@contextmanager
def served_corpus_api(n: int, prefix: str):
    """The `n`-memory corpus store (`_corpus.ensure_store`'s cache) copied to a temporary data dir and served by
    `python -m twin.api` (as the daemon runs it); yields `(settings, client with the token, url, api log path)`, and
    stops the API and removes the copy afterwards."""
    from twin.settings import Settings

    data, _ = _corpus.ensure_store(n, log=lambda m: print(m, flush=True))
    work = Path(tempfile.mkdtemp(prefix=prefix))
    proc = None
    try:
        shutil.copytree(data, work / "data")
        port = free_port()
        env = bench_env(work / "data", work / "run", work / "config", "redis://127.0.0.1:1/0",
                        TWIN_API_PORT=str(port), TWIN_CONFIG=str(work / "twin.toml"))
        (work / "twin.toml").write_text("")
        (work / "config").mkdir()
        settings = Settings(data_dir=work / "data", runtime_dir=work / "run", config_dir=work / "config",
                            being=_corpus.BEING, _env_file=None)
        url = f"http://127.0.0.1:{port}"
        proc, client = start_api(env, work / "api.log", url, settings.api_token_path)
        try:
            yield settings, client, url, work / "api.log"
        finally:
            client.close()
    finally:
        if proc is not None:
            stop_process(proc)
        shutil.rmtree(work, ignore_errors=True)


def latency(settings, client, questions: list[str]) -> dict:
    """Interleaved per query: in-process `Recall.recall(limit=10, touch=True)` over this process's own store and
    recall (`twin.wiring.open_recall`), then the same query through `POST /v1/search` (limit 10)."""
    from twin.store import Store
    from twin.wiring import open_recall

    store = Store(settings.db_path).open()
    recall = open_recall(settings, store)
    try:
        for q in questions[:20]:  # warm both
            recall.recall(settings.being, q, limit=10)
            client.post("/v1/search", json={"query": q, "limit": 10})
        local, api, same = [], [], 0
        for q in questions[20:]:
            started = time.perf_counter()
            mine = recall.recall(settings.being, q, limit=10, touch=True)
            local.append(time.perf_counter() - started)
            started = time.perf_counter()
            answer = client.post("/v1/search", json={"query": q, "limit": 10})
            api.append(time.perf_counter() - started)
            answer.raise_for_status()
            same += [r["id"] for r in answer.json()["results"][:1]] == [h.memory.id for h in mine[:1]]
    finally:
        recall.close()
        store.close()
    return {"in_process": summary_ms(local), "api": summary_ms(api), "same_first_result": same / len(local)}


def mixed_load(url: str, token: str, clients: int, requests: int, questions: list[str]) -> dict:
    """`clients` threads, each its own HTTP connection, `requests` each: search / capture / forget by `MIX` (a
    forget takes a memory that client captured, else an old one). Every non-2xx answer (a 404 for a forget of an
    id another client removed first counts as fine) and every transport error is an error."""
    import httpx

    times: dict[str, list[float]] = {kind: [] for kind, _ in MIX}
    errors: list[str] = []
    lock = threading.Lock()

    def client_loop(n: int) -> None:
        r = random.Random(n)
        mine: list[int] = []
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            for i in range(requests):
                kind = r.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
                try:
                    started = time.perf_counter()
                    if kind == "search":
                        answer = http.post("/v1/search", json={"query": r.choice(questions), "limit": 10})
                    elif kind == "capture":
                        text = f"Owner noted that load client {n} finished step {i} of the drill {r.random()}."
                        answer = http.post("/v1/capture", json={"content": text})
                        if answer.status_code == 200 and answer.json().get("id"):
                            mine.append(answer.json()["id"])
                    else:
                        target = mine.pop() if mine else r.randint(1, 100_000)
                        answer = http.delete(f"/v1/memories/{target}")
                    elapsed = time.perf_counter() - started
                    ok = answer.status_code == 200 or (kind == "forget" and answer.status_code == 404)
                    with lock:
                        times[kind].append(elapsed)
                        if not ok:
                            errors.append(f"{kind} {answer.status_code}: {answer.text[:200]}")
                except httpx.HTTPError as exc:
                    with lock:
                        errors.append(f"{kind} {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=client_loop, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    every = [x for xs in times.values() for x in xs]
    return {"clients": clients, "requests": clients * requests, "wall_s": round(wall, 1),
            "throughput_per_s": round(len(every) / wall, 1), "errors": len(errors), "error_samples": errors[:5],
            "locked": sum("locked" in e for e in errors), "all": summary_ms(every),
            **{kind: summary_ms(xs) for kind, xs in times.items() if xs}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args(argv)
    with served_corpus_api(args.n, "api-bench-") as (settings, client, url, log_path):
        questions = _corpus.queries(args.queries + 20)
        lat = latency(settings, client, questions)
        load = mixed_load(url, settings.api_token_path.read_text().strip(), args.clients, args.requests, questions)
        log = log_path.read_text(errors="replace")
        load["locked_in_log"] = log.count("database is locked")
        load["tracebacks_in_log"] = log.count("Traceback")
    overhead = lat["api"]["p50_ms"] - lat["in_process"]["p50_ms"]
    local, api = lat["in_process"], lat["api"]
    print(table(["", "p50 ms", "p99 ms", "mean ms"],
                [["in-process Recall.recall", local["p50_ms"], local["p99_ms"], local["mean_ms"]],
                 ["POST /v1/search (HTTP)", api["p50_ms"], api["p99_ms"], api["mean_ms"]]],
                title=f"recall at {args.n} memories, {args.queries} queries: p50 overhead {overhead:.2f} ms "
                      f"(target <= {OVERHEAD_TARGET_MS}), ratio {api['p50_ms'] / local['p50_ms']:.2f}, "
                      f"same first result {lat['same_first_result']:.0%}"))
    kinds = [k for k in ("search", "capture", "forget", "all") if k in load]
    print(table(["kind", "count", "p50 ms", "p99 ms", "max ms"],
                [[k, load[k]["n"], load[k]["p50_ms"], load[k]["p99_ms"], load[k]["max_ms"]] for k in kinds],
                title=f"{load['clients']} clients x {args.requests} mixed requests: {load['errors']} errors, "
                      f"{load['locked'] + load['locked_in_log']} 'database is locked', {load['throughput_per_s']}"
                      f" req/s, wall {load['wall_s']} s"))
    path = write_json(NAME, {"n": args.n, "latency": lat, "overhead_p50_ms": round(overhead, 2),
                             "target_ms": OVERHEAD_TARGET_MS, "load": load, "note": load_note()})
    print(f"written {path}")
    return 0 if overhead <= OVERHEAD_TARGET_MS and load["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
