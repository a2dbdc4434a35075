"""A real API server for tests: the app of `twin.api.server.server_for` under uvicorn on a free loopback port, in a
thread of the test process, and an httpx client that carries the token (`running_api`)."""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

from twin.api.lanes import Lanes
from twin.api.server import listening_sockets, server_for
from twin.api.token import ensure_token
from twin.settings import Settings


@dataclass
class Api:
    """A running API: its `url`, `token`, `settings`, and `client` (httpx, the token in every request)."""

    url: str
    token: str
    settings: Settings
    client: httpx.Client

    def anonymous(self) -> httpx.Client:
        """A client without the token."""
        return httpx.Client(base_url=self.url, timeout=30)


@contextmanager
def running_api(settings: Settings, bus=None):
    """Serve the API of `settings` (its `api_port`) until the block ends; no daemon bus unless `bus` is given."""
    token = ensure_token(settings.api_token_path)
    server = server_for(settings, Lanes(settings, bus or (lambda: None)), warm=False)
    sockets = listening_sockets(settings)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=sockets)), name="test-api",
                              daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the API did not start")
        time.sleep(0.02)
    url = f"http://127.0.0.1:{settings.api_port}"
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    try:
        yield Api(url, token, settings, client)
    finally:
        client.close()
        server.should_exit = True
        thread.join(timeout=30)
        for sock in sockets:
            sock.close()
