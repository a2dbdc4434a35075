"""The `state` table: typed flags apart from the cursors, and migration `0013_state` moving them out of a store
built at the previous schema without losing one."""

from __future__ import annotations

import sqlite3

import pytest

from twin.exceptions import StoreError
from twin.store import Store, schema, state

OLD_CURSORS = [  # (connector, being, key, value) as a store at 0012 holds them
    ("gmail", "owner", "history_id", "9001"), ("gmail", "owner", "auth_error", '{"at": "2026-01-02T03:04:05Z", '
                                                                              '"reason": "revoked"}'),
    ("gmail", "owner", "sync_error", '{"at": "2026-01-02T00:00:00Z", "reason": "HttpError: 503"}'),
    ("gmail", "owner", "address", "ana@example.org"), ("gmail", "owner", "last_sync", "2026-01-02T03:00:00Z"),
    ("telegram", "owner", "update_id", "77"), ("telegram", "owner", "token_refused", ""),
    ("telegram", "owner", "pair_code", '{"sha256": "ab", "expires_at": "2026-01-03T00:00:00Z"}'),
    ("telegram", "owner", "quiet_until", "2026-01-05T00:00:00Z"), ("telegram", "owner", "forget:42", "[3, 4]"),
    ("telegram", "owner", "stranger:9", "2026-01-02"), ("telegram", "owner", "owner_chat", "42"),
    ("telegram", "zoe", "quiet_until", ""),
    ("provider", "owner", "budget_noted", "2026-01-02"), ("store", "", "scrub_due", "2026-01-02T01:00:00Z"),
    ("files", "owner", "roots", '["/home/ana/notes"]'), ("browser", "owner", "visit:chrome-default", "120"),
    ("browser", "owner", "last_import", "2026-01-01T00:00:00Z"), ("browser", "owner", "unreadable", "[]"),
    ("reflection", "owner", "last_memory_id", "15"), ("reflection", "owner", "provider", "on"),
    ("reflection", "owner", "last_call_at", "2026-01-02T02:00:00Z"),
    ("lifecycle", "owner", "last_decay", "2026-01-01T12:00:00Z"), ("lifecycle", "zoe", "last_dream",
                                                                   "2026-01-01T13:00:00Z"),
]
POSITIONS = {("gmail", "owner", "history_id"), ("telegram", "owner", "update_id"),
             ("browser", "owner", "visit:chrome-default"), ("reflection", "owner", "last_memory_id")}


def test_the_migration_moves_every_flag_and_keeps_every_cursor(tmp_path, monkeypatch):
    db = tmp_path / "twin.db"
    with monkeypatch.context() as old:
        before_state = [name for name, _ in schema.MIGRATIONS].index("0013_state")
        old.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:before_state])  # the store before 0013_state
        with Store(db) as before:
            before.conn.executemany("INSERT INTO cursors (connector, being_id, key, value, updated_at)"
                                    " VALUES (?, ?, ?, ?, '2026-01-02T00:00:00Z')", OLD_CURSORS)
    with Store(db) as store:
        cursors = {(c, b, k): v for c, b, k, v in store.conn.execute(
            "SELECT connector, being_id, key, value FROM cursors")}
        moved = {(s, b, k): (kind, v) for s, b, k, kind, v in store.conn.execute(
            "SELECT scope, being_id, key, kind, value FROM state")}
    assert set(cursors) == POSITIONS and cursors[("gmail", "owner", "history_id")] == "9001"
    cleared = {(c, b, k) for c, b, k, v in OLD_CURSORS if v == ""}  # "" meant cleared: nothing to keep
    assert set(moved) == {(c, b, k) for c, b, k, _ in OLD_CURSORS} - POSITIONS - cleared
    assert all(moved[(c, b, k)][1] == v for c, b, k, v in OLD_CURSORS if (c, b, k) in moved)
    with Store(db) as store:
        assert state.get_json(store, "gmail", "owner", "auth_error") == {"at": "2026-01-02T03:04:05Z",
                                                                         "reason": "revoked"}
        assert state.get_json(store, "telegram", "owner", "forget:42") == [3, 4]
        assert state.get_text(store, "telegram", "owner", "owner_chat") == "42"
        assert state.get_time(store, "lifecycle", "zoe", "last_dream") == "2026-01-01T13:00:00Z"
        assert state.get_time(store, "telegram", "owner", "token_refused") is None
        assert store.scrub_due()


def test_the_scrub_marker_triggers_write_the_state_table(store):
    mid = store.insert_memory("owner", "fact", "Owner plays the cello.", "test", 0.5)
    store.scrub_deleted_text()
    assert not store.scrub_due()
    store.delete_memories([mid])
    assert store.scrub_due() and state.get_time(store, "store", "", "scrub_due") is not None
    assert store.conn.execute("SELECT COUNT(*) FROM cursors").fetchone()[0] == 0


def test_typed_accessors_read_back_what_was_written_and_refuse_another_kind(store):
    state.set_json(store, "radio", "owner", "stations", [{"name": "one", "mhz": 88.5}])
    state.set_time(store, "radio", "owner", "tuned_at", "2026-02-03T04:05:06Z")
    state.set_text(store, "radio", "owner", "band", "FM")
    assert state.get_json(store, "radio", "owner", "stations") == [{"name": "one", "mhz": 88.5}]
    assert state.get_time(store, "radio", "owner", "tuned_at") == "2026-02-03T04:05:06Z"
    assert state.get_text(store, "radio", "owner", "band") == "FM" and state.is_set(store, "radio", "owner", "band")
    assert state.get_text(store, "radio", "zoe", "band") is None  # per being
    with pytest.raises(StoreError, match="holds a json value"):
        state.get_text(store, "radio", "owner", "stations")
    with pytest.raises(ValueError):
        state.set_time(store, "radio", "owner", "tuned_at", "yesterday")
    state.delete(store, "radio", "owner", "band")
    assert state.get_text(store, "radio", "owner", "band") is None
    with pytest.raises(sqlite3.IntegrityError):  # the kind column is checked by SQLite too
        store.conn.execute("INSERT INTO state VALUES ('radio', 'owner', 'x', 'blob', '', '')")
