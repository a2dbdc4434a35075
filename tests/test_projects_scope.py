"""Capture, supersession and the dream cycle stay inside one scope (issue 19): a project is a namespace with
members (`twin.namespaces.project_namespace`), and a person's own memories another (`person_namespace`), so the
rules that keep one namespace apart (identity, near-duplicate updates, contradiction supersession, edges, dream
merges) keep a project's facts and the owner's private memories apart, both ways. Through the operations every
interface calls, on a real store (and the real model for the graph and the dream)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from twin.lifecycle.cycle import VectorLookup, dream, write_pending_edges
from twin.namespaces import NamespaceError, person_namespace, project_namespace, stored_scope
from twin.operations import Context, capture_memory, create_project
from twin.operations.people import add_person
from twin.operations.scopes import CALLER, Caller, reach
from twin.settings import load_settings
from twin.store import edges

BEING = "owner"


@pytest.fixture
def ctx(twin_paths):
    context = Context.open(load_settings())
    yield context
    context.close()


def as_person(ctx: Context, name: str) -> Caller:
    added = add_person(ctx, name)
    return Caller(added.id, added.name)


def test_a_project_fact_never_supersedes_the_owners_private_one_nor_the_reverse(ctx):
    flat = create_project(ctx, "flat").id
    private = capture_memory(ctx, "Owner lives in Lisbon.").id
    shared = capture_memory(ctx, "Owner lives in Berlin.", project=flat)
    assert shared.superseded is None and ctx.store.get(private).status == "active"
    again = capture_memory(ctx, "Owner lives in Porto.")  # supersedes the private one only
    assert again.superseded == [private] and ctx.store.get(shared.id).status == "active"
    same = capture_memory(ctx, "Owner lives in Porto.", project=flat)
    assert same.id != again.id and not same.deduplicated  # identity is per scope
    refined = capture_memory(ctx, "Owner lives in Berlin with Lena.")  # refines the project's: not from here
    assert not refined.updated and ctx.store.get(shared.id).content == "Owner lives in Berlin."
    assert ctx.store.get(refined.id).namespace == "default"


def test_a_persons_own_memories_are_a_scope_apart_from_the_owners(ctx):
    alice = as_person(ctx, "alice")
    mine = capture_memory(ctx, "Owner's bicycle is a green Brompton.").id
    token = CALLER.set(alice)
    try:
        hers = capture_memory(ctx, "Owner's bicycle is a green Brompton.")
        assert hers.id != mine and not hers.deduplicated
        assert ctx.store.get(hers.id).namespace == person_namespace(alice.person_id, "default")
        assert reach(ctx.store, "work").reads == (person_namespace(alice.person_id, "work"),)
    finally:
        CALLER.reset(token)
    assert ctx.store.get(mine).hits == 0  # her capture reinforced nothing of the owner's


@pytest.mark.parametrize("name", ["project:01ARZ3NDEKTSV4RRFFQ69G5FAV", "person:abc:default", "project:x"])
def test_no_caller_can_name_a_stored_scope(ctx, name):
    with pytest.raises(NamespaceError):
        reach(ctx.store, name)
    with pytest.raises(NamespaceError):
        reach(ctx.store, "default", [name])
    if name != "project:x":
        assert stored_scope(name) == (name,)  # the layers below take it, from `reach` alone


def test_edges_and_dream_merges_never_join_a_project_and_the_owners_memories(store, recall, embedder):
    shared = project_namespace("01ARZ3NDEKTSV4RRFFQ69G5FAV")
    own = store.insert_memory(BEING, "fact", "Owner's favourite coffee is a flat white.", "muse", 0.4)
    twin = store.insert_memory(BEING, "fact", "The owner's favourite coffee is a flat white.", "muse", 0.4,
                               namespace=shared)
    near = store.insert_memory(BEING, "fact", "Owner buys coffee beans at the market.", "muse", 0.4,
                               namespace=shared)
    store.add_edge_markers([own, twin, near])
    recall.embed()
    lookup = VectorLookup(store, recall.reader.search, embedder.model_id)
    write_pending_edges(store, lookup)
    pairs = {(s, d) for s, d, _ in edges.edges_around(store, [own, twin, near])}
    assert pairs and all({s, d} <= {twin, near} for s, d in pairs)
    assert dream(store, BEING, lookup, datetime(2026, 6, 1, tzinfo=UTC))["merged"] == 0  # cosine ~0.99, apart
    assert store.get(own) is not None and store.get(twin) is not None
    hits = recall.recall(BEING, "favourite coffee flat white", namespace=shared)
    assert {h.memory.id for h in hits} <= {twin, near} and twin in {h.memory.id for h in hits}


def test_deleting_a_project_erases_what_waits_to_be_learned_into_it(ctx):
    from twin import ingest

    flat = create_project(ctx, "flat").id
    capture_memory(ctx, "The flat's boiler is serviced every March by Calor Heating.", project=flat)
    waiting = ingest.stage(ctx.store, [ingest.Ingest(BEING, "api", "The flat's meter number is 77310.",
                                                     namespace=project_namespace(flat))])
    kept = ingest.stage(ctx.store, [ingest.Ingest(BEING, "api", "Owner's own note stays.")])
    from twin.operations import delete_project

    removed = delete_project(ctx, flat).removed
    assert removed["memories"] == 1 and removed["staged_items"] == 1
    assert ingest.fetch(ctx.store, waiting) == [] and len(ingest.fetch(ctx.store, kept)) == 1
    assert b"77310" not in ctx.settings.db_path.read_bytes()


def test_reflection_reads_the_owners_own_memories_alone(ctx):
    from twin.reflection.second_pass import fresh_memories

    alice = as_person(ctx, "alice")
    flat = create_project(ctx, "flat").id
    own = capture_memory(ctx, "Owner's sister Marta lives in Porto.").id
    work = capture_memory(ctx, "Owner's standup is at 9:15 on weekdays.", namespace="work").id
    capture_memory(ctx, "The flat's boiler is serviced every March.", project=flat)
    token = CALLER.set(alice)
    try:
        capture_memory(ctx, "Alice's pottery class is on Tuesdays.")
    finally:
        CALLER.reset(token)
    assert [m.id for m in fresh_memories(ctx.store, BEING)] == [own, work]


def test_the_index_filter_of_a_scope_follows_its_memories(store, recall, embedder):
    """`Recall` keeps a scope's ids for the index filter between recalls (bench/project_latency.py); a memory
    added to the scope, or forgotten, is seen by the next recall all the same."""
    shared = project_namespace("01ARZ3NDEKTSV4RRFFQ69G5FAV")
    for n in range(40):
        store.insert_memory(BEING, "fact", f"Owner's colleague number {n} works on the billing service.", "muse", 0.4)
    store.insert_memory(BEING, "fact", "The flat's recycling goes out on Thursday evenings.", "muse", 0.4,
                        namespace=shared)
    recall.embed()
    question = "preferred hot beverage"  # no word of it in the memory: only its vector can find it
    first = recall.recall(BEING, question, namespace=shared, min_relevance=0)
    assert {h.memory.namespace for h in first} == {shared}
    stamp = store.scope_stamp(BEING, (shared,))
    coffee = store.insert_memory(BEING, "fact", "Owner drinks a flat white every morning.", "muse", 0.4,
                                 namespace=shared)
    assert store.scope_stamp(BEING, (shared,)) != stamp
    recall.embed()
    assert coffee in {h.memory.id for h in recall.recall(BEING, question, namespace=shared, min_relevance=0)}
    with store.atomic():
        store.remove_memories([coffee])
    assert store.scope_stamp(BEING, (shared,)) == stamp
    assert coffee not in {h.memory.id for h in recall.recall(BEING, question, namespace=shared, min_relevance=0)}
