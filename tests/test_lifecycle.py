"""Seed 003's memory lifecycle: graph edges and neighbours, decay, the dream cycle, stats (real SQLite, the real
model and index, real workers; fixed clocks)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from conftest import diary_lines, run_worker
from in_process import twin_cli

from twin.daemon import supervisor as supervisor_module
from twin.learn.learning import forget
from twin.lifecycle.cycle import (
    CURSOR,
    VectorLookup,
    decay,
    dream,
    lifespan_days,
    neighbors,
    stats,
    write_pending_edges,
)
from twin.memory import format_time
from twin.store import Store, state
from twin.text.capture_rules import token_jaccard
from twin.vectors.index import VectorIndex
from twin.vectors.sidecar import IndexWriter
from twin.workers.bus import Bus

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
BEING = "owner"


def _mem(store: Store, content: str, being: str = BEING, hits: int = 0, age_days: float = 30,
         idle_days: float | None = None, status: str = "active", sensitivity: str = "private") -> int:
    return store.insert_memory(being, "fact", content, "muse", 0.4, created_at=format_time(NOW - timedelta(age_days)),
                               last_accessed=None if idle_days is None else format_time(NOW - timedelta(idle_days)),
                               hits=hits, status=status, sensitivity=sensitivity)


def _edge(store: Store, src: int, dst: int, strength: float, kind: str = "co_occurs") -> None:
    store.conn.execute("INSERT INTO memory_edges (src, dst, kind, strength, created_at) VALUES (?, ?, ?, ?, ?)",
                       (src, dst, kind, strength, format_time(NOW)))


def _edges(store: Store) -> dict[tuple[int, int, str], float]:
    return {(s, d, k): w for s, d, k, w in store.conn.execute("SELECT src, dst, kind, strength FROM memory_edges")}


def _embed(store: Store, embedder, ids: list[int]) -> np.ndarray:
    texts = [store.get(i).content for i in ids]
    vectors = embedder.embed(texts)
    store.save_embeddings(ids, vectors, embedder.model_id)
    return vectors


@pytest.fixture
def writer(store, activity, twin_env, embedder) -> IndexWriter:
    """The real index writer the embedding worker uses, over the isolated store."""
    w = IndexWriter(store, VectorIndex.for_settings(twin_env, embedder.model_id, embedder.dim), activity)
    w.open()
    return w


def _lookup(store: Store, writer: IndexWriter) -> VectorLookup:
    writer.catch_up()
    return VectorLookup(store, writer.index.search, writer.index.model_id)


def twin(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`twin ARGS` in this process (tests/in_process.py); `check`: exit 0 is asserted."""
    proc = twin_cli(*args)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


# -- graph ------------------------------------------------------------------------------------------------------
def test_edges_for_marked_memories_and_the_marker_waits_for_a_vector(store, embedder, writer):
    cello = [_mem(store, t) for t in ("Owner plays the cello in a string quartet.",
                                      "Owner practises the cello every evening.",
                                      "Owner's string quartet rehearses on Thursdays.",
                                      "Owner likes hiking in the Alps.")]
    other_being = _mem(store, "Owner plays the cello in a string quartet on Sundays.", being="someone")
    superseded = _mem(store, "Owner plays the cello in an orchestra.", status="superseded")
    new = _mem(store, "Owner bought a new bow for the cello.")
    late = _mem(store, "Owner restrung the cello for the quartet.")
    store.add_edge_markers([new, late])
    vectors = dict(zip([*cello, other_being, superseded, new],
                       _embed(store, embedder, [*cello, other_being, superseded, new]), strict=True))

    assert write_pending_edges(store, _lookup(store, writer)) == 1
    edges = _edges(store)
    assert {d for s, d, _ in edges} == set(cello[:3]) and {s for s, _, _ in edges} == {new}
    for (_, dst, kind), strength in edges.items():  # strength = cosine, 0..1
        assert kind == "co_occurs" and strength == pytest.approx(float(vectors[new] @ vectors[dst]), abs=1e-3)
    assert [r[0] for r in store.conn.execute("SELECT memory_id FROM edge_markers")] == [late]  # no vector yet

    _embed(store, embedder, [late])
    assert write_pending_edges(store, _lookup(store, writer)) == 1
    assert len([1 for s, _, _ in _edges(store) if s == late]) == 3
    assert store.conn.execute("SELECT COUNT(*) FROM edge_markers").fetchone()[0] == 0
    assert write_pending_edges(store, _lookup(store, writer)) == 0


