"""Where the API runs operations: two lanes, each one thread with its own `Context` (its own SQLite connection;
the read lane also its own recall: the model and an index reader, invariant 4). Reads run beside writes (WAL),
each lane one call at a time (a `Store` is used by one thread at a time); the event loop only awaits them, so a
slow recall never blocks the server."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from twin.api.latency import SearchTimes
from twin.operations import Context
from twin.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")


class Lane:
    """One worker thread holding one `Context` (opened in that thread by `start`, closed by `stop`; its searches
    timed into `search_times` when given). A call runs with the caller's context variables (`twin.operations.
    context.ASKING`: which interface asked)."""

    def __init__(self, name: str, settings: Settings, bus: Callable[[], object | None],
                 search_times: SearchTimes | None = None):
        self.name, self.settings, self.bus, self.search_times = name, settings, bus, search_times
        self._pool: ThreadPoolExecutor | None = None
        self._ctx: Context | None = None
        self._warming = None

    def start(self) -> None:
        """Start the thread and open the context in it (started already: nothing). Raises `StoreError` when the
        store cannot be opened."""
        if self._pool is not None:
            return
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"api-{self.name}")
        self._ctx = self._pool.submit(Context.open, self.settings, self.bus).result()
        self._ctx.search_times = self.search_times

    def warm(self) -> None:
        """Open the recall now, in the lane's thread (the model loads before the first search, not during it);
        asked already: nothing."""
        if self._warming is None:
            self._warming = self._pool.submit(self._ctx.recall)

    def loading(self) -> bool:
        """True while the recall `warm` asked for is still opening (model, index, catch-up); False after, failed
        or not (a failed open is the recall's degraded mode, said by `twin status`), and when none was asked."""
        return self._warming is not None and not self._warming.done()

    async def run(self, operation: Callable[..., T], *args, **kwargs) -> T:
        """`operation(context, *args, **kwargs)` in the lane's thread; its result or its exception."""
        loop = asyncio.get_running_loop()
        call = functools.partial(operation, self._ctx, *args, **kwargs)
        return await loop.run_in_executor(self._pool, contextvars.copy_context().run, call)

    def call(self, operation: Callable[..., T], *args, **kwargs) -> T:
        """`run` for a caller on another thread that may block (the MCP server's tool calls run in worker
        threads): waits for the lane's thread to run it."""
        call = functools.partial(operation, self._ctx, *args, **kwargs)
        return self._pool.submit(contextvars.copy_context().run, call).result()

    def stop(self) -> None:
        """Close the context in its thread and stop the thread (after the call in hand)."""
        if self._pool is None:
            return
        if self._ctx is not None:  # None: its store could not be opened
            self._pool.submit(self._ctx.close).result()
            self._ctx = None
        self._pool.shutdown(wait=True)
        self._pool = None
        self._warming = None


class Lanes:
    """The read lane and the write lane of one API process, and `search_times`: the server times of every search
    the read lane ran (`twin.api.latency.SearchTimes`, the page's latency chart)."""

    def __init__(self, settings: Settings, bus: Callable[[], object | None]):
        self.search_times = SearchTimes()
        self.read = Lane("read", settings, bus, self.search_times)
        self.write = Lane("write", settings, bus)

    def start(self, warm: bool = True) -> None:
        """Start both lanes; with `warm`, load the recall in the read lane in the background. Started already (by
        `python -m twin.api`, before the server's modules load): only what was not done yet."""
        self.read.start()
        self.write.start()
        if warm:
            self.read.warm()

    def stop(self) -> None:
        """Stop both lanes."""
        self.write.stop()
        self.read.stop()


class DaemonBus:
    """The running daemon's `twin.workers.bus.Bus` for operations (`Context.bus`): one Redis client with short
    timeouts, made on first use; after a failed ping it is not asked again for `RETRY_S` (the supervisor's
    nudges catch up on what it missed)."""

    RETRY_S = 10.0
    """Seconds a Redis that did not answer is left alone."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._bus = None
        self._failed_at: float | None = None

    def __call__(self):
        """The bus, or None when Redis does not answer."""
        import time

        if self._bus is not None:
            return self._bus
        if self._failed_at is not None and time.monotonic() - self._failed_at < self.RETRY_S:
            return None
        from twin.redis_client import open_redis
        from twin.workers.bus import Bus

        client = open_redis(self.settings, connect_timeout_s=1, answer_timeout_s=2)
        try:
            client.ping()
        except Exception as exc:  # noqa: BLE001 - any failure means "not there now"
            log.info("api: Redis does not answer (%s); the daemon catches up from SQLite", exc)
            self._failed_at = time.monotonic()
            client.close()
            return None
        self._bus = Bus(client)
        return self._bus
