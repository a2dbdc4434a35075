"""The `ingest_items` rows: staged items waiting to be learned (`twin.ingest` has the item and its states: `held`,
`ready`, `queued`, `failed`). Every function runs in the caller's transaction when one is open, else in its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from twin.memory import utc_now
from twin.store.core import Store
from twin.store.ids import id_chunks
from twin.text.source_pattern import SourcePattern

StagedRow = tuple[str, str, str, str | None, str, dict, str]
"""`(being, mode, source, ref, text, extra, namespace)`: one item as `stage_rows` writes it."""


def stage_rows(store: Store, rows: Iterable[StagedRow], held: bool = False) -> list[int]:
    """Insert `rows` (`held` ones wait for `release`, the others are `ready`), stamped now; returns their ids in
    order. Raises `sqlite3.Error` when the store cannot write (nothing is staged then)."""
    now, state = utc_now(), "held" if held else "ready"
    ids = []
    with store.atomic() as conn:
        for being, mode, source, ref, text, extra, namespace in rows:
            cur = conn.execute("INSERT INTO ingest_items (being_id, mode, source, ref, text, extra, state, created_at,"
                               " namespace) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               (being, mode, source, ref, text, json.dumps(extra, ensure_ascii=False), state, now,
                                namespace))
            ids.append(int(cur.lastrowid))
    return ids


def fetch_rows(store: Store, ids: Iterable[int]) -> list[tuple[int, StagedRow]]:
    """`(id, row)` of the staged items among `ids`, in no order; ids already learned or forgotten are absent
    (read-only)."""
    out = []
    for chunk, marks in id_chunks(ids):
        out += [(r[0], (r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7])) for r in store.conn.execute(
            f"SELECT id, being_id, mode, source, ref, text, extra, namespace FROM ingest_items WHERE id IN ({marks})",
            chunk)]
    return out


def unlearned(store: Store, being: str, source: str | None = None,
              exact: bool = False) -> list[tuple[int, str, str | None]]:
    """`(id, text, extra JSON)` of `being`'s staged items not yet learned (forget items aside), ascending id; of
    `source` only when given (`twin.text.source_pattern.SourcePattern.of(source, exact)`: exact, or every source
    that starts so when it ends in `*` and not `exact`) (read-only)."""
    where, args = ["being_id = ?", "mode != 'forget'"], [being]
    if source is not None:
        pattern = SourcePattern.of(source, exact)
        if pattern.prefix:
            where.append("substr(source, 1, ?) = ?")
            args += [len(pattern.text), pattern.text]
        else:
            where.append("source = ?")
            args.append(pattern.text)
    return store.conn.execute(f"SELECT id, text, extra FROM ingest_items WHERE {' AND '.join(where)} ORDER BY id",
                              args).fetchall()


def in_namespaces(store: Store, being: str, namespaces: Iterable[str]) -> list[int]:
    """Ids of `being`'s staged items in `namespaces` not yet learned (forget items aside), ascending: what erasing
    a whole scope (a project, a removed person's own) must reach before a learn job stores it (read-only)."""
    names = list(namespaces)
    if not names:
        return []
    return [r[0] for r in store.conn.execute(
        f"SELECT id FROM ingest_items WHERE being_id = ? AND mode != 'forget' AND namespace IN "
        f"({', '.join('?' * len(names))}) ORDER BY id", (being, *names))]


def release(store: Store, ids: Iterable[int]) -> None:
    """Let `held` items be queued (a chat message once its reply is sent)."""
    with store.atomic() as conn:
        for chunk, marks in id_chunks(ids):
            conn.execute(f"UPDATE ingest_items SET state = 'ready' WHERE state = 'held' AND id IN ({marks})", chunk)

def mark_queued(store: Store, ids: Iterable[int], job_id: str) -> None:
    """Record that job `job_id` now carries `ids` (they are no longer `ready`)."""
    now = utc_now()
    with store.atomic() as conn:
        for chunk, marks in id_chunks(ids):
            conn.execute(f"UPDATE ingest_items SET state = 'queued', job_id = ?, queued_at = ? WHERE id IN ({marks})"
                         " AND state != 'held'", (job_id, now, *chunk))

def claim_texts(store: Store, being: str, job_id: str, limit: int) -> list[int]:
    """Give job `job_id` up to `limit` of `being`'s `text` items that wait for it: `ready` ones and those already
    `queued` for `job_id` (held, failed and other jobs' items aside), oldest first; they become `queued` for
    `job_id` (a kill mid-job leaves them with it, so its rerun or `requeue` finds them). Returns their ids."""
    now = utc_now()
    with store.atomic() as conn:
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM ingest_items WHERE state IN ('ready', 'queued') AND being_id = ? AND mode = 'text'"
            " AND (state = 'ready' OR job_id = ?) ORDER BY id LIMIT ?", (being, job_id, int(limit)))]
        for chunk, marks in id_chunks(ids):
            conn.execute(f"UPDATE ingest_items SET state = 'queued', job_id = ?, queued_at = COALESCE(queued_at, ?)"
                         f" WHERE id IN ({marks})", (job_id, now, *chunk))
    return ids

