"""Keeping the index sidecar in step with SQLite: the one writer, and the readers (DESIGN.md invariant 4).

The writer (the embedding worker) loads the last checkpoint, or rebuilds it from the stored blobs when
it is missing, stale or corrupt; adds new vectors by `seq` watermark; scrubs deleted ones (tombstones)
and checkpoints atomically. A reader (CLI, chat) loads the checkpoint read-only and searches the
vectors written after its watermark exactly (a numpy "tail"), so it never builds or writes an index.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from twin.activity import Activity
from twin.exceptions import IndexCorrupt
from twin.store import Store
from twin.vectors.index import VectorIndex

log = logging.getLogger(__name__)

CATCH_UP_CHUNK = 5_000
"""Vectors read from SQLite per query while catching up or rebuilding."""
REFRESH_EVERY_S = 1.0
"""A reader looks for new vectors and checkpoints at most this often."""
COMPACT_DELETED_SHARE = 0.25
"""Rebuild (compact) the index at checkpoint time once this share of its elements is deleted."""


def _vectors(rows: list[tuple[int, int, bytes]], dim: int) -> tuple[int, np.ndarray, np.ndarray]:
    ids = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dim)
    return rows[-1][0], ids, matrix


class IndexWriter:
    """The single writer of the index (one per machine: the embedding worker)."""

    def __init__(self, store: Store, index: VectorIndex, activity: Activity):
        self.store, self.index, self.activity = store, index, activity
        self.last_checkpoint_s = 0.0

    def open(self) -> None:
        """Load the checkpoint or rebuild it (one activity line saying why), catch up, scrub, checkpoint."""
        try:
            self.index.load()
            if self.index.watermark > self.store.max_embedding_seq():
                raise IndexCorrupt("stale (newer than the database)")
            self.last_checkpoint_s = time.monotonic()
        except IndexCorrupt as exc:
            self.rebuild(str(exc))
        self.catch_up()
        self.checkpoint()

    def rebuild(self, reason: str) -> None:
        """Build a fresh index from every stored vector of the index's model, then checkpoint it."""
        started = time.monotonic()
        total = self.store.embedding_count(self.index.model_id)
        # vectors deleted before this point are not in SQLite, so the new index never holds them; a deletion
        # during the build keeps its tombstone and is scrubbed at the next checkpoint
        handled = self.store.max_tombstone_seq()
        self.index.create(capacity=max(1024, int(total * 1.25)))
        self.catch_up()
        self.store.clear_tombstones(handled)
        self.index.checkpoint()
        self.last_checkpoint_s = time.monotonic()
        if total == 0 and reason == "missing":
            self.activity.record("index", "Started a new, empty vector index.")
            return
        self.activity.record("index", f"Index rebuilt from {total} stored vectors in "
                                      f"{time.monotonic() - started:.1f} s (the old one was {reason}).")

    def catch_up(self) -> int:
        """Add every stored vector with `seq` above the watermark; returns how many were added."""
        added = 0
        while rows := self.store.embeddings_after(self.index.watermark, self.index.model_id, CATCH_UP_CHUNK):
            seq, ids, matrix = _vectors(rows, self.index.dim)
            self.index.add(ids, matrix, watermark=seq)
            added += len(rows)
        return added

    def scrub(self) -> int:
        """Erase from the index every vector deleted in SQLite (tombstones) that has no newer vector.
        Returns the highest tombstone seq handled (0 if none)."""
        rows = self.store.tombstones()
        if not rows:
            return 0
        ids = {mid for _, mid in rows}
        gone = ids - self.store.live_embedding_ids(ids)
        if gone:
            self.index.remove(sorted(gone))
        return rows[-1][0]

    def checkpoint(self, force: bool = False) -> bool:
        """Scrub, then write the index if anything changed (or `force`); clears the handled tombstones
        only once the file is on disk. Compacts by rebuilding when many elements are deleted. Returns
        whether a file was written."""
        upto = self.scrub()
        if self.index.deleted_count > COMPACT_DELETED_SHARE * max(self.index.live_count, 1) \
                and self.index.deleted_count > 100:
            self.rebuild(f"compacted ({self.index.deleted_count} deleted elements)")
            return True
        if not (self.index.dirty or force):
            return False
        self.index.checkpoint()
        self.last_checkpoint_s = time.monotonic()
        if upto:
            self.store.clear_tombstones(upto)
        return True


