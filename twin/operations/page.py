"""The operations the page needs that the other interfaces had no call for yet (DESIGN.md invariant 9: the page
calls these through the same JSON routes any client may use): the one-time links that open a page session, a
listing with every filter and a keyset for the next page, forgetting a whole source with its count first, editing
the profile, the diary after a line, and the charts' numbers: memories and supersessions per week, and the API's
search times of the last hour.

Links (`new_page_link`, `redeem_page_link`): a code of `LINK_BYTES` random bytes, stored only as its SHA-256 in the
store's `state` table (scope `page`), good once and for `LINK_TTL_S` seconds. The sessions they open are
`twin.api.session`'s; `end_page_sessions` ends them all.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import time
from datetime import UTC, datetime, timedelta

from pydantic import ValidationError

from twin.exceptions import InvalidInput, NotFound
from twin.limits import checked_limit
from twin.memory import SENSITIVE, format_time, parse_time, utc_now
from twin.namespaces import DEFAULT_NAMESPACE, scope
from twin.operations.context import Context, sensitivity_levels
from twin.operations.reads import check_kind, check_time, own_memory
from twin.operations.scopes import require_owner
from twin.operations.shapes import ActivityLineOut, ForgetOut, MemoryOut
from twin.store import page_sessions, state, weekly

PAGE_SCOPE = "page"
"""The `state` scope of the page's one-time links."""
LINK_BYTES = 24
"""Random bytes in a link's code (`secrets.token_urlsafe`: 32 characters)."""
LINK_TTL_S = 300
"""Seconds a link printed by `twin open` can be used (once)."""
TIERS = ("warm", "cold")
WEEKS_MAX = 520
"""At most ten years of weeks in `memory_weeks` and `supersession_weeks`."""
LATENCY_MINUTES = 60
"""`recall_latency` looks back this many minutes by default (the issue: "recall latency of the last hour")."""
LATENCY_STEP_MIN = 5
"""`recall_latency`'s buckets are this many minutes wide by default."""


def _link_key(code: str) -> str:
    return "link:" + hashlib.sha256(code.encode("utf-8", "surrogateescape")).hexdigest()


def new_page_link(ctx: Context, now: datetime | None = None) -> str:
    """A fresh one-time code for `/twin/session/<code>` (good for `LINK_TTL_S` seconds, once); only its SHA-256
    is stored. Links that expired are dropped on the way."""
    require_owner("the page")
    now = now or datetime.now(UTC)
    code = secrets.token_urlsafe(LINK_BYTES)
    with ctx.store.atomic():
        for key in state.keys_starting(ctx.store, PAGE_SCOPE, ctx.being, "link:"):
            if parse_time(state.get_time(ctx.store, PAGE_SCOPE, ctx.being, key)) <= now:
                state.delete(ctx.store, PAGE_SCOPE, ctx.being, key)
        state.set_time(ctx.store, PAGE_SCOPE, ctx.being, _link_key(code),
                       format_time(now + timedelta(seconds=LINK_TTL_S)))
    return code


def redeem_page_link(ctx: Context, code: str, now: datetime | None = None) -> bool:
    """True when `code` is a link not used yet and not expired; it is used up either way (single use: a second
    call with the same code is False)."""
    require_owner("the page")
    if not isinstance(code, str) or not 16 <= len(code) <= 128:
        return False
    key = _link_key(code)
    with ctx.store.atomic():
        expires = state.get_time(ctx.store, PAGE_SCOPE, ctx.being, key)
        if expires is None:
            return False
        state.delete(ctx.store, PAGE_SCOPE, ctx.being, key)
    return parse_time(expires) > (now or datetime.now(UTC))


