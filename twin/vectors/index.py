"""The hnswlib index sidecar: a cosine ANN index over memory vectors, labelled by memory row id.

It can be deleted at any time and rebuilt from the float32 blobs in SQLite (DESIGN.md invariant 1,
seed 004). Facts relied on (LIBRARY_NOTES §2): explicit labels only; `add_items` with an existing
label overwrites its vector in place; `mark_deleted` keeps the bytes in saved files, so `remove()`
first overwrites the vector with random noise; `save_index` is not atomic, so `checkpoint()` writes a
temp file, fsyncs and renames; `knn_query` raises when fewer than k elements qualify.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import zlib
from pathlib import Path

import hnswlib
import numpy as np

from twin.exceptions import IndexCorrupt

log = logging.getLogger(__name__)

INITIAL_CAPACITY = 1024
"""Elements allocated for a new index; doubled whenever an add would pass 90 % (LIBRARY_NOTES §2)."""
GROW_AT = 0.9
FORMAT = 1


def meta_path_of(path: Path) -> Path:
    """The metadata file of the index file `path`: `<path>.json`."""
    return path.with_name(path.name + ".json")


def _crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as f:
        while chunk := f.read(4 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def saved_file_problem(path: Path, meta: dict) -> str | None:
    """What is wrong with the saved index file `path` against its checkpoint metadata `meta` (the `size` in bytes
    and `crc32` written at the checkpoint), or None when it matches: "missing" or "corrupt (size or checksum
    mismatch)". Reads the whole file once (the checksum); `twin status` and `load` share it."""
    try:
        if path.stat().st_size != meta.get("size") or _crc32(path) != meta.get("crc32"):
            return "corrupt (size or checksum mismatch)"
    except FileNotFoundError:
        return "missing"
    return None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class VectorIndex:
    """An in-memory hnswlib index (space `cosine`, M, ef_construction, query ef) plus its checkpoint files.

    `path` is the index file; `path + ".json"` holds its metadata: model id, dim, watermark (the
    highest `memory_embeddings.seq` it contains), the deleted labels and the file's CRC-32. All
    methods are serialised by one lock (hnswlib searches take no locks of their own).
    """

    def __init__(self, path: Path, dim: int, model_id: str, m: int = 16, ef_construction: int = 200,
                 ef_search: int = 64):
        self.path = Path(path)
        self.meta_path = meta_path_of(self.path)
        self.dim, self.model_id = dim, model_id
        self.m, self.ef_construction, self.ef_search = m, ef_construction, ef_search
        self.watermark = 0
        self._index: hnswlib.Index | None = None
        self._deleted: set[int] = set()
        self._lock = threading.Lock()
        self.dirty = False

    @classmethod
    def for_settings(cls, settings, model_id: str, dim: int) -> VectorIndex:
        """The index of `settings` (its path, M, ef_construction, query ef) for vectors of `model_id`."""
        return cls(settings.index_path, dim, model_id, m=settings.index_m,
                   ef_construction=settings.index_ef_construction, ef_search=settings.index_ef_search)

    # -- lifecycle ------------------------------------------------------------------------------
    def create(self, capacity: int = INITIAL_CAPACITY) -> None:
        """Start an empty index in memory (nothing is written until `checkpoint()`)."""
        index = hnswlib.Index(space="cosine", dim=self.dim)
        index.init_index(max_elements=max(capacity, 16), M=self.m, ef_construction=self.ef_construction,
                         random_seed=100)
        index.set_ef(self.ef_search)
        with self._lock:
            self._index, self._deleted, self.watermark, self.dirty = index, set(), 0, True

    def load(self) -> None:
        """Load the last checkpoint.

        Raises `IndexCorrupt` (the caller rebuilds from SQLite) when a file is missing, the metadata
        is unreadable, the model id, dim or parameters differ, or the CRC does not match (a torn or
        tampered file is never handed to hnswlib, which does not validate its input).
        """
        try:
            meta = json.loads(self.meta_path.read_text())
        except FileNotFoundError as exc:
            raise IndexCorrupt("missing") from exc
        except (OSError, ValueError) as exc:
            raise IndexCorrupt(f"unreadable metadata ({exc})") from exc
        expected = {"format": FORMAT, "model_id": self.model_id, "dim": self.dim, "m": self.m}
        for key, value in expected.items():
            if meta.get(key) != value:
                raise IndexCorrupt(f"stale ({key} is {meta.get(key)!r}, expected {value!r})")
        try:
            if (problem := saved_file_problem(self.path, meta)) is not None:
                raise IndexCorrupt(problem)
            index = hnswlib.Index(space="cosine", dim=self.dim)
            index.load_index(str(self.path), max_elements=int(meta["capacity"]))
        except FileNotFoundError as exc:
            raise IndexCorrupt("missing") from exc
        except (OSError, RuntimeError, KeyError, ValueError) as exc:
            raise IndexCorrupt(f"corrupt ({exc})") from exc
        index.set_ef(self.ef_search)
        with self._lock:
            self._index, self._deleted = index, set(meta.get("deleted", []))
            self.watermark, self.dirty = int(meta["watermark"]), False

    def checkpoint(self) -> None:
        """Write the index atomically: temp file, fsync, rename; then the metadata the same way.

        A crash at any point leaves either the old pair or a pair whose CRC check fails (→ rebuild).
        Raises `OSError` when the disk refuses the write (the old checkpoint stays in place).
        """
        with self._lock:
            index = self._require()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".tmp")
            index.save_index(str(tmp))
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
            meta = {"format": FORMAT, "model_id": self.model_id, "dim": self.dim, "m": self.m,
                    "ef_construction": self.ef_construction, "watermark": self.watermark,
                    "capacity": index.get_max_elements(), "count": index.get_current_count(),
                    "deleted": sorted(self._deleted), "size": self.path.stat().st_size, "crc32": _crc32(self.path)}
            tmp_meta = self.meta_path.with_name(self.meta_path.name + ".tmp")
            with open(tmp_meta, "w") as f:
                json.dump(meta, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp_meta, self.meta_path)
            _fsync_dir(self.path.parent)
            self.dirty = False

    # -- writes ---------------------------------------------------------------------------------
    def add(self, ids: np.ndarray, vectors: np.ndarray, watermark: int | None = None) -> None:
        """Add or overwrite `(n, dim) float32` vectors under labels `ids` (int64 memory ids); grows the
        capacity (×2) before it would pass 90 %. `watermark` records the highest embedding seq included."""
        ids = np.asarray(ids, dtype=np.int64)
        with self._lock:
            index = self._require()
            if len(ids):
                revived = [int(i) for i in ids if int(i) in self._deleted]
                for label in revived:
                    index.unmark_deleted(label)
                    self._deleted.discard(label)
                needed = index.get_current_count() + len(ids)
                capacity = index.get_max_elements()
                if needed > GROW_AT * capacity:
                    while needed > GROW_AT * capacity:
                        capacity *= 2
                    index.resize_index(capacity)
                # many vectors at once (rebuild, catch-up): all cores; a small batch: one thread is faster
                index.add_items(np.asarray(vectors, dtype=np.float32), ids, num_threads=-1 if len(ids) > 512 else 1)
                self.dirty = True
            if watermark is not None and watermark > self.watermark:
                self.watermark, self.dirty = watermark, True

    def remove(self, ids: list[int]) -> int:
        """Erase labels: overwrite each vector with random noise (so no saved file keeps its bytes),
        then mark it deleted. Unknown or already-deleted labels are ignored. Returns how many were erased."""
        with self._lock:
            index = self._require()
            present = set(index.get_ids_list()) if ids else set()
            todo = [int(i) for i in ids if int(i) in present and int(i) not in self._deleted]
            if not todo:
                return 0
            noise = np.random.default_rng().standard_normal((len(todo), self.dim)).astype(np.float32)
            index.add_items(noise, np.asarray(todo, dtype=np.int64), num_threads=1)
            for label in todo:
                index.mark_deleted(label)
            self._deleted.update(todo)
            self.dirty = True
            return len(todo)

    # -- reads ----------------------------------------------------------------------------------
    def search(self, vector: np.ndarray, k: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        """The `k` nearest live labels to a `(dim,)` L2-normalised vector as `(id, cosine similarity)`,
        best first; k is clamped to the live count, and an empty index returns []. With `allowed`, only those
        labels: hnswlib's filter callable, one thread (LIBRARY_NOTES §2: it takes the GIL on every call), k clamped
        to `len(allowed)`, then to the allowed labels the index holds when fewer qualify (some of `allowed` may have no
        vector yet)."""
        query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        with self._lock:
            index = self._require()
            k = min(k, self._live_count(), len(allowed) if allowed is not None else k)
            if k <= 0:
                return []
            while True:
                try:
                    if allowed is None:
                        labels, distances = index.knn_query(query, k=k)
                    else:
                        labels, distances = index.knn_query(query, k=k, num_threads=1, filter=allowed.__contains__)
                    break
                except RuntimeError:
                    qualifying = 0 if allowed is None else len(allowed & set(index.get_ids_list()) - self._deleted)
                    if allowed is None or qualifying >= k or qualifying == 0:
                        log.warning("index: knn_query found fewer than %d elements", k)
                        return []
                    k = qualifying
        return [(int(label), 1.0 - float(d)) for label, d in zip(labels[0], distances[0], strict=True)]

    def _live_count(self) -> int:
        """Live (not deleted) elements; the caller holds the lock."""
        return self._require().get_current_count() - len(self._deleted)

    @property
    def live_count(self) -> int:
        """How many labels are searchable."""
        with self._lock:
            return self._live_count()

    @property
    def deleted_count(self) -> int:
        """How many labels are marked deleted (their bytes already scrubbed)."""
        return len(self._deleted)

    def live_labels(self) -> set[int]:
        """Every searchable label (read-only copy)."""
        with self._lock:
            return set(self._require().get_ids_list()) - self._deleted

    def _require(self) -> hnswlib.Index:
        if self._index is None:
            raise IndexCorrupt("index used before create() or load()")
        return self._index
