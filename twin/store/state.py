"""The `state` table: typed flags and notes of twin's components, apart from the `cursors` (positions in a source).

A row is `(scope, being_id, key, kind, value, updated_at)`: `scope` the component that owns it (`gmail`,
`telegram`, `provider`, `store`, …), `kind` one of `KINDS` and says how `value` reads back: `text` as written,
`time` a UTC ISO-8601 moment, `json` any JSON value. Reading a key with another kind's accessor raises
`StoreError` (a flag written as one type is never silently read as another). Writes run in the caller's
transaction when there is one. Migration `0013_state` moved the flags out of `cursors` (twin.store.schema).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

from twin.exceptions import StoreError
from twin.memory import parse_time, utc_now
from twin.store.core import Store

KINDS = ("text", "time", "json")
"""The kinds of a state value (the `kind` column; the migration's CHECK)."""


def _select(conn: sqlite3.Connection, scope: str, being: str, key: str) -> tuple[str, str] | None:
    return conn.execute("SELECT kind, value FROM state WHERE scope = ? AND being_id = ? AND key = ?",
                        (scope, being, key)).fetchone()


def _read(store: Store, scope: str, being: str, key: str, kind: str) -> str | None:
    row = _select(store.conn, scope, being, key)
    if row is None:
        return None
    if row[0] != kind:
        raise StoreError(f"state {scope}/{key} holds a {row[0]} value, read as {kind}")
    return row[1]


def _write(store: Store, scope: str, being: str, key: str, kind: str, value: str) -> None:
    store.conn.execute("INSERT INTO state (scope, being_id, key, kind, value, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
                       " ON CONFLICT (scope, being_id, key) DO UPDATE SET kind = excluded.kind,"
                       " value = excluded.value, updated_at = excluded.updated_at",
                       (scope, being, key, kind, value, utc_now()))


def get_text(store: Store, scope: str, being: str, key: str) -> str | None:
    """A `text` value, or None when unset. Raises `StoreError` when the key holds another kind."""
    return _read(store, scope, being, key, "text")


def set_text(store: Store, scope: str, being: str, key: str, value: str) -> None:
    """Save a `text` value (replacing any value of the key)."""
    _write(store, scope, being, key, "text", str(value))


def get_time(store: Store, scope: str, being: str, key: str) -> str | None:
    """A `time` value (UTC ISO-8601), or None when unset. Raises `StoreError` when the key holds another kind."""
    return _read(store, scope, being, key, "time")


def set_time(store: Store, scope: str, being: str, key: str, moment: str) -> None:
    """Save a `time` value: `moment` UTC ISO-8601 (`twin.memory.format_time`). Raises `ValueError` when it does
    not parse as one."""
    parse_time(moment)
    _write(store, scope, being, key, "time", moment)


def get_json(store: Store, scope: str, being: str, key: str) -> Any:
    """A `json` value decoded, or None when unset. Raises `StoreError` when the key holds another kind."""
    value = _read(store, scope, being, key, "json")
    return None if value is None else json.loads(value)


def set_json(store: Store, scope: str, being: str, key: str, value: Any) -> None:
    """Save a `json` value (anything `json.dumps` takes; raises `TypeError` otherwise)."""
    _write(store, scope, being, key, "json", json.dumps(value))


def delete(store: Store, scope: str, being: str, key: str) -> None:
    """Remove a key (absent is fine)."""
    store.conn.execute("DELETE FROM state WHERE scope = ? AND being_id = ? AND key = ?", (scope, being, key))


def keys_starting(store: Store, scope: str, being: str, prefix: str) -> list[str]:
    """The keys of `scope` for `being` that start with `prefix` (taken literally), in key order."""
    rows = store.conn.execute("SELECT key FROM state WHERE scope = ? AND being_id = ? AND substr(key, 1, ?) = ?"
                              " ORDER BY key", (scope, being, len(prefix), prefix)).fetchall()
    return [key for (key,) in rows]


def is_set(store: Store, scope: str, being: str, key: str) -> bool:
    """Whether the key holds a value of any kind (read-only)."""
    return store.conn.execute("SELECT 1 FROM state WHERE scope = ? AND being_id = ? AND key = ?",
                              (scope, being, key)).fetchone() is not None


def peek_text(db_path: Path, scope: str, being: str, key: str) -> str | None:
    """`get_text` of the store file at `db_path`, read through a read-only connection of its own for this one read
    (no `Store`: no migration runs, nothing is created; a process that only asks the daemon stays light). None
    when there is no such file, no `state` table, no such key or it is no `text` value, or SQLite cannot read it
    within 2 seconds."""
    path = Path(db_path)
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=2)
        try:
            row = _select(conn, scope, being, key)
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return row[1] if row is not None and row[0] == "text" else None


STORE_ID = ("bus", "", "store_id")
"""Where the store's own id is kept (scope, being, key): scope `bus`, where it was first needed."""


def store_identity(store: Store) -> str:
    """The store's own id (a UUID4 written to its `state` table the first time it is asked): what
    `twin.workers.bus.Bus.bind_store` compares, so a worker never takes jobs whose staged items live in another
    store, and what the API's `/v1/health` says, so a CLI never lets a daemon of another store answer for its data
    dir (`twin.remote.AutoTwin`). Read and written in one write transaction, so two processes starting at once get
    the same id."""
    with store.atomic():
        found = get_text(store, *STORE_ID)
        if found is None:
            found = str(uuid.uuid4())
            set_text(store, *STORE_ID, found)
    return found


def peek_store_identity(db_path: Path) -> str | None:
    """The id `store_identity` gave the store file at `db_path`, read without opening a `Store` (`peek_text`):
    None when it has none yet or there is no store there."""
    return peek_text(db_path, *STORE_ID)
