"""Hybrid recall (seed 000): FTS5 bm25 and cosine similarity, fused, then blended with importance and recency.

score = (1 − w_imp − w_rec) · (w_kw · keyword + (1 − w_kw) · vector) + w_imp · importance + w_rec · recency

keyword = bm25 of the candidate / best bm25 of the query (0..1); vector = cosine similarity clipped
to 0..1; recency = 0.5 ^ (age_days / half_life_days). Defaults (seed 000): w_kw 0.5, w_imp 0.18,
w_rec 0.12, half-life 45 days; all are settings. Without an embedder recall is keyword-only.

The memory lifecycle (seeds 003 and 004) adds:
- `sensitive` memories only when the caller asks (`include_sensitive`); superseded ones never (but a replay
  `as_of` an earlier moment sees a memory superseded later as current);
- cold memories (seed 003's decay) rank × `COLD_PENALTY`; a search hit re-promotes them (`Store.touch`), but
  only a result relevant enough to be used counts as a hit (`TOUCH_BAR`: noise is not touched);
- a time named in the query (`twin.recall.time_window`: "yesterday", "last March") lifts the memories made in it: a
  strict window × `RecallConfig.strict_lift` (all of them are candidates, scored by meaning), a soft one ×
  `WINDOW_LIFT`; the rest stay reachable below them (a hard filter loses answers; `time_filter="strict"` is kept
  for the grid). Recency then counts for nothing (the query says which time it is about); a date typed as
  written keeps its keyword credit (`strip_time_words(keep_dates=True)`);
- a keyword hit outside the vector top-k gets its real cosine from its stored vector, a vector hit its real bm25
  (`RecallConfig.complete`: a rare code among look-alikes);
- of the results stating the same slot of a fact (`twin.text.capture_slots.slot_of`, the rule capture supersedes by;
  swappable), the newest ranks above the older ones (`_newest_of_slot`), unless the query names a time;
- each result says what moved it (`Recalled.reasons`, made by the rule that applied, `twin.recall.reasons`): the
  window it lies in, the older values of its slot it was lifted above (or the newest value that passed it), the
  older statement it passed, the memories it superseded, or (a replay) the memory that superseded it later;
- `min_relevance` cuts on `Recalled.relevance` (off by default: `MIN_RELEVANCE` says what was measured);
- every cosine recall scores and cuts on is on all-MiniLM's scale (`twin.vectors.cosine_scale`): the cuts here and
  the vector half of the score were measured on it, and multilingual-e5's unrelated pairs (~0.8) would clear them
  all (measured: personal dev R@5 0.707 -> 0.827 with e5, all-MiniLM's figures unchanged);
- the adaptive cut (seed 004): a result counts only if its score is above `score_floor` and not far below the
  best (`RELATIVE_CUT` of it); when nothing clears the floor recall returns nothing rather than noise (both
  are off by default: see `SCORE_FLOOR` for what was measured).
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import sqlite3
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

import numpy as np

from twin.exceptions import TwinError
from twin.limits import LIMIT_MAX
from twin.memory import Memory, RankReason, Recalled, format_time, parse_time
from twin.namespaces import DEFAULT_NAMESPACE, stored_scope
from twin.recall import reasons
from twin.recall.keyword_search import KeywordHits, keyword_scores, search_keywords, term_forms
from twin.recall.time_window import TimeWindow, event_window, find_event_anchor, find_window, strip_time_words
from twin.recall.touches import Touches
from twin.store import Store, turns
from twin.text.capture_slots import slot_of as capture_slot_of
from twin.text.query_terms import query_terms
from twin.vectors.cosine_scale import CommonCosine
from twin.vectors.embedder import Embedder
from twin.vectors.sidecar import IndexReader
from twin.weights import RECALL_CONFIG, RECALL_WEIGHTS, RecallConfig, Weights

log = logging.getLogger(__name__)


COLD_PENALTY = 0.95
"""A cold memory's score is multiplied by this (seed 003: cold entries stay searchable, ranked a little lower)."""
WINDOW_LIFT = 1.15
"""A memory inside a soft time window ("recently", "around Easter") has its score multiplied by this (ours)."""
WINDOW_CANDIDATES = 300
"""A strict window brings at most this many of its memories in as candidates (newest first)."""
SCORE_FLOOR = 0.0
"""Seed 004's per-model floor: no result scores at or below it. Off (0) for now: on the eval's dev split no
floor, z-score or gap of the local model's scores separates the abstention queries (whose distractors share
words by design) from the answerable ones: the best abstention score has median 0.47, the best answerable
one 0.45; a floor of 0.25 abstains on 7 % of abstention queries and wrongly on 9 % of answerable ones
(bench/eval_recall.py). Abstaining well needs a judge that reads the text (the model), not this cut."""
RELATIVE_CUT = 0.0
"""Results scoring below this share of the best one are dropped (0 = off; seed 004's per-query cut)."""
EVENT_MIN_SIMILARITY = 0.4
"""The memory an event anchor ("the week I moved") resolves to must be at least this close to the event
(cosine; keyword score when recall is keyword-only), else the anchor is ignored (ours)."""
NEWER_STATEMENT_COSINE = 0.6
"""Two results this similar are taken to be statements about the same thing (ours): a `co_occurs` graph edge of
this strength (the cosine of their vectors; the embedding worker links each new memory to its 3 nearest)."""
NEWER_STATEMENT_SHARE = 0.5
"""… and the newer one is moved just above the older when it scores at least this share of it (ours)."""
NEWER_STATEMENT_POOL = 15
"""Only the best this many results are compared pairwise (15, 20 and 30 give the same eval figures)."""
TURN_POOL = 50
"""The best this many results may lift their conversation neighbours (`Recall._with_turns`): measured with the
shipped share (0.15) on both dev sets (bench/eval_recall.py), 20 and 30 gave LoCoMo R@10 0.700 and 0.707, 50 gave
0.716, 100 0.717, the personal set unchanged at each."""
TURN_FOUND = 0.15
"""A result is lifted by its neighbour turn only when the query found it by itself at least this much (its keyword
score or cosine): an unrelated turn ("🙂") next to one that matches is not an answer. Measured on both dev sets
(bench/eval_recall.py): 0.1 and 0.2 leave every figure as it is, 0.3 costs LoCoMo R@5 0.003 and 0.4 0.021 (ours)."""
SLOT_POOL = 20
"""Slots are compared among the best this many results (ours)."""
SLOT_CACHE = 4096
"""The slots of this many memory texts are kept between queries (`Recall.slot_of`; a few hundred KiB)."""
SLOT_FOUND = (0.4, 0.5)
"""The newest value of a slot passes an older one only when the query found it by itself: a cosine or a keyword
score of at least these (`TOUCH_BAR`'s); a newer memory the query hardly found is not its answer (a rare code's
only memory is not passed by a look-alike that a broad slot rule puts in the same slot;
tests/test_recall_signals.py)."""
INHERIT_DEPTH = 8
"""How far along a chain of supersessions a candidate's scores are handed on (`Recall._inherited`)."""
VERBATIM_COSINE = 0.9
"""A result this close to the query (the query nearly quotes it) is never passed by a newer one (ours: `twin
doctor` and an owner pasting a memory's own text must find that memory first)."""
MIN_RELEVANCE = 0.0
"""The default cut on `Recalled.relevance` (max of keyword score and cosine): off. Measured on the personal dev set
(bench/eval_recall.py, 139 answerable and 15 abstention questions, all-MiniLM): a cut of 0.2 wrongly abstains on
3.6 % of the answerable questions and on none of the abstention ones, 0.25 on 5.8 % and none, 0.4 on 15.8 % and
13 %: their distractors share words and meaning with them by design, and the weakest answers (paraphrases, other
languages) score below them. No cut reaches abstention >= 50 % at <= 5 % false abstention; a caller that prefers
silence to noise passes its own (0.4 drops what the touch bar would not count as found)."""
KEYWORD_ONLY_FLOOR_SHARE = 0.5
"""Without vectors the fused score is the keyword score alone; the floor is scaled by this (ours)."""


