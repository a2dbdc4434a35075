"""Namespaces (seed 003): every memory belongs to one, `default` unless said otherwise; the one place their names
and the `include_namespaces` union are checked (DESIGN.md invariant 9: CLI, HTTP API, MCP and Telegram call these).

A write goes to one namespace; a read looks in one namespace and, widened by `include_namespaces`, in the union of
it and up to `INCLUDE_MAX` more (seed 003: "union across namespaces (capped at 16)"). A memory's identity (its
content hash, DESIGN.md invariant 2), its supersessions, near-duplicate updates, dream merges and graph edges all
stay inside its (being, namespace).

A project (seed 003's sub-brain, `twin.operations.scopes`) IS a namespace with members: its memories are stored
in namespace `project:<id>` (`project_namespace`), and a person other than the owner keeps their user-global
memories in `person:<id>:<name>` (`person_namespace`). Both hold a `:`, which no caller's name may hold
(`NAME_PATTERN`), so no `namespace` or `include_namespaces` a caller gives can ever name them: only
`twin.operations.scopes.reach` puts them in a read or a write, after checking who asks. The layers below (recall,
learn, the store) take these stored names (`stored_scope`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from twin.exceptions import InvalidInput

DEFAULT_NAMESPACE = "default"
"""Where a memory goes when nothing names a namespace (seed 003), and where every memory of a store made before
namespaces existed went (`twin.store.schema`'s `0014_namespaces`)."""
NAME_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""A namespace name: 1-64 ASCII letters, digits, `_`, `.` or `-` (the being's own rule, `twin.settings`)."""
PERSON_ID_PATTERN = re.compile(r"[a-z0-9]{1,32}")
"""A person's id as a stored namespace holds it (`twin.operations.people` makes 16 hex digits)."""
PROJECT_ID_PATTERN = re.compile(r"[0-9A-Z]{26}")
"""A project's id as a stored namespace holds it (a ULID, `twin.operations.projects.new_project_id`)."""
STORED_PATTERN = re.compile(rf"(?:person:{PERSON_ID_PATTERN.pattern}:)?{NAME_PATTERN.pattern}"
                            rf"|project:{PROJECT_ID_PATTERN.pattern}")
"""A namespace as stored: a caller's name, a person's own (`person_namespace`) or a project's
(`project_namespace`)."""
PROJECT_PREFIX = "project:"
PERSON_PREFIX = "person:"
INCLUDE_MAX = 16
"""At most this many namespaces in `include_namespaces` (seed 003: "capped at 16")."""


class NamespaceError(InvalidInput):
    """A namespace name or an `include_namespaces` list that cannot be used; `field` names the argument
    (`namespace` or `include_namespaces`). An `InvalidInput` (code `invalid`), so every interface shows it as the
    caller's error: the HTTP API and MCP a 422 / tool error naming the field, the CLI exit 2."""

    def __init__(self, field: str, message: str):
        super().__init__(message, field=field)


def checked(name: object, field: str = "namespace") -> str:
    """`name` when it is a namespace name (`NAME_PATTERN`), else raises `NamespaceError` naming `field` and
    saying why (the name is quoted escaped and cut, so a bad value never spills onto a terminal)."""
    if not isinstance(name, str):
        raise NamespaceError(field, f"{field} must be a string, not {type(name).__name__}")
    if NAME_PATTERN.fullmatch(name) is None:
        shown = repr(name)[:70]
        raise NamespaceError(field, f"{field} {shown} is not a namespace name (1-64 letters, digits, '_', '.', '-')")
    return name


def person_namespace(person_id: str, name: str) -> str:
    """Where the person `person_id` (not the owner) keeps their user-global namespace `name` (a checked name):
    `person:<id>:<name>`."""
    return f"{PERSON_PREFIX}{person_id}:{name}"


def split_stored(name: str) -> tuple[str, str, str] | None:
    """What a stored namespace of a person or a project names: `("person", id, name)` for `person:<id>:<name>`,
    `("project", id, "")` for `project:<id>`, None for a caller's own name or anything that is no stored name
    (`STORED_PATTERN`). Pure."""
    if not isinstance(name, str) or STORED_PATTERN.fullmatch(name) is None or NAME_PATTERN.fullmatch(name):
        return None
    if name.startswith(PROJECT_PREFIX):
        return "project", name.removeprefix(PROJECT_PREFIX), ""
    person_id, _, own = name.removeprefix(PERSON_PREFIX).partition(":")
    return "person", person_id, own


def shown_namespace(stored: str) -> str:
    """A stored namespace as its reader names it: a person's `person:<id>:<name>` is their `<name>` (only that
    person ever reads it: `twin.operations.scopes.reach`), anything else as stored (the owner's names, a project's
    `project:<id>`). Pure."""
    split = split_stored(stored)
    return split[2] if split is not None and split[0] == "person" else stored


def project_namespace(project_id: str) -> str:
    """Where the memories of project `project_id` (a ULID, `twin.store.projects`) are stored: `project:<id>`."""
    return PROJECT_PREFIX + project_id


def stored_scope(namespace: str = DEFAULT_NAMESPACE, include_namespaces: Iterable[str] | None = None,
                 ) -> tuple[str, ...]:
    """`scope` for the layers below the operations (recall, learn): the same union, but each name may also be a
    stored name (`STORED_PATTERN`: a person's or a project's namespace, put there by `twin.operations.scopes`).
    Raises `NamespaceError` for anything else. Pure."""
    out: list[str] = []
    for name in (namespace, *(include_namespaces or ())):
        if not isinstance(name, str) or STORED_PATTERN.fullmatch(name) is None:
            raise NamespaceError("namespace", f"namespace {repr(name)[:70]} is not a namespace name")
        if name not in out:
            out.append(name)
    return tuple(out)


def checked_stored(name: object) -> str:
    """`name` when it is a stored namespace name (`STORED_PATTERN`), else raises `NamespaceError`."""
    return stored_scope(name)[0]  # type: ignore[arg-type]


def scope(namespace: str = DEFAULT_NAMESPACE, include_namespaces: Iterable[str] | None = None) -> tuple[str, ...]:
    """The namespaces a read looks in: `namespace` first, then each of `include_namespaces` not yet listed, in
    their order (a union; duplicates count once). Raises `NamespaceError` for a bad name (`field` says which
    argument) or more than `INCLUDE_MAX` in `include_namespaces`. Pure."""
    first = checked(namespace)
    if isinstance(include_namespaces, str):
        raise NamespaceError("include_namespaces", "include_namespaces must be a list of names, not one string")
    extra = [] if include_namespaces is None else list(include_namespaces)
    if len(extra) > INCLUDE_MAX:
        raise NamespaceError("include_namespaces", f"include_namespaces holds {len(extra)} names; at most "
                                                   f"{INCLUDE_MAX}")
    out = [first]
    for name in extra:
        if checked(name, "include_namespaces") not in out:
            out.append(name)
    return tuple(out)
