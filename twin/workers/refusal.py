"""When Redis refuses writes: the push waits and is retried until it lands, and the owner is told once.

Redis can be up and answer reads yet refuse every write: `MISCONF` (a snapshot failed, typically on a full disk),
`OOM` (`maxmemory` reached under the `noeviction` policy), `READONLY` (a replica), `NOREPLICAS`
(`min-replicas-to-write` not met). None of them is a connection error, so redis-py's own retry (connection and
timeout errors only, `twin.workers.main.connect_redis`) does not cover them, and redis-py's `Retry` picks errors by
class only (`MISCONF` and `NOREPLICAS` arrive as a plain `ResponseError`). So a refusal is recognised by
`is_write_refusal` and retried with tenacity (exponential backoff, `REFUSAL_BACKOFF_MIN_S` doubling to
`REFUSAL_BACKOFF_MAX_S`) until the write lands or the daemon stops (`RefusalRetry`).

`LearningPause` is what the owner sees: one `degraded` diary line when the first write is refused ("Learning
paused: …"), one `recovered` line when a write lands again, and meanwhile the pause in SQLite (state
`learning`/being/`paused`, `{at, reason}`), which `twin status` shows and the Telegram connector tells the owner's
chat once. Nothing waits in memory alone: what a connector hands over is staged in SQLite with its cursor
(`twin.ingest`, invariant 3) before the push is tried.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from redis.exceptions import OutOfMemoryError, ReadOnlyError, RedisError, ResponseError
from tenacity import RetryCallState, Retrying, retry_if_exception, wait_exponential

from twin.activity import Activity
from twin.memory import parse_time, utc_now
from twin.store import Store, state

log = logging.getLogger("twin.bus")

T = TypeVar("T")

REFUSAL_BACKOFF_MIN_S = 0.5
REFUSAL_BACKOFF_MAX_S = 10.0
"""Backoff between tries of a refused write: 0.5 s doubling to 10 s (ours: a freed disk is used within 10 s, and a
refusing Redis sees at most a few writes a second from twin)."""
PAUSE_SCOPE = "learning"
PAUSE_KEY = "paused"
"""Where the pause is kept in SQLite's state table: `{"at": UTC ISO-8601, "reason": words}` while paused."""
REFUSALS = {
    "MISCONF": "Redis cannot save to its disk (MISCONF; the disk may be full), so it refuses writes",
    "OOM": "Redis is out of memory (OOM: maxmemory reached with the noeviction policy), so it refuses writes",
    "READONLY": "Redis is a read-only replica (READONLY), so it refuses writes",
    "NOREPLICAS": "Redis has too few replicas to write (NOREPLICAS: min-replicas-to-write), so it refuses writes",
}
"""The refusals twin waits out, by Redis error code, in the words the owner reads."""


def refusal_code(exc: BaseException) -> str | None:
    """The Redis error code of `exc` when it is a write refusal (a key of `REFUSALS`), else None. redis-py raises
    `OutOfMemoryError` and `ReadOnlyError` by class and `MISCONF`/`NOREPLICAS` as a `ResponseError` whose text
    starts with the code; a refusal inside a pipeline (`Command # 1 (…) of pipeline caused error: …`) counts."""
    if isinstance(exc, OutOfMemoryError):
        return "OOM"
    if isinstance(exc, ReadOnlyError):
        return "READONLY"
    if isinstance(exc, ResponseError):
        text = str(exc)
        text = text.split("caused error: ", 1)[-1]
        for code in ("MISCONF", "NOREPLICAS", "READONLY", "OOM"):
            if text.startswith(code + " "):
                return code
    return None


def is_write_refusal(exc: BaseException) -> bool:
    """True when `exc` is Redis refusing a write it will take again later (`REFUSALS`), not a bug or bad input."""
    return refusal_code(exc) is not None


def refusal_words(exc: BaseException) -> str:
    """What a refusal means, in words for the diary and `twin status` (`REFUSALS`); other errors by their text."""
    code = refusal_code(exc)
    return REFUSALS[code] if code else f"Redis refused a write ({exc})"


