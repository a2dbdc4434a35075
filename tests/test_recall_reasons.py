"""The reasons recall gives for a result's place (`Recalled.reasons`, `twin.recall.reasons`), on invented memories
with a real store, the real local model and a real index reader: a strict and a soft time window, the newest value
of a slot lifted above an older one (and the older one told why it fell), a supersession (the memory that replaced
another, and in a replay the one replaced later), and the rules that keep a reason from telling more than the
caller may see (a hidden sensitive memory's quoted reason, a memory of a level the caller is not shown)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from twin.learn.capture import capture
from twin.memory import Memory, RankReason, Recalled, format_time
from twin.operations import Context
from twin.operations.reads import visible_reasons
from twin.operations.shapes import Hit
from twin.recall import reasons
from twin.recall.hybrid import Recall
from twin.recall.time_window import TimeWindow
from twin.text.capture_slots import slot_of
from twin.text.extractor import Candidate
from twin.vectors.index import VectorIndex
from twin.vectors.sidecar import IndexReader
from twin.weights import RECALL_CONFIG

BEING = "owner"
NOW = datetime(2026, 11, 18, 15, 0, tzinfo=UTC)  # a Wednesday
BERLIN = ZoneInfo("Europe/Berlin")
PROVENANCE = {"source_type": "muse", "captured_from": "test", "confidence": 0.6}


def _at(days_ago: float) -> str:
    return format_time(NOW - timedelta(days=days_ago))


@pytest.fixture
def recall(store, embedder, twin_env):
    reader = IndexReader(store, VectorIndex.for_settings(twin_env, embedder.model_id, embedder.dim))
    r = Recall(store, embedder, reader, zone=BERLIN)
    yield r
    r.close()


def _insert(store, embedder, recall, rows: list[tuple[str, float, float]], kind: str = "fact") -> list[int]:
    """Insert `(content, days_ago, importance)` rows with their vectors; the reader reopened. Their ids."""
    with store.atomic():
        ids = [store.insert_memory(BEING, kind, text, "muse", importance, created_at=_at(days))
               for text, days, importance in rows]
    store.save_embeddings(ids, embedder.embed([text for text, _, _ in rows]), embedder.model_id)
    recall.reader.open()
    return ids


def _capture(store, embedder, recall, content: str, days_ago: float):
    with store.atomic():
        done = capture(store, BEING, Candidate(content=content, kind="fact", importance=0.5, tags=[]), "muse",
                       _at(days_ago), PROVENANCE)
    store.save_embeddings([done.id], embedder.embed([content]), embedder.model_id)
    recall.reader.open()
    return done


def _ask(recall, query: str, **kwargs) -> dict[int, Recalled]:
    kwargs.setdefault("as_of", format_time(NOW))
    kwargs.setdefault("touch", False)
    return {r.memory.id: r for r in recall.recall(BEING, query, **kwargs)}


def _codes(hit: Recalled) -> list[str]:
    return [r.code for r in hit.reasons]


def test_a_strict_window_says_which_days_in_the_owners_zone(store, embedder, recall):
    saturday = (NOW.astimezone(BERLIN) - timedelta(days=4)).replace(hour=11, minute=0)  # 2026-11-14
    days = (NOW - saturday.astimezone(UTC)).total_seconds() / 86400
    inside, before = _insert(store, embedder, recall, [
        ("Owner repotted the fiddle-leaf fig and swept the balcony.", days, 0.4),
        ("Owner repotted the basil on the kitchen windowsill.", days + 20, 0.4)], kind="episode")
    found = _ask(recall, "what did I repot last Saturday?")
    assert found[inside].in_window and _codes(found[inside]) == ["time_window"]
    words = found[inside].reasons[0].words
    assert words.startswith("Made in the time your query names ('last Saturday', 2026-11-14, Europe/Berlin)")
    assert "×3" in words
    assert found[before].reasons == ()  # outside the window: nothing moved it


def test_a_soft_window_says_it_only_lifted(store, embedder, recall):
    recent, old = _insert(store, embedder, recall, [
        ("Owner tried a new ramen place near Rosenthaler Platz.", 3, 0.4),
        ("Owner tried a new falafel place near Hermannplatz.", 90, 0.4)], kind="episode")
    found = _ask(recall, "which new places did I try recently?")
    assert _codes(found[recent]) == ["soft_window"] and "×1.15" in found[recent].reasons[0].words
    assert "'recently'" in found[recent].reasons[0].words and not found[recent].in_window
    assert found[old].reasons == ()


def test_the_newest_value_of_a_slot_says_what_it_passed_and_the_older_says_why_it_fell(store, embedder, recall):
    older = "Owner's dentist is Dr. Halvorsen at the dental practice on Brunnenstraße."
    newer = "Owner sees dentist Mina Osei."
    assert slot_of(older) == slot_of(newer) == ("owner", "dentist")
    old_id, new_id = _insert(store, embedder, recall, [(older, 60, 1.0), (newer, 5, 0.1)])
    query = "who is my dentist at the dental practice?"
    unlifted = Recall(store, recall.embedder, recall.reader, config=replace(RECALL_CONFIG, slots=False))
    try:
        plain = list(_ask(unlifted, query))
    finally:
        unlifted.close()
    assert plain.index(old_id) < plain.index(new_id)  # by its score alone the older value ranks first
    found = _ask(recall, query)
    order = list(found)
    assert order.index(new_id) < order.index(old_id)  # the rule lifted the newest
    assert _codes(found[new_id]) == ["newest_value"] and found[new_id].reasons[0].others == (old_id,)
    expected = f"Newest value of 'Owner / dentist': ranked above 1 older value (#{old_id})"
    assert found[new_id].reasons[0].words == expected
    assert _codes(found[old_id]) == ["older_value"] and found[old_id].reasons[0].others == (new_id,)
    assert f"newer: #{new_id}" in found[old_id].reasons[0].words


def test_a_memory_that_superseded_another_says_so_and_a_replay_says_it_was_replaced_later(store, embedder, recall):
    old = _capture(store, embedder, recall, "Owner works at Halden Logistics in Hamburg.", 200)
    new = _capture(store, embedder, recall, "Owner now works at Fjordline Robotics.", 20)
    assert new.superseded == [old.id]
    found = _ask(recall, "where do I work?")
    assert old.id not in found and "replaces" in _codes(found[new.id])
    said = next(r for r in found[new.id].reasons if r.code == "replaces")
    assert said.others == (old.id,) and said.words.startswith(f"Replaces #{old.id}") and said.quotes_memory
    assert store.get(old.id).supersede_reason in said.words  # the supersession's own words, quoted
    then = _ask(recall, "where do I work?", as_of=_at(100))
    assert list(then) == [old.id]  # current then
    replay = next(r for r in then[old.id].reasons if r.code == "superseded_later")
    assert replay.others == (new.id,) and replay.words.startswith(f"Superseded by #{new.id} at {_at(20)}")


def test_a_newer_statement_says_which_older_one_it_passed(store, embedder, recall):
    from twin.lifecycle.cycle import VectorLookup, write_all_pending_edges

    older = "Owner parks the cargo bike in the courtyard behind the bakery."
    newer = "Owner now parks the cargo bike in the courtyard behind the pharmacy."
    old_id, new_id = _insert(store, embedder, recall, [(older, 60, 1.0), (newer, 5, 0.1)])
    with store.atomic():
        store.add_edge_markers([old_id, new_id])  # as learn marks them: the embedding worker links each to its nearest
    write_all_pending_edges(store, VectorLookup(store, recall.reader.search, embedder.model_id))
    assert store.edges_among([old_id, new_id], "co_occurs", 0.0)  # the paraphrases are linked
    query = "where do I park the cargo bike?"
    configs = {on: replace(RECALL_CONFIG, slots=False, newer_first=on) for on in (False, True)}
    found = {}
    for on, config in configs.items():
        ranked = Recall(store, recall.embedder, recall.reader, config=config)
        try:
            found[on] = _ask(ranked, query)
        finally:
            ranked.close()
    assert list(found[False]).index(old_id) < list(found[False]).index(new_id)  # by score alone the older first
    assert all(hit.reasons == () for hit in found[False].values())
    lifted = found[True]
    assert list(lifted).index(new_id) < list(lifted).index(old_id)
    assert _codes(lifted[new_id]) == ["newer_statement"] and lifted[new_id].reasons[0].others == (old_id,)
    assert _codes(lifted[old_id]) == ["older_statement"] and lifted[old_id].reasons[0].others == (new_id,)


def test_no_reason_when_no_rule_moved_a_result(store, embedder, recall):
    ids = _insert(store, embedder, recall, [("Owner keeps the spare bike key in the blue tin.", 10, 0.5),
                                            ("Owner's neighbour waters the tomatoes in August.", 40, 0.5)])
    found = _ask(recall, "where is the spare bike key?")
    assert set(ids) <= set(found) and all(hit.reasons == () for hit in found.values())


def test_a_hidden_sensitive_memory_keeps_no_reason_that_quotes_text():
    quoting = RankReason("replaces", "replaces #3 (PIN: 1234 -> 9876): superseded, no longer searched", (3,), True)
    plain = RankReason("older_value", "an older value of 'Owner / bank card PIN' (newer: #9, ranked above it)", (9,))
    secret = Memory(7, BEING, "fact", "Owner's bank card PIN is 9876.", "muse", 0.5, sensitivity="sensitive")
    hit = Recalled(secret, 0.5, 0.5, 0.5, 1.0, reasons=(quoting, plain))
    hidden = Hit.of_recalled(hit, reveal_sensitive=False)
    assert [r.code for r in hidden.reasons] == ["older_value"] and "9876" not in hidden.model_dump_json()
    assert [r.code for r in Hit.of_recalled(hit, reveal_sensitive=True).reasons] == ["replaces", "older_value"]


def test_a_reason_naming_a_memory_the_caller_may_not_see_is_dropped(twin_paths, store):
    with store.atomic():
        shown_id = store.insert_memory(BEING, "fact", "Owner runs the Sunday book swap.", "muse", 0.5,
                                       sensitivity="internal")
        private_id = store.insert_memory(BEING, "fact", "Owner pays Lena back on Fridays.", "muse", 0.5)
        public_id = store.insert_memory(BEING, "fact", "Owner's book swap meets at the library.", "muse", 0.5,
                                        sensitivity="public")
    slot = ("owner", "book swap")
    hit = Recalled(store.get(shown_id), 0.5, 0.5, 0.5, 1.0,
                   reasons=(reasons.older_value(slot, private_id), reasons.older_value(slot, public_id)))
    ctx = Context.open(twin_paths)
    try:
        kept = visible_reasons(ctx, [hit], ("public", "internal"))
    finally:
        ctx.close()
    assert [r.others for r in kept[0].reasons] == [(public_id,)]


@pytest.mark.parametrize(("start", "end", "words"), [
    (datetime(2026, 11, 14), datetime(2026, 11, 15), "2026-11-14"),
    (datetime(2026, 11, 9), datetime(2026, 11, 16), "2026-11-09 to 2026-11-15"),
    (datetime(2026, 11, 14, 17), datetime(2026, 11, 15), "2026-11-14 17:00 to 2026-11-15 00:00"),
])
def test_window_span_reads_as_the_owners_calendar(start, end, words):
    window = TimeWindow(start.replace(tzinfo=BERLIN).astimezone(UTC), end.replace(tzinfo=BERLIN).astimezone(UTC),
                        "x", True)
    assert reasons.window_span(window, BERLIN) == words
    assert reasons.zone_name(BERLIN) == "Europe/Berlin" and reasons.zone_name(UTC) == "UTC"
