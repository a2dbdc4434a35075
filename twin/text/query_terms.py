"""Query terms: the words of a search text in FTS5 form (case-folded, diacritics stripped, stopwords left out) and
the MATCH expression over them. Pure text; recall ranks with them, capture looks up the memories a new one may
supersede with them, and a request for a secret is read with them."""

from __future__ import annotations

import re
import unicodedata

STOPWORDS = frozenset(
    """
    a an and are as at be been but by can could did do does for from had has have how i if in into is it
    its me my of on or our so than that the their them then there these they this to was we were what
    when where which who whom why will with would you your about any all am also just more most no not
    now only other some such too very s t d ll re ve m
    """.split())
WORD = re.compile(r"\w+", re.UNICODE)
"""A word as FTS5's unicode61 tokenizer splits them."""


def fold(text: str) -> str:
    """Case-fold and strip diacritics, as FTS5's `unicode61 remove_diacritics 2` tokenizer does."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def query_terms(text: str) -> list[str]:
    """The query's distinct non-stopword terms in FTS form, in order, at most 32 (contraction tails such as
    the `s` of "what's" are stopwords: they would match every "Owner's")."""
    terms: list[str] = []
    for word in WORD.findall(fold(text)):
        if word not in STOPWORDS and word not in terms:
            terms.append(word)
    return terms[:32]


def fts_query(terms: list[str]) -> str | None:
    """An FTS5 MATCH expression: the OR of `terms`, each quoted (so no user text is read as FTS syntax).
    None when there is nothing to match."""
    return " OR ".join(f'"{t.replace(chr(34), "")}"' for t in terms) or None


def selective_terms(terms: list[str], counts: dict[str, int], documents: int, share: float,
                    min_docs: int) -> list[str]:
    """Those of `terms` worth a keyword search: the ones found in memories at all (`counts`: term -> memories holding
    it, of `documents`; `Store.term_document_counts`), without the common ones, found in more than `share` of the
    memories and in more than `min_docs` (small stores keep every word). A common word adds next to nothing to
    bm25 (its IDF is near 0) yet makes FTS5 score every memory holding it: "owner" is in ~9 of 10 memories, so a
    search with it costs time linear in the store. When every term is common the rarest one is kept. Recall's
    keyword search (`twin.recall.keyword_search`) and capture's related memories (`twin.learn.capture`) each pass
    their own `share`."""
    present = [t for t in terms if counts.get(t, 0) > 0]
    if not present:
        return []
    cutoff = max(min_docs, share * documents)
    return [t for t in present if counts[t] <= cutoff] or [min(present, key=counts.__getitem__)]