def end_page_sessions(ctx: Context) -> int:
    """End every page session (`twin token --rotate`, `twin open --end-sessions`) and drop the links not used yet;
    how many sessions there were. A running API refuses their cookies from the next request on (it looks every
    session up in the store)."""
    require_owner("the page")
    with ctx.store.atomic():
        for key in state.keys_starting(ctx.store, PAGE_SCOPE, ctx.being, "link:"):
            state.delete(ctx.store, PAGE_SCOPE, ctx.being, key)
        return page_sessions.drop_all_sessions(ctx.store)


def browse_memories(ctx: Context, limit: int = 50, kind: str | None = None, source_type: str | None = None,
                    tier: str | None = None, include_superseded: bool = False, since: str | None = None,
                    until: str | None = None, after: int | None = None, max_sensitivity: str | None = None,
                    namespace: str = DEFAULT_NAMESPACE, include_namespaces: list[str] | None = None,
                    after_created_at: str | None = None) -> list[MemoryOut]:
    """Seed 000's "read all of it" with every filter of the page: newest first, at most `limit` (1-200), of
    one `kind`, `source_type` (`file`, `email`, `browser`, …), `tier` (warm/cold), made in `since`..`until`
    (ISO-8601), superseded ones too with `include_superseded`; `after` the id of the last memory of the page before
    (the next page starts right after it, by `(created_at, id)`: nothing older is ever skipped), with
    `after_created_at` its `created_at` (UTC ISO-8601): the cursor then holds without the row, so a page continues
    after its last memory was forgotten (found by a breaker run: a 404). Levels above `max_sensitivity` left out
    in the query. Raises `InvalidInput` naming the field, `NotFound` for an `after` that is gone when
    `after_created_at` is not given."""
    require_owner("the page")
    names = scope(namespace, include_namespaces)
    limit, kind = checked_limit(limit), check_kind(kind)
    since, until = check_time(since, "since"), check_time(until, "until")
    if tier is not None and tier not in TIERS:
        raise InvalidInput("tier must be warm or cold", field="tier")
    if source_type is not None and (not source_type.strip() or ":" in source_type or len(source_type) > 64):
        raise InvalidInput("source_type is the part of a source before ':' (file, email, browser, …)",
                           field="source_type")
    levels = sensitivity_levels(max_sensitivity)
    key = None
    if after_created_at is not None and after is None:
        raise InvalidInput("after_created_at goes with after (the id of the last memory shown)",
                           field="after_created_at")
    if after is not None and after_created_at is not None:
        key = (check_time(after_created_at, "after_created_at"), after)
    elif after is not None:
        try:
            last = own_memory(ctx, after, names)
        except NotFound:
            raise NotFound(f"no memory #{after} (forgotten?): send after_created_at, the created_at of the last "
                           "memory shown, to continue after it", field="after") from None
        key = (last.created_at, last.id)
    rows = ctx.store.list_memories(ctx.being, kind=kind, limit=limit, since=since, before=until,
                                   include_superseded=include_superseded, levels=levels, namespaces=names, tier=tier,
                                   source_type=source_type or None, after=key)
    return [MemoryOut.of(m, SENSITIVE in levels) for m in rows]


def _source_plan(ctx: Context, source: str, namespace: str, prefix: bool):
    from twin.lifecycle.forgetting import plan

    if not isinstance(source, str) or not source.strip() or len(source) > 1000:
        raise InvalidInput("source must name a source (file:/path, email:<thread>, telegram:<chat>, browser)",
                           field="source")
    source = source.strip()
    # exact unless `prefix`: the page forgets the source of one memory, and a stored source may end in `*` (a file
    # `draft*`, a source an API client chose), which the CLI's pattern would read as "every source that starts so"
    todo = (plan(ctx.store, ctx.being, source=source if source.endswith("*") else source + "*",
                 namespaces=scope(namespace)) if prefix
            else plan(ctx.store, ctx.being, source=source, namespaces=scope(namespace), exact=True))
    if not any(todo.counts().values()):  # a forget that removes nothing says so (found by a breaker run)
        hint = ("" if prefix else f"; this is exactly that source (a trailing * is part of its name here): send "
                f"prefix true for every source that starts with {source.rstrip('*')!r}")
        raise NotFound(f"nothing is stored from the source {source!r}{hint}", field="source")
    return todo


