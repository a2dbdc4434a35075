"""Connectors: asyncio tasks that turn a source into queued learn jobs (DESIGN.md "Shape"; STYLE.md 3-4).

`REGISTRY` is the one explicit registry: per connector, whether the settings turn it on (`enabled`, light: no
import of the connector), where its class is, imported only when it is enabled (`load`; the Gmail and
Telegram clients are heavy), and what it has saved (`state`, `degraded`: `twin.connectors.source_state`, light). The
supervisor loops over it: it builds each enabled connector with `(settings, store, bus, activity)` (the
constructor only stores them) and runs `await connector.run(stop)`, which opens what the connector needs; `twin
status` loops over it too. An unknown name raises `KeyError`.

The contract of a connector class: `__init__(settings, store, bus, activity)` stores; `run(stop)` opens, works
until `stop` is set and closes in `finally`; `state(store) -> dict` is what `twin status` shows of it. Errors
that say what the supervisor does next are `twin.exceptions.ConnectorTransient` (restart with backoff) and
`ConnectorAuthFailed` (stop it and tell the owner).
`stopped_within` is how a connector waits between rounds without outliving `stop`; `OwnStoreConnector` is the
base of the connectors that work on a store connection of their own (opened in `open()`, closed in `close()`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

from twin.activity import Activity
from twin.settings import Settings
from twin.store import Store

if TYPE_CHECKING:
    from twin.workers.bus import Bus


@dataclass(frozen=True)
class Connector:
    """One registered connector: its `name`, `target` (`"module:Class"`, imported by `load`), `enabled`
    (settings -> whether the supervisor runs it), `state` (`"module:function"`, (settings, store) -> the dict
    `twin status` shows; read-only) and `degraded` (`"module:function"`, that dict -> the degraded lines it
    implies; None: never degraded). `prepare` (`"module:function"`, (settings, store)), when set, runs in the
    supervisor before the connector starts (what `twin status` reads while it runs)."""

    name: str
    target: str
    enabled: Callable[[Settings], bool]
    state: str
    degraded: str | None = None
    prepare: str | None = None

    def load(self) -> type:
        """The connector's class, importing its module now. Raises `ImportError` when a library is missing."""
        return _resolve(self.target)

    def read_state(self, settings: Settings, store: Store) -> dict:
        """What the connector has saved, as `twin status` shows it (read-only; the connector is not imported)."""
        return _resolve(self.state)(settings, store)

    def degraded_lines(self, state: dict) -> list[str]:
        """The degraded modes `state` (from `read_state`) implies, one line each; [] when all is well."""
        return _resolve(self.degraded)(state) if self.degraded else []

    def run_prepare(self, settings: Settings, store: Store) -> None:
        """Run `prepare`, if any (the supervisor, before the connector starts)."""
        if self.prepare:
            _resolve(self.prepare)(settings, store)


def _resolve(target: str):
    """The object `"module:name"` names, importing the module now."""
    module, _, name = target.partition(":")
    return getattr(import_module(module), name)


_STATE = "twin.connectors.source_state:"
REGISTRY = {c.name: c for c in (
    Connector("files", "twin.connectors.files:FilesConnector", lambda s: bool(s.files_roots), _STATE + "files_state",
              prepare=_STATE + "record_files_roots"),
    # always: without a token it only waits for `twin connect gmail` to write one (and imports no Google library)
    Connector("gmail", "twin.connectors.gmail_start:GmailOnceConnected", lambda s: True, _STATE + "gmail_state",
              _STATE + "gmail_degraded"),
    Connector("browser", "twin.connectors.browser:BrowserConnector", lambda s: s.browser_enabled,
              _STATE + "browser_state", _STATE + "browser_degraded"),
    Connector("telegram", "twin.connectors.telegram:TelegramConnector", lambda s: s.telegram_bot_token is not None,
              _STATE + "telegram_state", _STATE + "telegram_degraded"),
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
    `(settings, store, bus, activity)`, are not used). The constructor only stores; `open()` (which the subclass's
    `run` calls) opens `self.store` on `settings.db_path` and `self.activity` over it; `close()` closes them
    (`run` calls it when it returns). `open` raises `sqlite3.Error` when the database cannot be opened."""

    def __init__(self, settings: Settings, store: Store, bus: Bus, activity: Activity):
        self.settings = settings
        self.bus = bus
        self.being = settings.being
        self.store: Store | None = None
        self.activity: Activity | None = None

    def open(self):
        """Open the connector's own store connection and diary (already open: unchanged); returns self."""
        if self.store is None:
            self.store = Store(self.settings.db_path).open()
            self.activity = Activity(self.store, self.being)
        return self

    def close(self) -> None:
        """Close the connector's store connection (not open: nothing to do)."""
        if self.store is not None:
            self.store.close()
            self.store = self.activity = None
