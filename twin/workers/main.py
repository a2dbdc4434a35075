"""Worker processes: `learn` (a `SimpleWorker`), `embed` (one `SimpleWorker` that loads the model once and
is the only writer of the index; LIBRARY_NOTES §1 recommendation) and `scheduler` (RQ's scheduler, for
retries with backoff)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sqlite3
import sys
import time

from redis import Redis
from redis.exceptions import AuthenticationError, NoPermissionError, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq import Queue, SimpleWorker
from rq.exceptions import StopRequested
from rq.intermediate_queue import IntermediateQueue
from rq.scheduler import RQScheduler
from tenacity import Retrying, retry_if_exception, wait_exponential

from twin.activity import Activity
from twin.exceptions import ForeignStore, RedisRefused, SettingsError, TwinError
from twin.llm.provider import provider_for
from twin.logs import configure_logging
from twin.memory import utc_now
from twin.outside_text import escape_controls
from twin.redis_client import check_access, open_redis, refusal, untrusted_certificate
from twin.settings import Settings, load_settings
from twin.startup_checks import startup_warnings
from twin.store import Store
from twin.store.state import store_identity
from twin.workers.bus import EMBED_QUEUE, LEARN_QUEUE, STORE_KEY, Bus
from twin.workers.context import BadInput, WorkerContext, install
from twin.workers.legacy_jobs import LegacyNameJob
from twin.workers.refusal import REFUSAL_BACKOFF_MAX_S, REFUSAL_BACKOFF_MIN_S, is_write_refusal, refusal_words

log = logging.getLogger("twin.worker")

MAINTENANCE_INTERVAL_S = 60
"""RQ maintenance (abandoned-job cleanup) every minute instead of 10 (LIBRARY_NOTES §1)."""


def connect_redis(settings: Settings) -> Redis:
    """A Redis client for `settings` that retries transient connection errors with capped backoff, never a refused
    login (`twin.redis_client.open_redis`)."""
    return open_redis(settings, retry=True)


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


class RefusalWithoutTraceback(logging.Filter):
    """A log-handler filter for the worker processes: a record logged while a Redis write refusal is handled (RQ's
    "found an unhandled exception, quitting..." with its traceback, the scheduler's "raised an exception" with the
    traceback in its text) becomes one line naming the refusal (`refusal_words`), since `patiently` waits it out:
    nothing is lost, and a journal full of tracebacks would say otherwise. Other records pass unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else sys.exc_info()[1]
        if record.levelno >= logging.ERROR and exc is not None and is_write_refusal(exc):
            record.msg = f"{record.getMessage().splitlines()[0]} ({refusal_words(exc)}; waiting it out)"
            record.args, record.exc_info, record.exc_text = (), None, None
        return True


PUBSUB_WAIT_S = 1
"""How long the worker's command listener (RQ's pubsub thread) waits for a message before it looks whether it should
stop; RQ's 60 s, with redis-py 8's `PubSubWorkerThread.stop()` joining the thread, held a warm stop up to 60 s
whenever the unsubscribe was answered before the stop was asked (seen in 1 stop of 3 under load: the supervisor
killed the worker after its grace)."""


class TwinWorker(SimpleWorker):
    """RQ's in-process `SimpleWorker` whose command listener wakes every `PUBSUB_WAIT_S`, so a stop takes at most
    that long once the job in hand is done. RQ's commands (`send_shutdown_command`, `send_stop_job_command`) work
    as before."""

    def subscribe(self) -> None:
        """Subscribe to this worker's command channel, listening in a daemon thread (RQ's `subscribe`, shorter
        wait)."""
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(sleep_time=PUBSUB_WAIT_S, daemon=True,
                                                       exception_handler=self._pubsub_exception_handler)


def _stop_requested(signum, frame) -> None:
    raise StopRequested()


def wait_unless_stopped(seconds: float) -> None:
    """Sleep `seconds` between two tries of `patiently`, unless the process is told to stop (SIGTERM, SIGINT: the
    supervisor's stop, Ctrl-C), which raises RQ's `StopRequested` at once: the RQ worker or scheduler whose own
    handlers would catch the signal is gone, so without this a stop met during the wait was a traceback out of the
    sleep, or (the scheduler) no stop at all until the supervisor killed it. The handler it installs raises from
    wherever the signal lands until RQ's worker or scheduler installs its own, so a stop met after the last
    refused try but before RQ took over stops too (main() turns it into exit 0); it takes no lock, so it cannot
    deadlock with the code it interrupts. Only the main thread may do this."""
    signal.signal(signal.SIGTERM, _stop_requested)
    signal.signal(signal.SIGINT, _stop_requested)
    time.sleep(seconds)


