"""Real RQ workers against a private Redis: bad input is set aside, orphaned jobs are recovered."""

from __future__ import annotations

import pytest
from conftest import drain, push_text, run_worker, run_worker_process
from erasure import decompressed_streams
from rq import Queue
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job

from twin.workers.bus import LEARN_QUEUE, LEARN_RETRY, Bus
from twin.workers.jobs import JOBS
from twin.workers.legacy_jobs import LEGACY_JOBS


@pytest.mark.slow
def test_bad_input_is_set_aside_and_the_queue_goes_on(twin_env, store, redis):
    queue = Queue(LEARN_QUEUE, connection=redis)
    bad = queue.enqueue(LEGACY_JOBS["learn_text"], kwargs={"being": "owner", "text": 12345, "source": "muse"},
                        retry=LEARN_RETRY)
    push_text(store, redis, "owner", "I keep my climbing shoes in the hallway cupboard.", "muse")
    proc = run_worker_process("learn")  # the worker's process, its logging included (`python -m twin.workers`)
    assert "set aside job" in proc.stdout + proc.stderr
    assert bad.id in queue.failed_job_registry.get_job_ids()
    assert Job.fetch(bad.id, connection=redis).retries_left == 0  # not retried: it can never succeed
    assert len(queue.scheduled_job_registry) == 0
    assert [m.content for m in store.list_memories("owner")] == [
        "Owner keeps their climbing shoes in the hallway cupboard."]


def test_job_left_in_the_intermediate_queue_by_a_dead_worker_is_run(twin_env, store, redis):
    push_text(store, redis, "owner", "I am training for the Lisbon half marathon in March.", "muse")
    queue = Queue(LEARN_QUEUE, connection=redis)
    # what a worker does when it dequeues a job; it then dies before marking the job started
    redis.lmove(queue.key, IntermediateQueue(queue.key, connection=redis).key)
    assert queue.count == 0
    run_worker("learn")
    assert store.counts("owner")["memories"] == 1
    assert IntermediateQueue(queue.key, connection=redis).get_job_ids() == []


def test_job_left_started_by_a_killed_worker_is_run(twin_env, store, redis):
    job_id = push_text(store, redis, "owner", "My neighbour Olga waters the plants when I travel.", "muse")
    queue = Queue(LEARN_QUEUE, connection=redis)
    job = queue.fetch_job(job_id)
    redis.lrem(queue.key, 1, job_id)  # the worker took it ...
    redis.zadd(queue.started_job_registry.key, {f"{job.id}:execution-1": 9e9})  # ... started it, and was SIGKILLed
    run_worker("learn")
    assert store.counts("owner")["memories"] == 1
    assert job_id not in queue.started_job_registry.get_job_ids(cleanup=False)


def test_retried_learning_never_duplicates(twin_env, store, redis):
    for _ in range(3):  # the same text handed over three times: learned once, then reinforced
        push_text(store, redis, "owner", "I switched from Android to an iPhone last week.", "telegram:7")
    drain()
    memories = store.list_memories("owner")
    assert len(memories) == 1 and memories[0].hits == 2
    assert store.counts("owner")["embedded"] == 1


def test_a_job_run_twice_learns_its_items_once(twin_env, store, redis):
    """At-least-once delivery: the same learn job arriving twice (a retry after a crash) redoes nothing, because
    each staged item is consumed in the transaction that stores its memories."""
    job_id = push_text(store, redis, "owner", "My bike lock code hint is the year I moved.", "telegram:7")
    job = Job.fetch(job_id, connection=redis)
    Queue(LEARN_QUEUE, connection=redis).enqueue(JOBS["learn_items"], kwargs=job.kwargs)
    drain()
    [memory] = store.list_memories("owner")
    assert memory.hits == 0  # learned once, never reinforced by the duplicate
    assert store.conn.execute("SELECT COUNT(*) FROM ingest_items").fetchone()[0] == 0


