"""The request bodies of the API's routes (pydantic): a field out of shape is a 422 naming it, an unknown field
too (a typo must not be ignored). Seed 003's camelCase names (`maxSensitivity`, `includeNamespaces`, `sourceType`,
`capturedFrom`) are accepted beside ours; the rules of each value live in `twin.operations` (a namespace's in
`twin.namespaces`: a bad name or more than 16 `include_namespaces` is the operation's 422 naming the field)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from twin.memory import KINDS, SENSITIVITIES

Kind = Literal[KINDS]  # type: ignore[valid-type]
Sensitivity = Literal[SENSITIVITIES]  # type: ignore[valid-type]
TEXT_MAX = 1 << 20
"""No text field is longer than the body limit (`twin.api.guard.MAX_BODY_BYTES`)."""


def either(name: str, camel: str | None = None, **kw):
    """A field read as `name` or as seed 003's camelCase `camel`."""
    return Field(validation_alias=AliasChoices(name, camel) if camel else name, **kw)


NAMESPACE_HELP = "The namespace (1-64 letters, digits, '_', '.', '-'; default `default`)"
INCLUDE_HELP = "More namespaces a read looks in too (a union; at most 16)"
PROJECT_HELP = ("A project (its id or name) to read with your own memories, or to write to; left out: your active "
                "project, if any. A name means one of your projects (your own first); 404 when it does not "
                "resolve, 403 for the id of a project you are no member of")


def project_field():
    """A body's `project` (seed 003: a call may name its project; else the caller's active one applies)."""
    return Field(None, max_length=64, description=PROJECT_HELP)


def namespace_field():
    """A body's `namespace` (seed 003: every read and write takes one, default `default`)."""
    return Field("default", description=NAMESPACE_HELP)


class Body(BaseModel):
    """Every body: unknown fields refused, and a value of the wrong JSON type too (strict: `true` is not a limit of
    1, `"10"` not 10, `1.5` not an integer; an integer is a number)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Scoped(Body):
    """A read's scope and sensitivity (seed 003): one namespace, maybe a union, levels up to `max_sensitivity`."""

    namespace: str = namespace_field()
    include_namespaces: list[str] | None = either("include_namespaces", "includeNamespaces", default=None,
                                                  description=INCLUDE_HELP)
    max_sensitivity: Sensitivity = either("max_sensitivity", "maxSensitivity", default="private")
    project: str | None = project_field()


class SearchBody(Scoped):
    """`POST /v1/search`: `weights` overrides seed 003's signals for this query (keyword, vector, importance,
    recency, half_life_days; graph and entity accepted and ignored)."""

    query: str = Field(max_length=TEXT_MAX)
    limit: int = Field(10, ge=1)
    kind: Kind | None = None
    since: str | None = Field(None, max_length=64)
    weights: dict[str, float] | None = None


class ContextBody(SearchBody):
    """`POST /v1/context`: a search and the newest `recent_limit` memories grouped by kind."""

    recent_limit: int = either("recent_limit", "recentLimit", default=10, ge=1)


class MemoryBody(Body):
    """Seed 000's `POST /api/twin/memories`: `{kind, content, source, importance, tags}`."""

    content: str = Field(max_length=TEXT_MAX)  # blank: the operation's rule and words (`clean_content`)
    kind: Kind = "fact"
    source: str | None = Field(None, max_length=1000)
    importance: float | None = Field(None, ge=0, le=1)
    tags: list[str] = Field(default_factory=list)
    namespace: str = namespace_field()
    project: str | None = project_field()


class CaptureBody(MemoryBody):
    """Seed 003's remember/capture: provenance, a sensitivity, `force` past the worthiness gate."""

    sensitivity: Sensitivity | None = None
    source_type: str | None = either("source_type", "sourceType", default=None, max_length=64)
    captured_from: str | None = either("captured_from", "capturedFrom", default=None, max_length=1000)
    confidence: float | None = Field(None, ge=0, le=1)
    force: bool = False


class UpdateBody(Body):
    """Seed 003's `memory_update`: the fields to change (at least one)."""

    content: str | None = Field(None, max_length=TEXT_MAX)
    kind: Kind | None = None
    importance: float | None = Field(None, ge=0, le=1)
    tags: list[str] | None = None
    sensitivity: Sensitivity | None = None
    source_type: str | None = either("source_type", "sourceType", default=None, max_length=64)
    captured_from: str | None = either("captured_from", "capturedFrom", default=None, max_length=1000)
    confidence: float | None = Field(None, ge=0, le=1)


class LearnBody(Body):
    """Seed 001's `POST /api/twin/learn`: `{text, source}`."""

    text: str = Field(max_length=TEXT_MAX)  # blank: the operation's rule and words
    source: str | None = Field(None, max_length=1000, description="Where it came from (default `api`)")
    force: bool = False
    namespace: str = namespace_field()
    project: str | None = project_field()


class RecapBody(Body):
    """Seed 003's `memory_session_recap`: a concise summary of a session."""

    summary: str = Field(max_length=TEXT_MAX)  # blank: the operation's rule and words
    source: str | None = Field("session", max_length=1000)
    namespace: str = namespace_field()
    project: str | None = project_field()


class DreamBody(Body):
    """Seed 003's `POST /v1/dream-cycle`: the namespace to dream over (left out: every namespace)."""

    namespace: str | None = Field(None, description="Only this namespace (default: every one)")


class ReflectBody(Body):
    """Seed 001's `POST /api/twin/reflect`: reflection reads the new memories of every namespace (one profile); a
    `namespace` given is checked, and does not narrow what is read."""

    namespace: str | None = Field(None, description="Checked; reflection reads every namespace")


class AdoptionBody(Body):
    """Seed 003's `POST /v1/adoption`: what the client sees (both optional), named as the operation
    (`twin.operations.adoption`) and the MCP tool `memory_adoption` name them."""

    observed_tools: list[str] | None = either("observed_tools", "observedTools", default=None)
    observed_instructions_hash: str | None = either("observed_instructions_hash", "observedInstructionsHash",
                                                    default=None, max_length=200)


class ProjectBody(Body):
    """Seed 003's `project_create`: `{name}` (1-64 letters, digits, '_', '.', '-'; unique among your own projects)."""

    name: str = Field(max_length=64)


class ShareBody(Body):
    """Seed 003's `project_share`: `{person}` (a name from `twin people list`, or `owner`); a `project` beside
    the path's must name the same project."""

    person: str = Field(max_length=64)
    project: str | None = project_field()


class SourceBody(Body):
    """`bind_source`: `{kind, value}` (`files` and a folder's absolute path, `telegram_chat` and a chat id,
    `gmail_label` and a label's name or id; `twin.operations.project_sources`); a `project` beside the path's
    must name the same project."""

    kind: str = Field(max_length=32)
    value: str = Field(max_length=4096)
    project: str | None = project_field()


class NamedProjectBody(Body):
    """A body that may name the project the path names (`project_activate`); the two must agree."""

    project: str | None = project_field()
