"""The memory state transitions and the lifecycle's reads on `memories`, as `Store` methods (`Store` mixes this in).

A memory is `active` or `superseded` (seed 003's supersession: `superseded_by` names its replacement and
`supersede_reason` says why); it is updated in place (same id, new content, the vector dropped), reactivated when
said again, demoted to `cold` by decay, or folded into a duplicate by the dream merge. The rules that decide which
transition applies live in `twin.learn.capture` and `twin.lifecycle.cycle`; the statements live here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import NamedTuple

from twin.memory import content_sha256
from twin.store.ids import DEFAULT_SCOPE, Namespaces, id_chunks, in_namespaces


class Successor(NamedTuple):
    """Where a memory stands in a supersession chain: its `status` and the id that replaced it (None if active)."""
    status: str
    superseded_by: int | None


class Usage(NamedTuple):
    """The fields the dream merge folds: `hits`, `importance` (0..1), `last_accessed` (UTC ISO-8601 or None),
    `sensitivity`, `tier` (warm/cold)."""
    hits: int
    importance: float
    last_accessed: str | None
    sensitivity: str
    tier: str


class IdleRow(NamedTuple):
    """An active warm memory as decay reads it: `id`, `hits`, `last_used` (`last_accessed`, else `created_at`)."""
    id: int
    hits: int
    last_used: str


class MemoryStates:
    """The transitions of a memory's row and the lifecycle's reads (mixed into `Store`, which gives `conn`).
    Each runs in the caller's transaction when there is one."""

    conn: sqlite3.Connection

    # -- supersession and revival (seed 003) -----------------------------------------------------------------
    def supersede(self, memory_id: int, by: int, reason: str | None) -> None:
        """Mark `memory_id` as replaced by `by`, with the `reason` shown to the owner (None: no reason)."""
        self.conn.execute("UPDATE memories SET status = 'superseded', superseded_by = ?, supersede_reason = ?"
                          " WHERE id = ?", (by, reason, memory_id))

    def revive(self, memory_id: int) -> None:
        """Make `memory_id` current again: active, no successor, no reason."""
        self.conn.execute("UPDATE memories SET status = 'active', superseded_by = NULL, supersede_reason = NULL"
                          " WHERE id = ?", (memory_id,))

    def successor(self, memory_id: int) -> Successor | None:
        """`Successor(status, superseded_by)` of `memory_id`, or None when it does not exist (read-only)."""
        row = self.conn.execute("SELECT status, superseded_by FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return Successor(*row) if row else None

    def set_sensitivity(self, memory_id: int, level: str) -> None:
        """Set the sensitivity of `memory_id` (one of `twin.memory.SENSITIVITIES`; the schema's CHECK refuses
        another with `sqlite3.IntegrityError`)."""
        self.conn.execute("UPDATE memories SET sensitivity = ? WHERE id = ?", (level, memory_id))

    def sensitivities(self, memory_ids: list[int]) -> list[str]:
        """The sensitivity of each of `memory_ids` that exists, in no order (read-only)."""
        out: list[str] = []
        for chunk, marks in id_chunks(memory_ids):
            out += [r[0] for r in self.conn.execute(f"SELECT sensitivity FROM memories WHERE id IN ({marks})", chunk)]
        return out

    def update_in_place(self, memory_id: int, content: str, sensitivity: str, provenance: dict, importance: float,
                        now: str) -> None:
        """Seed 003's update: same id, hits and edges; new `content` (its sha follows), `provenance` and
        `sensitivity`, the higher of the old and the given `importance`, hits + 1, `last_accessed` and `updated_at`
        = `now` (UTC ISO-8601), back to warm; the vector is dropped so the embedding worker embeds the new text."""
        self.conn.execute(
            "UPDATE memories SET content = ?, content_sha256 = ?, sensitivity = ?, provenance = ?, "
            "importance = MAX(importance, ?), hits = hits + 1, last_accessed = ?, updated_at = ?, tier = 'warm' "
            "WHERE id = ?",
            (content, content_sha256(content), sensitivity, json.dumps(provenance), importance, now, now, memory_id))
        self.conn.execute("DELETE FROM memory_embeddings WHERE memory_id = ?", (memory_id,))

    def edit_memory(self, memory_id: int, now: str, *, content: str | None = None, kind: str | None = None,
                    importance: float | None = None, tags: list[str] | None = None, sensitivity: str | None = None,
                    provenance: dict | None = None) -> None:
        """Seed 003's `memory_update` by id: the fields given replace the stored ones (None keeps a field); id, hits,
        edges and tier stay; `updated_at` = `now` (UTC ISO-8601). New `content` (its sha follows) drops the vector,
        so the embedding worker embeds the new text. Raises `sqlite3.IntegrityError` when the content equals
        another memory's of the same being, or a field breaks the schema's CHECKs."""
        sets, args = ["updated_at = ?"], [now]
        for column, value in (("content", content), ("kind", kind), ("importance", importance),
                              ("sensitivity", sensitivity)):
            if value is not None:
                sets.append(f"{column} = ?")
                args.append(value)
        if content is not None:
            sets.append("content_sha256 = ?")
            args.append(content_sha256(content))
        if tags is not None:
            sets.append("tags = ?")
            args.append(json.dumps(list(tags), ensure_ascii=False))
        if provenance is not None:
            sets.append("provenance = ?")
            args.append(json.dumps(provenance))
        self.conn.execute(f"UPDATE memories SET {', '.join(sets)} WHERE id = ?", (*args, memory_id))
        if content is not None:
            self.conn.execute("DELETE FROM memory_embeddings WHERE memory_id = ?", (memory_id,))

    def replaced_among(self, memory_ids: Iterable[int],
                       include_sensitive: bool) -> dict[int, list[tuple[int, str | None]]]:
        """`{successor id: [(id, supersede_reason or None)]}`: the superseded memories each of `memory_ids` replaced
        (their `superseded_by` is it), oldest first; `sensitive` ones only with `include_sensitive`; ids that
        replaced nothing are absent. One indexed read (`memories_by_superseded`; read-only)."""
        out: dict[int, list[tuple[int, str | None]]] = {}
        shown = "" if include_sensitive else " AND sensitivity != 'sensitive'"
        for chunk, marks in id_chunks(memory_ids):
            for by, mid, why in self.conn.execute(
                    f"SELECT superseded_by, id, supersede_reason FROM memories WHERE superseded_by IN ({marks})"
                    f" AND status = 'superseded'{shown} ORDER BY id", chunk):
                out.setdefault(by, []).append((mid, why))
        return out

    def successors(self, memory_ids: Iterable[int]) -> list[tuple[int, int]]:
        """`(id, superseded_by)` of each of `memory_ids` that was superseded (by a memory that still exists: its
        successor's deletion revives it, `memories_forget_revives`). One read by primary key per chunk; read-only."""
        out: list[tuple[int, int]] = []
        for chunk, marks in id_chunks(memory_ids):
            out += self.conn.execute(f"SELECT id, superseded_by FROM memories WHERE id IN ({marks})"
                                     " AND status = 'superseded' AND superseded_by IS NOT NULL", chunk).fetchall()
        return out

    def superseded_by_of(self, memory_id: int) -> list[int]:
        """Ids of the memories `memory_id` superseded (their `superseded_by` is it), oldest first (read-only)."""
        return [r[0] for r in self.conn.execute("SELECT id FROM memories WHERE superseded_by = ? ORDER BY id",
                                                (memory_id,))]

    # -- decay and the dream merge (seed 003; twin.lifecycle.cycle) ----------------------------------------------------
    def idle_rows(self, being: str) -> list[IdleRow]:
        """Every active warm memory of `being` as an `IdleRow` (read-only)."""
        return [IdleRow(*r) for r in self.conn.execute(
            "SELECT id, hits, COALESCE(last_accessed, created_at) FROM memories"
            " WHERE being_id = ? AND status = 'active' AND tier = 'warm'", (being,))]

    def demote_cold(self, memory_ids: Iterable[int]) -> None:
        """Move `memory_ids` to the cold tier (decay)."""
        self.conn.executemany("UPDATE memories SET tier = 'cold' WHERE id = ?", [(int(i),) for i in memory_ids])

    def usage(self, memory_ids: Iterable[int]) -> dict[int, Usage]:
        """`{id: Usage}` of those of `memory_ids` that exist (read-only)."""
        out: dict[int, Usage] = {}
        for chunk, marks in id_chunks(memory_ids):
            for row in self.conn.execute("SELECT id, hits, importance, last_accessed, sensitivity, tier FROM memories"
                                         f" WHERE id IN ({marks})", chunk):
                out[row[0]] = Usage(*row[1:])
        return out

    def fold_usage(self, canonical: int, loser: int, merged: Usage) -> None:
        """The dream merge's rows: what `loser` superseded now points at `canonical`, and `canonical` takes the
        `merged` usage. The caller removes `loser` afterwards."""
        self.conn.execute("UPDATE memories SET superseded_by = ? WHERE superseded_by = ?", (canonical, loser))
        self.conn.execute("UPDATE memories SET hits = ?, importance = ?, last_accessed = ?, sensitivity = ?, tier = ?"
                          " WHERE id = ?", (*merged, canonical))

    def active_ids(self, being: str, namespace: str | None = None) -> list[int]:
        """Ids of the active memories of `being` (of `namespace` only, when given), ascending (read-only)."""
        if namespace is None:
            return [r[0] for r in self.conn.execute("SELECT id FROM memories WHERE being_id = ? AND status = 'active'"
                                                    " ORDER BY id", (being,))]
        return [r[0] for r in self.conn.execute("SELECT id FROM memories WHERE being_id = ? AND status = 'active'"
                                                " AND namespace = ? ORDER BY id", (being, namespace))]

    def census(self, being: str) -> list[tuple[str, str, str, str, int]]:
        """`(namespace, status, kind, tier, count)` over the memories of `being`: every count `twin status` and
        seed 003's `memory_stats` show, in one pass over the narrow `memories_counted` index (its column order, so
        no sort; ~50 ms at 100k memories). Read-only."""
        return self.conn.execute("SELECT namespace, status, kind, tier, COUNT(*) FROM memories WHERE being_id = ?"
                                 " GROUP BY namespace, status, kind, tier", (being,)).fetchall()

    def namespace_tiers(self, being: str) -> dict[str, dict[str, int]]:
        """`{namespace: {"warm": n, "cold": n}}` over the ACTIVE memories of `being`, sorted by namespace (read-only;
        seed 003's `byNamespace`; from `census`)."""
        return namespace_tiers_of(self.census(being))

    def tier_counts(self, being: str) -> list[tuple[str, str, str, int]]:
        """`(kind, status, tier, count)` over the memories of `being` (read-only; from `census`)."""
        return tier_counts_of(self.census(being))

    # -- removal (DESIGN.md invariant 5; twin.lifecycle.forgetting) ----------------------------------------------------
    def remove_memories(self, memory_ids: Iterable[int]) -> list[int]:
        """Delete the memories `memory_ids` (row, FTS entry, vector and index tombstone, edges, edge marker; the
        scrub marker by trigger) inside the caller's transaction. Returns the ids that existed. The text
        leaves the files only at the next `scrub_deleted_text()`."""
        gone: list[int] = []
        for chunk, marks in id_chunks(memory_ids):
            gone += [r[0] for r in self.conn.execute(f"SELECT id FROM memories WHERE id IN ({marks})", chunk)]
        self.conn.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in gone])
        return gone

    def ids_with_source_prefix(self, being: str, prefix: str, namespaces: Namespaces = DEFAULT_SCOPE) -> list[int]:
        """Ids of `being`'s memories in `namespaces` (None: every one) whose source starts with `prefix`, ascending
        (read-only)."""
        scoped, names = in_namespaces(namespaces)
        return [r[0] for r in self.conn.execute("SELECT id FROM memories WHERE being_id = ? AND substr(source, 1, ?)"
                                                f" = ?{scoped} ORDER BY id", (being, len(prefix), prefix, *names))]

    def fts_all(self, being: str, match: str, namespaces: Namespaces = DEFAULT_SCOPE) -> list[tuple[int, str]]:
        """`(id, content)` of every memory of `being` in `namespaces` (None: every one; any status) that the FTS5
        query `match` finds, ascending id (read-only). Raises `sqlite3.OperationalError` on a malformed query."""
        scoped, names = in_namespaces(namespaces, "m.namespace")
        return self.conn.execute(
            "SELECT m.id, m.content FROM memories_fts f JOIN memories m ON m.id = f.rowid WHERE memories_fts MATCH ?"
            f" AND m.being_id = ?{scoped} ORDER BY m.id", (match, being, *names)).fetchall()

    def count_vectors(self, memory_ids: Iterable[int]) -> int:
        """How many stored vectors (any model) belong to `memory_ids` (read-only)."""
        return sum(self.conn.execute(f"SELECT COUNT(*) FROM memory_embeddings WHERE memory_id IN ({marks})",
                                     chunk).fetchone()[0] for chunk, marks in id_chunks(memory_ids))

    # -- reads for recall, reflection and the health checks -----------------------------------------------------
    def window_rows(self, being: str, model_id: str, start: str, end: str,
                    limit: int, namespaces: Namespaces = DEFAULT_SCOPE) -> list[tuple[int, bytes | None]]:
        """`(id, float32 vector bytes of `model_id` or None)` of the newest `limit` memories of `being` in
        `namespaces` (None: every one; any status) created in `[start, end)` (UTC ISO-8601), newest first
        (read-only)."""
        scoped, names = in_namespaces(namespaces, "m.namespace")
        return self.conn.execute(
            "SELECT m.id, e.vector FROM memories m LEFT JOIN memory_embeddings e ON e.memory_id = m.id"
            f" AND e.model_id = ? WHERE m.being_id = ?{scoped} AND m.created_at >= ? AND m.created_at < ?"
            " ORDER BY m.created_at DESC LIMIT ?", (model_id, being, *names, start, end, int(limit))).fetchall()

    def shareable_ids_after(self, being: str, after_id: int) -> list[int]:
        """Ids above `after_id` of `being`'s active memories that are not `sensitive` and are the owner's own (not
        of a project or of a person the owner added: their namespaces hold a `:`, `twin.namespaces`), ascending
        (read-only). What reflection reads: one profile, the owner's."""
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM memories WHERE being_id = ? AND id > ? AND status = 'active' AND sensitivity != 'sensitive'"
            " AND instr(namespace, ':') = 0 ORDER BY id", (being, after_id))]

    def project_ids_after(self, being: str, namespace: str, after_id: int) -> list[int]:
        """Ids above `after_id` of `being`'s active, not `sensitive` memories in the project namespace `namespace`
        (`twin.namespaces.project_namespace`), ascending (read-only). What a project's reflection reads."""
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM memories WHERE being_id = ? AND namespace = ? AND id > ? AND status = 'active'"
            " AND sensitivity != 'sensitive' ORDER BY id", (being, namespace, after_id))]

    def embedded_active_ids(self, being: str) -> list[int]:
        """Ids of `being`'s active memories that have a stored vector (any model; read-only)."""
        return [r[0] for r in self.conn.execute(
            "SELECT m.id FROM memories m JOIN memory_embeddings e ON e.memory_id = m.id"
            " WHERE m.being_id = ? AND m.status = 'active'", (being,))]

    def embedding_ids(self, up_to_seq: int | None = None) -> set[int]:
        """Ids of the memories with a stored vector, only those written at `seq` ≤ `up_to_seq` when given
        (read-only)."""
        if up_to_seq is None:
            return {r[0] for r in self.conn.execute("SELECT memory_id FROM memory_embeddings")}
        return {r[0] for r in self.conn.execute("SELECT memory_id FROM memory_embeddings WHERE seq <= ?",
                                                (up_to_seq,))}


def namespace_tiers_of(census: list[tuple[str, str, str, str, int]]) -> dict[str, dict[str, int]]:
    """`{namespace: {"warm": n, "cold": n}}` of the active rows of a `MemoryStates.census`, sorted by namespace."""
    out: dict[str, dict[str, int]] = {}
    for namespace, status, _kind, tier, n in sorted(census):
        if status == "active":
            tiers = out.setdefault(namespace, {"warm": 0, "cold": 0})
            tiers[tier] = tiers.get(tier, 0) + n
    return out


def tier_counts_of(census: list[tuple[str, str, str, str, int]]) -> list[tuple[str, str, str, int]]:
    """`(kind, status, tier, count)` of a `MemoryStates.census`, every namespace added up."""
    out: dict[tuple[str, str, str], int] = {}
    for _namespace, status, kind, tier, n in census:
        out[(kind, status, tier)] = out.get((kind, status, tier), 0) + n
    return [(*key, n) for key, n in sorted(out.items())]
