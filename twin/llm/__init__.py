"""The LLM provider client (OpenAI-compatible; "model" already means the memory model here): budgets,
redaction of what leaves the machine, usage.

Nothing is re-exported: import from the module that defines a name (ARCHITECTURE.md, "The layers")."""
