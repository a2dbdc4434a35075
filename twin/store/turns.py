"""A memory's neighbours in its conversation: the memory of the same being, namespace and source made just before
it and just after it (`created_at`, then id), read with two seeks of the index `memories_by_source_time`
(migration 0017). Recall lifts a turn whose neighbour matched the query (`twin.recall.hybrid.Recall._with_turns`),
and a transcript's turn is embedded with the turn before it (`turns_before`). Read-only."""

from __future__ import annotations

import re
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


TURN = re.compile(r"^[^\W\d_][\w.' -]{0,40}: \S")
"""A transcript's turn: a speaker's name, a colon, what they said ("Caroline: Yes, since May!"). A third-person
memory extracted from a chat ("Owner is allergic to penicillin.") stands alone by design (`twin.text.standalone`);
a turn often does not."""

TURN_CONTEXT_GAP_S = 3600
"""The turn before counts as a turn's context when it was said at most this long before it (seconds): an hour
later is a new exchange."""


def turns_before(store: Store, memory_ids: Iterable[int]) -> dict[int, str]:
    """`{id: the text of the turn before it}` for each of `memory_ids` that is a transcript's turn (a conversation's
    source, `TURN`) with a turn before it in its conversation said at most `TURN_CONTEXT_GAP_S` earlier; others are
    absent. What the embedding worker embeds with the turn (`twin.vectors.embedding_flush.embedding_texts`): "Yes,
    since May!" alone has no meaning to find it by (LoCoMo dev R@5 0.648 -> 0.668 with it, the personal set
    unchanged: bench/eval_recall.py). One read per chunk, two index seeks a memory; read-only."""
    out: dict[int, str] = {}
    before = _SIDE.format(op="<", order="DESC")
    conversation = " OR ".join("m.source LIKE ?" for _ in CONVERSATION_SOURCES)
    for chunk, marks in id_chunks(memory_ids):
        for mid, content, prev_content in store.conn.execute(
                f"SELECT m.id, m.content, p.content FROM memories m JOIN memories p ON p.id = {before}"
                f" WHERE m.id IN ({marks}) AND ({conversation})"
                " AND (julianday(m.created_at) - julianday(p.created_at)) * 86400 <= ?",
                (*chunk, *(f"{prefix}%" for prefix in CONVERSATION_SOURCES), TURN_CONTEXT_GAP_S)):
            if TURN.match(content) and TURN.match(prev_content):
                out[mid] = prev_content
    return out


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
