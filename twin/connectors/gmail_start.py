"""The Gmail connector's entry in the registry (`twin.connectors.REGISTRY`): it runs in every daemon, but until a
token file exists (`twin connect gmail`) it only looks for one, every `TOKEN_RECHECK_S`, and imports nothing of
Google's. Then it imports `twin.connectors.gmail` (google-auth, httplib2 and the API client: +21.8 MiB of the
supervisor's RSS and ~0.5 s of its start, measured with bench/daemon_rss.py's 100k store; issue 18's memory and
cold start) and runs its `GmailConnector` until the daemon stops. A twin that never connected Gmail never loads
them."""

from __future__ import annotations

import asyncio

from twin.connectors import OwnStoreConnector, stopped_within
from twin.store import Store

TOKEN_RECHECK_S = 5.0
"""How often the connector looks for the token file `twin connect gmail` writes (a stat, no network; seconds)."""


class GmailOnceConnected(OwnStoreConnector):
    """Waits for the Gmail token file, then is the `GmailConnector` (same constructor, `state` and lifecycle: the
    constructor only stores, `open()` opens a store connection of its own, `close()` closes it)."""

    def state(self, store: Store) -> dict:
        """What `twin status` shows of Gmail (`twin.connectors.source_state.gmail_state`; read-only)."""
        from twin.connectors.source_state import gmail_state

        return gmail_state(self.settings, store)

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop`: wait for the token file, then run `GmailConnector` (which opens, syncs every
        `gmail_poll_s` and closes; a token revoked later is its to handle)."""
        while not self.settings.gmail_token_path.exists():
            if await stopped_within(stop, TOKEN_RECHECK_S):
                return
        from twin.connectors.gmail import GmailConnector

        await GmailConnector(self.settings, None, self.bus, None).run(stop)
