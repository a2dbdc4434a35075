"""A source as a forget names it: one exact source, or every source that starts with a stem (`file:/folder/*`).

The trailing `*` is the CLI's way to say "every source that starts so" (`twin forget --source 'file:/notes/*'`).
A stored source may itself end in `*` (a file named `draft*`, a source an API client chose), so an interface that
forgets the source of one memory asks for the exact source (`exact=True`) and the `*` is then a letter like any
other. The one reading of that rule; `twin.lifecycle.forgetting`, `twin.ingest`, `twin.activity` and the store's
staged items use it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SourcePattern"]


@dataclass(frozen=True)
class SourcePattern:
    """`text` is the exact source, or the stem every matching source starts with when `prefix` is True."""

    text: str
    prefix: bool

    @classmethod
    def of(cls, source: str, exact: bool = False) -> SourcePattern:
        """`source` read as the CLI writes it (a trailing `*`: every source that starts with what comes before it;
        a trailing `\\*`: a source whose name ends in `*` itself, `file:/notes/plan\\*` for the file `plan*`
        alone), or, with `exact`, as that one source, `*` and all."""
        if not exact and source.endswith("\\*"):
            return cls(source[:-2] + "*", False)
        if not exact and source.endswith("*"):
            return cls(source[:-1], True)
        return cls(source, False)

    def matches(self, candidate: str) -> bool:
        """True when `candidate` (a stored source, `email:<thread>`, `file:<path>`, a diary subject) is named."""
        return candidate.startswith(self.text) if self.prefix else candidate == self.text
