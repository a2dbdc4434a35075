"""Recall: hybrid search by meaning (seed 000: FTS5 bm25 and cosine, fused, then importance and recency),
the slot of a fact and the time words of a query.

Each name below is re-exported from the module that defines it (as `rq.worker` does); import from
the module itself where a test patches it."""

from twin.recall.hybrid import (
    Recall,
    TouchBar,
    has_form,
    idf,
    normalise,
    open_recall,
    recall_with,
    subject_head,
    term_forms,
)
from twin.recall.slots import slot_of, subject_of
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
    "normalise",
    "open_recall",
    "recall_with",
    "slot_of",
    "strip_time_words",
    "subject_head",
    "subject_of",
    "term_forms",
    "today_window",
    "within",
]
