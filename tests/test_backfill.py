"""The remote embedding backend and `twin backfill`, against the fake OpenAI-protocol server (tests/fake_llm.py)
and a real SQLite store: model ids per vector, no mixing across a model switch, resumable checkpoints, provider
failures that lose nothing, and the CLI's progress lines."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from fake_llm import EMBED_DIM, FakeLLM, Reply, hashed_embedding
from in_process import twin_cli

from twin.activity import Activity
from twin.exceptions import EmbedderError
from twin.llm.provider import BudgetExhausted
from twin.settings import load_settings
from twin.vectors.backfill import BackfillError, backfill
from twin.vectors.embedder import PROBE_TEXT, RemoteEmbedder, make_embedder, model_id_of
from twin.vectors.embedding_flush import EmbeddingOutage, flush_pending
from twin.vectors.index import VectorIndex
from twin.vectors.sidecar import IndexWriter
from twin.wiring import open_recall

ROOT = Path(__file__).resolve().parent.parent
REMOTE_ID = "remote:fake-embed"


@pytest.fixture
def fake(fake_llm):
    """The fake provider (conftest's `fake_llm`), serving on a free loopback port for one test."""
    return fake_llm


@pytest.fixture
def remote_settings(twin_env, fake, monkeypatch):
    """The isolated twin switched to `TWIN_EMBED_BACKEND=openai` on the fake server (no client retries, so one
    scripted error is one failed call). Set in the environment, so `twin` subprocesses see it too."""
    monkeypatch.setenv("TWIN_EMBED_BACKEND", "openai")
    monkeypatch.setenv("TWIN_LLM_BASE_URL", fake.url)
    monkeypatch.setenv("TWIN_LLM_MODEL_EMBED", "fake-embed")
    monkeypatch.setenv("TWIN_LLM_MAX_RETRIES", "0")
    return load_settings()


def remember(store, n: int, start: int = 0) -> list[int]:
    """Insert `n` distinct memories straight into the store; returns their ids."""
    return [store.insert_memory("owner", "fact", f"Owner wrote note number {i} about topic {i % 7}.", "muse", 0.5)
            for i in range(start, start + n)]


def remote(settings, store) -> RemoteEmbedder:
    embedder = make_embedder(settings.embed_backend, settings.embed_threads, settings, store)
    embedder.open()
    return embedder


def embedded_texts(fake: FakeLLM) -> list[str]:
    """Every text the fake server was asked to embed, the probes of `open()` left out."""
    with fake.lock:
        bodies = [body for path, _, body in fake.requests if path.endswith("/embeddings")]
    return [t for body in bodies for t in body["input"] if t != PROBE_TEXT]


def vector_models(store) -> dict[int, str]:
    return dict(store.conn.execute("SELECT memory_id, model_id FROM memory_embeddings"))


def writer_for(settings, store, embedder) -> IndexWriter:
    writer = IndexWriter(store, VectorIndex.for_settings(settings, embedder.model_id, embedder.dim),
                         Activity(store, settings.being))
    writer.open()
    return writer


def test_remote_embedder_stores_vectors_under_its_model_id(remote_settings, store, fake):
    embedder = make_embedder("openai", 0, remote_settings, store)
    assert isinstance(embedder, RemoteEmbedder)
    assert embedder.model_id == model_id_of(remote_settings) == REMOTE_ID
    with pytest.raises(EmbedderError, match="before open"):
        embedder.embed(["hello"])
    embedder.open()
    assert embedder.dim == EMBED_DIM
    vectors = embedder.embed(["Owner likes tea.", "", "Owner likes green tea."])
    assert vectors.shape == (3, EMBED_DIM) and vectors.dtype == np.float32
    expected = [hashed_embedding("Owner likes tea."), hashed_embedding("Owner likes green tea.")]
    assert np.allclose(vectors[[0, 2]], expected, atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors[[0, 2]], axis=1), 1, atol=1e-5)
    assert embedder.embed([]).shape == (0, EMBED_DIM)
    with pytest.raises(TypeError):
        embedder.embed("one text")  # type: ignore[arg-type]

    ids = remember(store, 5)
    writer = writer_for(remote_settings, store, embedder)
    assert flush_pending(store, embedder, writer, batch_max=96, pause_s=0) == 5
    rows = store.conn.execute("SELECT memory_id, model_id, dim FROM memory_embeddings ORDER BY memory_id").fetchall()
    assert rows == [(i, REMOTE_ID, EMBED_DIM) for i in ids]
    assert writer.index.live_labels() == set(ids)
    assert embedder.provider.budget.used("embed") == 3  # the probe, one embed() call, the flush
    embedder.close()


