"""The shapes operations return (pydantic models): what the HTTP API documents in /openapi.json and MCP gives as
output schemas, so every interface answers in the same fields. Memory fields are the store's (`twin.memory.Memory`,
as `twin export` and `--json` write them); the response flags are seed 003's.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from twin.memory import Memory, Recalled
from twin.namespaces import shown_namespace


class MemoryOut(BaseModel):
    """One memory as a read shows it: a `sensitive` one's text only when the caller asked for that level
    (`Memory.shown`, the one rule). Times UTC ISO-8601; `importance` and `provenance.confidence` 0..1; `namespace`
    the one it belongs to (seed 003), as the reader names it (`twin.namespaces.shown_namespace`: a person sees
    their own `default`, never the stored `person:<id>:default`, which no call takes)."""

    id: int
    being_id: str
    kind: str
    content: str
    source: str
    importance: float
    tags: list[str]
    created_at: str
    last_accessed: str | None
    hits: int
    sensitivity: str
    provenance: dict
    status: str
    superseded_by: int | None
    content_sha256: str
    tier: str
    supersede_reason: str | None
    updated_at: str | None
    namespace: str

    @classmethod
    def of(cls, memory: Memory, reveal_sensitive: bool) -> MemoryOut:
        """`memory` as shown (`Memory.shown(reveal_sensitive)`)."""
        shown = memory.shown(reveal_sensitive).to_dict()
        return cls(**{**shown, "namespace": shown_namespace(shown["namespace"])})


class Reason(BaseModel):
    """Why a result ranks where it does (`twin.memory.RankReason`, made by the recall rule that moved it): `code` a
    stable word (`twin.recall.reasons.CODES`), `words` for people (memory text in them is data, never markup),
    `others` the ids of the memories it was compared with."""

    code: str
    words: str
    others: list[int] = Field(default_factory=list)


class Hit(MemoryOut):
    """A recall result: the memory and its scores, all 0..1 (`twin.memory.Recalled`); `in_window` True when the
    query named a strict time window ("last Saturday", "in the last 3 days") and the memory was made inside it,
    which let it in and ranked it by meaning alone (`Recalled.in_window`); `reasons` every rule that moved it (a
    time window, the newest value of a slot, a newer statement, a supersession), empty when its score alone placed
    it."""

    score: float
    keyword: float
    vector: float
    recency: float
    relevance: float
    in_window: bool = False
    reasons: list[Reason] = Field(default_factory=list)

    @classmethod
    def of_recalled(cls, hit: Recalled, reveal_sensitive: bool) -> Hit:
        """`hit` with its memory as shown; a hidden sensitive memory's reasons that quote memory text are left out
        (`RankReason.quotes_memory`, as `Memory.shown` leaves out its `supersede_reason`)."""
        shown = hit.memory.shown(reveal_sensitive)
        kept = [r.to_dict() for r in hit.reasons if shown is hit.memory or not r.quotes_memory]
        return cls(**{**hit.to_dict(), **MemoryOut.of(hit.memory, reveal_sensitive).model_dump(), "reasons": kept})


class Degradable(BaseModel):
    """An answer a backing tier can degrade (seed 003): `degraded` True with the `reason` when it answered
    without one (no embedder: keyword-only; the graph unreadable)."""

    degraded: bool = False
    reason: str | None = None


class SearchOut(Degradable):
    """`search`: the results best first; `pending_vectors`: when fewer results than the limit came back, how many
    memories of the store have no vector yet (found by their words only until the embedding worker gives them one,
    a few seconds after they were learned), else 0."""

    results: list[Hit]
    pending_vectors: int = 0
    ignored_weights: list[str] = Field(default_factory=list)


class ContextOut(SearchOut):
    """`context`: a search and the newest memories grouped by kind, in one answer (seed 003 `memory_context`)."""

    recent: dict[str, list[MemoryOut]]
    context_pack: dict[str, dict[str, list[MemoryOut]]] = Field(default_factory=dict)
    """Seed 003's context packs v2: `{userGlobal: {kind: [memories]}, projectScoped: {kind: [memories]}}`."""


class CaptureOut(BaseModel):
    """Seed 003's remember/capture answer: `{id: null, rejected}`, `{id, deduplicated: true}`, `{id,
    deduplicated: true, updated: true}`, `{id, superseded: [ids]}` or a fresh `{id}`; `reason` says why it was
    updated or what it superseded. Flags that do not apply are left out of the JSON."""

    model_config = ConfigDict(json_schema_extra={"additionalProperties": False})

    id: int | None
    deduplicated: bool | None = None
    updated: bool | None = None
    superseded: list[int] | None = None
    rejected: str | None = None
    reason: str | None = None


class ForgetOut(BaseModel):
    """`forget`: `ok` and what went, per table (`ForgetPlan.counts`: memories, fts_rows, vectors, index_entries,
    edges, transcript_rows, …)."""

    ok: bool
    id: int
    removed: dict[str, int]


class Neighbor(MemoryOut):
    """A memory linked in the graph; `score` the product of edge strengths along the best path (0..1)."""

    score: float


class NeighborsOut(Degradable):
    """`neighbors` of a memory (seed 003 `memory_neighbors`); empty and `degraded` when the graph cannot be read."""

    id: int
    depth: int
    neighbors: list[Neighbor]


