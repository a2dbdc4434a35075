"""The `project_sources` table (issue 19: sources bound to a project): a source of the owner's, named by its `kind`
and `value`, bound to one project, so what arrives there is learned into the project's namespace instead of the
owner's user-global one (the rule that reads these rows: `twin.ingest.bound_namespace`).

Kinds (`KINDS`) and their values:
- `files`: a folder as an absolute, normalised path (`/home/me/Household`); every file at or under it.
- `telegram_chat`: a Telegram chat id as decimal text (`-1001234567890` for a group); the owner's messages there.
- `gmail_label`: a Gmail label id (`Label_12`, `INBOX`, as `gmail_skip_labels` names labels); a thread any of whose
  messages carries it.

A source is bound to at most one project (the key is `(kind, value)`); deleting a project deletes its bindings
(cascade). Migration `0021_project_sources` made the table (twin.store.schema)."""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from twin.store.core import Store

KINDS = ("files", "telegram_chat", "gmail_label")
"""The kinds of source that can be bound to a project (the table's CHECK says the same)."""


class SourceBinding(NamedTuple):
    """One bound source: `kind` (one of `KINDS`), `value` (see the module), `project_id` (a ULID) and `added_at`
    (UTC ISO-8601)."""

    kind: str
    value: str
    project_id: str
    added_at: str


_COLUMNS = "kind, value, project_id, added_at"


def bound(store: Store, kind: str, value: str) -> SourceBinding | None:
    """The binding of source `(kind, value)`, or None (read-only)."""
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
    """Unbind source `(kind, value)` from `project_id`; False when it was not bound to that project."""
    with store.atomic() as conn:
        return conn.execute("DELETE FROM project_sources WHERE kind = ? AND value = ? AND project_id = ?",
                            (kind, value, project_id)).rowcount > 0


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
