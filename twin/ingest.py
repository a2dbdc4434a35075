"""Ingest items: what a connector hands to `learn()`, staged in SQLite (DESIGN.md "Shape": `Ingest(text, source,
ref, being)`).

A connector stages its items in the store, in the same transaction as its cursor, and a learn job on Redis then
carries only their ids; the job reads each item, learns it and deletes it in the transaction that stores its
memories. So Redis never holds the text (invariant 5: a queued payload must not keep what was forgotten; its
append-only file is rewritten only at 64 MB), a retried or duplicated job finds nothing left to redo, and an item
whose push Redis refused (down, full disk, `MISCONF`) is not lost: it stays `ready` and the supervisor queues it
when Redis takes writes again (`due_for_queue`). This module owns the `ingest_items` table.

States: `held` (a chat message kept back until its reply is sent, so recall does not find the message itself),
`ready` (to be queued), `queued` (a job holds the id since `queued_at`), `failed` (its job failed for good).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from twin.memory import utc_now
from twin.store import Store, id_chunks

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
    (interests)."""

    being: str
    source: str
    text: str = ""
    mode: str = "text"
    ref: str | None = None
    extra: dict = field(default_factory=dict)

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
    now, state = utc_now(), "held" if held else "ready"
    ids = []
    with store.transaction() as conn:
        for item in items:
            cur = conn.execute("INSERT INTO ingest_items (being_id, mode, source, ref, text, extra, state, created_at)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                               (item.being, item.mode, item.source, item.ref, item.text,
                                json.dumps(item.extra, ensure_ascii=False), state, now))
            ids.append(int(cur.lastrowid))
    return ids


def release(store: Store, ids: Iterable[int]) -> None:
    """Let `held` items be queued (a chat message once its reply is sent)."""
    with store.transaction() as conn:
        for chunk, marks in id_chunks(ids):
            conn.execute(f"UPDATE ingest_items SET state = 'ready' WHERE state = 'held' AND id IN ({marks})", chunk)


def mark_queued(store: Store, ids: Iterable[int], job_id: str) -> None:
    """Record that job `job_id` now carries `ids` (they are no longer `ready`)."""
    now = utc_now()
    with store.transaction() as conn:
        for chunk, marks in id_chunks(ids):
            conn.execute(f"UPDATE ingest_items SET state = 'queued', job_id = ?, queued_at = ? WHERE id IN ({marks})"
                         " AND state != 'held'", (job_id, now, *chunk))


def mark_failed(store: Store, job_id: str) -> int:
    """The items of job `job_id`, which failed for good, become `failed` (kept, counted in `twin status`, never
    queued again by themselves). Returns how many."""
    with store.transaction() as conn:
        return conn.execute("UPDATE ingest_items SET state = 'failed' WHERE job_id = ? AND state = 'queued'",
                            (job_id,)).rowcount


def fetch(store: Store, ids: Iterable[int]) -> list[Staged]:
    """The staged items among `ids`, in id order; ids already learned or forgotten are absent (read-only)."""
    out = []
    for chunk, marks in id_chunks(ids):
        rows = store.conn.execute(f"SELECT id, being_id, mode, source, ref, text, extra FROM ingest_items"
                                  f" WHERE id IN ({marks})", chunk).fetchall()
        out.extend(Staged(r[0], Ingest(r[1], r[3], r[5], r[2], r[4], json.loads(r[6]))) for r in rows)
    return sorted(out, key=lambda s: s.id)


def consume(store: Store, ids: Iterable[int]) -> None:
    """Delete learned items (inside the transaction that stored their memories, when the caller has one open);
    `secure_delete` zeroes their text in the database file."""
    with store.transaction() as conn:
        for chunk, marks in id_chunks(ids):
            conn.execute(f"DELETE FROM ingest_items WHERE id IN ({marks})", chunk)


def waiting(store: Store, being: str, source: str) -> int:
    """How many items of `being`'s `source` are handed over but not yet learned (`ready` or `queued`; held and
    failed ones aside) (read-only)."""
    return store.conn.execute("SELECT COUNT(*) FROM ingest_items WHERE being_id = ? AND source = ? AND state IN"
                              " ('ready', 'queued')", (being, source)).fetchone()[0]


def held_ids(store: Store, being: str, ref: str) -> list[int]:
    """Ids of the `held` items of `being` captured from `ref` (read-only)."""
    return [r[0] for r in store.conn.execute("SELECT id FROM ingest_items WHERE being_id = ? AND ref = ? AND"
                                             " state = 'held'", (being, ref))]


def ready(store: Store, limit: int = 1000) -> list[tuple[int, str, str]]:
    """`(id, being, mode)` of the `ready` items (staged, not yet carried by a job), oldest first (read-only)."""
    return store.conn.execute("SELECT id, being_id, mode FROM ingest_items WHERE state = 'ready' ORDER BY id"
                              " LIMIT ?", (int(limit),)).fetchall()


def queued_jobs(store: Store, before: str) -> list[str]:
    """The distinct job ids that carry `queued` items queued before `before` (UTC ISO-8601), oldest first: the jobs
    to look for in Redis (one may be lost with a Redis that lost its files) (read-only)."""
    return [r[0] for r in store.conn.execute("SELECT job_id FROM ingest_items WHERE state = 'queued' AND queued_at < ?"
                                             " GROUP BY job_id ORDER BY MIN(id)", (before,))]


def requeue(store: Store, job_id: str) -> int:
    """The items of `job_id` (whose job is gone) become `ready` again. Returns how many."""
    with store.transaction() as conn:
        return conn.execute("UPDATE ingest_items SET state = 'ready', job_id = NULL, queued_at = NULL"
                            " WHERE job_id = ? AND state = 'queued'", (job_id,)).rowcount


def matching(store: Store, being: str, source: str | None = None,
             mentions: Callable[[str], bool] | None = None) -> list[int]:
    """Ids of `being`'s staged items not yet learned (forget items aside) from `source` (exact, or every source that
    starts so when it ends in `*`) or whose text (or title) `mentions` says mentions the subject of a forget
    (`twin.about.Subject.mentions`): what a forget of that source or subject must reach too, before a learn job
    brings it back (read-only)."""
    where, args = ["being_id = ?", "mode != 'forget'"], [being]
    if source is not None:
        if source.endswith("*"):
            where.append("substr(source, 1, ?) = ?")
            args += [len(source) - 1, source[:-1]]
        else:
            where.append("source = ?")
            args.append(source)
    if source is None and mentions is None:
        return []
    rows = store.conn.execute(f"SELECT id, text, extra FROM ingest_items WHERE {' AND '.join(where)} ORDER BY id",
                              args)
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


def counts(store: Store) -> dict[str, int]:
    """`{held, ready, queued, failed}`: staged items by state, all beings (read-only)."""
    out = dict.fromkeys(("held", "ready", "queued", "failed"), 0)
    out.update(store.conn.execute("SELECT state, COUNT(*) FROM ingest_items GROUP BY state").fetchall())
    return out
