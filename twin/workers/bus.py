"""The bus: what connectors and the CLI put on Redis for the workers (DESIGN.md "Shape").

Queues hold only work in flight (invariant 1), and never the text to learn: a connector stages its items in SQLite
(`twin.ingest`) and a learn job carries their ids (invariant 5). Every job is idempotent, so at-least-once delivery
is safe. There is one way onto a queue, `Bus.enqueue(name, **kwargs)`: the job goes by its dotted name
(`twin.workers.jobs.<name>`, resolved by the worker), with the options of `JOB_OPTIONS`; an unknown name raises
`KeyError`. So this module never imports the jobs (which import it).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, Retry

from twin import ingest
from twin.store import Store
from twin.workers.refusal import RefusalRetry, is_write_refusal

log = logging.getLogger("twin.bus")

LEARN_QUEUE = "twin-learn"
EMBED_QUEUE = "twin-embed"
OUTBOX = "twin:outbox"
"""Raised signals waiting for delivery (a Redis list of `{"signal_id", "being"}` JSON); the Telegram connector
sends them. The signal itself is in SQLite (`delivered_at` NULL until sent), so a lost outbox loses nothing."""
FLUSH_FLAG = "twin:embed:flush-pending"
"""Set (with the time of the first pending memory) while an embedding flush is queued; seed 000's batching."""
FLUSH_FLAG_TTL_S = 120
SCRUB_FLAG = "twin:scrub-pending"
"""Set while a `scrub_store` job is queued, so a burst of removals (a folder of files deleted) queues one scrub
behind them, not one per file (twin.lifecycle.forgetting)."""
SCRUB_FLAG_TTL_S = 900
STORE_KEY = "twin:store-id"
"""The id of the store whose staged items the queued jobs carry (`store_identity`; set by `Bus.bind_store`): a job
holds item ids, never text, so only a worker on that store can run it."""
EMBED_RESTING_KEY = "twin:embed:resting"
"""Set (to the UTC ISO-8601 time it rested) while the embedding worker has let go of its model and index
(`twin.workers.resting`); gone while they are open. `twin status` says so; a worker that dies leaves it at most
`EMBED_RESTING_TTL_S` (its restart clears it at once)."""
EMBED_RESTING_TTL_S = 7 * 86400
LEARN_RETRY = Retry(max=3, interval=[10, 60, 300])
"""Transient failures retry with backoff (LIBRARY_NOTES §1); bad input is set aside at once (twin.workers.main)."""
TEXTS_FLAG = "twin:learn:texts-waiting:"
"""`TEXTS_FLAG + being` holds the id of the `learn_texts` job that takes that being's texts (set with NX, as the
embedding flush's flag): a text pushed while it is set joins that job instead of getting its own (`Bus.push`)."""
TEXTS_FLAG_TTL_S = 300
"""A flag whose job was lost frees itself after this long (its items come back through `Bus.requeue_lost`)."""
_RELEASE_IF_HELD = """if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"""
JOB_TIMEOUT_S = 600
PER_JOB = {"text": 50, "document": 1, "email": 10, "interests": 1, "forget": 200}
"""Staged items per `learn_items` job, by mode: one RQ job costs ~3 ms of CPU, as much as learning a short text, so
short texts go 50 a job; a document or a browser import is one job (it may be a model call of up to ~10 s), an
email 10 a job; gone files 200 a job (one scrub of the full-text index for all of them)."""
T = TypeVar("T")
JOB_MODULE = "twin.workers.jobs"
"""Where the worker finds a job's function: a job is queued as `twin.workers.jobs.<name>`."""


@dataclass(frozen=True)
class JobOptions:
    """How one job is queued: its `queue`, whether it goes to the `at_front`, its `retry` (None: a failure is not
    retried, the next tick or request is the retry) and how long a failed one is kept, `failure_ttl_s` (None:
    RQ's default, a year). Every job runs at most `JOB_TIMEOUT_S` and keeps no result."""

    queue: str
    at_front: bool = False
    retry: Retry | None = None
    failure_ttl_s: int | None = None


