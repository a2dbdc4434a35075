"""The live part of the files connector: watchfiles' `awatch` over the roots, kept running whatever one file does.

watchfiles 1.3 stops for good on some single files: a name that is not UTF-8 makes its Rust watcher raise
`WatchfilesRustInternalError: Unable to decode path …` (wrapped in an `ExceptionGroup` by `awatch`'s task group),
and once raised the same watcher raises it again on every later call, losing the batch it was collecting
(measured here). So `WatchLoop` treats a watcher error as the end of that watcher, not of the connector: it starts
a new one and rescans the roots once the new one is up, so nothing changed meanwhile is missed. The rescan finds
the file that broke it and the connector skips it with one diary line (`FilesConnector._utf8_name`).

Each folder is watched on its own (`recursive=False` over `real_dirs`): watchfiles' recursive watch follows
symlinks, so one link to `/` in a watched folder put inotify watches on the whole system and used up the budget
before the folder's own subfolders (a breaker run: their changes were never seen). A folder that appears (made,
moved in) gets a new watcher over every folder, and is then synced as a batch of its own, so a file written into it
before its watch existed is not missed.

Restarts are paced: at once after a quiet spell, otherwise at most one per `RESTART_MIN_S`, and never more than
`RESCAN_SHARE` of the time spent rescanning (a file with a bad name written every second must not keep the
machine busy). Other watcher errors (a root gone, an I/O error) back off from 1 s to 60 s with one `degraded`
diary line; the inotify watch limit switches to polling once (LIBRARY_NOTES §3).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import stat
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import watchfiles

from twin.connectors import stopped_within

if TYPE_CHECKING:
    from twin.activity import Activity

log = logging.getLogger("twin.connectors.files")

WATCH_DEBOUNCE_MS = 1600
"""watchfiles' debounce: a batch is yielded after one quiet step or at most this long (LIBRARY_NOTES §3)."""
RESTART_MIN_S = 2.0
"""Least time between two watcher restarts for a file watchfiles cannot handle (ours: a touched file's change is
picked up within this plus one rescan)."""
RESCAN_SHARE = 0.1
"""Restarts are spaced so that rescans take at most this share of the time (10 %: a 0.5 s rescan waits 5 s)."""
BACKOFF_MIN_S = 1.0
BACKOFF_MAX_S = 60.0
"""Backoff between attempts after any other watcher error: doubles from 1 s, capped at 60 s."""

Changes = set[tuple[watchfiles.Change, str]]


def is_watch_limit(exc: BaseException) -> bool:
    """True for watchfiles' `OSError: OS file watch limit reached` (inotify `max_user_watches`; LIBRARY_NOTES §3)."""
    return isinstance(exc, OSError) and ("watch limit" in str(exc).lower() or exc.errno == errno.ENOSPC)


def is_undecodable_path(exc: BaseException) -> bool:
    """True for the Rust watcher's error on a path that is not UTF-8 (`Unable to decode path …`)."""
    return isinstance(exc, RuntimeError) and "decode path" in str(exc)


def real_dirs(roots: list[Path], enters: Callable[[str], bool]) -> list[Path]:
    """Every folder under `roots` (the roots first) reached without following a symlink and that `enters` (the
    connector's filter: no hidden or tool folder) lets through: what is watched. A folder that cannot be listed is
    watched itself, not entered. Blocking: one `scandir` per folder."""
    out: list[Path] = []
    pending = list(reversed(roots))
    while pending:
        folder = pending.pop()
        out.append(folder)
        try:
            with os.scandir(folder) as entries:
                found = [Path(e.path) for e in entries if _is_real_dir(e) and enters(e.path)]
        except OSError:
            continue
        pending.extend(sorted(found, reverse=True))
    return out


def _is_real_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def watcher_error(exc: BaseException) -> BaseException | None:
    """The watcher's own error inside `exc` (an `OSError` or a `RuntimeError`, unwrapped from the exception groups
    `awatch`'s task group wraps it in), or None when `exc` is anything else (a bug: it must propagate)."""
    leaves = [exc]
    while any(isinstance(e, BaseExceptionGroup) for e in leaves):
        leaves = [leaf for e in leaves for leaf in (e.exceptions if isinstance(e, BaseExceptionGroup) else [e])]
    if leaves and all(isinstance(e, (OSError, RuntimeError)) for e in leaves):
        return leaves[0]
    return None


