"""The memory lifecycle (seed 003): graph edges and neighbours, warm/cold decay, the dream cycle, stats.

- Edges (seed 003 "Graph traversal"): `co_occurs` from a new memory to its top-3 vector neighbours, written by
  the embedding worker once the memory has a vector (`write_pending_edges`; the `edge_markers` row is the
  durable marker); `co_inferred` from the dream cycle. Both go with their memories (FK cascade).
- Decay (seed 003 "Decay and reinforcement"): a warm memory idle longer than 7·log2(uses + 1) days goes cold,
  uses = hits + the capture itself (`decay`, every `decay_every_s`); a search hit brings it back (recall's
  `Store.touch`, in the same update that records the access).
- Dream (seed 003 "Dream cycle"): merge near-duplicates, then add `co_inferred` edges (`dream`, every
  `dream_every_s` in the embedding worker, or `twin dream`).

Top-k comes from the project's own index through a `VectorLookup` (`VectorIndex.search` in the embedding worker,
`IndexReader.search` in the CLI); this module has no nearest-neighbour code of its own.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from twin.activity import Activity
from twin.memory import Memory, format_time, parse_time, stricter
from twin.store import Store, edges, id_chunks, state
from twin.store.memories import Usage, namespace_tiers_of, tier_counts_of

if TYPE_CHECKING:  # numpy loads where vectors are read: the supervisor reads `CURSOR` and nothing else here
    import numpy as np

log = logging.getLogger(__name__)

CURSOR = "lifecycle"
"""`cursors.connector` of `last_decay` and `last_dream` (UTC ISO-8601, per being)."""
EDGE_NEIGHBOURS = 3
"""`co_occurs` edges per new memory: its top-3 vector neighbours (seed 003)."""
MAX_DEPTH = 3
"""`neighbors` walks 1-3 edges (seed 003)."""
DAYS_PER_DOUBLING = 7.0
"""Lifespan = 7 days per doubling of hits + 1 (seed 003: effectiveDays(hits) = 7 · log2(hits + 1))."""
MERGE_COSINE = 0.97
MERGE_JACCARD = 0.5
"""The dream merges a pair only when cosine ≥ 0.97 AND token-set Jaccard ≥ 0.5 (seed 003: both required, so
"lives in X" / "lives in Y" never collapse)."""
PROMOTE_SHARED = 3
"""Two memories sharing ≥ 3 graph neighbours get a direct `co_inferred` edge (seed 003)."""
SEARCH_CAP = 256
"""Most labels asked of the index for one top-3 (other beings' and superseded memories are skipped)."""
BATCH = 500
"""Marked memories whose edges one `write_pending_edges` transaction writes."""

Search = Callable[["np.ndarray", int], list[tuple[int, float]]]
_VALUE = re.compile(r"\d+|\b[A-ZÀ-Þ][\w’'-]*")


def same_values(a: str, b: str) -> bool:
    """True when two sentences carry the same numbers and capitalised words (names, weekdays, months, places):
    a guard on top of seed 003's cosine and Jaccard tests, which a breaker run saw merge "2 cats"/"3 cats",
    "Monday"/"Tuesday" and two door codes (ours). The first word is left out (sentence case)."""
    return set(_VALUE.findall(" ".join(a.split()[1:]))) == set(_VALUE.findall(" ".join(b.split()[1:])))


def mergeable(a: str, b: str) -> bool:
    """The word tests a pair of near vectors (cosine ≥ `MERGE_COSINE`) must pass to merge: token Jaccard ≥
    `MERGE_JACCARD` (seed 003), the same numbers and names (`same_values`), and no content word that differs
    (`twin.text.content_words.same_content_words`: only function words, intensifiers, inflections may)."""
    from twin.text.capture_rules import token_jaccard  # here: their rules compile at import, and `stats` (twin
    from twin.text.content_words import same_content_words  # status) needs none of them

    return token_jaccard(a, b) >= MERGE_JACCARD and same_values(a, b) and same_content_words(a, b)


@dataclass
class VectorLookup:
    """The vectors of one model: stored ones from SQLite (`memory_embeddings`, `(dim,)` float32, L2-normalised)
    and top-k from the project's index, `search(vector, k) -> [(memory id, cosine)]` best first (read-only)."""

    store: Store
    search: Search
    model_id: str

    def vectors(self, memory_ids: list[int]) -> dict[int, np.ndarray]:
        """`{id: (dim,) float32}` for the ids that have a vector of `model_id`; others are absent."""
        return self.store.stored_vectors(memory_ids, self.model_id)

    def nearest(self, memory_id: int, vector: np.ndarray, being: str,
                k: int = EDGE_NEIGHBOURS) -> list[tuple[int, float]]:
        """Up to `k` `(id, cosine)` of `being`'s ACTIVE memories in `memory_id`'s own namespace nearest to
        `vector`, `memory_id` excluded, best first (so neither an edge nor a dream merge ever joins two namespaces,
        seed 003). Asks the index for more than `k` (ids of other beings or namespaces, superseded or already
        deleted are dropped), doubling up to `SEARCH_CAP`."""
        own = self.store.ranking_fields([memory_id]).get(memory_id)
        if own is None:
            return []
        want = k + 8
        while True:
            hits = self.search(vector, want)
            fields = self.store.ranking_fields(i for i, _ in hits)
            keep = [(i, s) for i, s in hits if i != memory_id and i in fields and fields[i].being_id == being
                    and fields[i].namespace == own.namespace and fields[i].status == "active"]
            if len(keep) >= k or len(hits) < want or want >= SEARCH_CAP:
                return keep[:k]
            want *= 2


# -- graph ------------------------------------------------------------------------------------------------------
def write_pending_edges(store: Store, search: VectorLookup, limit: int = BATCH, now: datetime | None = None) -> int:
    """Seed 003's `co_occurs` edges: for up to `limit` marked memories (`edge_markers`) that have a vector of
    `search.model_id`, link each (src) to its top-3 vector neighbours among its being's active memories (dst),
    strength = cosine clamped to 0..1, `INSERT OR IGNORE`; then drop their markers, in one transaction. A marker
    whose memory has no vector yet stays for the next flush (the durable marker). Returns how many markers were
    resolved (fewer than `limit`: none with a vector is left)."""
    import numpy as np

    rows = edges.marked_with_vectors(store, search.model_id, limit)
    if not rows:
        return 0
    at = format_time(now or datetime.now(UTC))
    found = [(mid, other, "co_occurs", min(1.0, max(0.0, cos)), at) for mid, being, blob in rows
             for other, cos in search.nearest(mid, np.frombuffer(blob, dtype=np.float32), being)]
    with store.atomic():
        written = edges.insert_edges(store, found)
        edges.drop_markers(store, [r[0] for r in rows])
    log.debug("lifecycle: %d co_occurs edge(s) for %d new memories", written, len(rows))
    return len(rows)


def write_all_pending_edges(store: Store, search: VectorLookup) -> int:
    """`write_pending_edges` in batches until no marked memory with a vector is left (what the embedding worker
    does after each flush and checkpoint). Returns how many markers were resolved."""
    done = 0
    while n := write_pending_edges(store, search):
        done += n
    return done


def neighbors(store: Store, memory_id: int, depth: int = 1,
              include_sensitive: bool = False) -> list[tuple[Memory, float]]:
    """Seed 003's `memory_neighbors`: the memories within `depth` (1-3) edges of `memory_id`, either direction,
    each once with score = the product of edge strengths along its best path (0..1), best first (ties by id).
    The seed itself and superseded memories are excluded (the walk does not pass through superseded ones);
    `sensitive` ones are left out of the result unless `include_sensitive` (seed 003's default
    maxSensitivity). An unknown `memory_id` gives []. Read-only. Raises `ValueError` for a depth outside 1-3."""
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be 1-{MAX_DEPTH}, got {depth}")
    best: dict[int, float] = {memory_id: 1.0}
    found: dict[int, Memory] = {}
    frontier = {memory_id: 1.0}
    for _ in range(depth):  # hop-limited Bellman-Ford: only nodes improved in the last hop relax again
        improved: dict[int, float] = {}
        for node, other, strength in edges.edges_around(store, list(frontier)):
            score = frontier[node] * strength
            if score > best.get(other, -1.0) and score > improved.get(other, -1.0):
                improved[other] = score
        found.update(store.get_many(i for i in improved if i not in found))
        frontier = {i: s for i, s in improved.items() if i in found and found[i].status == "active"}
        best.update(frontier)
        if not frontier:
            break
    best.pop(memory_id)
    result = [(found[i], s) for i, s in best.items() if include_sensitive or found[i].sensitivity != "sensitive"]
    return sorted(result, key=lambda pair: (-pair[1], pair[0].id))


# -- decay ------------------------------------------------------------------------------------------------------
CAPTURE_USES = 1
"""The capture counts as one use in the lifespan (ours): with seed 003's formula alone a memory nobody has
recalled yet (0 hits) has a lifespan of 0 days and went cold at the first decay pass after it was learned; the
seed's "once-and-done facts age out gracefully" reads as a week (7 · log2(0 + 1 + 1) = 7 days)."""


def lifespan_days(hits: int) -> float:
    """Seed 003's `effectiveDays(hits) = 7 · log2(hits + 1)`, in days: 0 hits → 0, 1 → 7, 3 → 14, 7 → 21."""
    return DAYS_PER_DOUBLING * math.log2(max(0, hits) + 1)


def decay(store: Store, being: str, now: datetime | None = None) -> dict:
    """Seed 003's decay loop: every ACTIVE warm memory of `being` idle (now − `last_accessed`, else
    `created_at`) for longer than `lifespan_days(hits + CAPTURE_USES)` is demoted to `cold`, in one
    transaction; superseded memories are never touched. Records `last_decay` (cursor `lifecycle`/being, UTC
    ISO-8601) and, when any moved, one `decayed` diary line. `now` is an aware datetime (default: the clock).
    Returns `{"demoted": n}`."""
    moment = now or datetime.now(UTC)
    with store.atomic():
        rows = store.idle_rows(being)
        cold = []
        for mid, hits, last in rows:
            try:
                idle_days = (moment - parse_time(last)).total_seconds() / 86400
            except ValueError:
                continue  # an unreadable time: leave it warm rather than guess
            if idle_days > lifespan_days(hits + CAPTURE_USES):
                cold.append(mid)
        store.demote_cold(cold)
        state.set_time(store, CURSOR, being, "last_decay", format_time(moment))
    if cold:
        Activity(store, being).record("decayed", f"Decay: {len(cold)} memory(ies) idle past their lifespan moved "
                                                 f"to cold ({len(rows) - len(cold)} stay warm).")
    return {"demoted": len(cold)}


# -- dream ------------------------------------------------------------------------------------------------------
def _canonical(a: Memory, b: Memory) -> tuple[Memory, Memory]:
    """`(canonical, loser)`: more hits wins, then the older (`created_at`, then the lower id; seed 003)."""
    def key(m: Memory) -> tuple:
        try:
            created = parse_time(m.created_at).timestamp()
        except ValueError:
            created = math.inf
        return -m.hits, created, m.id
    return (a, b) if key(a) <= key(b) else (b, a)


def merge_pair(store: Store, canonical: int, loser: int) -> bool:
    """Fold `loser` into `canonical` in one transaction (seed 003's dream merge). The loser's edges move to the
    canonical (no self-loops; on a clash the stronger edge stays); hits are summed; importance and
    `last_accessed` become the higher of the two, sensitivity the stricter, the tier warm if either was; what
    the loser superseded now points at the canonical. Then the loser is removed like every removed memory
    (`twin.lifecycle.forgetting.remove_memories`: row, FTS entry, vector and index tombstone, edges, marker; the scrub
    marker is set, and `dream` scrubs once after the pass). Returns False, changing nothing, when either is gone
    or they are the same."""
    if canonical == loser:
        return False
    with store.atomic():
        rows = store.usage([canonical, loser])
        if len(rows) != 2:
            return False
        kept, lost = rows[canonical], rows[loser]
        edges.move_edges(store, loser, canonical)
        store.fold_usage(canonical, loser, Usage(
            kept.hits + lost.hits, max(kept.importance, lost.importance),
            max(filter(None, (kept.last_accessed, lost.last_accessed)), default=None),
            stricter(kept.sensitivity, lost.sensitivity),
            "warm" if "warm" in (kept.tier, lost.tier) else "cold"))
        from twin.lifecycle.forgetting import remove_memories  # here: `stats` (twin status) needs none of it

        remove_memories(store, [loser])
    return True


def _merge_pass(store: Store, being: str, ids: list[int], lookup: VectorLookup) -> tuple[int, int]:
    """Seed 003's dedup-merge over `ids` (ascending): each memory's top-3 neighbours; a pair with cosine ≥ 0.97
    that passes `mergeable` (token Jaccard ≥ 0.5, no content word differs) is folded into its canonical
    (`merge_pair`). Returns `(walked, merged)`."""
    walked = merged = 0
    gone: set[int] = set()
    for chunk, _ in id_chunks(ids):
        vectors = lookup.vectors(chunk)
        for mid in chunk:
            if mid in gone:
                continue
            walked += 1
            if mid not in vectors:
                continue
            for other, cosine in lookup.nearest(mid, vectors[mid], being):
                if cosine < MERGE_COSINE:
                    break  # best first: no later one qualifies
                pair = store.get_many([mid, other])
                if len(pair) < 2 or not mergeable(pair[mid].content, pair[other].content):
                    continue
                keep, lose = _canonical(pair[mid], pair[other])
                if merge_pair(store, keep.id, lose.id):
                    gone.add(lose.id)
                    merged += 1
                    if lose.id == mid:
                        break
    return walked, merged


def _promote_edges(store: Store, being: str, at: str, namespace: str | None = None) -> int:
    """Seed 003's edge promotion: two active memories of `being` (of `namespace`, when given) with ≥ 3 common
    neighbours (over all edges, either direction) and no direct edge of any kind get a `co_inferred` edge (lower
    id → higher id), strength = mean over the common neighbours c of the path strength s(a, c) · s(c, b), capped
    at 1. Cost: the sum over memories of degree². Returns how many edges were added."""
    adjacent: dict[int, dict[int, float]] = defaultdict(dict)
    for src, dst, strength in edges.active_edges(store, being, namespace):
        strength = max(strength, adjacent[src].get(dst, 0.0))
        adjacent[src][dst] = adjacent[dst][src] = strength
    paths: dict[tuple[int, int], list[float]] = defaultdict(list)
    for around in adjacent.values():
        ends = sorted(around.items())
        for i, (a, s_a) in enumerate(ends):
            for b, s_b in ends[i + 1:]:
                if b not in adjacent[a]:
                    paths[(a, b)].append(s_a * s_b)
    inferred = [(a, b, "co_inferred", min(1.0, sum(p) / len(p)), at) for (a, b), p in sorted(paths.items())
                if len(p) >= PROMOTE_SHARED]
    if not inferred:
        return 0
    with store.atomic():
        return edges.insert_edges(store, inferred)


def dream(store: Store, being: str, vectors_lookup: VectorLookup | None, now: datetime | None = None,
          namespace: str | None = None) -> dict:
    """Seed 003's dream cycle for `being`, over the memories of `namespace` (a name `twin.namespaces.checked`
    passed), or of every namespace when None (a pair never spans two: `VectorLookup.nearest`): (1) dedup-merge:
    every active memory (ascending id) against its top-3
    vector neighbours; a pair merges only when cosine ≥ 0.97 AND `mergeable` (token Jaccard ≥ 0.5, and the words
    that differ are function words, intensifiers or inflections only); the canonical has more
    hits, then is older; it takes the loser's edges and hits, and the loser is deleted everywhere (row, FTS,
    vector, index tombstone; `Store.scrub_deleted_text` afterwards, as `forget` does). Without a lookup (no
    embedder, no vectors) nothing merges. (2) Edge promotion (`_promote_edges`). Records `last_dream` (cursor
    `lifecycle`/being) and one `dreamed` diary line. Returns `{"walked", "merged", "edgesPromoted", "durationMs"}`
    (walked: active memories visited, minus those merged away before their turn)."""
    started = time.monotonic()
    moment = now or datetime.now(UTC)
    ids = store.active_ids(being, namespace)
    walked, merged = _merge_pass(store, being, ids, vectors_lookup) if vectors_lookup else (len(ids), 0)
    if merged:
        store.scrub_deleted_text()  # once for the whole pass: the merges are coalesced
    promoted = _promote_edges(store, being, format_time(moment), namespace)
    state.set_time(store, CURSOR, being, "last_dream", format_time(moment))
    ms = round((time.monotonic() - started) * 1000)
    Activity(store, being).record("dreamed", f"Dream cycle: walked {walked} memories, merged {merged}, promoted "
                                             f"{promoted} edges in {ms} ms.")
    return {"walked": walked, "merged": merged, "edgesPromoted": promoted, "durationMs": ms}


# -- stats ------------------------------------------------------------------------------------------------------
def stats(store: Store, being: str, census: list | None = None) -> dict:
    """Seed 003's `memory_stats` for `being` (read-only): `{"by_kind": {kind: {"warm": n, "cold": n}},
    "total_warm", "total_cold"}` over active memories, `"superseded"` (count), `"edges": {"co_occurs": n,
    "co_inferred": n}` (edges whose source is `being`'s), `"by_namespace": {namespace: {"warm": n, "cold": n}}`
    over active memories (seed 003's `byNamespace`) and `"last_decay"`, `"last_dream"` (UTC ISO-8601 or None).
    `census`: `being`'s `Store.census`, read now when None (`twin status` passes the one it read)."""
    census = store.census(being) if census is None else census
    by_kind: dict[str, dict[str, int]] = {}
    superseded = 0
    for kind, status, tier, n in tier_counts_of(census):
        if status == "active":
            by_kind.setdefault(kind, {"warm": 0, "cold": 0})[tier] = n
        else:
            superseded += n
    edge_counts = {"co_occurs": 0, "co_inferred": 0, **edges.kind_counts(store, being)}
    return {"by_kind": dict(sorted(by_kind.items())),
            "total_warm": sum(t["warm"] for t in by_kind.values()),
            "total_cold": sum(t["cold"] for t in by_kind.values()),
            "superseded": superseded, "edges": edge_counts, "by_namespace": namespace_tiers_of(census),
            "last_decay": state.get_time(store, CURSOR, being, "last_decay"),
            "last_dream": state.get_time(store, CURSOR, being, "last_dream")}
