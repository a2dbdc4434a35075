"""One way for an interface (the CLI, `twin mcp`) to reach the twin's operations: over the running daemon's HTTP
API when it answers, else in this process over the store (DESIGN.md invariant 9: the same functions either way).

`TwinAccess` names the operations once (`twin.operations`, one method each, the same keyword arguments) and
returns what they return as JSON-ready values (dicts and lists, the shapes of `twin.operations.shapes` dumped as
the API sends them), so a caller prints the same whichever way the answer came. `DaemonTwin` sends each call to
the API (httpx, the bearer token from the token file); `LocalTwin` runs it here on a `twin.operations.Context`
(the model and the index loaded here, on the first recall). `open_twin` gives an `AutoTwin`: the daemon for every
call it answers, this process for a call it cannot (no token file, nothing listening), so `twin mcp` started
before the daemon goes through it once it is up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from twin.exceptions import InvalidInput, NotFound, TwinError
from twin.settings import Settings

log = logging.getLogger(__name__)

DAEMON_CONNECT_S = 0.5
"""How long a call waits to connect to the daemon's API before it runs in this process instead (a loopback
connect answers in well under a millisecond, or is refused at once)."""
DAEMON_ANSWER_S = 120.0
"""How long a call waits for the daemon's answer once connected (a learn through a remote model can take long)."""


class DaemonUnreachable(TwinError):
    """The daemon's API cannot be reached (no token file, nothing listening on its port): the request was never
    sent, so running the call in this process instead is safe."""


class TwinAccess:
    """The operations of `twin.operations`, by name (the same keyword arguments; each returns JSON-ready values).
    Subclasses give `_call(operation, arguments)`. Raises what the operation raises: `InvalidInput` (bad input,
    naming the field), `NotFound` (no such memory), `TwinError` (anything else, with a message for people)."""

    def _call(self, operation: str, arguments: dict[str, Any]) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        """Which way the calls go, for a log line ("the daemon at http://127.0.0.1:7821")."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the access holds (a client, a store); safe to call twice."""

    def __getattr__(self, operation: str):
        if operation not in OPERATIONS:
            raise AttributeError(operation)
        return lambda **arguments: self._call(operation, arguments)

    def __enter__(self) -> TwinAccess:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


OPERATIONS = ("search", "context", "list_memories", "recent", "today", "get_memory", "neighbors", "history",
              "stats", "signals", "profile", "status", "activity", "adoption", "capture_memory", "update_memory",
              "forget_memory", "learn", "session_recap", "reflect", "dream_cycle")
"""The operations of `twin.operations` an interface reaches (by their function names; the package's `__all__`
but `Context`: tests/test_remote.py checks). Named here so that choosing the way costs no import of them."""


class LocalTwin(TwinAccess):
    """The operations run in this process on one `twin.operations.Context` (opened on the first call, over the
    store of `settings`; the recall, with the model, on the first search). `bus` gives the running daemon's job
    bus or None (`twin.cli.queues.reachable_bus`): new text is handed to its embedder, a forgotten vector to its
    index writer. Calls are serialised: the context's store is used by one thread at a time (the MCP SDK runs each
    tool call in a worker thread)."""

    def __init__(self, settings: Settings, bus: Callable[[], object | None] | None = None):
        self.settings = settings
        self.bus = bus
        self._context = None
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"the store at {self.settings.db_path}"

    def _call(self, operation: str, arguments: dict[str, Any]) -> Any:
        import twin.operations as operations
        from pydantic_core import to_jsonable_python

        with self._lock:
            if self._context is None:
                self._context = operations.Context.open(self.settings, bus=self.bus)
            return to_jsonable_python(getattr(operations, operation)(self._context, **arguments))

    def close(self) -> None:
        with self._lock:
            if self._context is not None:
                self._context.close()
                self._context = None


def open_twin(settings: Settings, bus: Callable[[], object | None] | None = None) -> TwinAccess:
    """The access an interface uses (see the module docstring)."""
    return LocalTwin(settings, bus)