class WatchLoop:
    """Follows changes under `roots` with watchfiles until `stop` is set, restarting the watcher when it fails.

    `on_changes(changes)` handles one batch; `rescan()` brings every root in line with the disk (without the scan's
    full diary line) and runs after every restart, once the new watcher is up. `watch_filter` is watchfiles'
    filter hook; `enters(path)` says which folders are watched (`real_dirs`); `poll_delay_ms` the polling interval
    once the inotify watch limit is reached."""

    def __init__(self, roots: list[Path], watch_filter: Callable[[watchfiles.Change, str], bool], poll_delay_ms: int,
                 on_changes: Callable[[Changes], Awaitable[None]], rescan: Callable[[], Awaitable[object]],
                 activity: Activity, enters: Callable[[str], bool] = lambda path: True):
        self.roots = roots
        self.watch_filter = watch_filter
        self.enters = enters
        self.poll_delay_ms = poll_delay_ms
        self.on_changes = on_changes
        self.rescan = rescan
        self.activity = activity
        self.polling = False
        self.restarts = 0
        """Watchers started after the first (for status and tests)."""
        self._last_restart = float("-inf")
        self._last_rescan_s = 0.0
        self._backoff_s = BACKOFF_MIN_S
        self._broken = False

    async def run(self, stop: asyncio.Event) -> None:
        """Watch until `stop` is set. The first watcher is set up before this coroutine's first real await, so a
        scan started right after it misses nothing (`FilesConnector.run`); a new folder starts a new watcher at once.
        Raises only on a bug."""
        rescan: bool | set[str] = False  # after a failed watcher every root; after a new folder that folder
        while not stop.is_set():
            roots = [r for r in self.roots if r.is_dir()]  # no await before awatch: see the docstring
            if not roots:
                log.info("files: no root to watch")
                await stop.wait()
                return
            try:
                new = await self._follow(roots, stop, rescan)
                if not new:
                    return
                rescan, delay_s = new, 0.0
            except Exception as exc:  # sorted by watcher_error; anything else is re-raised
                problem = watcher_error(exc)
                if problem is None:
                    raise
                delay_s = self._after(problem)
                rescan = True
            if await stopped_within(stop, delay_s):
                return
            self._last_restart = time.monotonic()
            self.restarts += 1

    def _after(self, problem: BaseException) -> float:
        """What a watcher error means: the seconds to wait before the next watcher (and its rescan)."""
        if not self.polling and is_watch_limit(problem):
            log.warning("files: OS file watch limit reached; polling every %d ms instead", self.poll_delay_ms)
            self.polling = True
            return 0.0
        if isinstance(problem, FileNotFoundError) or getattr(problem, "errno", None) == errno.ENOENT:
            log.info("files: a watched folder went away while the watcher started (%s); watching again", problem)
            return max(0.0, self._last_restart + RESTART_MIN_S - time.monotonic())
        if is_undecodable_path(problem):
            spacing_s = max(RESTART_MIN_S, self._last_rescan_s / RESCAN_SHARE)
            delay_s = max(0.0, self._last_restart + spacing_s - time.monotonic())
            log.info("files: the watcher stopped on a file name that is not UTF-8 (%s); watching again in %.1f s",
                     problem, delay_s)
            return delay_s
        delay_s, self._backoff_s = self._backoff_s, min(self._backoff_s * 2, BACKOFF_MAX_S)
        if not self._broken:
            self._broken = True
            self.activity.record("degraded", f"Files: live watching stopped ({problem}); rescanning the folders "
                                             f"every {BACKOFF_MAX_S:.0f} s at most until it works again.")
        log.warning("files: watching stopped (%s); watching again in %.0f s", problem, delay_s)
        return delay_s

    def _working_again(self) -> None:
        """A batch arrived: the backoff starts over, and a `degraded` line about watching gets its `recovered` one."""
        self._backoff_s = BACKOFF_MIN_S
        if self._broken:
            self._broken = False
            self.activity.record("recovered", "Files: live watching works again.")

    async def _follow(self, roots: list[Path], stop: asyncio.Event, rescan: bool | set[str]) -> set[str] | None:
        """One watcher over every folder (`real_dirs`): create it, rescan when asked (after its watches exist: every
        root for True, those folders as one batch for a set), then hand on every batch until it stops (None), a
        batch brings a new folder (the new folders: the caller starts a new watcher) or it fails (raises)."""
        own_stop = asyncio.Event()  # awatch sets its stop event when cancelled: only this watcher's, never `stop`
        mirror = asyncio.create_task(_mirror(stop, own_stop))
        folders = real_dirs(roots, self.enters)
        watched = {str(f) for f in folders}
        batches = watchfiles.awatch(*folders, watch_filter=self.watch_filter, stop_event=own_stop,
                                    debounce=WATCH_DEBOUNCE_MS, recursive=False,
                                    force_polling=self.polling or None, poll_delay_ms=self.poll_delay_ms,
                                    ignore_permission_denied=True)
        pending = asyncio.ensure_future(anext(batches))
        try:
            await asyncio.sleep(0)  # awatch creates its watches before its first await
            if rescan is True:
                started = time.monotonic()
                await self.rescan()
                self._last_rescan_s = time.monotonic() - started
            elif rescan:
                await self._hand_on({(watchfiles.Change.added, path) for path in rescan})
            while True:
                try:
                    changes = await pending
                except StopAsyncIteration:
                    return None
                self._working_again()
                await self._hand_on(changes)
                new = {path for change, path in changes if change != watchfiles.Change.deleted
                       and path not in watched and _is_real_dir_path(path) and self.enters(path)}
                if new:
                    log.info("files: %d new folder(s); watching them too", len(new))
                    return new
                pending = asyncio.ensure_future(anext(batches))
        finally:
            mirror.cancel()
            if not pending.done():
                own_stop.set()
                pending.cancel()
            await asyncio.gather(pending, mirror, return_exceptions=True)
            await batches.aclose()


    async def _hand_on(self, changes: Changes) -> None:
        try:
            await self.on_changes(changes)
        except Exception:  # loop boundary (STYLE.md 9): the next batch or rescan catches up
            log.exception("files: a batch of %d change(s) failed; going on", len(changes))


def _is_real_dir_path(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


async def _mirror(source: asyncio.Event, target: asyncio.Event) -> None:
    """Set `target` once `source` is set."""
    await source.wait()
    target.set()