def test_the_embedding_worker_writes_edges_after_the_flush(store, redis):
    ids = [_mem(store, t) for t in ("Owner grows tomatoes on the balcony.", "Owner waters the balcony plants daily.",
                                    "Owner's basil grows next to the tomatoes.", "Owner composts kitchen scraps.")]
    store.add_edge_markers(ids)
    Bus(redis).notify_embed()
    run_worker("embed")
    assert store.conn.execute("SELECT COUNT(*) FROM edge_markers").fetchone()[0] == 0
    assert {s for s, _, _ in _edges(store)} == set(ids) and len(_edges(store)) == 4 * 3


def test_neighbors_by_depth_with_path_product_scores(store):
    a, b, c, d, e, x, f, g, h = (_mem(store, f"Memory {n} of the graph.") for n in "abcdexfgh")
    store.conn.execute("UPDATE memories SET status = 'superseded' WHERE id = ?", (f,))
    store.conn.execute("UPDATE memories SET sensitivity = 'sensitive' WHERE id = ?", (h,))
    for src, dst, w in [(a, b, 0.9), (c, b, 0.8), (c, d, 0.5), (a, e, 0.3), (e, c, 0.95), (a, x, 0.1), (b, x, 0.9),
                        (a, f, 0.99), (f, g, 0.99), (b, h, 0.5)]:
        _edge(store, src, dst, w)

    def scores(depth: int, **kw) -> dict[int, float]:
        return {m.id: round(s, 4) for m, s in neighbors(store, a, depth, **kw)}

    assert scores(1) == {b: 0.9, e: 0.3, x: 0.1}  # the superseded f is neither shown nor walked through (g)
    assert scores(2) == {b: 0.9, x: 0.81, c: 0.72, e: 0.3}  # x: the best path (via b), c: via b, not via e
    assert scores(2, include_sensitive=True)[h] == 0.45
    assert scores(3) == {b: 0.9, x: 0.81, c: 0.72, e: 0.684, d: 0.36}  # e: a-b-c-e beats the direct 0.3
    assert [m.id for m, _ in neighbors(store, a, 3)] == [b, x, c, e, d]  # best first
    assert neighbors(store, 999_999, 2) == []
    for depth in (0, 4):
        with pytest.raises(ValueError, match="depth"):
            neighbors(store, a, depth)


def test_neighbors_say_degraded_when_the_graph_cannot_be_read(store, twin_env):
    a, b = _mem(store, "Memory a of the graph."), _mem(store, "Memory b of the graph.")
    _edge(store, a, b, 0.7)
    assert json.loads(twin("neighbors", str(a), "--json").stdout)[0]["id"] == b
    store.conn.execute("ALTER TABLE memory_edges RENAME TO memory_edges_lost")
    proc = twin("neighbors", str(a), "--json")
    assert json.loads(proc.stdout) == [] and proc.stderr.startswith("degraded: the graph could not be read")


def test_forgetting_a_memory_removes_its_edges(store, activity, twin_env):
    assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    with Store(twin_env.db_path) as other:  # every connection the store opens
        assert other.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    a, b, c = (_mem(store, f"Memory {n} with edges.") for n in "abc")
    _edge(store, a, b, 0.5)
    _edge(store, c, b, 0.5, kind="co_inferred")
    _edge(store, a, c, 0.5)
    store.add_edge_markers([b])
    assert forget(store, activity, [b]) == [b]
    assert set(_edges(store)) == {(a, c, "co_occurs")}
    assert store.conn.execute("SELECT COUNT(*) FROM edge_markers").fetchone()[0] == 0


