"""Vectors: the embedder (local MiniLM, E5 or the provider's), the hnswlib index sidecar and its one writer
(DESIGN.md invariant 4), the embedding flush and the backfill.

Nothing is re-exported: import from the module that defines a name (ARCHITECTURE.md, "The layers")."""
