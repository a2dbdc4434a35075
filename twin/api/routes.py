"""The routes: seed 000's and 001's under `/api/twin/` (`legacy`), seed 003's under `/v1/` (`v1`). Each only
reads its input and calls one operation of `twin.operations` in a lane (`twin.api.lanes`): reads in the read lane,
writes in the write lane; the rules are the operations'."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel, BeforeValidator

from twin import __version__
from twin import operations as ops
from twin.api.bodies import (
    INCLUDE_HELP,
    NAMESPACE_HELP,
    PROJECT_HELP,
    AdoptionBody,
    CaptureBody,
    ContextBody,
    DreamBody,
    Kind,
    LearnBody,
    MemoryBody,
    NamedProjectBody,
    ProjectBody,
    RecapBody,
    ReflectBody,
    SearchBody,
    Sensitivity,
    ShareBody,
    SourceBody,
    UpdateBody,
)
from twin.api.session import SESSION_COOKIE
from twin.exceptions import InvalidInput
from twin.memory import memory_id_of
from twin.operations import project_sources as source_ops
from twin.operations import projects as project_ops
from twin.operations.context import ASKING
from twin.operations.scopes import agreed_project
from twin.operations.shapes import (
    ActivityLineOut,
    AdoptionOut,
    CaptureOut,
    ContextOut,
    DreamOut,
    ForgetOut,
    HistoryOut,
    Hit,
    LearnOut,
    MemoryOut,
    NeighborsOut,
    OkOut,
    ProjectDeletedOut,
    ProjectOut,
    ReflectOut,
    SearchOut,
    SourceBoundOut,
)
from twin.outside_text import has_text
from twin.store.signals import Signal


class ErrorDetail(BaseModel):
    """`code` a stable word (`invalid`, `not_found`, `unauthorized`, …), `message` for people, `field` the input."""

    code: str
    message: str
    field: str | None = None


class ErrorOut(BaseModel):
    """Every error: `{error: {code, message, field?}}`."""

    error: ErrorDetail


ERRORS = {status: {"model": ErrorOut, "description": text} for status, text in (
    (401, "No or a wrong bearer token"),
    (403, "A Host or Origin that is not the API's own; a project you are no member of, or may not change"),
    (404, "No such memory or project"), (409, "Another memory already says this"), (413, "The body is over 1 MiB"),
    (422, "Bad input; `field` names it"), (503, "The store failed"))}
"""The error responses every route documents (schemathesis checks responses against them)."""

MemoryId = Annotated[int, BeforeValidator(memory_id_of), Path(ge=1, description="A memory's id (plain digits)")]
Limit = Annotated[int, Query(ge=1, description="At most this many, 1-200 (more is refused: 422)")]
MaxSensitivity = Annotated[Sensitivity, Query(description="Show levels up to this; sensitive ones only when asked")]
Namespace = Annotated[str, Query(description=NAMESPACE_HELP)]
IncludeNamespaces = Annotated[list[str] | None, Query(description=INCLUDE_HELP + " (repeat the parameter)")]
ProjectRef = Annotated[str | None, Query(max_length=64, description=PROJECT_HELP)]
ProjectPath = Annotated[str, Path(max_length=64, description="A project's id or name")]

legacy = APIRouter(prefix="/api/twin", tags=["twin (seeds 000, 001)"])
v1 = APIRouter(prefix="/v1", tags=["memory (seed 003)"])


def lanes(request: Request):
    """The app's lanes (`twin.api.lanes.Lanes`)."""
    return request.app.state.lanes


CLIENT_INTERFACES = {"twin-cli": "cli", "twin-mcp": "mcp-stdio"}
"""The `User-Agent` products of twin's own clients (`twin.remote.DaemonTwin`) and the interface each stands for."""


def interface_of(request: Request) -> str:
    """Which interface sent `request`, for the latency chart: `cli` or `mcp-stdio` (twin's own clients, by their
    `User-Agent`), `page` (the page's session cookie, no bearer token), else `http`."""
    product = request.headers.get("user-agent", "").split("/", 1)[0]
    if product in CLIENT_INTERFACES:
        return CLIENT_INTERFACES[product]
    if SESSION_COOKIE in request.cookies and not request.headers.get("authorization"):
        return "page"
    return "http"