class HistoryOut(BaseModel):
    """A memory's supersession chain, oldest first: what it replaced (and what those replaced), itself, and what
    replaced it; `current` the id of the chain's active memory (None when none is active)."""

    id: int
    chain: list[MemoryOut]
    current: int | None


class Supersession(BaseModel):
    """`id` was superseded by `by`, for `reason`."""

    id: int
    by: int
    reason: str


class Rejection(BaseModel):
    """A candidate not stored: its `content` (None for a sentence the extractor skipped) and why."""

    content: str | None
    reason: str


class LearnOut(BaseModel):
    """What learning a text did (seed 001's `learn()`): memories created, reinforced and updated (each updated one
    with its reason in `update_reasons`), the supersessions and rejections, and whether the profile changed."""

    created: list[MemoryOut]
    reinforced: list[MemoryOut]
    updated: list[MemoryOut]
    update_reasons: dict[str, str]
    superseded: list[Supersession]
    rejected: list[Rejection]
    profile_updated: bool
    note: str | None = None
    """Set when the text held more than one call keeps (`UNREAD_NOTE`): the rest of it was not read."""
    project: str | None = None
    """The name of the project the text was learned into (named by the call, or the caller's active one), None
    for the caller's own memories: `twin learn` says it, since the project's members read what goes there."""


class ReflectOut(BaseModel):
    """Seed 001's `{ran, signals, widgets, thought}`; `new_memories` the fresh ones it looked at, `note` why it
    did not run."""

    ran: bool
    new_memories: int = 0
    signals: list[dict]
    widgets: list[dict]
    thought: str | None
    profile_updated: bool = False
    note: str = ""


class ActivityLineOut(BaseModel):
    """One diary line (seed 001's TwinActivity): `at` UTC ISO-8601, `kind`, `text` (never a memory's text)."""

    id: int
    at: str
    kind: str
    text: str


class DreamOut(BaseModel):
    """Seed 003's dream-cycle answer."""

    walked: int
    merged: int
    edgesPromoted: int  # seed 003 names it so
    durationMs: int  # seed 003 names it so


class AdoptionOut(BaseModel):
    """Seed 003's adoption report: the tool surface agents should see, the hash of the instructions they should
    have, feature flags, what looks stale in what the client reported, and how to refresh."""

    tools: list[str]
    instructions_hash: str
    features: dict[str, bool]
    diagnostics: list[str]
    refresh: list[str]


class OkOut(BaseModel):
    """Seed 000's `{ok: true}`."""

    ok: bool


class SourceOut(BaseModel):
    """A source bound to a project (issue 19; `twin.store.project_sources`): `kind` (`files`, `telegram_chat` or
    `gmail_label`), `value` (a folder's absolute path, a chat id, a Gmail label's name or id as the owner gave
    it), `added_at` (UTC ISO-8601)."""

    kind: str
    value: str
    added_at: str


class ProjectOut(BaseModel):
    """A project as its members see it (seed 003's sub-brain): `id` (a ULID, stable), `name`, `owner` (the owner's
    name: `owner` for the twin's owner), `role` of the caller (`owner` or `member`), `members` (names, the owner
    first), `active` (the caller's active project), `created_at` (UTC ISO-8601); `sources` the twin owner's sources
    bound to it (shown to the twin's owner alone: the paths and chats are theirs; empty for anyone else)."""

    id: str
    name: str
    owner: str
    role: str
    members: list[str]
    active: bool
    created_at: str
    sources: list[SourceOut] = []


class SourceBoundOut(ProjectOut):
    """`bind_source` / `unbind_source`: the project (`ProjectOut`) and `files_moving`, how many files learned
    before under the folder bound or unbound are learned again where the bindings now put them, their memories
    where they were forgotten (`twin.connectors.file_moves`; staged now, learned when the daemon runs; 0 for a
    chat or a label, and when the source was bound already)."""

    files_moving: int = 0
    warning: str | None = None
    """Why the source, bound as asked, may never feed the project (a folder under no files root, a symlink, a
    label twin never reads, a chat the bot does not answer in): said, not refused. None: none."""


class ProjectDeletedOut(BaseModel):
    """`project_delete`: `ok`, the project's `id`, and what went, per table (`ForgetPlan.counts`)."""

    ok: bool
    id: str
    removed: dict[str, int]


class PersonOut(BaseModel):
    """A person the owner added: `id`, `name`, `added_at` (UTC ISO-8601); `token` only in the answer of `add`,
    the one time it is shown (the store keeps its digest alone); `telegram` True once they paired a Telegram
    account (`twin people pair`; the account's id is not shown)."""

    id: str
    name: str
    added_at: str
    token: str | None = None
    telegram: bool = False


class TelegramPairOut(BaseModel):
    """`twin people pair NAME`: the person's `name`, the one-time `code` they send to the bot as `/start CODE`
    (shown this once; the store keeps its SHA-256), and when it stops pairing (`expires_at`, UTC ISO-8601)."""

    name: str
    code: str
    expires_at: str


class PersonRemovedOut(BaseModel):
    """`twin people remove`: the person, the projects of theirs deleted (ids), and what went of their memories
    and projects, per table (`ForgetPlan.counts`, summed)."""

    id: str
    name: str
    projects_deleted: list[str]
    removed: dict[str, int]
