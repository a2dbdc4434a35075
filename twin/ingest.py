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

from twin.namespaces import DEFAULT_NAMESPACE
from twin.store import Store, ingest_items
from twin.store.ingest_items import (
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

__all__ = ["MODES", "Ingest", "Staged", "consume", "counts", "fetch", "held_ids", "mark_failed", "mark_queued",
           "matching", "queued_jobs", "ready", "release", "requeue", "stage", "waiting"]

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
    (interests). `namespace`: where its memories go (`twin.namespaces`; connectors write `default`)."""

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
    """Stage `items` (in the caller's transaction when one is open, else in one of its own) and return their ids,
    in order. `held` items wait for `release` before they are queued. Raises `sqlite3.Error` when the store
    cannot write (nothing is staged then)."""
    return ingest_items.stage_rows(store, ((i.being, i.mode, i.source, i.ref, i.text, i.extra, i.namespace)
                                           for i in items), held)


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


def _strings(extra: str | None) -> list[str]:
    """Every string inside a staged item's `extra` JSON (a title, an email summary's sentences, visit titles)."""
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
            pending.extend(value.values() if isinstance(value, dict) else value)
    return found


