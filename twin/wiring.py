"""Wiring: the one place that turns settings into an opened embedder, index reader or writer, and recall.

Every caller (the CLI, the Telegram connector, the workers, `twin doctor`, the benches) opens these here, so the
rules of how they fit together are written once: the embedder named by `embed_backend`, an index of that
embedder's model only (vectors of another model are never searched), recall that degrades to keyword-only when
the embedder cannot open (seed 004: fail-soft). Nothing here runs at import; each function opens what it returns
and the caller closes it.
"""

from __future__ import annotations

import logging

from twin.activity import Activity
from twin.clock import owner_zone
from twin.exceptions import EmbedderError
from twin.recall.hybrid import Recall
from twin.settings import Settings
from twin.store import Store
from twin.vectors.embedder import Embedder, make_embedder
from twin.vectors.index import VectorIndex
from twin.vectors.sidecar import IndexReader, IndexWriter
from twin.weights import Weights

log = logging.getLogger(__name__)


def open_embedder(settings: Settings, store: Store | None) -> Embedder | None:
    """The embedder of `settings.embed_backend`, opened (the local model loaded, or the provider's `embed` tier
    whose calls count against the daily budget in `store`); None for `"none"` (no vectors are computed).

    Raises `EmbedderError` when the model cannot be loaded or the provider cannot be reached, `ValueError` for an
    unknown backend or `"openai"` without a provider configured (as `twin.vectors.embedder.make_embedder`)."""
    embedder = make_embedder(settings.embed_backend, settings.embed_threads, settings, store)
    if embedder is not None:
        embedder.open()
    return embedder


def open_index_reader(settings: Settings, store: Store, model_id: str, dim: int) -> IndexReader:
    """A read-only view, opened, of the index of `model_id` (`dim` floats a vector): the last checkpoint plus an
    exact search of the vectors stored since (`twin.vectors.sidecar.IndexReader`)."""
    reader = IndexReader(store, VectorIndex.for_settings(settings, model_id, dim))
    reader.open()
    return reader


def open_index_writer(settings: Settings, store: Store, embedder: Embedder, activity: Activity) -> IndexWriter:
    """The index writer for `embedder`'s model (the embedding worker is its only user): the checkpoint loaded or
    rebuilt, caught up with SQLite, scrubbed and checkpointed (`IndexWriter.open`)."""
    writer = IndexWriter(store, VectorIndex.for_settings(settings, embedder.model_id, embedder.dim), activity)
    writer.open()
    return writer


def recall_weights(settings: Settings) -> Weights:
    """Recall's weights from the `recall_*` settings (seed 000's defaults live in `twin.settings`)."""
    return Weights(keyword=settings.recall_keyword_weight, importance=settings.recall_importance_weight,
                   recency=settings.recall_recency_weight, half_life_days=settings.recall_half_life_days)


def open_recall(settings: Settings, store: Store, embedder: Embedder | None = None) -> Recall:
    """A ready `Recall` for `settings` over `store`: with `embedder` (an opened one the caller already holds, so a
    process loads the model once) or else the configured one (`open_embedder`), and an index reader over the
    vectors of that embedder's model only; the owner's time zone for time words (`twin.clock.owner_zone`).

    Degrades to keyword-only recall, with one log line, when the backend is `none`, the model cannot be loaded
    or the provider cannot be reached (seed 004: fail-soft; a broken embedder must not break recall). The caller
    closes it (`Recall.close`); an `embedder` it passed stays its own to close."""
    if embedder is None:
        try:
            embedder = open_embedder(settings, store)
        except EmbedderError as exc:
            log.warning("recall: the embedder cannot load (%s); keyword-only recall", exc)
    reader = None if embedder is None else open_index_reader(settings, store, embedder.model_id, embedder.dim)
    return Recall(store, embedder, reader, recall_weights(settings), settings.recall_candidates,
                  zone=owner_zone(settings))
