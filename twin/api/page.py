"""The page at `/twin` (seed 000's "read all of it, correct any of it, delete any of it"; seed 001's `/twin` screen):
static files served by the API itself (`PAGE_DIR`: HTML, ES modules, CSS; nothing from another origin, so it works
with the network off), the one-time session link of `twin open`, and the JSON routes only the page needed so far
(`page_routes`, under `/v1/`, open to every client: one code path). Every route calls `twin.operations`."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Body, FastAPI, Query, Request
from fastapi.responses import FileResponse, PlainTextResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from pydantic import Field
from sse_starlette.sse import EventSourceResponse

from twin import operations as ops
from twin.api.bodies import NAMESPACE_HELP, Kind, LearnBody, namespace_field
from twin.api.bodies import Body as StrictBody
from twin.api.routes import IncludeNamespaces, Limit, MaxSensitivity, Namespace, lanes
from twin.api.session import CSRF_COOKIE, SESSION_COOKIE, SESSION_TTL_S
from twin.operations import page as page_ops
from twin.operations.shapes import ActivityLineOut, ForgetOut, LearnOut, MemoryOut
from twin.store.ids import INTEGER_MAX

PAGE_DIR = Path(__file__).with_name("page")
"""The page's files (package data)."""
POLL_S = 1.0
"""Seconds between two looks at the diary for the live activity stream."""
KEY_FRAGMENT = "key"
"""The name of the page key in the address's fragment after a session link (`/twin#key=…`; app.js reads it)."""
REFUSED_LINK = ("This link was used already or has expired (a link from `twin open` works once, for a few "
                "minutes). Run `twin open` for a new one.\n")

page = APIRouter(include_in_schema=False)
page_routes = APIRouter(prefix="/v1", tags=["page"])


PREFIX_HELP = "every source that starts with `source` (a trailing * optional)"


class ForgetSourceBody(StrictBody):
    """`POST /v1/forget-source`: the source to forget whole (`file:/path`, `email:<thread>`, `telegram:<chat>`,
    `browser`; exactly that source: a trailing `*` is part of its name here; with `prefix`, every source that starts
    with it, as `twin forget --source 'file:/folder/*'`), in `namespace`."""

    source: str = Field(min_length=1, max_length=1000)
    prefix: bool = Field(False, description=PREFIX_HELP)
    namespace: str = namespace_field()


@page.get("/twin")
async def index() -> FileResponse:
    """The page (one HTML file; its scripts and styles are files beside it)."""
    return FileResponse(PAGE_DIR / "index.html", media_type="text/html")


@page.get("/twin/session/{code}")
async def open_session(request: Request, code: str):
    """Trade a one-time link of `twin open` for a session (`twin.api.session`): its cookies set (the secret
    HttpOnly, both SameSite=Strict, Path=/), then to `/twin#key=<page key>` (the fragment stays in the browser; the
    page moves the key to `localStorage` and clears the address at once). A link used before or expired: 403, in
    words."""
    if not await lanes(request).write.run(page_ops.redeem_page_link, code):
        return PlainTextResponse(REFUSED_LINK, status_code=403)
    new = await asyncio.to_thread(request.app.state.sessions.start)
    done = RedirectResponse(f"/twin#{KEY_FRAGMENT}={new.key}", status_code=303)
    done.set_cookie(SESSION_COOKIE, new.secret, max_age=SESSION_TTL_S, path="/", httponly=True, samesite="strict")
    done.set_cookie(CSRF_COOKIE, new.csrf, max_age=SESSION_TTL_S, path="/", httponly=False, samesite="strict")
    return done


@page.get("/v1/activity/stream")
async def activity_stream(request: Request, after: Annotated[int, Query(ge=0, le=INTEGER_MAX)] = 0):
    """The diary live, as server-sent events (`event: line`, `id` the line's id, `data` its JSON): every line
    after `after` (or the `Last-Event-ID` a reconnecting browser sends), then each new one as it is written."""
    last = request.headers.get("last-event-id", "")
    start = int(last) if last.isdigit() and int(last) <= INTEGER_MAX else after

    async def lines():
        nonlocal start
        while True:
            for line in await lanes(request).read.run(page_ops.activity_after, start, 200):
                start = line.id
                yield {"event": "line", "id": str(line.id), "data": line.model_dump_json()}
            await asyncio.sleep(POLL_S)

    return EventSourceResponse(lines(), ping=15, headers={"Cache-Control": "no-store"})


