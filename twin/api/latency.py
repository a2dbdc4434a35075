"""How long the API took to answer its searches, kept in the API process only (never in SQLite: a timing is no
memory): a bounded ring of `(at, seconds, interface)` that the search operation feeds (`twin.operations.reads.search`,
through the read lane's `Context.search_times`: every interface the API process serves, its HTTP routes, the page
and `/mcp` alike) and the page's latency chart reads (`twin.operations.page.recall_latency`). A `twin mcp` or CLI
process that answers without the daemon times nothing: its searches are not in the daemon's chart."""

from __future__ import annotations

import threading
import time
from collections import deque

RING_SIZE = 20_000
"""At most this many searches are remembered (the oldest fall off): an hour at more than five searches a second."""


class SearchTimes:
    """A ring of the newest `size` searches: `(at, seconds, interface)`, `at` the Unix time (seconds) the answer was
    ready, `seconds` the search operation's own time in the read lane (from its input checks to its answer; the
    lane's queue and the network not counted), `interface` who asked (`twin.operations.context.ASKING`: `page`,
    `http`, `cli`, `mcp`, `mcp-stdio`). Safe to feed from several threads."""

    def __init__(self, size: int = RING_SIZE):
        if size < 1:
            raise ValueError("size must be at least 1")
        self._ring: deque[tuple[float, float, str]] = deque(maxlen=size)
        self._lock = threading.Lock()

    def record(self, seconds: float, at: float | None = None, interface: str = "local") -> None:
        """Remember one search that took `seconds`, ended at `at` (Unix seconds; now when None), asked by
        `interface`."""
        with self._lock:
            self._ring.append((time.time() if at is None else at, seconds, interface))

    def since(self, start: float, with_interface: bool = False) -> list[tuple]:
        """The searches that ended at `start` (Unix seconds) or later, oldest first: `(at, seconds)`, or `(at,
        seconds, interface)` `with_interface`."""
        with self._lock:
            return [sample if with_interface else sample[:2] for sample in self._ring if sample[0] >= start]

    def __len__(self) -> int:
        return len(self._ring)
