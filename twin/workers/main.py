"""Worker processes: `learn` (a `SimpleWorker`), `embed` (one `SimpleWorker` that loads the model once and
is the only writer of the index; LIBRARY_NOTES §1 recommendation) and `scheduler` (RQ's scheduler, for
retries with backoff)."""

from __future__ import annotations

import argparse
import logging
import os
import sqlite3

from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry
from rq import Queue, SimpleWorker
from rq.intermediate_queue import IntermediateQueue
from rq.scheduler import RQScheduler

from twin.activity import Activity
from twin.exceptions import SettingsError, TwinError
from twin.llm.provider import provider_for
from twin.logs import configure_logging
from twin.outside_text import escape_controls
from twin.settings import Settings, load_settings
from twin.startup_checks import startup_warnings
from twin.store import Store
from twin.wiring import open_embedder, open_index_writer
from twin.workers.bus import EMBED_QUEUE, LEARN_QUEUE, Bus
from twin.workers.context import BadInput, WorkerContext, install
from twin.workers.legacy_jobs import LegacyNameJob

log = logging.getLogger("twin.worker")

MAINTENANCE_INTERVAL_S = 60
"""RQ maintenance (abandoned-job cleanup) every minute instead of 10 (LIBRARY_NOTES §1)."""


def connect_redis(settings: Settings) -> Redis:
    """A Redis client for `settings` that retries transient connection errors with capped backoff."""
    return Redis.from_url(settings.effective_redis_url, retry=Retry(ExponentialBackoff(cap=5, base=0.2), 8),
                          retry_on_error=[RedisConnectionError, RedisTimeoutError], health_check_interval=30)


def set_aside_bad_input(job, exc_type, exc_value, tb) -> bool:
    """RQ exception handler: log one line; a `BadInput` job goes to the failed registry without retries."""
    if exc_type is not None and issubclass(exc_type, BadInput):
        job.retries_left = 0
        log.error("worker: set aside job %s (%s): %s", job.id, job.description, exc_value)
    else:
        log.error("worker: job %s (%s) failed, %s retries left: %s: %s", job.id, job.description,
                  job.retries_left, getattr(exc_type, "__name__", exc_type), exc_value)
    return True


def recover_orphaned_jobs(queue: Queue) -> int:
    """Put back at the front of `queue` the jobs a previous run of this worker took but never finished.

    RQ moves a dequeued job to an intermediate list, then to the started registry; a worker killed
    (SIGKILL) or stopped between the two leaves it there until a maintenance pass minutes later fails it.
    twin runs exactly one worker per queue, so at start every such job is an orphan; jobs are idempotent,
    so running one again is safe. Returns how many were requeued.
    """
    registry = queue.started_job_registry
    intermediate = IntermediateQueue(queue.key, connection=queue.connection)
    started = {registry.parse_job_id(entry): entry for entry in queue.connection.zrange(registry.key, 0, -1)}
    requeued = 0
    for job_id in dict.fromkeys([*intermediate.get_job_ids(), *started]):
        intermediate.remove(job_id)
        if job_id in started:
            queue.connection.zrem(registry.key, started[job_id])
        job = queue.fetch_job(job_id)
        if job is not None:
            queue.enqueue_job(job, at_front=True)
            requeued += 1
    if requeued:
        log.warning("worker: requeued %d job(s) a previous run of %s left unfinished", requeued, queue.name)
    return requeued


def serve(queue: str, role: str, redis: Redis, burst: bool) -> None:
    """Requeue what a previous run of this worker left unfinished, then serve `queue` with an in-process
    `SimpleWorker` named `twin-ROLE-PID` until stopped (or, with `burst`, until the queue is empty).

    One queue per worker: only then does RQ dequeue through an intermediate list (BLMOVE) that
    `recover_orphaned_jobs` can read. Jobs load through `LegacyNameJob`, so the names an older twin queued run too.
    """
    recover_orphaned_jobs(Queue(queue, connection=redis))
    worker = SimpleWorker([queue], connection=redis, name=f"twin-{role}-{os.getpid()}", job_class=LegacyNameJob,
                          exception_handlers=[set_aside_bad_input], maintenance_interval=MAINTENANCE_INTERVAL_S)
    worker.work(burst=burst, logging_level="WARNING")


