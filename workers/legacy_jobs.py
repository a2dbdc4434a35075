"""Legacy jobs: the job names an older twin queued with the text itself on Redis (before items were staged in
SQLite, `twin.ingest`). Nothing queues them any more; a Redis kept from then may still hold some, so each is run
once through today's path: staged, then learned by `workers.jobs.learn_items`.

RQ resolves a queued job by its dotted name, so these are re-exported by `workers.jobs` (`workers.jobs.learn_text`
…), the name those old jobs carry. Each checks its input and raises `BadInput` (set aside, not retried) when it
can never succeed.
"""

from __future__ import annotations

from twin import ingest
from twin.ingest import Ingest
from workers.context import BadInput, current


def _staged_now(being: str, items: list[Ingest]) -> dict:
    """Stage `items` in the worker's store and learn them at once; returns `learn_items`'s tally."""
    from workers.jobs import learn_items  # workers.jobs imports this module (see the module docstring)

    return learn_items(being, ingest.stage(current().store, items))


def learn_text(being: str, text: str, source: str, ref: str | None = None) -> dict:
    """Legacy job (a text on the queue itself): staged, then learned as `learn_items` does."""
    if not isinstance(text, str):
        raise BadInput(f"learn_text needs str text, got {type(text).__name__}")
    return _staged_now(being, [Ingest(being, source, text, "text", ref)])


def learn_batch(being: str, items: list) -> dict:
    """Legacy job (`[text, source, ref]` items on the queue itself): staged, then learned as `learn_items` does."""
    if not isinstance(items, list) or not all(isinstance(i, list | tuple) and len(i) == 3 for i in items):
        raise BadInput("learn_batch needs a list of [text, source, ref] items")
    return _staged_now(being, [Ingest(being, s, t, "text", r) for t, s, r in items if isinstance(t, str)])


def learn_document(being: str, source: str, text: str, title: str, max_memories: int) -> dict:
    """Legacy job (a document on the queue itself): staged, then learned as `learn_items` does."""
    if not isinstance(text, str):
        raise BadInput(f"learn_document needs str text, got {type(text).__name__}")
    return _staged_now(being, [Ingest(being, source, text, "document",
                                      extra={"title": title, "max_memories": max_memories})])


def learn_email_threads(being: str, threads: list) -> dict:
    """Legacy job (email thread items on the queue itself): staged, then learned as `learn_items` does."""
    if not isinstance(threads, list):
        raise BadInput("learn_email_threads needs a list of thread items")
    return _staged_now(being, [Ingest(being, t["source"], t["text"], "email", extra={"summary": t["summary"]})
                               for t in threads if isinstance(t, dict)
                               and all(isinstance(t.get(k), str) for k in ("source", "text", "summary"))])


def learn_interests(being: str, visits: list, profiles: int) -> dict:
    """Legacy job (browser visits on the queue itself): staged, then learned as `learn_items` does."""
    if not isinstance(visits, list):
        raise BadInput("learn_interests needs a list of [url, title, visited_at] visits")
    return _staged_now(being, [Ingest(being, "browser", "", "interests",
                                      extra={"visits": visits, "profiles": profiles})])


def forget_source(being: str, source: str) -> dict:
    """Legacy job (a gone file's source on the queue itself): staged, then removed as `learn_items` does."""
    return _staged_now(being, [Ingest(being, source, "", "forget")])


LEGACY_JOBS = {"learn_text": learn_text, "learn_batch": learn_batch, "learn_document": learn_document,
               "learn_email_threads": learn_email_threads, "learn_interests": learn_interests,
               "forget_source": forget_source}
"""The legacy shims by the name their old jobs carry."""