async def timed_search(request: Request, operation, *args, **kwargs):
    """`operation` (a search: `ops.search`, `ops.context`) in the read lane, said to be asked by this request's
    interface (`ASKING`, `interface_of`): the operation times itself into the read lane's
    `twin.api.latency.SearchTimes` (the page's recall latency chart); its result or its exception."""
    asked = ASKING.set(interface_of(request))
    try:
        return await lanes(request).read.run(operation, *args, **kwargs)
    finally:
        ASKING.reset(asked)


def project_of(request: Request, *given: str | None) -> str | None:
    """The one project `request` names: every `project` of its query and each of `given` (the body's, the
    path's) must agree (`twin.operations.scopes.agreed_project`: a 422 naming `project` when they do not)."""
    return agreed_project(*request.query_params.getlist("project"), *given)


def answer(shape: BaseModel) -> Response:
    """`shape` as the JSON response, serialized once (the hot paths: FastAPI would validate the model it was
    just given again; its `response_model` still documents it)."""
    return Response(shape.model_dump_json(), media_type="application/json")


# -- seed 000 and 001 -------------------------------------------------------------------------------------------
@legacy.get("/memories", response_model=list[Hit | MemoryOut])
async def memories(request: Request, q: str | None = Query(None, max_length=1 << 20), kind: Kind | None = None,
                   limit: Limit = 50, max_sensitivity: MaxSensitivity = "private", namespace: Namespace = "default",
                   include_namespaces: IncludeNamespaces = None, project: ProjectRef = None):
    """Seed 000: `q` given → hybrid recall, best first; else every memory newest first (nothing older hidden). At
    most `limit` (1-200). Sensitive memories only with `max_sensitivity=sensitive`. In `namespace` and
    `include_namespaces` (seed 003)."""
    scoped = {"namespace": namespace, "include_namespaces": include_namespaces, "project": project_of(request, project)}
    if q is not None and has_text(q):  # a blank `q` (spaces, invisible characters alone) is no query: the listing
        found = await timed_search(request, ops.search, q, limit=limit, kind=kind, max_sensitivity=max_sensitivity,
                                              **scoped)
        return found.results
    return await lanes(request).read.run(ops.list_memories, limit=limit, kind=kind, max_sensitivity=max_sensitivity,
                                         **scoped)


@legacy.post("/memories", response_model=MemoryOut)
async def add_memory(request: Request, body: MemoryBody):
    """Seed 000: store one memory through capture (an exact duplicate reinforces the one there; a near duplicate
    updates it; a contradicted one is superseded). Answers the memory as stored; 422 (`code: rejected`) when the
    worthiness gate refuses it (shorter than 12 characters, filler)."""
    done = await lanes(request).write.run(ops.capture_memory, body.content, kind=body.kind,
                                          importance=body.importance, tags=body.tags, source=body.source,
                                          namespace=body.namespace, project=project_of(request, body.project))
    if done.id is None:
        raise InvalidInput(f"not stored: {done.rejected}", field="content", code="rejected")
    return await lanes(request).read.run(ops.get_memory, done.id, namespace=body.namespace,
                                         project=project_of(request, body.project))


@legacy.delete("/memories/{memory_id}", response_model=OkOut)
async def delete_memory(request: Request, memory_id: MemoryId, namespace: Namespace = "default",
                        project: ProjectRef = None):
    """Seed 000: forget the memory (of `namespace`): row, FTS entry, embedding, index entry and edges, in one call."""
    await lanes(request).write.run(ops.forget_memory, memory_id, namespace=namespace,
                                   project=project_of(request, project))
    return OkOut(ok=True)


@legacy.post("/learn", response_model=list[MemoryOut])
async def learn(request: Request, body: LearnBody, response: Response):
    """Seed 001: learn from `text` (the one `learn()` every source uses); answers the memories it created,
    reinforced or updated. Seed 001's list has no room for what was not stored, so headers say it:
    `Twin-Not-Stored` (how many sentences were not, always set; `POST /v1/learn` answers each reason) and
    `Twin-Note` when part of the text was not read (`LearnOut.note`): an empty list is never unexplained."""
    done = await lanes(request).write.run(ops.learn, body.text, body.source, force=body.force,
                                          namespace=body.namespace, project=project_of(request, body.project))
    response.headers["Twin-Not-Stored"] = str(len(done.rejected))
    if done.note:
        response.headers["Twin-Note"] = done.note
    return done.created + done.reinforced + done.updated


