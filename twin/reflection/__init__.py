"""Reflection: the quiet second pass of the learning loop (seed 001) and the Hush gate every signal must
clear before it is raised.

Each name below is re-exported from the module that defines it (as `rq.worker` does); import from
the module itself where a test patches it."""

from twin.reflection.hush import (
    HushGate,
    HushRules,
    Verdict,
    in_quiet_hours,
    jaccard,
    reads_like_instructions,
    signal_words,
    zone_name,
)
from twin.reflection.second_pass import (
    ReflectionAnswer,
    ReflectionResult,
    SignalProposal,
    WidgetProposal,
    fresh_memories,
    reflect,
)

__all__ = [
    "HushGate",
    "HushRules",
    "ReflectionAnswer",
    "ReflectionResult",
    "SignalProposal",
    "Verdict",
    "WidgetProposal",
    "fresh_memories",
    "in_quiet_hours",
    "jaccard",
    "reads_like_instructions",
    "reflect",
    "signal_words",
    "zone_name",
]
