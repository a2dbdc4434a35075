"""The write operations every interface calls (seeds 000, 001 and 003): capture, remember, update, forget, learn,
session recap, reflect, the dream cycle. Each writes SQLite only (invariant 1), then tells a running daemon
(`Context.bus`) what it has to do: embed new text, scrub a forgotten vector from its index (the embedding worker is
the one index writer, invariant 4). Without a daemon the work waits for it, as after the CLI.

Every write goes to one `namespace` (default `default`; `twin.namespaces.checked`, a bad name raises
`NamespaceError`, an `InvalidInput` naming it): a capture's dedup, update and supersession stay inside it, and a
memory named by id outside it is `NotFound` (seed 003).

Bad input raises `InvalidInput` naming the field (nothing is written), an unknown memory `NotFound`.
"""

from __future__ import annotations

import logging
import sqlite3

from twin.exceptions import InvalidInput
from twin.learn.capture import CaptureResult, candidate_sensitivity, capture, supersession_line
from twin.learn.import_lines import MAX_CONTENT_CHARS
from twin.learn.learning import LearnResult, as_memories, learned_line, source_type
from twin.lifecycle.forgetting import ForgetPlan, scrub_if_due
from twin.memory import KINDS, SENSITIVE, SENSITIVITIES, stricter, strip_controls, utc_now
from twin.namespaces import DEFAULT_NAMESPACE, checked
from twin.operations.context import Context
from twin.operations.reads import own_memory
from twin.operations.scopes import reach, require_owner
from twin.operations.shapes import CaptureOut, DreamOut, ForgetOut, LearnOut, MemoryOut, ReflectOut
from twin.outside_text import clean_name, has_text
from twin.text.capture_rules import unworthy
from twin.text.extractor import MAX_PER_CALL, Candidate

log = logging.getLogger(__name__)

MAX_TAGS = 32
"""A memory written through an interface holds at most this many tags, each at most `MAX_TAG_CHARS`."""
MAX_TAG_CHARS = 64
DEFAULT_IMPORTANCE = 0.5
"""Importance of a memory written without one (seed 000's example)."""
DEFAULT_SOURCE = "api"
"""The source of a memory an interface writes without naming one."""


def clean_content(content: str, field: str = "content") -> str:
    """`content` as memory text: terminal controls dropped (`strip_controls`, the learn path's rule), trimmed,
    1..`MAX_CONTENT_CHARS` characters (the import's bound). Raises `InvalidInput` naming `field`."""
    text = strip_controls(content).strip() if isinstance(content, str) else ""
    if not has_text(text):
        raise InvalidInput(f"{field} must hold some text", field=field)
    if len(text) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"{field} is longer than {MAX_CONTENT_CHARS} characters", field=field)
    return text


def clean_tags(tags: list[str] | None) -> list[str]:
    """Tags cleaned like content, blanks and repeats dropped, at most `MAX_TAGS` of `MAX_TAG_CHARS`. Raises
    `InvalidInput` (field `tags`)."""
    out = list(dict.fromkeys(t for t in (strip_controls(str(tag)).strip() for tag in tags or ()) if t))
    if len(out) > MAX_TAGS or any(len(t) > MAX_TAG_CHARS for t in out):
        raise InvalidInput(f"at most {MAX_TAGS} tags of at most {MAX_TAG_CHARS} characters", field="tags")
    return out


CONNECTOR_SOURCES = {"file:": "file", "email:": "email thread", "telegram:": "Telegram chat", "chat:": "chat",
                     "browser": "browser history"}
"""The sources twin's connectors write under (a prefix, or the whole source), with what each names: a memory an
interface wrote under one would go with that connector's memories: replaced when the file or thread changes,
removed when the file is gone or the chat forgotten."""


