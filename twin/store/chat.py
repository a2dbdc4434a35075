"""The chat tables: `chat_messages` (the transcript, stored redacted, seed 002), `chat_sessions` (each chat's
summary and how far it reaches) and `chat_owners` (who is paired as the owner). `twin.chat` holds the rules
(what to keep, when to compact, what a forget redacts); these functions run in the caller's transaction when
there is one.

A transcript row's `state`: an owner row is `received`, then `answered` (the reply went out), then `learned`;
a twin row is `answered` from the start.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from twin.memory import utc_now
from twin.store.core import Store


class MessageRow(NamedTuple):
    """A transcript row: its `id`, `chat_id`, `role` (owner/twin) and `text` (redacted as stored)."""
    id: int
    chat_id: str
    role: str
    text: str


# -- owners ---------------------------------------------------------------------------------------------------
def paired_owners(store: Store, connector: str, being: str) -> set[int]:
    """User ids paired as owners of `being` on `connector` (read-only)."""
    return {row[0] for row in store.conn.execute(
        "SELECT user_id FROM chat_owners WHERE connector = ? AND being_id = ?", (connector, being))}


def pair_owner(store: Store, connector: str, being: str, user_id: int) -> None:
    """Record `user_id` as an owner of `being` on `connector` (already paired: unchanged)."""
    store.conn.execute("INSERT OR IGNORE INTO chat_owners (connector, being_id, user_id, paired_at)"
                       " VALUES (?, ?, ?, ?)", (connector, being, user_id, utc_now()))


# -- the transcript -------------------------------------------------------------------------------------------
def message_by_update(store: Store, chat_id: str, update_id: int) -> tuple[int, str] | None:
    """`(row id, state)` of the row of `chat_id` stored for the transport's `update_id`, or None (read-only)."""
    row = store.conn.execute("SELECT id, state FROM chat_messages WHERE chat_id = ? AND update_id = ?",
                             (chat_id, update_id)).fetchone()
    return (row[0], row[1]) if row else None


def add_owner_message(store: Store, being: str, chat_id: str, text: str, update_id: int | None) -> int:
    """Insert an owner row (`received`, now) with its already redacted `text`; returns its id."""
    cursor = store.conn.execute("INSERT INTO chat_messages (being_id, chat_id, role, text, update_id, created_at)"
                                " VALUES (?, ?, 'owner', ?, ?, ?)", (being, chat_id, text, update_id, utc_now()))
    return int(cursor.lastrowid)


def add_twin_reply(store: Store, being: str, chat_id: str, text: str, shown: list[int]) -> None:
    """Insert the twin's (redacted) reply `text`, `answered`, with the ids of the memories it `shown`."""
    store.conn.execute("INSERT INTO chat_messages (being_id, chat_id, role, text, state, shown_memories,"
                       " created_at) VALUES (?, ?, 'twin', ?, 'answered', ?, ?)",
                       (being, chat_id, text, json.dumps(shown), utc_now()))


def set_answered(store: Store, row_id: int) -> None:
    """Move a `received` owner row to `answered` (any other state: unchanged)."""
    store.conn.execute("UPDATE chat_messages SET state = 'answered' WHERE id = ? AND state = 'received'", (row_id,))


def set_learned(store: Store, row_id: int) -> None:
    """Move a row to `learned` (handed to `learn()`)."""
    store.conn.execute("UPDATE chat_messages SET state = 'learned' WHERE id = ?", (row_id,))


def last_shown(store: Store, chat_id: str) -> list[int]:
    """Ids of the memories shown in the twin's last reply in `chat_id` ([] before one; read-only)."""
    row = store.conn.execute("SELECT shown_memories FROM chat_messages WHERE chat_id = ? AND role = 'twin'"
                             " ORDER BY id DESC LIMIT 1", (chat_id,)).fetchone()
    return json.loads(row[0]) if row else []


def recent_messages(store: Store, being: str, chat_id: str, limit: int) -> list[tuple[str, str]]:
    """The last `limit` `(role, text)` of the chat, oldest first (read-only)."""
    rows = store.conn.execute("SELECT role, text FROM chat_messages WHERE chat_id = ? AND being_id = ?"
                              " ORDER BY id DESC LIMIT ?", (chat_id, being, limit)).fetchall()
    return [(r[0], r[1]) for r in reversed(rows)]


def messages_after(store: Store, being: str, chat_id: str, after_id: int) -> list[MessageRow]:
    """The rows of the chat with id > `after_id`, in order (read-only)."""
    return [MessageRow(r[0], chat_id, r[1], r[2]) for r in store.conn.execute(
        "SELECT id, role, text FROM chat_messages WHERE being_id = ? AND chat_id = ? AND id > ? ORDER BY id",
        (being, chat_id, after_id))]


