"""Recall's touches, written behind the answer (seed 003: a search hit sets `last_accessed`, adds a hit and brings a
cold memory back to warm; `Store.touch` is the rule).

A touch is a write: done inside `Recall.recall` it cost ~0.7 ms of a 7 ms recall at 100k memories
(bench/recall_latency.py), and a recall asked while a worker held SQLite's write lock (a first index, a bulk import)
waited for that lock before it answered. `Touches` takes the ids and returns at once; one thread of its own writes
them through a connection of its own (WAL: the recall's reads never wait for it), ids that arrive while a write is
in flight go together in the next one. `settle()` waits for what was handed over; `close()` settles and lets go.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from twin.exceptions import StoreError
from twin.store import Store

log = logging.getLogger(__name__)


class Touches:
    """Write-behind of recall touches to the store at `path`, in one thread with its own `Store` connection (opened
    at the first touch). Thread-safe. A store that cannot be written (disk full, busy past the busy timeout, gone) is
    one warning line per failed write; the touches of that write are dropped (seed 004: fail-soft; a touch is a
    hint for ranking and decay, never a memory)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._ids: dict[int, None] = {}
        self._now: str | None = None
        self._queued: Future | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._store: Store | None = None

    def add(self, memory_ids: Iterable[int], now: str) -> None:
        """Hand over a touch of `memory_ids` at `now` (UTC ISO-8601); returns without waiting for the write."""
        with self._lock:
            self._ids.update(dict.fromkeys(int(i) for i in memory_ids))
            self._now = now
            if not self._ids or (self._queued is not None and not self._queued.running()
                                 and not self._queued.done()):
                return  # the write queued already takes these too
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-touch")
            self._queued = self._pool.submit(self._write)

    def _write(self) -> None:
        """Write every id handed over so far (`Store.touch`), on the touch thread."""
        with self._lock:
            ids, now = list(self._ids), self._now
            self._ids.clear()
        if not ids or now is None:
            return
        try:
            if self._store is None:
                self._store = Store(self.path).open()
            self._store.touch(ids, now)
        except (sqlite3.Error, StoreError) as exc:
            log.warning("recall: could not record the access of %d memories (%s)", len(ids), exc)

    def settle(self) -> None:
        """Wait until every touch handed over before this call is written (or failed)."""
        with self._lock:
            queued = self._queued
        if queued is not None:
            queued.result()

    def close(self) -> None:
        """Settle, stop the thread and close the connection; safe to call twice."""
        self.settle()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        if self._store is not None:
            self._store.close()
            self._store = None
