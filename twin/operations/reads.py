"""The read operations every interface calls (seeds 000, 001 and 003): search, context, list, recent, today, one
memory, its neighbours and history, stats, signals, profile, status, the diary. Read-only, except that a search
records the use of the results it found (`Recall.recall(touch=True)`: seed 000's "lastAccessed touched").

Each takes a `Context` and returns a shape of `twin.operations.shapes`; bad input raises `InvalidInput` naming
the field, an unknown memory `NotFound`. Sensitive memories are hidden unless `max_sensitivity` is
`"sensitive"` (seed 003; `context.sensitivity_levels`), on every path. Every read looks in one `namespace`
(default `default`) and, widened by `include_namespaces` (at most 16), in their union (seed 003;
`twin.namespaces.scope` checks both and raises `NamespaceError`, an `InvalidInput` naming the argument); a memory
read by id outside them is `NotFound`.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace
from datetime import UTC, datetime

from twin.exceptions import InvalidInput, NotFound
from twin.limits import checked_limit
from twin.memory import KINDS, SENSITIVE, Memory, Recalled, format_time, normal_time
from twin.namespaces import DEFAULT_NAMESPACE, PROJECT_PREFIX
from twin.operations.context import ASKING, Context, sensitivity_levels
from twin.operations.scopes import caller, reach, require_owner
from twin.operations.shapes import (
    ActivityLineOut,
    ContextOut,
    HistoryOut,
    Hit,
    MemoryOut,
    Neighbor,
    NeighborsOut,
    SearchOut,
)
from twin.outside_text import has_text
from twin.recall.hybrid import LIMIT_MAX, Recall
from twin.store.ids import INTEGER_MAX
from twin.store.signals import Signal, list_signals, still_theirs

WEIGHT_NAMES = ("keyword", "vector", "importance", "recency", "half_life_days", "graph", "entity")
"""Seed 003's per-query weights (and our half-life); `graph` and `entity` are signals twin does not fuse: they are
accepted and reported in `SearchOut.ignored_weights`."""
ACTIVITY_SHOWN = 60
"""The diary lines `activity` returns (seed 001: "newest 60")."""
KEYWORD_ONLY = "keyword-only recall: no embedder (TWIN_EMBED_BACKEND=none, or the model could not load)"


def check_kind(kind: str | None) -> str | None:
    """`kind`, or None; raises `InvalidInput` (field `kind`) for one not in `KINDS`."""
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}", field="kind")
    return kind


def check_time(value: str | None, name: str) -> str | None:
    """An ISO-8601 time as UTC `YYYY-MM-DDTHH:MM:SSZ`, or None; raises `InvalidInput` naming `name` otherwise."""
    if value is None:
        return None
    try:
        return normal_time(value)
    except ValueError as exc:
        raise InvalidInput(f"{name} must be an ISO-8601 time such as 2026-11-30T08:00:00Z", field=name) from exc


def weighted(base: Recall, weights: dict[str, float] | None) -> tuple[Recall, list[str]]:
    """A recall ranking by `base`'s config with seed 003's per-query `weights` (each 0..1): `keyword` and `vector`
    set the keyword share of the fused score (keyword / (keyword + vector), the one missing at `base`'s share),
    `importance` and `recency` their weights, `half_life_days` (> 0) the recency half-life. Returns `(recall, the
    names ignored)`; the recall is `base` itself when nothing changes, else a new one over the same embedder and
    index reader (the caller closes it). Raises `InvalidInput` (field `weights`) for a value out of range."""
    if not weights:
        return base, []
    unknown = sorted(set(weights) - set(WEIGHT_NAMES))
    if unknown:
        raise InvalidInput(f"unknown weight(s) {', '.join(unknown)}; use {', '.join(WEIGHT_NAMES)}", field="weights")
    for name, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
                0 <= value <= 1 or (name == "half_life_days" and 0 < value <= 3650)):
            raise InvalidInput(f"weight {name} must be a number 0..1 (half_life_days: 0..3650 days)", field="weights")
    cfg = base.config
    changes: dict[str, float] = {}
    if "keyword" in weights or "vector" in weights:
        kw, vec = weights.get("keyword", cfg.keyword), weights.get("vector", 1 - cfg.keyword)
        if kw + vec == 0:
            raise InvalidInput("weights keyword and vector cannot both be 0", field="weights")
        changes["keyword"] = kw / (kw + vec)
    for name in ("importance", "recency", "half_life_days"):
        if name in weights:
            changes[name] = float(weights[name])
    if changes.get("importance", cfg.importance) + changes.get("recency", cfg.recency) >= 1:
        raise InvalidInput("weights importance + recency must be below 1", field="weights")
    ignored = sorted(set(weights) & {"graph", "entity"})
    if not changes:
        return base, ignored
    return Recall(base.store, base.embedder, base.reader, config=replace(cfg, **changes), zone=base.zone,
                  touches=base.touches), ignored


def search(ctx: Context, query: str, limit: int = 10, kind: str | None = None, since: str | None = None,
           weights: dict[str, float] | None = None, max_sensitivity: str | None = None,
           namespace: str = DEFAULT_NAMESPACE, include_namespaces: list[str] | None = None,
           project: str | None = None) -> SearchOut:
    """Seed 003's `memory_search` (and seed 000's `GET /memories?q=`): hybrid recall of `query`, best first, at most
    `limit` (1-200), of one `kind`, made since `since` (ISO-8601), with per-query `weights` (`weighted`);
    levels above `max_sensitivity` (default private) hidden; in `namespace` and `include_namespaces`. `degraded`
    when recall is keyword-only. Records the use of the results used (`Recall.touch_bar`), never of hidden ones.
    Each result carries the reasons recall gave for its place (`Hit.reasons`), less those naming a memory of a
    level the caller may not see (`visible_reasons`). The one place a search is timed: its server time (input
    checks to answer) goes to `ctx.search_times` with the interface that asked (`ASKING`); a failed one is not.
    A blank `query` is `InvalidInput` (field `query`): a caller's bug, not a search that found nothing."""
    started = time.perf_counter()
    if not isinstance(query, str) or not has_text(query):
        raise InvalidInput("query must hold some words", field="query")
    names = reach(ctx.store, namespace, include_namespaces, project).reads
    limit, kind, since = checked_limit(limit), check_kind(kind), check_time(since, "since")
    levels = sensitivity_levels(max_sensitivity)
    base = ctx.recall()
    recall, ignored = weighted(base, weights)
    narrow = len(levels) < 3  # public or internal: more hidden than recall itself hides
    try:
        hits = recall.recall(ctx.being, query, limit=LIMIT_MAX if narrow else limit, kind=kind, since=since,
                             touch=not narrow, include_sensitive=SENSITIVE in levels, namespace=names[0],
                             include_namespaces=names[1:])
        if narrow:
            hits = visible_reasons(ctx, [h for h in hits if h.memory.sensitivity in levels][:limit], levels)
            recall.record_use(recall.touch_bar.used(hits))
    finally:
        if recall is not base:
            recall.close()
    reveal = SENSITIVE in levels
    # fewer results than asked for: a memory learned a moment ago may wait for its vector (found by words only);
    # two counts over small indexes, ~1 ms at 100k memories
    pending = (0 if base.keyword_only or len(hits) >= limit
               else ctx.store.count_pending_embeddings(base.embedder.model_id))
    found = SearchOut(results=[Hit.of_recalled(h, reveal) for h in hits], degraded=base.keyword_only,
                      reason=KEYWORD_ONLY if base.keyword_only else None, ignored_weights=ignored,
                      pending_vectors=pending)
    if ctx.search_times is not None:
        ctx.search_times.record(time.perf_counter() - started, interface=ASKING.get())
    return found


