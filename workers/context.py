"""What a worker process hands its jobs: settings and clients built once in `workers.main` (STYLE.md 2).

A job reads it with `current()`; it is set once per process, never at import.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

from redis import Redis

from twin.activity import Activity
from twin.embedder import Embedder
from twin.provider import ModelProvider
from twin.settings import Settings
from twin.store import Store
from twin.vectors import IndexWriter


@dataclass
class WorkerContext:
    """Per-process clients: each worker opens its own `store`; the embedding worker also fills `embedder`,
    `writer` and `activity`; the learn worker `provider` when a model provider is configured."""

    settings: Settings
    redis: Redis
    store: Store | None = None
    embedder: Embedder | None = None
    writer: IndexWriter | None = None
    activity: Activity | None = None
    provider: ModelProvider | None = None


_current: contextvars.ContextVar[WorkerContext] = contextvars.ContextVar("twin_worker_context")


def install(ctx: WorkerContext) -> None:
    """Make `ctx` the context of this process's jobs."""
    _current.set(ctx)


def current() -> WorkerContext:
    """The context installed by `workers.main`. Raises `LookupError` outside a twin worker."""
    return _current.get()