@dataclass(frozen=True)
class TouchBar:
    """Which results of a recall count as used, so that `touch=True` records an access only for them (DESIGN.md
    "Recall": "noise is not touched"; seed 003: a hit re-promotes a cold memory, so touching noise defeats decay).
    A result is used when it scores at least `share` of the best result's score and the query found it by
    itself: a cosine of at least `vector`, a keyword score of at least `keyword` (bm25 relative to the best
    candidate times the IDF-weighted share of the query's words it holds), or it lies inside the strict time
    window the query names (`Recalled.in_window`: "what did I do last Saturday?" is answered by the episodes of
    that day, whatever their words). Shares and cosines are 0..1."""

    share: float
    vector: float
    keyword: float

    def used(self, results: list[Recalled]) -> list[Recalled]:
        """The `results` (best first, as `Recall.recall` returns them) that clear the bar, in their order; [] for
        none. Pure."""
        if not results:
            return []
        best = results[0].score
        return [r for r in results if r.score >= self.share * best
                and (r.vector >= self.vector or r.keyword >= self.keyword or r.in_window)]


TOUCH_BAR = TouchBar(share=0.75, vector=0.4, keyword=0.5)
"""The shipped bar, measured with `bench/touch_bar.py` on the eval's dev split (top 10 of each query, hybrid
recall): touching every result touched 8.3 non-answers per answerable question and all 10 results of every
question nothing answers; this bar touches 1.0 non-answers per answerable question, 0.07 results per off-topic
question (1 of 30 questions about the world touched anything) and 1.9 per abstention question (11 of 15: their
distractors share words and meaning with them by design, as for `SCORE_FLOOR`), and 70 % of the answers in the
top 10 (89 % of those ranked first). A cosine of 0.4 lies above what off-topic questions reach on the local
model (their best cosine: median 0.29, 90th percentile 0.35; answers' median 0.43); a lower one (0.35) touches
more answers (78 %, 95 % of the first) and 2.5 times the off-topic results. A used memory left untouched is
only ranked lower once cold (`COLD_PENALTY`), noise touched defeats decay: the bar errs towards not touching."""


def subject_head(sentence: str) -> tuple[str, ...] | None:
    """Who or what a memory is about, read from its first words: `("owner's", "sister")` for "Owner's sister Mira
    lives …", `("owner",)` for "Owner lives …" (case-folded; None for an empty text). Cheap and rough, for
    telling "Owner's PIN" from "Owner's bank card PIN" or "Lena's password"."""
    words = sentence.casefold().replace("’", "'").split()
    if not words:
        return None
    return tuple(words[:2]) if words[0].endswith("'s") else (words[0],)