def clean_source(source: str | None, connector: bool = False) -> str:
    """A source as stored: one safe line (`clean_name`, as `twin learn --source` stores it), `api` when blank.
    Raises `InvalidInput` (field `source`) for a source of a connector (`CONNECTOR_SOURCES`: `file:…`, `email:…`,
    …) named by a caller, not by that `connector` itself (a Telegram chat's `/remember`): the owner's or an agent's
    memory must not be replaced or removed with a file or a chat it named."""
    cleaned = clean_name(source or "").strip()
    owned = next(((prefix, what) for prefix, what in CONNECTOR_SOURCES.items()
                  if (cleaned.startswith(prefix) if prefix.endswith(":") else cleaned == prefix)), None)
    if owned is not None and not connector:
        prefix, what = owned
        raise InvalidInput(f"source {cleaned[:80]!r} is where twin's {what} memories come from, and a memory "
                           f"written under it would be replaced or forgotten with them; name your own "
                           f"(e.g. 'notes:{cleaned[len(prefix):][:40] or 'mine'}')", field="source")
    return cleaned or DEFAULT_SOURCE


def _checked(kind: str | None, importance: float | None, sensitivity: str | None, confidence: float | None) -> None:
    """Raise `InvalidInput` naming the first field out of range."""
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}", field="kind")
    for name, value in (("importance", importance), ("confidence", confidence)):
        if value is not None and not 0 <= value <= 1:
            raise InvalidInput(f"{name} must be a number 0..1", field=name)
    if sensitivity is not None and sensitivity not in SENSITIVITIES:
        raise InvalidInput(f"sensitivity must be one of {', '.join(SENSITIVITIES)}", field="sensitivity")


def provenance_of(source: str, source_type_: str | None, captured_from: str | None,
                  confidence: float | None) -> dict:
    """Seed 003's provenance: `source_type` (default: the source's prefix), `captured_from` (default: the source),
    `confidence` 0..1 (default 1.0: said by the owner or their agent)."""
    return {"source_type": clean_name(source_type_ or "").strip() or source_type(source),
            "captured_from": clean_name(captured_from or "").strip() or source,
            "confidence": 1.0 if confidence is None else float(confidence)}


def tell_daemon(ctx: Context, *actions: str) -> None:
    """Call the `twin.workers.bus.Bus` methods named `actions` on the running daemon's bus, if there is one. A Redis
    that fails now is logged, never raised: what was written is in SQLite, and the supervisor's nudges (pending
    vectors, the scrub marker) pick it up (invariant 1)."""
    bus = ctx.bus()
    for action in actions if bus is not None else ():
        try:
            getattr(bus, action)()
        except Exception as exc:  # noqa: BLE001 - the write is done; the daemon catches up from SQLite
            log.warning("operations: the daemon was not told (%s: %s: %s)", action, type(exc).__name__, exc)


def _embed_soon(ctx: Context) -> None:
    """Tell the daemon's embedding worker that text waits for a vector (no daemon: it embeds when it starts)."""
    tell_daemon(ctx, "notify_embed")


def capture_memory(ctx: Context, content: str, kind: str = "fact", importance: float | None = None,
                   tags: list[str] | None = None, source: str | None = None, sensitivity: str | None = None,
                   source_type_: str | None = None, captured_from: str | None = None,
                   confidence: float | None = None, force: bool = False, compare: bool = True,
                   namespace: str = DEFAULT_NAMESPACE, project: str | None = None,
                   connector: bool = False) -> CaptureOut:
    """Seed 003's `memory_capture` (`compare` False: `memory_remember`): one memory through
    `twin.learn.capture.capture` (exact duplicate → reinforced; the worthiness gate unless `force`; with
    `compare`, a near duplicate updated in place and contradicted memories superseded). `sensitivity` given: a
    new memory gets it unless its content shows a secret (then `sensitive`); a memory it joins keeps the stricter
    of both; in `namespace`, or in the project in reach (`project`, else the caller's active one:
    `twin.operations.scopes.reach`, whose 404 and 403 it raises). `source` is a caller's (`clean_source`), or with
    `connector` the connector's own (a Telegram chat's). One diary line, never the text. Returns `{id, …flags}`
    (`CaptureOut`)."""
    namespace = reach(ctx.store, namespace, project=project).write
    _checked(kind, importance, sensitivity, confidence)
    text, source = clean_content(content), clean_source(source, connector)
    candidate = Candidate(kind, text, DEFAULT_IMPORTANCE if importance is None else float(importance),
                          tuple(clean_tags(tags)), sensitive=sensitivity == SENSITIVE)
    now = utc_now()
    with ctx.store.atomic():
        result = capture(ctx.store, ctx.being, candidate, source, now,
                         provenance_of(source, source_type_, captured_from, confidence), force=force, compare=compare,
                         namespace=namespace)
        if result.id is not None and sensitivity is not None:
            fresh = not (result.deduplicated or result.updated or result.superseded)
            secret = candidate_sensitivity(candidate) == SENSITIVE
            level = SENSITIVE if secret else sensitivity if fresh else stricter(
                sensitivity, *ctx.store.sensitivities([result.id]))
            ctx.store.set_sensitivity(result.id, level)
    _after_capture(ctx, result, source)
    return CaptureOut(**result.to_dict())


