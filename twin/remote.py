"""One way for an interface (the CLI, `twin mcp`) to reach the twin's operations: over the running daemon's HTTP
API when it answers, else in this process over the store (DESIGN.md invariant 9: the same functions either way).

`TwinAccess` names the operations once (`twin.operations`, one method each, the same keyword arguments) and
returns what they return as JSON-ready values (dicts and lists, the shapes of `twin.operations.shapes` dumped as
the API sends them), so a caller prints the same whichever way the answer came. `DaemonTwin` sends each call to
the API (one JSON request, the bearer token from the token file); `LocalTwin` runs it here on a
`twin.operations.Context` (the model and the index loaded here, on the first recall). `open_twin` gives an
`AutoTwin`: the daemon for every call it answers, this process for a call it cannot (no token file, nothing
listening), so `twin mcp` started before the daemon goes through it once it is up.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from twin.exceptions import Forbidden, InvalidInput, NotFound, TwinError
from twin.namespaces import NAME_PATTERN
from twin.settings import Settings

log = logging.getLogger(__name__)

DAEMON_CONNECT_S = 0.5
"""How long a call waits to connect to the daemon's API before it runs in this process instead (a loopback
connect answers in well under a millisecond, or is refused at once)."""
DAEMON_ANSWER_S = 120.0
"""How long a call waits for the daemon's answer once connected (a learn through a remote model can take long)."""


class DaemonUnreachable(TwinError):
    """The daemon's API cannot be reached (no token file, nothing listening on its port): the request was never
    sent, so running the call in this process instead is safe."""


class TwinAccess(ABC):
    """The operations of `twin.operations`, by name (the same keyword arguments; each returns JSON-ready values).
    Subclasses give `_call(operation, arguments)`. Raises what the operation raises: `InvalidInput` (bad input,
    naming the field), `NotFound` (no such memory), `TwinError` (anything else, with a message for people)."""

    @abstractmethod
    def _call(self, operation: str, arguments: dict[str, Any]) -> Any:
        """Run `operation` with `arguments` this access's way; its JSON-ready answer."""

    @abstractmethod
    def describe(self) -> str:
        """Which way the calls go, for a log line ("the daemon at http://127.0.0.1:7821")."""

    def close(self) -> None:
        """Release what the access holds (a client, a store); safe to call twice."""
        return None  # nothing held by default

    answered_here = True
    """Whether the last call ran in this process (the CLI says what only this process can tell, e.g. how many
    memories wait for a vector)."""

    def __getattr__(self, operation: str):
        """`operation(**arguments)`: arguments given as None are left out (the operation's default applies)."""
        if operation not in OPERATIONS:
            raise AttributeError(operation)
        return lambda **arguments: self._call(operation, {k: v for k, v in arguments.items() if v is not None})

    def __enter__(self) -> TwinAccess:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


OPERATIONS = ("search", "context", "list_memories", "recent", "today", "get_memory", "neighbors", "history",
              "stats", "signals", "profile", "status", "activity", "adoption", "capture_memory", "update_memory",
              "forget_memory", "learn", "session_recap", "reflect", "dream_cycle", "list_projects", "create_project",
              "delete_project", "share_project", "unshare_project", "activate_project", "deactivate_project",
              "show_project", "bind_source", "unbind_source")
"""The operations of `twin.operations` an interface reaches (by their function names; the package's `__all__`
but `Context`: tests/test_remote.py checks). Named here so that choosing the way costs no import of them."""


class LocalTwin(TwinAccess):
    """The operations run in this process on one `twin.operations.Context` (opened on the first call, over the
    store of `settings`; the recall, with the model, on the first search). `bus` gives the running daemon's job
    bus or None (`twin.cli.queues.reachable_bus`): new text is handed to its embedder, a forgotten vector to its
    index writer. Calls are serialised: the context's store is used by one thread at a time (the MCP SDK runs each
    tool call in a worker thread)."""

    def __init__(self, settings: Settings, bus: Callable[[], object | None] | None = None):
        self.settings = settings
        self.bus = bus
        self._context = None
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"the store at {self.settings.db_path}"

    def _call(self, operation: str, arguments: dict[str, Any]) -> Any:
        from pydantic_core import to_jsonable_python

        import twin.operations as operations

        with self._lock:
            if self._context is None:
                self._context = operations.Context.open(self.settings, bus=self.bus)
            return to_jsonable_python(getattr(operations, operation)(self._context, **arguments))

    def close(self) -> None:
        with self._lock:
            if self._context is not None:
                self._context.close()
                self._context = None



