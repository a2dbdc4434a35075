"""The hnswlib sidecar on its own: growth, overwrite, scrubbing on remove, atomic checkpoints, validation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from twin.exceptions import IndexCorrupt
from twin.vectors.index import VectorIndex


def unit(n: int, dim: int = 32, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_grows_before_it_fills_and_finds_every_vector(tmp_path):
    index = VectorIndex(tmp_path / "i.hnsw", 32, "m")
    index.create(capacity=100)
    vectors = unit(1000)
    for start in range(0, 1000, 90):
        index.add(np.arange(start, min(start + 90, 1000)) + 1, vectors[start:start + 90], watermark=start + 90)
    assert index.live_count == 1000
    assert index._index.get_max_elements() >= 1000 / 0.9
    hits = [index.search(vectors[i], 1)[0][0] for i in range(0, 1000, 97)]
    assert hits == [i + 1 for i in range(0, 1000, 97)]


def test_search_clamps_k_and_handles_empty(tmp_path):
    index = VectorIndex(tmp_path / "i.hnsw", 32, "m")
    index.create()
    assert index.search(unit(1)[0], 10) == []
    index.add(np.array([7]), unit(1))
    assert [label for label, _ in index.search(unit(1)[0], 10)] == [7]


def test_overwrite_in_place_and_remove_scrubs_bytes(tmp_path):
    path = tmp_path / "i.hnsw"
    index = VectorIndex(path, 32, "m")
    index.create()
    vectors = unit(3)
    index.add(np.array([1, 2, 3]), vectors)
    index.add(np.array([2]), unit(1, seed=9))  # same label: replaced, not duplicated
    assert index.live_count == 3
    index.checkpoint()
    assert vectors[0].tobytes()[:32] in path.read_bytes()
    assert index.remove([1, 42]) == 1  # unknown labels are ignored
    assert index.remove([1]) == 0  # twice is fine
    index.checkpoint()
    assert vectors[0].tobytes()[:32] not in path.read_bytes()
    assert 1 not in dict(index.search(vectors[0], 3))
    reloaded = VectorIndex(path, 32, "m")
    reloaded.load()
    assert reloaded.live_labels() == {2, 3} and reloaded.deleted_count == 1
    index.add(np.array([1]), vectors[:1])  # a forgotten label can come back (re-embedded)
    assert 1 in index.live_labels()


def test_checkpoint_is_atomic_and_validated(tmp_path):
    path = tmp_path / "i.hnsw"
    index = VectorIndex(path, 32, "m")
    index.create()
    index.add(np.array([1, 2]), unit(2), watermark=2)
    index.checkpoint()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i.hnsw", "i.hnsw.json"]  # no temp files left
    meta = json.loads((tmp_path / "i.hnsw.json").read_text())
    assert meta["watermark"] == 2 and meta["model_id"] == "m" and meta["count"] == 2

    with pytest.raises(IndexCorrupt, match="stale"):
        VectorIndex(path, 32, "another-model").load()
    with pytest.raises(IndexCorrupt, match="stale"):
        VectorIndex(path, 64, "m").load()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte
    path.write_bytes(bytes(data))
    with pytest.raises(IndexCorrupt, match="corrupt"):
        VectorIndex(path, 32, "m").load()
    (tmp_path / "i.hnsw.json").write_text("{")
    with pytest.raises(IndexCorrupt, match="unreadable"):
        VectorIndex(path, 32, "m").load()
    with pytest.raises(IndexCorrupt, match="missing"):
        VectorIndex(tmp_path / "none.hnsw", 32, "m").load()
