"""The bench corpus's promises that bench/million.py's 1M store rests on: a larger corpus starts with the smaller
one (so its first 100k memories are the 100k store's, with their real vectors), and a derived vector stays in
the cluster of its template."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import _corpus


def test_a_larger_corpus_starts_with_the_smaller_one():
    small, large = _corpus.memories(300), _corpus.memories(1200)
    assert large[:300] == small
    assert len({m["content"].casefold() for m in large}) == 1200


def test_derived_vectors_are_unit_deterministic_and_stay_with_their_template():
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((5, 384)).astype(np.float32)
    base_templates = np.repeat(np.arange(5), 40)
    base = centres[base_templates] + 0.3 * rng.standard_normal((200, 384)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    ids = np.arange(1001, 1101, dtype=np.int64)
    templates = ids % 5

    derived = _corpus.derived_vectors(ids, templates, base, base_templates)

    assert derived.shape == (100, 384) and derived.dtype == np.float32
    assert np.allclose(np.linalg.norm(derived, axis=1), 1, atol=1e-5)
    assert np.array_equal(derived, _corpus.derived_vectors(ids, templates, base, base_templates))
    nearest = np.argmax(derived @ base.T, axis=1)
    assert np.array_equal(base_templates[nearest], templates)
    assert not np.isclose(derived @ base.T, 1, atol=1e-4).any()  # never a copy of a real vector
