"""Recall's keyword half: the query's terms, one FTS5 search for the keyword candidates (ranked inside FTS5), and the
keyword score 0..1 of a candidate.

A memory the vector index finds but the keyword top-k does not still gets its real bm25 (a rare code among
look-alikes, issue 16): it is read with the vector hit's other fields (`KeywordHits.read`, one `Store.ranking_rows`
query that scores only those ids). Measured at 100k memories (bench/recall_latency.py's queries, ~1,000 matches
each): scoring every match once in the keyword thread and keeping them all in Python cost more than FTS5's own top-k
plus the few vector hits scored apart, and held the GIL the query's embedding needs. Keyword score = bm25 / the best
candidate's × the IDF-weighted share of the query's terms the memory holds (`keyword_scores`). Read-only.
"""

from __future__ import annotations

import logging
import math
import re
import sqlite3
from dataclasses import dataclass, field

import numpy as np

from twin.store import Store
from twin.store.ids import DEFAULT_SCOPE
from twin.text.query_terms import WORD, fold, fts_query, selective_terms
from twin.text.third_person import agree

log = logging.getLogger(__name__)

COMMON_TERM_SHARE = 0.01
"""A query word found in more than this share of memories is not used to find keyword candidates."""
COMMON_TERM_MIN_DOCS = 200
"""… unless it is in fewer than this many memories (small stores keep every word)."""

_FIRST_PERSON_VERB = re.compile(
    r"(?i)\b(?:i|we)\s+(?:(?:really|still|usually|often|always|never|now|currently|also|just|mostly)\s+)?([a-z]+)\b")


def term_forms(query: str, terms: list[str]) -> dict[str, frozenset[str]]:
    """`{term: the forms keyword search looks for}`: a verb right after "I"/"we" in `query` also as the phrase
    "owner <third-person form>" (the extractor's own agreement, `twin.text.extractor.agree`: "where do I live?" looks
    for "live" and "owner lives", as the owner's memories say "Owner lives …", while "Owner's sister lives …" is
    not the owner living somewhere); every other term only as written (-s forms of every word cost Recall@5 on
    the eval)."""
    verbs = {fold(m[1]) for m in _FIRST_PERSON_VERB.finditer(query)}
    return {t: frozenset({t, f"owner {agree(t)}"}) if t in verbs and agree(t) != t else frozenset({t})
            for t in terms}


def has_form(form: str, words: set[str], folded: str) -> bool:
    """True when a memory holds `form`: one of its `words`, or for a phrase ("owner lives") its case-folded
    text `folded` holds those words in a row."""
    if " " not in form:
        return form in words
    return re.search(rf"\b{re.escape(form)}\b", folded) is not None


def idf(documents: int, containing: int) -> float:
    """BM25's inverse document frequency, always > 0: ln((N − n + 0.5) / (n + 0.5) + 1)."""
    return math.log((documents - containing + 0.5) / (containing + 0.5) + 1)


@dataclass
class KeywordHits:
    """What one keyword search found. `documents`: memories in the store (for IDF); `counts`: `{term: memories
    holding one of its forms}`; `rows`: the keyword candidates `(id, bm25, content)`, best first (bm25 negative,
    lower is better); `match`: the FTS5 expression searched (None: nothing to search); `ranks`: `{id: bm25}` known
    so far (the rows', then those `read` and `ranks_of` learn); `asked`: the ids whose bm25 is known (in `ranks`,
    or not matched); `fields`: `Store.ranking_fields` of the rows; `shares`: `{id: the IDF-weighted share of the
    query's terms the memory holds}` of the rows; `vectors`: `{id: (dim,) float32}` stored vectors of the rows
    (for their cosine once the query is embedded)."""

    documents: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    rows: list[tuple[int, float, str]] = field(default_factory=list)
    match: str | None = None
    ranks: dict[int, float] = field(default_factory=dict)
    asked: set[int] = field(default_factory=set)
    fields: dict[int, tuple] = field(default_factory=dict)
    shares: dict[int, float] = field(default_factory=dict)
    vectors: dict[int, np.ndarray] = field(default_factory=dict)

    def read(self, store: Store, memory_ids: list[int], ranks: bool = True) -> dict[int, tuple]:
        """`Store.ranking_fields` of `memory_ids` (the vector hits), their bm25 for `match` learned in the same read
        when `ranks` (`Store.ranking_rows`; kept for `ranks_of`). A malformed match reads the fields alone."""
        if not memory_ids:
            return {}
        if not ranks or self.match is None:
            return store.ranking_fields(memory_ids)
        try:
            read = store.ranking_rows(memory_ids, match=self.match)
        except sqlite3.OperationalError:
            return store.ranking_fields(memory_ids)
        self.asked.update(memory_ids)
        self.ranks.update((mid, row.bm25) for mid, row in read.items() if row.bm25 is not None)
        return {mid: row.fields for mid, row in read.items()}

    def ranks_of(self, store: Store, memory_ids: list[int]) -> dict[int, float]:
        """`{id: bm25}` of those of `memory_ids` that `match` finds: known ones from `ranks`, the others asked of
        FTS5 (`Store.fts_ranks`: only those ids are scored); {} on a malformed query."""
        if self.match is None or not memory_ids:
            return {}
        unknown = [mid for mid in memory_ids if mid not in self.asked]
        if unknown:
            try:
                self.ranks.update((mid, rank) for mid, rank, _ in store.fts_ranks(self.match, unknown))
            except sqlite3.OperationalError:
                return {}
            self.asked.update(unknown)
        return {mid: self.ranks[mid] for mid in memory_ids if mid in self.ranks}


