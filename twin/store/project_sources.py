"""The `project_sources` table (issue 19: sources bound to a project): a source of the owner's, named by its `kind`
and `value`, bound to one project, so what arrives there is learned into the project's namespace instead of the
owner's user-global one (the rule that reads these rows: `twin.ingest.bound_namespace`).

Kinds (`KINDS`) and their values:
- `files`: a folder as an absolute, normalised path (`/home/me/Household`); every file at or under it.
- `telegram_chat`: a Telegram chat id as decimal text (`-1001234567890` for a group); the owner's messages there.
- `gmail_label`: a Gmail label as the owner gave it: its name (`School`, `Household/Bills`) or its id (`Label_12`,
  `INBOX`); a thread any of whose messages carries it (`twin.ingest.bound_namespace` matches an id exactly, a name
  by `label_key`).

A source is bound to at most one project (the key is `(kind, value)`; two `gmail_label` values with one `label_key`
are one source); deleting a project deletes its bindings (cascade). Migration `0021_project_sources` made the table
(twin.store.schema)."""

from __future__ import annotations

import sqlite3
import unicodedata
from typing import NamedTuple

from twin.store.core import Store

KINDS = ("files", "telegram_chat", "gmail_label")
"""The kinds of source that can be bound to a project (the table's CHECK says the same)."""
LABEL_MAX_CHARS = 256
"""Longest Gmail label name (or id) twin binds or matches, characters: our bound (users.labels documents none; a
name is a path of nested labels such as `Household/Bills/2026`); a longer name from the API is left out."""


def label_key(text: str) -> str:
    """A Gmail label name as it is compared: whitespace runs as one space, ends stripped, case folded, NFC (so
    `household/bills`, `Household/Bills ` and a decomposed `Zoe\u0308` match their stored forms; Gmail itself
    keeps no two labels whose names differ only in case). Pure."""
    return unicodedata.normalize("NFC", " ".join(text.split()).casefold())


class SourceBinding(NamedTuple):
    """One bound source: `kind` (one of `KINDS`), `value` (see the module), `project_id` (a ULID) and `added_at`
    (UTC ISO-8601)."""

    kind: str
    value: str
    project_id: str
    added_at: str


_COLUMNS = "kind, value, project_id, added_at"


def bound(store: Store, kind: str, value: str) -> SourceBinding | None:
    """The binding of source `(kind, value)`, or None (read-only). A `gmail_label` is found by `label_key` (the
    earliest bound when an older twin stored two values with one key)."""
    if kind == "gmail_label":
        rows = store.conn.execute(f"SELECT {_COLUMNS} FROM project_sources WHERE kind = ? ORDER BY added_at", (kind,))
        return next((SourceBinding(*r) for r in rows if label_key(r[1]) == label_key(value)), None)
    row = store.conn.execute(f"SELECT {_COLUMNS} FROM project_sources WHERE kind = ? AND value = ?",
                             (kind, value)).fetchone()
    return SourceBinding(*row) if row else None


def add_binding(store: Store, binding: SourceBinding) -> bool:
    """Bind `binding`'s source to its project; False when it was bound to that project already (nothing changes).
    Raises `sqlite3.IntegrityError` when the source is bound to another project (unbind it first) or the project
    does not exist. One transaction (joins the caller's)."""
    with store.atomic() as conn:
        found = bound(store, binding.kind, binding.value)
        if found is not None and found.project_id == binding.project_id:
            return False
        if found is not None:
            raise sqlite3.IntegrityError(f"source {binding.kind} {binding.value!r} is bound to another project")
        conn.execute(f"INSERT INTO project_sources ({_COLUMNS}) VALUES (?, ?, ?, ?)", binding)
        return True


def remove_binding(store: Store, kind: str, value: str, project_id: str) -> bool:
    """Unbind source `(kind, value)` (found as `bound` finds it) from `project_id`; False when it was not bound to
    that project."""
    with store.atomic() as conn:
        found = bound(store, kind, value)
        if found is None or found.project_id != project_id:
            return False
        return conn.execute("DELETE FROM project_sources WHERE kind = ? AND value = ? AND project_id = ?",
                            (kind, found.value, project_id)).rowcount > 0


def bindings_of(store: Store, project_id: str) -> list[SourceBinding]:
    """The sources bound to `project_id`, by kind, then value (read-only)."""
    rows = store.conn.execute(f"SELECT {_COLUMNS} FROM project_sources WHERE project_id = ? ORDER BY kind, value",
                              (project_id,))
    return [SourceBinding(*r) for r in rows]


def all_bindings(store: Store) -> list[SourceBinding]:
    """Every bound source, the earliest bound first (then by kind and value): what staging reads once per call
    (read-only; a few rows: the owner binds them by hand)."""
    rows = store.conn.execute(f"SELECT {_COLUMNS} FROM project_sources ORDER BY added_at, kind, value")
    return [SourceBinding(*r) for r in rows]
