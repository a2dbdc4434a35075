"""The LLM provider client (OpenAI-compatible; "model" already means the memory model here): budgets,
redaction of what leaves the machine, usage.

Each name below is re-exported from the module that defines it (as `rq.worker` does); import from
the module itself where a test patches it."""

from twin.llm.provider import (
    BadAnswer,
    BudgetExhausted,
    CallBudget,
    ModelProvider,
    ProviderError,
    ProviderResting,
    clean_strings,
    parse_json_object,
    provider_for,
    quote_data,
    unit_interval,
    valid_items,
)

__all__ = [
    "BadAnswer",
    "BudgetExhausted",
    "CallBudget",
    "ModelProvider",
    "ProviderError",
    "ProviderResting",
    "clean_strings",
    "parse_json_object",
    "provider_for",
    "quote_data",
    "unit_interval",
    "valid_items",
]
