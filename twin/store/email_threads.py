"""The `email_threads` rows: what the Gmail connector last saw of each thread (subject, the newest message, whether
it waits for the owner's reply and why). `twin.connectors.gmail` writes them, `twin.health` and `twin email waiting`
read them, `twin.lifecycle.forgetting` clears them.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from twin.memory import utc_now
from twin.store.core import Store


class ThreadRow(NamedTuple):
    """One thread as the last sync saw it: `last_from` is "Owner" or the sender's name, `last_message_at` UTC
    ISO-8601, `needs_reply` 0/1, `reply_reason` the sentence that asks (None when unknown)."""
    thread_id: str
    subject: str
    last_message_id: str
    last_from: str
    last_message_at: str
    message_count: int
    needs_reply: int
    reply_reason: str | None


def last_message_ids(store: Store, being: str, thread_ids: list[str]) -> dict[str, str]:
    """`{thread_id: last_message_id}` of those of `thread_ids` already stored for `being` (read-only; only the
    threads in hand, not every thread ever read)."""
    return dict(store.conn.execute(
        "SELECT thread_id, last_message_id FROM email_threads WHERE being_id = ? AND thread_id IN "
        "(SELECT value FROM json_each(?))", (being, json.dumps(thread_ids))).fetchall())


def save(store: Store, being: str, row: ThreadRow, now: str) -> None:
    """Insert or replace the row of `row.thread_id` for `being`, stamped `updated_at` = `now` (UTC ISO-8601)."""
    store.conn.execute(
        "INSERT INTO email_threads (being_id, thread_id, subject, last_message_id, last_from, last_message_at, "
        "message_count, needs_reply, reply_reason, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (being_id, thread_id) DO UPDATE SET subject = excluded.subject, "
        "last_message_id = excluded.last_message_id, last_from = excluded.last_from, "
        "last_message_at = excluded.last_message_at, message_count = excluded.message_count, "
        "needs_reply = excluded.needs_reply, reply_reason = excluded.reply_reason, "
        "updated_at = excluded.updated_at", (being, *row, now))


def counts(store: Store, being: str) -> tuple[int, int]:
    """`(threads, threads waiting for a reply)` of `being` (read-only)."""
    threads, waiting = store.conn.execute("SELECT COUNT(*), COALESCE(SUM(needs_reply), 0) FROM email_threads "
                                          "WHERE being_id = ?", (being,)).fetchone()
    return threads, waiting


def waiting(store: Store, being: str, *, newest_first: bool = False, limit: int | None = None) -> list[ThreadRow]:
    """The rows of `being` that wait for a reply, by `last_message_at` (then thread id), oldest first unless
    `newest_first`; all of them unless `limit` (read-only)."""
    order = "DESC" if newest_first else "ASC"
    return [ThreadRow(*r) for r in store.conn.execute(
        "SELECT thread_id, subject, last_message_id, last_from, last_message_at, message_count, needs_reply,"
        f" reply_reason FROM email_threads WHERE being_id = ? AND needs_reply = 1"
        f" ORDER BY last_message_at {order}, thread_id {order} LIMIT ?",
        (being, -1 if limit is None else max(0, limit)))]


def thread_ids(store: Store, being: str) -> list[str]:
    """Every thread id of `being`, sorted (read-only)."""
    return [t for (t,) in store.conn.execute("SELECT thread_id FROM email_threads WHERE being_id = ?"
                                             " ORDER BY thread_id", (being,))]


def clear(store: Store, being: str, thread_id: str) -> None:
    """Forget what a thread said (subject, sender, whether it waits) but keep the id of its last message, so the
    next sync does not learn it again (`twin.lifecycle.forgetting`)."""
    store.conn.execute("UPDATE email_threads SET subject = '', last_from = '', needs_reply = 0, reply_reason = NULL,"
                       " updated_at = ? WHERE being_id = ? AND thread_id = ?", (utc_now(), being, thread_id))