WEEK_S = 7 * 86400
JOB_OPTIONS = {
    "learn_items": JobOptions(LEARN_QUEUE, retry=LEARN_RETRY, failure_ttl_s=30 * 86400),
    "learn_texts": JobOptions(LEARN_QUEUE, retry=LEARN_RETRY, failure_ttl_s=30 * 86400),
    "scrub_store": JobOptions(LEARN_QUEUE, failure_ttl_s=WEEK_S),
    "reflect_being": JobOptions(LEARN_QUEUE, at_front=True, failure_ttl_s=WEEK_S),
    "decay_being": JobOptions(LEARN_QUEUE, at_front=True, failure_ttl_s=WEEK_S),
    "dream_being": JobOptions(EMBED_QUEUE, failure_ttl_s=WEEK_S),
    "embed_flush": JobOptions(EMBED_QUEUE),
    "index_checkpoint": JobOptions(EMBED_QUEUE, at_front=True),
}
"""Every job twin queues, by name, with its queue options (the one table; `twin.workers.jobs.JOBS` has the functions).

- `learn_items`: staged items, retried with backoff (transient failures; bad input is set aside at once).
- `learn_texts`: every `text` item of one being that waits for it, `PER_JOB["text"]` at a time (`Bus.push`).
- `scrub_store`: one coalesced scrub behind the removals queued before it (`Bus.request_scrub`).
- `reflect_being` (seed 001's tick) and `decay_being` (seed 003) at the front of the learn queue, before a bulk
  import: the learn worker serves exactly one queue, the only way RQ takes a job through its intermediate list
  (with several queues it pops with BLPOP, and a job popped as the worker stops is lost;
  `twin.workers.main.recover_orphaned_jobs` relies on that list).
- `dream_being` (seed 003) on the embedding queue, which alone holds the index up to date; behind the flush slice
  in hand, not at the front.
- `embed_flush` (seed 000's batching) and `index_checkpoint`, at the front so at most the flush slice in hand
  (≤ 10 s) runs before it (after a forget), on the embedding queue: its worker is the index's only writer.
"""