def forget_source_plan(ctx: Context, source: str, namespace: str = DEFAULT_NAMESPACE, prefix: bool = False) -> dict:
    """The dry run of forgetting every memory of exactly `source` (`twin.lifecycle.forgetting.plan(exact=True)`: a
    trailing `*` is part of the name here), or with `prefix` of every source that starts with it (`twin forget
    --source 'file:/folder/*'`), in `namespace`: `{source, counts}` per table, nothing changed. Raises `NotFound`
    (field `source`) when nothing would be removed, with the hint about `prefix`."""
    require_owner("the page")
    return {"source": source, "counts": _source_plan(ctx, source, namespace, prefix).counts()}


def forget_source(ctx: Context, source: str, namespace: str = DEFAULT_NAMESPACE, prefix: bool = False) -> ForgetOut:
    """Forget every memory of `source` (or with `prefix` of every source that starts with it) in `namespace` with
    every copy of it (`twin forget --source`: the plan, then `carry_out`; the daemon told to scrub its index). `id`
    is 0 (no one memory); `removed` per table. Raises `NotFound` (field `source`) when nothing matched: a forget
    that removed nothing is not answered `ok`."""
    require_owner("the page")
    from twin.lifecycle.forgetting import carry_out
    from twin.operations.writes import after_forget

    done = carry_out(ctx.store, ctx.activity, _source_plan(ctx, source, namespace, prefix))
    after_forget(ctx, done)
    return ForgetOut(ok=True, id=0, removed=done.counts())


def edit_profile(ctx: Context, data: dict) -> dict:
    """Replace the profile with `data` (`{facts, goals, preferences, routines: [str], tone}`), checked by the same
    model as `twin profile edit` (`twin.profile.Profile`: no unknown key, at most 40 items a list, items cleaned
    to one line). One diary line ("You edited your profile by hand."). Returns the profile as stored. Raises
    `InvalidInput` naming the first bad field (nothing is changed)."""
    require_owner("the page")
    from twin.profile import Profile, save_profile

    try:
        edited = Profile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first.get("loc") else "profile"
        raise InvalidInput(f"{field}: {first['msg']}; the profile was not changed", field=field) from exc
    with ctx.store.atomic():
        save_profile(ctx.store, ctx.being, edited, utc_now())
    ctx.activity.record("profile", "You edited your profile by hand.")
    return edited.model_dump()


def activity_after(ctx: Context, after_id: int = 0, limit: int = 60) -> list[ActivityLineOut]:
    """The diary lines after line `after_id`, oldest first, at most `limit` (1-200, more is refused): what a live view
    adds to what it shows."""
    require_owner("the page")
    if after_id < 0:
        raise InvalidInput("after must be 0 or a line id", field="after")
    return [ActivityLineOut(**vars(line)) for line in ctx.activity.recent(checked_limit(limit), after_id=after_id)]


def _mondays(weeks: int, now: datetime | None) -> list[str]:
    """The Mondays (YYYY-MM-DD, UTC) of the last `weeks` weeks, oldest first; `InvalidInput` unless 1-520."""
    if not 1 <= weeks <= WEEKS_MAX:
        raise InvalidInput(f"weeks must be 1-{WEEKS_MAX}", field="weeks")
    today = (now or datetime.now(UTC)).date()
    first = today - timedelta(days=today.weekday() + 7 * (weeks - 1))
    return [(first + timedelta(days=7 * i)).isoformat() for i in range(weeks)]


