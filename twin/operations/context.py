"""What every operation is given: the settings, an open store, the diary, a lazily opened recall, and a way to
tell a running daemon about new work (`Context`); and the checks of the inputs every operation shares (limits,
sensitivity), written once here (DESIGN.md invariant 9). Namespaces have theirs in `twin.namespaces` (`checked`,
`scope`), which the operations call.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from twin.activity import Activity
from twin.exceptions import InvalidInput
from twin.memory import DEFAULT_SENSITIVITY, SENSITIVITIES, levels_up_to
from twin.recall.hybrid import Recall
from twin.settings import Settings
from twin.store import Store

ASKING: ContextVar[str] = ContextVar("twin_asking", default="local")
"""Which interface asked for the operation running now: `page`, `http`, `cli`, `mcp` (the API's `/mcp`),
`mcp-stdio` (`twin mcp` through the daemon), or `local` (this process, no interface said). Set by the interface
before it calls (`twin.api.routes`, `twin.remote.LanesTwin`); the API's lanes carry it into their threads."""


class SearchRecorder(Protocol):
    """Where a search's server time goes (`twin.api.latency.SearchTimes` in the API process)."""

    def record(self, seconds: float, at: float | None = None, interface: str = "local") -> None:
        """Remember one search of `seconds`, ended at `at` (Unix seconds; now when None), asked by `interface`."""


@dataclass
class Context:
    """What an operation runs with. `store` is open (the caller's; one thread uses it at a time); `activity` the
    diary of `settings.being`; `bus()` a `twin.workers.bus.Bus` of the running daemon or None (then the daemon
    picks the work up when it runs, as after the CLI); the recall is opened on first use (`recall()`: the model and
    an index reader of this process's own, invariant 4) and closed by `close()`. `search_times`, when set (the API's
    read lane), is given the server time of every search (`twin.operations.reads.search`) with the interface that
    asked (`ASKING`); a process without it (the CLI, `twin mcp` without the daemon) keeps no timings."""

    settings: Settings
    store: Store
    activity: Activity
    bus: Callable[[], object | None] = field(default=lambda: None)
    _recall: Recall | None = field(default=None, repr=False)
    search_times: SearchRecorder | None = field(default=None, repr=False)

    @classmethod
    def open(cls, settings: Settings, bus: Callable[[], object | None] | None = None) -> Context:
        """A context over a newly opened store of `settings` (closed by `close()`). Raises `StoreError`."""
        store = Store(settings.db_path).open()
        return cls(settings, store, Activity(store, settings.being), bus or (lambda: None))

    @property
    def being(self) -> str:
        """The being whose memories every operation reads and writes."""
        return self.settings.being

    def recall(self) -> Recall:
        """The recall of this context (`twin.wiring.open_recall`, keyword-only when the embedder cannot load),
        opened on the first call."""
        if self._recall is None:
            from twin.wiring import open_recall

            self._recall = open_recall(self.settings, self.store)
        return self._recall

    def close(self) -> None:
        """Close the recall (if opened) and the store; safe to call twice."""
        if self._recall is not None:
            self._recall.close()
            self._recall = None
        self.store.close()


def sensitivity_levels(max_sensitivity: str | None) -> tuple[str, ...]:
    """The levels a read shows (`twin.memory.levels_up_to`; default `private`: every level but `sensitive`, seed
    003's recall default). Raises `InvalidInput` (field `max_sensitivity`) for an unknown level."""
    try:
        return levels_up_to(max_sensitivity or DEFAULT_SENSITIVITY)
    except ValueError as exc:
        raise InvalidInput(f"max_sensitivity must be one of {', '.join(SENSITIVITIES)}",
                           field="max_sensitivity") from exc
