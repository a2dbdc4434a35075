"""Hybrid recall (seed 000): FTS5 bm25 and cosine similarity, fused, then blended with importance and recency.

score = (1 − w_imp − w_rec) · (w_kw · keyword + (1 − w_kw) · vector) + w_imp · importance + w_rec · recency

keyword = bm25 of the candidate / best bm25 of the query (0..1); vector = cosine similarity clipped
to 0..1; recency = 0.5 ^ (age_days / half_life_days). Defaults (seed 000): w_kw 0.5, w_imp 0.18,
w_rec 0.12, half-life 45 days; all are settings. Without an embedder recall is keyword-only.
"""

from __future__ import annotations

import logging
import math
import re
import sqlite3
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from twin.embedder import Embedder
from twin.exceptions import TwinError
from twin.memory import Recalled, format_time, parse_time
from twin.store import Store
from twin.vectors import IndexReader
from twin.weights import RECALL_WEIGHTS, Weights

log = logging.getLogger(__name__)

LIMIT_MAX = 200
"""At most this many results per call (seed 000: "capped at 200 per call")."""

STOPWORDS = frozenset(
    """
    a an and are as at be been but by can could did do does for from had has have how i if in into is it
    its me my of on or our so than that the their them then there these they this to was we were what
    when where which who whom why will with would you your about any all am also just more most no not
    now only other some such too very s t d ll re ve m
    """.split())
_WORD = re.compile(r"\w+", re.UNICODE)
COMMON_TERM_SHARE = 0.01
"""A query word found in more than this share of memories is not used to find keyword candidates."""
COMMON_TERM_MIN_DOCS = 200
"""… unless it is in fewer than this many memories (small stores keep every word)."""


def fold(text: str) -> str:
    """Case-fold and strip diacritics, as FTS5's `unicode61 remove_diacritics 2` tokenizer does."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def query_terms(text: str) -> list[str]:
    """The query's distinct non-stopword terms in FTS form, in order, at most 32 (contraction tails such as
    the `s` of "what's" are stopwords: they would match every "Owner's")."""
    terms: list[str] = []
    for word in _WORD.findall(fold(text)):
        if word not in STOPWORDS and word not in terms:
            terms.append(word)
    return terms[:32]


def fts_query(terms: list[str]) -> str | None:
    """An FTS5 MATCH expression: the OR of `terms`, each quoted (so no user text is read as FTS syntax).
    None when there is nothing to match."""
    return " OR ".join(f'"{t.replace(chr(34), "")}"' for t in terms) or None


def idf(documents: int, containing: int) -> float:
    """BM25's inverse document frequency, always > 0: ln((N − n + 0.5) / (n + 0.5) + 1)."""
    return math.log((documents - containing + 0.5) / (containing + 0.5) + 1)


