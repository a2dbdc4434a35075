"""Namespaces (seed 003) on a real store: names checked in one place, identity, capture, recall (keyword and vector),
listing, forget, the graph and the dream kept inside one namespace; the union of `include_namespaces`; a store made
before namespaces migrated with nothing lost; export and import keep the namespace."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest
from in_process import twin_cli

from twin.learn.capture import capture
from twin.learn.learning import forget, learn
from twin.learn.transfer import export_memories, import_memories
from twin.lifecycle import forgetting
from twin.lifecycle.cycle import VectorLookup, dream, write_pending_edges
from twin.memory import content_sha256
from twin.namespaces import INCLUDE_MAX, NamespaceError, checked, scope
from twin.store import Store, edges, schema
from twin.text.extractor import Candidate

BEING = "owner"
PROVENANCE = {"source_type": "muse", "captured_from": "test", "confidence": 0.6}


def _capture(store: Store, content: str, namespace: str, now: str = "2026-03-01T10:00:00Z"):
    with store.atomic():
        return capture(store, BEING, Candidate("fact", content, 0.5, ()), "muse", now, PROVENANCE,
                       namespace=namespace)


# -- the names ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["", "a" * 65, "has space", "slash/no", "ünïcode", "semi;colon", "\x1b[31m", None, 7])
def test_a_bad_namespace_name_is_refused_naming_the_field(bad):
    with pytest.raises(NamespaceError) as caught:
        checked(bad)
    assert caught.value.field == "namespace"
    with pytest.raises(NamespaceError) as caught:
        scope("default", ["work", bad])
    assert caught.value.field == "include_namespaces"


def test_scope_is_a_union_in_order_capped_at_sixteen():
    assert checked("a" * 64) == "a" * 64 and checked("work.v2_x-1") == "work.v2_x-1"
    assert scope() == ("default",)
    assert scope("work", ["home", "work", "home", "x"]) == ("work", "home", "x")
    assert len(scope("n0", [f"n{i}" for i in range(1, INCLUDE_MAX + 1)])) == INCLUDE_MAX + 1
    with pytest.raises(NamespaceError, match=r"at most 16$"):  # nothing for the reader to look up
        scope("default", [f"n{i}" for i in range(INCLUDE_MAX + 1)])
    with pytest.raises(NamespaceError, match="list"):
        scope("default", "work")


# -- the migration ------------------------------------------------------------------------------------------------
def test_a_store_of_the_previous_schema_migrates_into_default_losing_nothing(tmp_path, monkeypatch):
    db = tmp_path / "old.db"
    with monkeypatch.context() as old:
        old.setattr(schema, "MIGRATIONS", tuple(m for m in schema.MIGRATIONS if m[0] < "0014_namespaces"))
        with Store(db) as before:
            before.conn.execute(
                "INSERT INTO memories (being_id, kind, content, source, created_at, content_sha256, status)"
                " VALUES (?, 'fact', ?, 'muse', '2026-01-01T00:00:00Z', ?, 'active')",
                (BEING, "Owner keeps bees on the roof.", content_sha256("Owner keeps bees on the roof.")))
            before.conn.execute("INSERT INTO ingest_items (being_id, mode, source, text, created_at)"
                                " VALUES (?, 'text', 'telegram:1', 'a staged note', '2026-01-01T00:00:00Z')", (BEING,))
            rows_before = before.conn.execute("SELECT id, content, content_sha256 FROM memories").fetchall()
    with Store(db) as store:
        assert store.conn.execute("SELECT id, content, content_sha256 FROM memories").fetchall() == rows_before
        assert [m.namespace for m in store.list_memories(BEING, namespaces=None)] == ["default"]
        assert store.conn.execute("SELECT namespace FROM ingest_items").fetchall() == [("default",)]
        # identity is per namespace now: the same sentence goes into another one as a second memory
        other = store.insert_memory(BEING, "fact", "Owner keeps bees on the roof.", "muse", 0.4, namespace="work")
        assert other != rows_before[0][0]
        assert store.find_by_sha(BEING, rows_before[0][2], "work").id == other
        assert store.find_by_sha(BEING, rows_before[0][2]).id == rows_before[0][0]


# -- capture ------------------------------------------------------------------------------------------------------
def test_the_same_sentence_in_two_namespaces_is_two_memories_each_reinforced_alone(store):
    home = _capture(store, "Owner's bicycle is a green Brompton.", "home")
    work = _capture(store, "Owner's bicycle is a green Brompton.", "work")
    assert home.id != work.id and not work.deduplicated
    again = _capture(store, "Owner's bicycle is a green Brompton.", "work")
    assert again.deduplicated and again.id == work.id
    assert (store.get(work.id).hits, store.get(home.id).hits) == (1, 0)


def test_supersession_and_update_in_place_stay_inside_one_namespace(store):
    lisbon = _capture(store, "Owner lives in Lisbon.", "travel").id
    berlin = _capture(store, "Owner lives in Berlin.", "default", now="2026-04-01T10:00:00Z")
    assert berlin.superseded == [] and store.get(lisbon).status == "active"
    porto = _capture(store, "Owner lives in Porto.", "travel", now="2026-05-01T10:00:00Z")
    assert porto.superseded == [lisbon] and store.get(berlin.id).status == "active"
    refined = _capture(store, "Owner lives in Berlin with Lena.", "travel")  # refines default's, not travel's
    assert not refined.updated and store.get(berlin.id).content == "Owner lives in Berlin."


def test_learn_writes_into_its_namespace_and_refuses_a_bad_name(store, activity):
    result = learn(store, activity, BEING, "I keep my climbing shoes in the red locker.", "muse", namespace="gym")
    assert result.created and {store.get(i).namespace for i in result.created} == {"gym"}
    with pytest.raises(NamespaceError):
        learn(store, activity, BEING, "I keep my climbing shoes in the blue locker.", "muse", namespace="no space")
    assert store.namespace_counts(BEING) == {"gym": {"memories": 1, "active": 1}}


# -- recall -------------------------------------------------------------------------------------------------------
def test_recall_finds_only_its_namespaces_by_words_and_by_meaning(store, recall, monkeypatch):
    crowd = [store.insert_memory(BEING, "fact", f"Owner practised the cello piece number {n} with the quartet.",
                                 "muse", 0.4) for n in range(150)]  # more than both top-k's take
    tiny = store.insert_memory(BEING, "fact", "Owner's cello teacher is called Ilse.", "muse", 0.4, namespace="music")
    other = store.insert_memory(BEING, "fact", "Owner's cello was repaired in Cremona.", "muse", 0.4,
                                namespace="repairs")
    recall.embed()
    filtered, searched = [], []
    scope_ids, fts_search = type(store).scope_ids, type(store).fts_search
    monkeypatch.setattr(type(store), "scope_ids", lambda *a: filtered.append(a[2]) or scope_ids(*a))
    monkeypatch.setattr(type(store), "fts_search", lambda *a, **k: searched.append(a) or fts_search(*a, **k))
    found = {r.memory.id for r in recall.recall(BEING, "who teaches my cello?", limit=10, touch=False,
                                                namespace="music")}
    assert found == {tiny}  # not crowded out by 150 of default's, and nothing of another namespace
    assert filtered == [("music",)] and searched  # the filtered index search and the namespace's own FTS search
    both = {r.memory.id for r in recall.recall(BEING, "cello", limit=50, touch=False, namespace="music",
                                               include_namespaces=["repairs"])}
    assert both == {tiny, other}
    plain = {r.memory.id for r in recall.recall(BEING, "cello teacher Ilse", limit=50, touch=False)}
    assert plain and plain <= set(crowd)
    meaning = recall.recall(BEING, "instrument restoration in Italy", limit=5, touch=False, namespace="repairs")
    assert [r.memory.id for r in meaning] == [other]
    with pytest.raises(NamespaceError):
        recall.recall(BEING, "cello", namespace="bad name")


def test_listing_reads_its_namespaces_only(store):
    a = store.insert_memory(BEING, "fact", "Owner plants tulips in March.", "muse", 0.4, namespace="garden")
    b = store.insert_memory(BEING, "fact", "Owner pays rent on the first.", "muse", 0.4)
    assert [m.id for m in store.list_memories(BEING)] == [b]
    assert [m.id for m in store.list_memories(BEING, namespaces=("garden",))] == [a]
    assert {m.id for m in store.list_memories(BEING, namespaces=scope("garden", ["default"]))} == {a, b}


# -- forget -------------------------------------------------------------------------------------------------------
def test_forget_reaches_only_its_namespace_unless_asked(store, activity):
    home = store.insert_memory(BEING, "fact", "Ana Souza waters the plants.", "file:/notes/a.md", 0.4)
    work = store.insert_memory(BEING, "fact", "Ana Souza reviews the budget.", "file:/notes/a.md", 0.4,
                               namespace="work")
    assert [m.id for m in forgetting.plan(store, BEING, source="file:/notes/a.md").memories] == [home]
    assert [m.id for m in forgetting.plan(store, BEING, about="Ana Souza", namespaces=("work",)).memories] == [work]
    assert [m.id for m in forgetting.plan(store, BEING, ids=[work]).memories] == []  # an id of another namespace
    assert forget(store, activity, [work], namespaces=("default",)) == [] and store.get(work) is not None
    everywhere = forgetting.plan(store, BEING, about="Ana Souza", namespaces=None)
    assert {m.id for m in forgetting.carry_out(store, activity, everywhere).memories} == {home, work}
    assert store.get(home) is None and store.get(work) is None


# -- the graph and the dream --------------------------------------------------------------------------------------
def test_edges_and_dream_merges_never_join_two_namespaces(store, recall, embedder):
    one = store.insert_memory(BEING, "fact", "Owner's favourite coffee is a flat white.", "muse", 0.4)
    two = store.insert_memory(BEING, "fact", "The owner's favourite coffee is a flat white.", "muse", 0.4,
                              namespace="cafe")
    near = store.insert_memory(BEING, "fact", "Owner buys coffee beans at the market.", "muse", 0.4,
                               namespace="cafe")
    store.add_edge_markers([one, two, near])
    recall.embed()
    lookup = VectorLookup(store, recall.reader.search, embedder.model_id)
    write_pending_edges(store, lookup)
    pairs = {(s, d) for s, d, _ in edges.edges_around(store, [one, two, near])}
    assert pairs and all({s, d} <= {two, near} or {s, d} == {one} for s, d in pairs)
    with store.atomic():
        assert edges.insert_edges(store, [(one, two, "co_occurs", 0.9, "2026-01-01T00:00:00Z")]) == 0
    assert dream(store, BEING, lookup, datetime(2026, 6, 1, tzinfo=UTC))["merged"] == 0  # cosine ~0.99, apart
    assert store.get(one) is not None and store.get(two) is not None


def test_a_dream_given_a_namespace_merges_only_there(store, recall, embedder):
    pairs = {name: [store.insert_memory(BEING, "fact", text, "muse", 0.4, namespace=name) for text in (
        "Owner's favourite coffee is a flat white.", "The owner's favourite coffee is a flat white.")]
        for name in ("default", "cafe")}
    recall.embed()
    lookup = VectorLookup(store, recall.reader.search, embedder.model_id)
    done = dream(store, BEING, lookup, datetime(2026, 6, 1, tzinfo=UTC), namespace="cafe")
    assert done["merged"] == 1 and done["walked"] <= 2
    assert sum(store.get(i) is not None for i in pairs["cafe"]) == 1
    assert all(store.get(i) is not None for i in pairs["default"])
    assert dream(store, BEING, lookup, datetime(2026, 6, 1, tzinfo=UTC))["merged"] == 1  # every namespace


# -- export and import --------------------------------------------------------------------------------------------
def test_export_keeps_the_namespace_and_an_old_export_imports_as_default(store, tmp_path, activity):
    store.insert_memory(BEING, "fact", "Owner sings bass in the choir.", "muse", 0.4, namespace="choir")
    store.insert_memory(BEING, "fact", "Owner sings in the shower.", "muse", 0.4)
    out = io.StringIO()
    assert export_memories(store, BEING, out) == 2
    lines = out.getvalue().splitlines()
    assert [json.loads(x)["namespace"] for x in lines] == ["choir", "default"]
    with Store(tmp_path / "other.db") as other:
        old_line = json.dumps({"content": "Owner sings alto on Sundays.", "kind": "fact"})
        bad_line = json.dumps({"content": "Owner sings tenor at weddings.", "namespace": "no way"})
        report = import_memories(other, None, BEING, [*lines, old_line, bad_line])
        assert report["created"] == 3 and report["skipped"] == 1 and report["problems"][0].startswith("line 4: ")
        assert {m.content: m.namespace for m in other.list_memories(BEING, namespaces=None)} == {
            "Owner sings bass in the choir.": "choir", "Owner sings in the shower.": "default",
            "Owner sings alto on Sundays.": "default"}
        assert import_memories(other, None, BEING, [old_line], namespace="choir")["created"] == 1  # default given


def test_the_cli_takes_namespace_flags_and_keeps_its_default_output(twin_paths, monkeypatch):
    monkeypatch.setenv("TWIN_EMBED_BACKEND", "none")
    assert twin_cli("learn", "I water the fern on Fridays.", "--namespace", "plants").returncode == 0
    assert twin_cli("learn", "I water the cactus once a month.").returncode == 0
    shown = twin_cli("memories").stdout
    assert "cactus" in shown and "fern" not in shown
    assert "fern" in twin_cli("memories", "--namespace", "plants").stdout
    assert twin_cli("recall", "fern").stdout == "nothing found\n"
    assert "fern" in twin_cli("recall", "fern", "--include-namespace", "plants").stdout
    too_many = [a for n in range(INCLUDE_MAX + 1) for a in ("--include-namespace", f"n{n}")]
    assert twin_cli("recall", "water", *too_many).returncode == 2
    assert twin_cli("memories", "--namespace", "bad/name").returncode == 2
    assert "plants" in twin_cli("stats").stdout
