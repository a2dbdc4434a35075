"""A chat's answer is often the turn after the one that matches the question: recall lifts a result whose
neighbour in the same conversation (same source, at most `turn_gap_s` apart) is a result too. Invented turns, a
real store, the real local model and a real index reader; the neighbour lookup on a real SQLite file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from twin.memory import format_time
from twin.recall.hybrid import TURN_FOUND, Recall, recall_with
from twin.store import turns
from twin.vectors.index import VectorIndex
from twin.vectors.sidecar import IndexReader

BEING = "owner"
T0 = datetime(2026, 3, 14, 18, 0, tzinfo=UTC)
CHAT = [  # (seconds after T0, text): a question turn that matches, an answer turn that shares no word with it
    (0, "Nora: What have you been tinkering with in the garage lately?"),
    (40, "Owner: Mostly the carburettor of my old Vespa, it finally idles."),
    (95, "Nora: Nice! Bring it to the lake on Sunday."),
]
NOTES = [  # unrelated memories that share a word or two with the question
    "Owner keeps the spare garage key in the blue drawer.",
    "Owner has been tinkering with a sourdough recipe.",
    "Owner's neighbour parks in front of the garage.",
    "Owner lately goes to bed before eleven.",
    "Owner painted the garage door green in May.",
]
QUESTION = "what have I been tinkering with in the garage lately?"


def _load(store, embedder, reader, rows: list[tuple[str, str, datetime]]) -> dict[str, int]:
    with store.atomic():
        ids = {text: store.insert_memory(BEING, "episode", text, source, 0.5, created_at=format_time(at))
               for text, source, at in rows}
    store.save_embeddings(list(ids.values()), embedder.embed(list(ids)), embedder.model_id)
    reader.open()
    return ids


@pytest.fixture
def reader(store, embedder, twin_env):
    return IndexReader(store, VectorIndex.for_settings(twin_env, embedder.model_id, embedder.dim))


def _ranks(recall: Recall, query: str) -> dict[int, tuple[int, float]]:
    results = recall.recall(BEING, query, limit=10, touch=False, as_of=format_time(T0 + timedelta(days=30)))
    return {r.memory.id: (i, r.score) for i, r in enumerate(results)}


def test_the_answer_turn_rises_with_the_question_it_follows(store, embedder, reader):
    chat = [(text, "telegram:chat-7", T0 + timedelta(seconds=s)) for s, text in CHAT]
    notes = [(text, "note", T0 - timedelta(days=3 + i)) for i, text in enumerate(NOTES)]
    ids = _load(store, embedder, reader, chat + notes)
    answer, question = ids[CHAT[1][1]], ids[CHAT[0][1]]
    plain, lifted = recall_with(store, embedder, reader, {"turn_share": 0.0}), Recall(store, embedder, reader)
    try:
        before, after = _ranks(plain, QUESTION), _ranks(lifted, QUESTION)
    finally:
        plain.close()
    assert before[question][0] == 0 and after[question][0] == 0  # the question turn still leads
    assert after[answer][0] < before[answer][0]  # its answer climbs past notes that only share words
    assert after[answer][0] <= 2
    expected = before[answer][1] + lifted.config.turn_share * max(before[question][1], before[ids[CHAT[2][1]]][1])
    assert after[answer][1] == pytest.approx(expected)
    for text in NOTES:  # a note has no neighbour in a conversation: its score is untouched
        assert after[ids[text]][1] == pytest.approx(before[ids[text]][1])
    told = {r.memory.id: r.reasons for r in lifted.recall(BEING, QUESTION, limit=10, touch=False,
                                                          as_of=format_time(T0 + timedelta(days=30)))}
    lifts = [reason for reason in told[answer] if reason.code == "next_to_turn"]
    assert len(lifts) == 1 and lifts[0].others == (question,) and f"#{question}" in lifts[0].words
    assert not any(reason.code == "next_to_turn" for text in NOTES for reason in told.get(ids[text], ()))
    lifted.close()


def test_turns_of_another_source_or_far_apart_are_not_neighbours(store, embedder, reader):
    rows = [(CHAT[0][1], "telegram:chat-7", T0),
            (CHAT[1][1], "telegram:chat-8", T0 + timedelta(seconds=40)),  # the same words, another chat
            (CHAT[2][1], "telegram:chat-7", T0 + timedelta(hours=2))]  # the same chat, two hours later
    rows += [(text, "note", T0 - timedelta(days=3 + i)) for i, text in enumerate(NOTES)]
    _load(store, embedder, reader, rows)
    plain, lifted = recall_with(store, embedder, reader, {"turn_share": 0.0}), Recall(store, embedder, reader)
    try:
        before, after = _ranks(plain, QUESTION), _ranks(lifted, QUESTION)
    finally:
        plain.close()
        lifted.close()
    assert before == after


def test_sentences_of_one_file_are_not_turns_of_a_conversation(store, embedder, reader):
    rows = [(text, "file:/home/owner/garage.md", T0 + timedelta(seconds=s)) for s, text in CHAT]  # one document
    rows += [(text, "note", T0 - timedelta(days=3 + i)) for i, text in enumerate(NOTES)]
    _load(store, embedder, reader, rows)
    plain, lifted = recall_with(store, embedder, reader, {"turn_share": 0.0}), Recall(store, embedder, reader)
    try:
        before, after = _ranks(plain, QUESTION), _ranks(lifted, QUESTION)
        told = lifted.recall(BEING, QUESTION, limit=10, touch=False, as_of=format_time(T0 + timedelta(days=30)))
    finally:
        plain.close()
        lifted.close()
    assert before == after and not any(r.code == "next_to_turn" for hit in told for r in hit.reasons)
    assert turns.is_conversation("chat:conv-1") and turns.is_conversation("telegram:42")
    assert not turns.is_conversation("file:/home/owner/garage.md") and not turns.is_conversation("email:18c2f")


def test_a_turn_the_query_did_not_find_at_all_is_not_lifted_by_its_neighbour(store, embedder, reader):
    chat = [(CHAT[0][1], "chat:c1", T0), ("Owner: 🙂", "chat:c1", T0 + timedelta(seconds=30))]  # cosine ~0.09
    ids = _load(store, embedder, reader, chat + [(text, "note", T0 - timedelta(days=3)) for text in NOTES])
    lifted = Recall(store, embedder, reader)
    try:
        hits = {h.memory.id: h for h in lifted.recall(BEING, QUESTION, limit=10, touch=False,
                                                     as_of=format_time(T0 + timedelta(days=30)))}
    finally:
        lifted.close()
    smile = hits.get(ids["Owner: 🙂"])
    assert smile is None or not any(r.code == "next_to_turn" for r in smile.reasons)
    assert smile is None or max(smile.keyword, smile.vector) < TURN_FOUND


def test_neighbours_are_the_turns_just_before_and_after_in_one_source(store):
    at = [format_time(T0 + timedelta(seconds=s)) for s in range(6)]
    with store.atomic():
        a = store.insert_memory(BEING, "episode", "first turn", "chat:x", 0.5, created_at=at[0])
        other = store.insert_memory(BEING, "episode", "another chat", "chat:y", 0.5, created_at=at[1])
        b = store.insert_memory(BEING, "episode", "second turn", "chat:x", 0.5, created_at=at[2])
        c = store.insert_memory(BEING, "episode", "same second", "chat:x", 0.5, created_at=at[2])
        someone = store.insert_memory("partner", "episode", "someone else's turn", "chat:x", 0.5, created_at=at[3])
        d = store.insert_memory(BEING, "episode", "last turn", "chat:x", 0.5, created_at=at[4])
    found = turns.neighbours(store, [a, b, c, d, other, someone, 999_999])
    assert found[a] == (None, b)
    assert found[b] == (a, c)  # the same second: by id
    assert found[c] == (b, d)  # another being's turn in between is not this conversation's
    assert found[d] == (c, None)
    assert found[other] == (None, None)
    assert found[someone] == (None, None)
    assert 999_999 not in found
    plan = " ".join(str(row) for row in store.conn.execute(
        f"EXPLAIN QUERY PLAN SELECT m.id, {turns._SIDE.format(op='<', order='DESC')} FROM memories m"
        " WHERE m.id IN (1)"))
    assert "memories_by_source_time" in plan  # two index seeks, not a scan of the source's memories
