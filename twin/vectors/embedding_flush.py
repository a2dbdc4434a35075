"""The embedding flush (seed 000's batching): embed the memories that wait for a vector, batch by batch, SQLite
first, then the index; and the outage state that makes a failing embedder a line when it starts and one when it
ends (DESIGN.md invariant 6), not one at every retry.

The embedding worker (`twin.workers.jobs.embed_flush`) keeps one `EmbeddingOutage` for its life in its context; tests
and the benches flush in-process with their own. Nothing here is module state.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from twin.exceptions import TwinError
from twin.store import Store
from twin.store.turns import turns_before

if TYPE_CHECKING:  # types only: the learn worker and the scheduler import this module, the embedding worker
    from twin.vectors.embedder import Embedder  # alone loads the index and the model (bench/daemon_rss.py)
    from twin.vectors.sidecar import IndexWriter

log = logging.getLogger(__name__)

EMBED_FAILURE_PAUSE_S = 10.0
"""After a failed embedding call a flush waits this long (within its budget) before it returns, so a provider
that is down or a used-up call budget is retried about every 10 s by the next flush, never in a tight loop."""


@dataclass
class EmbeddingOutage:
    """An ongoing embedding outage: `error` is the failure that started it, None while calls succeed. One flush
    after another shares it, so the outage is logged once when it starts and once when it ends."""

    error: str | None = None

    def failed(self, store: Store, embedder: Embedder, exc: TwinError, failure_pause_s: float) -> None:
        """Record a failed call; the first of an outage logs one warning with what stays pending."""
        if self.error is None:
            log.warning("embed: %s failed (%s); %d memories stay pending and are retried every %.0f s",
                        embedder.model_id, exc, store.count_pending_embeddings(embedder.model_id), failure_pause_s)
        self.error = str(exc)

    def succeeded(self, embedder: Embedder) -> None:
        """Record a call that worked; it ends an outage with one info line naming what it failed with."""
        if self.error is not None:
            log.info("embed: %s answers again (it failed with: %s)", embedder.model_id, self.error)
            self.error = None


def embedding_texts(store: Store, rows: list[tuple[int, str]]) -> list[str]:
    """What is embedded for each `(memory id, content)` of `rows`: the content, or for a transcript's turn the turn
    before it on the line above (`twin.store.turns.turns_before`). Every path that embeds memories uses it (the
    flush, `twin backfill`); a forget or rewrite of a turn drops the next turn's vector (the triggers of migration
    0025), so no vector keeps forgotten text."""
    before = turns_before(store, [mid for mid, _ in rows])
    return [f"{before[mid]}\n{content}" if mid in before else content for mid, content in rows]


def flush_pending(store: Store, embedder: Embedder, writer: IndexWriter, batch_max: int, pause_s: float,
                  budget_s: float = float("inf"), failure_pause_s: float = EMBED_FAILURE_PAUSE_S,
                  outage: EmbeddingOutage | None = None) -> int:
    """Embed memories without a vector, at most `batch_max` per call, each call starting at least `pause_s`
    after the previous one started (seed 000: 96 per call, rescheduled 200 ms later while any remain), until
    none remain or `budget_s` seconds have passed; vectors go to SQLite first, then into the index. Returns
    how many were embedded.

    A failed embedding call (a `TwinError`: the provider unreachable or answering an error after its retries,
    `BudgetExhausted`, an unusable answer) raises nothing: that batch stays pending, `outage` records it (one line
    when an outage starts, one when calls succeed again; None: an outage of this call alone), and the flush waits
    `failure_pause_s` seconds (at most until `budget_s` runs out) before it returns what it embedded so far; the
    next flush retries."""
    outage = EmbeddingOutage() if outage is None else outage
    done = after_id = 0  # each batch starts where the previous one ended: one pass over a backlog, not one a batch
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline and (batch := store.pending_embeddings(embedder.model_id, batch_max, after_id)):
        started = time.monotonic()
        ids = [mid for mid, _ in batch]
        try:
            vectors = embedder.embed(embedding_texts(store, batch))
        except TwinError as exc:
            outage.failed(store, embedder, exc, failure_pause_s)
            time.sleep(max(0.0, min(failure_pause_s, deadline - time.monotonic())))
            break
        outage.succeeded(embedder)
        store.save_embeddings(ids, vectors, embedder.model_id)
        writer.catch_up()
        done += len(batch)
        after_id = ids[-1]
        if len(batch) < batch_max:
            break
        # the next call starts `pause_s` after this one started (seed 000's 200 ms reschedule); a call that
        # took longer than that is followed at once, so a backlog runs at the embedder's full rate
        time.sleep(max(0.0, pause_s - (time.monotonic() - started)))
    return done