def memory_weeks(ctx: Context, weeks: int = 26, now: datetime | None = None) -> dict:
    """Memories made per week in the last `weeks` (1-520), by source type, for the page's chart: `{weeks: [monday
    of each week, YYYY-MM-DD, oldest first], series: {source_type: [count per week]}}` over every status and
    namespace (what the store holds). Weeks start on Monday, UTC."""
    require_owner("the page")
    mondays = _mondays(weeks, now)
    rows = weekly.memories_per_week(ctx.store, ctx.being, mondays[0])
    index = {d: i for i, d in enumerate(mondays)}
    series: dict[str, list[int]] = {}
    for monday, source_type, count in rows:
        if monday in index:
            series.setdefault(source_type, [0] * weeks)[index[monday]] += count
    return {"weeks": mondays, "series": dict(sorted(series.items()))}


def supersession_weeks(ctx: Context, weeks: int = 26, now: datetime | None = None) -> dict:
    """Supersessions per week in the last `weeks` (1-520), for the page's chart: `{weeks: [monday, YYYY-MM-DD,
    oldest first], counts: [per week]}`, over every namespace. The store keeps no time of a supersession, so a
    superseded memory counts in the week its successor (`superseded_by`) was made: capture supersedes the old
    value as it stores the new one. A superseded memory whose successor is gone counts in no week."""
    require_owner("the page")
    mondays = _mondays(weeks, now)
    rows = weekly.supersessions_per_week(ctx.store, ctx.being, mondays[0])
    index = {d: i for i, d in enumerate(mondays)}
    counts = [0] * weeks
    for monday, count in rows:
        if monday in index:
            counts[index[monday]] += count
    return {"weeks": mondays, "counts": counts}


def _nearest_rank(sorted_ms: list[float], share: float) -> float:
    """The nearest-rank percentile (`share` 0..1) of ascending `sorted_ms`: the smallest value with at least that
    share of the values at or below it."""
    return sorted_ms[max(0, math.ceil(share * len(sorted_ms)) - 1)]


def recall_latency(ctx: Context, samples: list[tuple], minutes: int = LATENCY_MINUTES,
                   step: int = LATENCY_STEP_MIN, now: float | None = None) -> dict:
    """The API's search times of the last `minutes` in buckets of `step` minutes, for the page's chart: `{start,
    step_min, buckets: [{start, count, p50_ms, p99_ms}], by_interface: {interface: count}}` oldest first, `start`
    UTC ISO-8601, the percentiles nearest-rank (None in a bucket without a search), `by_interface` how many of the
    searches each interface asked (`page`, `http`, `cli`, `mcp`, `mcp-stdio`). `samples` are `(at Unix seconds,
    seconds, interface)` as `twin.api.latency.SearchTimes` keeps them in the API process (never in the store;
    `ctx` is not read; a sample without its interface counts as `local`); those after `now` are left out. Raises
    `InvalidInput` unless `step` is 1-60 and `minutes` a multiple of it up to a day."""
    require_owner("the page")
    if not 1 <= step <= 60 or not step <= minutes <= 1440 or minutes % step:
        raise InvalidInput("step must be 1-60 minutes and minutes a multiple of it, at most 1440", field="minutes")
    now = time.time() if now is None else now
    size = step * 60
    first = (math.floor(now / size) + 1) * size - minutes * 60  # the buckets end with the one holding `now`
    times: list[list[float]] = [[] for _ in range(minutes // step)]
    asked: dict[str, int] = {}
    for at, seconds, *who in samples:
        slot = math.floor((at - first) / size)
        if at <= now and 0 <= slot < len(times):
            times[slot].append(seconds * 1000)
            interface = who[0] if who else "local"
            asked[interface] = asked.get(interface, 0) + 1
    buckets = []
    for i, ms in enumerate(times):
        ms.sort()
        buckets.append({"start": format_time(datetime.fromtimestamp(first + i * size, UTC)), "count": len(ms),
                        "p50_ms": round(_nearest_rank(ms, 0.5), 1) if ms else None,
                        "p99_ms": round(_nearest_rank(ms, 0.99), 1) if ms else None})
    return {"start": buckets[0]["start"], "step_min": step, "buckets": buckets, "by_interface": asked}
