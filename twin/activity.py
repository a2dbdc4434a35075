"""The activity diary: one human-readable line per step, in SQLite and in the journal (seed 001, invariant 7)."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from twin.outside_text import escape_controls
from twin.store import Store
from twin.store import activity as diary
from twin.text.source_pattern import SourcePattern

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
        `subject` is the source the line names (`file:/path` as `twin.connectors.files.file_source` writes it,
        `telegram:<chat>`), so forgetting that source rewrites the name out of it (`unname`)."""
        if kind not in ACTIVITY_KINDS:
            raise ValueError(f"unknown activity kind {kind!r}; expected one of {ACTIVITY_KINDS}")
        text = escape_controls(text)
        level = logging.WARNING if kind in ("degraded", "error") else logging.INFO
        log.log(level, "%s", text)
        try:
            diary.add_line(self.store, self.being, kind, text, subject)
        except sqlite3.Error as exc:  # a full disk or a locked store must not stop what the line describes
            log.warning("activity: could not store this line in the diary (%s)", exc)

    def recent(self, n: int = 60, after_id: int = 0) -> list[ActivityLine]:
        """The newest `n` lines with id > `after_id`, oldest first (read-only)."""
        return [ActivityLine(*r) for r in diary.recent_lines(self.store, self.being, n, after_id)]


FORGOTTEN_NAMES = {"file": ("{}", "a forgotten file"), "telegram": ("chat {}", "a forgotten chat"),
                   "email": ("thread {}", "a forgotten email thread")}
"""How a diary line shows the name of a source of each type, and what it says instead once that source is forgotten."""
_LEGACY_SKIP = "Files: skipped "
"""The start of the files connector's skip line ("Files: skipped /path (reason)."), written without a subject before
the diary had one."""


def naming(store: Store, being: str, source: str | None = None,
           mentions: Callable[[str], bool] | None = None, exact: bool = False) -> list[int]:
    """Ids of `being`'s diary lines that name `source` (exact, or every source that starts so when it ends in `*`
    and not `exact`: `twin.text.source_pattern`)
    or a source whose name `mentions` says mentions the subject of a forget (read-only). Lines written before the
    diary kept subjects count by their text (a skip line's path)."""
    if source is None and mentions is None:
        return []
    pattern = SourcePattern.of(source, exact) if source is not None else None
    found = []
    for line_id, text, subject in diary.lines_with_subject(store, being, _LEGACY_SKIP):
        subject = subject or _legacy_subject(text)
        if subject is None:
            continue
        by_source = pattern is not None and pattern.matches(subject)
        if by_source or (mentions is not None and mentions(subject.split(":", 1)[-1])):
            found.append(line_id)
    return found


def named(store: Store, being: str, subject: str) -> bool:
    """True when a diary line of `being` already names `subject` (read-only; one indexed lookup)."""
    return diary.names(store, being, subject)


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
        row = diary.line(store, line_id)
        if row is None:
            continue
        text, subject = row.text, row.subject or _legacy_subject(row.text) or ""
        kind, _, name = subject.partition(":")
        shape, instead = FORGOTTEN_NAMES.get(kind, ("{}", "a forgotten source"))
        for shown in dict.fromkeys((shape.format(name), escape_controls(shape.format(name)))):
            if name and shown in text:  # subjects are written as the line shows them (`file_source`: `clean_name`)
                text = text.replace(shown, instead)
                break
        else:  # the name is not where the line's shape puts it: the whole line goes rather than keep the name
            text = f"A line about {instead}, rewritten when it was forgotten."
        diary.rewrite_line(store, line_id, text)
