"""Lifecycle: what happens to a memory after it is written: edges, warm/cold decay, the dream cycle, stats
(seed 003), and forgetting, the one home of "remove these memories and leave nothing behind" (invariant 5).

Nothing is re-exported: import from the module that defines a name (ARCHITECTURE.md, "The layers")."""