class LearningPause:
    """The owner's view of a Redis that refuses writes, for `being`, kept in the database at `db_path`.

    `refused(exc)` records the pause once (a `degraded` diary line and the state `learning`/being/`paused`) and
    `landed()` ends it once (a `recovered` line; the state deleted); both are cheap no-ops otherwise, safe from any
    thread (each opens its own store connection when it writes). A pause left by a daemon that stopped while paused
    is ended by the first write that lands after the next start. A store that cannot be written (the same full
    disk) is logged, never raised: the pause is said again when it can be."""

    def __init__(self, db_path: Path, being: str):
        self.db_path = db_path
        self.being = being
        self._lock = threading.Lock()
        with Store(db_path) as store:
            self._paused = state.is_set(store, PAUSE_SCOPE, being, PAUSE_KEY)

    @property
    def paused(self) -> bool:
        """Whether learning is paused now (as this process last recorded it)."""
        return self._paused

    def refused(self, exc: BaseException) -> None:
        """A write was refused with `exc`: say so once, with `refusal_words`."""
        if self._paused:
            return
        with self._lock:
            if self._paused:
                return
            reason = refusal_words(exc)
            self._paused = self._write(lambda store: self._begin(store, reason))

    def landed(self) -> None:
        """A write landed: if learning was paused, say it resumed (once) and for how long it was paused."""
        if not self._paused:
            return
        with self._lock:
            if self._paused:
                self._paused = not self._write(self._end)

    def _begin(self, store: Store, reason: str) -> None:
        with store.atomic():
            if state.is_set(store, PAUSE_SCOPE, self.being, PAUSE_KEY):
                return
            state.set_json(store, PAUSE_SCOPE, self.being, PAUSE_KEY, {"at": utc_now(), "reason": reason})
        Activity(store, self.being).record("degraded", f"Learning paused: {reason}. What changes meanwhile waits in "
                                                       "the database and is learned when Redis takes writes again.")
        log.warning("bus: %s; pushes wait and are retried", reason)

    def _end(self, store: Store) -> None:
        with store.atomic():
            paused = state.get_json(store, PAUSE_SCOPE, self.being, PAUSE_KEY)
            state.delete(store, PAUSE_SCOPE, self.being, PAUSE_KEY)
        if paused is None:
            return
        lasted_s = time.time() - parse_time(paused["at"]).timestamp()
        Activity(store, self.being).record("recovered", f"Learning resumed: Redis takes writes again after "
                                                        f"{lasted_s:.0f} s; what waited is being learned.")

    def _write(self, change: Callable[[Store], None]) -> bool:
        """Run `change` on a store connection of its own; False (logged) when the store refuses."""
        try:
            with Store(self.db_path) as store:
                change(store)
        except Exception as exc:  # noqa: BLE001 - the store on the same full disk: said again next time
            log.warning("bus: could not record the learning pause (%s)", exc)
            return False
        return True


def paused_since(store: Store, being: str) -> dict | None:
    """The pause of `being` as `LearningPause` recorded it (`{at, reason}`), or None when learning runs."""
    return state.get_json(store, PAUSE_SCOPE, being, PAUSE_KEY)


class RefusalRetry:
    """Calls a Redis write again, with backoff, for as long as Redis refuses it (`is_write_refusal`), until it
    lands or `halt` is set (the daemon stops: then the last refusal is raised, and what it carried waits in
    SQLite). Tells `pause` of the first refusal and of the landing. Other errors are raised at once. Safe to share
    between threads (each call builds its own tenacity `Retrying`)."""

    def __init__(self, halt: threading.Event, pause: LearningPause | None = None,
                 max_wait_s: float = REFUSAL_BACKOFF_MAX_S):
        self.halt = halt
        self.pause = pause
        self.max_wait_s = max_wait_s

    def __call__(self, write: Callable[..., T], *args: object, **kwargs: object) -> T:
        """`write(*args, **kwargs)`, retried while refused; returns its result. Raises the refusal when halted,
        any other `RedisError` (or exception) at once."""
        retrying = Retrying(retry=retry_if_exception(is_write_refusal),
                            wait=wait_exponential(multiplier=REFUSAL_BACKOFF_MIN_S, min=REFUSAL_BACKOFF_MIN_S,
                                                  max=self.max_wait_s),
                            stop=lambda _: self.halt.is_set(), sleep=self.halt.wait, before_sleep=self._refused,
                            reraise=True)
        result = retrying(write, *args, **kwargs)
        if self.pause is not None:
            self.pause.landed()
        return result

    def _refused(self, attempt: RetryCallState) -> None:
        exc = attempt.outcome.exception() if attempt.outcome else None
        if self.pause is not None and isinstance(exc, RedisError):
            self.pause.refused(exc)
        elif attempt.attempt_number == 1:
            log.warning("bus: %s; retrying", refusal_words(exc) if exc else "Redis refused a write")
