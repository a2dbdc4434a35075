"""MCP clients for the tests, nothing mocked: `twin mcp` spawned as a process exactly as a desktop host's config
starts it (the SDK's stdio client), an HTTP server run for real (uvicorn on a loopback port, in a thread) for the
streamable-HTTP client, and a tool call's structured content checked against the tool's published schema."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from contextlib import contextmanager
from pathlib import Path

import jsonschema
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
TWIN_BIN = Path(sys.executable).parent / "twin"
"""The venv's `twin` script: what the README tells a Claude Desktop user to put in `command`."""


def host_env() -> dict[str, str]:
    """The environment a host's config gives `twin mcp`: every `TWIN_…` variable of this test's isolated twin
    (the README's `env` block), `HOME`, and `PYTHONPATH` so the process runs this checkout."""
    env = {k: v for k, v in os.environ.items() if k.startswith("TWIN_")}
    env["HOME"] = os.environ["HOME"]
    env["PYTHONPATH"] = str(ROOT)
    return env


def stdio_server() -> StdioServerParameters:
    """`twin mcp` over stdio as `claude_desktop_config.json` starts it: the venv's twin, args `["mcp"]`, env."""
    return StdioServerParameters(command=str(TWIN_BIN), args=["mcp"], env=host_env())


async def run_async(client: Client, session: Callable[[Client], Awaitable[object]]) -> object:
    """Open `client`, await `session(client)`, close it; what the session returned."""
    async with client:
        return await session(client)


def run(client: Client, session: Callable[[Client], Awaitable[object]]) -> object:
    """`run_async` in an event loop of its own."""
    return asyncio.run(run_async(client, session))


def checked(tool, result) -> dict:
    """The structured content of `result` (a `CallToolResult` of `tool`), after asserting it is no error and it
    validates against the tool's `outputSchema` (JSON Schema, as the tool published it)."""
    assert not result.is_error, result.content
    jsonschema.validate(result.structured_content, tool.output_schema)
    return result.structured_content


def free_socket() -> socket.socket:
    """A TCP socket bound to a free loopback port (the server listens on it; no race for the number)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def serving(app, sock: socket.socket | None = None):
    """Serve ASGI `app` with uvicorn on `sock` (default: a free loopback port) in a thread; yield its base URL
    (`http://127.0.0.1:PORT`); stop it after."""
    import uvicorn

    sock = sock or free_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the test server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()
