"""Legacy jobs: the job names an older twin left on a Redis it kept, still run through today's path.

Two kinds: every job of a twin whose workers were the top-level package `workers` is named `workers.jobs.<name>`
(`OLD_JOB_MODULE`); and an older twin still queued the text itself on Redis (before items were staged in SQLite,
`twin.ingest`): `workers.jobs.learn_text` …. Nothing queues either any more. RQ resolves a job by importing its
dotted name, and no top-level `workers` package is installed, so the worker's job class (`LegacyNameJob`) maps an
old name when it loads the job: `workers.jobs.learn_items` to `twin.workers.jobs.learn_items`, the text-carrying
names to the shims below, each run once through today's path (staged, then learned by
`twin.workers.jobs.learn_items`). Each shim checks its input and raises `BadInput` (set aside, not retried) when it
can never succeed.
"""

from __future__ import annotations

from rq.job import Job
from rq.utils import import_attribute

from twin import ingest
from twin.ingest import Ingest
from twin.workers.bus import JOB_MODULE
from twin.workers.context import BadInput, current
from twin.workers.jobs import learn_items

OLD_JOB_MODULE = "workers.jobs"
"""Where the jobs of a twin before the move of `workers` under `twin.` were queued: `workers.jobs.<name>`."""


def _staged_now(being: str, items: list[Ingest]) -> dict:
    """Stage `items` in the worker's store and learn them at once; returns `learn_items`'s tally."""
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


class LegacyNameJob(Job):
    """An RQ job that also runs under the dotted name an older twin queued it by (the module docstring):
    `workers.jobs.<legacy>` resolves to `LEGACY_JOBS[<legacy>]`, any other `workers.jobs.<name>` to
    `twin.workers.jobs.<name>`; today's names resolve as RQ resolves them. The job keeps its stored name (a retry
    resolves it again the same way). An old name that never was a job fails as an unknown name does in RQ
    (`ValueError`), and the job goes to the failed registry."""

    @property
    def func(self):
        """The callable this job runs (RQ's `Job.func`, with the old names mapped)."""
        name = self.func_name
        if self.instance is None and name is not None and name.startswith(OLD_JOB_MODULE + "."):
            short = name[len(OLD_JOB_MODULE) + 1:]
            return LEGACY_JOBS[short] if short in LEGACY_JOBS else import_attribute(f"{JOB_MODULE}.{short}")
        return super().func
