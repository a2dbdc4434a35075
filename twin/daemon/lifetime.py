"""Process lifetime guards for the supervisor: one daemon per data dir, and children that die with it."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import signal
from pathlib import Path

from twin.exceptions import TwinError

PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal the kernel sends a process when its parent dies (Linux)."""


class AlreadyRunning(TwinError):
    """Another `twin up` holds the data dir's lock; a second one would fight over Redis and the index."""


class InstanceLock:
    """An exclusive `flock` on `<data dir>/twin.lock`, held for the supervisor's life; the kernel drops it
    when the process dies, however it dies, so a stale lock file never blocks a restart."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise `AlreadyRunning` naming the holder's pid (written into the file)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise AlreadyRunning(f"twin is already running for {self.path.parent} (pid {holder}); "
                                     "stop it first, or use another TWIN_DATA_DIR") from exc
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    @staticmethod
    def holder(path: Path) -> str | None:
        """The pid (as written in the file) of the process that holds the lock at `path`, or None when nobody does
        (the file missing, or its lock free); read-only: a shared `flock` tried and dropped at once."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            return None
        finally:
            os.close(fd)
        return None

    def release(self) -> None:
        """Drop the lock (also dropped by the kernel on exit)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def die_with_parent(sig: int) -> None:
    """Ask the kernel to send `sig` to this process when its parent dies (prctl PR_SET_PDEATHSIG), for use
    as a child's `preexec_fn`: a supervisor killed with SIGKILL leaves no orphan workers or Redis behind.
    A no-op where prctl is unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before prctl took effect
        os.kill(os.getpid(), sig)


def die_with_parent_sigterm() -> None:
    """`die_with_parent(SIGTERM)`: for redis-server, which writes its AOF on SIGTERM."""
    die_with_parent(signal.SIGTERM)


def die_with_parent_sigkill() -> None:
    """`die_with_parent(SIGKILL)`: for workers; their jobs are idempotent and requeued at the next start."""
    die_with_parent(signal.SIGKILL)


class NicedChild:
    """A child's `preexec_fn`: `on_parent_death` (one of the `die_with_parent_…` above), then `os.nice(increment)`,
    run in the child between fork and exec, so every thread the program starts (onnxruntime's, RQ's) inherits the
    lower priority. The supervisor starts the workers so (`Settings.workers_nice`): background learning and
    embedding yield the CPU to what the owner types. A nice call that fails (a sandbox that forbids it) is ignored:
    the child then runs at the supervisor's priority."""

    def __init__(self, increment: int, on_parent_death=die_with_parent_sigkill):
        self.increment, self.on_parent_death = increment, on_parent_death

    def __call__(self) -> None:
        self.on_parent_death()
        if self.increment:
            try:
                os.nice(self.increment)
            except OSError:
                return
