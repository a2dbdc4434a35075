"""The job registry (STYLE.md 4): every job a twin worker runs, by name. Jobs are idempotent.

Jobs are queued by dotted name (`twin.workers.jobs.<name>`, `twin.workers.bus.Bus.enqueue`); the worker imports
this module to run them. The names an older twin queued (before this package moved under `twin.`, and the jobs
that carried the text itself) are resolved by the worker's job class, `twin.workers.legacy_jobs.LegacyNameJob`.

Learn jobs (and `decay_being`) run in the learn worker; `embed_flush`, `index_checkpoint` and `dream_being` only in
the single embedding worker, which owns the model and is the only writer of the index (DESIGN.md "Shape").
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rq import get_current_job

from twin import ingest
from twin.activity import Activity
from twin.learn.interests import PageVisit
from twin.learn.interests import learn_interests as _learn_interests
from twin.learn.learning import LearnResult, learn, learned_line, source_type
from twin.learn.learning import forget_source as _forget_source
from twin.learn.learning import learn_document as _learn_document
from twin.lifecycle.cycle import VectorLookup, decay, dream, write_all_pending_edges
from twin.memory import parse_time
from twin.reflection.hush import HushGate, HushRules
from twin.reflection.project_pass import reflect_projects
from twin.reflection.second_pass import reflect
from twin.store import state
from twin.vectors.embedding_flush import flush_pending
from twin.workers.bus import FLUSH_FLAG, PER_JOB, SCRUB_FLAG, Bus
from twin.workers.context import BadInput, current

if TYPE_CHECKING:  # types only: the index's libraries load in the embedding worker alone
    from twin.vectors.sidecar import IndexWriter

log = logging.getLogger(__name__)


EMAIL_MEMORIES_PER_THREAD = 12
"""A thread is read in one call of at most 12 memories (seed 000's per-call bound)."""


@dataclass
class Tally:
    """What one `learn_items` job did, for its diary lines and the embedding and checkpoint requests."""

    by_kind: dict[str, list[int]] = field(default_factory=dict)  # source type -> [created, reinforced, profile]
    created: int = 0
    reinforced: int = 0
    removed: int = 0
    updated: int = 0

    def add(self, kind: str | None, result: LearnResult) -> None:
        """Count `result`; `kind` (a source type) gets a diary line at the end, None none (files write theirs)."""
        self.created += len(result.created)
        self.reinforced += len(result.reinforced)
        self.removed += len(result.removed)
        self.updated += len(result.updated)
        if kind is not None:
            tally = self.by_kind.setdefault(kind, [0, 0, 0])
            tally[0] += len(result.created)
            tally[1] += len(result.reinforced)
            tally[2] += result.profile_updated


def learn_items(being: str, ids: list) -> dict:
    """Learn the staged items `ids` (`twin.ingest`; ids already learned or forgotten are skipped, so a retried job
    redoes nothing), each consumed in the transaction that stores its memories: `text` through `learn()`,
    `document` (a file; one marked `appended`, what a file that only grew gained, adds to its memories) and
    `email` (a thread: the model reads the text, the offline extractor the summary; seed 001) replacing their
    source's memories, `interests` clustered (the model when configured, else the heuristic),
    `forget` removing their source's memories (one coalesced `scrub_store` job for what was deleted or rewritten:
    a folder of files gone costs one merge of the full-text index). Then one diary
    line per source type ("Learned 3 thing(s) from telegram."; files and the browser write their own), one
    embedding flush request and, when memories were removed, a checkpoint request. Returns
    `{created, reinforced, removed, items}`."""
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise BadInput("learn_items needs a list of staged item ids")
    return _learn_staged(current(), being, ids)


TEXTS_SLICE_S = 10.0
"""A `learn_texts` job takes chunks for at most this long, then hands what is left to the next job: a steady
stream never reaches the job timeout, and a reflection or a warm stop waits at most this long (as `FLUSH_SLICE_S`)."""


def learn_texts(being: str) -> dict:
    """Learn `being`'s `text` items that wait for this job (`Bus.push_texts`: single pushes join the one waiting
    job), `PER_JOB["text"]` at a time, each chunk as one `learn_items` (consumed with its memories, its diary line
    and embedding request). Takes `ready` items too, never held or failed ones. When none is left or after
    `TEXTS_SLICE_S`, it lets go of the being's flag and then looks again: what arrived meanwhile is pushed on to the
    next job, so nothing is stranded. A rerun (after a kill) takes what the killed run left. Returns
    `{created, reinforced, removed, items, chunks}`."""
    ctx = current()
    job = get_current_job()
    job_id = job.id if job is not None else "in-process"
    bus = Bus(ctx.redis)
    totals = {"created": 0, "reinforced": 0, "removed": 0, "items": 0, "chunks": 0}
    deadline = time.monotonic() + TEXTS_SLICE_S
    try:
        while time.monotonic() < deadline and (ids := ingest.claim_texts(ctx.store, being, job_id, PER_JOB["text"])):
            for key, value in _learn_staged(ctx, being, ids).items():
                totals[key] += value
            totals["chunks"] += 1
    finally:  # a failed run lets new texts go to a new job; its retry takes what it holds
        bus.release_texts(being, job_id)
    left = ingest.claim_texts(ctx.store, being, job_id, 2**31)
    if left:
        bus.push(ctx.store, left, being, "text")
    return totals


def _learn_staged(ctx, being: str, ids: list[int]) -> dict:
    """The body of `learn_items`: learn the staged items `ids`, one diary line per source type, then the
    embedding, scrub and checkpoint requests."""
    activity = Activity(ctx.store, being)
    tally = Tally()
    staged = ingest.in_source_order(ctx.store, ingest.fetch(ctx.store, ids))  # a source's items in staged order
    for item in staged:
        _learn_item(ctx, activity, item, tally)
    _scrub_later(ctx, tally.removed or tally.updated)  # one coalesced scrub of what was deleted or rewritten
    for kind, (created, reinforced, profiled) in tally.by_kind.items():
        if created or reinforced or profiled:
            activity.record("learned", learned_line(created, reinforced, kind, bool(profiled)))
    bus = Bus(ctx.redis)
    if tally.created:
        bus.notify_embed()
    if tally.removed:
        bus.request_checkpoint()
    return {"created": tally.created, "reinforced": tally.reinforced, "removed": tally.removed,
            "items": len(staged)}


def _learn_item(ctx, activity: Activity, staged: ingest.Staged, tally: Tally) -> None:
    """One staged item by its mode (see `learn_items`)."""
    item, store, provider = staged.item, ctx.store, ctx.provider
    extra = item.extra if isinstance(item.extra, dict) else {}
    if item.mode == "text":
        result = learn(store, activity, item.being, item.text, item.source, item.ref, provider=provider, quiet=True,
                       ingest_id=staged.id, speaker=_text_field(extra, "speaker"), origin=_text_field(extra, "origin"),
                       namespace=item.namespace)
        tally.add(source_type(item.source), result)
    elif item.mode == "document":
        result = _learn_document(store, item.being, item.text, item.source, extra.get("title"),
                                 int(extra.get("max_memories", EMAIL_MEMORIES_PER_THREAD)), ref=item.ref,
                                 provider=provider, activity=activity, ingest_id=staged.id, namespace=item.namespace,
                                 replace=extra.get("appended") is not True)
        tally.add(None, result)
    elif item.mode == "email":
        summary = str(extra.get("summary", ""))
        result = _learn_document(store, item.being, item.text if provider is not None else summary, item.source,
                                 None, EMAIL_MEMORIES_PER_THREAD, provider=provider, activity=activity,
                                 offline_text=summary, ingest_id=staged.id, namespace=item.namespace)
        tally.add("email", result)
    elif item.mode == "interests":
        visits = extra.get("visits", [])
        pages = [PageVisit.from_list(v) for v in visits if isinstance(v, list | tuple) and len(v) == 3
                 and all(isinstance(x, str) for x in v)] if isinstance(visits, list) else []
        texts, _ = _learn_interests(store, activity, item.being, pages, int(extra.get("profiles", 0)), provider,
                                    ingest_id=staged.id)
        tally.created += len(texts)
    else:  # forget: a file that is gone
        with store.atomic():
            tally.removed += len(_forget_source(store, item.being, item.source, item.namespace))
            ingest.consume(store, [staged.id])


def _text_field(extra: dict, key: str) -> str | None:
    """`extra[key]` when it is a non-empty string (a staged item's JSON is trusted only that far), else None."""
    value = extra.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _scrub_later(ctx, changed: object) -> None:
    """After a job removed memories or rewrote their text (`changed` non-empty), ask for one `scrub_store` job
    (coalesced: a burst of removals gets one). The trigger-set marker in SQLite keeps it due if Redis loses it."""
    if changed:
        Bus(ctx.redis).request_scrub()


def scrub_store() -> dict:
    """Erase deleted memory text from the database files (`Store.scrub_deleted_text`) if the scrub marker is set;
    one job for a whole burst of removals (twin.lifecycle.forgetting). Returns `{"scrubbed": bool, ...}`."""
    ctx = current()
    ctx.redis.delete(SCRUB_FLAG)  # from here on a new removal queues a new scrub
    if not ctx.store.scrub_due():
        return {"scrubbed": False}
    return {"scrubbed": True, **ctx.store.scrub_deleted_text()}


FLUSH_SLICE_S = 10.0
"""A flush job embeds for at most this long, then queues its continuation, so a big backlog never hits
the job timeout, a forget or checkpoint job gets its turn, and a warm stop waits at most this long."""


def embed_flush() -> dict:
    """Wait until 600 ms after the first pending memory was announced (seed 000), then flush for up to
    `FLUSH_SLICE_S`; queue a continuation while memories remain (embedding worker only)."""
    ctx = current()
    settings = ctx.settings
    if ctx.vectors is None:  # TWIN_EMBED_BACKEND=none: keyword-only, nothing to embed
        ctx.redis.delete(FLUSH_FLAG)
        return {"embedded": 0}
    announced = ctx.redis.get(FLUSH_FLAG)
    if announced:
        wait = float(announced) + settings.embed_flush_delay_s - time.time()
        if wait > 0:
            time.sleep(min(wait, settings.embed_flush_delay_s))
    ctx.redis.delete(FLUSH_FLAG)  # from here on a new memory enqueues a new flush
    with ctx.vectors.held() as (embedder, writer):
        n = flush_pending(ctx.store, embedder, writer, settings.embed_batch_max, settings.embed_reschedule_s,
                          budget_s=FLUSH_SLICE_S, outage=ctx.outage)
        _write_edges(ctx, writer)
        if ctx.store.pending_embeddings(embedder.model_id, 1):
            Bus(ctx.redis).enqueue("embed_flush")
        if time.monotonic() - writer.last_checkpoint_s > settings.index_checkpoint_s:
            writer.checkpoint()
    return {"embedded": n}


def _lookup(ctx, writer: IndexWriter) -> VectorLookup:
    """Top-k over the embedding worker's own index (`writer`'s, held), caught up with SQLite."""
    writer.catch_up()
    return VectorLookup(ctx.store, writer.index.search, writer.index.model_id)


def _write_edges(ctx, writer: IndexWriter) -> int:
    """Seed 003's `co_occurs` edges for every marked memory that has a vector by now (embedding worker only;
    markers of memories still without one stay). Returns how many markers were resolved."""
    return write_all_pending_edges(ctx.store, _lookup(ctx, writer))


def index_checkpoint() -> dict:
    """Catch up, write pending graph edges (so a marker left by a flush that died still gets its edges within
    one checkpoint period), scrub forgotten vectors and write a checkpoint if anything changed (embedding worker
    only; a resting worker opens its index for it, so a forgotten vector leaves the saved file too)."""
    ctx = current()
    if ctx.vectors is None or ctx.vectors.saved_is_whole(ctx.store):  # resting, and the saved file is all of it
        return {"written": False}
    with ctx.vectors.held(use=False) as (_, writer):  # housekeeping: the worker still rests on time
        _write_edges(ctx, writer)
        return {"written": writer.checkpoint()}


def decay_being(being: str) -> dict:
    """Seed 003's decay pass for one being (learn worker): idle warm memories go cold. Returns `{"demoted"}`."""
    return decay(current().store, being)


def dream_being(being: str) -> dict:
    """Seed 003's dream cycle for one being, in the embedding worker (the index's owner): pending edges first,
    then merges and edge promotion over its caught-up index; merged-away vectors are scrubbed from the index by
    a checkpoint at once. Returns `{walked, merged, edgesPromoted, durationMs}`."""
    ctx = current()
    if ctx.vectors is None:
        return dream(ctx.store, being, None)
    with ctx.vectors.held(use=False) as (_, writer):  # housekeeping, as the checkpoint
        _write_edges(ctx, writer)
        result = dream(ctx.store, being, _lookup(ctx, writer))
        if result["merged"]:
            writer.checkpoint()
    return result


def reflect_being(being: str, force: bool = False) -> dict:
    """Seed 001's reflection for one being, at most one model call per tick for the owner's own memories and one
    per project with `reflect_min_new` new memories (`twin.reflection.project_pass`, issue 19): unless `force`d, a
    being whose last model call was less than 90 % of `TWIN_TICK_S` ago is skipped. The owner's raised signals go
    on the outbox; a member's wait at `/v1/signals`.
    Returns `ReflectionResult.to_dict()` plus `calls`, the model calls this job made."""
    ctx = current()
    settings = ctx.settings
    last = state.get_time(ctx.store, "reflection", being, "last_call_at")
    if not force and last and time.time() - parse_time(last).timestamp() < 0.9 * settings.tick_s:
        return {"ran": False, "note": "the model was already called this tick", "calls": 0}
    bus = Bus(ctx.redis)
    gate = HushGate(ctx.store, being, HushRules.from_settings(settings))
    calls_before = ctx.provider.calls if ctx.provider else 0

    def outbox(signal_id: int) -> None:
        bus.push_signal(signal_id, being)

    result = reflect(ctx.store, Activity(ctx.store, being), being, ctx.provider, gate, force=force,
                     min_new=settings.reflect_min_new, outbox=outbox)
    projects = reflect_projects(ctx.store, Activity(ctx.store, being), being, ctx.provider, gate.rules,
                                min_new=settings.reflect_min_new, outbox=outbox)
    calls = (ctx.provider.calls if ctx.provider else 0) - calls_before
    log.info("reflect: %s: %d new memories, %d project(s) reflected on, %d model call(s) this tick; %s", being,
             result.new_memories, sum(p.ran for p in projects), calls, "ran" if result.ran else result.note)
    return {**result.to_dict(), "projects": [p.to_dict() for p in projects], "calls": calls}


JOBS = {
    "learn_items": learn_items,
    "learn_texts": learn_texts,
    "scrub_store": scrub_store,
    "embed_flush": embed_flush,
    "index_checkpoint": index_checkpoint,
    "reflect_being": reflect_being,
    "decay_being": decay_being,
    "dream_being": dream_being,
}
"""Every job twin queues, by name (`twin.workers.bus.JOB_OPTIONS` has their queue options). The shims for the names
an older twin queued are `twin.workers.legacy_jobs.LEGACY_JOBS`."""
