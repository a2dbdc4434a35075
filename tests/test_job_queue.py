"""The one way onto a queue: `Bus.enqueue(name, **kwargs)` by dotted name with the options of `JOB_OPTIONS` (the
names an older twin queued: tests/test_legacy_jobs.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from rq import Queue
from rq.job import Job
from rq.utils import import_attribute

from twin.workers.bus import EMBED_QUEUE, JOB_MODULE, JOB_OPTIONS, JOB_TIMEOUT_S, LEARN_QUEUE, LEARN_RETRY, Bus
from twin.workers.jobs import JOBS

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
    assert job.func_name == "twin.workers.jobs.learn_items" and job.kwargs == {"being": "owner", "ids": [1, 2]}
    assert job.retries_left == LEARN_RETRY.max and job.timeout == JOB_TIMEOUT_S and job.failure_ttl == 30 * 86400
    assert job.description == "learn_items"
    reflected = Job.fetch(reflect, connection=redis)
    assert reflected.retries_left is None and reflected.failure_ttl == 7 * 86400  # not retried: the next tick is


def test_the_bus_does_not_import_the_jobs():
    """`twin.workers.jobs` imports the bus (and the whole core); the bus names jobs by string, so a connector or the CLI
    that only queues work never loads the learn path (the cycle bus <-> jobs is gone)."""
    code = ("import sys, twin.workers.bus; "
            "print('twin.workers.jobs' in sys.modules, 'twin.learn.learning' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
