"""Recall's keyword search on a real store: the candidates of one being, current at a replay's moment, the bm25 of
a memory outside the keyword top-k read with its other fields or asked of FTS5 apart (both the
bm25 of a full FTS5 query), and keyword scores that weigh the share of the query's words a memory holds."""

from __future__ import annotations

import pytest

from twin.recall.keyword_search import keyword_scores, search_keywords
from twin.text.query_terms import query_terms


def _forms(terms):
    return {t: frozenset({t}) for t in terms}


@pytest.fixture
def filled(store):
    """30 memories about a greenhouse (the keyword top-k is 5 of them), one about a greenhouse's heating valve,
    another being's greenhouse and a superseded one; returns their ids by name."""
    ids = {}
    with store.atomic():
        for i in range(30):
            ids[f"g{i}"] = store.insert_memory("owner", "fact", f"Owner waters greenhouse bed {i} greenhouse daily.",
                                               "t", 0.5, created_at=f"2026-03-{1 + i % 28:02d}T10:00:00Z")
        ids["valve"] = store.insert_memory("owner", "fact", "Owner fixed the greenhouse heating valve with Ilka.",
                                           "t", 0.5, created_at="2026-04-02T10:00:00Z")
        ids["other"] = store.insert_memory("lena", "fact", "Lena's greenhouse heating valve leaks.", "t", 0.5,
                                           created_at="2026-04-03T10:00:00Z")
        newer = store.insert_memory("owner", "fact", "Owner's greenhouse heating runs on a heat pump.", "t", 0.5,
                                    created_at="2026-05-01T10:00:00Z")
        ids["old"] = store.insert_memory("owner", "fact", "Owner's greenhouse heating runs on a gas valve.", "t", 0.5,
                                         created_at="2026-04-10T10:00:00Z", status="superseded", superseded_by=newer)
        ids["newer"] = newer
    return ids


def test_candidates_are_the_beings_current_memories(store, filled):
    terms = query_terms("the greenhouse heating valve")
    hits = search_keywords(store, "owner", terms, _forms(terms), 10)
    found = [r[0] for r in hits.rows]
    assert found[0] == filled["valve"] and filled["other"] not in found and filled["old"] not in found
    # a replay before the newer statement sees the superseded one as current, and nothing made later
    replay = search_keywords(store, "owner", terms, _forms(terms), 10, before="2026-04-20T00:00:00Z")
    found = [r[0] for r in replay.rows]
    assert filled["old"] in found and filled["newer"] not in found


@pytest.mark.parametrize("how", ["read", "asked"])
def test_a_memory_outside_the_top_k_gets_its_real_bm25(store, filled, how):
    unmatched = store.insert_memory("owner", "fact", "Owner repots the fern.", "t", 0.5)
    terms = query_terms("greenhouse bed")
    hits = search_keywords(store, "owner", terms, _forms(terms), 5)
    assert len(hits.rows) == 5
    outside = [filled[f"g{i}"] for i in range(30) if filled[f"g{i}"] not in {r[0] for r in hits.rows}][:3]
    if how == "read":  # with the vector hits' fields, in one query
        fields = hits.read(store, [*outside, unmatched, 10**9])
        assert set(fields) == {*outside, unmatched} and fields[unmatched].content == "Owner repots the fern."
    ranks = hits.ranks_of(store, [*outside, unmatched, 10**9])
    every = dict(store.conn.execute("SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ?", (hits.match,)))
    assert set(ranks) == set(outside) and all(ranks[m] == pytest.approx(every[m]) for m in outside)
    assert all(rank == pytest.approx(every[mid]) for mid, rank, _ in hits.rows)


def test_keyword_score_weighs_the_share_of_query_words(store, filled):
    terms = query_terms("greenhouse heating valve Ilka")
    hits = search_keywords(store, "owner", terms, _forms(terms), 40)
    scores = keyword_scores(terms, _forms(terms), hits)
    assert max(scores, key=scores.get) == filled["valve"] and scores[filled["valve"]] <= 1.0
    assert scores[filled["g0"]] < 0.5 * scores[filled["valve"]]  # holds "greenhouse" alone
    assert keyword_scores(terms, _forms(terms), hits, share_on=False)[filled["g0"]] > scores[filled["g0"]]


def test_nothing_to_search(store, filled):
    assert search_keywords(store, "owner", [], {}, 10).rows == []
    terms = query_terms("xylophone")
    hits = search_keywords(store, "owner", terms, _forms(terms), 10)
    assert hits.rows == [] and hits.match is None and hits.ranks_of(store, [filled["g1"]]) == {}