@legacy.post("/reflect", response_model=ReflectOut)
async def reflect(request: Request, body: ReflectBody | None = None):
    """Seed 001: reflect now (no 3-new-memories gate): `{ran, signals, widgets, thought}`. Reflection reads the
    new memories of every namespace (one profile); a `namespace` in the body is checked (422 for a bad name) and
    does not narrow it."""
    return await lanes(request).write.run(ops.reflect, namespace=body.namespace if body else None)


@legacy.get("/activity", response_model=list[ActivityLineOut])
async def activity(request: Request):
    """Seed 001: the newest 60 diary lines, newest first."""
    return await lanes(request).read.run(ops.activity)


# -- seed 003 ---------------------------------------------------------------------------------------------------
@v1.post("/search", response_model=SearchOut)
async def search(request: Request, body: SearchBody):
    """Hybrid search with per-query weights; sensitive hidden unless `max_sensitivity` is `sensitive`."""
    return answer(await timed_search(
        request, ops.search, body.query, limit=body.limit, kind=body.kind, since=body.since, weights=body.weights,
        max_sensitivity=body.max_sensitivity, namespace=body.namespace, include_namespaces=body.include_namespaces,
        project=project_of(request, body.project)))


@v1.post("/context", response_model=ContextOut)
async def context(request: Request, body: ContextBody):
    """A search and the newest memories grouped by kind, in one answer (an agent's first call)."""
    return answer(await timed_search(
        request, ops.context, body.query, limit=body.limit, recent_limit=body.recent_limit, kind=body.kind,
        since=body.since, weights=body.weights, max_sensitivity=body.max_sensitivity, namespace=body.namespace,
        include_namespaces=body.include_namespaces, project=project_of(request, body.project)))


async def _capture(request: Request, body: CaptureBody, compare: bool) -> CaptureOut:
    return await lanes(request).write.run(
        ops.capture_memory, body.content, kind=body.kind, importance=body.importance, tags=body.tags,
        source=body.source, sensitivity=body.sensitivity, source_type_=body.source_type,
        captured_from=body.captured_from, confidence=body.confidence, force=body.force, compare=compare,
        namespace=body.namespace, project=project_of(request, body.project))


@v1.post("/capture", response_model=CaptureOut, response_model_exclude_unset=True)
async def capture(request: Request, body: CaptureBody):
    """Store one durable fact: `{id: null, rejected}`, `{id, deduplicated: true}`, `{id, updated: true}`, `{id,
    superseded: [ids]}` or `{id}` (seed 003's table; all HTTP 200)."""
    return await _capture(request, body, compare=True)


@v1.post("/remember", response_model=CaptureOut, response_model_exclude_unset=True)
async def remember(request: Request, body: CaptureBody):
    """Store one memory (gate and exact-duplicate fast path, no near-duplicate or contradiction check)."""
    return await _capture(request, body, compare=False)


@v1.get("/memories/{memory_id}", response_model=MemoryOut)
async def get_memory(request: Request, memory_id: MemoryId, max_sensitivity: MaxSensitivity = "private",
                     namespace: Namespace = "default", include_namespaces: IncludeNamespaces = None,
                     project: ProjectRef = None):
    """One memory by id, whatever its status; a sensitive one's text only with `max_sensitivity=sensitive`; 404
    when it is in none of `namespace` and `include_namespaces`."""
    return await lanes(request).read.run(ops.get_memory, memory_id, max_sensitivity, namespace=namespace,
                                         include_namespaces=include_namespaces, project=project_of(request, project))


@v1.patch("/memories/{memory_id}", response_model=MemoryOut)
async def update(request: Request, memory_id: MemoryId, body: UpdateBody,
                 max_sensitivity: MaxSensitivity = "private", namespace: Namespace = "default",
                 project: ProjectRef = None):
    """Rewrite a memory (of `namespace`) keeping its id, hits and edges; new content is embedded again."""
    return await lanes(request).write.run(
        ops.update_memory, memory_id, content=body.content, kind=body.kind, importance=body.importance,
        tags=body.tags, sensitivity=body.sensitivity, source_type_=body.source_type, captured_from=body.captured_from,
        confidence=body.confidence, max_sensitivity=max_sensitivity, namespace=namespace,
        project=project_of(request, project))


@v1.delete("/memories/{memory_id}", response_model=ForgetOut)
async def forget(request: Request, memory_id: MemoryId, namespace: Namespace = "default",
                 project: ProjectRef = None):
    """Hard delete (a memory of `namespace`): row, FTS entry, vector, index entry, edges, and every copy of its
    text. No undo."""
    return await lanes(request).write.run(ops.forget_memory, memory_id, namespace=namespace,
                                          project=project_of(request, project))


