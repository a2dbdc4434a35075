"""Connectors: asyncio tasks that turn a source into queued learn jobs (DESIGN.md "Shape"; STYLE.md 3-4).

`REGISTRY` is the one explicit registry: per connector, whether the settings turn it on (`enabled`, light: no
import of the connector) and where its class is, imported only when it is enabled (`load`; the Gmail and
Telegram clients are heavy). The supervisor loops over it: it builds each enabled connector with
`(settings, store, bus, activity)` and runs `await connector.run(stop)`. An unknown name raises `KeyError`.
`stopped_within` is how a connector waits between rounds without outliving `stop`; `OwnStoreConnector` is the
base of the connectors that work on a store connection of their own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

from twin.activity import Activity
from twin.settings import Settings
from twin.store import Store

if TYPE_CHECKING:
    from workers.bus import Bus


@dataclass(frozen=True)
class Connector:
    """One registered connector: its `name`, `target` (`"module:Class"`, imported by `load`) and `enabled`
    (settings -> whether the supervisor runs it). `prepare` (settings, store), when set, runs in the supervisor
    before the connector starts (what `twin status` reads while it runs)."""

    name: str
    target: str
    enabled: Callable[[Settings], bool]
    prepare: Callable[[Settings, Store], None] | None = None

    def load(self) -> type:
        """The connector's class, importing its module now. Raises `ImportError` when a library is missing."""
        module, _, cls = self.target.partition(":")
        return getattr(import_module(module), cls)


def _record_roots(settings: Settings, store: Store) -> None:
    """The watched folders as a `files` cursor, for `twin status` while the daemon runs."""
    store.set_cursor("files", settings.being, "roots", json.dumps([str(r) for r in settings.files_roots]))


REGISTRY = {c.name: c for c in (
    Connector("files", "connectors.files:FilesConnector", lambda s: bool(s.files_roots), _record_roots),
    # always: without a token it only waits for `twin connect gmail` to write one
    Connector("gmail", "connectors.gmail:GmailConnector", lambda s: True),
    Connector("browser", "connectors.browser:BrowserConnector", lambda s: s.browser_enabled),
    Connector("telegram", "connectors.telegram:TelegramConnector", lambda s: s.telegram_bot_token is not None),
)}
"""Every connector by name, in the order the supervisor starts them."""


def enabled(settings: Settings) -> list[Connector]:
    """The connectors `settings` turn on, in registry order (imports none of them)."""
    return [c for c in REGISTRY.values() if c.enabled(settings)]


async def stopped_within(stop: asyncio.Event, delay_s: float) -> bool:
    """Sleep `delay_s` seconds or until `stop` is set, whichever comes first; True when `stop` is set (the
    connector returns from `run`), False when the time ran out (it goes on)."""
    try:
        await asyncio.wait_for(stop.wait(), delay_s)
    except TimeoutError:
        return False
    return True


class OwnStoreConnector:
    """Base of a connector that works on a store connection of its own (its imports or syncs run in worker threads
    and hold transactions, so the supervisor's `store` and `activity`, passed by the registry's
    `(settings, store, bus, activity)`, are not used): `self.store` is opened on `settings.db_path` when it is
    built and `self.activity` writes the diary through it. `close()` closes that connection; the subclass's `run`
    calls it when it returns. Raises `sqlite3.Error` when the database cannot be opened."""

    def __init__(self, settings: Settings, store: Store, bus: Bus, activity: Activity):
        self.settings = settings
        self.store = Store(settings.db_path).open()
        self.bus = bus
        self.activity = Activity(self.store, settings.being)
        self.being = settings.being

    def close(self) -> None:
        """Close the connector's store connection."""
        self.store.close()