# -- decay ------------------------------------------------------------------------------------------------------
def test_decay_demotes_by_the_lifespan_formula(store, activity):
    assert [lifespan_days(h) for h in (0, 1, 3, 7)] == [0, 7, 14, 21]
    # the capture counts as one use: 0 hits live 7 days, 3 hits 7·log2(5) ≈ 16.3 days
    fresh = _mem(store, "Created a minute ago, never recalled.", age_days=1 / 1440)
    once_6 = _mem(store, "Learned six days ago, never recalled.", age_days=6)
    once_8 = _mem(store, "Learned eight days ago, never recalled.", age_days=8)
    idle_15 = _mem(store, "Recalled three times, idle 15 days.", hits=3, idle_days=15)
    idle_17 = _mem(store, "Recalled three times, idle 17 days.", hits=3, idle_days=17)
    old_but_seen = _mem(store, "Created 20 days ago, recalled yesterday.", hits=3, age_days=20, idle_days=1)
    created_17 = _mem(store, "Recalled three times, never touched since creation.", hits=3, age_days=17)
    superseded = _mem(store, "Superseded long ago.", age_days=400, status="superseded")
    elsewhere = _mem(store, "Another being's old memory.", being="someone", age_days=400)

    assert decay(store, BEING, NOW) == {"demoted": 3}
    ids = [fresh, once_6, once_8, idle_15, idle_17, old_but_seen, created_17, superseded, elsewhere]
    tiers = {i: m.tier for i, m in store.get_many(ids).items()}
    assert tiers == {fresh: "warm", once_6: "warm", once_8: "cold", idle_15: "warm", idle_17: "cold",
                     old_but_seen: "warm", created_17: "cold", superseded: "warm", elsewhere: "warm"}
    assert state.get_time(store, CURSOR, BEING, "last_decay") == "2026-06-01T12:00:00Z"
    assert diary_lines(activity, "decayed") == ["Decay: 3 memory(ies) idle past their lifespan moved to cold "
                                                "(4 stay warm)."]
    assert decay(store, BEING, NOW) == {"demoted": 0}

    # a search hit re-promotes (recall's Store.touch): idle_15 was warm already, 999999 does not exist
    def cold() -> int:
        return store.conn.execute("SELECT COUNT(*) FROM memories WHERE tier = 'cold'").fetchone()[0]

    before = cold()
    store.touch([once_8, idle_15, 999_999], format_time(NOW))
    assert before - cold() == 1
    store.touch([], format_time(NOW))  # nothing to touch: nothing changes
    assert store.get(once_8).tier == "warm" and cold() == before - 1


# -- dream ------------------------------------------------------------------------------------------------------
def test_dream_merges_a_near_identical_pair(store, activity, embedder, writer):
    older = _mem(store, "Owner's favourite coffee is a flat white.", hits=1, age_days=40, idle_days=2)
    newer = _mem(store, "The owner's favourite coffee is a flat white.", hits=3, age_days=10, idle_days=5)
    x, y, z = (_mem(store, t) for t in ("Owner buys beans at the market.", "Owner owns a moka pot.",
                                        "Owner drinks tea in the afternoon."))
    replaced = _mem(store, "Owner's favourite coffee was an espresso.", status="superseded")
    store.conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (older, replaced))
    _embed(store, embedder, [older, newer, x, y, z])
    for src, dst, w in [(older, x, 0.6), (y, older, 0.7), (newer, x, 0.4), (older, newer, 0.98), (z, y, 0.5)]:
        _edge(store, src, dst, w)

    result = dream(store, BEING, _lookup(store, writer), NOW)
    assert result["merged"] == 1 and result["walked"] == 5 and result["edgesPromoted"] == 0
    assert set(result) == {"walked", "merged", "edgesPromoted", "durationMs"}
    kept = store.get(newer)  # more hits wins over older
    assert store.get(older) is None and kept.hits == 4 and kept.last_accessed == format_time(NOW - timedelta(2))
    assert _edges(store) == {(newer, x, "co_occurs"): 0.6, (y, newer, "co_occurs"): 0.7,
                             (z, y, "co_occurs"): 0.5}  # redirected, the stronger kept, no self-loop
    assert store.get(replaced).superseded_by == newer
    assert store.conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'flat'").fetchall() == [(newer,)]
    assert store.live_embedding_ids([older, newer]) == {newer}
    assert [m for _, m in store.tombstones()] == [older]  # the index writer scrubs it at its next checkpoint
    assert state.get_time(store, CURSOR, BEING, "last_dream") == "2026-06-01T12:00:00Z"
    line = diary_lines(activity, "dreamed")[-1]
    assert line.startswith("Dream cycle: walked 5 memories, merged 1, promoted 0 edges in ") and line.endswith(" ms.")


def test_dream_canonical_is_the_older_on_equal_hits(store, embedder, writer):
    newer = _mem(store, "The owner's favourite coffee is a flat white.", hits=2, age_days=10)
    older = _mem(store, "Owner's favourite coffee is a flat white.", hits=2, age_days=40)
    _embed(store, embedder, [newer, older])
    assert dream(store, BEING, _lookup(store, writer), NOW)["merged"] == 1
    assert store.get(newer) is None and store.get(older).hits == 4


