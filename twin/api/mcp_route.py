"""MCP over streamable HTTP at `/mcp` on the API's app (`twin.mcp_server.server`'s tools), built on its first request.

Loading the MCP SDK and building the server (its types, then a JSON schema for each tool) cost ~0.6 CPU s, a
quarter of the API's start at 100k memories, and ~25 MiB of its RSS (bench/daemon_rss.py), and a search needs none
of it. Built at the start, it pushed READY back (issue 18: cold start to READY <= 3 s); built right after the recall's
warm-up, it held the GIL while the first searches came (they were answered 0.6 s after READY instead of at once).
So `mount` adds the route and nothing else, and the first request to `/mcp` (once the recall is warm) has the server
built in a thread and its session manager run in a task of the app's lifespan; that request, and any that come
meanwhile, wait for it (~0.6 s, once per start of the API). A build that fails leaves `/mcp` answering 503 in the
API's error shape, and says so in the diary. This module does not import the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from twin.api.guard import error_body

if TYPE_CHECKING:
    from twin.remote import TwinAccess

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
"""Where the streamable-HTTP endpoint lives on the API's server."""
LOADING_POLL_S = 0.02
"""How often the build looks whether the app's warm-up is done (seconds)."""


UNAVAILABLE = "MCP over HTTP is not available on this server now: the daemon's journal says why"
"""The message of `/mcp`'s 503 (code `unavailable`) when the server could not be built or has stopped."""


async def _no_diary(line: str) -> None:
    """Where a failed build is said when the mount is given nowhere else: the log alone."""


class McpEndpoint:
    """The ASGI app at `path`: the SDK's streamable-HTTP handler once `keep` has built and started it; until then
    a request waits for it, and a server that could not be built, or has stopped, answers 503 (`UNAVAILABLE`, the
    API's `{error: {code, message}}`). `say` writes a failed build's line to the diary (the API: a `degraded`
    line through its write lane)."""

    def __init__(self, twin: TwinAccess, path: str = MCP_PATH, loading: Callable[[], bool] = lambda: False,
                 say: Callable[[str], Awaitable[None]] = _no_diary):
        self.twin = twin
        self.path = path
        self.loading = loading
        self.say = say
        self.server: Any = None  # the `MCPServer`, once built
        self._handler: Any = None
        self._wanted = asyncio.Event()  # a request to `/mcp` came
        self._settled = asyncio.Event()  # built and running, or failed

    def _build(self) -> tuple[Any, Any]:
        """The server whose tools call `twin` and its ASGI handler (stateless, JSON answers). The SDK's own Host
        check is off: the API's Guard is the one rule (DESIGN.md invariant 9), and it knows when a non-loopback bind
        was allowed. Imports the SDK: runs in a thread."""
        from mcp.server.transport_security import TransportSecuritySettings

        from twin.mcp_server.server import build_server

        server = build_server(self.twin)
        sub = server.streamable_http_app(streamable_http_path=self.path, stateless_http=True, json_response=True,
                                         transport_security=TransportSecuritySettings(
                                             enable_dns_rebinding_protection=False))
        route = next(r for r in sub.routes if isinstance(r, Route) and r.path == self.path)
        return server, route.app

    async def keep(self, stop: asyncio.Event) -> None:
        """Once a request to `/mcp` came and `loading()` is False (the app's own warm-up, which READY waits for, is
        done: polled every `LOADING_POLL_S`), build the server (in a thread), run its session manager until `stop`
        is set, then stop it: in this one task, as the SDK's task group asks. A build or a run that fails is logged
        and leaves `/mcp` answering 503; it never stops the API."""
        try:
            await _first_of(self._wanted, stop)
            while self.loading() and not stop.is_set():
                await asyncio.sleep(LOADING_POLL_S)
            if stop.is_set():  # stopped during the warm-up: nothing to build for
                return
            self.server, handler = await asyncio.to_thread(self._build)
            async with self.server.session_manager.run():
                self._handler = handler
                self._settled.set()
                await stop.wait()
        except Exception as exc:  # the API goes on without MCP; the log and the diary say why
            log.exception("api: MCP over HTTP is not available")
            try:
                await self.say(f"MCP over HTTP (/mcp) is not available: its server could not start "
                               f"({type(exc).__name__}: {exc}); the HTTP API and `twin mcp` go on without it.")
            except Exception:  # a diary that cannot be written is logged, never raised
                log.warning("api: could not write the diary line about MCP", exc_info=True)
        finally:
            self._handler = None
            self._settled.set()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        self._wanted.set()
        await self._settled.wait()
        if self._handler is None:
            response = JSONResponse(error_body("unavailable", UNAVAILABLE), status_code=503)
            await response(scope, receive, send)
            return
        await self._handler(scope, receive, send)


async def _first_of(*events: asyncio.Event) -> None:
    """Wait until one of `events` is set."""
    waits = [asyncio.create_task(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


def mount(app: Starlette, twin: TwinAccess, path: str = MCP_PATH, loading: Callable[[], bool] = lambda: False,
          say: Callable[[str], Awaitable[None]] = _no_diary) -> McpEndpoint:
    """Serve MCP over streamable HTTP at `path` of `app` (the API's FastAPI app, whose middleware checks the
    token, the Host and the Origin of every request, this one's too). Adds the route and wraps `app`'s lifespan so
    that, at the first request to `path` and once `loading()` is False (the API: its recall's warm-up), the server
    is built and runs while `app` does (`McpEndpoint.keep`); neither the startup, that warm-up nor the searches
    wait for it (they compete for the GIL). `say` writes a failed build's diary line (`McpEndpoint`). Returns the
    endpoint (`.server` is the `MCPServer` once built)."""
    endpoint = McpEndpoint(twin, path, loading, say)
    app.router.routes.append(Route(path, endpoint=endpoint))
    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(started: Starlette) -> AsyncIterator[object]:
        async with inner(started) as state:
            stop = asyncio.Event()
            keeper = asyncio.create_task(endpoint.keep(stop), name="mcp-over-http")
            try:
                yield state
            finally:
                stop.set()
                await keeper

    app.router.lifespan_context = lifespan
    return endpoint
