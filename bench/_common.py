"""Helpers shared by the bench scripts: paths, timing statistics, /proc memory readings, tables, JSON output.

Bench scripts are run as `.venv/bin/python bench/NAME.py`, so this directory is on `sys.path` and they
import this module as `_common`. Nothing here touches the core's state.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
OUT_DIR = BENCH_DIR / "out"
"""Figures (`NAME.json`) and caches go here; git-ignored."""
CACHE_DIR = OUT_DIR / "cache"
SHARED_DIR = next((p / "shared" for p in REPO_ROOT.parents if (p / "shared" / "eval").is_dir()),
                  REPO_ROOT.parent / "shared")
"""The nearest `shared/` beside the repo root or one of its parents (a worktree may sit deeper)."""
DEFAULT_EVAL_DIR = SHARED_DIR / "eval"
"""The personal recall set (`shared/eval`)."""
DEFAULT_LOCOMO_DIR = SHARED_DIR / "eval-locomo"
"""LoCoMo's dev half in the same format (`shared/eval-locomo`)."""


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0..100) by linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summary_ms(seconds: Sequence[float]) -> dict:
    """`{n, p50_ms, p90_ms, p99_ms, mean_ms, max_ms}` of durations given in seconds."""
    ms = [s * 1000 for s in seconds]
    return {"n": len(ms), "p50_ms": percentile(ms, 50), "p90_ms": percentile(ms, 90), "p99_ms": percentile(ms, 99),
            "mean_ms": sum(ms) / len(ms) if ms else float("nan"), "max_ms": max(ms) if ms else float("nan")}


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    """`(elapsed seconds, result)` of one call, by `time.perf_counter`."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


# -- /proc memory -------------------------------------------------------------------------------
def proc_status_kb(pid: int | str = "self") -> dict[str, int]:
    """`VmRSS`, `VmHWM` (peak RSS), `RssAnon`, `RssFile` in KiB from `/proc/PID/status`; {} if the process is gone."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
                    out[key] = int(value.split()[0])
    except (FileNotFoundError, ProcessLookupError):
        return {}
    return out