def test_dream_never_merges_a_contradiction_even_at_cosine_one(store, embedder, writer):
    lisbon = _mem(store, "Owner lives in Lisbon.", hits=2)
    berlin = _mem(store, "Owner lives in Berlin.")
    vector = embedder.embed(["Owner lives in Lisbon."])
    store.save_embeddings([lisbon, berlin], np.vstack([vector, vector]), embedder.model_id)  # cosine 1.0
    lookup = _lookup(store, writer)
    assert lookup.nearest(lisbon, vector[0], BEING)[0][1] >= 0.97  # the cosine gate would pass
    assert token_jaccard("Owner lives in Lisbon.", "Owner lives in Berlin.") < 0.5  # the Jaccard gate does not
    assert dream(store, BEING, lookup, NOW)["merged"] == 0
    assert store.get(lisbon) is not None and store.get(berlin) is not None


SAME_FACT = (  # only function words, intensifiers or inflections differ: one memory
    ("Owner really likes hiking in the hills on weekends.", "Owner likes hiking in the hills on weekends."),
    ("Owner's partner is allergic to shellfish and peanuts.", "The owner's partner is allergic to the shellfish "
                                                              "and peanuts."),
    ("Owner keeps the spare key under the blue flower pot.", "Owner keeps a spare key under a blue flower pot."),
    ("Owner absolutely hates waiting in long queues at airports.", "Owner hates waiting in long queues at airport."),
    ("Owner walked the dog around the lake every morning.", "Owner walks the dog around the lake every morning."),
)
DIFFERENT_FACTS = (  # one content word differs (a person, a place, an object, a number, a name): two memories
    ("Owner promised to send the signed rental contract for the flat to the landlord by friday.",
     "Owner promised to send the signed rental contract for the flat to the accountant by friday."),
    ("Owner keeps the spare key of the cellar under the blue flower pot in the kitchen.",
     "Owner keeps the spare key of the cellar under the blue flower pot in the garage."),
    ("Owner keeps the spare key of the cellar under the blue flower pot by the door.",
     "Owner keeps the spare bike lock of the cellar under the blue flower pot by the door."),
    ("Owner must bring two printed copies of the signed lease to the meeting.",
     "Owner must bring three printed copies of the signed lease to the meeting."),
    ("Owner must bring 4 printed copies of the signed lease to the meeting at the bank.",
     "Owner must bring 5 printed copies of the signed lease to the meeting at the bank."),
    ("Owner is taking the night train to Vienna with Jonas on the first weekend of May.",
     "Owner is taking the night train to Vienna with Petra on the first weekend of May."),
)


@pytest.mark.parametrize(("a", "b"), SAME_FACT + DIFFERENT_FACTS)
def test_dream_merges_only_when_no_content_word_differs(store, embedder, writer, a, b):
    """At cosine 1.0 (both given one vector) and token Jaccard ≥ 0.5 the pair still merges only when the words
    that differ carry no content; otherwise both memories stay, word for word."""
    from twin.lifecycle.cycle import MERGE_JACCARD

    assert token_jaccard(a, b) >= MERGE_JACCARD  # the seed's word gate alone would merge every pair here
    first, second = _mem(store, a, hits=1), _mem(store, b)
    vector = embedder.embed([a])
    store.save_embeddings([first, second], np.vstack([vector, vector]), embedder.model_id)
    merged = dream(store, BEING, _lookup(store, writer), NOW)["merged"]
    if (a, b) in SAME_FACT:
        assert merged == 1 and store.get(first).content == a and store.get(second) is None
    else:
        assert merged == 0 and store.get(first).content == a and store.get(second).content == b