def run_learn(settings: Settings, redis: Redis, burst: bool) -> int:
    """The learn worker: an in-process `SimpleWorker` with one store connection (and, when configured, one
    model provider client) for all its jobs; reflection jobs are queued at the front of its queue.

    Offline extraction is pure Python with bounded input and model calls are bounded by the client's timeout
    and retries, so the fork-per-job `Worker` (12 ms a job, a new SQLite connection each time; LIBRARY_NOTES §1)
    bought no safety worth a 6x lower ingest rate; a job that hangs is still stopped by RQ's timeout (SIGALRM
    in the main thread).
    """
    store = Store(settings.db_path).open()
    try:
        install(WorkerContext(settings=settings, redis=redis, store=store, provider=provider_for(settings, store)))
        serve(LEARN_QUEUE, "learn", redis, burst)  # reflection jobs go to the front of this same queue
    finally:
        store.close()
    return 0


def run_embed(settings: Settings, redis: Redis, burst: bool) -> int:
    """The embedding worker: load the model once, open the index, queue a flush of what is pending, serve jobs.

    Teardown (a final checkpoint) is in `finally`, so a SIGTERM (warm stop: the job in hand finishes)
    always leaves a fresh checkpoint.
    """
    store = Store(settings.db_path).open()
    activity = Activity(store, settings.being)
    writer = None
    try:
        embedder = open_embedder(settings, store)
        if embedder is not None:
            writer = open_index_writer(settings, store, embedder, activity)
            pending = store.count_pending_embeddings(embedder.model_id)
            if pending:
                log.info("embed: %d memories wait for a vector since the last run; flushing", pending)
                Bus(redis).enqueue("embed_flush")
        install(WorkerContext(settings=settings, redis=redis, store=store, embedder=embedder, writer=writer,
                              activity=activity))
        serve(EMBED_QUEUE, "embed", redis, burst)
    finally:
        if writer is not None:
            writer.catch_up()
            writer.checkpoint()
        store.close()
    return 0


def run_scheduler(settings: Settings, redis: Redis, burst: bool) -> int:
    """RQ's scheduler, which moves jobs whose retry delay has passed back onto their queue, as its own
    supervised process (RQ would fork it from a worker, where a dying worker leaves it orphaned)."""
    scheduler = RQScheduler([LEARN_QUEUE, EMBED_QUEUE], connection=redis, interval=1)
    scheduler.acquire_locks()
    if burst:
        scheduler.enqueue_scheduled_jobs()
        scheduler.release_locks()
        return 0
    scheduler.work()
    return 0


def record_start_failure(settings: Settings, line: str) -> None:
    """Put why a worker cannot run in the diary as a `degraded` line, unless the newest `degraded` line already
    says it (the supervisor restarts the worker with backoff; the diary should not repeat itself every 30 s).
    Never raises: the store may be what failed."""
    try:
        with Store(settings.db_path) as store:
            last = [a.text for a in Activity(store, settings.being).recent(20) if a.kind == "degraded"][-1:]
            if last != [line]:
                Activity(store, settings.being).record("degraded", line)
    except (TwinError, sqlite3.Error, OSError) as exc:
        log.warning("worker: could not write the reason to the diary (%s)", exc)


def main(argv: list[str] | None = None) -> int:
    """Parse `learn|embed [--burst]`, load settings (exit 2 on a bad one) and run the worker."""
    parser = argparse.ArgumentParser(prog="python -m twin.workers", description=__doc__)
    parser.add_argument("role", choices=("learn", "embed", "scheduler"))
    parser.add_argument("--burst", action="store_true", help="exit when the queue is empty (tests)")
    args = parser.parse_args(argv)
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(escape_controls(f"twin: {exc}"), flush=True)
        return 2
    configure_logging(settings.log_level, settings.secret_values)
    os.umask(0o077)
    for line in startup_warnings(settings):  # twin's dirs made 0700; what stays open is said (invariant 8)
        log.warning("worker %s: %s", args.role, line)
    redis = connect_redis(settings)
    try:
        run = {"learn": run_learn, "embed": run_embed, "scheduler": run_scheduler}[args.role]
        return run(settings, redis, args.burst)
    except TwinError as exc:
        log.error("worker %s: %s", args.role, exc)
        record_start_failure(settings, f"The {args.role} worker cannot run: {exc}")
        return 1
    except (RedisConnectionError, RedisTimeoutError) as exc:  # one line; the supervisor restarts us with backoff
        log.error("worker %s: Redis at %s is not reachable (%s)", args.role, settings.effective_redis_url, exc)
        return 1
