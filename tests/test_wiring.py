"""`twin.wiring`: one place that opens the embedder, the index reader and recall, for every caller."""

from __future__ import annotations

from twin import health
from twin.settings import load_settings
from twin.vectors.embedder import LocalEmbedder
from twin.vectors.embedding_flush import flush_pending
from twin.wiring import open_embedder, open_index_writer, open_recall


def test_doctor_loads_the_model_once(twin_env, store, activity, monkeypatch):
    """`twin doctor` embeds its probes and runs recall with one loaded model (it loaded it twice)."""
    opened = []
    real_open = LocalEmbedder.open
    monkeypatch.setattr(LocalEmbedder, "open", lambda self: (opened.append(self), real_open(self))[1])
    store.insert_memory("owner", "fact", "Owner keeps the spare bike key in the blue teapot.", "muse", 0.5)
    embedder = open_embedder(twin_env, store)
    flush_pending(store, embedder, open_index_writer(twin_env, store, embedder, activity), 96, 0)
    opened.clear()
    checks = {c["check"]: c for c in health.doctor(twin_env, store)}
    assert len(opened) == 1
    assert checks["recall finds stored memories"]["ok"], checks
    assert checks["embeddings exist"]["ok"] and checks["paraphrase ranks first"]["ok"]


def test_open_recall_uses_the_embedder_it_is_given(twin_env, store):
    embedder = open_embedder(twin_env, store)
    recall = open_recall(twin_env, store, embedder=embedder)
    try:
        assert recall.embedder is embedder and not recall.keyword_only
        assert recall.reader.index.model_id == embedder.model_id
    finally:
        recall.close()


def test_recall_without_an_embedder_is_keyword_only(twin_env, store, monkeypatch):
    monkeypatch.setenv("TWIN_EMBED_BACKEND", "none")
    settings = load_settings()
    assert open_embedder(settings, store) is None
    store.insert_memory("owner", "fact", "Owner's landlord is called Mr Okafor.", "muse", 0.5)
    recall = open_recall(settings, store)
    try:
        assert recall.keyword_only
        assert [r.memory.content for r in recall.recall("owner", "landlord", touch=False)] == [
            "Owner's landlord is called Mr Okafor."]
    finally:
        recall.close()

