"""The API's door (DESIGN.md invariant 8), as one ASGI middleware in front of the app: a `Host` that is not the
API's own is refused (DNS rebinding), and so is a browser `Origin` that is not the API's own (no CORS is served); a
body over `MAX_BODY_BYTES` is refused by its `Content-Length` and by counting the bytes that arrive (the body is
read whole, bounded, before the app sees it); a request without the bearer token or a page session
(`twin.api.session`: its cookie with its page key, and for a write its CSRF token; looked up in the store off the
event loop) is refused, except the page's own files and its one-time session link (`PUBLIC_PREFIXES`: they hold no
memory). A bearer token that is not the owner's may be a person's (`twin.api.callers.PersonTokens`, looked up off
the event loop at every request, so a removed person's token is refused at once); a person reaches only
`PERSON_PREFIXES`. The request then runs as its caller (`twin.operations.scopes.CALLER`: the owner for the owner's
token and a page session), which the operations' scope rule reads. Every refusal is `{error: {code, message}}` JSON;
an exception the app lets out (after its handler answered 500) ends here, so the server never drops the connection
under the client. Every response carries `SECURITY_HEADERS` (a Content-Security-Policy of `'self'` only, no
framing, no sniffing, no referrer), and every answer but the page's files `Cache-Control: no-store` (memory text,
revealed secrets included, is never kept in the browser's cache)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from http.cookies import CookieError, SimpleCookie

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from twin.api.callers import PERSON_PREFIXES, PersonTokens
from twin.api.session import CSRF_HEADER, KEY_HEADER, LET_IN, NO_CSRF, NO_KEY, SESSION_COOKIE, PageSessions
from twin.api.token import TokenFile
from twin.operations.scopes import CALLER, OWNER, Caller

MAX_BODY_BYTES = 1 << 20
"""Largest request body accepted (1 MiB): a memory, a text to learn or a session summary fits many times over."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
"""The names a loopback client may put in `Host`."""
PUBLIC_PREFIXES = ("/twin/static/", "/twin/session/")
"""Paths served without a token or session (besides `/twin` itself): the page's files and its one-time link."""
PAGE_ROOT = "/twin"
SECURITY_HEADERS = (
    (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
"""Headers of every response (the page: no inline script or style, nothing from another origin)."""
NO_STORE = (b"cache-control", b"no-store")
ASK_SESSION = object()
"""`Guard.refusal`'s answer when only a page session can let the request in (`Guard.session_refusal` decides)."""
ASK_PERSON = object()
"""`Guard.refusal`'s answer for a bearer token that is not the owner's (`Guard.person_of` decides)."""


def is_public(path: str) -> bool:
    """True for the paths `PUBLIC_PREFIXES` and `PAGE_ROOT` name."""
    return path in (PAGE_ROOT, PAGE_ROOT + "/") or path.startswith(PUBLIC_PREFIXES)


def session_cookie(headers: Headers) -> str | None:
    """The value of the page's session cookie in `headers`, or None (also for a cookie header that does not
    parse)."""
    raw = headers.get("cookie")
    if not raw:
        return None
    jar = SimpleCookie()
    try:
        jar.load(raw)
    except CookieError:
        return None
    morsel = jar.get(SESSION_COOKIE)
    return morsel.value if morsel is not None else None


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
                 sessions: PageSessions, people: PersonTokens, max_body: int = MAX_BODY_BYTES):
        self.app, self.tokens, self.hosts, self.origins, self.max_body = app, tokens, hosts, origins, max_body
        self.sessions, self.people = sessions, people

    def refusal(self, headers: Headers, method: str = "GET", path: str = "/") -> JSONResponse | object | None:
        """The response refusing a request with these headers (its `method`, to `path`), None to let it in (as the
        owner), `ASK_PERSON` when its bearer token is not the owner's (`person_of` decides), or `ASK_SESSION` when
        it has no bearer token (then only a page session lets it in)."""
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
        if is_public(path):
            return None
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.tokens.matches(given.strip() or None):
            return None
        if scheme.lower() == "bearer" and given.strip():
            return ASK_PERSON
        return ASK_SESSION

    def person_of(self, headers: Headers, path: str) -> JSONResponse | Caller:
        """The person whose bearer token `headers` carry, or the response refusing them: 401 when no person holds
        it (a removed person's included), 403 for a path outside `PERSON_PREFIXES`. Reads the store: call it off
        the event loop."""
        found = self.people.caller(headers.get("authorization", "").partition(" ")[2].strip())
        if found is None:
            return JSONResponse(error_body("unauthorized", "a valid bearer token is required (`twin token` prints "
                                           "the owner's; `twin people add` makes a person's)"), status_code=401,
                                headers={"WWW-Authenticate": "Bearer"})
        if not path.startswith(PERSON_PREFIXES):
            return JSONResponse(error_body("forbidden", "this part of the API is the twin owner's alone"),
                                status_code=403)
        return found

    def session_refusal(self, headers: Headers, method: str) -> JSONResponse | None:
        """The response refusing a request without a bearer token (see `twin.api.session`): 401 without a live
        session, or with its cookie but not its page key (what a server on another port of 127.0.0.1 receives);
        403 for a write without its CSRF token; None to let it in. Reads the store: call it off the event loop."""
        found = self.sessions.check(session_cookie(headers), headers.get(KEY_HEADER), method, headers.get(CSRF_HEADER))
        if found == LET_IN:
            return None
        if found == NO_CSRF:
            return JSONResponse(error_body("csrf", "a write from the page needs its X-CSRF-Token (reload the page;"
                                           " if that fails, `twin open` again)"), status_code=403)
        if found == NO_KEY:
            return JSONResponse(error_body("page_key", "a page session is good only with the page key its page "
                                           "holds (the cookie alone is refused); `twin open` for a new session"),
                                status_code=401)
        return JSONResponse(error_body("unauthorized", "a valid bearer token is required (`twin token` prints it), "
                                       "or a page session (`twin open`)"), status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})

    async def __call__(self, scope: dict, receive: Callable[[], Awaitable[dict]], raw_send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, raw_send)
            return
        path = scope.get("path", "/")
        headers_out = SECURITY_HEADERS if path.startswith(PUBLIC_PREFIXES[0]) else (*SECURITY_HEADERS, NO_STORE)

        async def send_secured(message: dict) -> None:
            if message["type"] == "http.response.start":
                given = list(message.get("headers", []))
                named = {name.lower() for name, _ in given}
                message = {**message, "headers": given + [(k, v) for k, v in headers_out if k not in named]}
            await raw_send(message)

        headers, method = Headers(scope=scope), scope.get("method", "GET")
        refused, who = self.refusal(headers, method, path), OWNER
        if refused is ASK_SESSION:
            refused = await asyncio.to_thread(self.session_refusal, headers, method)
        elif refused is ASK_PERSON:
            found = await asyncio.to_thread(self.person_of, headers, path)
            refused, who = (None, found) if isinstance(found, Caller) else (found, OWNER)
        if refused is not None:
            await refused(scope, receive, send_secured)
            return
        send = send_secured
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

        asking = CALLER.set(who)
        try:
            await self.app(scope, replay, watched)
        except Exception:  # noqa: BLE001 - logged with its traceback by the app's handler, which answered 500
            if not started:
                await JSONResponse(error_body("internal", "an internal error; the daemon's journal has the "
                                              "details"), status_code=500)(scope, receive, send)
        finally:
            CALLER.reset(asking)

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