def reset_peak_rss() -> bool:
    """Reset this process's VmHWM to its current RSS (`echo 5 > /proc/self/clear_refs`, Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def proc_cmdline(pid: int) -> str:
    """The command line of `pid` joined by spaces ('' if gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def proc_children(pid: int) -> list[int]:
    """Direct children of `pid` (via `/proc/PID/task/*/children`)."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            continue
    return kids


def proc_tree(pid: int) -> list[int]:
    """`pid` and all its descendants, parents first."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo += proc_children(p)
    return out


def proc_cpu_s(pid: int) -> dict[str, float]:
    """`{self_s, children_s}`: user+system CPU seconds of `pid` and of its reaped children (/proc/PID/stat)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return {"self_s": float("nan"), "children_s": float("nan")}
    fields = raw[raw.rindex(")") + 2:].split()
    tick = os.sysconf("SC_CLK_TCK")
    utime, stime, cutime, cstime = (int(fields[i]) for i in (11, 12, 13, 14))
    return {"self_s": (utime + stime) / tick, "children_s": (cutime + cstime) / tick}


def mib(kb: float | None) -> float:
    """KiB -> MiB (NaN for None)."""
    return float("nan") if kb is None else kb / 1024


# -- output -------------------------------------------------------------------------------------
def fmt(value: object, digits: int = 2) -> str:
    """A table cell: floats with `digits` decimals, None as '-'."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], digits: int = 2, title: str | None = None) -> str:
    """A plain-text table, first column left-aligned, the rest right-aligned."""
    cells = [[fmt(c, digits) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        pairs = enumerate(zip(values, widths, strict=True))
        return "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in pairs)

    out = [title, "=" * len(title)] if title else []
    out += [line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in cells]
    return "\n".join(out)


def machine() -> dict:
    """Where the figures were measured: CPU count, model name, Python, platform, git commit (read-only)."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                                text=True, timeout=10, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"cpus": os.cpu_count(), "cpu": cpu, "python": sys.version.split()[0], "platform": platform.platform(),
            "commit": commit, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "loadavg_at_end": os.getloadavg()}


def load_note() -> str:
    """One line on the 1-minute load average; the machine may be shared, which makes timings noisy."""
    load1 = os.getloadavg()[0]
    busy = " (busy: other processes compete for the cores; timings are noisy)" \
        if load1 > 0.5 * (os.cpu_count() or 1) else ""
    return f"load average {load1:.2f} on {os.cpu_count()} cores{busy}"


def write_json(name: str, figures: dict) -> Path:
    """Write `figures` (plus machine info) to `bench/out/NAME.json`; returns the path."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{name}.json"
    path.write_text(json.dumps({"bench": name, "machine": machine(), **figures}, indent=2, ensure_ascii=False,
                               default=str) + "\n")
    return path


def bench_env(data: Path, run: Path, config: Path, redis_url: str | None, **extra: str) -> dict[str, str]:
    """A process environment for an isolated twin: ours minus every `TWIN_…`, plus data/runtime/config dirs,
    an XDG config home and env file that do not exist (so only defaults apply), and `TWIN_REDIS_URL` if given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_")}
    env.update(TWIN_DATA_DIR=str(data), TWIN_RUNTIME_DIR=str(run), TWIN_CONFIG_DIR=str(config),
               TWIN_ENV_FILE=str(config / "env"),
               XDG_CONFIG_HOME=str(config / "xdg"), PYTHONUNBUFFERED="1")
    if redis_url:
        env["TWIN_REDIS_URL"] = redis_url
    env.update(extra)
    return env


# -- a private redis-server (as tests/conftest.py starts it) ------------------------------------
def start_redis(workdir: Path, timeout_s: float = 10.0) -> tuple[subprocess.Popen, str]:
    """Start `redis-server` on a unix socket in `workdir` (no TCP port, no persistence); return `(process, url)`.

    Raises `RuntimeError` when redis-server is missing or does not answer within `timeout_s`.
    """
    import shutil

    from redis import Redis

    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (apt-get install redis-server)")
    workdir.mkdir(parents=True, exist_ok=True)
    sock = workdir / "redis.sock"
    proc = subprocess.Popen([binary, "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
                             "--save", "", "--appendonly", "no", "--dir", str(workdir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"unix://{sock}?db=0"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):  # still starting
            if sock.exists() and Redis.from_url(url).ping():
                return proc, url
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


def stop_process(proc: subprocess.Popen, grace_s: float = 30.0) -> int | None:
    """SIGTERM `proc` (one we started), wait up to `grace_s`, then SIGKILL; returns its exit code."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return proc.returncode


def proc_pss_kb(pid: int) -> int | None:
    """Proportional set size (KiB) from `/proc/PID/smaps_rollup`: shared pages split between their users, so PSS
    values of several processes add up without double counting. None when unreadable."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


# -- code of an earlier revision (the "before" side of a bench) ------------------------------------------------
PACKAGES = ("twin", "connectors", "workers", "daemon")
"""The project's import names, today's (`twin`) and those of a revision before daemon/, workers/ and connectors/
moved under `twin/`: what `module_at` exports from a revision (those it has) and swaps out of `sys.modules`."""
FLAT_NAMES = {
    "twin.learn.capture": "twin.capture", "twin.learn.interests": "twin.interests",
    "twin.lifecycle.cycle": "twin.lifecycle", "twin.recall.hybrid": "twin.recall",
    "twin.text.extractor": "twin.extractor", "twin.text.sensitivity": "twin.sensitivity",
    "twin.vectors.embedder": "twin.embedder", "twin.vectors.embedding_flush": "workers.jobs",
    "twin.vectors.index": "twin.index", "twin.vectors.sidecar": "twin.vectors",
    "twin.connectors.email_text": "connectors.email_text",
}
"""Where the modules a bench compares lived before twin's modules moved into subpackages: a revision from before
the move has the name on the right."""


def import_moved(name: str):
    """Module `name`, or the module it was before the package move (`FLAT_NAMES`) when this tree is older (a
    `--before` child runs the bench's current code on an older twin)."""
    import importlib

    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        if name not in FLAT_NAMES:
            raise
        return importlib.import_module(FLAT_NAMES[name])


def export_at(rev: str) -> Path:
    """The project's packages as they were at git `rev`, exported (`git archive`) into a temp dir that lives until
    the process exits. Raises `CalledProcessError` for an unknown revision."""
    import atexit
    import io
    import shutil
    import tarfile
    import tempfile

    listed = subprocess.run(["git", "ls-tree", "--name-only", rev], cwd=REPO_ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    archive = subprocess.run(["git", "archive", rev, *[p for p in PACKAGES if p in listed]], cwd=REPO_ROOT,
                             capture_output=True, check=True).stdout
    tmp = Path(tempfile.mkdtemp(prefix=f"twin-{rev}-"))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp, filter="data")
    atexit.register(shutil.rmtree, tmp, True)
    return tmp


def drop_editable_finders() -> list:
    """Take the editable install's import finder out of `sys.meta_path` and return the finders as they were: it
    answers a name an older revision on `sys.path` lacks with today's module, mixing two versions of twin."""
    finders = sys.meta_path[:]
    sys.meta_path[:] = [f for f in finders if not getattr(f, "__module__", "").startswith("__editable__")]
    return finders


def module_at(rev: str, name: str):
    """Module `name` (today's dotted name; its `FLAT_NAMES` one at a revision before the package move) as it was at
    git `rev`, with its own imports resolved in that revision, beside today's modules: the project's modules are
    swapped out of `sys.modules` while it loads and put back after, so the rest of the bench keeps today's code.
    Raises `CalledProcessError` for an unknown revision, `ModuleNotFoundError` when the module did not exist."""
    root = str(export_at(rev))
    ours = lambda key: key.split(".")[0] in PACKAGES  # noqa: E731
    today = {key: sys.modules.pop(key) for key in [k for k in sys.modules if ours(k)]}
    sys.path.insert(0, root)
    finders = drop_editable_finders()
    try:
        return import_moved(name)
    finally:
        sys.meta_path[:] = finders
        sys.path.remove(root)
        for key in [k for k in sys.modules if ours(k)]:
            del sys.modules[key]
        sys.modules.update(today)


def role(pid: int, supervisor: int) -> str:
    """What a process of the daemon's tree is, by its command line (and its parent's, for forks)."""
    cmd = proc_cmdline(pid)
    if pid == supervisor:
        return "supervisor (twin up)"
    if "redis-server" in cmd:
        return "redis-server"
    if "twin.api" in cmd:
        return "api"
    if "workers scheduler" in cmd:
        return "scheduler"
    for name in ("embed", "learn"):
        if f"workers {name}" in cmd:
            parent = proc_cmdline(parent_pid(pid))
            return f"{name} worker" if f"workers {name}" not in parent else f"{name} worker's child (fork)"
    return f"other ({cmd[:40]})"


def parent_pid(pid: int) -> int:
    """The parent of process `pid` (/proc/PID/stat), 0 when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
        return int(raw[raw.rindex(")") + 2:].split()[1])
    except (OSError, ValueError):
        return 0
