"""The embedding worker lets go of its model and index while idle and opens them again for new work
(`twin.workers.resting`): real SQLite, the real model and hnswlib index, a real worker process over the test Redis."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import push_text, run_worker

from twin.activity import Activity
from twin.store import Store
from twin.vectors.embedder import model_id_of
from twin.vectors.embedding_flush import flush_pending
from twin.vectors.index import VectorIndex
from twin.wiring import open_embedder, open_index_writer
from twin.workers.resting import RestingVectors, release_heap

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ["Owner keeps the spare bike key in the blue tin.", "Owner's dentist is Dr. Amara Osei in Leith.",
         "Owner plays five-a-side football on Thursdays.", "Owner bought a cast-iron pan in Porto."]


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def opened(twin_paths, store):
    """`(RestingVectors, clock, calls)`: the worker's own opening (`open_embedder`, `open_index_writer`) over a
    store with TEXTS, embedded; `calls` counts the openings."""
    activity = Activity(store, twin_paths.being)
    for text in TEXTS:
        store.insert_memory(twin_paths.being, "fact", text, "muse", 0.5)
    calls = []

    def open_both():
        calls.append(1)
        embedder = open_embedder(twin_paths, store)
        return embedder, open_index_writer(twin_paths, store, embedder, activity)

    clock = Clock()
    vectors = RestingVectors(open_both, rest_after_s=60, clock=clock)
    with vectors.held() as (embedder, writer):
        flush_pending(store, embedder, writer, 96, 0)
    yield vectors, clock, calls
    vectors.close()


def saved_labels(settings, store) -> set[int]:
    """The labels of the index as saved on disk (a fresh load of the checkpoint)."""
    index = VectorIndex.for_settings(settings, model_id_of(settings), 384)
    index.load()
    return index.live_labels()


def test_rests_only_after_the_idle_time_and_saves_every_vector_first(opened, twin_paths, store):
    vectors, clock, _ = opened
    clock.now += 59
    assert not vectors.rest_if_idle() and vectors.is_open
    clock.now += 2
    assert vectors.rest_if_idle()
    assert not vectors.is_open and vectors.rests == 1
    ids = {row[0] for row in store.conn.execute("SELECT id FROM memories")}
    assert saved_labels(twin_paths, store) == ids  # the checkpoint holds every vector: nothing lost by resting
    assert not vectors.rest_if_idle()  # nothing left to let go


def test_the_next_job_opens_them_again_with_the_same_answers(opened, twin_paths, store):
    vectors, clock, calls = opened
    with vectors.held() as (embedder, writer):
        query = embedder.embed_queries(["where is the bike key?"])[0]
        before = writer.index.search(query, 3)
    clock.now += 61
    assert vectors.rest_if_idle()
    new = store.insert_memory(twin_paths.being, "fact", "Owner's bike key ring is shaped like a fish.", "muse", 0.5)
    with vectors.held() as (embedder, writer):
        assert len(calls) == 2
        flush_pending(store, embedder, writer, 96, 0)
        after = writer.index.search(query, 5)
    assert [m for m, _ in before] == [m for m, _ in after if m != new][:3]
    assert new in {m for m, _ in after}


def test_a_forget_while_resting_leaves_the_saved_index(opened, twin_paths, store):
    vectors, clock, _ = opened
    clock.now += 61
    assert vectors.rest_if_idle()
    gone = store.conn.execute("SELECT id FROM memories WHERE content LIKE '%dentist%'").fetchone()[0]
    with store.atomic():
        store.delete_memories([gone])
    assert gone in saved_labels(twin_paths, store)
    with vectors.held() as (_, writer):  # what the index_checkpoint job a forget queues does
        writer.checkpoint()
    assert gone not in saved_labels(twin_paths, store)


def test_a_resting_worker_answers_a_checkpoint_request_without_opening_when_nothing_changed(opened, twin_paths,
                                                                                           store):
    vectors, clock, calls = opened
    assert not vectors.saved_is_whole(store)  # open: a checkpoint job does its work
    clock.now += 61
    assert vectors.rest_if_idle()
    assert vectors.saved_is_whole(store) and len(calls) == 1  # the periodic request: nothing to open for
    gone = store.conn.execute("SELECT id FROM memories WHERE content LIKE '%football%'").fetchone()[0]
    with store.atomic():
        store.delete_memories([gone])
    assert not vectors.saved_is_whole(store)  # a forgotten vector: the job opens the index and scrubs it


@pytest.mark.parametrize("damage", ["truncated", "deleted"])
def test_a_saved_index_damaged_while_resting_is_not_whole_and_the_job_rebuilds_it(opened, twin_paths, store, damage):
    """A truncated or deleted index file stayed so while the worker rested (the periodic request was answered
    "whole" from memory): the request now opens the index, which rebuilds it from SQLite (a breaker run)."""
    vectors, clock, calls = opened
    clock.now += 61
    assert vectors.rest_if_idle() and vectors.saved_is_whole(store)
    path = twin_paths.index_path
    if damage == "truncated":
        path.write_bytes(b"")
    else:
        path.unlink()
    assert not vectors.saved_is_whole(store)
    with vectors.held(use=False) as (_, writer):  # what index_checkpoint does then
        writer.checkpoint()
    ids = {row[0] for row in store.conn.execute("SELECT id FROM memories")}
    assert len(calls) == 2 and saved_labels(twin_paths, store) == ids


def test_housekeeping_more_often_than_the_rest_time_does_not_keep_it_awake(opened, twin_paths, store):
    """A checkpoint every 20 s (the supervisor's request) and a dream cycle do not restart the 60 s idle time; a
    job that embeds does."""
    vectors, clock, _ = opened
    for _ in range(2):
        clock.now += 20
        with vectors.held(use=False) as (_, writer):  # what index_checkpoint does while open
            writer.checkpoint()
        assert not vectors.rest_if_idle()
    clock.now += 21
    assert vectors.rest_if_idle()
    with vectors.held() as _:  # a real job: awake again for the whole rest time
        pass
    clock.now += 59
    assert not vectors.rest_if_idle()


def test_no_rest_while_a_job_holds_them(opened):
    vectors, clock, _ = opened
    inside, leave = threading.Event(), threading.Event()

    def job():
        with vectors.held():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=job)
    thread.start()
    inside.wait(10)
    clock.now += 3600
    assert not vectors.rest_if_idle() and vectors.is_open
    leave.set()
    thread.join()
    assert not vectors.rest_if_idle()  # the job just ended: idle time counts from its end
    clock.now += 61
    assert vectors.rest_if_idle()


def test_zero_never_rests(twin_paths, store):
    vectors = RestingVectors(lambda: (_ for _ in ()).throw(AssertionError("not opened")), rest_after_s=0)
    vectors.start()
    assert vectors._thread is None and not vectors.rest_if_idle()


def test_release_heap_is_answered():
    assert release_heap() in (True, False)
    assert isinstance(release_heap(), bool)


def vm_rss_mib(pid: int, field: str = "VmRSS") -> float:
    """The process's `field` of /proc/PID/status (VmRSS now, VmHWM its peak) in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def status_of(settings, redis) -> dict:
    """`twin.health.status`'s report, as `twin status` makes it."""
    from twin.health import status
    from twin.workers.bus import Bus

    with Store(settings.db_path) as store:
        return status(settings, store, Bus(redis))


def test_an_idle_worker_process_lets_go_and_learns_again(twin_env, redis, tmp_path):
    """A real `python -m twin.workers embed` with `TWIN_EMBED_REST_S=2`: it embeds, rests (its RSS falls by at least
    the model's size), and a text learned afterwards is embedded and indexed all the same."""
    store = Store(twin_env.db_path).open()
    log = tmp_path / "embed.log"
    env = {**os.environ, "TWIN_EMBED_REST_S": "2", "TWIN_LOG_LEVEL": "info"}
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "twin.workers", "embed"], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        push_text(store, redis, twin_env.being, "I keep the spare bike key in the blue tin.", "muse")
        run_worker("learn")
        deadline = time.monotonic() + 60
        while store.conn.execute("SELECT COUNT(*) FROM memory_embeddings").fetchone()[0] < 1:
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.1)
        def resting() -> bool:  # its last word is a rest (it may also have rested before the text came)
            said = log.read_text()
            return said.rfind("let go of the model and the index") > said.rfind("opened again for new work")

        while not resting():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.2)
        working, rested = vm_rss_mib(proc.pid, "VmHWM"), vm_rss_mib(proc.pid)  # its peak while working, now
        assert working - rested > 50, (working, rested)  # the model session alone is ~100 MiB
        said = status_of(twin_env, redis)
        assert said.get("embedding_worker", {}).get("state") == "resting", said  # twin status says it rests
        push_text(store, redis, twin_env.being, "My dentist is Dr. Amara Osei in Leith.", "muse")
        run_worker("learn")
        while store.conn.execute("SELECT COUNT(*) FROM memory_embeddings").fetchone()[0] < 2:
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.1)
        assert "embedding_worker" not in status_of(twin_env, redis)  # open again for the new text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()
        assert "opened again for new work" in log.read_text()
        ids = {row[0] for row in store.conn.execute("SELECT id FROM memories")}
        assert len(ids) == 2 and saved_labels(twin_env, store) == ids  # the warm stop saved both
    finally:
        if proc.poll() is None:
            proc.kill()
        store.close()
