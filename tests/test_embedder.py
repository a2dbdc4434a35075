"""Tests of twin.vectors.embedder against the real all-MiniLM-L6-v2 int8 model (no mocks); the model is opened once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from twin.exceptions import EmbedderError
from twin.vectors.embedder import BATCH_SIZE, LocalEmbedder, make_embedder

ROOT = Path(__file__).resolve().parent.parent


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
    with pytest.raises(ValueError, match="allowed: local, multilingual, openai, none"):
        make_embedder(backend)


def test_negative_threads_refused() -> None:
    with pytest.raises(ValueError, match="threads"):
        LocalEmbedder(threads=-1)


def test_altered_model_file_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real file against a different expected hash stands in for an altered file.
    monkeypatch.setattr("twin.vectors.embedder.MODEL_SHA256", "0" * 64)
    with pytest.raises(EmbedderError, match="sha256"):
        LocalEmbedder(threads=1).open()


# -- nothing phones home (invariant 8; LIBRARY_NOTES §10) ---------------------------------------------------------
OFFLINE_SWITCHES = ("ORT_DISABLE_TELEMETRY", "HF_HUB_OFFLINE", "HF_HUB_DISABLE_TELEMETRY", "DO_NOT_TRACK",
                    "XDG_CACHE_HOME")


def _python(code: str, home: Path) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter with HOME=`home` and none of the libraries' switches inherited."""
    env = {k: v for k, v in os.environ.items() if k not in OFFLINE_SWITCHES}
    env["HOME"] = str(home)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_loading_the_model_writes_nothing_under_home_and_imports_no_hub_client(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _python(
        "import os, sys\n"
        "from twin.vectors.embedder import LocalEmbedder\n"
        "model = LocalEmbedder(threads=1)\n"
        "model.open(); model.embed(['The owner sails on Lake Geneva.']); model.open()\n"
        "print(os.environ['ORT_DISABLE_TELEMETRY'], 'huggingface_hub' in sys.modules)\n", home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "False"]
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []  # no ~/.cache/Microsoft/…
    assert "imported before" not in done.stderr


def test_onnxruntime_imported_before_twin_is_reported(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    done = _python("import logging; logging.basicConfig()\n"
                   "import onnxruntime\n"
                   "from twin.vectors.embedder import LocalEmbedder\n"
                   "LocalEmbedder(threads=1).open()\n", tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "onnxruntime was imported before twin turned its telemetry off" in done.stderr


@pytest.mark.slow
def test_no_module_of_twin_imports_onnxruntime_at_import_time() -> None:
    # the embedder is the one place onnxruntime is imported, after its telemetry is turned off
    done = subprocess.run([sys.executable, "-c", (
        "import importlib, pkgutil, sys\n"
        "for package in ('twin',):\n"
        "    root = importlib.import_module(package)\n"
        "    for info in pkgutil.walk_packages(root.__path__, package + '.'):\n"
        "        if info.name != 'twin.workers.__main__' and info.name != 'twin.__main__':\n"
        "            importlib.import_module(info.name)\n"
        "print(sorted(m for m in ('onnxruntime', 'tokenizers', 'huggingface_hub') if m in sys.modules))\n")],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# -- the optimised model saved in the cache dir (twin.vectors.optimized_model; issue 18) ---------------------------
SENTENCES = ["The owner sails on Lake Geneva.", "Anna's birthday is on 3 May.", "x" * 3000]


def test_the_saved_optimised_model_gives_the_shipped_models_vectors(embedder: LocalEmbedder, tmp_path: Path) -> None:
    from twin.vectors.optimized_model import MANIFEST_NAME

    first = LocalEmbedder(threads=1, cache_dir=tmp_path)
    first.open()  # builds the saved graph
    (folder,) = (tmp_path / "models").iterdir()
    assert (folder / MANIFEST_NAME).is_file()
    again = LocalEmbedder(threads=1, cache_dir=tmp_path)
    again.open()  # loads it
    expected = embedder.embed(SENTENCES)
    assert np.array_equal(first.embed(SENTENCES), expected)
    assert np.array_equal(again.embed(SENTENCES), expected)


@pytest.mark.parametrize("damage", ["truncated weights", "altered weights", "manifest gone"])
def test_a_damaged_saved_model_is_made_again(embedder: LocalEmbedder, tmp_path: Path, damage: str,
                                             caplog: pytest.LogCaptureFixture) -> None:
    from twin.vectors.optimized_model import MANIFEST_NAME, WEIGHTS_NAME

    LocalEmbedder(threads=1, cache_dir=tmp_path).open()
    (folder,) = (tmp_path / "models").iterdir()
    weights = folder / WEIGHTS_NAME
    if damage == "truncated weights":
        os.truncate(weights, weights.stat().st_size // 2)
    elif damage == "altered weights":  # same size, other values: only the probe's output can tell
        with open(weights, "r+b") as f:
            data = np.frombuffer(f.read(), dtype=np.float32).copy()
            f.seek(0)
            f.write((data * 1.01).tobytes())
    else:
        (folder / MANIFEST_NAME).unlink()
    model = LocalEmbedder(threads=1, cache_dir=tmp_path)
    model.open()
    assert np.array_equal(model.embed(SENTENCES), embedder.embed(SENTENCES))
    if damage == "altered weights":
        assert "cannot be used" in caplog.text and "differs" in caplog.text
    reopened = LocalEmbedder(threads=1, cache_dir=tmp_path)  # the saved model is whole again
    reopened.open()
    assert np.array_equal(reopened.embed(SENTENCES), embedder.embed(SENTENCES))


def test_an_unwritable_cache_dir_loads_the_shipped_model(embedder: LocalEmbedder, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    model = LocalEmbedder(threads=1, cache_dir=blocked)
    model.open()
    assert np.array_equal(model.embed(SENTENCES), embedder.embed(SENTENCES))
