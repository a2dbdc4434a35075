"""The activity diary: one human-readable line per step, in SQLite and in the journal (seed 001, invariant 7)."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass

from twin.memory import utc_now
from twin.outside_text import escape_controls
from twin.store import Store

log = logging.getLogger("twin.activity")

ACTIVITY_KINDS = ("learned", "indexed_file", "forgot", "index", "system", "degraded", "recovered", "error",
                  "thought", "reflected", "signal", "held_back", "profile", "model", "read_email",
                  "browsed", "decayed", "dreamed")
"""Kinds of diary lines: seed 001's `learned`/`indexed_file`/`thought`/`read_email`/`browsed`, reflection's
`reflected`, `signal` (raised) and `held_back` (blocked by the Hush gate), `profile` edits, `model` (provider
fallbacks), seed 003's lifecycle (`decayed`: memories moved to cold; `dreamed`: a dream cycle) and our system lines."""


@dataclass
class ActivityLine:
    """One diary row: `at` is UTC ISO-8601."""

    id: int
    at: str
    kind: str
    text: str


class Activity:
    """Writes diary lines for one being through `store`; each line is also logged at INFO (WARNING for
    `degraded` and `error`), which the journal shows as one entry."""

    def __init__(self, store: Store, being: str):
        self.store = store
        self.being = being

    def record(self, kind: str, text: str) -> None:
        """Write one line to the journal and the diary; a diary write that fails (disk full, store locked)
        is logged, never raised. Raises `ValueError` for an unknown kind. Never put a secret or a forgotten
        memory's text in `text` (invariant 5). A diary line is one line: line breaks and terminal controls that
        outside text (a file name, a signal title) brought into `text` are stored escaped
        (`twin.outside_text.escape_controls`), so no line can forge another or drive the terminal that shows it."""
        if kind not in ACTIVITY_KINDS:
            raise ValueError(f"unknown activity kind {kind!r}; expected one of {ACTIVITY_KINDS}")
        text = escape_controls(text)
        level = logging.WARNING if kind in ("degraded", "error") else logging.INFO
        log.log(level, "%s", text)
        try:
            self.store.conn.execute("INSERT INTO activity (being_id, at, kind, text) VALUES (?, ?, ?, ?)",
                                    (self.being, utc_now(), kind, text))
        except sqlite3.Error as exc:  # a full disk or a locked store must not stop what the line describes
            log.warning("activity: could not store this line in the diary (%s)", exc)

    def recent(self, n: int = 60, after_id: int = 0) -> list[ActivityLine]:
        """The newest `n` lines with id > `after_id`, oldest first (read-only)."""
        rows = self.store.conn.execute(
            "SELECT id, at, kind, text FROM activity WHERE being_id = ? AND id > ? ORDER BY id DESC LIMIT ?",
            (self.being, after_id, int(n))).fetchall()
        return [ActivityLine(*r) for r in reversed(rows)]
