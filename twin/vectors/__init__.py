"""Vectors: the embedder (local MiniLM, E5 or the provider's), the hnswlib index sidecar and its one writer
(DESIGN.md invariant 4), the embedding flush and the backfill.

Each name below is re-exported from the module that defines it (as `rq.worker` does); import from
the module itself where a test patches it."""

from twin.vectors.backfill import BackfillError, BackfillProgress, BackfillReport
from twin.vectors.e5_embedder import E5Embedder
from twin.vectors.embedder import (
    Embedder,
    LocalEmbedder,
    RemoteEmbedder,
    import_offline_onnxruntime,
    make_embedder,
    model_id_of,
    remote_model_id,
)
from twin.vectors.embedding_flush import EmbeddingOutage, flush_pending
from twin.vectors.index import VectorIndex, meta_path_of
from twin.vectors.sidecar import IndexReader, IndexWriter

__all__ = [
    "BackfillError",
    "BackfillProgress",
    "BackfillReport",
    "E5Embedder",
    "Embedder",
    "EmbeddingOutage",
    "IndexReader",
    "IndexWriter",
    "LocalEmbedder",
    "RemoteEmbedder",
    "VectorIndex",
    "flush_pending",
    "import_offline_onnxruntime",
    "make_embedder",
    "meta_path_of",
    "model_id_of",
    "remote_model_id",
]