def _after_capture(ctx: Context, result: CaptureResult, source: str) -> None:
    """The diary line of one capture and what the daemon must do after it."""
    if result.id is None:
        return
    if result.updated:
        scrub_if_due(ctx.store)  # the old wording leaves the database files now
        ctx.activity.record("learned", f"Updated memory #{result.id} in place from {source_type(source)}.")
    elif result.deduplicated:
        ctx.activity.record("learned", learned_line(0, 1, source_type(source)))
    else:
        ctx.activity.record("learned", learned_line(1, 0, source_type(source)))
    if result.supersessions:
        ctx.activity.record("learned", supersession_line(result.supersessions))
    if result.updated or not result.deduplicated:
        _embed_soon(ctx)


def update_memory(ctx: Context, memory_id: int, content: str | None = None, kind: str | None = None,
                  importance: float | None = None, tags: list[str] | None = None, sensitivity: str | None = None,
                  source_type_: str | None = None, captured_from: str | None = None,
                  confidence: float | None = None, max_sensitivity: str | None = None,
                  namespace: str = DEFAULT_NAMESPACE, project: str | None = None) -> MemoryOut:
    """Seed 003's `memory_update`: rewrite memory `memory_id` keeping its id, hits and edges; new `content` is
    re-embedded (its vector dropped; the old wording scrubbed from the files). The sensitivity is the one given,
    else the stored one, and `sensitive` whenever the resulting text shows a secret. Provenance fields given
    replace those stored. The memory is one of `namespace` (it stays there). New content passes capture's
    worthiness gate (`twin.text.capture_rules.unworthy`, seed 003: filler and text under 12 characters are no
    memory), so an update cannot overwrite a fact with what capture would refuse. Raises `NotFound`, `InvalidInput`
    (nothing to change, a bad field; code `rejected` with the gate's reason, nothing changed; code `conflict` when
    another memory of its namespace already says the new content). With a project in reach (`project`, else the
    active one) the memory is one of the project's (seed 003: update targets the active project)."""
    names = (reach(ctx.store, namespace, project=project).write,)
    _checked(kind, importance, sensitivity, confidence)
    memory = own_memory(ctx, memory_id, names)
    text = None if content is None else clean_content(content)
    if text is not None and text != memory.content and (why := unworthy(text)):
        raise InvalidInput(f"not stored: {why}", field="content", code="rejected")
    if all(v is None for v in (text, kind, importance, tags, sensitivity, source_type_, captured_from, confidence)):
        raise InvalidInput("give at least one field to change (content, kind, importance, tags, sensitivity, "
                           "source_type, captured_from, confidence)")
    provenance = None
    if source_type_ is not None or captured_from is not None or confidence is not None:
        given = provenance_of(memory.source, source_type_, captured_from, confidence)
        provenance = {**memory.provenance, **{k: given[k] for k, v in (("source_type", source_type_),
                      ("captured_from", captured_from), ("confidence", confidence)) if v is not None}}
    check = Candidate(kind or memory.kind, text or memory.content, 0.0, ())
    level = sensitivity or memory.sensitivity
    if candidate_sensitivity(check) == SENSITIVE:
        level = SENSITIVE
    try:
        with ctx.store.atomic():
            ctx.store.edit_memory(memory_id, utc_now(), content=text if text != memory.content else None, kind=kind,
                                  importance=importance, tags=None if tags is None else clean_tags(tags),
                                  sensitivity=level, provenance=provenance)
    except sqlite3.IntegrityError as exc:
        raise InvalidInput("another memory already says this", field="content", code="conflict") from exc
    changed = [name for name, v in (("content", text), ("kind", kind), ("importance", importance), ("tags", tags),
                                    ("sensitivity", sensitivity)) if v is not None]
    ctx.activity.record("learned", f"Updated memory #{memory_id} ({', '.join(changed) or 'provenance'}).")
    if text is not None and text != memory.content:
        scrub_if_due(ctx.store)
        _embed_soon(ctx)
    from twin.operations.reads import get_memory

    return get_memory(ctx, memory_id, max_sensitivity, namespace=namespace, project=project)


