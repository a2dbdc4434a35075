"""Recall's signals on invented memories, with a real store, the real local model and a real index reader: a rare
code found among thousands of look-alikes (its keyword hit gets its real cosine), a date typed as the query
keeping its keyword credit, time as a soft signal, the newest value of a slot ranked first, and `min_relevance`
as a cut the caller can trust."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from twin.memory import format_time
from twin.recall.hybrid import Recall
from twin.recall.time_window import date_words
from twin.vectors.index import VectorIndex
from twin.vectors.sidecar import IndexReader

BEING = "owner"
NOW = datetime(2026, 12, 20, 12, 0, tzinfo=UTC)
LOOK_ALIKES = 3000
CODES = ("KX-40917-TQ", "PO 77310452", "HD-2291", "ZV9Q-1138-LM", "TCK-660173")
PROVIDERS = ("Hetzner Online", "Deutsche Telekom", "Vattenfall", "BVG", "Allianz", "Techniker Krankenkasse",
             "Stadtwerke", "Vodafone", "Strato", "IONOS")
WHAT = ("cloud servers", "the landline", "electricity", "a monthly ticket", "household insurance", "dental cover",
        "water", "mobile data", "web hosting", "a domain")


def _at(days_ago: float) -> str:
    return format_time(NOW - timedelta(days=days_ago))


def _look_alike(rng: random.Random, n: int) -> str:
    """A file memory like thousands of others: provider, service, month, amount and a reference of its own."""
    month = rng.choice(["January", "February", "March", "April", "May", "June", "July", "August", "September"])
    return (f"Owner's file invoices/{2024 + n % 3}/{n:05d}.pdf is an invoice from {rng.choice(PROVIDERS)} for "
            f"{rng.choice(WHAT)} in {month}, {rng.randint(9, 240)}.{rng.randint(10, 99)} euros, reference "
            f"{rng.randint(100000, 999999)}, paid by card.")


@pytest.fixture
def recall(store, embedder, twin_env):
    reader = IndexReader(store, VectorIndex.for_settings(twin_env, embedder.model_id, embedder.dim))
    r = Recall(store, embedder, reader)
    yield r
    r.close()


def _load(store, embedder, recall, rows: list[tuple[str, float]], kind: str = "document") -> dict[str, int]:
    """Insert `(content, days_ago)` rows, embed them in batches and open the reader: `{content: id}`."""
    with store.atomic():
        ids = {content: store.insert_memory(BEING, kind, content, "file", 0.4, created_at=_at(days))
               for content, days in rows}
    texts = list(ids)
    for start in range(0, len(texts), 256):
        batch = texts[start:start + 256]
        store.save_embeddings([ids[t] for t in batch], embedder.embed(batch), embedder.model_id)
    recall.reader.open()
    return ids


def _ask(recall, query: str, **kwargs):
    kwargs.setdefault("as_of", format_time(NOW))
    kwargs.setdefault("touch", False)
    return recall.recall(BEING, query, **kwargs)


def test_a_rare_code_is_found_among_thousands_of_look_alikes(store, embedder, recall):
    rng = random.Random(16)
    rows = [(_look_alike(rng, n), 10 + n % 400) for n in range(LOOK_ALIKES)]
    holders = {code: f"Owner's file invoices/2025/{90000 + i}.pdf is an invoice from "
                     f"{PROVIDERS[i]} for {WHAT[i]} in May, 61.{20 + i} euros, reference {code}, paid by card."
               for i, code in enumerate(CODES)}
    ids = _load(store, embedder, recall, [*rows, *((text, 200.0) for text in holders.values())])
    for code, text in holders.items():
        for query in (code, f"invoice {code}", f"which invoice has the reference {code}?"):
            results = _ask(recall, query, limit=5)
            assert results[0].memory.id == ids[text], query
            assert results[0].vector > 0.2  # its real cosine, read from its stored vector, not 0


def test_a_date_typed_as_the_query_keeps_its_keyword_credit(store, embedder, recall):
    ids = _load(store, embedder, recall, [
        ("Owner's dentist appointment with Dr. Okafor is on 2026-12-15 at 09:30.", 30),
        ("Owner's dentist appointment with Dr. Okafor was moved twice this autumn.", 20),
        ("Owner renewed the parking permit for the car on Pannierstraße.", 5),
        ("Owner paid the winter heating bill of 312 euros.", 3),
    ], kind="fact")
    for query in ("2026-12-15", "what is on 2026-12-15?", "dentist 2026-12-15"):
        results = _ask(recall, query)
        assert results[0].memory.id == ids["Owner's dentist appointment with Dr. Okafor is on 2026-12-15 at 09:30."]
        assert results[0].keyword > 0, query


def test_date_words_keep_what_a_memory_writes_and_drop_relative_words():
    assert date_words("2026-12-15", alone=False) == ["2026-12-15"]
    assert date_words("March 2026", alone=True) == ["March", "2026"]
    assert date_words("March 2026", alone=False) == []  # inside a longer question the window says it
    assert date_words("yesterday", alone=True) == []
    assert date_words("last week", alone=True) == []


def test_time_lifts_its_window_and_keeps_the_rest_reachable(store, embedder, recall):
    ids = _load(store, embedder, recall, [
        ("Owner cooked a pumpkin risotto for Noor and Felix.", 2.0),
        ("Owner cooked shakshuka for the neighbours on the balcony.", 40.0),
        ("Owner's recipe for pumpkin risotto uses sage butter.", 300.0),
    ], kind="episode")
    results = _ask(recall, "what did I cook two days ago?")
    assert results[0].memory.id == ids["Owner cooked a pumpkin risotto for Noor and Felix."]
    outside = {r.memory.id for r in results[1:]}
    assert ids["Owner cooked shakshuka for the neighbours on the balcony."] in outside  # lifted, not filtered


def test_min_relevance_is_a_cut_on_how_well_the_query_found_a_memory(store, embedder, recall):
    ids = _load(store, embedder, recall, [
        ("Owner's piano teacher is Ilse Brandauer, who teaches on Tuesdays in Schöneberg.", 30),
        ("Owner repotted the monstera and the two fig cuttings on the windowsill.", 12),
        ("Owner's bike has a Gates carbon belt instead of a chain.", 50),
    ], kind="fact")
    off_topic = "what is the melting point of osmium?"
    assert _ask(recall, off_topic)  # no cut by default: recall returns its best guesses
    assert _ask(recall, off_topic, min_relevance=0.4) == []  # nothing found by the query itself: abstain
    kept = _ask(recall, "who teaches me piano?", min_relevance=0.4)
    assert [r.memory.id for r in kept] == [ids["Owner's piano teacher is Ilse Brandauer, who teaches on Tuesdays "
                                                "in Schöneberg."]]
    assert all(r.relevance == max(r.keyword, r.vector) >= 0.4 for r in kept)


def test_the_newest_value_of_a_class_slot_ranks_first_and_the_older_stays(store, embedder, recall):
    older = ("Owner sees physiotherapist Arvid Lund at Reha Ost every Thursday for the right shoulder.", 200.0)
    newer = ("Owner now does shoulder physiotherapy at Praxis Mitte with therapist Selin Kaya.", 20.0)
    gym_old = ("Owner boulders twice a week at Boulderkeller in Leipzig.", 300.0)
    gym_new = ("Owner now climbs at Steinbruch Halle every Tuesday evening.", 30.0)
    ids = _load(store, embedder, recall, [older, newer, gym_old, gym_new, (
        "Owner's shoulder feels better after the stretching routine.", 10.0)], kind="fact")
    first = _ask(recall, "who is my physiotherapist?")
    order = [r.memory.id for r in first]
    assert order.index(ids[newer[0]]) < order.index(ids[older[0]])  # the older one is history, still found
    assert _ask(recall, "who is Arvid Lund?")[0].memory.id == ids[older[0]]
    order = [r.memory.id for r in _ask(recall, "where do I go climbing?")]
    assert order.index(ids[gym_new[0]]) < order.index(ids[gym_old[0]])
