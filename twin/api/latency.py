"""How long the API took to answer its searches, kept in the API process only (never in SQLite: a timing is no
memory): a bounded ring of `(at, seconds)` that the search routes feed and the page's latency chart reads
(`twin.operations.page.recall_latency`)."""

from __future__ import annotations

import threading
import time
from collections import deque

RING_SIZE = 20_000
"""At most this many searches are remembered (the oldest fall off): an hour at more than five searches a second."""


class SearchTimes:
    """A ring of the newest `size` searches: `(at, seconds)`, `at` the Unix time (seconds) the answer was ready,
    `seconds` the server's time from the route handing the search to the read lane until the answer (the lane's
    queue included: what a caller waited for, less the network). Safe to feed from several threads."""

    def __init__(self, size: int = RING_SIZE):
        if size < 1:
            raise ValueError("size must be at least 1")
        self._ring: deque[tuple[float, float]] = deque(maxlen=size)
        self._lock = threading.Lock()

    def record(self, seconds: float, at: float | None = None) -> None:
        """Remember one search that took `seconds` and ended at `at` (Unix seconds; now when None)."""
        with self._lock:
            self._ring.append((time.time() if at is None else at, seconds))

    def since(self, start: float) -> list[tuple[float, float]]:
        """The searches that ended at `start` (Unix seconds) or later, oldest first."""
        with self._lock:
            return [sample for sample in self._ring if sample[0] >= start]

    def __len__(self) -> int:
        return len(self._ring)
