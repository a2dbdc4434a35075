"""Ingest items: what a connector hands to `learn()`, staged in SQLite (DESIGN.md "Shape": `Ingest(text, source,
ref, being)`).

A connector stages its items in the store, in the same transaction as its cursor, and a learn job on Redis then
carries only their ids; the job reads each item, learns it and deletes it in the transaction that stores its
memories. So Redis never holds the text (invariant 5: a queued payload must not keep what was forgotten; its
append-only file is rewritten only at 64 MB), a retried or duplicated job finds nothing left to redo, and an item
whose push Redis refused (down, full disk, `MISCONF`) is not lost: it stays `ready` and the supervisor queues it
when Redis takes writes again (`due_for_queue`). The table's rows live in `twin.store.ingest_items`.

States: `held` (a chat message kept back until its reply is sent, so recall does not find the message itself),
`ready` (to be queued), `queued` (a job holds the id since `queued_at`), `failed` (its job failed for good).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from twin.namespaces import DEFAULT_NAMESPACE, project_namespace
from twin.outside_text import clean_name
from twin.store import Store, ingest_items, project_sources
from twin.store.ingest_items import (
    claim_texts,
    consume,
    counts,
    held_ids,
    mark_failed,
    mark_queued,
    queued_jobs,
    ready,
    release,
    requeue,
    waiting,
)

__all__ = ["MODES", "Ingest", "Staged", "bound_namespace", "claim_texts", "consume", "counts", "fetch", "held_ids",
           "in_source_order", "mark_failed", "mark_queued", "matching", "moved_from", "queued_jobs", "ready", "release",
           "requeue", "restage", "source_namespace", "stage", "waiting"]

MODES = ("text", "document", "email", "interests", "forget")
"""How the learn job treats an item: `text` through `learn()` (a chat message, a note); `document` replaces the
memories of its source (a file); `email` likewise, the model reading `text`, the offline extractor `extra.summary`;
`interests` clusters the browser visits in `extra.visits`; `forget` removes every memory of its source (a file
that is gone)."""


@dataclass(frozen=True)
class Ingest:
    """One thing to learn. `source` follows DESIGN.md (`'file:<path>'`, `'email:<threadId>'`, `'telegram:<chat>'`,
    `'browser'`); `ref` is where the text was captured from (kept in provenance, e.g.
    `'telegram:<chat>/message/<row id>'`). `extra` holds what a mode needs besides the text: `speaker` and `origin`
    (text written by someone other than the owner, e.g. a forwarded chat message: who wrote it, where from), `title` and
    `max_memories` (document), `summary` (email), `visits` (`[[url, title, visited_at], …]`) and `profiles`
    (interests), `labels` and `label_names` (email: the thread's Gmail label ids, and the names of those the
    connector could name). `namespace`: where its memories go (`twin.namespaces`; connectors write `default`, and
    `stage` moves an item of a source bound to a project into the project's: `bound_namespace`)."""

    being: str
    source: str
    text: str = ""
    mode: str = "text"
    ref: str | None = None
    extra: dict = field(default_factory=dict)
    namespace: str = DEFAULT_NAMESPACE

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown ingest mode {self.mode!r}; one of {', '.join(MODES)}")
        if not isinstance(self.text, str):
            raise TypeError(f"ingest text must be str, not {type(self.text).__name__}")


@dataclass(frozen=True)
class Staged:
    """A staged item: its row id and the item."""

    id: int
    item: Ingest


def stage(store: Store, items: Iterable[Ingest], held: bool = False) -> list[int]:
    """Stage `items` (in the caller's transaction when one is open, else in one of its own) and return the ids of
    the rows staged, in order. `held` items wait for `release` before they are queued. Each item is staged into
    the namespace `bound_namespace` gives (a source bound to a project: the project's), so the learn job, and a
    forget of the project before it runs (`ingest_items.in_namespaces`), find it there. A file or a thread that a
    binding moves (`document`, `email` or `forget`, not an appended part) brings a `forget` of its source in the
    namespace it named before it (`moved_from`): its memories of an older version learned there before the
    binding go, so one source's memories live in one scope. Raises `sqlite3.Error` when the store cannot write
    (nothing is staged then)."""
    bindings = project_sources.all_bindings(store)
    return ingest_items.stage_rows(store, [row for i in items for row in _rows(i, bindings, ())], held)


def restage(store: Store, moves: Iterable[tuple[Ingest, str]]) -> list[int]:
    """Stage each `(item, left)` after a binding changed (`twin.operations.project_sources`): `item` (a file's
    whole text or a `forget` of it, as its connector writes it) as `stage` stages it, into the namespace the
    bindings give it now, and before it a `forget` of its source in `left`, the namespace the bindings gave it
    before the change, when that is another: so what a source taught moves to the scope the rule now gives it
    without waiting for the source to change, and stays in one scope. In the caller's transaction (the one that
    changed the binding) when one is open; returns the staged ids in order. Raises `sqlite3.Error` when the store
    cannot write (nothing is staged then)."""
    bindings = project_sources.all_bindings(store)
    return ingest_items.stage_rows(store, [row for item, left in moves for row in _rows(item, bindings, (left,))])


def _rows(item: Ingest, bindings: list[project_sources.SourceBinding], left: tuple[str, ...]) -> list[tuple]:
    """The staged rows of `item`: a `forget` of its source in each namespace of `left` and, when the binding moves
    it (`moved_from`), in `item.namespace`, other than the one `bound_namespace` gives it; then the item there."""
    namespace = bound_namespace(item, bindings)
    leaving = (*left, item.namespace) if moved_from(item, namespace) else left
    rows = [(item.being, "forget", item.source, item.ref, "", {}, old)
            for old in dict.fromkeys(leaving) if old != namespace]
    return [*rows, (item.being, item.mode, item.source, item.ref, item.text, item.extra, namespace)]


def moved_from(item: Ingest, namespace: str) -> bool:
    """True when staging `item` into `namespace` (its bound one) moves a whole source out of `item.namespace`: a
    file or a thread that replaces its memories (`document` not `extra.appended`, `email`) or a `forget`. Pure."""
    if namespace == item.namespace or item.mode not in ("document", "email", "forget"):
        return False
    return not (isinstance(item.extra, dict) and item.extra.get("appended") is True)


def source_namespace(store: Store, being: str, source: str) -> str:
    """Where a text from `source` learned straight away (not staged: a chat's `/remember`) goes: `bound_namespace`
    of it, so a bound chat's explicit "remember this" lands in the project as its messages do (read-only)."""
    return bound_namespace(Ingest(being, source), project_sources.all_bindings(store))


def bound_namespace(item: Ingest, bindings: Iterable[project_sources.SourceBinding]) -> str:
    """The one rule of where a source's item is learned (issue 19: sources bound to a project): the namespace of
    the project its source is bound to, else `item.namespace`. Only an item a connector left in the owner's
    user-global `default` moves; one that names another namespace keeps it. Pure.

    - a file (`file:<path>`): bound by the deepest `files` binding at or above its path (`/a/b` binds `/a/b` and
      `/a/b/c.md`, never `/a/bc.md`);
    - a Telegram chat (`telegram:<chat id>`): by the `telegram_chat` binding of that chat id;
    - an email thread (`email:<thread id>`): by a `gmail_label` binding whose value is one of `extra["labels"]`
      (ids, exactly) or has the `project_sources.label_key` of one of `extra["label_names"]` (names, any case), the
      earliest bound first when several are (`bindings` comes ordered so: `project_sources.all_bindings`). A thread
      staged without names (an older item, a sync whose labels.list failed) matches by id alone."""
    if item.namespace != DEFAULT_NAMESPACE:
        return item.namespace
    kind, _, rest = item.source.partition(":")
    found: project_sources.SourceBinding | None = None
    for binding in bindings:
        if kind == "file" and binding.kind == "files":
            root = clean_name(binding.value).rstrip("/")  # as `file_source` writes a path
            deeper = found is None or len(binding.value) > len(found.value)
            if deeper and (rest == root or rest.startswith(root + "/")):
                found = binding
        elif kind == "telegram" and binding.kind == "telegram_chat" and rest == binding.value:
            found = binding
        elif kind == "email" and binding.kind == "gmail_label" and found is None:
            found = binding if _carries(item, binding.value) else None
    return project_namespace(found.project_id) if found is not None else item.namespace


def _carries(item: Ingest, label: str) -> bool:
    """True when the thread `item` carries the label a binding names (`bound_namespace`'s rule). Pure."""
    if label in (item.extra.get("labels") or ()):
        return True
    key = project_sources.label_key(label)
    return any(isinstance(n, str) and project_sources.label_key(n) == key for n in item.extra.get("label_names") or ())


REPLACING_MODES = ("document", "email", "forget")
"""The modes whose item stands for its whole source (a file's text, a thread, a forget of it): of two such items
of one source, the later must be learned last, or an older text would come back over a newer one."""


def in_source_order(store: Store, staged: list[Staged]) -> list[Staged]:
    """`staged` with, before each item of a `REPLACING_MODES` mode, the items of its source staged before it and
    not learned yet, in id order: a source's items are learned in the order they were staged, whichever job was
    queued first (a move staged while the daemon was down is queued by the supervisor's sweep after the start-up
    scan has queued the file's newer text; issue 19). The later job finds them learned and skips them (`fetch`).
    Read-only."""
    wanted = {s.id for s in staged}
    for s in staged:
        if s.item.mode in REPLACING_MODES:
            wanted.update(ingest_items.earlier_of(store, s.item.being, s.item.source, s.id))
    return fetch(store, wanted) if len(wanted) > len(staged) else staged


def fetch(store: Store, ids: Iterable[int]) -> list[Staged]:
    """The staged items among `ids`, in id order; ids already learned or forgotten are absent (read-only)."""
    out = [Staged(row_id, Ingest(being, source, text, mode, ref, extra, namespace))
           for row_id, (being, mode, source, ref, text, extra, namespace) in ingest_items.fetch_rows(store, ids)]
    return sorted(out, key=lambda s: s.id)


def matching(store: Store, being: str, source: str | None = None,
             mentions: Callable[[str], bool] | None = None, exact: bool = False) -> list[int]:
    """Ids of `being`'s staged items not yet learned (forget items aside) from `source` (exact, or every source that
    starts so when it ends in `*` and not `exact`: `twin.text.source_pattern`) or whose text (or title) `mentions`
    says mentions the subject of a forget (`twin.text.about.Subject.mentions`): what a forget of that source or
    subject must reach too, before a learn job brings it back (read-only)."""
    if source is None and mentions is None:
        return []
    rows = ingest_items.unlearned(store, being, source, exact)
    return [r[0] for r in rows if mentions is None or mentions(r[1]) or any(mentions(v) for v in _strings(r[2]))]


NOT_TEXT_KEYS = frozenset({"labels", "label_names"})
"""Keys of a staged item's `extra` that tag it rather than say anything (an email thread's Gmail label ids and
names): a forget by subject never drops a waiting thread for a label it carries."""


def _strings(extra: str | None) -> list[str]:
    """Every string inside a staged item's `extra` JSON (a title, an email summary's sentences, visit titles),
    but what `NOT_TEXT_KEYS` name."""
    try:
        pending = [json.loads(extra or "{}")]
    except ValueError:
        return []
    found = []
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict | list):
            pending.extend([v for k, v in value.items() if k not in NOT_TEXT_KEYS] if isinstance(value, dict)
                           else value)
    return found