def visible_reasons(ctx: Context, hits: list[Recalled], levels: tuple[str, ...]) -> list[Recalled]:
    """`hits` with every reason dropped that names a memory (`RankReason.others`) of a level not in `levels` (a
    caller shown public or internal memories only: recall compared the results with private ones too, and an id,
    or a quoted supersession reason, would tell of them). One read of the named memories not among `hits`."""
    shown = {h.memory.id for h in hits}
    named = {i for h in hits for r in h.reasons for i in r.others} - shown
    if not named:
        return hits
    seen = ctx.store.get_many(named)
    allowed = shown | {i for i, m in seen.items() if m.sensitivity in levels}
    return [replace(h, reasons=tuple(r for r in h.reasons if allowed.issuperset(r.others))) for h in hits]


def list_memories(ctx: Context, limit: int = 50, kind: str | None = None, since: str | None = None,
                  include_superseded: bool = False, max_sensitivity: str | None = None,
                  namespace: str = DEFAULT_NAMESPACE, include_namespaces: list[str] | None = None,
                  project: str | None = None) -> list[MemoryOut]:
    """Memories newest first, at most `limit` (1-200, more is refused), nothing older hidden by a trick (seed 000: "read
    all of it"): of one `kind`, made since `since`, superseded ones with `include_superseded`, levels above
    `max_sensitivity` left out in the query itself (so `limit` counts what is shown). Listing never re-promotes a
    cold memory (seed 003). In `namespace` and `include_namespaces`."""
    names = reach(ctx.store, namespace, include_namespaces, project).reads
    limit, kind, since = checked_limit(limit), check_kind(kind), check_time(since, "since")
    levels = sensitivity_levels(max_sensitivity)
    rows = ctx.store.list_memories(ctx.being, kind=kind, limit=limit, since=since,
                                   include_superseded=include_superseded, levels=levels, namespaces=names)
    return [MemoryOut.of(m, SENSITIVE in levels) for m in rows]


