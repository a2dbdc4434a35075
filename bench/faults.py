"""Faults that are not crashes, under `twin up` for real: a Redis that refuses writes, and a file that keeps growing.

1. refusal: a daemon on a private Redis learns 3 notes; then Redis refuses writes (`--refusal oom`: maxmemory of
   1 byte with noeviction; `full-disk`: its append-only file on a 4 MB tmpfs of a user+mount namespace, filled by a
   ballast file, where the machine allows it) while 20 more notes are written; after `--hold-s` the refusal is
   lifted (the ballast deleted). Counted: notes learned before, during and after, seconds until all 20 are learned
   (no restart), items handed over, the diary's "Learning paused/resumed" lines and process restarts.
2. growing: one file appended every 0.2 s for `--grow-s` (a log, a download); counted: the diary's "Files:" lines
   and the hand-overs (one learn job each) for that file.
3. kills: tests/fault_run.py's sequence (the learn worker, Redis, the supervisor by SIGTERM and by SIGKILL, the
   embedding worker, each killed once while texts are handed over) on `--kills` distinct texts (default 5,000;
   tests/test_faults.py runs 300 in CI); counted: memories expected (the same texts learned in this process),
   found, lost and doubled (both must be 0), staged items left, pushes refused while Redis restarted, and the
   seconds from the last hand-over until everything was searchable. Not run with `--rev`.

`--rev REV` runs the same scenarios on the daemon as it was at git REV too (an exported tree), beside today's, so
the figures are before and after in one run. Run: `.venv/bin/python bench/faults.py [--rev main]` (~2 min a
revision, ~15 min for the kills at 5,000 on 2 cores; `--scenarios refusal,growing` leaves them out); figures in
bench/out/faults.json.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from _common import REPO_ROOT, bench_env, export_at, load_note, start_redis, stop_process, table, write_json
from redis import Redis

from twin.store import Store

sys.path.insert(0, str(REPO_ROOT / "tests"))  # the full-disk Redis and the kill sequence are the tests' own
from fault_run import FaultRun, expected_contents, run_faults, texts


def note(folder: Path, i: int) -> Path:
    path = folder / f"note-{i:02d}.md"
    path.write_text(f"# Trip number {i}\n\nOn trip {i} the owner hiked to lake number {i} with a friend. "
                    f"The owner camped at site {i} near the lake for two nights.\n")
    return path


def query(db: Path, sql: str) -> list[tuple]:
    if not db.exists():
        return []
    with Store(db) as store:
        return store.conn.execute(sql).fetchall()


def learned_sources(db: Path) -> set[str]:
    return {r[0] for r in query(db, "SELECT DISTINCT source FROM memories")}


def handed_over(db: Path) -> int:
    rows = query(db, "SELECT seq FROM sqlite_sequence WHERE name = 'ingest_items'")
    return rows[0][0] if rows else 0


def diary(db: Path) -> list[str]:
    return [r[0] for r in query(db, "SELECT text FROM activity ORDER BY id")]


def wait_until(predicate, timeout_s: float) -> float | None:
    """Seconds until `predicate()` held, or None when it did not within `timeout_s`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.25)
    return None


def daemon(env: dict, tree: Path | None, log: Path) -> subprocess.Popen:
    env = {**env, "PYTHONPATH": str(tree or REPO_ROOT)}
    with open(log, "ab") as out:
        return subprocess.Popen([sys.executable, "-m", "twin", "up"], cwd=tree or REPO_ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)


class OomRefusal:
    """A private Redis made to refuse writes by `maxmemory` 1 byte (noeviction)."""

    def __init__(self, work: Path):
        self.proc, self.url = start_redis(work / "redis")
        self.client = Redis.from_url(self.url)

    def refuse(self) -> None:
        self.client.config_set("maxmemory-policy", "noeviction")
        self.client.config_set("maxmemory", 1)

    def lift(self) -> None:
        self.client.config_set("maxmemory", 0)

    def close(self) -> None:
        self.client.close()
        stop_process(self.proc)


