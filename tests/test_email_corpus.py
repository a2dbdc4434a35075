"""The email corpus is the contract (tests/email_corpus.py): needs-reply is right on every thread, the offline
memories of each thread hold its facts, no memory holds a salutation, sign-off, signature, disclaimer or
phishing content, and none is cut mid-sentence by the extractor."""

from __future__ import annotations

from collections import Counter

import pytest
from email_corpus import CASES, OWNER, MailCase

from twin.connectors.email_summary import heuristic_summary
from twin.connectors.email_text import parse_thread
from twin.text.extractor import extract

FACTS_KEPT_FLOOR = 0.95
"""Share of the corpus facts the offline memories must hold (measured: 86 of 87; bench/email_summaries.py)."""


def memories_of(case: MailCase) -> list[str]:
    return [m.content for m in extract(heuristic_summary(parse_thread(case.thread, [OWNER])))]


def test_corpus_size_and_spread():
    assert len(CASES) >= 40
    kinds = Counter(c.kind for c in CASES)
    assert {"question", "invitation", "order", "newsletter", "phishing", "news", "notification"} <= set(kinds)
    assert Counter(c.language for c in CASES)["de"] >= 12 and sum(c.needs_reply for c in CASES) >= 10


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_needs_reply_matches_the_label(case: MailCase):
    thread = parse_thread(case.thread, [OWNER])
    assert thread.needs_reply is case.needs_reply, (case.name, thread.reply_reason, thread.messages[-1].automated,
                                                    thread.messages[-1].phishing)
    assert (thread.reply_reason is not None) is case.needs_reply


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_memories_hold_no_wrapping_and_are_never_cut(case: MailCase):
    memories = memories_of(case)
    assert memories, case.name
    for memory in memories:
        assert memory.count("“") == memory.count("”"), memory
        assert not any(bad.lower() in memory.lower() for bad in case.never), memory
        assert len(memory) <= 400


def test_memories_hold_the_facts():
    kept = total = 0
    missed = []
    for case in CASES:
        low = [m.lower() for m in memories_of(case)]
        for fact in case.facts:
            total += 1
            if any(fact.lower() in m for m in low):
                kept += 1
            else:
                missed.append(f"{case.name}: {fact}")
    assert kept >= FACTS_KEPT_FLOOR * total, missed


def test_phishing_is_named_and_its_content_not_learned():
    for case in (c for c in CASES if c.kind == "phishing"):
        memories = memories_of(case)
        assert len(memories) == 1 and "signs of phishing" in memories[0], memories
