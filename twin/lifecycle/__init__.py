"""Lifecycle: what happens to a memory after it is written: edges, warm/cold decay, the dream cycle, stats
(seed 003), and forgetting, the one home of "remove these memories and leave nothing behind" (invariant 5).

Each name below is re-exported from the module that defines it (as `rq.worker` does); import from
the module itself where a test patches it."""

from twin.lifecycle.cycle import (
    VectorLookup,
    decay,
    dream,
    lifespan_days,
    merge_pair,
    neighbors,
    same_values,
    stats,
    write_all_pending_edges,
    write_pending_edges,
)
from twin.lifecycle.forgetting import FORGOTTEN_FILE_REASON, ForgetPlan, carry_out, forget, plan

__all__ = [
    "FORGOTTEN_FILE_REASON",
    "ForgetPlan",
    "VectorLookup",
    "carry_out",
    "decay",
    "dream",
    "forget",
    "lifespan_days",
    "merge_pair",
    "neighbors",
    "plan",
    "same_values",
    "stats",
    "write_all_pending_edges",
    "write_pending_edges",
]
