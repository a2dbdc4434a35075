"""Real RQ workers against a private Redis: bad input is set aside, orphaned jobs are recovered."""

from __future__ import annotations

from conftest import drain, run_worker
from rq import Queue
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job

from workers.bus import LEARN_QUEUE, LEARN_RETRY, Bus
from workers.jobs import JOBS


def test_bad_input_is_set_aside_and_the_queue_goes_on(twin_env, store, redis):
    queue = Queue(LEARN_QUEUE, connection=redis)
    bad = queue.enqueue(JOBS["learn_text"], kwargs={"being": "owner", "text": 12345, "source": "muse"},
                        retry=LEARN_RETRY)
    Bus(redis).push_text("owner", "I keep my climbing shoes in the hallway cupboard.", "muse")
    proc = run_worker("learn")
    assert "set aside job" in proc.stdout + proc.stderr
    assert bad.id in queue.failed_job_registry.get_job_ids()
    assert Job.fetch(bad.id, connection=redis).retries_left == 0  # not retried: it can never succeed
    assert len(queue.scheduled_job_registry) == 0
    assert [m.content for m in store.list_memories("owner")] == [
        "Owner keeps their climbing shoes in the hallway cupboard."]


def test_job_left_in_the_intermediate_queue_by_a_dead_worker_is_run(twin_env, store, redis):
    bus = Bus(redis)
    bus.push_text("owner", "I am training for the Lisbon half marathon in March.", "muse")
    queue = Queue(LEARN_QUEUE, connection=redis)
    # what a worker does when it dequeues a job; it then dies before marking the job started
    redis.lmove(queue.key, IntermediateQueue(queue.key, connection=redis).key)
    assert queue.count == 0
    run_worker("learn")
    assert store.counts("owner")["memories"] == 1
    assert IntermediateQueue(queue.key, connection=redis).get_job_ids() == []


def test_job_left_started_by_a_killed_worker_is_run(twin_env, store, redis):
    bus = Bus(redis)
    job_id = bus.push_text("owner", "My neighbour Olga waters the plants when I travel.", "muse")
    queue = Queue(LEARN_QUEUE, connection=redis)
    job = queue.fetch_job(job_id)
    redis.lrem(queue.key, 1, job_id)  # the worker took it ...
    redis.zadd(queue.started_job_registry.key, {f"{job.id}:execution-1": 9e9})  # ... started it, and was SIGKILLed
    run_worker("learn")
    assert store.counts("owner")["memories"] == 1
    assert job_id not in queue.started_job_registry.get_job_ids(cleanup=False)


def test_retried_learning_never_duplicates(twin_env, store, redis):
    bus = Bus(redis)
    for _ in range(3):  # at-least-once delivery: the same job content arriving three times
        bus.push_text("owner", "I switched from Android to an iPhone last week.", "telegram:7")
    drain()
    memories = store.list_memories("owner")
    assert len(memories) == 1 and memories[0].hits == 2
    assert store.counts("owner")["embedded"] == 1


def test_batched_push_learns_every_item_and_sets_aside_nothing(twin_env, store, redis):
    items = [(f"I planted {n} tulip bulbs along the north fence this autumn.", "telegram:9", None) for n in range(120)]
    items.append((12345, "telegram:9", None))  # one bad item does not sink its batch
    job_ids = Bus(redis).push_texts("owner", items)
    assert len(job_ids) == 3  # 50 a job
    drain()
    assert store.counts("owner")["memories"] == 120 and store.counts("owner")["embedded"] == 120
    lines = [r[0] for r in store.conn.execute("SELECT text FROM activity")]
    assert sum(int(t.split()[1]) for t in lines if t.startswith("Learned")) == 120
    assert Queue(LEARN_QUEUE, connection=redis).failed_job_registry.count == 0
