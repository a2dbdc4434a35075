"""The one way onto a queue: `Bus.enqueue(name, **kwargs)` by dotted name with the options of `JOB_OPTIONS`, and
the legacy job names an older twin queued, still run through today's path (real Redis, real RQ worker)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_worker
from rq import Queue
from rq.job import Job
from rq.utils import import_attribute

from workers import legacy_jobs
from workers.bus import EMBED_QUEUE, JOB_MODULE, JOB_OPTIONS, JOB_TIMEOUT_S, LEARN_QUEUE, LEARN_RETRY, Bus
from workers.jobs import JOBS

ROOT = Path(__file__).resolve().parents[1]


def test_every_queued_name_resolves_to_its_job_and_an_unknown_name_fails(redis):
    for name in JOB_OPTIONS:
        assert import_attribute(f"{JOB_MODULE}.{name}") is JOBS[name]
    with pytest.raises(KeyError):
        Bus(redis).enqueue("learn_everything", being="owner")
    assert Queue(LEARN_QUEUE, connection=redis).count == 0


def test_each_job_is_queued_with_the_options_of_the_table(redis):
    bus = Bus(redis)
    first = bus.enqueue("learn_items", being="owner", ids=[1, 2])
    reflect = bus.enqueue("reflect_being", being="owner")
    flush = bus.enqueue("embed_flush")
    checkpoint = bus.enqueue("index_checkpoint")
    dream = bus.enqueue("dream_being", being="owner")
    learn, embed = Queue(LEARN_QUEUE, connection=redis), Queue(EMBED_QUEUE, connection=redis)
    assert learn.job_ids == [reflect, first]  # reflection before a waiting learn job
    assert embed.job_ids == [checkpoint, flush, dream]  # a checkpoint at the front, a dream behind the flush
    job = Job.fetch(first, connection=redis)
    assert job.func_name == "workers.jobs.learn_items" and job.kwargs == {"being": "owner", "ids": [1, 2]}
    assert job.retries_left == LEARN_RETRY.max and job.timeout == JOB_TIMEOUT_S and job.failure_ttl == 30 * 86400
    assert job.description == "learn_items"
    reflected = Job.fetch(reflect, connection=redis)
    assert reflected.retries_left is None and reflected.failure_ttl == 7 * 86400  # not retried: the next tick is


def test_the_bus_does_not_import_the_jobs():
    """`workers.jobs` imports the bus (and the whole core); the bus names jobs by string, so a connector or the CLI
    that only queues work never loads the learn path (the cycle bus <-> jobs is gone)."""
    code = "import sys, workers.bus; print('workers.jobs' in sys.modules, 'twin.learn.learning' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_old_jobs_by_their_dotted_names_run_the_legacy_shims(twin_env, store, redis):
    """A Redis kept from a twin that queued the text itself holds jobs named `workers.jobs.learn_text`,
    `workers.jobs.learn_document` …: they resolve to the shims (never to `twin.learn.learning`'s functions of the same
    name) and learn through `learn_items`."""
    for name in legacy_jobs.LEGACY_JOBS:
        assert import_attribute(f"workers.jobs.{name}") is legacy_jobs.LEGACY_JOBS[name]
    queue = Queue(LEARN_QUEUE, connection=redis)
    queue.enqueue("workers.jobs.learn_text", kwargs={"being": "owner", "text": "I grow basil on the balcony.",
                                                     "source": "telegram:7"})
    queue.enqueue("workers.jobs.learn_batch", kwargs={"being": "owner", "items": [
        ["My cousin Petra teaches chemistry in Graz.", "telegram:7", None]]})
    run_worker("learn")
    assert sorted(m.content for m in store.list_memories("owner")) == [
        "Owner grows basil on the balcony.", "Owner's cousin Petra teaches chemistry in Graz."]
    assert store.conn.execute("SELECT COUNT(*) FROM ingest_items").fetchone()[0] == 0