def messages_up_to(store: Store, being: str, chat_id: str, up_to_id: int) -> list[tuple[str, str]]:
    """`(role, text)` of the rows of the chat with id ≤ `up_to_id`, in order (read-only)."""
    return store.conn.execute("SELECT role, text FROM chat_messages WHERE being_id = ? AND chat_id = ? AND id <= ?"
                              " ORDER BY id", (being, chat_id, up_to_id)).fetchall()


def answered_owner_rows(store: Store, being: str) -> list[MessageRow]:
    """The owner rows of `being` that were answered but not yet learned, in order (read-only)."""
    return [MessageRow(r[0], r[1], "owner", r[2]) for r in store.conn.execute(
        "SELECT id, chat_id, text FROM chat_messages WHERE being_id = ? AND role = 'owner' AND state = 'answered'"
        " ORDER BY id", (being,))]


def chat_ids(store: Store, being: str) -> list[str]:
    """The distinct chat ids of `being`'s transcript (read-only)."""
    return [c for (c,) in store.conn.execute("SELECT DISTINCT chat_id FROM chat_messages WHERE being_id = ?",
                                             (being,))]


def unredacted_rows(store: Store, being: str, redacted: str,
                    chat_id: str | None = None) -> list[tuple[int, str, str, str]]:
    """`(id, chat_id, text, shown_memories JSON)` of `being`'s rows whose text is not `redacted`, of one chat when
    `chat_id` is given (read-only)."""
    if chat_id is None:
        return store.conn.execute("SELECT id, chat_id, text, shown_memories FROM chat_messages WHERE being_id = ?"
                                  " AND text != ?", (being, redacted)).fetchall()
    return store.conn.execute("SELECT id, chat_id, text, shown_memories FROM chat_messages WHERE being_id = ?"
                              " AND chat_id = ? AND text != ?", (being, chat_id, redacted)).fetchall()


def redact_row(store: Store, row_id: int, redacted: str, forgotten: set[int]) -> bool:
    """Replace the text of `row_id` with `redacted`, drop `forgotten` ids from its `shown_memories`, and move an
    answered owner row to `learned`. Returns False when the row does not exist. The caller sets the scrub marker."""
    shown = store.conn.execute("SELECT shown_memories FROM chat_messages WHERE id = ?", (row_id,)).fetchone()
    if shown is None:
        return False
    kept = [i for i in json.loads(shown[0]) if i not in forgotten]
    store.conn.execute("UPDATE chat_messages SET text = ?, shown_memories = ?, state = CASE WHEN role = 'owner'"
                       " AND state = 'answered' THEN 'learned' ELSE state END WHERE id = ?",
                       (redacted, json.dumps(kept), row_id))
    return True


# -- summaries ------------------------------------------------------------------------------------------------
def summary(store: Store, being: str, chat_id: str) -> str:
    """The chat's session summary ('' before the first compaction; read-only)."""
    row = store.conn.execute("SELECT summary FROM chat_sessions WHERE being_id = ? AND chat_id = ?",
                             (being, chat_id)).fetchone()
    return row[0] if row else ""


def summarised_up_to(store: Store, being: str, chat_id: str) -> int | None:
    """The id of the last row folded into the chat's summary, or None before the first compaction (read-only)."""
    row = store.conn.execute("SELECT summarised_up_to FROM chat_sessions WHERE being_id = ? AND chat_id = ?",
                             (being, chat_id)).fetchone()
    return row[0] if row else None


def save_summary(store: Store, being: str, chat_id: str, text: str, up_to_id: int) -> None:
    """Insert or replace the chat's summary `text`, reaching row `up_to_id`."""
    store.conn.execute("INSERT INTO chat_sessions (being_id, chat_id, summary, summarised_up_to, updated_at)"
                       " VALUES (?, ?, ?, ?, ?) ON CONFLICT (being_id, chat_id) DO UPDATE SET"
                       " summary = excluded.summary, summarised_up_to = excluded.summarised_up_to,"
                       " updated_at = excluded.updated_at", (being, chat_id, text, up_to_id, utc_now()))


def replace_summary_text(store: Store, being: str, chat_id: str, text: str) -> None:
    """Rewrite the chat's summary `text` in place (how far it reaches stays)."""
    store.conn.execute("UPDATE chat_sessions SET summary = ?, updated_at = ? WHERE being_id = ? AND chat_id = ?",
                       (text, utc_now(), being, chat_id))


def summaries(store: Store, being: str) -> list[tuple[str, str, int]]:
    """`(chat_id, summary, summarised_up_to)` of every chat of `being` with a summary (read-only)."""
    return store.conn.execute("SELECT chat_id, summary, summarised_up_to FROM chat_sessions WHERE being_id = ?",
                              (being,)).fetchall()
