"""`twin backfill`: give every memory a vector of the current embedding model (seed 004: resumable backfill).

A memory is pending when it has no vector of the embedder's `model_id`: none at all, or one of another model
(switching `TWIN_EMBED_BACKEND` or `TWIN_LLM_MODEL_EMBED`). Pending memories are embedded oldest first in
batches of `batch` (200), and each batch is saved to SQLite before the next is embedded: that is the checkpoint.
An interrupted run (Ctrl-C, a provider failure, a crash) loses at most the batch in hand; the next run resumes
where it stopped, because SQLite, not a progress file, says what is pending. A saved vector replaces the
memory's vector of another model (one vector per memory).

Only SQLite is written. The embedding worker, the only writer of the index, catches up from SQLite by its
`seq` watermark; after a model switch it rejects the old model's index and rebuilds from the new model's
vectors, so recall never mixes the two. Run it with the daemon stopped, or after restarting the daemon with the
new setting: a daemon still running the old model would embed those memories back (the run stops when it
sees that happen).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from twin.activity import Activity
from twin.exceptions import TwinError
from twin.llm.provider import BudgetExhausted
from twin.store import Store
from twin.vectors.embedder import Embedder
from twin.vectors.embedding_flush import embedding_texts

CHECKPOINT_EVERY = 200
"""Memories embedded per batch and saved per transaction (seed 004: "checkpoints every 200")."""


class BackfillError(TwinError):
    """The backfill stopped before every memory had a vector (the embedder failed, or another process keeps
    replacing the new vectors). What was saved stays saved: running it again resumes."""


@dataclass(frozen=True)
class BackfillProgress:
    """Where a backfill is after a checkpoint.

    `done`: memories that have a vector of the model (saved before this run or by it); `total`: the memories
    there were when it started (memories learned meanwhile are embedded too; `total` then grows with `done`);
    `embedded`: vectors saved by this run; `elapsed_s`: seconds since this run started.
    """

    model_id: str
    done: int
    total: int
    embedded: int
    elapsed_s: float

    @property
    def percent(self) -> float:
        """`done / total` in percent (100 for an empty store)."""
        return 100.0 * self.done / self.total if self.total else 100.0

    @property
    def rate(self) -> float:
        """Memories embedded per second by this run (0 before any time has passed)."""
        return self.embedded / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def line(self) -> str:
        """`backfill: 400/35454 embedded (1.1 %), 120.3/s`."""
        return f"backfill: {self.done}/{self.total} embedded ({self.percent:.1f} %), {self.rate:.1f}/s"


@dataclass(frozen=True)
class BackfillReport:
    """What a finished `backfill()` did: `embedded` vectors saved by this run, out of `total` memories, in
    `elapsed_s` seconds; `already` memories had a vector of `model_id` before it started."""

    model_id: str
    embedded: int
    already: int
    total: int
    elapsed_s: float

    def line(self) -> str:
        """The final line `twin backfill` prints."""
        if not self.embedded:
            return f"backfill: nothing to do, all {self.total} memories have a vector of {self.model_id}"
        rate = self.embedded / self.elapsed_s if self.elapsed_s > 0 else 0.0
        return (f"backfill: done, {self.total}/{self.total} memories have a vector of {self.model_id} "
                f"({self.embedded} embedded now in {self.elapsed_s:.1f} s, {rate:.1f}/s)")


def backfill(store: Store, embedder: Embedder, batch: int = CHECKPOINT_EVERY,
             progress: Callable[[BackfillProgress], None] | None = None,
             activity: Activity | None = None) -> BackfillReport:
    """Embed every memory (all beings) that has no vector of `embedder.model_id`, `batch` at a time, oldest
    first, saving each batch to SQLite before the next (the checkpoint), until none is pending.

    `embedder` must be open; its `embed()` gives `(n, dim)` float32, L2-normalised rows. `progress` is called
    after every checkpoint; an exception it raises (e.g. `KeyboardInterrupt`) stops the run with every saved
    batch kept. `activity` gets one line at the end ("Backfilled 400 memories with the vectors of …"), or one
    saying where a failed run stopped.

    Raises `ValueError` if `batch` < 1; `BackfillError` when the embedder fails (provider down after its
    retries, daily call budget used up, unusable answer) or when memories embedded by this run lose their
    vector again (a daemon still running another model): one line saying how far it got and how to resume.
    """
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    model_id = embedder.model_id
    started = time.monotonic()
    already = store.embedding_count(model_id)
    total = already + store.count_pending_embeddings(model_id)
    embedded = 0
    seen: set[int] = set()
    repeats = 0
    while rows := store.pending_embeddings(model_id, batch):
        ids = [mid for mid, _ in rows]
        repeats += sum(mid in seen for mid in ids)
        if repeats > batch:
            raise _stopped(store, activity, model_id, embedded,
                           f"{repeats} memories this run embedded lost their vector of {model_id} again: is the "
                           "daemon still running another embed_backend? Restart it with the new setting, then run "
                           "`twin backfill` again")
        try:
            vectors = embedder.embed(embedding_texts(store, rows))
        except TwinError as exc:
            when = ("after midnight UTC (or raise TWIN_LLM_DAILY_CALLS)" if isinstance(exc, BudgetExhausted)
                    else "once the provider answers")
            raise _stopped(store, activity, model_id, embedded, f"{exc}; to resume, run `twin backfill` {when}") \
                from exc
        store.save_embeddings(ids, vectors, model_id)
        seen.update(ids)
        embedded += len(ids)
        if progress is not None:  # counted, not queried: a COUNT per checkpoint would grow with the store
            done = already + embedded
            total = max(total, done)
            progress(BackfillProgress(model_id, done, total, embedded, time.monotonic() - started))
    report = BackfillReport(model_id, embedded, already, store.embedding_count(model_id), time.monotonic() - started)
    if activity is not None:
        activity.record("index", f"Backfilled {embedded} memories with the vectors of {model_id}." if embedded
                        else f"Backfill: every memory already has a vector of {model_id}.")
    return report


def _stopped(store: Store, activity: Activity | None, model_id: str, embedded: int, why: str) -> BackfillError:
    """The `BackfillError` of a run that stopped after saving `embedded` vectors, with its activity line."""
    done = store.embedding_count(model_id)
    total = done + store.count_pending_embeddings(model_id)
    if activity is not None:
        activity.record("error", f"Backfill with {model_id} stopped after {embedded} memories; "
                                 f"{total - done} still wait for a vector.")
    return BackfillError(f"backfill stopped at {done}/{total} memories with a vector of {model_id} "
                         f"({embedded} saved by this run): {why}")
