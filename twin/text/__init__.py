"""Text: pure functions on words and sentences (no store, no model): tokens and stop words, the sentence rules
of capture, the offline extractor and its third-person rewrite, relative dates, reported speech, secrets and
sensitivity, page kinds and private sites, query terms. Depends on the foundation alone.

Nothing is re-exported: import from the module that defines a name (ARCHITECTURE.md, "The layers")."""
