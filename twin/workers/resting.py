"""The embedding worker's model and index, let go while it has nothing to do (issue 18: RSS at 100k).

At 100k memories the embedding worker's copy of the hnswlib index is ~171 MiB and the model session ~100 MiB plus
the buffers of the largest batch it ran; an idle workstation daemon holds them for nothing. `RestingVectors` opens
them for a job and, once no job has used them for `embed_rest_s` seconds, catches the index up, checkpoints it
and drops both (then hands the freed heap back to the system, `release_heap`); the next job opens them again (the
saved optimised model ~0.1 s, the checkpoint ~0.2 s at 100k and ~4.7 s at 1M: bench/million.py). The checkpoint
on disk is the same one a restart loads, so resting loses nothing (DESIGN.md invariant 4: SQLite is the truth).

One lock covers a whole job and the rest, so the two never overlap on the worker's store connection.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from twin.exceptions import TwinError
from twin.store.edges import marked_with_vectors
from twin.vectors.index import meta_path_of

if TYPE_CHECKING:
    from twin.store import Store
    from twin.vectors.embedder import Embedder
    from twin.vectors.sidecar import IndexWriter

log = logging.getLogger("twin.worker")

CHECK_EVERY_S = 5.0
"""How often the resting thread looks at the time since the last job (so a rest starts ≤ 5 s late; never more often
than once a second, whatever `embed_rest_s` says)."""


def release_heap() -> bool:
    """Ask glibc to hand free heap pages back to the system (`malloc_trim(0)`): after the model and the index are
    dropped, their many small blocks stay in the process otherwise (measured: 184 MiB -> 76 MiB for one process
    that had embedded 480 texts and held a 100k index). Returns False where the C library has no `malloc_trim`
    (musl, macOS); never raises."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.malloc_trim(0))
    except (OSError, AttributeError):
        return False


def _still_there(path: Path) -> bool:
    """True when the saved index file `path` and its metadata are there and the file has the size the metadata
    wrote (cheap: no checksum; `twin doctor` and a load check that)."""
    try:
        meta = json.loads(meta_path_of(path).read_text())
        return path.stat().st_size == meta.get("size")
    except (OSError, ValueError, AttributeError):
        return False


