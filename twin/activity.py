"""The activity diary: one human-readable line per step, in SQLite and in the journal (seed 001, invariant 7)."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
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

    def record(self, kind: str, text: str, subject: str | None = None) -> None:
        """Write one line to the journal and the diary; a diary write that fails (disk full, store locked)
        is logged, never raised. Raises `ValueError` for an unknown kind. Never put a secret or a forgotten
        memory's text in `text` (invariant 5). A diary line is one line: line breaks and terminal controls that
        outside text (a file name, a signal title) brought into `text` are stored escaped
        (`twin.outside_text.escape_controls`), so no line can forge another or drive the terminal that shows it.
        `subject` is the source the line names (`file:/path` as `connectors.files.file_source` writes it,
        `telegram:<chat>`), so forgetting that source rewrites the name out of it (`unname`)."""
        if kind not in ACTIVITY_KINDS:
            raise ValueError(f"unknown activity kind {kind!r}; expected one of {ACTIVITY_KINDS}")
        text = escape_controls(text)
        level = logging.WARNING if kind in ("degraded", "error") else logging.INFO
        log.log(level, "%s", text)
        try:
            self.store.conn.execute("INSERT INTO activity (being_id, at, kind, text, subject) VALUES (?, ?, ?, ?, ?)",
                                    (self.being, utc_now(), kind, text, subject))
        except sqlite3.Error as exc:  # a full disk or a locked store must not stop what the line describes
            log.warning("activity: could not store this line in the diary (%s)", exc)

    def recent(self, n: int = 60, after_id: int = 0) -> list[ActivityLine]:
        """The newest `n` lines with id > `after_id`, oldest first (read-only)."""
        rows = self.store.conn.execute(
            "SELECT id, at, kind, text FROM activity WHERE being_id = ? AND id > ? ORDER BY id DESC LIMIT ?",
            (self.being, after_id, int(n))).fetchall()
        return [ActivityLine(*r) for r in reversed(rows)]


FORGOTTEN_NAMES = {"file": ("{}", "a forgotten file"), "telegram": ("chat {}", "a forgotten chat"),
                   "email": ("thread {}", "a forgotten email thread")}
"""How a diary line shows the name of a source of each type, and what it says instead once that source is forgotten."""
_LEGACY_SKIP = "Files: skipped "
"""The start of the files connector's skip line ("Files: skipped /path (reason)."), written without a subject before
the diary had one."""


def naming(store: Store, being: str, source: str | None = None,
           mentions: Callable[[str], bool] | None = None) -> list[int]:
    """Ids of `being`'s diary lines that name `source` (exact, or every source that starts so when it ends in `*`)
    or a source whose name `mentions` says mentions the subject of a forget (read-only). Lines written before the
    diary kept subjects count by their text (a skip line's path)."""
    if source is None and mentions is None:
        return []
    found = []
    for line_id, text, subject in store.conn.execute(
            "SELECT id, text, subject FROM activity WHERE being_id = ? AND (subject IS NOT NULL OR substr(text, 1, ?)"
            " = ?) ORDER BY id", (being, len(_LEGACY_SKIP), _LEGACY_SKIP)):
        subject = subject or _legacy_subject(text)
        if subject is None:
            continue
        by_source = source is not None and (subject.startswith(source[:-1]) if source.endswith("*")
                                            else subject == source)
        if by_source or (mentions is not None and mentions(subject.split(":", 1)[-1])):
            found.append(line_id)
    return found


def named(store: Store, being: str, subject: str) -> bool:
    """True when a diary line of `being` already names `subject` (read-only; one indexed lookup)."""
    return store.conn.execute("SELECT 1 FROM activity WHERE being_id = ? AND subject = ? LIMIT 1",
                              (being, subject)).fetchone() is not None


def _legacy_subject(text: str) -> str | None:
    """The `file:` source a skip line written without a subject names, or None for any other line."""
    if not text.startswith(_LEGACY_SKIP) or " (" not in text:
        return None
    return "file:" + text[len(_LEGACY_SKIP):text.rfind(" (")]


def unname(store: Store, line_ids: list[int]) -> None:
    """Rewrite the diary lines `line_ids` so they no longer name their source: "Files: skipped /home/me/x.bin
    (binary)." becomes "Files: skipped a forgotten file (binary)." (`FORGOTTEN_NAMES`; a line whose name is not
    found in that shape is replaced whole), and the subject is cleared. Call inside the caller's transaction; the
    old text leaves the files at the next scrub."""
    for line_id in line_ids:
        row = store.conn.execute("SELECT text, subject FROM activity WHERE id = ?", (line_id,)).fetchone()
        if row is None:
            continue
        text, subject = row[0], row[1] or _legacy_subject(row[0]) or ""
        kind, _, name = subject.partition(":")
        shape, instead = FORGOTTEN_NAMES.get(kind, ("{}", "a forgotten source"))
        for shown in dict.fromkeys((shape.format(name), escape_controls(shape.format(name)))):
            if name and shown in text:  # subjects are written as the line shows them (`file_source`: `clean_name`)
                text = text.replace(shown, instead)
                break
        else:  # the name is not where the line's shape puts it: the whole line goes rather than keep the name
            text = f"A line about {instead}, rewritten when it was forgotten."
        store.conn.execute("UPDATE activity SET text = ?, subject = NULL WHERE id = ?", (text, line_id))
