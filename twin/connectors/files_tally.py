"""What the files connector tells the owner: every file of a pass counted as to learn, skipped (with the reason)
or failed (issue "Sources summarise what matters"). When what a pass handed over is searchable, the daemon says so
(`twin.ingest.BacklogWatch`, the one rule for every backlog).

- `Tally` counts one pass (the start-up scan, a live batch, a retry); `scan_line()` and `batch_line()` are its
  diary lines: "Files: found 9 files: 2 to learn (2 new, 0 changed), 0 already learned, 6 skipped (3 not a text
  file, 2 empty, 1 binary), 1 failed (1 unreadable: permission denied); 0 gone."

Skipped and failed: a file the connector will not read by its kind (a name it does not know, a hidden name, a
`files_ignore` glob, an empty or binary file, one too large) is skipped; one it meant to read but could not
(permission denied, an I/O error) failed (`is_failure`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

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
    links: int = 0
    """Symlinks to files inside the folders, read under their own path (`file_walk.Listing.links`)."""
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
    learn = tally.new + tally.changed
    skipped, failed = sum(tally.reasons.values()), sum(tally.failures.values())
    found = learn + tally.unchanged + skipped + failed + tally.deferred
    line = (f"Files: found {_files(found)}: {learn:,} to learn ({tally.new:,} new, {tally.changed:,} changed),"
            f" {tally.unchanged:,} already learned, {skipped:,} skipped"
            + (f" ({_reasons(tally.reasons)})" if skipped else "") + f", {failed:,} failed"
            + (f" ({_reasons(tally.failures)})" if failed else "") + f"; {tally.gone:,} gone")
    if tally.deferred:
        line += f"; {_files(tally.deferred)} wait for the store"
    if tally.hidden_dirs:
        line += f"; {tally.hidden_dirs:,} hidden or tool folder{'s' if tally.hidden_dirs != 1 else ''} not read"
    if tally.links:
        line += (f"; {tally.links:,} symlink{'s' if tally.links != 1 else ''} to a file in the folders, read under "
                 "its own path")
    return line + "."


def batch_line(tally: Tally) -> str:
    """A live batch's (or retry's) diary line: "Files: 1 new, 0 changed, 1 gone, 1 skipped (binary), 0 failed."."""
    skipped, failed = sum(tally.reasons.values()), sum(tally.failures.values())
    return (f"Files: {tally.new:,} new, {tally.changed:,} changed, {tally.gone:,} gone, {skipped:,} skipped"
            + (f" ({_reasons(tally.reasons)})" if skipped else "") + f", {failed:,} failed"
            + (f" ({_reasons(tally.failures)})" if failed else "") + ".")
