"""The store's own contract, on a real SQLite file and nothing else (no Redis): `atomic` nests as savepoints and a
failed COMMIT leaves nothing behind; the memory state transitions; rows as named fields."""

import sqlite3

import pytest

from twin.store import Store


@pytest.fixture
def plain_store(tmp_path):
    with Store(tmp_path / "twin.db").open() as store:
        yield store


def _add(store: Store, content: str, being: str = "owner") -> int:
    return store.insert_memory(being, "fact", content, "test", 0.5)


def test_atomic_commits_and_an_error_rolls_everything_back(plain_store):
    with plain_store.atomic():
        kept = _add(plain_store, "Owner keeps bees.")
    with pytest.raises(RuntimeError), plain_store.atomic():
        _add(plain_store, "Owner sails on Sundays.")
        raise RuntimeError("boom")
    assert not plain_store.conn.in_transaction
    assert [m.content for m in plain_store.list_memories("owner")] == ["Owner keeps bees."]
    assert plain_store.get(kept) is not None


def test_a_nested_atomic_is_a_savepoint_the_outer_block_decides(plain_store):
    with plain_store.atomic():
        outer = _add(plain_store, "Owner lives in Porto.")
        with pytest.raises(ValueError), plain_store.atomic():
            _add(plain_store, "Owner owns a red kayak.")
            raise ValueError("inner fails")
        with plain_store.atomic():
            inner = _add(plain_store, "Owner plays the cello.")
    contents = {m.id: m.content for m in plain_store.list_memories("owner")}
    assert contents == {outer: "Owner lives in Porto.", inner: "Owner plays the cello."}

    with pytest.raises(KeyError), plain_store.atomic():  # the outer block fails: the released savepoint goes too
        with plain_store.atomic():
            _add(plain_store, "Owner collects stamps.")
        raise KeyError("outer fails")
    assert len(plain_store.list_memories("owner")) == 2


def test_a_failed_commit_rolls_back_and_leaves_no_open_transaction(plain_store):
    """A constraint checked only at COMMIT (a deferred foreign key) makes COMMIT itself fail: the block's writes are
    gone, the error reaches the caller, and the next `atomic` starts clean."""
    with pytest.raises(sqlite3.IntegrityError), plain_store.atomic() as conn:
        conn.execute("PRAGMA defer_foreign_keys = ON")
        _add(plain_store, "Owner drinks green tea.")
        conn.execute("INSERT INTO memory_embeddings (memory_id, model_id, dim, vector, created_at)"
                     " VALUES (987654, 'm', 1, x'00000000', '2024-01-01T00:00:00Z')")
    assert not plain_store.conn.in_transaction
    assert plain_store.list_memories("owner") == []
    with plain_store.atomic():
        _add(plain_store, "Owner drinks black coffee.")
    assert [m.content for m in plain_store.list_memories("owner")] == ["Owner drinks black coffee."]


def test_transaction_is_the_same_as_atomic(plain_store):
    assert Store.transaction is Store.atomic