class DiskRefusal:
    """A Redis whose append-only file's tmpfs fills up (tests/full_disk.py)."""

    def __init__(self, work: Path):
        from full_disk import FullDiskRedis

        self.disk = FullDiskRedis(work / "disk").__enter__()
        self.url = self.disk.url
        self.client = Redis.from_url(self.url)

    def refuse(self) -> None:
        self.disk.fill()
        wait_until(lambda: self.disk.refuses(self.client), 30)

    def lift(self) -> None:
        self.disk.free()

    def close(self) -> None:
        self.client.close()
        self.disk.__exit__(None, None, None)


def refusal_run(kind: str, tree: Path | None, work: Path, hold_s: float) -> dict:
    redis = (OomRefusal if kind == "oom" else DiskRefusal)(work)
    docs = work / "docs"
    docs.mkdir()
    env = bench_env(work / "data", work / "run", work / "config", redis.url, TWIN_FILES_ROOTS=str(docs),
                    TWIN_EMBED_BACKEND="none", HOME=str(work), TWIN_API_ENABLED="false")
    db = work / "data" / "twin.db"
    first = {f"file:{note(docs, i)}" for i in range(3)}
    proc = daemon(env, tree, work / "daemon.log")
    try:
        wait_until(lambda: first <= learned_sources(db), 120)
        before, staged_before = len(learned_sources(db)), handed_over(db)
        redis.refuse()
        later = {f"file:{note(docs, i)}" for i in range(3, 23)}
        time.sleep(hold_s)
        during = len(learned_sources(db) & later)
        redis.lift()
        took = wait_until(lambda: later <= learned_sources(db), 120)
        time.sleep(3)
        lines = diary(db)
        return {"refusal": kind, "before": before, "during": during, "after": len(learned_sources(db) & later),
                "learned_after_lift_s": took, "handed_over": handed_over(db) - staged_before,
                "paused_lines": sum(t.startswith("Learning paused") for t in lines),
                "resumed_lines": sum(t.startswith("Learning resumed") for t in lines),
                "restarts": sum("exited (code" in t for t in lines), "daemon_alive": proc.poll() is None}
    finally:
        stop_process(proc, 60)
        redis.close()


def growing_run(tree: Path | None, work: Path, grow_s: float) -> dict:
    proc_redis, url = start_redis(work / "redis")
    docs = work / "docs"
    docs.mkdir()
    env = bench_env(work / "data", work / "run", work / "config", url, TWIN_FILES_ROOTS=str(docs),
                    TWIN_EMBED_BACKEND="none", HOME=str(work), TWIN_API_ENABLED="false")
    db = work / "data" / "twin.db"
    proc = daemon(env, tree, work / "daemon.log")
    try:
        wait_until(lambda: any(t.startswith("Files: found") for t in diary(db)), 120)
        scanned, staged_before = len(diary(db)), handed_over(db)
        growing = docs / "growing.log"
        started, i = time.monotonic(), 0
        while time.monotonic() - started < grow_s:
            with growing.open("a") as fh:
                fh.write(f"Step {i}: the owner's backup copied folder number {i} to the external disk.\n")
            i += 1
            time.sleep(0.2)
        time.sleep(6)  # it settles and is learned
        files_lines = [t for t in diary(db)[scanned:] if t.startswith("Files:")]
        return {"appends": i, "seconds": grow_s, "diary_lines": len(files_lines),
                "handed_over": handed_over(db) - staged_before, "lines": sorted(set(files_lines))}
    finally:
        stop_process(proc, 60)
        stop_process(proc_redis)


