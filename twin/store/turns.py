"""A memory's neighbours in its conversation: the memory of the same being, namespace and source made just before
it and just after it (`created_at`, then id), read with two seeks of the index `memories_by_source_time`
(migration 0017). Recall lifts a turn whose neighbour matched the query (`twin.recall.hybrid.Recall._with_turns`).
Read-only."""

from __future__ import annotations

from collections.abc import Iterable

from twin.store.core import Store
from twin.store.ids import id_chunks

CONVERSATION_SOURCES = ("chat:", "telegram:")
"""The sources whose memories are turns of a conversation (a chat transcript, a Telegram chat): only their
memories have neighbours to lift (`twin.recall.hybrid.Recall._with_turns`); a file's or an email thread's
memories are sentences read from one text, not turns."""


def is_conversation(source: str) -> bool:
    """True when `source` is a conversation's (`CONVERSATION_SOURCES`)."""
    return source.startswith(CONVERSATION_SOURCES)


_SIDE = ("(SELECT n.id FROM memories n WHERE n.being_id = m.being_id AND n.source = m.source"
         " AND n.namespace = m.namespace AND (n.created_at, n.id) {op} (m.created_at, m.id)"
         " ORDER BY n.created_at {order}, n.id {order} LIMIT 1)")


def neighbours(store: Store, memory_ids: Iterable[int]) -> dict[int, tuple[int | None, int | None]]:
    """`{id: (the id before, the id after)}` in the conversation of each of `memory_ids` (None at either end; ids
    that no longer exist are absent). Any status: whether a neighbour counts is the caller's rule."""
    out: dict[int, tuple[int | None, int | None]] = {}
    before, after = _SIDE.format(op="<", order="DESC"), _SIDE.format(op=">", order="ASC")
    for chunk, marks in id_chunks(memory_ids):
        for mid, prev_id, next_id in store.conn.execute(
                f"SELECT m.id, {before}, {after} FROM memories m WHERE m.id IN ({marks})", chunk):
            out[mid] = (prev_id, next_id)
    return out
