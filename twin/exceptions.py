"""Specific error types of twin's core; each says what happens next."""


class TwinError(Exception):
    """Base class of twin's own errors."""


class SettingsError(TwinError):
    """A setting is invalid; start-up stops with exit code 2 and one line naming the setting."""


class RedisRefused(SettingsError):
    """An external Redis refused twin's login (a wrong password or user) or its ACL user's commands: a setting to fix,
    so a worker exits 2 and is not restarted, and `twin up` stops with the reason (`twin.redis_client.check_access`)."""


class ForeignStore(SettingsError):
    """The work on this Redis is another store's (`twin.workers.bus.Bus.bind_store`): a learn or embedding worker runs
    on the store its jobs' items were staged in, so it exits 2 and is not restarted."""


class StoreError(TwinError):
    """The SQLite store cannot be opened or migrated (disk full, wrong permissions, newer schema)."""


class EmbedderError(TwinError):
    """The embedding model cannot be loaded or used (missing or altered model file, used before open())."""


class IndexCorrupt(TwinError):
    """The vector index file is missing, stale or corrupt; the caller rebuilds it from SQLite."""


class RedisUnavailable(TwinError):
    """Redis cannot be reached or started; connectors back off, the CLI reports a degraded mode."""


class ConnectorError(TwinError):
    """A connector cannot go on; its subtype says what the supervisor does next (STYLE.md: Home Assistant's update
    coordinator). Raised out of a connector's `run(stop)`; a connector that handles a failure itself (Gmail pausing
    until a new token, a poll that fails and is tried at the next one) does not raise it."""


class ConnectorTransient(ConnectorError):
    """A failure that passes by itself (the network, a server's 5xx, a locked file): the supervisor restarts the
    connector with capped exponential backoff, says so in the diary once per run of failures and logs a warning
    without a traceback."""


class ConnectorAuthFailed(ConnectorError):
    """The source refused twin's credentials (a revoked token, a refused bot token): retrying cannot help, so the
    supervisor stops the connector (until twin restarts) and tells the owner what to do, from the message."""


class InvalidInput(TwinError, ValueError):
    """A caller's input breaks a rule of an operation (`twin.operations`): `field` names the input ("limit",
    "namespace", "content"), `code` is a stable machine word ("invalid", "rejected", "conflict"). Every interface
    shows it as the caller's error (HTTP 422 or 409, a CLI exit 2), never a traceback; nothing was changed."""

    def __init__(self, message: str, field: str | None = None, code: str = "invalid"):
        super().__init__(message)
        self.field, self.code = field, code


class NotFound(TwinError, LookupError):
    """The memory (or other row) an operation names does not exist, or belongs to another being (HTTP 404); `field`
    the input that named it when it is one ("project", "person"), None for a path's own id."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class Forbidden(TwinError, PermissionError):
    """The caller may not do this: a project named by its id that they are no member of, a project operation only
    its owner may do, an operation only the twin's owner may do (seed 003's table: HTTP 403, "distinct from
    404"). Nothing was read or changed."""


_PYDANTIC_LINK = " For further information visit https://errors.pydantic.dev"
_LOCATIONS = ("body", "query", "path", "header")
_BODY_ERRORS = {"missing": "a JSON object is required (Content-Type: application/json)",
                "json_invalid": "not valid JSON", "model_attributes_type": "must be a JSON object",
                "dict_type": "must be a JSON object", "model_type": "must be a JSON object"}
"""What a request's whole body is told, by pydantic's error type."""


def invalid_input_of(errors: list[dict], located: bool = True) -> InvalidInput:
    """The caller's error that a pydantic validation failure stands for (`ValidationError.errors()`: the API's
    bodies, queries and paths, the MCP tools' arguments), so both say the same about the same input: the first
    error, `field` the last name of its location after where it was (`body.content` → `content`), the message
    "<field>: <what pydantic says>" without pydantic's "Value error, " prefix and its documentation link. Code
    `invalid`. `located`: the first part of a location says where the input was (FastAPI's body, query, path,
    header); an MCP tool's arguments have no such part (False), so an argument named `query` keeps its name."""
    first = errors[0] if errors else {}
    loc = list(first.get("loc", ()))
    whole_body = located and loc[:1] == ["body"] and not any(isinstance(p, str) for p in loc[1:])
    if whole_body:  # the body itself: missing, not JSON, not an object
        return InvalidInput(f"body: {_BODY_ERRORS.get(first.get('type'), first.get('msg', 'invalid'))}", field="body")
    if located and loc and loc[0] in _LOCATIONS:
        loc = loc[1:]
    names = [part for part in loc if isinstance(part, str)]
    field = names[-1] if names else None
    message = str(first.get("msg", "invalid input")).removeprefix("Value error, ")
    message = message.split(_PYDANTIC_LINK)[0].strip()
    return InvalidInput(f"{field}: {message}" if field else message, field=field)


CANNOT_LISTEN = 3
"""`python -m twin.api`'s exit code when its address cannot be bound (1 is any crash, an import error among them):
the supervisor's diary line names the port only for this one. Here, below both, as the daemon may not import the
API (ARCHITECTURE.md's layers)."""
