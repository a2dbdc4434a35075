"""The operations every interface calls (DESIGN.md invariant 9): the HTTP API, MCP, the CLI and Telegram read and
write memories through these functions, so a rule (cap a limit, hide sensitive, clean text, scope a namespace) is
written once. Each takes a `Context` (`twin.operations.context`) and returns a shape of `twin.operations.shapes`;
bad input raises `twin.exceptions.InvalidInput` naming the field, an unknown memory `twin.exceptions.NotFound`.

Reads (`twin.operations.reads`): search, context, list_memories, recent, today, get_memory, neighbors, history,
stats, signals, profile, status, activity; adoption (`twin.operations.adoption`). Writes
(`twin.operations.writes`): capture_memory (remember: `compare=False`), update_memory, forget_memory, learn,
session_recap, reflect, dream_cycle. What the page needed besides (`twin.operations.page`): one-time page links,
browse_memories (every filter, a keyset), forget_source_plan / forget_source, edit_profile, activity_after,
memory_weeks. Projects (`twin.operations.projects`, seed 003's seven): list_projects, create_project,
delete_project, share_project, unshare_project, activate_project, deactivate_project, and show_project; the
owner's sources bound to a project (`twin.operations.project_sources`): bind_source, unbind_source; who asks and
what they reach in `twin.operations.scopes`; the people the owner adds in `twin.operations.people`; the export and
import of the whole twin (people, projects, bound sources, every memory) in `twin.operations.transfer`.
"""

from twin.operations.adoption import adoption
from twin.operations.context import Context
from twin.operations.project_sources import bind_source, unbind_source
from twin.operations.projects import (
    activate_project,
    create_project,
    deactivate_project,
    delete_project,
    list_projects,
    share_project,
    show_project,
    unshare_project,
)
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

__all__ = ["Context", "activate_project", "activity", "adoption", "bind_source", "capture_memory", "context",
           "create_project", "deactivate_project", "delete_project", "dream_cycle", "forget_memory", "get_memory",
           "history", "learn", "list_memories", "list_projects", "neighbors", "profile", "recent", "reflect", "search",
           "session_recap", "share_project", "show_project", "signals", "stats", "status", "today", "unbind_source",
           "unshare_project", "update_memory"]
