"""The API's door (DESIGN.md invariant 8), as one ASGI middleware in front of the app: a `Host` that is not the
API's own is refused (DNS rebinding), and so is a browser `Origin` that is not the API's own (no CORS is served); a
body over `MAX_BODY_BYTES` is refused by its `Content-Length` and by counting the bytes that arrive (the body is
read whole, bounded, before the app sees it); a request without the bearer token is refused. Every refusal is
`{error: {code, message}}` JSON, never a page; an exception the app lets out (after its handler answered 500) ends
here, so the server never drops the connection under the client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from twin.api.token import TokenFile

MAX_BODY_BYTES = 1 << 20
"""Largest request body accepted (1 MiB): a memory, a text to learn or a session summary fits many times over."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
"""The names a loopback client may put in `Host`."""


def error_body(code: str, message: str, field: str | None = None) -> dict:
    """The one error shape of the API: `{"error": {"code", "message", "field"?}}`."""
    error = {"code": code, "message": message}
    if field is not None:
        error["field"] = field
    return {"error": error}


def host_name(host: str) -> str:
    """The name part of a `Host` header: `127.0.0.1:7821` → `127.0.0.1`, `[::1]:7821` → `::1`, case-folded."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """ASGI middleware: Host, Origin, body size and token checks before `app` (see the module docstring).
    `hosts` are the host names accepted (None: any, for an API bound to every address with
    `api_allow_remote`); `origins` the browser origins accepted (the API's own)."""

    def __init__(self, app, tokens: TokenFile, hosts: set[str] | None, origins: set[str],
                 max_body: int = MAX_BODY_BYTES):
        self.app, self.tokens, self.hosts, self.origins, self.max_body = app, tokens, hosts, origins, max_body

    def refusal(self, headers: Headers) -> JSONResponse | None:
        """The response refusing a request with these headers, or None to let it in."""
        host = headers.get("host")
        if host is None or (self.hosts is not None and host_name(host) not in self.hosts):
            return JSONResponse(error_body("forbidden_host", "this API answers only requests addressed to it "
                                           "(loopback)"), status_code=403)
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() not in self.origins:
            return JSONResponse(error_body("forbidden_origin", "requests from web pages of other sites are "
                                           "refused"), status_code=403)
        length = headers.get("content-length")
        if length is not None and (not length.strip().isdigit() or int(length) > self.max_body):
            return JSONResponse(error_body("too_large", f"the body is larger than {self.max_body} bytes"),
                                status_code=413)
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not self.tokens.matches(given.strip() or None):
            return JSONResponse(error_body("unauthorized", "a valid bearer token is required (`twin token` prints "
                                           "it)"), status_code=401, headers={"WWW-Authenticate": "Bearer"})
        return None

    async def __call__(self, scope: dict, receive: Callable[[], Awaitable[dict]], send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.refusal(Headers(scope=scope))
        if refused is not None:
            await refused(scope, receive, send)
            return
        body, more = await self.read_body(receive)
        if more:
            await JSONResponse(error_body("too_large", f"the body is larger than {self.max_body} bytes"),
                               status_code=413)(scope, receive, send)
            return
        replayed = False

        async def replay() -> dict:  # the body once, read already; then whatever the client sends next
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        started = False

        async def watched(message: dict) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, replay, watched)
        except Exception:  # noqa: BLE001 - logged with its traceback by the app's handler, which answered 500
            if not started:
                await JSONResponse(error_body("internal", "an internal error; the daemon's journal has the "
                                              "details"), status_code=500)(scope, receive, send)

    async def read_body(self, receive: Callable[[], Awaitable[dict]]) -> tuple[bytes, bool]:
        """The request body, read whole before the app sees it (at most `max_body` + one chunk in memory), and
        whether it was longer than `max_body` (then the rest is not read). A client that left gives b""."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"", False
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return b"", True
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), False
