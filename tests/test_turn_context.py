"""A transcript's turn is embedded with the turn before it (`twin.store.turns.turns_before`,
`twin.vectors.embedding_flush.embedding_texts`), and forgetting or rewriting that turn takes its text out of the
next turn's vector too (migration 0025's triggers). Invented turns, a real SQLite file, the real local model and a
real index writer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from twin.activity import Activity
from twin.lifecycle.forgetting import forget
from twin.memory import format_time, utc_now
from twin.store import turns
from twin.vectors.backfill import backfill
from twin.vectors.embedding_flush import embedding_texts, flush_pending
from twin.wiring import open_index_writer

BEING = "owner"
T0 = datetime(2026, 4, 2, 19, 0, tzinfo=UTC)
ASK, ANSWER = "Ines: Did the plumber ever come back for the boiler?", "Owner: Yes, on Thursday, it works now."
LATER = "Ines: Are you coming to the quiz night?"


def _add(store, rows: list[tuple[str, str, datetime]]) -> list[int]:
    with store.atomic():
        return [store.insert_memory(BEING, "episode", text, source, 0.5, created_at=format_time(at))
                for text, source, at in rows]


def _vector(store, memory_id: int, model_id: str) -> np.ndarray | None:
    row = store.conn.execute("SELECT vector FROM memory_embeddings WHERE memory_id = ? AND model_id = ?",
                             (memory_id, model_id)).fetchone()
    return None if row is None else np.frombuffer(row[0], dtype=np.float32)


@pytest.fixture
def writer(twin_paths, store, embedder):
    return open_index_writer(twin_paths, store, embedder, Activity(store, BEING))


def test_a_turn_is_read_with_the_turn_before_it_and_nothing_else_is(store):
    ids = _add(store, [(ASK, "telegram:55", T0), (ANSWER, "telegram:55", T0 + timedelta(seconds=50)),
                       (LATER, "telegram:55", T0 + timedelta(hours=3)),  # hours later: a new exchange
                       ("Owner: Same boiler, other chat.", "telegram:56", T0 + timedelta(seconds=60)),
                       ("Owner: A note, not a chat.", "file:/notes/boiler.md", T0 + timedelta(seconds=70)),
                       ("Owner is allergic to penicillin.", "telegram:55", T0 + timedelta(hours=3, seconds=9))])
    assert turns.turns_before(store, ids) == {ids[1]: ASK}  # the first turn, the others' contexts: none
    texts = embedding_texts(store, [(i, store.get(i).content) for i in ids])
    assert texts[1] == f"{ASK}\n{ANSWER}" and texts[0] == ASK and texts[2] == LATER
    assert texts[5] == "Owner is allergic to penicillin."  # an extracted memory stands alone


def test_the_flush_and_backfill_embed_the_turn_with_its_context(store, embedder, writer):
    ask, answer = _add(store, [(ASK, "chat:kitchen", T0), (ANSWER, "chat:kitchen", T0 + timedelta(seconds=50))])
    assert flush_pending(store, embedder, writer, 96, 0) == 2
    expected = embedder.embed([f"{ASK}\n{ANSWER}", ANSWER])
    assert np.allclose(_vector(store, answer, embedder.model_id), expected[0], atol=1e-5)
    assert not np.allclose(_vector(store, answer, embedder.model_id), expected[1], atol=1e-3)
    store.conn.execute("DELETE FROM memory_embeddings")
    backfill(store, embedder)
    assert np.allclose(_vector(store, answer, embedder.model_id), expected[0], atol=1e-5)


def test_forgetting_or_rewriting_a_turn_takes_it_out_of_the_next_turns_vector(store, embedder, writer):
    ask, answer, third = _add(store, [(ASK, "telegram:55", T0), (ANSWER, "telegram:55", T0 + timedelta(seconds=50)),
                                      ("Ines: Great, see you Sunday.", "telegram:55", T0 + timedelta(seconds=80))])
    flush_pending(store, embedder, writer, 96, 0)
    forget(store, Activity(store, BEING), BEING, [ask])
    assert _vector(store, answer, embedder.model_id) is None  # dropped: it held the forgotten turn's text
    assert answer in {mid for _, mid in store.tombstones()}  # … and the index scrubs it at the next catch-up
    assert flush_pending(store, embedder, writer, 96, 0) == 1
    assert np.allclose(_vector(store, answer, embedder.model_id), embedder.embed([ANSWER])[0], atol=1e-5)
    with store.atomic():
        store.edit_memory(answer, utc_now(), content="Owner: Yes, on Friday, it works now.")
    assert _vector(store, third, embedder.model_id) is None  # the next turn read the old text: embedded again
    assert flush_pending(store, embedder, writer, 96, 0) == 2
    assert np.allclose(_vector(store, third, embedder.model_id),
                       embedder.embed(["Owner: Yes, on Friday, it works now.\nInes: Great, see you Sunday."])[0],
                       atol=1e-5)