WRITES = frozenset({"capture_memory", "update_memory", "forget_memory", "learn", "session_recap", "reflect",
                    "dream_cycle", "create_project", "delete_project", "share_project", "unshare_project",
                    "activate_project", "deactivate_project", "bind_source", "unbind_source"})
"""The operations that write (the API runs them on its write lane)."""


class LanesTwin(TwinAccess):
    """The operations on the lanes of the API's process (`twin.api.lanes.Lanes`: reads on the read lane, writes on
    the write lane, each one thread with its own store and the read lane's recall), for the MCP server it serves
    at `/mcp`: one model and one index reader per process, not one more. Each call is said to be asked by
    `interface` (`twin.operations.context.ASKING`: the latency chart names it)."""

    def __init__(self, lanes, interface: str = "mcp"):
        self.lanes, self.interface = lanes, interface

    def describe(self) -> str:
        return "the API's lanes"

    def _call(self, operation: str, arguments: dict[str, Any]) -> Any:
        from pydantic_core import to_jsonable_python

        import twin.operations as operations
        from twin.operations.context import ASKING

        lane = self.lanes.write if operation in WRITES else self.lanes.read
        asked = ASKING.set(self.interface)
        try:
            return to_jsonable_python(lane.call(getattr(operations, operation), **arguments))
        finally:
            ASKING.reset(asked)


class TokenRefused(TwinError):
    """The daemon's API answered 401 to the token in use (the guard refused it before any operation ran)."""


class NotOverHttp(TwinError):
    """An operation, or an argument of it, that the API has no route for (`ROUTES`): it runs in this process."""


SCOPED_READ = "max_sensitivity namespace include_namespaces project"
"""The arguments every read carries: the sensitivity it may show and the namespaces it reads (seed 003)."""
ROUTES: dict[str, tuple[str, str, frozenset[str]]] = {
    name: (method, path, frozenset(args.split())) for name, (method, path, args) in {
        "search": ("POST", "/v1/search", f"query limit kind since weights {SCOPED_READ}"),
        "context": ("POST", "/v1/context", f"query limit recent_limit kind since weights {SCOPED_READ}"),
        "list_memories": ("GET", "/api/twin/memories", f"limit kind {SCOPED_READ}"),
        "recent": ("GET", "/v1/recent", f"since limit kind {SCOPED_READ}"),
        "today": ("GET", "/v1/today", f"limit kind {SCOPED_READ}"),
        "get_memory": ("GET", "/v1/memories/{memory_id}", f"memory_id {SCOPED_READ}"),
        "neighbors": ("GET", "/v1/memories/{memory_id}/neighbors", f"memory_id depth {SCOPED_READ}"),
        "history": ("GET", "/v1/memories/{memory_id}/history", f"memory_id {SCOPED_READ}"),
        "update_memory": ("PATCH", "/v1/memories/{memory_id}", "memory_id content kind importance tags sensitivity "
                                                               "source_type_ captured_from confidence max_sensitivity "
                                                               "namespace project"),
        "forget_memory": ("DELETE", "/v1/memories/{memory_id}", "memory_id namespace project"),
        "capture_memory": ("POST", "/v1/capture", "content kind importance tags source sensitivity source_type_ "
                                                  "captured_from confidence force compare namespace project"),
        "stats": ("GET", "/v1/stats", ""),
        "signals": ("GET", "/v1/signals", "status limit"),
        "profile": ("GET", "/v1/profile", ""),
        "status": ("GET", "/v1/status", ""),
        "activity": ("GET", "/api/twin/activity", ""),
        "adoption": ("POST", "/v1/adoption", "observed_tools observed_instructions_hash"),
        "learn": ("POST", "/v1/learn", "text source force namespace"),
        "session_recap": ("POST", "/v1/session-recap", "summary source namespace project"),
        "reflect": ("POST", "/api/twin/reflect", "namespace"),
        "dream_cycle": ("POST", "/v1/dream-cycle", "namespace"),
        "list_projects": ("GET", "/v1/projects", ""),
        "create_project": ("POST", "/v1/projects", "name"),
        "delete_project": ("DELETE", "/v1/projects/{project}", "project"),
        "share_project": ("POST", "/v1/projects/{project}/members", "project person"),
        "unshare_project": ("DELETE", "/v1/projects/{project}/members/{person}", "project person"),
        "activate_project": ("POST", "/v1/projects/{project}/activate", "project"),
        "deactivate_project": ("POST", "/v1/projects/deactivate", ""),
        "show_project": ("GET", "/v1/projects/{project}", "project"),
        "bind_source": ("POST", "/v1/projects/{project}/sources", "project kind value"),
        "unbind_source": ("DELETE", "/v1/projects/{project}/sources", "project kind value"),
    }.items()}