def patiently(what: str) -> Retrying:
    """A tenacity `Retrying` that runs its block again for as long as Redis refuses writes (`MISCONF`, `OOM`,
    `READONLY`, `NOREPLICAS`: `twin.workers.refusal.is_write_refusal`), with backoff from
    `REFUSAL_BACKOFF_MIN_S` doubling to `REFUSAL_BACKOFF_MAX_S`, logging one line per run of refusals; any other
    error is raised. So a worker or the scheduler waits a refusal out in its own process instead of exiting
    and being restarted by the supervisor again and again (the daemon's diary says learning paused, once)."""
    def refused(attempt) -> None:
        if attempt.attempt_number == 1:
            log.warning("%s: %s; waiting until it takes writes again", what, refusal_words(attempt.outcome.exception()))

    return Retrying(retry=retry_if_exception(is_write_refusal), before_sleep=refused, reraise=True,
                    sleep=wait_unless_stopped,
                    wait=wait_exponential(multiplier=REFUSAL_BACKOFF_MIN_S, min=REFUSAL_BACKOFF_MIN_S,
                                          max=REFUSAL_BACKOFF_MAX_S))


def serve(queue: str, role: str, redis: Redis, burst: bool) -> None:
    """Requeue what a previous run of this worker left unfinished, then serve `queue` with an in-process
    `TwinWorker` named `twin-ROLE-PID` until stopped (or, with `burst`, until the queue is empty); while Redis
    refuses writes, both are tried again with backoff (`patiently`), the worker under a new name
    (`twin-ROLE-PID-N`: RQ could not record the death of the one before).

    One queue per worker: only then does RQ dequeue through an intermediate list (BLMOVE) that
    `recover_orphaned_jobs` can read. Jobs load through `LegacyNameJob`, so the names an older twin queued run too.
    """
    for attempt in patiently(f"worker {role}"):
        with attempt:
            number = attempt.retry_state.attempt_number
            recover_orphaned_jobs(Queue(queue, connection=redis))
            name = f"twin-{role}-{os.getpid()}" + (f"-{number}" if number > 1 else "")
            worker = TwinWorker([queue], connection=redis, name=name, job_class=LegacyNameJob,
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
    """The embedding worker: load the model, open the index, queue a flush of what is pending, serve jobs; the
    model and the index are let go after `embed_rest_s` without a job and opened again by the next
    (`twin.workers.resting`).

    Teardown (a final checkpoint) is in `finally`, so a SIGTERM (warm stop: the job in hand finishes)
    always leaves a fresh checkpoint.
    """
    from twin.wiring import open_embedder, open_index_writer  # here: the model's and the index's libraries
    from twin.workers.resting import RestingVectors

    store = Store(settings.db_path).open()
    activity = Activity(store, settings.being)
    vectors = None

    def open_both():
        embedder = open_embedder(settings, store)
        return embedder, open_index_writer(settings, store, embedder, activity)

    try:
        if settings.embed_backend != "none":  # "none": keyword-only, nothing to embed or index
            bus = Bus(redis)
            with contextlib.suppress(RedisError):  # a worker that starts holds them (a killed one left the mark)
                bus.mark_resting(None)
            vectors = RestingVectors(open_both, settings.embed_rest_s,
                                     on_rest=lambda resting: bus.mark_resting(utc_now() if resting else None))
            pending = store.count_pending_embeddings(vectors.open_now()[0].model_id)
            if pending:
                log.info("embed: %d memories wait for a vector since the last run; flushing", pending)
                for attempt in patiently("worker embed"):
                    with attempt:
                        Bus(redis).enqueue("embed_flush")
            vectors.start()
        install(WorkerContext(settings=settings, redis=redis, store=store, vectors=vectors, activity=activity))
        serve(EMBED_QUEUE, "embed", redis, burst)
    finally:
        if vectors is not None:
            vectors.close()
            with contextlib.suppress(RedisError):
                bus.mark_resting(None)  # stopped, not resting
        store.close()
    return 0


def run_scheduler(settings: Settings, redis: Redis, burst: bool) -> int:
    """RQ's scheduler, which moves jobs whose retry delay has passed back onto their queue, as its own
    supervised process (RQ would fork it from a worker, where a dying worker leaves it orphaned). A Redis that
    refuses writes is waited out (`patiently`)."""
    for attempt in patiently("scheduler"):  # while Redis refuses writes: here, not a crash and a restart
        with attempt:
            scheduler = RQScheduler([LEARN_QUEUE, EMBED_QUEUE], connection=redis, interval=1)
            scheduler.acquire_locks()
            if burst:
                scheduler.enqueue_scheduled_jobs()
                scheduler.release_locks()
                return 0
            scheduler.work()
    return 0


def record_start_failure(settings: Settings, line: str) -> bool:
    """Put why a worker cannot run in the diary as a `degraded` line (which logs it too), unless the newest
    `degraded` line already says it (the supervisor restarts the worker with backoff; the diary should not repeat
    itself every 30 s). Returns True when it wrote (and logged) the line. Never raises: the store may be what
    failed."""
    try:
        with Store(settings.db_path) as store:
            last = [a.text for a in Activity(store, settings.being).recent(20) if a.kind == "degraded"][-1:]
            if last != [line]:
                Activity(store, settings.being).record("degraded", line)
                return True
    except (TwinError, sqlite3.Error, OSError) as exc:
        log.warning("worker: could not write the reason to the diary (%s)", exc)
    return False


def main(argv: list[str] | None = None) -> int:
    """Parse `learn|embed|scheduler [--burst]`, load settings and run the worker. Exit codes: 0 done (burst) or
    stopped, 1 failed (Redis not reachable, the store or the model failed: restarted with backoff), 2 a setting to
    fix (an invalid one, or Redis refused the login: not restarted)."""
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
    for handler in logging.getLogger().handlers:
        handler.addFilter(RefusalWithoutTraceback())
    os.umask(0o077)
    for line in startup_warnings(settings):  # twin's dirs made 0700; what stays open is said (invariant 8)
        log.warning("worker %s: %s", args.role, line)
    redis = connect_redis(settings)
    try:
        check_access(redis, settings)  # a refused login is said now, before a model loads
        if args.role != "scheduler":
            for attempt in patiently(f"worker {args.role}"):  # a worker started while Redis refuses writes waits
                with attempt:
                    check_same_store(settings, redis)
        run = {"learn": run_learn, "embed": run_embed, "scheduler": run_scheduler}[args.role]
        return run(settings, redis, args.burst)
    except StopRequested:  # stopped while it waited out a refusal (`wait_unless_stopped`): a clean stop
        log.info("worker %s: stopped while Redis refused writes; what waits is learned after the next start", args.role)
        return 0
    except (AuthenticationError, NoPermissionError) as exc:  # refused in the middle of a run
        return _refused(settings, args.role, refusal(settings, exc))
    except (RedisRefused, ForeignStore) as exc:
        return _refused(settings, args.role, exc)
    except TwinError as exc:
        log.error("worker %s: %s", args.role, exc)
        record_start_failure(settings, f"The {args.role} worker cannot run: {exc}")
        return 1
    except (RedisConnectionError, RedisTimeoutError) as exc:  # one line; the supervisor restarts us with backoff
        if untrusted_certificate(exc):
            return _refused(settings, args.role, refusal(settings, exc))
        log.error("worker %s: Redis at %s is not reachable (%s)", args.role, settings.redis_shown_url, exc)
        return 1


def check_same_store(settings: Settings, redis: Redis) -> None:
    """Raise `ForeignStore` when the work on `redis` is another store's than `settings.db_path` (`Bus.bind_store`):
    a worker on another machine with a store of its own would take jobs and find none of their items. Claims the
    bus for this store when no one has (a worker run by hand before any `twin up`)."""
    with Store(settings.db_path) as store:
        mine = store_identity(store)
    other = Bus(redis).bind_store(mine, owner=False)
    if other is not None:
        raise ForeignStore(f"the work on Redis at {settings.redis_shown_url} belongs to another store (id {other}) "
                           f"than {settings.db_path} (id {mine}): a learn or embedding worker runs where the daemon's "
                           "store is (README, \"Workers on another machine\"); if that store is gone, delete the key "
                           f"{STORE_KEY} or start `twin up` here")


def _refused(settings: Settings, role: str, exc: SettingsError) -> int:
    """Say in one log line (and in the diary, unless its newest `degraded` line says it already) that Redis refused
    this worker's login or commands, or holds another store's work; returns exit code 2 (a setting to fix: the
    supervisor and the systemd unit do not restart it)."""
    if not record_start_failure(settings, f"The {role} worker cannot run: {exc}"):
        log.error("worker %s: %s", role, exc)
    return 2