def recent(ctx: Context, since: str | None = None, limit: int = 50, kind: str | None = None,
           max_sensitivity: str | None = None, namespace: str = DEFAULT_NAMESPACE,
           include_namespaces: list[str] | None = None, project: str | None = None) -> list[MemoryOut]:
    """Seed 003's `memory_recent`: `list_memories` since `since` (ISO-8601; None: all), newest first."""
    return list_memories(ctx, limit=limit, kind=kind, since=since, max_sensitivity=max_sensitivity,
                         namespace=namespace, include_namespaces=include_namespaces, project=project)


def today_since(ctx: Context, now: datetime | None = None) -> str:
    """The start of today on the owner's calendar (local midnight in `twin.clock.owner_zone`, UTC ISO-8601): what
    `today` lists from (seed 003 says the last 24 h; a calendar day is what "today" means to the owner)."""
    from twin.clock import owner_zone
    from twin.recall.time_window import today_window

    return format_time(today_window(now or datetime.now(UTC), owner_zone(ctx.settings)).start)


def today(ctx: Context, limit: int = 50, kind: str | None = None, max_sensitivity: str | None = None,
          namespace: str = DEFAULT_NAMESPACE, include_namespaces: list[str] | None = None,
          project: str | None = None) -> list[MemoryOut]:
    """Seed 003's `memory_today`: the memories made today (`today_since`), newest first."""
    return recent(ctx, since=today_since(ctx), limit=limit, kind=kind, max_sensitivity=max_sensitivity,
                  namespace=namespace, include_namespaces=include_namespaces, project=project)


