"""The fast tier's stand-ins for two processes: `twin …` and `python -m twin.workers ROLE --burst`, run in the test's
own process where a subprocess adds nothing but an interpreter start, imports and a model load.

Each keeps what the process would have had to itself: `twin_cli` gives the command its own stdin, stdout and
stderr (encoded as a pipe's are: UTF-8, stdout `surrogateescape`, stderr `backslashreplace`; decoded as
`subprocess.run(text=True)` does) and log lines at WARNING on stderr (Python's last-resort handler), and puts the
umask back; `burst_worker` runs the worker's own `run_learn`/`run_embed`/`run_scheduler` in a copied context (the
job context it installs goes with it), with the process-level state it touches (signal handlers, the SIGALRM
timer rq's job timeout uses, which pytest-timeout uses too, the umask, the embedding-outage memory) put back.
One subprocess test per entry point stays (tests/test_cli.py, tests/test_workers.py, the daemon tests).
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import logging
import os
import signal
import subprocess
import time


class _Pipe(io.TextIOWrapper):
    """A text stream over bytes, as a process's redirected stdout/stderr: `close()` only flushes (a command may
    close the stream it was handed, as `twin export -o -` does) so the bytes can be read afterwards."""

    def __init__(self, errors: str, data: bytes = b"") -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8", errors=errors, write_through=True)

    def close(self) -> None:
        self.flush()

    def raw_bytes(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()


def _decoded(raw: bytes) -> str:
    """Bytes as `subprocess.run(..., text=True)` reads them: UTF-8, universal newlines."""
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8", newline=None).read()


def twin_cli(*args: str, stdin: str | bytes | None = None, text: bool = True) -> subprocess.CompletedProcess:
    """`twin ARGS` in this process (`twin.cli.main`): a `CompletedProcess` with its exit code and its stdout and
    stderr (str, or bytes when `text` is False). `stdin` is what the command reads (empty when None); it is not
    a terminal. argparse's exits (`--help`, bad usage: 2) are exit codes here too."""
    from twin.cli import main

    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    out, err, inp = _Pipe("surrogateescape"), _Pipe("backslashreplace"), _Pipe("strict", data)
    last_resort = logging.StreamHandler(err)
    last_resort.setLevel(logging.WARNING)
    root = logging.getLogger()
    umask = os.umask(0o077)
    os.umask(umask)
    root.addHandler(last_resort)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _stdin(inp):
            try:
                code = main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        root.removeHandler(last_resort)
        os.umask(umask)
    raw_out, raw_err = out.raw_bytes(), err.raw_bytes()
    if text:
        return subprocess.CompletedProcess(["twin", *args], code, _decoded(raw_out), _decoded(raw_err))
    return subprocess.CompletedProcess(["twin", *args], code, raw_out, raw_err)


@contextlib.contextmanager
def _stdin(stream: io.TextIOWrapper):
    import sys

    saved = sys.stdin
    sys.stdin = stream
    try:
        yield
    finally:
        sys.stdin = saved


def burst_worker(role: str) -> int:
    """Run the twin worker `role` (learn, embed, scheduler) in burst mode in this process, as
    `python -m twin.workers ROLE --burst` does after its start-up (settings from the environment, the umask, twin's
    dirs made private), and return its exit code."""
    from twin.settings import load_settings
    from twin.startup_checks import startup_warnings
    from twin.workers.main import connect_redis, run_embed, run_learn, run_scheduler

    settings = load_settings()
    run = {"learn": run_learn, "embed": run_embed, "scheduler": run_scheduler}[role]
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)}
    alarm_left, _ = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    umask = os.umask(0o077)
    redis = connect_redis(settings)
    try:
        startup_warnings(settings)
        return contextvars.copy_context().run(run, settings, redis, True)
    finally:
        redis.close()
        os.umask(umask)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        if alarm_left:
            signal.setitimer(signal.ITIMER_REAL, max(0.001, alarm_left - (time.monotonic() - started)))


def add_person(name: str) -> str:
    """Add `name` as `twin people add` does (`twin.operations.people.add_person`, with the settings of this
    process's environment); their token."""
    from twin.operations import Context, people
    from twin.settings import load_settings

    ctx = Context.open(load_settings())
    try:
        return people.add_person(ctx, name).token
    finally:
        ctx.close()
