"""Who a bearer token belongs to, for the API's guard (`twin.api.guard`): the owner's token is the token file
(`twin.api.token.TokenFile`); a person's is looked up by its digest in the store (`twin.operations.people.
person_of_token`), through a connection of this object's own, on every request, so a person removed a moment ago
is refused at their next request."""

from __future__ import annotations

import threading
from pathlib import Path

from twin.operations.people import person_of_token
from twin.operations.scopes import Caller
from twin.store import Store

PERSON_PREFIXES = ("/v1/", "/api/twin/", "/mcp", "/openapi.json")
"""The paths a person's token may reach: the memory and project routes, MCP and the API's schema. The page
(`/twin`) and its routes are the owner's alone (its sessions come from `twin open`; the page's routes under
`/v1/` refuse anyone else: `twin.operations.page`)."""


class PersonTokens:
    """The people's tokens in the store at `db_path`, through one connection of their own (opened at first use,
    shared by the threads that call in, one at a time)."""

    def __init__(self, db_path: Path):
        self.db_path = Path(db_path)
        self._store: Store | None = None
        self._lock = threading.Lock()

    def caller(self, token: str | None) -> Caller | None:
        """The `Caller` whose token is `token`, or None (no such person, or none now). Reads the store: call it off
        the event loop."""
        if not token:
            return None
        with self._lock:
            if self._store is None:
                self._store = Store(self.db_path).open()
            found = person_of_token(self._store, token)
        return Caller(found.id, found.name) if found is not None else None

    def close(self) -> None:
        """Close the connection (opened again at the next use)."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