"""Each operation's route on the daemon's API (`twin.api.routes`): `(method, path, the arguments it carries)`. A
`{name}` in the path is filled from that argument; the rest go as the query (GET) or the JSON body. An operation
missing here, or called with an argument its route does not carry (`list_memories(include_superseded=…)`), runs
in this process (`NotOverHttp`)."""
WIRE_NAMES = {"source_type_": "source_type"}
"""Arguments whose name in the API's bodies differs from the operation's."""
QUERY_ARGS = {"update_memory": frozenset({"max_sensitivity", "namespace", "project"})}
"""Arguments that go in the query of a route with a body (PATCH's `max_sensitivity` and `namespace`: the memory's
namespace, not a field to change). A GET's and a DELETE's arguments all go in the query."""


def path_segment(name: str, value: Any) -> str:
    """`value` as one path segment of a route's `{name}` (a memory id, a project's or a person's name or id), or
    `NotFound` naming it when it cannot be one: names and ids are `twin.namespaces.NAME_PATTERN` (letters, digits,
    `_.-`), so "work/members/bob", "work?x=1" or ".." name nothing, and must never reach another route (the
    server matches routes on the decoded path, so escaping alone would not keep a "/" inside the segment)."""
    text = str(value).strip()  # as a name is stripped when it is made
    if NAME_PATTERN.fullmatch(text) is None or not text.strip("."):
        raise NotFound(f"no such {name.replace('_id', '').replace('_', ' ')} {text[:80]!r}")
    return quote(text, safe="")


