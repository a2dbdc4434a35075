"""Ids in bounded `IN (…)` lists, for queries over any number of memories."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

IN_CHUNK = 500
"""Ids per `IN (…)` list (well under SQLite's bound-variable limit)."""


def id_chunks(memory_ids: Iterable[int]) -> Iterator[tuple[list[int], str]]:
    """The distinct `memory_ids`, in their order, in chunks of `IN_CHUNK`, each with its `?,?,…` placeholders, for
    `IN (…)` queries over any number of ids."""
    ids = list(dict.fromkeys(int(i) for i in memory_ids))
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start:start + IN_CHUNK]
        yield chunk, ",".join("?" * len(chunk))
