"""Ids in bounded `IN (…)` lists, for queries over any number of memories, and the namespace filter of a query."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from twin.namespaces import DEFAULT_NAMESPACE

Namespaces = Sequence[str] | None
"""The namespaces a read looks in (`twin.namespaces.scope` makes the tuple, checked); None: every namespace
(an export, a forget asked to reach every namespace, the counts of `twin status`)."""
DEFAULT_SCOPE = (DEFAULT_NAMESPACE,)
"""What a read looks in when it is not told: `default` alone."""


def in_namespaces(namespaces: Namespaces, column: str = "namespace") -> tuple[str, list[str]]:
    """`(" AND <column> IN (?, …)", names)` for a query's WHERE, or `("", [])` for None (every namespace)."""
    if namespaces is None:
        return "", []
    names = list(namespaces)
    return f" AND {column} IN ({', '.join('?' * len(names))})", names

INTEGER_MAX = 2**63 - 1
"""SQLite's largest INTEGER: no id or diary cursor is larger, and a larger one bound to a query raises
`OverflowError` (every interface refuses one before it gets there)."""
IN_CHUNK = 500
"""Ids per `IN (…)` list (well under SQLite's bound-variable limit)."""


def id_chunks(memory_ids: Iterable[int]) -> Iterator[tuple[list[int], str]]:
    """The distinct `memory_ids`, in their order, in chunks of `IN_CHUNK`, each with its `?,?,…` placeholders, for
    `IN (…)` queries over any number of ids."""
    ids = list(dict.fromkeys(int(i) for i in memory_ids))
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start:start + IN_CHUNK]
        yield chunk, ",".join("?" * len(chunk))