class DaemonTwin(TwinAccess):
    """The operations over the daemon's HTTP API at `base_url` (`http://host:port`), with the bearer `token`: one
    JSON request per call on a loopback connection of its own (the standard library's `http.client`: importing
    an HTTP client library costs `twin recall` more than the call itself; connecting waits `DAEMON_CONNECT_S`,
    the answer `DAEMON_ANSWER_S`). Raises `DaemonUnreachable` when nothing accepts the connection (the request
    was not sent), `NotOverHttp` for a call the API has no route for, `InvalidInput`/`NotFound` for the API's
    422, 409 and 404 (its message and field), `TokenRefused` for a 401 that a fresh read of the token did not cure,
    `TwinError` for any other failure (5xx: the daemon failed).

    `token_source` gives the current token (the token file read again, `daemon_token`): on a 401 (`twin token
    --rotate` ran while this access lives, e.g. in a long-running `twin mcp`) the token is read again and, when it
    changed, the request is sent once more. A 401 is the guard's answer before any operation runs, so sending the
    request again cannot do a write twice.

    `interface` names the caller in the `User-Agent` (`twin-cli/<version>`, `twin-mcp/<version>`): the daemon's
    latency chart says which interface asked (`twin.api.routes.interface_of`)."""

    def __init__(self, base_url: str, token: str, token_source: Callable[[], str | None] | None = None,
                 interface: str = "cli", answer_s: float = DAEMON_ANSWER_S):
        from urllib.parse import urlsplit

        from twin import __version__

        self.base_url, self.answer_s = base_url, answer_s
        self._agent = f"twin-{interface}/{__version__}"
        parts = urlsplit(base_url)
        self._host, self._port = parts.hostname, parts.port
        self._token_source = token_source
        self._use_token(token)

    def _use_token(self, token: str) -> None:
        self._token = token
        self._headers = {"Authorization": f"Bearer {token}", "Accept": "application/json", "User-Agent": self._agent}

    def _token_changed(self) -> bool:
        """Read the token again (`token_source`); True when there is a new one (then it is used from now on)."""
        fresh = self._token_source() if self._token_source is not None else None
        if fresh is None or fresh == self._token:
            return False
        log.info("remote: the API's token changed; using the new one")
        self._use_token(fresh)
        return True

    def describe(self) -> str:
        return f"the daemon at {self.base_url}"

    def _call(self, operation: str, arguments: dict[str, Any]) -> Any:
        if operation not in ROUTES or set(arguments) - ROUTES[operation][2]:
            raise NotOverHttp(f"{operation} with {sorted(arguments)} has no route on the API")
        method, path, _ = ROUTES[operation]
        args = dict(arguments)
        if operation == "capture_memory" and args.pop("compare", True) is False:
            path = "/v1/remember"
        path = path.format(**{k: path_segment(k, args.pop(k)) for k in list(args) if "{" + k + "}" in path})
        wire = {WIRE_NAMES.get(k, k): v for k, v in args.items()}
        in_query = QUERY_ARGS.get(operation, frozenset())
        query = {k: v for k, v in wire.items() if method in ("GET", "DELETE") or k in in_query}
        body = None if method in ("GET", "DELETE") else {k: v for k, v in wire.items() if k not in query}
        return self._asked(method, path, query, body)

    def health(self, answer_s: float | None = None) -> dict:
        """`GET /v1/health`: `{ok, version, loading, store}` when the API answers with this token (`loading`: its
        recall is still opening), waiting `answer_s` seconds for the answer (default `self.answer_s`). Raises
        `DaemonUnreachable`, `TokenRefused` or `TwinError` as `_call` does, and `ValueError` for a 2xx answer that
        is not JSON."""
        return self._asked("GET", "/v1/health", {}, None, answer_s)

    def _asked(self, method: str, path: str, query: dict, body: dict | None, answer_s: float | None = None) -> Any:
        """`_request`, asked once more with the token read afresh after a 401 (`_token_changed`: `twin token
        --rotate` ran since); `TokenRefused` when that did not cure it."""
        try:
            return self._request(method, path, query, body, answer_s)
        except TokenRefused:
            if not self._token_changed():
                raise
            return self._request(method, path, query, body, answer_s)

    def _request(self, method: str, path: str, query: dict, body: dict | None,
                 answer_s: float | None = None) -> Any:
        """One request (the answer waited for `answer_s` seconds, default `self.answer_s`); the decoded JSON
        answer, or the error it stands for (`_error_of`)."""
        import http.client
        import json
        import socket
        from urllib.parse import urlencode

        connection = http.client.HTTPConnection(self._host, self._port, timeout=DAEMON_CONNECT_S)
        try:
            try:
                connection.connect()
            except OSError as exc:
                raise DaemonUnreachable(f"the daemon's API at {self.base_url} does not answer ({exc})") from exc
            connection.sock.settimeout(answer_s or self.answer_s)
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            headers = dict(self._headers)
            data = None if body is None else json.dumps(body).encode("utf-8")
            if data is not None:
                headers["Content-Type"] = "application/json"
            target = path + ("?" + urlencode(query, doseq=True) if query else "")
            try:
                connection.request(method, target, body=data, headers=headers)
                answer = connection.getresponse()
                status, raw = answer.status, answer.read()
            except (OSError, http.client.HTTPException) as exc:
                raise TwinError(f"the daemon's API at {self.base_url} failed: {exc}") from exc
        finally:
            connection.close()
        if 200 <= status < 300:
            return json.loads(raw)
        raise _error_of(status, raw)


