"""Tests of twin.embedder against the real all-MiniLM-L6-v2 int8 model (no mocks); the model is opened once."""

from __future__ import annotations

import numpy as np
import pytest

from twin.embedder import BATCH_SIZE, LocalEmbedder, make_embedder
from twin.exceptions import EmbedderError


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    emb = LocalEmbedder(threads=2)
    emb.open()
    return emb


def test_shape_dtype_norm(embedder: LocalEmbedder) -> None:
    vecs = embedder.embed(["The owner likes dark roast coffee.", "Meeting with Anna on Tuesday at 10."])
    assert vecs.shape == (2, 384)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_empty_list(embedder: LocalEmbedder) -> None:
    vecs = embedder.embed([])
    assert vecs.shape == (0, 384)
    assert vecs.dtype == np.float32


def test_order_preserved_across_batches(embedder: LocalEmbedder) -> None:
    # Mixed lengths over several micro-batches: sorting by length must not change which row is which.
    texts = [("word " * (i * 7 % 50)) + f"sentence number {i} about topic {i % 5}" for i in range(BATCH_SIZE * 2 + 5)]
    together = embedder.embed(texts)
    one_by_one = np.vstack([embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(together, one_by_one, atol=1e-4)


def test_long_text_is_truncated(embedder: LocalEmbedder) -> None:
    long_text = "The garden needs water every morning. " * 200
    vecs = embedder.embed([long_text, "short"])
    assert vecs.shape == (2, 384)
    assert np.isfinite(vecs).all()


def test_paraphrase_without_shared_words_ranks_first(embedder: LocalEmbedder) -> None:
    memories = [
        "Owner is allergic to penicillin.",
        "The car's winter tyres are stored in the garage.",
        "Quarterly taxes are due on the fifteenth of the month.",
        "The cat sleeps on the sofa most afternoons.",
    ]
    query = "which antibiotic must doctors avoid giving me?"
    scores = embedder.embed(memories) @ embedder.embed([query])[0]
    assert int(np.argmax(scores)) == 0, scores


def test_odd_unicode_does_not_crash(embedder: LocalEmbedder) -> None:
    texts = ["", "broken \ud800 surrogate", "\udfff", "pair \ud83d\ude00 joined", "emoji 😀 and 中文 and \x00 nul", " "]
    vecs = embedder.embed(texts)
    assert vecs.shape == (len(texts), 384)
    assert np.isfinite(vecs).all()
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    # A valid surrogate pair written as two code points means the same as the character itself.
    np.testing.assert_allclose(vecs[3], embedder.embed(["pair 😀 joined"])[0], atol=1e-5)


def test_single_str_is_refused(embedder: LocalEmbedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed("not a list")  # type: ignore[arg-type]


def test_embed_before_open_raises() -> None:
    with pytest.raises(EmbedderError, match="before open"):
        LocalEmbedder().embed(["hello"])


def test_make_embedder() -> None:
    emb = make_embedder("local", threads=1)
    assert isinstance(emb, LocalEmbedder)
    assert emb.threads == 1
    assert (emb.model_id, emb.dim) == ("all-MiniLM-L6-v2-int8", 384)
    assert make_embedder("none") is None


@pytest.mark.parametrize("backend", ["OpenAI", "LOCAL", ""])
def test_make_embedder_unknown_backend(backend: str) -> None:
    with pytest.raises(ValueError, match="allowed: local, openai, none"):
        make_embedder(backend)


def test_negative_threads_refused() -> None:
    with pytest.raises(ValueError, match="threads"):
        LocalEmbedder(threads=-1)


def test_altered_model_file_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real file against a different expected hash stands in for an altered file.
    monkeypatch.setattr("twin.embedder.MODEL_SHA256", "0" * 64)
    with pytest.raises(EmbedderError, match="sha256"):
        LocalEmbedder(threads=1).open()
