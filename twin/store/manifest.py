"""The files manifest: what the files connector last saw of each file (its cursor; DESIGN.md invariant 3).

One row per path and being in `files_manifest` (created by `twin.store.schema`): the file's size and
mtime as seen by `lstat`, the SHA-256 of its bytes on disk, and whether it was `indexed` (its text
was pushed for learning) or `skipped` (with the reason: binary, too large, unreadable, …). A
`skipped` row never has memories: the connector forgets a file's memories before it records a skip.
All functions run on the caller's `Store` connection (autocommit; each write is its own transaction).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from twin.memory import utc_now
from twin.store.core import Store

STATES = ("indexed", "skipped")
"""The values of `ManifestEntry.state` (the table's CHECK constraint)."""
FORGOTTEN_FILE_REASON = "forgotten by the owner; learned again when the file changes"
"""The reason of a file whose memories were forgotten while it still exists (`twin.lifecycle.forgetting.carry_out`)."""


@dataclass(frozen=True)
class ManifestEntry:
    """One file as the connector last saw it.

    `path` is absolute (as a string, without a trailing separator); `size` is in bytes on disk
    (compressed for `.gz`); `mtime_ns` is `st_mtime_ns` (nanoseconds since the epoch); `sha256` is
    the hex SHA-256 of the bytes on disk, or `""` when the file was not read (too large, unreadable,
    a directory); `state` is one of `STATES`; `reason` says why a `skipped` file was skipped
    (None for `indexed`).
    """

    path: str
    size: int
    mtime_ns: int
    sha256: str
    state: str
    reason: str | None = None


_COLUMNS = "path, size, mtime_ns, sha256, state, reason"


def _key(path: str | os.PathLike) -> str:
    text = os.fspath(path)
    return text.rstrip(os.sep) or os.sep


def get(store: Store, being: str, path: str | os.PathLike) -> ManifestEntry | None:
    """The row of `path` for `being`, or None when the connector has never recorded it (read-only)."""
    row = store.conn.execute(f"SELECT {_COLUMNS} FROM files_manifest WHERE being_id = ? AND path = ?",
                             (being, _key(path))).fetchone()
    return ManifestEntry(*row) if row else None


def upsert(store: Store, being: str, entry: ManifestEntry) -> None:
    """Insert or replace the row of `entry.path` for `being`, stamping `updated_at` (UTC ISO-8601).

    Call only after the push for this file succeeded (invariant 3). Raises `ValueError` for a state
    not in `STATES`; `sqlite3.Error` if the store fails.
    """
    if entry.state not in STATES:
        raise ValueError(f"manifest state must be one of {STATES}, got {entry.state!r}")
    store.conn.execute(
        "INSERT INTO files_manifest (being_id, path, size, mtime_ns, sha256, state, reason, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (being_id, path) DO UPDATE SET size = excluded.size,"
        " mtime_ns = excluded.mtime_ns, sha256 = excluded.sha256, state = excluded.state, reason = excluded.reason,"
        " updated_at = excluded.updated_at",
        (being, _key(entry.path), int(entry.size), int(entry.mtime_ns), entry.sha256, entry.state, entry.reason,
         utc_now()))


def delete(store: Store, being: str, path: str | os.PathLike) -> bool:
    """Delete the row of `path` (only that path, not rows below it). Returns True if a row existed."""
    cur = store.conn.execute("DELETE FROM files_manifest WHERE being_id = ? AND path = ?", (being, _key(path)))
    return cur.rowcount > 0


def paths(store: Store, being: str, under: Path | str) -> dict[str, ManifestEntry]:
    """Rows of `being` for `under` itself and every path below it, keyed by path (read-only).

    Matching is by path components: `/a/b` covers `/a/b` and `/a/b/c`, never `/a/bc`. Implemented as
    a range on the primary key (`'/a/b/' <= path < '/a/b0'`, since '0' follows '/'), so no LIKE escaping.
    """
    top = _key(under)
    prefix = top if top.endswith(os.sep) else top + os.sep
    upper = prefix[:-1] + chr(ord(os.sep) + 1)
    rows = store.conn.execute(
        f"SELECT {_COLUMNS} FROM files_manifest WHERE being_id = ? AND (path = ? OR (path >= ? AND path < ?))",
        (being, top, prefix, upper)).fetchall()
    return {row[0]: ManifestEntry(*row) for row in rows}


def counts(store: Store, being: str) -> dict[str, int]:
    """`{"indexed": n, "skipped": m}`: how many rows of `being` are in each state (read-only)."""
    out = dict.fromkeys(STATES, 0)
    for state, n in store.conn.execute("SELECT state, COUNT(*) FROM files_manifest WHERE being_id = ? GROUP BY state",
                                       (being,)):
        out[state] = n
    return out


def all_paths(store: Store, being: str) -> list[str]:
    """Every path of `being` in the manifest, sorted (read-only)."""
    return [p for (p,) in store.conn.execute("SELECT path FROM files_manifest WHERE being_id = ? ORDER BY path",
                                             (being,))]


def mark_forgotten(store: Store, being: str, path: str) -> None:
    """Mark the row of `path` `skipped` with `FORGOTTEN_FILE_REASON` (its memories were forgotten while the file
    still exists; it is learned again when it changes)."""
    store.conn.execute("UPDATE files_manifest SET state = 'skipped', reason = ?, updated_at = ?"
                       " WHERE being_id = ? AND path = ?", (FORGOTTEN_FILE_REASON, utc_now(), being, path))