@v1.get("/memories/{memory_id}/neighbors", response_model=NeighborsOut)
async def neighbors(request: Request, memory_id: MemoryId, depth: Annotated[int, Query(ge=1, le=3)] = 1,
                    max_sensitivity: MaxSensitivity = "private", namespace: Namespace = "default",
                    include_namespaces: IncludeNamespaces = None, project: ProjectRef = None):
    """The memories linked to this one in the graph, up to `depth` edges; `degraded` when the graph failed."""
    return await lanes(request).read.run(ops.neighbors, memory_id, depth, max_sensitivity, namespace=namespace,
                                         include_namespaces=include_namespaces, project=project_of(request, project))


@v1.get("/memories/{memory_id}/history", response_model=HistoryOut)
async def history(request: Request, memory_id: MemoryId, max_sensitivity: MaxSensitivity = "private",
                  namespace: Namespace = "default", include_namespaces: IncludeNamespaces = None,
                  project: ProjectRef = None):
    """The memory's supersession chain, oldest first, and which one is current."""
    return await lanes(request).read.run(ops.history, memory_id, max_sensitivity, namespace=namespace,
                                         include_namespaces=include_namespaces, project=project_of(request, project))


@v1.get("/recent", response_model=list[MemoryOut])
async def recent(request: Request, since: str | None = Query(None, max_length=64), limit: Limit = 50,
                 kind: Kind | None = None, max_sensitivity: MaxSensitivity = "private",
                 namespace: Namespace = "default", include_namespaces: IncludeNamespaces = None,
                 project: ProjectRef = None):
    """Newest first, made since `since` (ISO-8601); never re-promotes a cold memory."""
    return await lanes(request).read.run(ops.recent, since=since, limit=limit, kind=kind,
                                         max_sensitivity=max_sensitivity, namespace=namespace,
                                         include_namespaces=include_namespaces, project=project_of(request, project))


@v1.get("/today", response_model=list[MemoryOut])
async def today(request: Request, limit: Limit = 50, kind: Kind | None = None,
                max_sensitivity: MaxSensitivity = "private", namespace: Namespace = "default",
                include_namespaces: IncludeNamespaces = None, project: ProjectRef = None):
    """The memories made today (since local midnight), newest first."""
    return await lanes(request).read.run(ops.today, limit=limit, kind=kind, max_sensitivity=max_sensitivity,
                                         namespace=namespace, include_namespaces=include_namespaces,
                                         project=project_of(request, project))


@v1.get("/stats", response_model=dict)
async def stats(request: Request):
    """Counts by kind, tier and namespace (`by_namespace`, every namespace), superseded, edges, last decay and
    dream."""
    return await lanes(request).read.run(ops.stats)


@v1.post("/dream-cycle", response_model=DreamOut)
async def dream_cycle(request: Request, body: DreamBody | None = None):
    """Run the dream cycle now over `namespace` (left out: every namespace; a bad name is a 422): merge
    near-duplicates, promote shared-neighbour edges."""
    return await lanes(request).write.run(ops.dream_cycle, namespace=body.namespace if body else None)


@v1.post("/session-recap", response_model=LearnOut)
async def session_recap(request: Request, body: RecapBody):
    """Learn the durable facts of a session summary (through `learn()`); answers what was learned and not."""
    done = await lanes(request).write.run(ops.session_recap, body.summary, body.source, namespace=body.namespace,
                                          project=project_of(request, body.project))
    return done


@v1.post("/adoption", response_model=AdoptionOut)
async def adoption_check(request: Request, body: AdoptionBody):
    """The tool surface, the instructions hash and feature flags; what is stale in what the client reports."""
    return await lanes(request).read.run(ops.adoption, body.observed_tools, body.observed_instructions_hash)


@v1.get("/adoption", response_model=AdoptionOut)
async def adoption(request: Request):
    """The tool surface, the instructions hash and feature flags."""
    return await lanes(request).read.run(ops.adoption)


@v1.get("/signals", response_model=list[Signal])
async def signals(request: Request, status: str | None = Query(None, pattern="^(raised|held_back)$"),
                  limit: Limit = 20):
    """Raised and held-back signals, newest first, with their evidence ids."""
    return await lanes(request).read.run(ops.signals, status, limit)


@v1.get("/profile", response_model=dict)
async def profile(request: Request):
    """The profile: facts, goals, preferences, routines, tone."""
    return await lanes(request).read.run(ops.profile)