@pytest.mark.slow
def test_unreachable_provider_fails_open_in_one_line_and_the_worker_exits(twin_env, monkeypatch, store):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("TWIN_EMBED_BACKEND", "openai")
    monkeypatch.setenv("TWIN_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("TWIN_LLM_MAX_RETRIES", "0")
    settings = load_settings()
    with pytest.raises(EmbedderError) as caught:
        make_embedder("openai", 0, settings, store).open()
    message = str(caught.value)
    assert "\n" not in message and "remote:text-embedding-3-small" in message
    assert f"127.0.0.1:{port}" in message and "cannot embed" in message

    # the embedding worker exits 1 with that line; the supervisor restarts it with backoff
    proc = subprocess.run([sys.executable, "-m", "twin.workers", "embed", "--burst"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1
    assert "cannot embed" in proc.stdout + proc.stderr and "Traceback" not in proc.stdout + proc.stderr
    # the reason is in the diary once, however often the supervisor restarts the worker
    subprocess.run([sys.executable, "-m", "twin.workers", "embed", "--burst"], cwd=ROOT, capture_output=True,
                   timeout=120)
    reasons = [a.text for a in Activity(store, "owner").recent(50) if a.kind == "degraded"]
    assert len(reasons) == 1 and reasons[0].startswith("The embed worker cannot run: embedder: remote:")


def test_switching_local_to_remote_never_mixes_vectors(twin_env, remote_settings, store, embedder, fake):
    ids = remember(store, 30)
    local_writer = writer_for(twin_env, store, embedder)
    assert flush_pending(store, embedder, local_writer, batch_max=96, pause_s=0) == 30
    local_writer.checkpoint(force=True)  # an index of the local model is on disk
    assert set(vector_models(store).values()) == {embedder.model_id}

    # the switch: every memory is pending for the new model, and the old vectors are untouched until backfilled
    remote_embedder = remote(remote_settings, store)
    assert store.count_pending_embeddings(REMOTE_ID) == 30
    assert store.embedding_count(embedder.model_id) == 30

    def stop_after_first(_progress):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        backfill(store, remote_embedder, batch=10, progress=stop_after_first)
    models = vector_models(store)
    remote_ids = {i for i, m in models.items() if m == REMOTE_ID}
    assert remote_ids == set(ids[:10]) and store.embedding_count(embedder.model_id) == 20

    # the index of the local model is refused for the remote one and rebuilt from remote vectors only
    writer = writer_for(remote_settings, store, remote_embedder)
    assert writer.index.live_labels() == remote_ids
    assert any(f"model_id is '{embedder.model_id}'" in line.text
               for line in Activity(store, twin_env.being).recent(10))

    # recall searches the remote model's vectors only, though most memories still have a local vector
    recall = open_recall(remote_settings, store)
    try:
        assert recall.embedder.model_id == REMOTE_ID and not recall.keyword_only
        query = remote_embedder.embed(["note about topic 3"])[0]
        found = recall.reader.search(query, k=100)
        assert found and {mid for mid, _ in found} <= remote_ids
        results = recall.recall("owner", "note about topic 3", limit=30, touch=False)
        assert {r.memory.id for r in results if r.vector > 0} <= remote_ids
    finally:
        recall.close()

    # finishing the backfill: the writer catches up from SQLite (re-saved vectors have new seqs)
    report = backfill(store, remote_embedder, batch=10)
    assert (report.embedded, report.already, report.total) == (20, 10, 30)
    assert set(vector_models(store).values()) == {REMOTE_ID}
    assert writer.catch_up() == 20
    assert writer.index.live_labels() == set(ids)


def test_backfill_resumes_after_an_interruption(remote_settings, store, fake):
    ids = remember(store, 450)
    embedder = remote(remote_settings, store)
    seen = []

    def interrupt_after_first_checkpoint(progress):
        seen.append(progress)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        backfill(store, embedder, progress=interrupt_after_first_checkpoint)
    assert (seen[0].done, seen[0].total, seen[0].embedded) == (200, 450, 200)
    assert seen[0].line().startswith("backfill: 200/450 embedded (44.4 %), ")
    assert store.embedding_count(REMOTE_ID) == 200  # the checkpoint before the interruption is kept

    lines = []
    report = backfill(store, embedder, progress=lambda p: lines.append(p.line()),
                      activity=Activity(store, remote_settings.being))
    assert (report.embedded, report.already, report.total) == (250, 200, 450)
    assert [line.split(",")[0] for line in lines] == ["backfill: 400/450 embedded (88.9 %)",
                                                      "backfill: 450/450 embedded (100.0 %)"]
    assert store.count_pending_embeddings(REMOTE_ID) == 0 and set(vector_models(store)) == set(ids)
    texts = embedded_texts(fake)
    assert len(texts) == 450 and len(set(texts)) == 450  # nothing embedded twice
    assert "Backfilled 250 memories with the vectors of remote:fake-embed." in [
        line.text for line in Activity(store, remote_settings.being).recent(5)]
    assert backfill(store, embedder).embedded == 0


def test_provider_failure_mid_backfill_keeps_what_was_saved(remote_settings, store, fake):
    remember(store, 450)
    embedder = remote(remote_settings, store)
    fake.script(Reply(), Reply(status=500))  # the first batch answers, the second fails
    with pytest.raises(BackfillError) as caught:
        backfill(store, embedder, activity=Activity(store, remote_settings.being))
    message = str(caught.value)
    assert "\n" not in message and "backfill stopped at 200/450" in message
    assert "run `twin backfill` once the provider answers" in message
    assert store.embedding_count(REMOTE_ID) == 200
    diary = [line.text for line in Activity(store, remote_settings.being).recent(5)]
    assert "Backfill with remote:fake-embed stopped after 200 memories; 250 still wait for a vector." in diary

    report = backfill(store, embedder)
    assert (report.embedded, report.total) == (250, 450)


def test_budget_used_up_mid_backfill_is_a_clear_error(remote_settings, store, fake):
    remember(store, 450)
    embedder = remote(remote_settings, store)
    # one more call today: embedding may use int(0.9 * limit) calls, the rest is kept for reflection
    embedder.provider.budget.limit = embedder.provider.budget.used("embed") + 2
    with pytest.raises(BackfillError, match="budget") as caught:
        backfill(store, embedder)
    assert isinstance(caught.value.__cause__, BudgetExhausted)
    assert store.embedding_count(REMOTE_ID) == 200 and "after midnight UTC" in str(caught.value)


def test_backfill_stops_when_another_process_embeds_back(remote_settings, store, embedder, fake):
    """A daemon still running the local model would turn the new vectors back into local ones, forever."""
    remember(store, 60)
    remote_embedder = remote(remote_settings, store)

    def old_daemon(_progress):
        rows = store.conn.execute("SELECT memory_id FROM memory_embeddings WHERE model_id = ?", (REMOTE_ID,))
        ids = [r[0] for r in rows]
        store.save_embeddings(ids, np.zeros((len(ids), embedder.dim), dtype=np.float32), embedder.model_id)

    with pytest.raises(BackfillError, match="daemon still running another embed_backend"):
        backfill(store, remote_embedder, batch=10, progress=old_daemon)


def test_flush_survives_provider_failures(remote_settings, store, fake, caplog):
    remember(store, 5)
    embedder = remote(remote_settings, store)
    writer = writer_for(remote_settings, store, embedder)
    caplog.set_level(logging.INFO, logger="twin.vectors.embedding_flush")
    outage = EmbeddingOutage()  # what the embedding worker keeps from one flush to the next

    fake.script(Reply(status=500), Reply(status=503))
    started = time.monotonic()
    assert flush_pending(store, embedder, writer, batch_max=96, pause_s=0, failure_pause_s=0.3, outage=outage) == 0
    assert time.monotonic() - started >= 0.3  # a pause, not a tight loop of retries
    assert flush_pending(store, embedder, writer, batch_max=96, pause_s=0, failure_pause_s=0, outage=outage) == 0
    assert store.count_pending_embeddings(REMOTE_ID) == 5  # left pending for the next flush
    failures = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(failures) == 1 and "5 memories stay pending" in failures[0].getMessage()  # logged once

    budget = embedder.provider.budget
    budget.limit = budget.used("embed")  # today's budget is used up
    assert flush_pending(store, embedder, writer, batch_max=96, pause_s=0, failure_pause_s=0, outage=outage) == 0
    budget.limit = 0
    assert flush_pending(store, embedder, writer, batch_max=96, pause_s=0, failure_pause_s=0, outage=outage) == 5
    assert store.count_pending_embeddings(REMOTE_ID) == 0 and len(writer.index.live_labels()) == 5
    assert any("answers again" in r.getMessage() for r in caplog.records)


def test_recall_is_keyword_only_while_the_provider_fails(remote_settings, store, fake):
    remember(store, 3)
    backfill(store, remote(remote_settings, store))
    recall = open_recall(remote_settings, store)
    try:
        fake.script(Reply(status=500))
        results = recall.recall("owner", "note number 1", touch=False)
        assert results and results[0].memory.content == "Owner wrote note number 1 about topic 1."
        assert all(r.vector == 0 for r in results)
    finally:
        recall.close()


def test_cli_backfill_prints_progress(remote_settings, store, fake):
    remember(store, 450)
    proc = twin_cli("backfill")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "backfill: 450 of 450 memories need a vector of remote:fake-embed"
    assert [line.split(",")[0] for line in lines[1:4]] == ["backfill: 200/450 embedded (44.4 %)",
                                                           "backfill: 400/450 embedded (88.9 %)",
                                                           "backfill: 450/450 embedded (100.0 %)"]
    assert lines[1].endswith("/s")
    assert lines[4].startswith("backfill: done, 450/450 memories have a vector of remote:fake-embed (450 embedded")
    assert store.count_pending_embeddings(REMOTE_ID) == 0
    diary = twin_cli("activity", "-n", "5").stdout
    assert "Backfilled 450 memories with the vectors of remote:fake-embed." in diary

    again = twin_cli("backfill")
    assert again.returncode == 0 and "nothing to do, all 450 memories" in again.stdout


def test_cli_backfill_reports_an_unreachable_provider(remote_settings, store, fake):
    remember(store, 3)
    fake.script(Reply(status=500))  # the probe of open()
    proc = twin_cli("backfill")
    assert proc.returncode == 1
    assert proc.stderr.startswith("twin: embedder: remote:fake-embed at ") and proc.stderr.count("\n") == 1


def test_known_dimension_spares_the_probe_so_an_exhausted_budget_does_not_stop_the_worker(remote_settings, store,
                                                                                         fake, monkeypatch):
    mid = store.insert_memory("owner", "fact", "Owner keeps bees.", "muse", 0.4)
    store.save_embeddings([mid], np.asarray([hashed_embedding("Owner keeps bees.")], dtype=np.float32), REMOTE_ID)
    monkeypatch.setenv("TWIN_LLM_DAILY_CALLS", "1")
    store.conn.execute("INSERT INTO provider_usage (day, tier, calls) VALUES (date('now'), 'cheap', 1)")
    embedder = make_embedder("openai", settings=load_settings(), store=store)
    embedder.open()  # no call: the dimension comes from the stored vector
    assert embedder.dim == EMBED_DIM and fake.requests == []
    with pytest.raises(BudgetExhausted):
        embedder.embed(["Owner keeps wasps."])
    embedder.close()
