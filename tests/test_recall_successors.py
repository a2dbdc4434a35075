"""The memory that superseded a candidate answers what the old value answered (`Recall._inherited`): invented
memories on a real store, the real local model and a real index reader."""

from __future__ import annotations

import pytest

from twin.recall.hybrid import Recall, recall_with
from twin.vectors.index import VectorIndex
from twin.vectors.sidecar import IndexReader

BEING = "owner"
OLD, NEW = "Owner works at Siemens in the Munich office.", "Owner joined Brightwave as a data engineer."
CROWD = [f"Owner's colleague number {n} works late at the office on Fridays." for n in range(70)]


@pytest.fixture
def loaded(store, embedder, twin_env):
    with store.atomic():
        ids = [store.insert_memory(BEING, "fact", text, "test", 0.5) for text in [OLD, *CROWD, NEW]]
        store.supersede(ids[0], ids[-1], "same employer, new value")
    contents = [OLD, *CROWD, NEW]
    store.save_embeddings(ids, embedder.embed(contents), embedder.model_id)
    reader = IndexReader(store, VectorIndex.for_settings(twin_env, embedder.model_id, embedder.dim))
    reader.open()
    return ids, reader


def _found(recall: Recall, query: str) -> list[int]:
    try:
        return [r.memory.id for r in recall.recall(BEING, query, limit=10, touch=False)]
    finally:
        recall.close()


def test_the_new_value_is_found_by_the_question_the_old_one_answered(store, embedder, loaded):
    ids, reader = loaded
    old, new = ids[0], ids[-1]
    plain = _found(recall_with(store, embedder, reader, {"inherit": False}), "where do I work?")
    assert new not in plain and old not in plain  # in neither half's candidates: the crowd outranks it
    found = _found(Recall(store, embedder, reader), "where do I work?")
    assert new in found[:3] and old not in found, found.index(new) if new in found else found  # its successor answers


def test_a_chain_hands_the_scores_to_the_value_current_now_and_a_replay_to_the_one_current_then(store, embedder,
                                                                                               loaded):
    ids, reader = loaded
    newest = store.insert_memory(BEING, "fact", "Owner moved to Kelpie Systems as a data lead.", "test", 0.5)
    store.save_embeddings([newest], embedder.embed(["Owner moved to Kelpie Systems as a data lead."]),
                          embedder.model_id)
    with store.atomic():
        store.supersede(ids[-1], newest, "same employer, new value")
    reader.refresh()
    found = _found(Recall(store, embedder, reader), "where do I work?")
    assert newest in found[:3] and ids[-1] not in found, found