class Recall:
    """Recall over one store. `embedder` and `reader` may be None (keyword-only recall, degraded).

    Read-mostly: only `touch=True` writes (`last_accessed`, `hits` of the returned memories).
    """

    def __init__(self, store: Store, embedder: Embedder | None, reader: IndexReader | None,
                 weights: Weights = RECALL_WEIGHTS, candidates: int = 50):
        self.store, self.embedder, self.reader = store, embedder, reader
        self.weights, self.candidates = weights, candidates
        self._pool: ThreadPoolExecutor | None = None

    @property
    def keyword_only(self) -> bool:
        """True when recall cannot use vectors (no embedder configured or no index reader)."""
        return self.embedder is None or self.reader is None

    def close(self) -> None:
        """Stop the keyword-search thread."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _keyword_rows(self, being: str, terms: list[str], before: str | None) -> tuple[int, dict, list]:
        """The SQL half of keyword search (run in a thread: SQLite releases the GIL): `(documents,
        {term: documents containing it}, [(id, bm25, content)])`."""
        if not terms:
            return 0, {}, []
        try:
            documents, counts = self.store.term_document_counts(terms)
            present = [t for t in terms if counts[t] > 0]
            if not present:
                return documents, counts, []
            # very common words still count in the share (`_keyword_scores`) but are left out of the MATCH:
            # they add little to bm25 and would make FTS5 score most of the store (COMMON_TERM_SHARE)
            cutoff = max(COMMON_TERM_MIN_DOCS, COMMON_TERM_SHARE * documents)
            selective = [t for t in present if counts[t] <= cutoff] or [min(present, key=counts.__getitem__)]
            return documents, counts, self.store.fts_search(being, fts_query(selective), self.candidates, before)
        except sqlite3.OperationalError as exc:
            log.warning("recall: keyword search failed (%s)", exc)
            return 0, {}, []

    @staticmethod
    def _keyword_scores(terms: list[str], documents: int, counts: dict, rows: list) -> dict[int, float]:
        """Keyword scores 0..1: bm25 relative to the best candidate × the IDF-weighted share of the query's
        terms the memory contains, so a memory matching only a common word of a longer query scores low
        (a query word no memory contains lowers every keyword score, leaving the ranking to meaning)."""
        weights = {t: idf(documents, counts.get(t, 0)) for t in terms}
        total = sum(weights.values()) or 1.0
        best = max((-rank for _, rank, _ in rows), default=0.0)
        scores = {}
        for mid, rank, content in rows:
            words = set(_WORD.findall(content.lower() if content.isascii() else fold(content)))
            share = sum(w for t, w in weights.items() if t in words) / total
            scores[mid] = (-rank / best if best > 0 else 0.0) * share
        return scores

    def _vector(self, query: str, k: int) -> dict[int, float]:
        if self.keyword_only:
            return {}
        self.reader.refresh()
        try:
            vector = self.embedder.embed([query])[0]
        except TwinError as exc:  # a remote embedder down or out of budget: keyword-only for this query (seed 004)
            log.warning("recall: the embedder failed (%s); keyword-only for this query", exc)
            return {}
        return {mid: max(0.0, sim) for mid, sim in self.reader.search(vector, k)}

    def recall(self, being: str, query: str, limit: int = 10, kind: str | None = None, since: str | None = None,
               as_of: str | None = None, touch: bool = True) -> list[Recalled]:
        """The memories of `being` that best answer `query`, best first.

        An empty query returns []. `limit` is clamped to 1..200; `kind` filters by kind; `since` (UTC
        ISO-8601) drops older memories; `as_of` (UTC ISO-8601) measures recency from that moment and
        ignores memories created at or after it (for replaying a moment in evaluation: only what existed
        before then). Superseded memories are never returned.
        Raises `ValueError` for an unparsable `since`/`as_of`.
        """
        limit = max(1, min(int(limit), LIMIT_MAX))
        if not query.strip():
            return []
        now = parse_time(as_of) if as_of else datetime.now(UTC)
        before = format_time(now) if as_of else None
        since_t = format_time(parse_time(since)) if since else None
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-fts")
        # the keyword SQL runs in a thread while the query is embedded (both release the GIL); the Python
        # half of the keyword scoring waits until the embedding is done, so the two never fight for the GIL
        terms = query_terms(query)
        keyword_future = self._pool.submit(self._keyword_rows, being, terms, before)
        extra = 4 if (kind or since or as_of) else 1
        vector = self._vector(query, max(self.candidates, limit) * extra)
        keyword = self._keyword_scores(terms, *keyword_future.result())
        fields = self.store.ranking_fields(set(keyword) | set(vector))
        ranked = []
        for mid, (owner, mkind, status, importance, created_at) in fields.items():
            if owner != being or status != "active" or (kind and mkind != kind):
                continue
            if (since_t and created_at < since_t) or (before and created_at >= before):
                continue
            ranked.append((mid, *self._score(importance, created_at, keyword.get(mid, 0.0), vector.get(mid, 0.0), now)))
        ranked.sort(key=lambda r: (-r[1], -r[0]))
        memories = self.store.get_many(r[0] for r in ranked[:limit])
        results = [Recalled(memory=memories[mid], score=score, keyword=kw, vector=vec, recency=rec)
                   for mid, score, kw, vec, rec in ranked[:limit] if mid in memories]
        if touch and results:
            try:
                self.store.touch([r.memory.id for r in results], format_time(datetime.now(UTC)))
            except sqlite3.Error as exc:  # a full disk or a busy store must not stop recall (seed 004: fail-soft)
                log.warning("recall: could not record the access (%s)", exc)
        return results

    def _score(self, importance: float, created_at: str, keyword: float, vector: float,
               now: datetime) -> tuple[float, float, float, float]:
        """`(score, keyword, vector, recency)` of one candidate (formula in the module docstring)."""
        w = self.weights
        age_days = max(0.0, (now - parse_time(created_at)).total_seconds() / 86400)
        recency = 0.5 ** (age_days / w.half_life_days)
        fused = keyword if self.keyword_only else w.keyword * keyword + (1 - w.keyword) * vector
        score = (1 - w.importance - w.recency) * fused + w.importance * importance + w.recency * recency
        return score, keyword, vector, recency


def open_recall(settings, store: Store) -> Recall:
    """A ready `Recall` for `settings`: the configured embedder (local model, or the provider's `embed` tier,
    whose calls count against the daily budget in `store`) if it opens, and an index reader over the vectors of
    that embedder's model only (vectors of another model are never searched).

    Degrades to keyword-only recall, with one log line, when the backend is `none`, the model cannot be loaded
    or the provider cannot be reached (seed 004: fail-soft; a broken embedder must not break recall).
    """
    from twin.embedder import make_embedder
    from twin.exceptions import EmbedderError
    from twin.index import VectorIndex

    weights = Weights(keyword=settings.recall_keyword_weight, importance=settings.recall_importance_weight,
                      recency=settings.recall_recency_weight, half_life_days=settings.recall_half_life_days)
    embedder = make_embedder(settings.embed_backend, settings.embed_threads, settings, store)
    reader = None
    if embedder is not None:
        try:
            embedder.open()
        except EmbedderError as exc:
            log.warning("recall: the embedder cannot load (%s); keyword-only recall", exc)
            embedder = None
    if embedder is not None:
        index = VectorIndex.for_settings(settings, embedder.model_id, embedder.dim)
        reader = IndexReader(store, index)
        reader.open()
    return Recall(store, embedder, reader, weights, settings.recall_candidates)
