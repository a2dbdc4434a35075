"""A first index of many small files: how `twin status` and `twin recall` answer while it runs, and when it is
searchable.

`--files` realistic small notes (default 20,000: markdown and plain text, a heading and a few sentences each, in
dated folders) are written to a fresh folder, then `twin up` runs on its embedded defaults (its private Redis,
the local model) with that folder as its only root. While it indexes, `twin status --json` and `twin recall
QUERY` run as processes every `--every-s` seconds, as the owner would type them, and are timed from start to
exit. Once the daemon's diary says the backlog is searchable (the line `twin.ingest.BacklogWatch` writes, or the
files connector's older "queued at start are learned and searchable"), the same commands are timed `--idle`
times on the idle daemon: the figures are p50/p99/max during the index beside idle, and their ratios (same run,
same machine). Also: seconds from `twin up` to the searchable line, the memories it made, and
`python -X importtime -m twin status`'s slowest imports.

`--rev REV` runs the same on the daemon and CLI as they were at git REV (an exported tree) first, so the figures
are before and after in one run. Run: `.venv/bin/python bench/first_index.py [--files 20000] [--rev main]`
(about 15-25 min a revision on 2 cores at 20,000 files); figures in bench/out/first_index.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from _common import REPO_ROOT, export_at, load_note, percentile, stop_process, table, write_json
from _corpus import memories
from faults import daemon_env

QUERIES = ("where does my sister live?", "what did I eat in Lisbon?", "which book did I read last summer?",
           "when is the meeting about the billing migration?", "what am I allergic to?")
SEARCHABLE_MARKS = ("Backlog searchable", "are learned and searchable")
"""How the diary says a backlog is searchable: today's line, and the files connector's before it."""
FIRST_PERSON = ((r"\bOwner's\b", "My"), (r"\bOwner\b", "I"), (r"\btheir\b", "my"), (r"\bthey\b", "I"))


def note_files(folder: Path, n: int, seed: int = 7) -> int:
    """Write `n` small notes under `folder` (a heading and 2-7 sentences in the owner's voice, `.md` or `.txt`, in
    `YYYY/MM` folders); returns the bytes written."""
    r = random.Random(seed)
    sentences = [m["content"] for m in memories(n * 5, seed=seed)]
    written = 0
    for i in range(n):
        lines = [sentences[(i * 5 + k) % len(sentences)] for k in range(r.randint(2, 7))]
        for pattern, words in FIRST_PERSON:
            lines = [re.sub(pattern, words, s) for s in lines]
        title = " ".join(lines[0].split()[:5]).rstrip(".,")
        if r.random() < 0.3:
            body = "\n".join(f"- {s}" for s in lines)
        else:
            body = " ".join(lines)
        where = folder / f"{2019 + i % 7}" / f"{1 + i % 12:02d}"
        where.mkdir(parents=True, exist_ok=True)
        suffix = ".md" if i % 3 else ".txt"
        text = (f"# {title}\n\n{body}\n" if suffix == ".md" else f"{title}\n\n{body}\n")
        (where / f"note-{i:05d}{suffix}").write_text(text)
        written += len(text.encode())
    return written


def twin_command(env: dict, *args: str, timeout_s: float = 120) -> tuple[float, subprocess.CompletedProcess]:
    """Run `python -m twin ARGS` as the owner would; `(seconds from start to exit, the finished process)`."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "twin", *args], env=env, cwd=env["PYTHONPATH"], capture_output=True,
                          text=True, timeout=timeout_s, check=False)  # cwd: `-m` puts it first on sys.path
    return time.perf_counter() - started, done


def diary_text(env: dict) -> str:
    """The daemon's diary, oldest first, as `twin activity --json -n 200` prints it (the last 200 lines)."""
    _, done = twin_command(env, "activity", "--json", "-n", "200")
    return done.stdout


def summary(seconds: list[float]) -> dict:
    """`{n, p50_s, p99_s, max_s}` of `seconds`."""
    return {"n": len(seconds), "p50_s": percentile(seconds, 50), "p99_s": percentile(seconds, 99),
            "max_s": max(seconds, default=float("nan"))}


