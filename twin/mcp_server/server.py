"""twin's MCP server (the official SDK's `MCPServer`): seed 003's tools, three resources and the agent protocol as
its instructions, over stdio (`twin mcp`, for desktop hosts) or streamable HTTP at `/mcp` on the API's server
(`twin.api.mcp_route`).

Both transports serve the current protocol (2026-07-28: one self-contained request per exchange) and the older
handshake clients, as the SDK does; over HTTP the server is stateless (no session kept between requests), so any
request can be answered by any process. Every tool and resource calls one `twin.remote.TwinAccess`: the daemon's
API when it answers, else the store in this process.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from twin import __version__
from twin.exceptions import InvalidInput, NotFound, TwinError, invalid_input_of
from twin.mcp_server.quoting import quoted_document
from twin.mcp_server.surface import SERVER_NAME
from twin.mcp_server.tools import TwinTools
from twin.memory import memory_id_of
from twin.operations.adoption import AGENT_INSTRUCTIONS
from twin.outside_text import json_text
from twin.remote import TwinAccess
from twin.settings import Settings

log = logging.getLogger(__name__)


class TwinServer(MCPServer):
    """The SDK's server, with arguments that fail a tool's input schema answered in twin's one wording
    (`twin.exceptions.invalid_input_of`, as the API says it: "limit: Input should be …", no pydantic link), and an
    argument the tool does not take refused as the API refuses an unknown field (the SDK drops it: a `since` a tool
    has not would go unapplied, and the agent would never know)."""

    _arguments: dict[str, frozenset[str]] | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """`MCPServer.call_tool`; a `ToolError` caused by a `ValidationError` is raised again in twin's words; an
        argument not in the tool's input schema is a `ToolError` naming it and what the tool takes."""
        if self._arguments is None:
            self._arguments = {t.name: frozenset(t.input_schema.get("properties", {})) for t in await self.list_tools()}
        takes = self._arguments.get(name)
        if takes is not None and (unknown := sorted(set(arguments or {}) - takes)):
            raise ToolError(f"Error executing tool {name}: {name} takes no argument {', '.join(unknown)} (it takes "
                            f"{', '.join(sorted(takes)) or 'none'})")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            said = invalid_input_of(exc.__cause__.errors(), located=False)
            raise ToolError(f"Error executing tool {name}: {said}") from exc.__cause__


def build_server(twin: TwinAccess) -> MCPServer:
    """A ready MCP server whose tools and resources call `twin` (not started: `serve_stdio` or `mount` does)."""
    server = TwinServer(SERVER_NAME, title="twin", version=__version__, instructions=AGENT_INSTRUCTIONS,
                       description="The owner's personal memory: recall, capture and forget, on this machine.",
                       log_level="WARNING")
    TwinTools(twin).register(server)
    _add_resources(server, twin)
    return server


def _add_resources(server: MCPServer, twin: TwinAccess) -> None:
    """`twin://memory/{id}` (the memory and its supersession chain, quoted), `twin://profile` and `twin://status`.
    A bad id (`twin.memory.memory_id_of`), a missing memory or a failed read is the resource's error (the SDK's
    `ResourceError`, logged on one INFO line), never a traceback: the client's (a bad id, no such memory: the SDK's
    `ResourceNotFoundError`, JSON-RPC invalid params -32602), or the server's (the store failed: internal, -32603)."""
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

    def read(operation: str, quoted: bool, **arguments) -> str:
        try:
            value = getattr(twin, operation)(**arguments)
            return quoted_document(value) if quoted else json_text(value)
        except (NotFound, InvalidInput) as exc:
            raise ResourceNotFoundError(str(exc)) from exc
        except TwinError as exc:
            raise ResourceError(str(exc)) from exc

    @server.resource("twin://memory/{id}", name="memory", title="A memory and its history",
                     mime_type="application/json")
    def memory(id: str) -> str:
        """One memory by id with its supersession chain (what it replaced, what replaced it), oldest first."""
        try:
            memory_id = memory_id_of(id)  # the id rule of every interface; a bad one is the client's error
        except ValueError as exc:
            raise ResourceNotFoundError(f"id: {exc}") from None
        return read("history", True, memory_id=memory_id)

    @server.resource("twin://profile", name="profile", title="The owner's profile", mime_type="application/json")
    def profile() -> str:
        """What the twin has gathered about its owner (name, places, people, interests), as fields."""
        return read("profile", True)

    @server.resource("twin://status", name="status", title="The twin's status", mime_type="application/json")
    def status() -> str:
        """Counts, queues, the index and degraded modes (what `twin status --json` prints)."""
        return read("status", False)


def serve_stdio(settings: Settings, bus: Callable[[], object | None] | None = None) -> int:
    """`twin mcp`: serve MCP on stdin/stdout until the host closes it. stdout carries the protocol alone: logs go
    to stderr (`twin.logs.configure_logging`). Calls go to the daemon's API when it answers, else to the store
    opened here (`twin.remote.open_twin`; `bus` gives the daemon's job bus, for the work it does after a write).
    Returns the exit code (0)."""
    from twin.logs import configure_logging
    from twin.remote import open_twin

    configure_logging(settings.log_level if settings.log_level != "INFO" else "WARNING", settings.secret_values,
                      stream=sys.stderr)
    twin = open_twin(settings, bus, interface="mcp")  # the daemon's latency chart says mcp-stdio
    log.info("mcp: serving over stdio through %s", twin.describe())
    try:
        build_server(twin).run("stdio")
    finally:
        twin.close()
    return 0