NAMESPACE_FIELDS = ("namespace", "include_namespaces")
"""The fields of a `NamespaceError` (`twin.namespaces`)."""


def _error_of(status: int, raw: bytes) -> TwinError:
    """The error an API answer with a 4xx/5xx `status` and body `raw` stands for (`{error: {code, message,
    field?}}`): the class the operation raised where the answer tells it (`NamespaceError` for a 422 naming a
    namespace field), else `InvalidInput`, `NotFound`, `Forbidden` (a 403 `forbidden`: a project out of the
    caller's reach), `TokenRefused` or `TwinError`."""
    import json

    from twin.namespaces import NamespaceError

    try:
        error = json.loads(raw)["error"]
        message, code, field = str(error["message"]), str(error.get("code", "")), error.get("field")
    except (ValueError, KeyError, TypeError):
        message, code, field = raw[:200].decode("utf-8", "replace"), "", None
    if status == 422 and field in NAMESPACE_FIELDS and code in ("", "invalid"):
        return NamespaceError(field, message)  # as the operation raised it: the CLI's usage error either way
    if status in (409, 422):
        return InvalidInput(message, field=field, code=code or "invalid")
    if status == 404:
        return NotFound(message)
    if status == 403 and code == "forbidden":
        return Forbidden(message)
    if status == 401:
        return TokenRefused("the daemon refused the token, and the token file holds no other one "
                            "(`twin token` prints the current one)")
    return TwinError(f"the daemon answered {status}: {message}")


class AutoTwin(TwinAccess):
    """The daemon for every call it answers (`DaemonTwin`), this process for a call it cannot take
    (`DaemonUnreachable`, `NotOverHttp`: `LocalTwin`, opened on first need) and for every call when the daemon
    serves another store than this data dir's (asked once, `serves_this_store`). A call that reached the daemon
    and failed is not run again here."""

    def __init__(self, settings: Settings, bus: Callable[[], object | None] | None = None, interface: str = "cli"):
        self.settings, self.bus, self.interface = settings, bus, interface
        self._daemon: DaemonTwin | None = None
        self._local: LocalTwin | None = None
        self._checked: bool | None = None  # the daemon serves this data dir's store (`serves_this_store`)

    def describe(self) -> str:
        return f"the daemon at {daemon_url(self.settings)} when it answers, else {LocalTwin(self.settings).describe()}"

    def daemon(self) -> DaemonTwin | None:
        """The daemon's access when its token file exists (the API made it at its first start), else None."""
        if self._daemon is None:
            token = daemon_token(self.settings)
            if token is not None:
                self._daemon = DaemonTwin(daemon_url(self.settings), token,
                                          token_source=lambda: daemon_token(self.settings), interface=self.interface)
        return self._daemon

    def serves_this_store(self, daemon: DaemonTwin) -> bool:
        """True when the daemon answering at the configured address serves the store of this process's data dir
        (`identity_of` says "ours"). Another twin's daemon on that port (one started with another `TWIN_DATA_DIR`,
        with its own token or the same config) must never read, write or forget for this data dir, nor another
        program that holds the port; then the calls run in this process, with one log line saying what answered
        (never its words: they are another program's). Raises `DaemonUnreachable` when nothing accepts the
        connection."""
        found = identity_of(daemon, self.settings.db_path)
        if found != "ours":
            log.warning("remote: %s: %s; running here instead", daemon.base_url, IDENTITIES[found])
        return found == "ours"

    def _call(self, operation: str, arguments: dict[str, Any]) -> Any:
        daemon = self.daemon()
        if daemon is not None:
            self.answered_here = False
            try:
                if self._checked is None:
                    self._checked = self.serves_this_store(daemon)
                if self._checked:
                    return daemon._call(operation, arguments)
            except (DaemonUnreachable, NotOverHttp) as exc:
                log.debug("remote: %s; in this process", exc)
        self.answered_here = True
        if self._local is None:
            self._local = LocalTwin(self.settings, self.bus)
        return self._local._call(operation, arguments)

    def close(self) -> None:
        for access in (self._daemon, self._local):
            if access is not None:
                access.close()