BACKLOG_MIN = 50
"""Work in flight (staged items waiting to be learned plus memories waiting for a vector) that makes a backlog worth
its own diary line when it is done: a first index, a folder copied in, a big import (ours). Less (a chat message, a
few notes) is searchable within seconds, and its "Learned …" line says what it made."""


def _took(seconds: float) -> str:
    """A duration for a diary line: "45 s", "14 min", "2.5 h"."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


@dataclass
class BacklogWatch:
    """The one rule for "a backlog is searchable" (issue 18): the daemon makes one at start (`starting`, before any
    connector stages anything), calls `check` every few seconds (`twin.daemon.supervisor`, every `STAGED_EVERY_S`)
    and writes the line it returns, once per backlog, whatever filled it (the files connector's first scan, a
    restart that found items an earlier run staged, Gmail's first sync, `twin import`).

    A backlog starts at a check that finds at least `BACKLOG_MIN` units of work in flight: staged items `ready` or
    `queued` (`held` ones wait for something else, `failed` ones for nobody) plus memories without a vector of
    `model_id` (None: keyword-only recall, where a learned memory is searchable at once); or at a check that finds
    nothing in flight but `BACKLOG_MIN` items staged or vectors stored since the last quiet one (workers that
    learned and embedded it all between two checks). It is done at the first
    check that finds neither: every staged item learned and every memory with its vector, which the index readers
    then catch up on (invariant 4). Its line counts what was staged and embedded since the last check that found
    nothing in flight (`since_item`, `since_vectors`), or since the start. Counting stays cheap at any size
    (`Store.count_pending_embeddings`: two index counts). `now_s` is monotonic seconds."""

    model_id: str | None
    since_item: int = 0
    """Staged items with a higher id belong to the next backlog."""
    since_vectors: int = 0
    """Vectors of `model_id` stored before it."""
    started_s: float | None = None
    quiet_s: float = 0.0
    """When a check (or the start) last found nothing in flight: where a backlog done between two checks began."""

    @classmethod
    def starting(cls, store: Store, model_id: str | None, now_s: float) -> BacklogWatch:
        """A watch from now (`now_s`, monotonic seconds; read-only). Work an earlier run left in flight (staged items
        waiting, memories without a vector) is a backlog of any size, begun now: the restart says once when it is
        searchable, even when the workers finish it before the first `check`."""
        watch = cls(model_id)
        watch._quiet(store, now_s)
        items, first = ingest_items.in_flight(store)
        if items or (model_id is not None and store.count_pending_embeddings(model_id)):
            watch.started_s = now_s
            watch.since_item = first - 1 if first is not None else watch.since_item
        return watch

    def _done_since_quiet(self, store: Store) -> int:
        """The larger of the items staged and the vectors stored since the last quiet check (read-only)."""
        vectors = 0 if self.model_id is None else store.embedding_count(self.model_id) - self.since_vectors
        return max(ingest_items.last_id(store) - self.since_item, vectors)

    def _quiet(self, store: Store, now_s: float) -> None:
        self.quiet_s = now_s
        self.since_item = ingest_items.last_id(store)
        self.since_vectors = 0 if self.model_id is None else store.embedding_count(self.model_id)

    def check(self, store: Store, now_s: float) -> str | None:
        """The diary line when a backlog has just become searchable, else None (read-only): "Backlog searchable:
        20,000 staged items learned, 90,412 memories given their vectors (took 14 min).", with "; 2 items could
        not be learned (see twin status)" when jobs failed for good; without a model "…learned (keyword-only recall;
        took 14 min)."; None for a backlog that gave no vector and failed nothing (files deleted: nothing was
        learned, nothing new is searchable)."""
        items, first = ingest_items.in_flight(store)
        unembedded = 0 if self.model_id is None else store.count_pending_embeddings(self.model_id)
        if self.started_s is None:
            if items + unembedded >= BACKLOG_MIN:
                self.started_s = now_s
                self.since_item = min(self.since_item, first - 1) if first is not None else self.since_item
                return None
            if items or unembedded:
                return None
            if self._done_since_quiet(store) < BACKLOG_MIN:
                self._quiet(store, now_s)
                return None
            self.started_s = self.quiet_s  # begun and done between two checks (the workers outran them): said too
        if items or unembedded:
            return None
        staged = max(0, ingest_items.last_id(store) - self.since_item)
        failed = ingest_items.failed_from(store, self.since_item + 1)
        took = _took(now_s - self.started_s)
        parts = [f"{staged - failed:,} staged item{'s' if staged - failed != 1 else ''} learned"] if staged else []
        if self.model_id is None:
            line = f"Backlog searchable: {' and '.join(parts) or 'nothing staged'} (keyword-only recall; took {took})"
        else:
            vectors = max(0, store.embedding_count(self.model_id) - self.since_vectors)
            parts.append(f"{vectors:,} memor{'ies' if vectors != 1 else 'y'} given their vectors")
            line = f"Backlog searchable: {', '.join(parts)} (took {took})"
            if not vectors and not failed:  # 200 files deleted: handled, and nothing new to search for
                line = None
        self.started_s = None
        self._quiet(store, now_s)
        if line is None:
            return None
        return line + (f"; {failed:,} item{'s' if failed != 1 else ''} could not be learned (see twin status)."
                       if failed else ".")
