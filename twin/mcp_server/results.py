"""The output schemas of twin's MCP tools: the operations' own shapes (`twin.operations.shapes`, which the HTTP API
documents too), with the trust mark on each that carries memory text (`quoting.Quoted`), and an object around the
answers that are lists (MCP structured content is an object). The SDK publishes each as the tool's
`outputSchema` and validates the structured content against it before it is sent."""

from __future__ import annotations

from pydantic import BaseModel, Field

from twin.mcp_server.quoting import Quoted
from twin.operations.shapes import ContextOut, LearnOut, MemoryOut, NeighborsOut, ProjectOut, SearchOut


class QuotedSearch(Quoted, SearchOut):
    """memory_search: the best matches first, each with its `score` and `relevance` (0..1; below about 0.4 a miss)
    and its `reasons` (what moved it: a time window, a newer value, a supersession); `degraded` with the reason
    when recall answered by words alone."""


class QuotedContext(Quoted, ContextOut):
    """memory_context: a search for the task and the newest memories grouped by kind, in one answer."""


class QuotedMemory(Quoted):
    """memory_update: the memory as it is now (the same id, hits and links)."""

    memory: MemoryOut


class QuotedList(Quoted):
    """memory_recent and memory_today: the memories newest first."""

    memories: list[MemoryOut]


class QuotedNeighbors(Quoted, NeighborsOut):
    """memory_neighbors: memories linked in the graph, best path first; empty and `degraded` when the graph could
    not be read (seed 003)."""


class QuotedLearned(Quoted, LearnOut):
    """memory_session_recap: what `learn()` kept of the summary (created, reinforced, updated), what it superseded
    and what it rejected, with why."""


class TierCounts(BaseModel):
    """Active memories by decay tier (seed 003: warm, cold)."""

    warm: int
    cold: int


class StatsOut(BaseModel):
    """memory_stats (seed 003): active memories by kind and by namespace and tier, the totals, superseded ones,
    graph edges by relation, and when decay and the dream cycle last ran (UTC ISO-8601, or null)."""

    by_kind: dict[str, TierCounts]
    by_namespace: dict[str, TierCounts] = Field(default_factory=dict)
    total_warm: int
    total_cold: int
    superseded: int
    edges: dict[str, int]
    last_decay: str | None
    last_dream: str | None


class ProjectsOut(BaseModel):
    """project_list and project_deactivate: the projects you own or are a member of, by name."""

    projects: list[ProjectOut]
