"""Recall: hybrid search by meaning (seed 000: FTS5 bm25 and cosine, fused, then importance and recency),
its keyword half and the time words of a query.

Nothing is re-exported: import from the module that defines a name (ARCHITECTURE.md, "The layers")."""
