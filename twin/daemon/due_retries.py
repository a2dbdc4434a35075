"""Due retries back onto their queues: RQ's scheduler, stepped by the supervisor (issue 18: RSS of the daemon).

A failed learn job waits in RQ's scheduled-job registry for its backoff (`twin.workers.bus.LEARN_RETRY`); something
must move it back onto its queue when the time comes. That was RQ's scheduler in a process of its own (55 MiB of
Python, redis-py, RQ and the settings: bench/daemon_rss.py); the supervisor already holds all of those and ticks
every second, so it runs RQ's own scheduler steps (`RQScheduler`: the queue locks that keep two schedulers from
moving one job twice, the heartbeat that keeps them, `enqueue_scheduled_jobs`) as one of its tasks instead.
`python -m twin.workers scheduler` still runs them as a process (tests, a worker host without a supervisor).
"""

from __future__ import annotations

import logging

from redis import Redis
from rq.scheduler import RQScheduler

from twin.workers.bus import EMBED_QUEUE, LEARN_QUEUE

EVERY_S = 1
"""How often due retries are moved, in whole seconds (RQ's scheduler interval; its lock TTL, interval + 60, goes to
Redis as an integer: a float is refused); a retry's backoff is 10 s to 5 minutes."""


class DueRetries:
    """RQ's scheduler for the learn and embedding queues, one `step()` at a time (blocking Redis calls: the
    supervisor runs it in a thread). `stop()` releases its locks and its registration. Both raise `RedisError` when
    Redis cannot be reached or refuses writes; the caller logs it and steps again later."""

    def __init__(self, redis: Redis):
        self.scheduler = RQScheduler([LEARN_QUEUE, EMBED_QUEUE], connection=redis, interval=EVERY_S,
                                     logging_level=logging.WARNING)  # its lock lines: twin.logs quiets RQ
        self._born = False

    def step(self) -> None:
        """Take the queue locks when due (RQ retakes a lock another scheduler let go after 10 minutes), register once,
        refresh the locks and move every job whose time has come back onto its queue: the body of
        `RQScheduler.work`'s loop, without its signal handlers (the supervisor owns those)."""
        scheduler = self.scheduler
        if scheduler.should_reacquire_locks:
            scheduler.acquire_locks()
        if not self._born:
            scheduler.register_birth()
            self._born = True
        scheduler.heartbeat()
        scheduler.enqueue_scheduled_jobs()

    def stop(self) -> None:
        """Let go of the queue locks and the registration (another scheduler may take over at once)."""
        self.scheduler.release_locks()
        if self._born:
            self.scheduler.register_death()