def mark_failed(store: Store, job_id: str) -> int:
    """The items of job `job_id`, which failed for good, become `failed` (kept, counted in `twin status`, never
    queued again by themselves). Returns how many."""
    with store.atomic() as conn:
        return conn.execute("UPDATE ingest_items SET state = 'failed' WHERE job_id = ? AND state = 'queued'",
                            (job_id,)).rowcount

def consume(store: Store, ids: Iterable[int]) -> None:
    """Delete learned items (inside the transaction that stored their memories, when the caller has one open);
    `secure_delete` zeroes their text in the database file."""
    with store.atomic() as conn:
        for chunk, marks in id_chunks(ids):
            conn.execute(f"DELETE FROM ingest_items WHERE id IN ({marks})", chunk)

def earlier_of(store: Store, being: str, source: str, before_id: int) -> list[int]:
    """Ids of `being`'s items of `source` staged before item `before_id` and not learned yet (`ready` or
    `queued`; a held one waits for its reply, a failed one was set aside), oldest first (read-only; the
    `(being_id, source)` index)."""
    return [r[0] for r in store.conn.execute(
        "SELECT id FROM ingest_items WHERE being_id = ? AND source = ? AND id < ? AND state IN ('ready', 'queued')"
        " ORDER BY id", (being, source, int(before_id)))]


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
    with store.atomic() as conn:
        return conn.execute("UPDATE ingest_items SET state = 'ready', job_id = NULL, queued_at = NULL"
                            " WHERE job_id = ? AND state = 'queued'", (job_id,)).rowcount

def counts(store: Store) -> dict[str, int]:
    """`{held, ready, queued, failed}`: staged items by state, all beings (read-only)."""
    out = dict.fromkeys(("held", "ready", "queued", "failed"), 0)
    out.update(store.conn.execute("SELECT state, COUNT(*) FROM ingest_items GROUP BY state").fetchall())
    return out


def in_flight(store: Store) -> tuple[int, int | None]:
    """`(count, lowest id)` of the staged items waiting to be learned (`ready` or `queued`; all beings), lowest id
    None when there are none (read-only; the `(state, id)` index)."""
    count, first = store.conn.execute("SELECT COUNT(*), MIN(id) FROM ingest_items WHERE state IN ('ready', 'queued')"
                                      ).fetchone()
    return int(count), first


def last_id(store: Store) -> int:
    """The id of the newest item ever staged (0 before the first; ids are never reused: AUTOINCREMENT)."""
    row = store.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'ingest_items'").fetchone()
    return int(row[0]) if row else 0


def failed_from(store: Store, first_id: int) -> int:
    """How many staged items with id >= `first_id` failed for good (read-only)."""
    return store.conn.execute("SELECT COUNT(*) FROM ingest_items WHERE state = 'failed' AND id >= ?",
                              (first_id,)).fetchone()[0]