def search_keywords(store: Store, being: str, terms: list[str], forms: dict[str, frozenset[str]], limit: int,
                    before: str | None = None, model_id: str | None = None,
                    namespaces: tuple[str, ...] = DEFAULT_SCOPE) -> KeywordHits:
    """The keyword search of one query (module docstring): at most `limit` candidates of `being` in `namespaces`,
    best first (ties by id): current ones (active; at a replay's `before`, made earlier and superseded, if at all,
    only later); when other namespaces' matches crowd the best ones out, `Store.fts_search` finds the namespaces'
    own. Their ranking fields and stored vectors of `model_id` (none for None) come in one query
    (`Store.ranking_rows`), then their term shares. Very common words (`COMMON_TERM_SHARE`) count in the share but
    are left out of the MATCH: they add little to bm25 and would make FTS5 score most of the store. Runs in recall's
    keyword thread while the query is embedded (SQLite releases the GIL). A failing search is logged and finds
    nothing."""
    if not terms:
        return KeywordHits()
    try:
        # a phrase form ("owner lives") is counted by its last word: an upper bound, for IDF and the MATCH
        documents, by_word = store.term_document_counts(sorted({f.split()[-1] for fs in forms.values() for f in fs}))
        by_form = {f: by_word[f.split()[-1]] for fs in forms.values() for f in fs}
        counts = {t: max(by_form[f] for f in forms[t]) for t in terms}
        selective = selective_terms(terms, counts, documents, COMMON_TERM_SHARE, COMMON_TERM_MIN_DOCS)
        if not selective:
            return KeywordHits(documents, counts)
        used = [f for t in selective for f in forms[t] if by_form[f] > 0]
        match = fts_query(used)
        rows = store.fts_search(being, match, limit, before, namespaces)
        read = store.ranking_rows([r[0] for r in rows], model_id)
        hits = KeywordHits(documents, counts, rows, match, {r[0]: r[1] for r in rows}, {r[0] for r in rows},
                           {mid: row.fields for mid, row in read.items()})
        hits.vectors = {mid: np.frombuffer(row.vector, dtype=np.float32) for mid, row in read.items()
                        if row.vector is not None}
        hits.shares = term_shares(terms, forms, hits, rows)
        return hits
    except sqlite3.OperationalError as exc:
        log.warning("recall: keyword search failed (%s)", exc)
        return KeywordHits()


def term_shares(terms: list[str], forms: dict[str, frozenset[str]], hits: KeywordHits,
                rows: list[tuple[int, float, str]]) -> dict[int, float]:
    """`{id: share 0..1}` of `rows` (`(id, bm25, content)`): the IDF-weighted share of the query's `terms` each
    memory holds in one of their word forms (`forms`), IDF from `hits.documents` and `hits.counts`."""
    weights = {t: idf(hits.documents, hits.counts.get(t, 0)) for t in terms}
    total = sum(weights.values()) or 1.0
    out = {}
    for mid, _, content in rows:
        folded = content.lower() if content.isascii() else fold(content)
        words = set(WORD.findall(folded))
        out[mid] = sum(w for t, w in weights.items()
                       if t in words or (len(forms[t]) > 1 and any(has_form(f, words, folded) for f in forms[t])))
        out[mid] /= total
    return out


def keyword_scores(terms: list[str], forms: dict[str, frozenset[str]], hits: KeywordHits,
                   extra: list[tuple[int, float, str]] = (), share_on: bool = True) -> dict[int, float]:
    """`{id: keyword score 0..1}` of `hits.rows` and of `extra` (more `(id, bm25, content)`: the vector hits the
    match also finds): bm25 relative to the best of them × their term share (`term_shares`, when `share_on`), so a
    memory matching only a common word of a longer query scores low (a query word no memory holds lowers every
    keyword score, leaving the ranking to meaning)."""
    every = [*hits.rows, *extra]
    best = max((-rank for _, rank, _ in every), default=0.0)
    if best <= 0:
        return {mid: 0.0 for mid, _, _ in every}
    shares = {**hits.shares, **term_shares(terms, forms, hits, extra)} if share_on else {}
    return {mid: -rank / best * shares.get(mid, 1.0) for mid, rank, _ in every}
