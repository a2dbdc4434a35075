"""Namespaces (seed 003): every memory belongs to one, `default` unless said otherwise; the one place their names
and the `include_namespaces` union are checked (DESIGN.md invariant 9: CLI, HTTP API, MCP and Telegram call these).

A write goes to one namespace; a read looks in one namespace and, widened by `include_namespaces`, in the union of
it and up to `INCLUDE_MAX` more (seed 003: "union across namespaces (capped at 16)"). A memory's identity (its
content hash, DESIGN.md invariant 2), its supersessions, near-duplicate updates, dream merges and graph edges all
stay inside its (being, namespace). Projects shared with other people are a later step: a project will be one
more column beside this one, and reads will filter on both the way they filter on `namespace` here.
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