def daemon_env(root: Path) -> dict:
    """A `twin up` environment on its embedded defaults under `root` (as tests/conftest.py's `daemon_env`)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_") and k != "NOTIFY_SOCKET"}
    for name in ("docs", "home", "config"):
        (root / name).mkdir(parents=True)
    (root / "config" / "twin.toml").write_text("# every setting at its default\n")
    env.update({"TWIN_DATA_DIR": str(root / "data"), "TWIN_CONFIG_DIR": str(root / "config"),
                "TWIN_RUNTIME_DIR": str(root / "run"), "TWIN_CONFIG": str(root / "config" / "twin.toml"),
                "TWIN_ENV_FILE": str(root / "config" / "env"), "TWIN_FILES_ROOTS": str(root / "docs"),
                "TWIN_API_PORT": str(port), "PYTHONUNBUFFERED": "1", "HOME": str(root / "home")})
    return env


def kills_run(n: int, timeout_s: float = 1800) -> dict:
    """The kill sequence (tests/fault_run.py `run_faults`) on `n` texts; exact counts against the reference."""
    with TemporaryDirectory(prefix="twin-faults-") as tmp:
        root = Path(tmp)
        lines = texts(n)
        started = time.perf_counter()
        expected = expected_contents(lines, root)
        reference_s = time.perf_counter() - started
        run = FaultRun(daemon_env(root / "daemon"), root / "daemon.log")
        started = time.perf_counter()
        try:
            refused = run_faults(run, lines)
            handed_s = time.perf_counter() - started
            counts = run.wait_settled(sum(expected.values()), timeout_s)
            settle_s = time.perf_counter() - started - handed_s
        finally:
            if run.proc and run.proc.poll() is None:
                run.stop()
        found = run.contents()
    return {"texts": n, "expected": sum(expected.values()), "found": sum(found.values()),
            "lost": sum((expected - found).values()), "doubled": sum((found - expected).values()),
            "embedded": counts["embedded"], "faults": run.faults, "refused_pushes": sum(refused),
            "staged_left": sum(v for k, v in counts.items() if k.startswith("staged_")),
            "reference_s": round(reference_s, 1), "hand_over_s": round(handed_s, 1),
            "searchable_after_last_hand_over_s": round(settle_s, 1)}


def namespaces_allowed() -> bool:
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True)
    return probe.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", help="also run the daemon as it was at this git revision (before/after)")
    parser.add_argument("--hold-s", type=float, default=15.0, help="how long Redis refuses writes (seconds)")
    parser.add_argument("--grow-s", type=float, default=20.0, help="how long the file grows (seconds)")
    parser.add_argument("--kills", type=int, default=5000, help="texts handed over during the kill sequence")
    parser.add_argument("--scenarios", default="refusal,growing,kills", help="which to run, comma-separated")
    args = parser.parse_args()
    scenarios = set(args.scenarios.split(","))
    trees = {"today": None, **({args.rev: export_at(args.rev)} if args.rev else {})}
    kinds = ["oom", *(["full-disk"] if namespaces_allowed() else [])] if "refusal" in scenarios else []
    refusals, growing, kills = [], [], []
    if "kills" in scenarios:
        kills.append(kills_run(args.kills))
        print(table(["figure", "value"], [[k, v] for k, v in kills[0].items()],
                    title=f"{args.kills:,} texts handed over while every process was killed once"))
    for name, tree in trees.items():
        for kind in kinds:
            with TemporaryDirectory(prefix="twin-faults-") as tmp:
                refusals.append({"twin": name, **refusal_run(kind, tree, Path(tmp), args.hold_s)})
        if "growing" not in scenarios:
            continue
        with TemporaryDirectory(prefix="twin-faults-") as tmp:
            growing.append({"twin": name, **growing_run(tree, Path(tmp), args.grow_s)})
    print(table(["twin", "refusal", "before", "during", "after", "learned after lift s", "handed over", "paused",
                 "resumed", "restarts", "alive"],
                [[r["twin"], r["refusal"], r["before"], r["during"], r["after"], r["learned_after_lift_s"],
                  r["handed_over"], r["paused_lines"], r["resumed_lines"], r["restarts"], r["daemon_alive"]]
                 for r in refusals], title=f"20 notes written while Redis refused writes for {args.hold_s:.0f} s"))
    print(table(["twin", "appends", "seconds", "diary lines", "hand-overs (jobs)"],
                [[g["twin"], g["appends"], g["seconds"], g["diary_lines"], g["handed_over"]] for g in growing],
                title="one file appended every 0.2 s"))
    for g in growing:
        print(f"{g['twin']}: the growing file's distinct diary lines: {g['lines'][:3]}")
    if "refusal" in scenarios and "full-disk" not in kinds:
        print("full disk skipped: this machine allows no user+mount namespace (unshare --user --map-root-user)")
    print(load_note())
    print(write_json("faults", {"refusal": refusals, "growing": growing, "kinds": kinds, "kills": kills}))


if __name__ == "__main__":
    main()