def normalise(values: list[float], method: str, rrf_k: float = 60.0) -> list[float]:
    """`values` (one signal over a query's candidates) brought to 0..1 by `method` (`RecallConfig`): "best"/"raw" as
    they are, "minmax", "zscore" (normal CDF of the z-score), "rank" ((k + 1) / (k + rank) for the positive ones,
    0 for the rest). Pure."""
    if not values or method in ("best", "raw"):
        return list(values)
    if method == "rank":
        order = sorted((i for i, v in enumerate(values) if v > 0), key=lambda i: -values[i])
        out = [0.0] * len(values)
        for rank, i in enumerate(order, 1):
            out[i] = (rrf_k + 1) / (rrf_k + rank)
        return out
    arr = np.asarray(values, dtype=np.float64)
    if method == "minmax":
        lo, hi = float(arr.min()), float(arr.max())
        return ((arr - lo) / (hi - lo)).tolist() if hi > lo else [0.0] * len(values)
    if method == "zscore":
        std = float(arr.std())
        if std == 0:
            return [0.5] * len(values)
        return [0.5 * (1 + math.erf(z / math.sqrt(2))) for z in ((arr - arr.mean()) / std).tolist()]
    raise ValueError(f"unknown normalisation {method!r}")


SCOPES_KEPT = 32
"""Scopes whose ids a `Recall` keeps for its index filter (`Recall._scope_ids`); the one used longest ago goes."""