class RestingVectors:
    """The embedding worker's `Embedder` and `IndexWriter`, opened by `open_both()` (a callable returning both,
    opened) on first use and dropped after `rest_after_s` seconds (monotonic) without a job; 0 never rests.

    Use `held()` around the whole of every embedding-queue job; `rest_if_idle()` is what the resting thread calls.
    `close()` checkpoints what is open and stops the thread (the worker's teardown)."""

    def __init__(self, open_both: Callable[[], tuple[Embedder, IndexWriter]], rest_after_s: float,
                 clock: Callable[[], float] = time.monotonic, on_rest: Callable[[bool], None] | None = None):
        self._open_both, self.rest_after_s, self._clock = open_both, rest_after_s, clock
        self._on_rest = on_rest  # told True at a rest, False when opened again (twin status says it rests)
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None
        self._writer: IndexWriter | None = None
        self._last_used = clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.rests = 0
        """How many times the model and the index were let go (for tests and the log)."""
        self._saved: tuple[int, str] | None = None  # (watermark, model id) of the checkpoint written at the rest

    @property
    def is_open(self) -> bool:
        """Whether the model and the index are held now."""
        return self._writer is not None

    def open_now(self) -> tuple[Embedder, IndexWriter]:
        """Open both (at the worker's start: a model that cannot load or an index that must be rebuilt is known at
        once). Raises what `open_both` raises (`EmbedderError`, `IndexCorrupt` the writer could not repair)."""
        with self._lock:
            return self._opened()

    @contextmanager
    def held(self, use: bool = True) -> Iterator[tuple[Embedder, IndexWriter]]:
        """`(embedder, writer)`, opened if resting, for the duration of one job; no rest starts meanwhile.
        `use=False` is housekeeping (the periodic checkpoint, the dream cycle): it does not restart the idle time,
        or a checkpoint every `index_checkpoint_s` kept a worker with `embed_rest_s` >= that period from ever
        resting (found by a breaker run: 300 s / 300 s rested 34 min late, 30 s / 20 s never).
        Raises what `open_both` raises."""
        with self._lock:
            try:
                yield self._opened()
            finally:
                if use:
                    self._last_used = self._clock()

    def _opened(self) -> tuple[Embedder, IndexWriter]:
        if self._writer is None or self._embedder is None:
            started = self._clock()
            self._embedder, self._writer = self._open_both()
            if self.rests:
                log.info("embed: model and index opened again for new work in %.2f s", self._clock() - started)
                self._tell(False)
        return self._embedder, self._writer

    def _tell(self, resting: bool) -> None:
        if self._on_rest is None:
            return
        try:
            self._on_rest(resting)
        except Exception as exc:  # noqa: BLE001 - a Redis that cannot take the mark costs status a line, no more
            log.debug("embed: could not mark the rest (%s)", exc)

    def rest_if_idle(self) -> bool:
        """Let go of the model and the index if no job used them for `rest_after_s`: catch up, checkpoint, drop,
        release the heap. Returns True if it rested. A checkpoint that fails is logged and the index kept (the
        next job or the next rest tries again)."""
        if self.rest_after_s <= 0 or not self._lock.acquire(blocking=False):
            return False  # a job holds them
        try:
            idle_s = self._clock() - self._last_used
            if self._writer is None or idle_s < self.rest_after_s:
                return False
            try:
                self._writer.catch_up()
                self._writer.checkpoint()
            except (OSError, sqlite3.Error, TwinError) as exc:  # a full disk, a busy store: keep it, try later
                log.warning("embed: could not checkpoint the index before resting (%s); keeping it", exc)
                self._last_used = self._clock()
                return False
            self._saved = (self._writer.index.watermark, self._writer.index.model_id, self._writer.index.path)
            self._embedder = self._writer = None
            gc.collect()
            release_heap()
            self.rests += 1
            self._tell(True)
            log.info("embed: idle for %.0f s: let go of the model and the index (checkpointed) until new work",
                     idle_s)
            return True
        finally:
            self._lock.release()

    def saved_is_whole(self, store: Store) -> bool:
        """True while resting when the checkpoint written at the rest is still all a checkpoint would write: no
        vector stored since, no forgotten vector to scrub (tombstones), no marked memory with a vector waiting for
        its edges. The supervisor's periodic checkpoint request is then answered without opening anything (it came
        every `index_checkpoint_s`, 300 s, and woke a resting worker each time: found by a breaker run). A saved
        file that is gone or truncated since (its size against its metadata's) is not whole: the job opens the
        index, which rebuilds it (a resting daemon stayed degraded until new work came: a breaker run)."""
        with self._lock:
            if self._writer is not None or self._saved is None:
                return False
            watermark, model_id, path = self._saved
            return (_still_there(path) and store.max_embedding_seq() == watermark and not store.tombstones(1)
                    and not marked_with_vectors(store, model_id, 1))

    def start(self) -> None:
        """Start the resting thread (a daemon thread; nothing to do when `rest_after_s` is 0)."""
        if self.rest_after_s <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._rest_loop, name="embed-rest", daemon=True)
        self._thread.start()

    def _rest_loop(self) -> None:
        while not self._stop.wait(max(1.0, min(CHECK_EVERY_S, self.rest_after_s))):  # 1e-300 must not spin
            try:
                self.rest_if_idle()
            except Exception:  # never let the thread die silently
                log.exception("embed: the resting check failed")

    def close(self) -> None:
        """Stop the thread; catch the index up and checkpoint it if open (a warm stop leaves a fresh checkpoint)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._lock:
            if self._writer is not None:
                self._writer.catch_up()
                self._writer.checkpoint()
