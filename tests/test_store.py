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


def test_supersede_and_revive_move_a_memory_along_its_chain(plain_store):
    old = _add(plain_store, "Owner lives in Lisbon.")
    new = _add(plain_store, "Owner lives in Berlin.")
    assert plain_store.successor(old) == ("active", None)
    plain_store.supersede(old, new, "same home city, new value: Berlin replaces Lisbon")
    link = plain_store.successor(old)
    assert (link.status, link.superseded_by) == ("superseded", new)
    assert plain_store.get(old).supersede_reason.startswith("same home city")
    assert [m.id for m in plain_store.list_memories("owner")] == [new]
    plain_store.revive(old)
    back = plain_store.get(old)
    assert (back.status, back.superseded_by, back.supersede_reason) == ("active", None, None)
    assert plain_store.successor(987654) is None


def test_update_in_place_keeps_the_id_and_drops_the_vector(plain_store):
    import numpy as np
    mid = _add(plain_store, "Owner lives in Berlin.")
    plain_store.save_embeddings([mid], np.ones((1, 4), dtype=np.float32), "m")
    plain_store.update_in_place(mid, "Owner lives in Berlin with Lena.", "sensitive", {"via": "test"}, 0.9,
                                "2030-01-02T03:04:05Z")
    m = plain_store.get(mid)
    assert (m.content, m.sensitivity, m.provenance, m.importance, m.hits) == (
        "Owner lives in Berlin with Lena.", "sensitive", {"via": "test"}, 0.9, 1)
    assert (m.last_accessed, m.updated_at, m.tier) == ("2030-01-02T03:04:05Z", "2030-01-02T03:04:05Z", "warm")
    assert plain_store.find_by_sha("owner", m.content_sha256).id == mid
    assert plain_store.stored_vectors([mid], "m") == {}
    plain_store.update_in_place(mid, "Owner lives in Berlin with Lena and Ida.", "private", {}, 0.1,
                                "2030-01-03T00:00:00Z")
    assert plain_store.get(mid).importance == 0.9  # the higher importance stays


def test_sensitivities_and_removal_report_only_what_exists(plain_store):
    a, b = _add(plain_store, "Owner likes figs."), _add(plain_store, "Owner's PIN is 4821.")
    plain_store.set_sensitivity(b, "sensitive")
    assert sorted(plain_store.sensitivities([a, b, 987654])) == ["private", "sensitive"]
    with plain_store.atomic():
        assert sorted(plain_store.remove_memories([b, 987654, b])) == [b]
    assert plain_store.get(b) is None and plain_store.scrub_due()


def test_ranking_fields_are_named_and_see_the_successor_time(plain_store):
    old = plain_store.insert_memory("owner", "fact", "Owner lives in Lisbon.", "test", 0.4,
                                    created_at="2024-01-01T00:00:00Z")
    new = plain_store.insert_memory("owner", "fact", "Owner lives in Berlin.", "test", 0.6,
                                    created_at="2024-06-01T00:00:00Z")
    plain_store.supersede(old, new, "moved")
    fields = plain_store.ranking_fields([old, new, 987654])
    assert set(fields) == {old, new}
    was = fields[old]
    assert (was.being_id, was.kind, was.status, was.importance) == ("owner", "fact", "superseded", 0.4)
    assert (was.created_at, was.sensitivity, was.tier, was.superseded_at) == (
        "2024-01-01T00:00:00Z", "private", "warm", "2024-06-01T00:00:00Z")
    assert fields[new].superseded_at is None and fields[new][0] == "owner"  # still indexable by position


def test_an_exports_id_is_kept_only_where_this_store_never_gave_it(plain_store):
    with plain_store.atomic():
        ids = [plain_store.insert_memory("owner", "fact", f"Owner owns {n} kayaks.", "test", 0.5) for n in (2, 3, 4)]
        plain_store.conn.execute("DELETE FROM memories WHERE id = ?", (ids[-1],))  # forgotten: its id stays given
    assert not plain_store.fresh_memory_id(ids[-1]) and not plain_store.fresh_memory_id(ids[0])
    assert not any(plain_store.fresh_memory_id(bad) for bad in (True, 0, -4, 2**63, "9", 9.0))
    assert plain_store.fresh_memory_id(ids[-1] + 40)
    with plain_store.atomic():
        kept = plain_store.insert_memory("owner", "fact", "Owner owns a canoe.", "test", 0.5, memory_id=ids[-1] + 40)
    assert kept == ids[-1] + 40 and not plain_store.fresh_memory_id(ids[-1] + 40)
