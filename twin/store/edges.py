"""The memory graph's rows: `memory_edges` (seed 003's `co_occurs` and `co_inferred` edges) and `edge_markers` (the
durable marker of a memory whose edges are still to be written). The rules that make edges live in
`twin.lifecycle.cycle`; these functions run in the caller's transaction when there is one.
"""

from __future__ import annotations

from collections.abc import Iterable

from twin.store.core import Store
from twin.store.ids import id_chunks

Edge = tuple[int, int, str, float, str]
"""`(src, dst, kind, strength 0..1, created_at UTC ISO-8601)`."""


def insert_edges(store: Store, edges: Iterable[Edge]) -> int:
    """INSERT OR IGNORE `edges` whose ends differ, both still exist (an FK violation is not ignored by OR IGNORE)
    and belong to the same being and namespace (seed 003: the graph never links two namespaces; an edge across
    is left out, whichever rule proposed it). Returns how many were new."""
    before = store.conn.total_changes
    store.conn.executemany(
        "INSERT OR IGNORE INTO memory_edges (src, dst, kind, strength, created_at) SELECT ?1, ?2, ?3, ?4, ?5"
        " WHERE ?1 != ?2 AND EXISTS (SELECT 1 FROM memories a JOIN memories b ON b.id = ?2 WHERE a.id = ?1"
        " AND a.being_id = b.being_id AND a.namespace = b.namespace)", list(edges))
    return store.conn.total_changes - before


def marked_with_vectors(store: Store, model_id: str, limit: int) -> list[tuple[int, str, bytes]]:
    """`(memory_id, being_id, float32 vector bytes)` of up to `limit` marked memories that have a vector of
    `model_id`, ascending id (read-only)."""
    return store.conn.execute(
        "SELECT k.memory_id, m.being_id, e.vector FROM edge_markers k JOIN memories m ON m.id = k.memory_id"
        " JOIN memory_embeddings e ON e.memory_id = k.memory_id AND e.model_id = ? ORDER BY k.memory_id LIMIT ?",
        (model_id, int(limit))).fetchall()


def drop_markers(store: Store, memory_ids: Iterable[int]) -> None:
    """Remove the edge markers of `memory_ids` (absent is fine)."""
    store.conn.executemany("DELETE FROM edge_markers WHERE memory_id = ?", [(int(i),) for i in memory_ids])


def edges_around(store: Store, memory_ids: list[int]) -> list[tuple[int, int, float]]:
    """`(node, other end, strength)` of every edge touching `memory_ids`, either direction (read-only)."""
    out = []
    for chunk, marks in id_chunks(memory_ids):
        out += store.conn.execute(f"SELECT src, dst, strength FROM memory_edges WHERE src IN ({marks}) UNION ALL"
                                  f" SELECT dst, src, strength FROM memory_edges WHERE dst IN ({marks})",
                                  (*chunk, *chunk)).fetchall()
    return out


def active_edges(store: Store, being: str, namespace: str | None = None) -> list[tuple[int, int, float]]:
    """`(src, dst, strength)` of the edges between two active memories of `being` (both of `namespace`, when
    given), no self-loops (read-only)."""
    where, args = ("", (being, being)) if namespace is None else (
        " AND a.namespace = ? AND b.namespace = ?", (being, being, namespace, namespace))
    return store.conn.execute(
        "SELECT e.src, e.dst, e.strength FROM memory_edges e JOIN memories a ON a.id = e.src"
        " JOIN memories b ON b.id = e.dst WHERE a.being_id = ? AND b.being_id = ? AND a.status = 'active'"
        " AND b.status = 'active' AND e.src != e.dst" + where, args).fetchall()


def edges_of_being(store: Store, being: str) -> list[tuple[int, int, str, float]]:
    """`(src, dst, kind, strength)` of the edges whose source is a memory of `being`, in key order (read-only)."""
    return store.conn.execute(
        "SELECT e.src, e.dst, e.kind, e.strength FROM memory_edges e JOIN memories m ON m.id = e.src"
        " WHERE m.being_id = ? ORDER BY e.src, e.dst, e.kind", (being,)).fetchall()


def kind_counts(store: Store, being: str) -> dict[str, int]:
    """`{kind: edges}` over the edges whose source is a memory of `being` (read-only)."""
    return dict(store.conn.execute("SELECT e.kind, COUNT(*) FROM memory_edges e JOIN memories m ON m.id = e.src"
                                   " WHERE m.being_id = ? GROUP BY e.kind", (being,)).fetchall())


def count_touching(store: Store, memory_ids: Iterable[int]) -> int:
    """How many edges have either end in `memory_ids` (read-only)."""
    return sum(store.conn.execute(f"SELECT COUNT(*) FROM memory_edges WHERE src IN ({marks}) OR dst IN ({marks})",
                                  chunk * 2).fetchone()[0] for chunk, marks in id_chunks(memory_ids))


def move_edges(store: Store, loser: int, canonical: int) -> None:
    """Copy `loser`'s edges onto `canonical` (the dream merge): no self-loops and no edge between the two; on a
    clash the stronger edge stays. `loser`'s own edges go with its row."""
    store.conn.execute(
        "INSERT INTO memory_edges (src, dst, kind, strength, created_at)"
        " SELECT CASE WHEN src = :l THEN :c ELSE src END, CASE WHEN dst = :l THEN :c ELSE dst END,"
        " kind, strength, created_at FROM memory_edges"
        " WHERE (src = :l AND dst NOT IN (:l, :c)) OR (dst = :l AND src NOT IN (:l, :c))"
        " ON CONFLICT (src, dst, kind) DO UPDATE SET strength = MAX(strength, excluded.strength)",
        {"l": loser, "c": canonical})
