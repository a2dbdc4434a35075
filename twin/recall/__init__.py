"""Recall: hybrid search by meaning (seed 000: FTS5 bm25 and cosine, fused, then importance and recency),
its keyword half and the time words of a query.

Each name below is re-exported from the module that defines it (as `rq.worker` does); import from
the module itself where a test patches it."""

from twin.recall.hybrid import Recall, TouchBar, normalise, recall_with, subject_head
from twin.recall.keyword_search import has_form, idf, keyword_scores, search_keywords, term_forms
from twin.recall.time_window import (
    EventAnchor,
    TimeWindow,
    date_words,
    event_window,
    find_event_anchor,
    find_window,
    strip_time_words,
    today_window,
    within,
)

__all__ = [
    "EventAnchor",
    "Recall",
    "TimeWindow",
    "TouchBar",
    "date_words",
    "event_window",
    "find_event_anchor",
    "find_window",
    "has_form",
    "idf",
    "keyword_scores",
    "normalise",
    "recall_with",
    "search_keywords",
    "strip_time_words",
    "subject_head",
    "term_forms",
    "today_window",
    "within",
]
