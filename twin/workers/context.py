"""What a worker process hands its jobs: settings and clients built once in `twin.workers.main` (STYLE.md 2).

A job reads it with `current()`; it is set once per process, never at import. A job whose input can never succeed
raises `BadInput`.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from redis import Redis

from twin.activity import Activity
from twin.settings import Settings
from twin.store import Store
from twin.vectors.embedding_flush import EmbeddingOutage

if TYPE_CHECKING:  # types only: each worker loads the libraries of what it fills (bench/daemon_rss.py)
    from twin.llm.provider import ModelProvider
    from twin.workers.resting import RestingVectors


@dataclass
class WorkerContext:
    """Per-process clients: each worker opens its own `store`; the embedding worker also fills `vectors` (its
    model and index writer, let go while idle: `twin.workers.resting`; None when keyword-only) and `activity`, and
    keeps the state of an embedding `outage` from one flush to the next; the learn worker fills `provider` when a
    model provider is configured."""

    settings: Settings
    redis: Redis
    store: Store | None = None
    vectors: RestingVectors | None = None
    activity: Activity | None = None
    provider: ModelProvider | None = None
    outage: EmbeddingOutage = field(default_factory=EmbeddingOutage)


class BadInput(Exception):
    """The job's input can never succeed (e.g. not text); the job is set aside, not retried (`twin.workers.main`)."""


_current: contextvars.ContextVar[WorkerContext] = contextvars.ContextVar("twin_worker_context")


def install(ctx: WorkerContext) -> None:
    """Make `ctx` the context of this process's jobs."""
    _current.set(ctx)


def current() -> WorkerContext:
    """The context installed by `twin.workers.main`. Raises `LookupError` outside a twin worker."""
    return _current.get()
