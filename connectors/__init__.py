"""Connectors: asyncio tasks that turn a source into queued learn jobs (DESIGN.md "Shape"; STYLE.md 3-4).

`CONNECTORS` is the one explicit registry; the supervisor builds each by name with
`(settings, store, bus, activity)` and runs `await connector.run(stop)`. An unknown name raises `KeyError`.
"""

from __future__ import annotations

from connectors.browser import BrowserConnector
from connectors.files import FilesConnector
from connectors.gmail import GmailConnector
from connectors.telegram import TelegramConnector

CONNECTORS = {"files": FilesConnector, "gmail": GmailConnector, "browser": BrowserConnector,
              "telegram": TelegramConnector}
"""Every connector by name."""