def context(ctx: Context, query: str, limit: int = 10, recent_limit: int = 10, kind: str | None = None,
            weights: dict[str, float] | None = None, max_sensitivity: str | None = None,
            namespace: str = DEFAULT_NAMESPACE, include_namespaces: list[str] | None = None,
            project: str | None = None, since: str | None = None) -> ContextOut:
    """Seed 003's `memory_context`, the first call of an agent's task: `search` and the newest `recent_limit`
    memories grouped by kind (`{kind: [memories]}`, newest first in each), both of memories made since `since`
    (ISO-8601; `InvalidInput` naming it otherwise), in one answer; and seed 003's
    "context packs v2": `context_pack` `{userGlobal: {kind: [memories]}, projectScoped: {kind: [memories]}}`, the
    search results (best first) then the newest memories not among them, by scope (the project in reach, from
    `project` or the active one, against the caller's own) and kind."""
    checked_limit(recent_limit, "recent_limit")
    found = search(ctx, query, limit=limit, kind=kind, since=since, weights=weights, max_sensitivity=max_sensitivity,
                   namespace=namespace, include_namespaces=include_namespaces, project=project)
    grouped: dict[str, list[MemoryOut]] = {}
    newest = list_memories(ctx, limit=recent_limit, kind=kind, since=since, max_sensitivity=max_sensitivity,
                           namespace=namespace, include_namespaces=include_namespaces, project=project)
    for m in newest:
        grouped.setdefault(m.kind, []).append(m)
    pack: dict[str, dict[str, list[MemoryOut]]] = {"userGlobal": {}, "projectScoped": {}}
    seen: set[int] = set()
    for m in [MemoryOut(**h.model_dump(include=set(MemoryOut.model_fields))) for h in found.results] + newest:
        if m.id not in seen:
            seen.add(m.id)
            part = "projectScoped" if m.namespace.startswith(PROJECT_PREFIX) else "userGlobal"
            pack[part].setdefault(m.kind, []).append(m)
    return ContextOut(**found.model_dump(), recent=grouped, context_pack=pack)


def own_memory(ctx: Context, memory_id: int, namespaces: tuple[str, ...] = (DEFAULT_NAMESPACE,)) -> Memory:
    """The memory `memory_id` of the context's being (any status) in one of `namespaces` (checked names,
    `twin.namespaces.scope`). Raises `NotFound` otherwise (a memory of another namespace is not there for the
    caller, as in a listing)."""
    memory = ctx.store.get(memory_id) if 0 < memory_id <= INTEGER_MAX else None
    if memory is None or memory.being_id != ctx.being or memory.namespace not in namespaces:
        raise NotFound(f"no memory #{memory_id}")
    return memory


def get_memory(ctx: Context, memory_id: int, max_sensitivity: str | None = None,
               namespace: str = DEFAULT_NAMESPACE, include_namespaces: list[str] | None = None,
               project: str | None = None) -> MemoryOut:
    """One memory by id, whatever its status (seed 003: superseded ones stay readable by id), in `namespace` or
    `include_namespaces`; a sensitive one's text only with `max_sensitivity="sensitive"`. Raises `NotFound`."""
    names = reach(ctx.store, namespace, include_namespaces, project).reads
    levels = sensitivity_levels(max_sensitivity)
    return MemoryOut.of(own_memory(ctx, memory_id, names), SENSITIVE in levels)


def neighbors(ctx: Context, memory_id: int, depth: int = 1, max_sensitivity: str | None = None,
              namespace: str = DEFAULT_NAMESPACE, include_namespaces: list[str] | None = None,
              project: str | None = None) -> NeighborsOut:
    """Seed 003's `memory_neighbors`: the memories within `depth` (1-3) graph edges
    (`twin.lifecycle.cycle.neighbors`; edges never cross namespaces), best first, of a memory in `namespace` or
    `include_namespaces`; levels above `max_sensitivity` left out. When the graph cannot be read the set is empty
    and `degraded` says why. Raises `NotFound`, `InvalidInput` (field `depth`, `namespace`...)."""
    from twin.lifecycle.cycle import MAX_DEPTH
    from twin.lifecycle.cycle import neighbors as walk

    if not 1 <= depth <= MAX_DEPTH:
        raise InvalidInput(f"depth must be 1-{MAX_DEPTH}", field="depth")
    names = reach(ctx.store, namespace, include_namespaces, project).reads
    levels = sensitivity_levels(max_sensitivity)
    own_memory(ctx, memory_id, names)
    try:
        found = walk(ctx.store, memory_id, depth=depth, include_sensitive=SENSITIVE in levels)
    except sqlite3.Error as exc:  # seed 003: a failed relations query is "degraded", the set empty
        return NeighborsOut(id=memory_id, depth=depth, neighbors=[], degraded=True,
                            reason=f"the graph could not be read ({exc})")
    shown = [Neighbor(**MemoryOut.of(m, SENSITIVE in levels).model_dump(), score=round(s, 4))
             for m, s in found if m.sensitivity in levels and m.namespace in names]
    return NeighborsOut(id=memory_id, depth=depth, neighbors=shown)