@v1.get("/health", response_model=dict)
async def health(request: Request) -> dict:
    """`{ok: true, version, loading, store}`: the API answers (`twin open` asks this before it prints a link);
    `loading` is true while the recall (model, index) is still opening, when a search waits for it (the supervisor
    sends systemd's READY once it is false); `store` the id of the store it serves (`twin.store.state.
    store_identity`), which the CLI compares with its data dir's before it lets the daemon answer
    (`twin.remote.AutoTwin`). Reads nothing."""
    return {"ok": True, "version": __version__, "loading": lanes(request).read.loading(),
            "store": request.app.state.store_id}


@v1.get("/status", response_model=dict)
async def status(request: Request):
    """`twin status`: counts, backlog, queues, index, connectors, lifecycle and degraded modes."""
    return await lanes(request).read.run(ops.status)


# -- seed 003's projects ----------------------------------------------------------------------------------------
@v1.get("/projects", response_model=list[ProjectOut])
async def projects(request: Request):
    """`project_list`: the projects you own or are a member of."""
    return await lanes(request).read.run(project_ops.list_projects)


@v1.post("/projects", response_model=ProjectOut)
async def create_project(request: Request, body: ProjectBody):
    """`project_create`: a new project you own (its id a ULID); 409 when you have a project of that name."""
    return await lanes(request).write.run(project_ops.create_project, body.name)


@v1.post("/projects/deactivate", response_model=list[ProjectOut])
async def deactivate_project(request: Request):
    """`project_deactivate`: no active project from now on; answers your projects."""
    return await lanes(request).write.run(project_ops.deactivate_project)


@v1.get("/projects/{project}", response_model=ProjectOut)
async def show_project(request: Request, project: ProjectPath):
    """One project you are a member of, with the sources bound to it (shown to the twin's owner alone)."""
    return await lanes(request).read.run(project_ops.show_project, project_of(request, project))


@v1.post("/projects/{project}/sources", response_model=SourceBoundOut)
async def bind_source(request: Request, project: ProjectPath, body: SourceBody):
    """Bind a source of the twin owner's (a files folder, a Telegram chat, a Gmail label) to the project: what
    arrives there from now on is learned into it, and the files a folder taught before move into it
    (`files_moving`). The twin's owner alone; 409 when it is bound to another."""
    return await lanes(request).write.run(source_ops.bind_source, project_of(request, project, body.project),
                                          body.kind, body.value)


@v1.delete("/projects/{project}/sources", response_model=SourceBoundOut)
async def unbind_source(request: Request, project: ProjectPath,
                        kind: Annotated[str, Query(max_length=32, description="files, telegram_chat or gmail_label")],
                        value: Annotated[str, Query(max_length=4096,
                                                    description="the folder, chat id or label name or id")]):
    """Unbind a source from the project: what arrives there from now on is the owner's user-global again, and the
    files the project learned from a folder move back out of it (`files_moving`)."""
    return await lanes(request).write.run(source_ops.unbind_source, project_of(request, project), kind, value)


@v1.delete("/projects/{project}", response_model=ProjectDeletedOut)
async def delete_project(request: Request, project: ProjectPath):
    """`project_delete` (its owner only; no undo): every memory, vector, index entry, edge and transcript copy of
    the project erased, then the project."""
    return await lanes(request).write.run(project_ops.delete_project, project_of(request, project))


@v1.post("/projects/{project}/members", response_model=ProjectOut)
async def share_project(request: Request, project: ProjectPath, body: ShareBody):
    """`project_share` (its owner only): `person` becomes a member (reads and writes it)."""
    return await lanes(request).write.run(project_ops.share_project, project_of(request, project, body.project),
                                          body.person)


@v1.delete("/projects/{project}/members/{person}", response_model=ProjectOut)
async def unshare_project(request: Request, project: ProjectPath,
                          person: Annotated[str, Path(max_length=64, description="A member's name")]):
    """`project_unshare` (its owner only): `person` is no member from now on; the owner cannot unshare
    themselves."""
    return await lanes(request).write.run(project_ops.unshare_project, project_of(request, project), person)


@v1.post("/projects/{project}/activate", response_model=ProjectOut)
async def activate_project(request: Request, project: ProjectPath, body: NamedProjectBody | None = None):
    """`project_activate`: your active project (every device of yours sees it): memory calls that name no
    project read it with your own memories and write to it."""
    return await lanes(request).write.run(project_ops.activate_project,
                                          project_of(request, project, body.project if body else None))
