"""Learn: the write path. `learn()` is the one path every source uses to teach the twin (seed 001); capture
decides new / duplicate / supersede / update for each candidate; the model extractor, the capture judge, the
sentence contract, import and export of memories, and browser interests.

Nothing is re-exported: import from the module that defines a name (ARCHITECTURE.md, "The layers")."""