def daemon_url(settings: Settings) -> str:
    """The base URL of the daemon's API: `http://<api_host>:<api_port>` (a wildcard host is reached on loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(settings.api_host, settings.api_host)
    return f"http://[{host.strip('[]')}]:{settings.api_port}" if ":" in host else f"http://{host}:{settings.api_port}"


def daemon_token(settings: Settings) -> str | None:
    """The API's bearer token from its file (`settings.api_token_path`, made by the API at its first start), or
    None when there is none (no daemon has served the API yet) or it cannot be read."""
    try:
        return settings.api_token_path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


HEALTH_ANSWER_S = 2.0
"""How long the health check that tells whose daemon answers at the API's address waits for its answer (seconds;
a twin's health answers in milliseconds, loading or not): a program that takes the connection and never answers
costs a command this, not `DAEMON_ANSWER_S`."""
IDENTITIES = {
    "ours": "this data dir's twin",
    "another store": "another twin's daemon answers there (it serves another store)",
    "no store id": "what answers there gives no store id (an older twin, or not a twin)",
    "refused": "what answers there refuses this data dir's token (another twin, or another program)",
    "silent": f"something takes the connection there but gives no answer in {HEALTH_ANSWER_S:g} s",
    "not a twin": "another program answers there, not a twin's API",
}
"""What each answer of `identity_of` means, as a log line and `twin status` say it."""


def identity_of(daemon: DaemonTwin, db_path) -> str:
    """Whose API answers at `daemon`'s address, asked once by its health (`HEALTH_ANSWER_S`): a key of
    `IDENTITIES`: "ours" (a twin whose `store` is the id kept in `db_path`, `twin.store.state.peek_store_identity`),
    "another store", "no store id", "refused" (a 401 with the token read afresh), "silent", or "not a twin" (an HTML
    page, a 404, a 2xx that is not JSON: any other answer). Raises `DaemonUnreachable` when nothing accepts the
    connection."""
    from twin.store.state import peek_store_identity  # here: a call the daemon answers imports no store

    try:
        answer = daemon.health(HEALTH_ANSWER_S)
    except DaemonUnreachable:
        raise
    except TokenRefused:
        return "refused"
    except (TwinError, ValueError) as exc:
        return "silent" if isinstance(exc.__cause__, TimeoutError) else "not a twin"
    theirs = answer.get("store") if isinstance(answer, dict) else None
    if theirs is None:
        return "no store id"
    return "ours" if theirs == peek_store_identity(db_path) else "another store"


def api_problem(settings: Settings) -> str | None:
    """`twin status`'s look at the running daemon's API (its lock held, `api_enabled`): None when it answers as
    this data dir's twin (`identity_of`) or no daemon runs, else the degraded line saying what answers at its
    address instead (`IDENTITIES`), or that nothing does (still starting, or it cannot listen there)."""
    if not settings.api_enabled:
        return None
    from twin.daemon.lifetime import InstanceLock

    if InstanceLock.holder(settings.data_dir / "twin.lock") is None:
        return None
    url, token = daemon_url(settings), daemon_token(settings)
    if token is None:
        return f"the daemon runs but its HTTP API has not started (no token yet at {settings.api_token_path})"
    try:
        found = identity_of(DaemonTwin(url, token, token_source=lambda: daemon_token(settings)), settings.db_path)
    except DaemonUnreachable:
        return (f"the daemon runs but its HTTP API does not answer at {url} (still starting, or it cannot listen "
                "there: `twin activity` says which)")
    return None if found == "ours" else f"the daemon runs but at {url} {IDENTITIES[found]}"


def open_twin(settings: Settings, bus: Callable[[], object | None] | None = None,
              interface: str = "cli") -> TwinAccess:
    """The access an interface uses: an `AutoTwin` (the daemon when it answers, else this process, with `bus`; the
    daemon is told which `interface` asks: `cli`, `mcp`); `api_enabled` false: this process alone."""
    return AutoTwin(settings, bus, interface) if settings.api_enabled else LocalTwin(settings, bus)
