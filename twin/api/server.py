"""Serving the API: uvicorn on the configured TCP address and, with `api_socket`, a unix socket in the runtime
dir (both sockets bound here and handed to one server). `python -m twin.api` runs `serve` as a child process of
the supervisor, which restarts it with the workers' backoff; SIGTERM stops it gracefully. No access log: a
query string may hold what the owner searched for, and the journal never repeats memory text."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket

import uvicorn

from twin.api.app import create_app
from twin.api.lanes import DaemonBus, Lanes
from twin.api.token import ensure_token
from twin.daemon import systemd
from twin.exceptions import CANNOT_LISTEN
from twin.settings import Settings
from twin.store import secure_dir

log = logging.getLogger("twin.api")

GRACEFUL_STOP_S = 5
"""Seconds requests in flight get to finish after SIGTERM (within the supervisor's `stop_grace_s`)."""


def listening_sockets(settings: Settings) -> list[socket.socket]:
    """The sockets the API listens on, bound: TCP `api_host:api_port` (IPv6 when the host is one), and with
    `api_socket` the unix socket `api_socket_path` (mode 0600, a stale one replaced). Raises `OSError` when the
    port is taken."""
    family = socket.AF_INET6 if ":" in settings.api_host else socket.AF_INET
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and without it a response
    # written in two parts waits for the client's delayed ACK (~40 ms a request, measured: bench/api_latency.py)
    tcp = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    tcp.bind((settings.api_host.strip("[]"), settings.api_port))
    sockets = [tcp]
    if settings.api_socket:
        path = settings.api_socket_path
        secure_dir(path.parent)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(str(path))
        os.chmod(path, 0o600)
        sockets.append(unix)
    for sock in sockets:
        sock.set_inheritable(True)
    return sockets


def where(settings: Settings) -> str:
    """Where the API listens, in words: `http://127.0.0.1:7821` (and the unix socket)."""
    host = f"[{settings.api_host}]" if ":" in settings.api_host else settings.api_host
    extra = f" and {settings.api_socket_path}" if settings.api_socket else ""
    return f"http://{host}:{settings.api_port}{extra}"


def server_for(settings: Settings, lanes: Lanes | None = None, warm: bool = True) -> uvicorn.Server:
    """A uvicorn server for the app of `settings` (lanes over the daemon's bus unless given), not started."""
    lanes = lanes or Lanes(settings, DaemonBus(settings))
    config = uvicorn.Config(create_app(settings, lanes, warm=warm), log_config=None, access_log=False,
                            proxy_headers=False, server_header=False, lifespan="on",
                            timeout_graceful_shutdown=GRACEFUL_STOP_S)
    return uvicorn.Server(config)


def serve(settings: Settings, lanes: Lanes) -> int:
    """Make the token if there is none (`twin.api.token.ensure_token`), bind, serve until SIGTERM/SIGINT, over
    `lanes` (`python -m twin.api` starts them before importing this module, so the recall loads meanwhile; stopped
    here when the port cannot be bound). Returns 0 after a clean stop, `CANNOT_LISTEN` when the port cannot be
    bound (said in the log)."""
    ensure_token(settings.api_token_path)
    try:
        sockets = listening_sockets(settings)
    except OSError as exc:
        log.error("api: cannot listen on %s: %s", where(settings), exc.strerror or exc)
        lanes.stop()
        return CANNOT_LISTEN
    log.info("api: listening on %s", where(settings))
    asyncio.run(serve_and_tell(server_for(settings, lanes), lanes, sockets))
    return 0


async def serve_and_tell(server: uvicorn.Server, lanes: Lanes, sockets: list[socket.socket]) -> None:
    """Serve until stopped; once the server accepts requests and the read lane's recall is open (a search is
    answered at once), send READY=1 to `$NOTIFY_SOCKET` (`twin.daemon.systemd.notify`): the supervisor gives the API
    a socket of its own and sends systemd's READY after this one (issue 18: READY when the daemon can answer)."""
    told = asyncio.create_task(tell_ready(server, lanes))
    try:
        await server.serve(sockets=sockets)
    finally:
        told.cancel()


async def tell_ready(server: uvicorn.Server, lanes: Lanes) -> None:
    """Wait for `server.started` and the end of the recall's warm-up (polling every 20 ms), then notify READY=1."""
    while not server.started or lanes.read.loading():
        await asyncio.sleep(0.02)
    systemd.notify("READY=1")