class Recall:
    """Recall over one store. `embedder` and `reader` may be None (keyword-only recall, degraded).

    Read-mostly: only `touch=True` writes (`last_accessed`, `hits` and the tier of the results used:
    `touch_bar`), behind the answer (`touches`, `twin.recall.touches`; given, it is shared and not closed here:
    a per-query `Recall` of the API's weights uses its base's).
    """

    def __init__(self, store: Store, embedder: Embedder | None, reader: IndexReader | None,
                 weights: Weights = RECALL_WEIGHTS, candidates: int = 50, score_floor: float = SCORE_FLOOR,
                 zone: tzinfo = UTC, touch_bar: TouchBar = TOUCH_BAR, config: RecallConfig | None = None,
                 slot_of: Callable[[str], tuple[str, str] | None] | None = None, touches: Touches | None = None):
        self.store, self.embedder, self.reader = store, embedder, reader
        self.touches = touches if touches is not None else Touches(store.path)
        self._owns_touches = touches is None
        if config is None:
            config = RecallConfig.of({**vars(weights), "candidates": candidates}) if (
                weights != RECALL_WEIGHTS or candidates != RECALL_CONFIG.candidates) else RECALL_CONFIG
        # slot rules are pure: a memory's slot is read once per recall object, not once per query
        self.config = config
        self.slot_of = functools.lru_cache(maxsize=SLOT_CACHE)(slot_of or capture_slot_of)
        self.weights, self.candidates, self.score_floor = config.weights, config.candidates, score_floor
        self.touch_bar = touch_bar
        self.zone = zone
        # every cosine recall compares with a cut is on all-MiniLM's scale (twin.vectors.cosine_scale)
        self.scale = CommonCosine(embedder.model_id if embedder is not None else "")
        self._pool: ThreadPoolExecutor | None = None
        self._scopes: dict[tuple, tuple[tuple[int, int, int], set[int]]] = {}
        """The ids of each scope the index was last filtered by, with `Store.scope_stamp` when read."""

    @property
    def keyword_only(self) -> bool:
        """True when recall cannot use vectors (no embedder configured or no index reader)."""
        return self.embedder is None or self.reader is None

    def close(self) -> None:
        """Stop the keyword-search thread; close its own `touches` (which writes what was handed over; shared
        ones are their owner's to close)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._owns_touches:
            self.touches.close()

    def _query_vector(self, query: str) -> np.ndarray | None:
        """The query's `(dim,)` float32 L2-normalised vector, or None (keyword-only, or the embedder failed)."""
        if self.keyword_only:
            return None
        self.reader.refresh()
        try:
            return self.embedder.embed_queries([query])[0]
        except TwinError as exc:  # a remote embedder down or out of budget: keyword-only for this query (seed 004)
            log.warning("recall: the embedder failed (%s); keyword-only for this query", exc)
            return None

    def _window_rows(self, being: str, window: TimeWindow, before: str | None,
                     names: tuple[str, ...]) -> list[tuple[int, bytes | None]]:
        """`(id, stored vector or None)` of the newest `WINDOW_CANDIDATES` memories of `being` in the namespaces
        `names` made inside `window` (and before `before`, a replay), read once per query: whether the window holds
        anything, and the candidates it brings in."""
        end = format_time(window.end)
        if before and before < end:
            end = before
        return self.store.window_rows(being, self.embedder.model_id if self.embedder else "",
                                      format_time(window.start), end, WINDOW_CANDIDATES, names)

    def _in_scope(self, qvec: np.ndarray, k: int, found: list[tuple[int, float]], fields: dict[int, tuple],
                  being: str, names: tuple[str, ...]) -> dict[int, float]:
        """`{id: cosine clipped to 0..1}` of the nearest memories of `being` in the namespaces `names`, best first,
        from the index's top-`k` `found` (whose `Store.ranking_fields` are in `fields`, which this extends). The index
        holds every namespace's vectors: its top-k is filtered here; when another namespace (or being) took places
        in it and fewer than `k` are left, the index is asked again with a filter that passes only this scope's ids
        (`IndexReader.search(allowed=…)`), so a small namespace beside a big one is not crowded out. A store with
        one namespace never searches twice."""
        outside = {m for m, _ in found if m in fields and (fields[m].being_id != being or fields[m].namespace
                                                            not in names)}
        if outside and len(found) - len(outside) < k:
            found = self.reader.search(qvec, k, allowed=self._scope_ids(being, names))
            fields.update(self.store.ranking_fields(m for m, _ in found if m not in fields))
        return {mid: self.cosine(sim) for mid, sim in found if mid not in outside}

    def _scope_ids(self, being: str, names: tuple[str, ...]) -> set[int]:
        """`Store.scope_ids(being, names)`, kept between recalls while `Store.scope_stamp` says the set is the same:
        one pass over the namespace index instead of reading 10k ids into a set per recall (bench/project_latency.py:
        ~10 ms of an active project's recall at 10 projects x 10k). At most `SCOPES_KEPT` scopes are kept."""
        key, stamp = (being, names), self.store.scope_stamp(being, names)
        kept = self._scopes.get(key)
        if kept is not None and kept[0] == stamp:
            self._scopes[key] = self._scopes.pop(key)  # used now: the last to go
            return kept[1]
        ids = self.store.scope_ids(being, names)
        if len(self._scopes) >= SCOPES_KEPT:
            self._scopes.pop(next(iter(self._scopes)))
        self._scopes[key] = (stamp, ids)
        return ids

    def cosine(self, sim: float) -> float:
        """A raw cosine of the embedder's model as recall scores it: on all-MiniLM's scale (`self.scale`), clipped
        to 0..1."""
        return max(0.0, sim) if self.scale.identity else min(1.0, max(0.0, self.scale.common(sim)))

    def _window_scores(self, rows: list[tuple[int, bytes | None]], vector: np.ndarray | None) -> dict[int, float]:
        """`{id: cosine}` of a strict window's memories (`_window_rows`) from their stored vectors, so an episode
        of that day is a candidate even when no word or nearest neighbour found it. Without a query vector every
        one scores 0 (keyword, importance and recency still rank them)."""
        out = {}
        for mid, blob in rows:
            sim = 0.0
            if vector is not None and blob is not None:
                stored = np.frombuffer(blob, dtype=np.float32)
                if stored.shape == vector.shape:
                    sim = self.cosine(float(stored @ vector))
            out[mid] = sim
        return out

    def recall(self, being: str, query: str, limit: int = 10, kind: str | None = None, since: str | None = None,
               as_of: str | None = None, touch: bool = True, include_sensitive: bool = False,
               zone: tzinfo | None = None, anchor_events: bool = True,
               min_relevance: float = MIN_RELEVANCE, namespace: str = DEFAULT_NAMESPACE,
               include_namespaces: Iterable[str] | None = None) -> list[Recalled]:
        """The memories of `being` that best answer `query`, best first; [] when nothing is relevant enough
        (seed 004's adaptive cut: abstain rather than return noise).

        Only memories of `namespace` and of `include_namespaces` (seed 003: a union of at most 16;
        `twin.namespaces.scope` checks both and raises `NamespaceError` naming the argument) are found, by their
        words and by their vectors alike.

        An empty query returns []. `limit` is clamped to 1..200; `kind` filters by kind; `since` (UTC
        ISO-8601) drops older memories; `as_of` (UTC ISO-8601) measures recency and resolves time words from
        that moment and ignores memories created at or after it (for replaying a moment in evaluation: only
        what existed before then, with what was current then). Superseded memories are never returned;
        `sensitive` ones only with `include_sensitive` (seed 003: hidden unless the caller asks). `zone`
        resolves words like "yesterday" (default: the recall's own, the owner's zone from
        `twin.wiring.open_recall`). A time named by an event ("the week I moved to Berlin", `anchor_events`) is
        the calendar unit around the memory that best matches the event (`_event_window`).
        `min_relevance` (0..1) drops every result whose `Recalled.relevance` is below it, but a memory made inside
        a strict window the query names ([] when none is left: abstaining; `MIN_RELEVANCE` for the default).
        `touch` records the access of the results used (`TouchBar.used`: noise is not touched) and re-promotes
        them from cold to warm (seed 003). Each result's `reasons` say what moved it (`twin.recall.reasons`, made
        here by the rule that applied; the ranking is the same with or without them). Raises `ValueError` for an
        unparsable `since`/`as_of`.
        """
        names = stored_scope(namespace, include_namespaces)
        limit = max(1, min(int(limit), LIMIT_MAX))
        if not query.strip():
            return []
        cfg = self.config
        now = parse_time(as_of) if as_of else datetime.now(UTC)
        before = format_time(now) if as_of else None
        since_t = format_time(parse_time(since)) if since else None
        window = find_window(query, now, zone or self.zone)
        if window is None and anchor_events and cfg.event_anchors:
            window = self._event_window(being, query, as_of, zone or self.zone, names)
        in_window = self._window_rows(being, window, before, names) if window is not None and window.strict else []
        if window is not None and window.strict and not in_window:
            # nothing was learned then: the time may be what a memory says ("Owner lived in Paris in 2010."), so
            # the words stay in the query and the window only lifts
            window = TimeWindow(window.start, window.end, "", False)
        text = strip_time_words(query, window, keep_dates=cfg.keep_dates) if window and window.phrase else query
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-fts")
        # the keyword search (its SQL, the bm25 of every match, the stored vectors of its candidates) runs in a
        # thread while the query is embedded: onnxruntime and SQLite release the GIL
        terms = query_terms(text)
        forms = term_forms(text, terms) if cfg.first_person else {t: frozenset({t}) for t in terms}
        keyword_future = self._pool.submit(search_keywords, self.store, being, terms, forms, self.candidates, before,
                                           None if self.keyword_only or not cfg.complete else self.embedder.model_id,
                                           names)
        extra = 4 if (kind or since or as_of) else 1
        qvec = self._query_vector(text)
        width = max(self.candidates, limit)
        found = [] if qvec is None else self.reader.search(qvec, width * extra)
        hits = keyword_future.result()
        near_fields = {m: hits.fields[m] for m, _ in found if m in hits.fields}
        # the vector hits' fields and, in the same read, their bm25 (a vector hit outside the keyword top-k)
        near_fields.update(hits.read(self.store, [m for m, _ in found if m not in near_fields], cfg.complete))
        vector = {} if qvec is None else self._in_scope(qvec, width * extra, found, near_fields, being, names)
        nearest = list(vector)  # best first; a replay searched more, to keep `width` of those that existed then
        quoted: set[int] = set()
        if window is not None and window.strict:
            vector.update(self._window_scores(in_window, qvec))
            quoted = self._quoted(query, vector)
        if cfg.complete and qvec is not None:  # a keyword hit outside the vector top-k: its real cosine
            vector.update({mid: self.cosine(float(v @ qvec)) for mid, v in hits.vectors.items()
                           if mid not in vector and v.shape == qvec.shape})
        fields = {mid: hits.fields[mid] for mid in ({r[0] for r in hits.rows} | set(vector)) if mid in hits.fields}
        fields.update((m, near_fields[m]) for m in vector if m not in fields and m in near_fields)
        fields.update(hits.read(self.store, [m for m in vector if m not in fields], cfg.complete))
        more = []
        if cfg.complete:  # a vector hit outside the keyword top-k: its real bm25
            found = {r[0] for r in hits.rows}
            ranks = hits.ranks_of(self.store, [m for m in vector if m not in found and m in fields])
            more = [(mid, rank, fields[mid][8]) for mid, rank in ranks.items()]
        keyword = keyword_scores(terms, forms, hits, more, cfg.share)
        if cfg.inherit:
            self._inherited(fields, keyword, vector, before, hits)
        start_t, end_t = (format_time(window.start), format_time(window.end)) if window else (None, None)
        strict = window is not None and window.strict
        kept, windowed, lifted_by = [], set(), {}
        for mid, (owner, mkind, status, importance, created_at, sensitivity, tier, superseded_at, _,
                  space, _) in fields.items():
            current = status == "active" or (before is not None and superseded_at is not None
                                             and superseded_at >= before)
            if owner != being or space not in names or not current or (kind and mkind != kind):
                continue
            if (since_t and created_at < since_t) or (before and created_at >= before):
                continue
            if sensitivity == "sensitive" and not include_sensitive:
                continue
            inside = window is not None and start_t <= created_at < end_t
            if strict and not inside and mid not in quoted and cfg.time_filter == "strict":
                continue  # outside the window, unless the query nearly quotes it ("… for Easter.")
            lift = (WINDOW_LIFT if inside and not strict else
                    cfg.strict_lift if inside and strict and cfg.time_filter != "strict" else 1.0)
            kept.append((mid, importance, created_at, tier, lift))
            if inside:
                lifted_by[mid] = lift
            if inside and strict:
                windowed.add(mid)
        if extra > 1:  # the `width` nearest of the memories the filters kept, as a recall without them takes
            keep = {k[0] for k in kept}
            beyond = set([m for m in nearest if m in keep][width:]) - {r[0] for r in hits.rows} - windowed - quoted
            kept = [k for k in kept if k[0] not in beyond]
        kw_norm = normalise([keyword.get(k[0], 0.0) for k in kept], cfg.keyword_norm, cfg.rrf_k)
        vec_norm = normalise([vector.get(k[0], 0.0) for k in kept], cfg.vector_norm, cfg.rrf_k)
        ranked = []
        for (mid, importance, created_at, tier, lift), kn, vn in zip(kept, kw_norm, vec_norm, strict=True):
            score, rec = self._score(importance, created_at, kn, vn, now, timeless=window is not None)
            score *= (COLD_PENALTY if tier == "cold" else 1.0) * lift
            ranked.append((mid, score, keyword.get(mid, 0.0), vector.get(mid, 0.0), rec))
        ranked.sort(key=lambda r: (-r[1], -r[0]))
        why: dict[int, list[RankReason]] = {}
        if window is None and cfg.newer_first:
            ranked = self._newer_first(ranked, fields, why)
        if window is None and cfg.slots:
            ranked = self._newest_of_slot(ranked, fields, why)
        ranked = self._cut(ranked)
        if cfg.turn_share > 0:
            ranked = self._with_turns(ranked, fields, why)
        if min_relevance > 0:
            ranked = [r for r in ranked if max(r[2], r[3]) >= min_relevance or r[0] in windowed]
        memories = self.store.get_many(r[0] for r in ranked[:limit])
        said = {lift: reasons.in_window(window, zone or self.zone, lift) for lift in
                {lifted_by[mid] for mid in memories if mid in lifted_by}}  # the results' only: one per lift
        for mid in memories:
            if mid in lifted_by:
                why.setdefault(mid, []).insert(0, said[lifted_by[mid]])
        self._supersession_reasons(memories, why, before, include_sensitive)
        results = [Recalled(memory=memories[mid], score=score, keyword=kw, vector=vec, recency=rec,
                            in_window=mid in windowed, reasons=tuple(why.get(mid, ())))
                   for mid, score, kw, vec, rec in ranked[:limit] if mid in memories]
        if touch:
            self.record_use(self.touch_bar.used(results))
        return results

    def _inherited(self, fields: dict, keyword: dict[int, float], vector: dict[int, float], before: str | None,
                   hits: KeywordHits) -> None:
        """A superseded candidate's scores go to the memory that replaced it when that memory is no candidate of its
        own (in place: `keyword`, `vector`, and its fields read). "Where do I work?" matches "Owner works at
        Siemens." by its words and meaning, and "Owner joined SAP as a data engineer." that superseded it by
        neither: among 13,000 memories it was in none of the top 198 (a breaker run). The successor answers what the
        old value answered. (Handing the scores on to successors found by themselves too cost the personal dev
        set's stale above newest, 0.067 -> 0.133: bench/README.md, "Sixth pass".) A chain is followed to the memory
        current now, at most `INHERIT_DEPTH` steps; a successor of another namespace or being, or in a replay one
        made after `before`, is filtered later as every candidate is."""
        heirs = {mid: mid for mid, f in fields.items() if f[2] == "superseded" and (keyword.get(mid) or vector.get(mid))
                 and not (before is not None and f[7] is not None and f[7] >= before)}
        for _ in range(INHERIT_DEPTH):  # one read per step of every chain at once
            step = dict(self.store.successors(set(heirs.values())))
            if not step:
                break
            heirs = {mid: step.get(heir, heir) for mid, heir in heirs.items()}
        missing = {heir for mid, heir in heirs.items() if heir != mid and heir not in fields}
        if not missing:
            return
        fields.update(hits.read(self.store, list(missing), False))
        for mid, heir in heirs.items():
            if heir not in missing or heir not in fields:
                continue
            if keyword.get(mid, 0.0) > keyword.get(heir, 0.0):
                keyword[heir] = keyword[mid]
            if vector.get(mid, 0.0) > vector.get(heir, 0.0):
                vector[heir] = vector[mid]

    def _supersession_reasons(self, memories: dict[int, Memory], why: dict[int, list[RankReason]],
                              as_of: str | None, include_sensitive: bool) -> None:
        """Add to `why` the supersession reasons of the results `memories`: the memories each superseded (one indexed
        read, `Store.replaced_among`: they are not searched, so it answers in their place; sensitive ones only with
        `include_sensitive`) and, in a replay `as_of` a moment (UTC ISO-8601), the memory that superseded a result
        later (the `current` rule of `recall`: it was current then)."""
        replaced = self.store.replaced_among(memories, include_sensitive)
        for mid, memory in memories.items():
            if as_of and memory.status == "superseded":
                successor = memories.get(memory.superseded_by) or self.store.get(memory.superseded_by or 0)
                why.setdefault(mid, []).append(reasons.superseded_later(
                    memory.superseded_by, successor.created_at if successor else None, as_of))
            if replaced.get(mid):
                why.setdefault(mid, []).append(reasons.replaces(replaced[mid]))

    def record_use(self, results: list[Recalled]) -> None:
        """Record that `results` were used (`Store.touch`: `last_accessed` now, hits + 1, cold back to warm; seed
        003), written behind the answer (`self.touches`: `touches.settle()` waits for it). A store that cannot be
        written (disk full, busy) is logged, never raised (seed 004: fail-soft)."""
        if results:
            self.touches.add([r.memory.id for r in results], format_time(datetime.now(UTC)))

    def _quoted(self, query: str, vector: dict[int, float]) -> set[int]:
        """Ids of the memories the whole `query`, time words included, nearly quotes (cosine ≥ `VERBATIM_COSINE`
        among its 5 nearest), with `vector` raised to that cosine; empty without vectors. One more embedding,
        only for queries with a strict window."""
        if self.keyword_only:
            return set()
        try:
            full = self.embedder.embed_queries([query])[0]
        except TwinError:
            return set()
        out = set()
        for mid, raw in self.reader.search(full, 5):
            if (sim := self.cosine(raw)) >= VERBATIM_COSINE:
                out.add(mid)
                vector[mid] = max(vector.get(mid, 0.0), sim)
        return out

    def _event_window(self, being: str, query: str, as_of: str | None, zone: tzinfo,
                      names: tuple[str, ...] = (DEFAULT_NAMESPACE,)) -> TimeWindow | None:
        """The strict window an event anchor in `query` names ("the week I moved" → the Monday-Sunday week of
        the best memory for "Owner moved"), or None when the query has no anchor or no memory is within
        `EVENT_MIN_SIMILARITY` of the event. Sensitive memories are not used as anchors; nothing is touched."""
        anchor = find_event_anchor(query)
        if anchor is None:
            return None
        hits = self.recall(being, f"Owner {anchor.event}", limit=1, as_of=as_of, touch=False, anchor_events=False,
                           namespace=names[0], include_namespaces=names[1:])
        if not hits or max(hits[0].vector, hits[0].keyword if self.keyword_only else 0.0) < EVENT_MIN_SIMILARITY:
            return None
        return event_window(anchor, parse_time(hits[0].memory.created_at), zone)

    def _newer_first(self, ranked: list[tuple], fields: dict[int, tuple],
                     why: dict[int, list[RankReason]] | None = None) -> list[tuple]:
        """`ranked` (best first; its `Store.ranking_fields` in `fields`) with each result lifted just above any older
        result among the best `NEWER_STATEMENT_POOL` that says nearly the same (a `co_occurs` edge between them of
        strength ≥ `NEWER_STATEMENT_COSINE`: one indexed read of the graph, no vectors) about the same subject
        (`subject_head`: "Owner's PIN" is not "Owner's bank card PIN", "Lena's" not "Owner's") and that it scores at
        least `NEWER_STATEMENT_SHARE` of; never above a result the query nearly quotes (`VERBATIM_COSINE`). A paraphrase
        loses nothing by the swap, and an update the capture rules did not catch ranks above the fact it replaced.
        Each lift is told in `why` (`{id: [RankReason]}`, extended): the newer one's and the older ones'.
        Measured on the eval's dev split: stale above newest 0.467 -> 0.333 at the same Recall@5 (bench/eval_recall.py);
        reading vectors instead of edges gave the same figures at ~0.6 ms more per query at 100k memories
        (bench/recall_latency.py)."""
        pool = {r[0]: r for r in ranked[:NEWER_STATEMENT_POOL]}
        pairs = self.store.edges_among(pool, "co_occurs", self.scale.raw(NEWER_STATEMENT_COSINE))  # raw cosines
        if not pairs:
            return ranked
        heads = {mid: subject_head(fields[mid][8]) for mid in {m for p in pairs for m in p}}
        created = {mid: fields[mid][4] for mid in pool}
        lifted, passed = {}, {}
        for a, b in pairs:
            if created[a] == created[b]:
                continue  # neither is newer
            newer, older = (pool[a], pool[b]) if created[a] > created[b] else (pool[b], pool[a])
            if (older[1] > newer[1] and newer[1] >= NEWER_STATEMENT_SHARE * older[1] and older[3] < VERBATIM_COSINE
                    and heads.get(older[0]) is not None and heads.get(older[0]) == heads.get(newer[0])):
                lifted[newer[0]] = max(lifted.get(newer[0], newer[1]), older[1] + 1e-6)
                passed.setdefault(newer[0], set()).add(older[0])  # an edge may be stored both ways
        if not lifted:
            return ranked
        if why is not None:
            for newer, olders in passed.items():
                why.setdefault(newer, []).append(reasons.newer_statement(tuple(sorted(olders))))
            by_older: dict[int, set[int]] = {}
            for newer, olders in passed.items():
                for older in olders:
                    by_older.setdefault(older, set()).add(newer)
            for older, newers in by_older.items():
                why.setdefault(older, []).append(reasons.older_statement(tuple(sorted(newers))))
        out = [(r[0], lifted.get(r[0], r[1]), *r[2:]) for r in ranked]
        out.sort(key=lambda r: (-r[1], -r[0]))
        return out

    def _newest_of_slot(self, ranked: list[tuple], fields: dict[int, tuple],
                        why: dict[int, list[RankReason]] | None = None) -> list[tuple]:
        """`ranked` (best first; its `Store.ranking_fields` in `fields`) with the newest memory of each slot
        (`self.slot_of`: ("owner", "home")) among the best `SLOT_POOL` lifted just above the best older memory of that
        slot, unless the query nearly quotes that older one (`VERBATIM_COSINE`) or did not find the newest by itself
        (`SLOT_FOUND`). Both stay: the older value is history, ranked below the current one. Measured on the personal
        dev set (bench/README.md): stale above newest 0.467 -> 0.333; LoCoMo's chat turns have no slot. Each lift is
        told in `why` (`{id: [RankReason]}`, extended): the newest value's and the older values' it passed."""
        pool = ranked[:SLOT_POOL]
        slots = {r[0]: self.slot_of(fields[r[0]][8]) for r in pool}
        created = {r[0]: fields[r[0]][4] for r in pool}
        groups: dict = {}
        for r in pool:
            if slots.get(r[0]) is not None:
                groups.setdefault(slots[r[0]], []).append(r)
        lifted = {}
        for slot, members in groups.items():
            if len(members) < 2:
                continue
            newest = max(members, key=lambda r: (created[r[0]], r[0]))
            above = [r for r in members if r[1] > newest[1] and created[r[0]] < created[newest[0]]]
            found = newest[3] >= SLOT_FOUND[0] or newest[2] >= SLOT_FOUND[1]
            if above and found and max(r[3] for r in above) < VERBATIM_COSINE:
                lifted[newest[0]] = max(r[1] for r in above) + 1e-6
                if why is not None:
                    why.setdefault(newest[0], []).append(reasons.newest_value(slot, tuple(r[0] for r in above)))
                    for r in above:
                        why.setdefault(r[0], []).append(reasons.older_value(slot, newest[0]))
        if not lifted:
            return ranked
        out = [(r[0], lifted.get(r[0], r[1]), *r[2:]) for r in ranked]
        out.sort(key=lambda r: (-r[1], -r[0]))
        return out

    def _with_turns(self, ranked: list[tuple], fields: dict[int, tuple],
                    why: dict[int, list[RankReason]] | None = None) -> list[tuple]:
        """`ranked` (best first; `Store.ranking_fields` in `fields`) with each of the best `TURN_POOL` raised by
        `RecallConfig.turn_share` × the score of its best neighbour in the same conversation (`twin.store.turns`:
        the memory of its source just before or after it, at most `turn_gap_s` apart) that is among them too, then
        sorted again; only turns of a conversation (`turns.is_conversation`: a chat, not a file's sentences) that the
        query found by itself (`TURN_FOUND`) are lifted. A chat's answer is often the turn after the one that matches
        the question ("What are you researching?" / "Adoption agencies!"): on LoCoMo's dev half R@5 0.594 -> 0.636
        and R@10 0.678 -> 0.716, the personal dev set (notes, not turns) unchanged (bench/README.md). Scores are
        lifted from the scores before this step (no chain of lifts). Only the results that have another of the best
        from their conversation within `turn_gap_s` are looked up (the others can have no neighbour among them: the
        same lifts, ~0.6 ms less per recall at 100k memories of ~20k sources). A store that cannot be read leaves
        `ranked` as it is. Each lift is told in `why` (`{id: [RankReason]}`, extended) when given."""
        cfg, pool = self.config, ranked[:TURN_POOL]
        score = {r[0]: r[1] for r in pool}
        # only turns have neighbours: a file's sentences are neither parsed for their times nor looked up
        made = {mid: parse_time(fields[mid][4]) for mid in score
                if mid in fields and turns.is_conversation(fields[mid][10])}
        conversations: dict[tuple, list[int]] = {}
        for mid in made:
            conversations.setdefault((fields[mid][0], fields[mid][9], fields[mid][10]), []).append(mid)
        asked = set()
        for members in conversations.values():
            members.sort(key=made.__getitem__)  # a member's closest in time is just before or after it
            for a, b in itertools.pairwise(members):
                if (made[b] - made[a]).total_seconds() <= cfg.turn_gap_s:
                    asked.update((a, b))
        if not asked:
            return ranked
        try:
            sides = turns.neighbours(self.store, sorted(asked))
        except sqlite3.Error as exc:
            log.warning("recall: could not read the results' conversation neighbours (%s)", exc)
            return ranked
        lifted = {}
        found = {r[0] for r in pool if max(r[2], r[3]) >= TURN_FOUND}  # found by the query itself, a little
        for mid, own in score.items():
            if mid not in found:
                continue
            near = [(score[n], n) for n in sides.get(mid, ()) if n in made and mid in made
                    and abs((made[n] - made[mid]).total_seconds()) <= cfg.turn_gap_s]
            if near:
                best, neighbour = max(near)
                lifted[mid] = own + cfg.turn_share * best
                if why is not None:
                    why.setdefault(mid, []).append(reasons.next_to_turn(neighbour, cfg.turn_share))
        if not lifted:
            return ranked
        out = [(r[0], lifted.get(r[0], r[1]), *r[2:]) for r in ranked]
        out.sort(key=lambda r: (-r[1], -r[0]))
        return out

    def _cut(self, ranked: list[tuple]) -> list[tuple]:
        """Seed 004's adaptive threshold over `ranked` (best first): keep results above the floor (which depends
        on the model: keyword-only scores run lower) and within `RELATIVE_CUT` of the best."""
        floor = self.score_floor * (KEYWORD_ONLY_FLOOR_SHARE if self.keyword_only else 1.0)
        if not ranked or ranked[0][1] <= floor:
            return []
        cut = max(floor, RELATIVE_CUT * ranked[0][1])
        return [r for r in ranked if r[1] > cut]

    def _score(self, importance: float, created_at: str, keyword: float, vector: float,
               now: datetime, timeless: bool = False) -> tuple[float, float]:
        """`(score, recency)` of one candidate from its normalised keyword and vector scores (formula in the module
        docstring); `timeless` (the query names its time) sets recency to 1 for every candidate, so age does not
        reorder them."""
        w = self.weights
        age_days = max(0.0, (now - parse_time(created_at)).total_seconds() / 86400)
        recency = 1.0 if timeless else 0.5 ** (age_days / w.half_life_days)
        fused = keyword if self.keyword_only else w.keyword * keyword + (1 - w.keyword) * vector
        score = (1 - w.importance - w.recency) * fused + w.importance * importance + w.recency * recency
        return score, recency


def recall_with(store: Store, embedder: Embedder | None, reader: IndexReader | None, values: dict,
                zone: tzinfo = UTC) -> Recall:
    """A `Recall` ranking by `RecallConfig.of(values)` (the bench's grid and the settings build it this way)."""
    return Recall(store, embedder, reader, config=RecallConfig.of(values), zone=zone)
