"""The `activity` rows: the diary (DESIGN.md "Activity"), one line per thing twin did, with the source it names
(`subject`) so a forget can rewrite the name out of it. `twin.activity` has the rules (kinds, escaping, how a
forgotten name is shown); these are its statements.
"""

from __future__ import annotations

from typing import NamedTuple

from twin.memory import utc_now
from twin.store.core import Store


class DiaryRow(NamedTuple):
    """A diary line as a forget reads it: `id`, `text`, `subject` (the source it names, or None)."""
    id: int
    text: str
    subject: str | None


def add_line(store: Store, being: str, kind: str, text: str, subject: str | None) -> None:
    """Append one diary line of `being`, stamped now (UTC ISO-8601). Raises `sqlite3.Error` when the store fails."""
    store.conn.execute("INSERT INTO activity (being_id, at, kind, text, subject) VALUES (?, ?, ?, ?, ?)",
                       (being, utc_now(), kind, text, subject))


def recent_lines(store: Store, being: str, n: int, after_id: int = 0) -> list[tuple[int, str, str, str]]:
    """`(id, at, kind, text)` of the newest `n` lines of `being` with id > `after_id`, oldest first (read-only)."""
    rows = store.conn.execute(
        "SELECT id, at, kind, text FROM activity WHERE being_id = ? AND id > ? ORDER BY id DESC LIMIT ?",
        (being, after_id, int(n))).fetchall()
    return list(reversed(rows))


def lines_with_subject(store: Store, being: str, text_prefix: str) -> list[DiaryRow]:
    """The lines of `being` that have a subject or whose text starts with `text_prefix` (an older line shape that
    names its source in the text), ascending id (read-only)."""
    return [DiaryRow(*r) for r in store.conn.execute(
        "SELECT id, text, subject FROM activity WHERE being_id = ? AND (subject IS NOT NULL OR substr(text, 1, ?)"
        " = ?) ORDER BY id", (being, len(text_prefix), text_prefix))]


def names(store: Store, being: str, subject: str) -> bool:
    """True when a line of `being` already names `subject` (read-only; one indexed lookup)."""
    return store.conn.execute("SELECT 1 FROM activity WHERE being_id = ? AND subject = ? LIMIT 1",
                              (being, subject)).fetchone() is not None


def line(store: Store, line_id: int) -> DiaryRow | None:
    """One line by id, or None (read-only)."""
    row = store.conn.execute("SELECT id, text, subject FROM activity WHERE id = ?", (line_id,)).fetchone()
    return DiaryRow(*row) if row else None


def rewrite_line(store: Store, line_id: int, text: str) -> None:
    """Replace the text of a line and clear its subject (the old text leaves the files at the next scrub)."""
    store.conn.execute("UPDATE activity SET text = ?, subject = NULL WHERE id = ?", (text, line_id))
