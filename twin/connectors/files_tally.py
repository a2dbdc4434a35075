"""What the files connector tells the owner: every file of a pass counted as to learn, skipped (with the reason)
or failed (issue "Sources summarise what matters"), and, once, when the start-up backlog is searchable.

- `Tally` counts one pass (the start-up scan, a live batch, a retry); `scan_line()` and `batch_line()` are its
  diary lines: "Files: found 9 files: 2 to learn (2 new, 0 changed, 0 unchanged), 6 skipped (3 not a text
  file, 2 empty, 1 binary), 1 failed (1 unreadable: permission denied); 0 gone."
- `Backlog` follows the file items waiting at start (staged by the start-up scan, or by an earlier run that
  stopped before they were learned) until every one is consumed by the learn worker and
  every memory of a file has a vector, then gives the line "Files: the 20,000 files queued at start are learned
  and searchable (took 14 min)." Without an embedder (keyword-only recall) "searchable" needs no vector.

Skipped and failed: a file the connector will not read by its kind (a name it does not know, a hidden name, a
`files_ignore` glob, an empty or binary file, one too large) is skipped; one it meant to read but could not
(permission denied, an I/O error) failed (`is_failure`).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from twin.store import Store, ingest_items

NOT_FAILURES = ("unreadable: broken symlink", "unreadable: symlink loop", "unreadable: not a regular file")
"""`unreadable: …` reasons that are no failure: there is no regular file to read."""


def is_failure(reason: str) -> bool:
    """True when a skip `reason` means the connector could not read a file it meant to read ("unreadable:
    permission denied", "unreadable directory: …"), not that the file is not for learning."""
    return reason.startswith("unreadable") and reason not in NOT_FAILURES


@dataclass
class Tally:
    """What one pass did. `new`/`changed`/`gone` files were handed over this pass, `unchanged` ones are learned
    already; `reasons` counts every skipped file by reason and `failures` every failed one (reported in the diary
    before or not); `skipped` counts the skip lines written this pass (a restart writes none for a file skipped
    before). `hidden_dirs`: folders not entered (hidden, or a tool's: .git, node_modules). `deferred` counts
    hand-overs left for a retry; `blocked` is set once a hand-over failed, so the rest is deferred at once."""

    new: int = 0
    changed: int = 0
    gone: int = 0
    unchanged: int = 0
    skipped: int = 0
    reasons: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    hidden_dirs: int = 0
    deferred: int = 0
    blocked: bool = False

    @property
    def any(self) -> bool:
        """True when the pass changed something worth a line (a new, changed, gone, skipped or failed file)."""
        return bool(self.new or self.changed or self.gone or self.reasons or self.failures)

    def count_skip(self, reason: str) -> None:
        """Count one file skipped (or failed, `is_failure`) for `reason`."""
        (self.failures if is_failure(reason) else self.reasons)[reason] += 1


def _reasons(counts: Counter) -> str:
    return ", ".join(f"{n:,} {reason}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _files(n: int) -> str:
    return f"{n:,} file{'s' if n != 1 else ''}"


def scan_line(tally: Tally) -> str:
    """The start-up scan's diary line: every file found, by outcome (see the module docstring)."""
    learn = tally.new + tally.changed + tally.unchanged
    skipped, failed = sum(tally.reasons.values()), sum(tally.failures.values())
    line = (f"Files: found {_files(learn + skipped + failed + tally.deferred)}: {learn:,} to learn ({tally.new:,} new,"
            f" {tally.changed:,} changed, {tally.unchanged:,} unchanged), {skipped:,} skipped"
            + (f" ({_reasons(tally.reasons)})" if skipped else "") + f", {failed:,} failed"
            + (f" ({_reasons(tally.failures)})" if failed else "") + f"; {tally.gone:,} gone")
    if tally.deferred:
        line += f"; {_files(tally.deferred)} wait for the store"
    if tally.hidden_dirs:
        line += f"; {tally.hidden_dirs:,} hidden or tool folder{'s' if tally.hidden_dirs != 1 else ''} not read"
    return line + "."


def batch_line(tally: Tally) -> str:
    """A live batch's (or retry's) diary line: "Files: 1 new, 0 changed, 1 gone, 1 skipped (binary), 0 failed."."""
    skipped, failed = sum(tally.reasons.values()), sum(tally.failures.values())
    return (f"Files: {tally.new:,} new, {tally.changed:,} changed, {tally.gone:,} gone, {skipped:,} skipped"
            + (f" ({_reasons(tally.reasons)})" if skipped else "") + f", {failed:,} failed"
            + (f" ({_reasons(tally.failures)})" if failed else "") + ".")


def _took(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


@dataclass
class Backlog:
    """The file items waiting at start (ids up to `up_to`, `files` of them) and when the scan started (monotonic s).
    `model_id`: the model whose vectors make a memory searchable by meaning (None: keyword-only recall)."""

    up_to: int
    files: int
    started_s: float
    model_id: str | None

    @classmethod
    def at_start(cls, store: Store, started_s: float, model_id: str | None) -> Backlog | None:
        """The file items waiting to be learned right after the start-up scan (those it staged and those an
        earlier run staged and did not see learned), or None when there are none (read-only)."""
        up_to, files = ingest_items.file_backlog(store)
        return cls(int(up_to), int(files), started_s, model_id) if files else None

    def waiting(self, store: Store) -> tuple[int, int, int]:
        """`(items not yet learned, items whose job failed for good, file memories without a vector)`; the last is
        0, not asked, while items wait (read-only)."""
        left, failed = ingest_items.file_backlog_left(store, self.up_to)  # cheap: while they wait, nothing more
        if left:
            return int(left), int(failed), 0
        unembedded = 0 if self.model_id is None else store.unembedded_with_source_prefix("file:", self.model_id)
        return int(left), int(failed), int(unembedded)

    def done_line(self, store: Store, now_s: float | None = None) -> str | None:
        """The diary line once the backlog is learned and searchable, else None (read-only):
        "Files: the 20,000 files queued at start are learned and searchable (took 14 min).", with
        "; 2 could not be learned (see twin status)" when jobs failed for good."""
        left, failed, unembedded = self.waiting(store)
        if left or unembedded:
            return None
        took = _took((time.monotonic() if now_s is None else now_s) - self.started_s)
        line = f"Files: the {_files(self.files)} queued at start are learned and searchable (took {took})"
        return line + (f"; {failed:,} could not be learned (see twin status)." if failed else ".")