class Bus:
    """Enqueues twin's jobs on `redis` (a client built by the caller; nothing connects in `__init__`).

    With `patience` (the daemon's: `twin.workers.refusal.RefusalRetry`) every write a push makes (a job, a flag,
    the outbox) is retried with backoff while Redis refuses writes (`MISCONF`, `OOM`, `READONLY`, `NOREPLICAS`)
    and the call returns once it lands, so the caller (a connector in a thread, a periodic task) holds its place
    meanwhile; without it (the CLI, the API, anything that must answer now) a refusal raises at once."""

    def __init__(self, redis: Redis, patience: RefusalRetry | None = None):
        self.redis = redis
        self.patience = patience
        self.learn_queue = Queue(LEARN_QUEUE, connection=redis)
        self.embed_queue = Queue(EMBED_QUEUE, connection=redis)

    def impatient(self) -> Bus:
        """This bus without `patience`: a refused write raises at once (for a caller that must not wait, such as a
        chat being answered; what it staged waits in SQLite and the daemon queues it later)."""
        return Bus(self.redis)

    def _write(self, write: Callable[..., T], *args: object, **kwargs: object) -> T:
        """`write(*args, **kwargs)` through `patience` when there is one (retried while Redis refuses)."""
        if self.patience is None:
            return write(*args, **kwargs)
        return self.patience(write, *args, **kwargs)

    def enqueue(self, name: str, *, job_id: str | None = None, **kwargs: object) -> str:
        """Queue job `name` (a key of `JOB_OPTIONS`) with keyword arguments `kwargs` (JSON-able: ids, a being, a
        flag, never text to learn), as `twin.workers.jobs.<name>` with the table's options, under `job_id` when
        given (else RQ picks one). Returns the job id. Raises `KeyError` for a name not in the table,
        `redis.RedisError` when Redis fails (a refusal: only without `patience`, or when the daemon stops while it
        waits)."""
        options = JOB_OPTIONS[name]
        queue = self.learn_queue if options.queue == LEARN_QUEUE else self.embed_queue
        job = self._write(lambda: queue.enqueue(f"{JOB_MODULE}.{name}", kwargs=kwargs, retry=options.retry,
                                                job_timeout=JOB_TIMEOUT_S, result_ttl=0,
                                                failure_ttl=options.failure_ttl_s, description=name,
                                                at_front=options.at_front, job_id=job_id))
        return job.id

    def enqueue_items(self, being: str, ids: list[int], mode: str) -> list[tuple[list[int], str]]:
        """Queue `learn_items` jobs for staged items `ids` of `being`, all of `mode`, `PER_JOB[mode]` per job; Redis
        only (callable from any thread). Returns `[(ids, job id)]` for the caller to record with
        `ingest.mark_queued` on its store's thread. Raises `redis.RedisError` at the first refusal (down,
        `MISCONF`, `OOM`): the items not recorded stay `ready` and the supervisor queues them later
        (`queue_ready`); a chunk queued twice that way is harmless, the second job finds it consumed."""
        per_job = PER_JOB[mode]
        return [(ids[i:i + per_job], self.enqueue("learn_items", being=being, ids=ids[i:i + per_job]))
                for i in range(0, len(ids), per_job)]

    def push(self, store: Store, ids: list[int], being: str, mode: str) -> bool:
        """`enqueue_items` and record the jobs in `store`, on the caller's thread; `text` items short of a whole
        job (`PER_JOB`: a chat message pushed alone, the last few of a batch) join the being's waiting
        `learn_texts` job instead (`push_texts`). Returns False, logging one line, when Redis refuses: the items
        stay `ready` in SQLite and are queued later, nothing is lost. Raises `sqlite3.Error` only when the store
        cannot record the push."""
        whole = len(ids) - len(ids) % PER_JOB[mode] if mode == "text" else len(ids)
        try:
            jobs = self.enqueue_items(being, ids[:whole], mode)
            for chunk, job_id in jobs:
                ingest.mark_queued(store, chunk, job_id)
            if ids[whole:]:
                self.push_texts(store, ids[whole:], being)
        except RedisError as exc:
            log.warning("bus: Redis refused a learn job (%s); %d staged item(s) wait in SQLite", exc, len(ids))
            return False
        return True

    def push_texts(self, store: Store, ids: list[int], being: str) -> str:
        """Hand staged `text` items `ids` of `being` to the being's waiting `learn_texts` job, queueing one only
        when none waits (`TEXTS_FLAG`): one RQ job costs about as much CPU as learning a short text, so a burst of
        single pushes (chat messages) shares jobs (bench/ingest.py). The items are recorded as `queued` for that
        job before the flag is read again; if the job let go of the flag meanwhile (it lets go, then looks for
        what is left), they are handed on again, so none is stranded. Returns the job id. Raises
        `redis.RedisError` when Redis refuses (the items stay as they were: `ready`, or queued for a job)."""
        key = TEXTS_FLAG + being
        while True:
            job_id = uuid.uuid4().hex
            if self._write(self.redis.set, key, job_id, nx=True, ex=TEXTS_FLAG_TTL_S):
                try:
                    self.enqueue("learn_texts", job_id=job_id, being=being)
                except RedisError:
                    self.release_texts(being, job_id)
                    raise
            else:
                held = self.redis.get(key)
                if held is None:  # let go of between the two calls: take it
                    continue
                job_id = held.decode()
            ingest.mark_queued(store, ids, job_id)
            if self.redis.get(key) == job_id.encode():
                return job_id

    def release_texts(self, being: str, job_id: str) -> bool:
        """Clear `being`'s `TEXTS_FLAG` if job `job_id` holds it (a later job's flag stays). Returns True if it
        did. Raises `redis.RedisError` when Redis refuses."""
        return bool(self._write(self.redis.eval, _RELEASE_IF_HELD, 1, TEXTS_FLAG + being, job_id))

    def queue_ready(self, store: Store) -> int:
        """Queue every staged item that no job carries yet (`ready`: Redis was away or refused when it was staged),
        grouped by being and mode, on the caller's thread. Returns how many were queued; stops at the first
        refusal (the next call retries)."""
        groups: dict[tuple[str, str], list[int]] = {}
        for item_id, being, mode in ingest.ready(store):
            groups.setdefault((being, mode), []).append(item_id)
        queued = 0
        for (being, mode), ids in groups.items():
            if not self.push(store, ids, being, mode):
                break
            queued += len(ids)
        return queued

    def requeue_lost(self, store: Store, before: str) -> tuple[int, int]:
        """Look up the jobs that carry items queued before `before` (UTC ISO-8601): a job Redis no longer has (lost
        with its files) gives its items back as `ready` (and a being's `TEXTS_FLAG` it held is cleared); one that
        failed for good marks them `failed`. Returns `(requeued, failed)` item counts."""
        job_ids = ingest.queued_jobs(store, before)
        if not job_ids:
            return 0, 0
        pipe = self.redis.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hget(f"rq:job:{job_id}", "status")
        requeued = failed = 0
        lost = set()
        for job_id, status in zip(job_ids, pipe.execute(), strict=True):
            if status is None:
                lost.add(job_id.encode())
                requeued += ingest.requeue(store, job_id)
            elif status in (b"failed", b"stopped", b"canceled"):
                failed += ingest.mark_failed(store, job_id)
        for key in self.redis.scan_iter(match=TEXTS_FLAG + "*") if lost else ():
            if self.redis.get(key) in lost:  # a being's texts would keep joining the lost job
                self.redis.delete(key)
        return requeued, failed

    def request_scrub(self) -> bool:
        """Ask for one `scrub_store` job at the back of the learn queue (after the removals queued before it)
        unless one is already queued. Returns True if it enqueued. The scrub marker in SQLite says what is due;
        this only wakes the learn worker."""
        if not self._write(self.redis.set, SCRUB_FLAG, repr(time.time()), nx=True, ex=SCRUB_FLAG_TTL_S):
            return False
        self.enqueue("scrub_store")
        return True

    def notify_embed(self) -> bool:
        """Ask the embedding worker to flush pending memories: enqueues one flush unless one is already
        queued (seed 000: flush 600 ms after the first pending memory). Returns True if it enqueued."""
        if not self._write(self.redis.set, FLUSH_FLAG, repr(time.time()), nx=True, ex=FLUSH_FLAG_TTL_S):
            return False
        self.enqueue("embed_flush")
        return True

    def mark_resting(self, since: str | None) -> None:
        """Say that the embedding worker rests since `since` (UTC ISO-8601), or with None that it holds its model
        and index again (`EMBED_RESTING_KEY`). Not retried: a Redis that refuses it costs `twin status` a line."""
        if since is None:
            self.redis.delete(EMBED_RESTING_KEY)
        else:
            self.redis.set(EMBED_RESTING_KEY, since, ex=EMBED_RESTING_TTL_S)

    def resting_since(self) -> str | None:
        """When the embedding worker let go of its model and index (UTC ISO-8601), None while they are open."""
        value = self.redis.get(EMBED_RESTING_KEY)
        return value.decode() if isinstance(value, bytes) else value

    def request_checkpoint(self) -> None:
        """Ask the index writer to scrub forgotten vectors and checkpoint now (after a forget): the job goes to
        the front of the queue, so at most the flush slice in hand (≤ 10 s) runs before it."""
        self.enqueue("index_checkpoint")

    def rewrite_append_only_file(self) -> bool:
        """Ask Redis to rewrite its append-only file (`BGREWRITEAOF`) so its files keep only the work still in
        flight, after a forget: whatever a finished job carried is then gone from disk, not only from memory (Redis
        rewrites by itself only past 64 MB). Returns False when Redis refuses (a Redis of the owner's own may not
        allow it; a rewrite already running is fine)."""
        try:
            self.redis.bgrewriteaof()
        except RedisError as exc:
            if "already in progress" in str(exc):
                return True
            log.info("bus: Redis did not rewrite its append-only file (%s)", exc)
            return False
        return True

    def bind_store(self, store_id: str, owner: bool) -> str | None:
        """Record on Redis that the queued work is the store `store_id`'s (`STORE_KEY`). The supervisor is the `owner`
        and sets it; a worker sets it only when no one has. Returns the other store's id when Redis holds one (that
        worker must not run: a job of another store's items would find nothing to learn in its own), else None.
        Raises `redis.RedisError` when Redis refuses."""
        if owner:
            self.redis.set(STORE_KEY, store_id)
            return None
        self.redis.set(STORE_KEY, store_id, nx=True)
        held = self.redis.get(STORE_KEY)
        held = held.decode() if isinstance(held, bytes) else held
        return None if held in (None, store_id) else held

    def push_signal(self, signal_id: int, being: str) -> None:
        """Put a raised signal on the outbox for delivery (workers never call Telegram themselves)."""
        self._write(self.redis.rpush, OUTBOX, json.dumps({"signal_id": signal_id, "being": being}))

    def depths(self) -> dict[str, int]:
        """Queued and failed job counts per queue. RQ cleans a registry of its expired entries before counting it
        (a write); when Redis refuses writes the count is read without that cleanup."""
        out = {}
        for queue in (self.learn_queue, self.embed_queue):
            out[f"{queue.name}"] = queue.count
            registry = queue.failed_job_registry
            try:
                out[f"{queue.name}-failed"] = registry.count
            except RedisError as exc:
                if not is_write_refusal(exc):
                    raise
                out[f"{queue.name}-failed"] = registry.get_job_count(cleanup=False)
        return out