def slowest_imports(env: dict, top: int = 8) -> dict:
    """`python -X importtime -m twin status`: the whole run's seconds, and the `top` imports by cumulative time
    (seconds) of the top-level packages only (`twin.…`, `numpy`, `redis`…)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "twin", "status", "--json"], env=env,
                          cwd=env["PYTHONPATH"], capture_output=True, text=True, timeout=120, check=False)
    took = time.perf_counter() - started
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            name = parts[2].rstrip()
            depth = (len(name) - len(name.lstrip())) // 2
            rows.append((int(parts[1]) / 1e6, depth, name.strip()))
    total = sum(s for s, depth, _ in rows if depth == 0)
    shallow = sorted(((s, n) for s, d, n in rows if d <= 1), reverse=True)[:top]
    return {"run_s": took, "imports_s": total, "slowest": [[n, s] for s, n in shallow]}


def one_run(label: str, tree: Path | None, n: int, every_s: float, idle: int, timeout_s: float,
            during_s: float | None = None) -> dict:
    """The first index of `n` notes under the daemon of `tree` (None: this checkout), sampled; its figures. With
    `during_s`, sampling stops after that many seconds of the index and the idle samples are left out (a run too
    long for the time at hand: the figures during the index alone)."""
    with TemporaryDirectory(prefix="twin-first-index-") as tmp:
        root = Path(tmp)
        env = daemon_env(root)
        env["PYTHONPATH"] = str(tree or REPO_ROOT)
        size = note_files(root / "docs", n)
        print(f"[{label}] wrote {n:,} notes ({size / 1e6:.1f} MB); {load_note()}", flush=True)
        figures: dict = {"files": n, "bytes": size, "during": {}, "idle": {}}
        log = open(root / "daemon.log", "wb")  # noqa: SIM115 - closed in finally
        started = time.perf_counter()
        daemon = subprocess.Popen([sys.executable, "-m", "twin", "up"], env=env, cwd=env["PYTHONPATH"], stdout=log,
                                  stderr=subprocess.STDOUT)  # cwd: `-m` puts it first on sys.path
        during: dict[str, list[float]] = {"status": [], "recall": []}
        progress = []
        try:
            searchable_s = None
            while time.perf_counter() - started < (timeout_s if during_s is None else during_s):
                took, done = twin_command(env, "status", "--json")
                report = json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else {}
                at = time.perf_counter() - started
                if report:
                    during["status"].append(took)
                    progress.append({"at_s": round(at, 1), "status_s": round(took, 3),
                                     "memories": report.get("memories"), "embedded": report.get("embedded"),
                                     "staged": report.get("staged"), "files": report.get("files")})
                took, done = twin_command(env, "recall", QUERIES[len(during["recall"]) % len(QUERIES)])
                if done.returncode == 0:
                    during["recall"].append(took)
                if progress:
                    last = progress[-1]
                    print(f"[{label}] {at:6.0f} s  status {last['status_s']:.2f} s  recall {took:.2f} s  "
                          f"memories {last['memories']}  embedded {last['embedded']}  staged {last['staged']}",
                          flush=True)
                if any(mark in diary_text(env) for mark in SEARCHABLE_MARKS):
                    searchable_s = time.perf_counter() - started
                    break
                time.sleep(every_s)
            figures["searchable_s"] = searchable_s
            figures["progress"] = progress
            quiet: dict[str, list[float]] = {"status": [], "recall": []}
            for i in range(idle if searchable_s is not None else 0):
                quiet["status"].append(twin_command(env, "status", "--json")[0])
                quiet["recall"].append(twin_command(env, "recall", QUERIES[i % len(QUERIES)])[0])
            for name in ("status", "recall"):
                figures["during"][name] = summary(during[name])
                figures["idle"][name] = summary(quiet[name])
            figures["importtime"] = slowest_imports(env)
            _, done = twin_command(env, "status", "--json")
            final = json.loads(done.stdout)
            figures["memories"], figures["embedded"] = final["memories"], final["embedded"]
            figures["diary"] = [line for line in diary_text(env).splitlines()
                                if any(w in line for w in ("Files:", "searchable", "Index"))][-6:]
        finally:
            stop_process(daemon, 60)
            log.close()
        return figures


def report(runs: dict[str, dict]) -> None:
    """Print the tables of every run."""
    rows = []
    for label, fig in runs.items():
        for name in ("status", "recall"):
            d, i = fig["during"][name], fig["idle"][name]
            ratios = [d["p50_s"] / i["p50_s"], d["p99_s"] / i["p99_s"]] if i["n"] else [None, None]
            rows.append([f"{label}: twin {name}", d["n"], d["p50_s"], d["p99_s"], d["max_s"], i["p50_s"], i["p99_s"],
                         *ratios])
    print(table(["", "n during", "p50 s", "p99 s", "max s", "idle p50 s", "idle p99 s", "p50 ratio", "p99 ratio"],
                rows, digits=2, title="CLI latency during the first index vs idle"))
    print()
    print(table(["", "files", "memories", "embedded", "to searchable s", "status imports s"],
                [[label, fig["files"], fig["memories"], fig["embedded"], fig["searchable_s"],
                  fig["importtime"]["imports_s"]] for label, fig in runs.items()], digits=1,
                title="First index"))
    for label, fig in runs.items():
        print(f"\n[{label}] slowest imports of `twin status`: "
              + ", ".join(f"{n} {s:.2f} s" for n, s in fig["importtime"]["slowest"]))
        print(f"[{label}] diary: " + "\n    ".join(fig["diary"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20_000, help="notes to write and index (default 20,000)")
    parser.add_argument("--every-s", type=float, default=3.0, help="seconds between samples (default 3)")
    parser.add_argument("--idle", type=int, default=20, help="samples of each command once idle (default 20)")
    parser.add_argument("--timeout-s", type=float, default=3600, help="give up on one index after this long")
    parser.add_argument("--rev", help="first run the daemon as it was at this git revision (before/after)")
    parser.add_argument("--rev-only", action="store_true", help="with --rev: only that revision")
    parser.add_argument("--during-s", type=float, help="sample only this long into the index, no idle samples")
    args = parser.parse_args(argv)
    trees = {**({args.rev: export_at(args.rev)} if args.rev else {}), **({} if args.rev_only else {"today": None})}
    runs = {label: one_run(label, tree, args.files, args.every_s, args.idle, args.timeout_s, args.during_s)
            for label, tree in trees.items()}
    report(runs)
    path = write_json("first_index", {"args": vars(args), "runs": runs})
    print(f"\nfigures: {path}")
    return 0


if __name__ == "__main__":
    os.environ.pop("NOTIFY_SOCKET", None)
    sys.exit(main())