def after_forget(ctx: Context, done: ForgetPlan) -> None:
    """What a running daemon does after memories were forgotten: its index writer scrubs their vectors at a
    checkpoint now, and Redis rewrites its append-only file (queued job payloads may hold their text)."""
    if done.vectors:
        tell_daemon(ctx, "request_checkpoint", "rewrite_append_only_file")


def forget_memory(ctx: Context, memory_id: int, namespace: str = DEFAULT_NAMESPACE,
                  project: str | None = None) -> ForgetOut:
    """Seed 003's `memory_forget` (seed 000's `DELETE`): hard-forget memory `memory_id` of `namespace` with every
    copy of its text (`twin.lifecycle.forgetting.forget`: row, FTS entry, vector and index entry, edges,
    transcript rows; the files scrubbed at once), then `after_forget`. Raises `NotFound` (also for a memory of
    another namespace). With a project in reach (`project`, else the active one) the memory is one of the
    project's (seed 003: forget targets the active project)."""
    from twin.lifecycle.forgetting import forget

    names = (reach(ctx.store, namespace, project=project).write,)
    own_memory(ctx, memory_id, names)
    done = forget(ctx.store, ctx.activity, ctx.being, [memory_id], namespaces=names)
    after_forget(ctx, done)
    return ForgetOut(ok=True, id=memory_id, removed=done.counts())


def learn_text(ctx: Context, text: str, source: str | None = None, force: bool = False,
               namespace: str = DEFAULT_NAMESPACE, project: str | None = None) -> LearnResult:
    """Seed 001's `learn()` on `text` from `source` (one safe line, `clean_source`: `api` when none is named, as
    for a capture) into `namespace`, with the
    configured model or offline; the old wording of memories updated in place scrubbed, the daemon told to embed.
    Returns the `LearnResult` (`learn_out` shapes it). The twin owner's alone (`Forbidden` for anyone else: what is
    learned may change the owner's profile); into the project in reach when there is one (`reach`)."""
    from twin.learn.learning import learn
    from twin.llm.provider import provider_for

    require_owner("learning a text")
    namespace = reach(ctx.store, namespace, project=project).write
    provider = provider_for(ctx.settings, ctx.store)
    try:
        result = learn(ctx.store, ctx.activity, ctx.being, text, clean_source(source), provider=provider,
                       force=force, namespace=namespace)
    finally:
        if provider is not None:
            provider.close()
    if result.updated:
        scrub_if_due(ctx.store)
    if result.created or result.updated:
        _embed_soon(ctx)
    return result


UNREAD_NOTE = (f"one text gives at most {MAX_PER_CALL} memories; the rest of it was not read. Learn a long text in "
               "parts, or put it in a watched folder (files_max_memories per file).")
"""`LearnOut.note` when a text held more than one call keeps (`LearnResult.unread`), said by every interface."""


def learn_out(ctx: Context, result: LearnResult, reveal_sensitive: bool = False) -> LearnOut:
    """`result` as the answer of `learn` (seed 001: the memories learned), sensitive text masked unless asked;
    `note` says when the text held more than was read (`UNREAD_NOTE`)."""
    def shown(ids: list[int]) -> list[MemoryOut]:
        return [MemoryOut.of(m, reveal_sensitive) for m in as_memories(ctx.store, ids)]

    return LearnOut(created=shown(result.created), reinforced=shown(result.reinforced), updated=shown(result.updated),
                    update_reasons={str(k): v for k, v in result.update_reasons.items()},
                    superseded=[s.to_dict() for s in result.supersessions],
                    rejected=[{"content": c, "reason": r} for c, r in result.rejections]
                    + [{"content": None, "reason": r} for r in result.skipped],
                    profile_updated=result.profile_updated, note=UNREAD_NOTE if result.unread else None)