def history(ctx: Context, memory_id: int, max_sensitivity: str | None = None, namespace: str = DEFAULT_NAMESPACE,
            include_namespaces: list[str] | None = None, project: str | None = None) -> HistoryOut:
    """A memory's supersession chain (seed 003's provenance "by id"): every memory it replaced, directly or
    through others, itself, and what replaced it up to the current one; oldest first, sensitive text masked
    unless `max_sensitivity="sensitive"`. The memory is one of `namespace` or `include_namespaces` (supersession
    stays inside a namespace). Raises `NotFound`."""
    names = reach(ctx.store, namespace, include_namespaces, project).reads
    levels = sensitivity_levels(max_sensitivity)
    start = own_memory(ctx, memory_id, names)
    seen: dict[int, Memory] = {start.id: start}
    todo = [start.id]
    while todo:  # back: what each replaced
        for old in ctx.store.get_many(ctx.store.superseded_by_of(todo.pop())).values():
            if old.id not in seen:
                seen[old.id] = old
                todo.append(old.id)
    head = start
    while head.superseded_by is not None and head.superseded_by not in seen:  # forward: what replaced it
        nxt = ctx.store.get(head.superseded_by)
        if nxt is None:
            break
        seen[nxt.id] = head = nxt
    chain = sorted(seen.values(), key=lambda m: (m.created_at, m.id))
    current = next((m.id for m in reversed(chain) if m.status == "active"), None)
    return HistoryOut(id=memory_id, chain=[MemoryOut.of(m, SENSITIVE in levels) for m in chain], current=current)


def stats(ctx: Context) -> dict:
    """Seed 003's `memory_stats` (`twin.lifecycle.cycle.stats`): counts by kind and tier, superseded, edges, last
    decay and dream, and `by_namespace` `{name: {warm, cold}}` over active memories (seed 003's `byNamespace`),
    over every namespace."""
    require_owner("the twin's stats")
    from twin.lifecycle.cycle import stats as lifecycle_stats

    return lifecycle_stats(ctx.store, ctx.being)


def signals(ctx: Context, status: str | None = None, limit: int = 20) -> list[Signal]:
    """The caller's raised and held-back signals, newest first, with their evidence ids; `status` `raised` or
    `held_back`. The twin's owner sees theirs (of their own memories and of their projects); a person the owner
    added sees the signals drawn for them from the projects they are still a member of (issue 19:
    `twin.reflection.project_pass`), none once unshared. Raises `InvalidInput` for another status. The rows are
    the store's own `Signal` (pydantic serialises the dataclass as it is, so the API's shape is the table's)."""
    if status not in (None, "raised", "held_back"):
        raise InvalidInput("status must be raised or held_back", field="status")
    who = caller()
    return still_theirs(ctx.store, list_signals(ctx.store, ctx.being, status=status, limit=checked_limit(limit),
                                                recipient=who.person_id), who.person_id)


def profile(ctx: Context) -> dict:
    """The profile (seed 000's facts, goals, preferences, routines, tone) as stored."""
    require_owner("the profile")
    from twin.profile import load_profile

    return load_profile(ctx.store, ctx.being).model_dump()


def status(ctx: Context) -> dict:
    """`twin status`'s report (`twin.health.status`): counts, backlog, queues, index, connectors, lifecycle,
    degraded modes; the queues when the daemon's Redis answers (`ctx.bus()`)."""
    require_owner("the status")
    from twin.health import status as health_status

    bus = ctx.bus()
    return health_status(ctx.settings, ctx.store, bus, None if bus is not None else ConnectionError("no answer"))


def activity(ctx: Context, n: int = ACTIVITY_SHOWN) -> list[ActivityLineOut]:
    """The newest `n` diary lines (seed 001: 60), newest first."""
    require_owner("the diary")
    return [ActivityLineOut(**vars(line)) for line in reversed(ctx.activity.recent(checked_limit(n)))]
