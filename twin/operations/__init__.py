"""The operations every interface calls (DESIGN.md invariant 9): the HTTP API, MCP, the CLI and Telegram read and
write memories through these functions, so a rule (cap a limit, hide sensitive, clean text, scope a namespace) is
written once. Each takes a `Context` (`twin.operations.context`) and returns a shape of `twin.operations.shapes`;
bad input raises `twin.exceptions.InvalidInput` naming the field, an unknown memory `twin.exceptions.NotFound`.

Reads (`twin.operations.reads`): search, context, list_memories, recent, today, get_memory, neighbors, history,
stats, signals, profile, status, activity; adoption (`twin.operations.adoption`). Writes
(`twin.operations.writes`): capture_memory (remember: `compare=False`), update_memory, forget_memory, learn,
session_recap, reflect, dream_cycle. What the page needed besides (`twin.operations.page`): one-time page links,
browse_memories (every filter, a keyset), forget_source_plan / forget_source, edit_profile, activity_after,
memory_weeks.
"""

from twin.operations.adoption import adoption
from twin.operations.context import Context
from twin.operations.reads import (
    activity,
    context,
    get_memory,
    history,
    list_memories,
    neighbors,
    profile,
    recent,
    search,
    signals,
    stats,
    status,
    today,
)
from twin.operations.writes import (
    capture_memory,
    dream_cycle,
    forget_memory,
    learn,
    reflect,
    session_recap,
    update_memory,
)

__all__ = ["Context", "activity", "adoption", "capture_memory", "context", "dream_cycle", "forget_memory",
           "get_memory", "history", "learn", "list_memories", "neighbors", "profile", "recent", "reflect",
           "search", "session_recap", "signals", "stats", "status", "today", "update_memory"]