def learn(ctx: Context, text: str, source: str | None = None, force: bool = False,
          namespace: str = DEFAULT_NAMESPACE, project: str | None = None) -> LearnOut:
    """Seed 001's `POST /learn`: `learn_text` into `namespace` (or the project in reach), shaped (`learn_out`)."""
    namespace = checked(namespace)
    if not isinstance(text, str) or not has_text(text):
        raise InvalidInput("text must hold some text", field="text")
    into = reach(ctx.store, namespace, project=project).project
    done = learn_out(ctx, learn_text(ctx, text, source, force, namespace=namespace, project=project))
    return done.model_copy(update={"project": into.name if into is not None else None})


def session_recap(ctx: Context, summary: str, source: str | None = "session",
                  namespace: str = DEFAULT_NAMESPACE, project: str | None = None) -> LearnOut:
    """Seed 003's `memory_session_recap`: a session's summary through `learn()`, whose extractor keeps only what
    is memorable about the owner (durable facts, preferences, decisions; questions and chatter are skipped, each
    with its reason in `rejected`), into `namespace`."""
    if not isinstance(summary, str) or not has_text(summary):
        raise InvalidInput("summary must hold some text", field="summary")
    return learn(ctx, summary, source or "session", namespace=namespace, project=project)


def reflect(ctx: Context, namespace: str | None = None) -> ReflectOut:
    """Seed 001's `POST /reflect`: reflect now (forced: no 3-new-memories gate), signals through the Hush gate,
    each raised one handed to the daemon's outbox when it runs. Reflection reads the owner's new memories of
    every namespace and keeps one profile: a `namespace` given is checked (`NamespaceError`, an `InvalidInput`
    naming it, for a bad name) and does not narrow what is read. Then each project with a new memory is reflected
    on by itself (`twin.reflection.project_pass`: a signal per member, through each member's Hush gate); their
    signals join `signals`, each with its `recipient` and `project_id`. Returns `{ran, signals, widgets, thought}`."""
    from twin.llm.provider import provider_for
    from twin.reflection.hush import HushGate, HushRules
    from twin.reflection.project_pass import reflect_projects
    from twin.reflection.second_pass import reflect as reflect_now

    require_owner("reflection")
    if namespace is not None:
        checked(namespace)
    bus = ctx.bus()
    provider = provider_for(ctx.settings, ctx.store)
    rules = HushRules.from_settings(ctx.settings)
    outbox = None if bus is None else (lambda signal_id: bus.push_signal(signal_id, ctx.being))
    try:
        result = reflect_now(ctx.store, ctx.activity, ctx.being, provider, HushGate(ctx.store, ctx.being, rules),
                             force=True, outbox=outbox)
        for project in reflect_projects(ctx.store, ctx.activity, ctx.being, provider, rules, min_new=1,
                                        outbox=outbox):
            result.signals.extend(project.signals)
    finally:
        if provider is not None:
            provider.close()
    return ReflectOut(**result.to_dict())


def dream_cycle(ctx: Context, namespace: str | None = None) -> DreamOut:
    """Seed 003's dream cycle now (`twin.lifecycle.cycle.dream`) over the memories of `namespace`, or of every
    namespace when None (as the daemon's own cycle): vectors from SQLite, top-k from an index reader of this
    process (never the writer's); every write to SQLite; a running daemon's index writer then scrubs the merged
    memories' vectors. Raises `NamespaceError` (an `InvalidInput` naming `namespace`) for a bad name, before
    anything runs. Returns `{walked, merged, edgesPromoted, durationMs}`."""
    from twin.lifecycle.cycle import VectorLookup, dream
    from twin.vectors.embedder import model_id_of
    from twin.wiring import open_index_reader

    require_owner("the dream cycle")
    namespace = None if namespace is None else checked(namespace)
    model_id = model_id_of(ctx.settings)
    dim = ctx.store.embedding_dim(model_id) if model_id else None
    lookup = None
    if model_id and dim:
        reader = open_index_reader(ctx.settings, ctx.store, model_id, dim)
        lookup = VectorLookup(ctx.store, reader.search, model_id)
    result = dream(ctx.store, ctx.being, lookup, namespace=namespace)
    if result["merged"]:
        tell_daemon(ctx, "request_checkpoint")
    return DreamOut(**result)
