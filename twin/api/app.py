"""The FastAPI app: seed 000's and 001's routes under `/api/twin/`, seed 003's under `/v1/` (`twin.api.routes`),
behind `twin.api.guard.Guard`, with one error shape for everything (`{error: {code, message, field?}}`), never a
traceback; the page at `/twin` (`twin.api.page`). OpenAPI at `/openapi.json`; no `/docs` page (FastAPI's loads
its scripts from a CDN: LIBRARY_NOTES §9)."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from twin import __version__
from twin.api.callers import PersonTokens
from twin.api.guard import LOOPBACK_NAMES, Guard, error_body
from twin.api.lanes import Lanes
from twin.api.mcp_route import mount as mount_mcp
from twin.api.page import mount as mount_page
from twin.api.routes import ERRORS, legacy, v1
from twin.api.session import PageSessions
from twin.api.token import TokenFile
from twin.exceptions import Forbidden, InvalidInput, NotFound, TwinError, invalid_input_of
from twin.remote import LanesTwin
from twin.settings import Settings
from twin.store import Store
from twin.store.state import store_identity

log = logging.getLogger(__name__)

NO_TELEMETRY = {"tracing": False, "metrics": False, "logs": False, "operation_spans": False,
                "auto_configure": False}
"""FastAPI's own OpenTelemetry (spans, metrics, exception logs with their text; exporters from `OTEL_…` variables
when `FASTAPI_OTEL_AUTO_CONFIGURE=true`) all off: nothing of a request leaves through it (invariant 8)."""
BODY_UNREADABLE = "There was an error parsing the body"
"""FastAPI's detail of its 400 for a body it cannot decode (not UTF-8): answered naming `body`."""
STATUS_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
                405: "method_not_allowed", 413: "too_large", 415: "unsupported_media_type", 422: "invalid"}
"""The stable code of an HTTP error the framework raises."""


def accepted_hosts(settings: Settings) -> set[str] | None:
    """The `Host` names the API answers: the loopback names, and the configured address; None (any) for an API
    bound to every address (`0.0.0.0`, `::`) with `api_allow_remote`, which the token alone guards."""
    if settings.api_allow_remote and settings.api_host in ("0.0.0.0", "::"):
        return None
    return {*LOOPBACK_NAMES, settings.api_host.strip("[]").lower()}


def own_origins(settings: Settings) -> set[str]:
    """The browser origins of the API itself (`http://127.0.0.1:7821`, …): the only ones let in."""
    names = accepted_hosts(settings) or {*LOOPBACK_NAMES, settings.api_host}
    return {f"http://{f'[{n}]' if ':' in n else n}:{settings.api_port}" for n in names}


def add_error_handlers(app: FastAPI) -> None:
    """Every failure as `{error: {code, message, field?}}`: 422 for bad input (naming the field), 409 for a
    conflict, 404, 403 for a caller who may not (`Forbidden`), 413, 503 when the store fails, 500 for a bug
    (logged with its traceback, never sent)."""

    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        said = invalid_input_of(list(exc.errors()))  # the one wording, as the MCP tools say it
        return JSONResponse(error_body(said.code, str(said), said.field), 422)

    async def rule(_: Request, exc: InvalidInput) -> JSONResponse:
        return JSONResponse(error_body(exc.code, str(exc), exc.field), 409 if exc.code == "conflict" else 422)

    async def missing(_: Request, exc: NotFound) -> JSONResponse:
        return JSONResponse(error_body("not_found", str(exc), exc.field), 404)

    async def forbidden(_: Request, exc: Forbidden) -> JSONResponse:
        return JSONResponse(error_body("forbidden", str(exc)), 403)

    async def http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = STATUS_CODES.get(exc.status_code, "error")
        if exc.status_code == 400 and exc.detail == BODY_UNREADABLE:  # FastAPI's words for a body it cannot decode
            return JSONResponse(error_body(code, "body: not readable as JSON in UTF-8", "body"), 400)
        return JSONResponse(error_body(code, str(exc.detail)), exc.status_code, headers=exc.headers)

    async def unavailable(_: Request, exc: Exception) -> JSONResponse:
        log.warning("api: the store failed (%s: %s)", type(exc).__name__, exc)
        return JSONResponse(error_body("unavailable", f"the store failed: {exc}"), 503)

    async def bug(_: Request, exc: Exception) -> JSONResponse:
        log.error("api: a request failed (%s)", type(exc).__name__, exc_info=exc)
        return JSONResponse(error_body("internal", "an internal error; the daemon's journal has the details"), 500)

    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(InvalidInput, rule)
    app.add_exception_handler(NotFound, missing)
    app.add_exception_handler(Forbidden, forbidden)
    app.add_exception_handler(StarletteHTTPException, http)
    app.add_exception_handler(sqlite3.Error, unavailable)
    app.add_exception_handler(TwinError, unavailable)
    app.add_exception_handler(Exception, bug)


def create_app(settings: Settings, lanes: Lanes, warm: bool = True) -> Guard:
    """The ASGI app for `settings`: the routes over `lanes` (started at the app's startup, stopped at its
    shutdown), behind the `Guard` with the token of `settings.api_token_path`."""

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        lanes.start(warm=warm)
        try:
            yield
        finally:
            lanes.stop()
            app.state.sessions.close()
            app.state.people.close()

    app = FastAPI(title="twin", version=__version__, description="A personal memory daemon's local API.",
                  docs_url=None, redoc_url=None, openapi_url="/openapi.json", lifespan=lifespan, responses=ERRORS,
                  telemetry=NO_TELEMETRY)
    app.state.lanes = lanes
    with Store(settings.db_path) as store:  # the id a CLI checks before it lets this daemon answer (`/v1/health`)
        app.state.store_id = store_identity(store)
    app.state.sessions = PageSessions(settings.db_path)  # kept in the store: a restart keeps them
    app.state.people = PersonTokens(settings.db_path)  # the people's tokens, by digest
    app.state.search_times = lanes.search_times  # every search's server time, for the page (twin.api.latency)
    app.include_router(legacy)
    app.include_router(v1)
    mount_page(app)  # the page at /twin, its files and its routes (twin.api.page)
    add_error_handlers(app)

    async def say_degraded(line: str) -> None:
        await lanes.write.run(lambda ctx: ctx.activity.record("degraded", line))

    # MCP at /mcp, behind the same Guard, built once the recall is warm (a failure said in the diary)
    mount_mcp(app, LanesTwin(lanes), loading=lanes.read.loading, say=say_degraded)
    return Guard(app, TokenFile(settings.api_token_path), accepted_hosts(settings), own_origins(settings),
                 app.state.sessions, app.state.people)
