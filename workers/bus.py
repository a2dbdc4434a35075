"""The bus: what connectors and the CLI put on Redis for the workers (DESIGN.md "Shape").

Queues hold only work in flight (invariant 1); every job is idempotent, so at-least-once delivery
is safe. Jobs are named in `workers.jobs.JOBS`; enqueueing an unknown name raises `KeyError`.
"""

from __future__ import annotations

import json
import time

from redis import Redis
from rq import Queue, Retry

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
behind them, not one per file (twin.forgetting)."""
SCRUB_FLAG_TTL_S = 900
LEARN_RETRY = Retry(max=3, interval=[10, 60, 300])
"""Transient failures retry with backoff (LIBRARY_NOTES §1); bad input is set aside at once (workers.main)."""
JOB_TIMEOUT_S = 600
LEARN_BATCH = 50
"""Texts per `learn_batch` job."""
EMAIL_BATCH = 10
"""Email threads per `learn_email_threads` job (each may be one model call of up to ~10 s)."""


class Bus:
    """Enqueues twin's jobs on `redis` (a client built by the caller; nothing connects in `__init__`)."""

    def __init__(self, redis: Redis):
        self.redis = redis
        self.learn_queue = Queue(LEARN_QUEUE, connection=redis)
        self.embed_queue = Queue(EMBED_QUEUE, connection=redis)

    def _learn(self, name: str, **kwargs: object) -> str:
        from workers.jobs import JOBS  # the registry imports the core; keep `import workers.bus` light

        job = self.learn_queue.enqueue(JOBS[name], kwargs=kwargs, retry=LEARN_RETRY, job_timeout=JOB_TIMEOUT_S,
                                       result_ttl=0, failure_ttl=30 * 86400, description=f"{name}")
        return job.id

    def push_text(self, being: str, text: str, source: str, ref: str | None = None) -> str:
        """Queue `text` for `learn()`; returns the job id. Raises `redis.ConnectionError` when Redis is down."""
        return self._learn("learn_text", being=being, text=text, source=source, ref=ref)

    def push_texts(self, being: str, items: list[tuple[str, str, str | None]]) -> list[str]:
        """Queue many `(text, source, ref)` items for `learn()`, `LEARN_BATCH` per job (a connector's bulk sync:
        one RQ job costs ~3 ms of CPU, as much as learning a short text). Returns the job ids."""
        return [self._learn("learn_batch", being=being, items=[list(item) for item in items[i:i + LEARN_BATCH]])
                for i in range(0, len(items), LEARN_BATCH)]

    def push_document(self, being: str, source: str, text: str, title: str, max_memories: int) -> str:
        """Queue a whole document whose memories replace the ones of `source` (a file)."""
        return self._learn("learn_document", being=being, source=source, text=text, title=title,
                           max_memories=max_memories)

    def push_email_threads(self, being: str, threads: list[dict]) -> list[str]:
        """Queue email thread items (`connectors.gmail.thread_item`) for learning, `EMAIL_BATCH` per job.
        Returns the job ids; raises `redis.ConnectionError` when Redis is down."""
        return [self._learn("learn_email_threads", being=being, threads=threads[i:i + EMAIL_BATCH])
                for i in range(0, len(threads), EMAIL_BATCH)]

    def push_interests(self, being: str, visits: list[list[str]], profiles: int) -> str:
        """Queue one browser import's visits (`[url, title, visited_at]` each) to be clustered into interests and
        learned (`learn_interests`); `profiles` is how many profiles were read (for the diary line)."""
        return self._learn("learn_interests", being=being, visits=visits, profiles=profiles)

    def push_forget_source(self, being: str, source: str) -> str:
        """Queue the removal of every memory of `source` (a file that is gone)."""
        return self._learn("forget_source", being=being, source=source)

    def request_scrub(self) -> bool:
        """Ask for one `scrub_store` job at the back of the learn queue (after the removals queued before it)
        unless one is already queued. Returns True if it enqueued. The scrub marker in SQLite says what is due;
        this only wakes the learn worker."""
        from workers.jobs import JOBS

        if not self.redis.set(SCRUB_FLAG, repr(time.time()), nx=True, ex=SCRUB_FLAG_TTL_S):
            return False
        self.learn_queue.enqueue(JOBS["scrub_store"], job_timeout=JOB_TIMEOUT_S, result_ttl=0,
                                 failure_ttl=7 * 86400, description="scrub_store")
        return True

    def notify_embed(self) -> bool:
        """Ask the embedding worker to flush pending memories: enqueues one flush unless one is already
        queued (seed 000: flush 600 ms after the first pending memory). Returns True if it enqueued."""
        if not self.redis.set(FLUSH_FLAG, repr(time.time()), nx=True, ex=FLUSH_FLAG_TTL_S):
            return False
        self.enqueue_flush()
        return True

    def enqueue_flush(self) -> None:
        """Queue a flush that starts at once (a continuation, or the catch-up at worker start)."""
        from workers.jobs import JOBS

        self.embed_queue.enqueue(JOBS["embed_flush"], job_timeout=JOB_TIMEOUT_S, result_ttl=0)

    def request_checkpoint(self) -> None:
        """Ask the index writer to scrub forgotten vectors and checkpoint now (after a forget): the job goes to
        the front of the queue, so at most the flush slice in hand (≤ 10 s) runs before it."""
        from workers.jobs import JOBS

        self.embed_queue.enqueue(JOBS["index_checkpoint"], job_timeout=JOB_TIMEOUT_S, result_ttl=0, at_front=True)

    def push_reflect(self, being: str, force: bool = False) -> str:
        """Queue one reflection of `being` (seed 001's tick) before any waiting learn job. Not retried: the next
        tick is the retry."""
        from workers.jobs import JOBS

        # on the learn queue, at its front: the learn worker serves exactly one queue, the only way RQ takes a
        # job through its intermediate list (with several queues it pops with BLPOP, and a job popped as the
        # worker stops is lost; workers.main.recover_orphaned_jobs relies on that list)
        job = self.learn_queue.enqueue(JOBS["reflect_being"], kwargs={"being": being, "force": force},
                                       job_timeout=JOB_TIMEOUT_S, result_ttl=0, failure_ttl=7 * 86400,
                                       description="reflect_being", at_front=True)
        return job.id

    def push_decay(self, being: str) -> str:
        """Queue seed 003's decay pass for `being` at the front of the learn queue (SQLite only; the learn worker
        serves exactly one queue, see `push_reflect`), so it is not stuck behind a bulk import. Not retried: the
        next pass is the retry."""
        from workers.jobs import JOBS

        job = self.learn_queue.enqueue(JOBS["decay_being"], kwargs={"being": being}, job_timeout=JOB_TIMEOUT_S,
                                       result_ttl=0, failure_ttl=7 * 86400, description="decay_being", at_front=True)
        return job.id

    def push_dream(self, being: str) -> str:
        """Queue seed 003's dream cycle for `being` on the embedding queue (it needs the index, which only the
        embedding worker holds up to date); behind the flush slice in hand, not at the front. Not retried."""
        from workers.jobs import JOBS

        job = self.embed_queue.enqueue(JOBS["dream_being"], kwargs={"being": being}, job_timeout=JOB_TIMEOUT_S,
                                       result_ttl=0, failure_ttl=7 * 86400, description="dream_being")
        return job.id

    def push_signal(self, signal_id: int, being: str) -> None:
        """Put a raised signal on the outbox for delivery (workers never call Telegram themselves)."""
        self.redis.rpush(OUTBOX, json.dumps({"signal_id": signal_id, "being": being}))

    def depths(self) -> dict[str, int]:
        """Queued and failed job counts per queue (read-only)."""
        out = {}
        for queue in (self.learn_queue, self.embed_queue):
            out[f"{queue.name}"] = queue.count
            out[f"{queue.name}-failed"] = queue.failed_job_registry.count
        return out