def test_redis_payloads_carry_ids_not_text(twin_env, store, redis):
    push_text(store, redis, "owner", "The spare key hides under the blue flowerpot by the shed.", "telegram:7")
    dump = b"".join(redis.dump(key) or b"" for key in redis.keys("*"))
    assert b"flowerpot" not in dump and not any(b"flowerpot" in x for x in decompressed_streams(dump))
    drain()
    assert "flowerpot" in store.list_memories("owner")[0].content


def test_batched_push_learns_every_item_and_sets_aside_nothing(twin_env, store, redis):
    from twin import ingest
    from twin.ingest import Ingest

    items = [Ingest("owner", "telegram:9", f"I planted {n} tulip bulbs along the north fence this autumn.")
             for n in range(120)]
    ids = ingest.stage(store, items)
    assert Bus(redis).push(store, ids, "owner", "text")
    assert Queue(LEARN_QUEUE, connection=redis).count == 3  # 50 a job
    drain()
    assert store.counts("owner")["memories"] == 120 and store.counts("owner")["embedded"] == 120
    lines = [r[0] for r in store.conn.execute("SELECT text FROM activity")]
    assert sum(int(t.split()[1]) for t in lines if t.startswith("Learned")) == 120
    assert Queue(LEARN_QUEUE, connection=redis).failed_job_registry.count == 0
    assert ingest.counts(store) == {"held": 0, "ready": 0, "queued": 0, "failed": 0}


def test_staged_items_whose_job_redis_lost_or_failed_are_accounted_for(twin_env, store, redis):
    """The supervisor's sweep (`Bus.queue_ready`, `Bus.requeue_lost`): items Redis never took are queued; items of a
    job Redis no longer knows are queued again; items of a job that failed for good are marked failed, not looped."""
    from twin import ingest
    from twin.ingest import Ingest

    bus = Bus(redis)
    ingest.stage(store, [Ingest("owner", "muse", "The gas meter is read in January.")])  # Redis never took it
    lost = ingest.stage(store, [Ingest("owner", "muse", "The water meter is in the cellar.")])
    ingest.mark_queued(store, lost, "job-that-redis-lost")
    assert bus.queue_ready(store) == 1
    assert bus.requeue_lost(store, "9999-01-01T00:00:00Z") == (1, 0)
    assert ingest.counts(store)["ready"] == 1 and bus.queue_ready(store) == 1
    doomed = ingest.stage(store, [Ingest("owner", "muse", "The attic hatch sticks in winter.")])
    [(_, job_id)] = bus.enqueue_items("owner", doomed, "text")
    ingest.mark_queued(store, doomed, job_id)
    redis.lrem(Queue(LEARN_QUEUE, connection=redis).key, 0, job_id)  # what RQ does when its retries are used up
    redis.hset(f"rq:job:{job_id}", "status", "failed")
    assert bus.requeue_lost(store, "9999-01-01T00:00:00Z") == (0, 1)
    assert ingest.counts(store)["failed"] == 1
    drain()
    assert sorted(m.content for m in store.list_memories("owner")) == [
        "The gas meter is read in January.", "The water meter is in the cellar."]
    assert ingest.counts(store)["failed"] == 1


def test_a_worker_stops_within_seconds_when_its_command_listener_has_already_been_unsubscribed(redis):
    """A warm stop whose UNSUBSCRIBE the listener thread answered before it was told to stop (a race seen in 1
    stop of 3 under load) ends in about `PUBSUB_WAIT_S`, not RQ's 60 s wait."""
    import threading
    import time

    from twin.workers.main import PUBSUB_WAIT_S, TwinWorker

    worker = TwinWorker([Queue(LEARN_QUEUE, connection=redis)], connection=redis, name="twin-learn-race")
    worker.subscribe()
    worker.pubsub.unsubscribe()  # the listener reads the reply and is left waiting for a subscription
    deadline = time.monotonic() + 5
    while worker.pubsub.subscribed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not worker.pubsub.subscribed
    stopping = threading.Thread(target=worker.unsubscribe, daemon=True)
    started = time.monotonic()
    stopping.start()
    stopping.join(10)
    assert not stopping.is_alive(), "the listener held the stop"
    assert time.monotonic() - started < PUBSUB_WAIT_S + 2
