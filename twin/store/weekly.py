"""Counts per week for the page's charts: memories made per week by source type, supersessions per week.

Weeks start on Monday, UTC (the Monday as YYYY-MM-DD); times are the store's UTC ISO-8601 strings."""

from __future__ import annotations

from twin.store.core import Store


def _monday_of(column: str) -> str:
    """SQL for the Monday (YYYY-MM-DD) of the week of the UTC ISO-8601 time in `column`."""
    day = f"substr({column}, 1, 10)"
    return f"date({day}, '-' || ((CAST(strftime('%w', {day}) AS INTEGER) + 6) % 7) || ' days')"


def memories_per_week(store: Store, being: str, since: str) -> list[tuple[str, str, int]]:
    """`(monday, source type, count)` of `being`'s memories (every status and namespace) made at or after `since`
    (YYYY-MM-DD or ISO-8601); the source type is the source up to its first `:` (`email:abc` → `email`), the whole
    source when it has none (`twin.learn.learning.source_type`'s rule)."""
    return store.conn.execute(
        f"SELECT {_monday_of('created_at')} AS monday, CASE WHEN instr(source, ':') > 0 THEN substr(source, 1,"
        " instr(source, ':') - 1) ELSE source END AS source_type, count(*) FROM memories WHERE being_id = ?"
        " AND created_at >= ? GROUP BY monday, source_type", (being, since)).fetchall()


def supersessions_per_week(store: Store, being: str, since: str) -> list[tuple[str, int]]:
    """`(monday, count)` of `being`'s superseded memories by the week their successor (`superseded_by`) was made, at
    or after `since`: the store keeps no time of a supersession, and capture supersedes as it stores the new value.
    A superseded memory whose successor is gone counts in no week."""
    return store.conn.execute(
        f"SELECT {_monday_of('newer.created_at')} AS monday, count(*) FROM memories stale"
        " JOIN memories newer ON newer.id = stale.superseded_by WHERE stale.being_id = ?"
        " AND stale.status = 'superseded' AND newer.created_at >= ? GROUP BY monday", (being, since)).fetchall()