def test_dream_promotes_an_edge_between_memories_with_three_common_neighbours(store):
    a, b, c1, c2, c3, p, q, d1, d2, d3 = (_mem(store, f"Memory {n} of the promotion graph.") for n in
                                          ("a", "b", "c1", "c2", "c3", "p", "q", "d1", "d2", "d3"))
    for src, dst, w in [(a, c1, 0.8), (b, c1, 0.5), (c2, a, 0.9), (c2, b, 0.9), (a, c3, 0.6), (c3, b, 0.6),
                        (p, d1, 0.5), (p, d2, 0.5), (p, d3, 0.5), (q, d1, 0.5), (q, d2, 0.5), (q, d3, 0.5),
                        (q, p, 0.2)]:  # p and q also share three, but are linked already
        _edge(store, src, dst, w)
    result = dream(store, BEING, None, NOW)  # no vectors: nothing to merge, only edge promotion
    assert result["merged"] == 0 and result["edgesPromoted"] == 1  # c1, c2, c3 share only a and b
    inferred = {(s, d): w for (s, d, k), w in _edges(store).items() if k == "co_inferred"}
    assert inferred == {(a, b): pytest.approx((0.8 * 0.5 + 0.9 * 0.9 + 0.6 * 0.6) / 3)}  # mean of path products
    assert dream(store, BEING, None, NOW)["edgesPromoted"] == 0  # a direct edge exists now


# -- loops, jobs and the CLI -------------------------------------------------------------------------------------
def test_lifecycle_loop_waits_for_the_next_due_pass(store, twin_env, monkeypatch):
    monkeypatch.setattr(supervisor_module, "LIFECYCLE_FIRST_AFTER_S", 0.01)
    sup = supervisor_module.Supervisor(twin_env)
    sup.store = store
    _mem(store, "Someone else's memory.", being="someone")
    pushed: list[str] = []

    async def run(name: str, every_s: float) -> None:
        task = asyncio.create_task(sup._lifecycle_ticks(name, every_s, pushed.append))
        await asyncio.sleep(0.3)
        sup.stop.set()
        await task
        sup.stop = asyncio.Event()  # a fresh one for the next event loop

    asyncio.run(run("decay", 0.2))  # never ran: due at once (after the boot delay), then every 0.2 s
    assert pushed[:2] == [BEING, "someone"] and 2 <= len(pushed) <= 4
    pushed.clear()
    state.set_time(store, CURSOR, BEING, "last_dream", format_time(datetime.now(UTC)))
    asyncio.run(run("dream", 3600))  # ran just now: the next pass is an hour away
    assert pushed == []


def test_jobs_and_cli_end_to_end(store, redis, activity):
    flat = [_mem(store, "Owner's favourite coffee is a flat white.", hits=1),
            _mem(store, "The owner's favourite coffee is a flat white.")]
    others = [_mem(store, t, age_days=400) for t in ("Owner buys coffee beans at the market.",
                                                     "Owner owns a moka pot for coffee.",
                                                     "Owner drinks green tea in the afternoon.")]
    store.add_edge_markers([*flat, *others])
    bus = Bus(redis)
    bus.notify_embed()
    bus.enqueue("decay_being", being=BEING)
    run_worker("learn")
    assert state.get_time(store, CURSOR, BEING, "last_decay") is not None
    assert {m.tier for m in store.get_many([*flat, *others]).values()} == {"cold"}  # idle past their lifespans
    run_worker("embed")
    assert len(_edges(store)) == 15

    result = json.loads(twin("dream", "--json").stdout)
    assert result["merged"] == 1 and result["walked"] == 4
    assert store.get(flat[1]) is None and store.get(flat[0]).hits == 1
    run_worker("embed")  # `twin dream` asked for a checkpoint: the merged vector is scrubbed from the index
    assert store.tombstones() == []

    report = json.loads(twin("stats", "--json").stdout)
    assert report["by_kind"] == {"fact": {"warm": 0, "cold": 4}} and report["total_cold"] == 4
    assert report["superseded"] == 0 and report["last_decay"] and report["last_dream"]
    assert report["edges"]["co_occurs"] == sum(report["edges"].values()) > 0
    assert report == stats(store, BEING)
    assert "edges:" in twin("stats").stdout

    found = json.loads(twin("neighbors", str(flat[0]), "--depth", "2", "--json").stdout)
    assert found and flat[0] not in [m["id"] for m in found] and all(0 <= m["score"] <= 1 for m in found)
    assert twin("neighbors", str(flat[0]), "--depth", "4", check=False).returncode == 2
    assert twin("neighbors", "999999", check=False).returncode == 1

    bus.enqueue("dream_being", being=BEING)  # the daily job, in the embedding worker
    run_worker("embed")
    assert len(diary_lines(activity, "dreamed")) == 2
    elsewhere = json.loads(twin("dream", "--namespace", "elsewhere", "--json").stdout)
    assert elsewhere["walked"] == 0 and elsewhere["merged"] == 0  # only that namespace's memories
    assert twin("dream", "--namespace", "not a name", check=False).returncode == 2
