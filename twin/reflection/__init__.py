"""Reflection: the quiet second pass of the learning loop (seed 001) and the Hush gate every signal must
clear before it is raised.

Nothing is re-exported: import from the module that defines a name (ARCHITECTURE.md, "The layers")."""