@page_routes.get("/memories", response_model=list[MemoryOut])
async def browse(request: Request, limit: Limit = 50, kind: Kind | None = None,
                 source_type: Annotated[str | None, Query(max_length=64)] = None,
                 tier: Annotated[str | None, Query(pattern="^(warm|cold)$")] = None,
                 include_superseded: bool = False, since: Annotated[str | None, Query(max_length=64)] = None,
                 until: Annotated[str | None, Query(max_length=64)] = None,
                 after: Annotated[int | None, Query(ge=1, le=INTEGER_MAX, description="The last id of the page before")]
                 = None,
                 max_sensitivity: MaxSensitivity = "private", namespace: Namespace = "default",
                 include_namespaces: IncludeNamespaces = None,
                 after_created_at: Annotated[str | None, Query(max_length=64, description=(
                     "The created_at of the last memory shown: the next page holds even if it was forgotten"))] = None):
    """Every memory newest first with the page's filters; `after` (the last id shown) and `after_created_at` (its
    created_at) for the next page, which never skips an older one (seed 000: no pagination trick)."""
    return await lanes(request).read.run(
        page_ops.browse_memories, limit=limit, kind=kind, source_type=source_type, tier=tier,
        include_superseded=include_superseded, since=since, until=until, after=after, max_sensitivity=max_sensitivity,
        namespace=namespace, include_namespaces=include_namespaces, after_created_at=after_created_at)


@page_routes.get("/forget-source", response_model=dict)
async def forget_source_plan(request: Request, source: Annotated[str, Query(min_length=1, max_length=1000)],
                             namespace: Annotated[str, Query(description=NAMESPACE_HELP)] = "default",
                             prefix: Annotated[bool, Query(description=PREFIX_HELP)] = False):
    """What forgetting the whole `source` would remove, per table (the dry run; nothing changes). 404 when nothing
    would be."""
    return await lanes(request).read.run(page_ops.forget_source_plan, source, namespace, prefix)


@page_routes.post("/forget-source", response_model=ForgetOut)
async def forget_source(request: Request, body: ForgetSourceBody):
    """Forget every memory of a source, with every copy of it (`twin forget --source`). No undo. 404 when nothing
    is stored from it (a `*` at the end is part of the name unless `prefix`)."""
    return await lanes(request).write.run(page_ops.forget_source, body.source, body.namespace, body.prefix)


@page_routes.put("/profile", response_model=dict)
async def edit_profile(request: Request, body: Annotated[dict, Body()]):
    """Replace the profile (`{facts, goals, preferences, routines, tone}`), checked as `twin profile edit`
    checks it; 422 naming the field (nothing changed)."""
    return await lanes(request).write.run(page_ops.edit_profile, body)


@page_routes.post("/learn", response_model=LearnOut)
async def learn(request: Request, body: LearnBody):
    """Seed 001's `learn()` on `text`, answered in full: what was created, reinforced (deduplicated), updated (with
    why), superseded and not stored (with why), and whether the profile changed."""
    return await lanes(request).write.run(ops.learn, body.text, body.source, force=body.force,
                                          namespace=body.namespace)


@page_routes.get("/activity", response_model=list[ActivityLineOut])
async def activity_after(request: Request, after: Annotated[int, Query(ge=0, le=INTEGER_MAX)] = 0, limit: Limit = 60):
    """The diary lines after line `after`, oldest first."""
    return await lanes(request).read.run(page_ops.activity_after, after, limit)


@page_routes.get("/stats/weeks", response_model=dict)
async def weeks(request: Request, weeks: Annotated[int, Query(ge=1, le=page_ops.WEEKS_MAX)] = 26):
    """Memories made per week by source type (`{weeks, series}`), for the page's chart."""
    return await lanes(request).read.run(page_ops.memory_weeks, weeks)


@page_routes.get("/stats/supersessions", response_model=dict)
async def supersessions(request: Request, weeks: Annotated[int, Query(ge=1, le=page_ops.WEEKS_MAX)] = 26):
    """Supersessions per week (`{weeks, counts}`; a supersession counts in the week its successor was made)."""
    return await lanes(request).read.run(page_ops.supersession_weeks, weeks)


@page_routes.get("/stats/recall-latency", response_model=dict)
async def recall_latency(request: Request, minutes: Annotated[int, Query(ge=1, le=1440)] = page_ops.LATENCY_MINUTES,
                         step: Annotated[int, Query(ge=1, le=60)] = page_ops.LATENCY_STEP_MIN):
    """This API process's search times of the last `minutes`, per `step` minutes, whichever interface asked (the
    page, HTTP, the CLI, MCP at `/mcp` or `twin mcp` through the daemon): `{start, step_min, buckets: [{start, count,
    p50_ms, p99_ms}], by_interface}` (kept in memory only; a restart starts afresh)."""
    samples = request.app.state.search_times.since(time.time() - minutes * 60, with_interface=True)
    return await lanes(request).read.run(page_ops.recall_latency, samples, minutes, step)


def mount(app: FastAPI) -> None:
    """Add the page, its files and its routes to `app`."""
    app.include_router(page)
    app.include_router(page_routes)
    app.mount("/twin/static", StaticFiles(directory=PAGE_DIR), name="page-files")
