"""Jobs an older twin left on a Redis it kept still run: those named `workers.jobs.<name>` (before the workers moved
under `twin.`) and those that carried the text itself (`workers.jobs.learn_text` …), by a real RQ worker against a
real Redis, through today's path (`twin.workers.legacy_jobs.LegacyNameJob`)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from conftest import run_worker, run_worker_process
from rq import Queue
from rq.job import Job

from twin import ingest
from twin.ingest import Ingest
from twin.workers.bus import EMBED_QUEUE, JOB_OPTIONS, LEARN_QUEUE
from twin.workers.jobs import JOBS
from twin.workers.legacy_jobs import LEGACY_JOBS, LegacyNameJob

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_old_packages(monkeypatch):
    """`import workers` fails in these tests as it does where twin alone is installed (an editable install made
    before the move may still map the old names to another checkout), so only the job class can run an old name."""
    for name in ("workers", "daemon", "connectors"):
        monkeypatch.setitem(sys.modules, name, None)


def test_no_top_level_workers_package_is_left():
    """The old names resolve through the job class, not through a package that keeps the old import name: the
    project installs `twin` alone."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["setuptools"]["packages"]["find"]["include"] == ["twin*"]
    assert not any((ROOT / name).exists() for name in ("workers", "daemon", "connectors"))


def test_every_old_name_resolves_to_todays_job_or_its_shim(redis):
    resolved = {name: LegacyNameJob.create(f"workers.jobs.{name}", connection=redis).func
                for name in [*JOBS, *LEGACY_JOBS]}
    assert resolved == {**JOBS, **LEGACY_JOBS}
    assert set(JOB_OPTIONS) <= set(JOBS)  # every name twin ever queued by the bus is among them
    today = LegacyNameJob.create("twin.workers.jobs.learn_items", connection=redis)
    assert today.func is JOBS["learn_items"]
    assert LegacyNameJob.create("twin.workers.legacy_jobs.learn_text", connection=redis).func is LEGACY_JOBS[
        "learn_text"]
    with pytest.raises(ValueError, match="learn_everything"):
        LegacyNameJob.create("workers.jobs.learn_everything", connection=redis).func  # noqa: B018


def test_old_jobs_queued_by_their_dotted_names_are_learned(twin_env, store, redis):
    """A staged item's `learn_items` job, a text-carrying `learn_text` and a `learn_batch`, all by the old names,
    are learned by the learn worker; the embedding flush by its old name embeds them."""
    [staged] = ingest.stage(store, [Ingest("owner", "telegram:7", "My sister Ilse keeps bees near Salzburg.", "text")])
    learn = Queue(LEARN_QUEUE, connection=redis)
    jobs = [learn.enqueue("workers.jobs.learn_items", kwargs={"being": "owner", "ids": [staged]}),
            learn.enqueue("workers.jobs.learn_text", kwargs={"being": "owner", "text": "I grow basil on the balcony.",
                                                             "source": "telegram:7"}),
            learn.enqueue("workers.jobs.learn_batch", kwargs={"being": "owner", "items": [
                ["My cousin Petra teaches chemistry in Graz.", "telegram:7", None]]})]
    run_worker("learn")
    assert [Job.fetch(j.id, connection=redis).get_status() for j in jobs] == ["finished"] * 3
    assert learn.failed_job_registry.count == 0 and learn.count == 0
    assert sorted(m.content for m in store.list_memories("owner")) == [
        "Owner grows basil on the balcony.", "Owner's cousin Petra teaches chemistry in Graz.",
        "Owner's sister Ilse keeps bees near Salzburg."]
    assert store.conn.execute("SELECT COUNT(*) FROM ingest_items").fetchone()[0] == 0
    embed = Queue(EMBED_QUEUE, connection=redis)
    embed.empty()  # the flush today's learn jobs asked for: only the old-named one below runs
    flush = embed.enqueue("workers.jobs.embed_flush")
    run_worker("embed")
    assert Job.fetch(flush.id, connection=redis).get_status() == "finished"
    assert store.counts("owner")["embedded"] == 3


def test_an_old_name_that_never_was_a_job_is_set_aside_and_the_queue_goes_on(twin_env, store, redis):
    learn = Queue(LEARN_QUEUE, connection=redis)
    bad = learn.enqueue("workers.jobs.learn_everything", kwargs={"being": "owner"})
    good = learn.enqueue("workers.jobs.learn_text", kwargs={"being": "owner", "text": "I play the cello on Sundays.",
                                                            "source": "telegram:7"})
    run_worker("learn")
    assert bad.id in learn.failed_job_registry.get_job_ids()
    assert Job.fetch(good.id, connection=redis).get_status() == "finished"
    assert [m.content for m in store.list_memories("owner")] == ["Owner plays the cello on Sundays."]


@pytest.mark.slow
def test_the_worker_process_runs_a_job_by_its_old_name(twin_env, store, redis):
    """`python -m twin.workers learn --burst`, the process the supervisor starts, runs `workers.jobs.learn_items`."""
    [staged] = ingest.stage(store, [Ingest("owner", "telegram:7", "I am learning Portuguese on the train.", "text")])
    job = Queue(LEARN_QUEUE, connection=redis).enqueue("workers.jobs.learn_items",
                                                       kwargs={"being": "owner", "ids": [staged]})
    run_worker_process("learn")
    assert Job.fetch(job.id, connection=redis).get_status() == "finished"
    assert [m.content for m in store.list_memories("owner")] == ["Owner is learning Portuguese on the train."]