class IndexReader:
    """A read-only view for recall: the last checkpoint (if valid) plus an exact tail of newer vectors.

    Without a valid checkpoint every stored vector is in the tail (exact search), so recall still
    works while the writer rebuilds. `refresh()` reloads a newer checkpoint and reads new vectors.
    """

    def __init__(self, store: Store, index: VectorIndex):
        self.store, self.index = store, index
        self.loaded = False
        self._meta_mtime: float | None = None
        self._tail_seq = 0
        self._tail_ids = np.zeros(0, dtype=np.int64)
        self._tail = np.zeros((0, index.dim), dtype=np.float32)
        self._tail_set: set[int] = set()
        self._refreshed_at = float("-inf")

    def open(self) -> None:
        """Load the checkpoint (falling back to exact search when it is missing or corrupt) and the tail."""
        try:
            self._meta_mtime = self.index.meta_path.stat().st_mtime
            self.index.load()
            self.loaded = True
        except (IndexCorrupt, OSError) as exc:
            log.info("index: no usable checkpoint (%s); recall searches stored vectors exactly", exc)
            self.loaded = False
        self._tail_seq = self.index.watermark if self.loaded else 0
        self._tail_ids = np.zeros(0, dtype=np.int64)
        self._tail = np.zeros((0, self.index.dim), dtype=np.float32)
        self._tail_set = set()
        self._refreshed_at = float("-inf")
        self.refresh()

    def refresh(self) -> None:
        """Pick up a newer checkpoint (by the metadata file's mtime) and vectors written since; at most
        once per `REFRESH_EVERY_S` (a recall may miss a vector written in the last second)."""
        now = time.monotonic()
        if now - self._refreshed_at < REFRESH_EVERY_S:
            return
        self._refreshed_at = now
        try:
            mtime = self.index.meta_path.stat().st_mtime
        except OSError:
            mtime = None
        if mtime is not None and mtime != self._meta_mtime:
            self.open()
            return
        ids, parts = [self._tail_ids], [self._tail]
        while rows := self.store.embeddings_after(self._tail_seq, self.index.model_id, CATCH_UP_CHUNK):
            self._tail_seq, new_ids, matrix = _vectors(rows, self.index.dim)
            ids.append(new_ids)
            parts.append(matrix)
        if len(ids) > 1:
            all_ids, matrix = np.concatenate(ids), np.concatenate(parts)
            # a re-embedded memory keeps only its newest vector
            _, last = np.unique(all_ids[::-1], return_index=True)
            keep = np.sort(len(all_ids) - 1 - last)
            self._tail_ids, self._tail = all_ids[keep], matrix[keep]
            self._tail_set = set(self._tail_ids.tolist())

    @property
    def size(self) -> int:
        """Vectors searchable: checkpoint live count + tail."""
        return (self.index.live_count if self.loaded else 0) + len(self._tail_ids)

    def search(self, vector: np.ndarray, k: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        """Up to `k` `(memory id, cosine similarity)` nearest to a `(dim,)` L2-normalised vector, best
        first; only ids in `allowed` when given (one namespace's memories: `VectorIndex.search`'s filter). Ids may
        belong to memories deleted since the checkpoint: callers drop ids they cannot load."""
        found: dict[int, float] = {}
        if self.loaded:
            # a label also in the tail was re-embedded after the checkpoint: the tail has its newer vector
            found.update((i, s) for i, s in self.index.search(vector, k, allowed) if i not in self._tail_set)
        if len(self._tail_ids):
            sims = self._tail @ np.asarray(vector, dtype=np.float32)
            if allowed is not None:
                sims = np.where(np.isin(self._tail_ids, np.fromiter(allowed, dtype=np.int64, count=len(allowed))),
                                sims, -np.inf)
            top = np.argpartition(-sims, k - 1)[:k] if len(sims) > k else np.arange(len(sims))
            for i in top:
                if np.isfinite(sims[i]):
                    found[int(self._tail_ids[i])] = float(sims[i])
        return sorted(found.items(), key=lambda kv: -kv[1])[:k]
