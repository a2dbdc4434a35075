"""Files that are still being written wait until they settle before the files connector learns them.

A download, a log or an editor that saves in steps changes a file many times a second; learning it on every
change queued one job and wrote one diary line per change (measured: 142 of each in 20 s for one growing file).
So a file changed while twin runs is held here until its size and mtime stayed the same for `settle_s`
(`files_settle_s`), and learned then, once; one that never stays the same (a log written every second) is
learned at least every `max_s` (`files_settle_max_s`) all the same. A path that is gone or is not a regular file
(a directory moved in, a symlink) is due at once: there is nothing to wait for.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MIN_CHECK_S = 0.1
"""The shortest wait between two checks of the held files (seconds)."""


@dataclass
class Held:
    """One held file: its root, the size (bytes) and mtime_ns last seen, since when (monotonic seconds) they
    stayed so, and since when the file is held."""

    root: Path
    size: int
    mtime_ns: int
    still_since: float
    held_since: float


class Settling:
    """The files changed while running that wait to settle: `hold` them as their changes come in; `due()` gives
    back those to learn now. Blocking (each call `lstat`s); safe from several threads. `clock` is monotonic
    seconds (tests pass their own)."""

    def __init__(self, settle_s: float, max_s: float, clock: Callable[[], float] = time.monotonic):
        self.settle_s = settle_s
        self.max_s = max_s
        self.clock = clock
        self.held: dict[Path, Held] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.held)

    def hold(self, paths: list[tuple[Path, Path]]) -> list[tuple[Path, Path]]:
        """Hold the regular files among `paths` (`(path, root)` pairs); returns the others (gone, a directory, a
        symlink), due at once, and all of them when `settle_s` is 0. A file held already starts waiting again
        if its size or mtime changed."""
        if self.settle_s <= 0:
            return paths
        with self._lock:
            return self._hold(paths)

    def _hold(self, paths: list[tuple[Path, Path]]) -> list[tuple[Path, Path]]:
        now_due = []
        now = self.clock()
        for path, root in paths:
            st = _lstat(path)
            if st is None or not stat.S_ISREG(st.st_mode):
                self.held.pop(path, None)
                now_due.append((path, root))
                continue
            held = self.held.get(path)
            if held is None:
                self.held[path] = Held(root, st.st_size, st.st_mtime_ns, now, now)
            elif (held.size, held.mtime_ns) != (st.st_size, st.st_mtime_ns):
                held.size, held.mtime_ns, held.still_since = st.st_size, st.st_mtime_ns, now
        return now_due

    def due(self) -> tuple[list[tuple[Path, Path]], float]:
        """The held files to learn now, released: settled (unchanged for `settle_s`), held for `max_s`, gone or no
        longer a regular file; and the seconds until the next check is worth making (at least `MIN_CHECK_S`)."""
        with self._lock:
            return self._due()

    def _due(self) -> tuple[list[tuple[Path, Path]], float]:
        now = self.clock()
        ready, next_s = [], self.settle_s
        for path, held in list(self.held.items()):
            st = _lstat(path)
            if st is not None and stat.S_ISREG(st.st_mode) and (held.size, held.mtime_ns) != (st.st_size,
                                                                                            st.st_mtime_ns):
                held.size, held.mtime_ns, held.still_since = st.st_size, st.st_mtime_ns, now
            waited = st is None or not stat.S_ISREG(st.st_mode) or now - held.still_since >= self.settle_s
            if waited or now - held.held_since >= self.max_s:
                del self.held[path]
                ready.append((path, held.root))
            else:
                next_s = min(next_s, held.still_since + self.settle_s - now, held.held_since + self.max_s - now)
        return sorted(ready), max(MIN_CHECK_S, next_s)


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None
