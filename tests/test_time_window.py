"""Time words -> UTC windows (twin.recall.time_window): every expression in two zones, DST weeks, a year boundary,
month names that are not months, "the week of" a day, absurd values and odd strings (None, never an exception),
and the eval set's temporal queries."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from case_tables import case_tables

from twin.recall.time_window import (
    TimeWindow,
    event_window,
    find_event_anchor,
    find_window,
    strip_time_words,
    today_window,
    within,
)

CASES = case_tables("time_window")
"""The case tables of this module (tests/data/time_window_cases.toml)."""

ZONES = ("Europe/Berlin", "America/Los_Angeles")


def at(local: str, zone: str) -> datetime:
    """A local wall-clock time ("2026-06-17" or "2026-06-17T05:00") in `zone`, as aware UTC."""
    return datetime.fromisoformat(local).replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def check(query: str, now_local: str, zone: str, start: str, end: str, strict: bool) -> TimeWindow:
    window = find_window(query, at(now_local, zone), ZoneInfo(zone))
    assert window is not None, query
    assert (window.start, window.end, window.strict) == (at(start, zone), at(end, zone), strict), window
    return window


WEDNESDAY = "2026-06-17T12:00"  # Wednesday 17 June 2026, noon on the owner's clock
WEDNESDAY_CASES = CASES["WEDNESDAY_CASES"]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("query", "start", "end", "strict"), WEDNESDAY_CASES)
def test_expressions_on_a_wednesday(zone: str, query: str, start: str, end: str, strict: bool) -> None:
    check(query, WEDNESDAY, zone, start, end, strict)


NO_WINDOW = CASES["NO_WINDOW"]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("query", NO_WINDOW)
def test_no_window(zone: str, query: str) -> None:
    assert find_window(query, at(WEDNESDAY, zone), ZoneInfo(zone)) is None


WEEK_OF = CASES["WEEK_OF"]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("query", "start", "end", "strict"), WEEK_OF)
def test_week_of_a_day_is_its_whole_week(zone: str, query: str, start: str, end: str, strict: bool) -> None:
    check(query, WEDNESDAY, zone, start, end, strict)


def test_week_of_phrase_and_strip() -> None:
    query = "what did I do in the week of 3 March?"
    window = find_window(query, at(WEDNESDAY, "Europe/Berlin"), ZoneInfo("Europe/Berlin"))
    assert window is not None and window.phrase == "the week of 3 March"
    assert strip_time_words(query, window) == "what did I do?"


ABSURD = CASES["ABSURD"]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("query", ABSURD)
def test_absurd_values_give_no_window(zone: str, query: str) -> None:
    assert find_window(query, at(WEDNESDAY, zone), ZoneInfo(zone)) is None


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("query", "start", "end", "strict"), CASES["test_large_but_sane_values_still_give_a_window"])
def test_large_but_sane_values_still_give_a_window(zone: str, query: str, start: str, end: str, strict: bool) -> None:
    check(query, WEDNESDAY, zone, start, end, strict)


ODD = [
    "", " ", "\x00", "\n\t\r", "(((", "[a-z]*+?", "%s %d {0}", "\\", "'; DROP TABLE memories; --",
    "🎉🎉 last 🎉 week 🎉", "上周三我做了什么", "в прошлом году", "مرحبا ٢٠٢٦", "last ٣ days", "２０２６年３月",
    "9" * 30, "last " + "9" * 30 + " days", "9" * 30 + " years ago", "in " + "9" * 30, "March " + "9" * 30,
    "week of " + "9" * 30, "the week of " + "9" * 30 + "-01-01", "since " + "9" * 30, "the 99th of March",
    "the week of 99 March", "2026-02-30", "30 February", "29 February 2025", "week of 2099-12-31", "since 1900",
    "999999 years ago", "last 999999 months", "last 999999 weeks", "999999 days ago", "1/1/1/1/2026", "0/0/2026",
    "00/00/0000", "99/99/9999", "last last last week", "the week of the week of 3 March", "week of",
    "the week of " * 1000, "last " * 20000 + "week", "a" * 100_000, "March 3 " * 5000,
]


@pytest.mark.parametrize("zone", ZONES)
def test_no_exception_escapes_for_odd_strings(zone: str) -> None:
    for query in ODD:
        window = find_window(query, at(WEDNESDAY, zone), ZoneInfo(zone))
        assert window is None or window.start < window.end, query[:80]


SATURDAY = "2026-06-20T12:00"


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("query", "start", "end"), CASES["test_on_a_saturday"])
def test_on_a_saturday(zone: str, query: str, start: str, end: str) -> None:
    check(query, SATURDAY, zone, start, end, True)


NEW_YEAR = "2026-01-02T12:00"  # Friday 2 January 2026


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("query", "start", "end"), CASES["test_year_boundary"])
def test_year_boundary(zone: str, query: str, start: str, end: str) -> None:
    check(query, NEW_YEAR, zone, start, end, True)


@pytest.mark.parametrize(("zone", "now", "query", "start", "end"), CASES["test_utc_across_dst_and_zones"])
def test_utc_across_dst_and_zones(zone: str, now: str, query: str, start: str, end: str) -> None:
    window = find_window(query, utc(now), ZoneInfo(zone))
    assert window is not None
    assert (window.start, window.end) == (utc(start), utc(end))


def test_phrase_and_strip() -> None:
    now, zone = at(WEDNESDAY, "Europe/Berlin"), ZoneInfo("Europe/Berlin")
    window = find_window("What did I do yesterday?", now, zone)
    assert window is not None and window.phrase == "yesterday"
    assert strip_time_words("What did I do yesterday?", window) == "What did I do?"
    window = find_window("what did I do at Easter with Lena last year?", now, zone)
    assert window is not None and window.phrase == "Easter … last year"
    assert strip_time_words("what did I do at Easter with Lena last year?", window) == "what did I do with Lena?"
    window = find_window("what happened in October 2025 in Porto?", now, zone)
    assert window is not None and window.phrase == "in October 2025"
    assert strip_time_words("what happened in October 2025 in Porto?", window) == "what happened in Porto?"
    assert strip_time_words("where do I live?", None) == "where do I live?"


def test_within_today_and_naive_now() -> None:
    zone = ZoneInfo("Europe/Berlin")
    window = today_window(utc("2026-06-17T10:00"), zone)
    assert (window.start, window.end, window.strict) == (utc("2026-06-16T22:00"), utc("2026-06-17T22:00"), True)
    assert within("2026-06-16T22:00:00Z", window)
    assert within("2026-06-17T21:59:59+00:00", window)
    assert not within("2026-06-17T22:00:00Z", window)  # end exclusive
    assert within(datetime(2026, 6, 17, 12), window)  # naive = UTC
    assert not within("2026-06-16T21:59:59Z", window)
    with pytest.raises(ValueError, match="timezone-aware"):
        find_window("today", datetime(2026, 6, 17, 12), zone)


def _eval_rows(eval_dir: Path) -> tuple[list[dict], dict[str, dict]]:
    queries = [json.loads(line) for line in (eval_dir / "queries.jsonl").read_text(encoding="utf-8").splitlines()
               if line]
    memories = [json.loads(line) for line in (eval_dir / "memories.jsonl").read_text(encoding="utf-8").splitlines()
                if line]
    return queries, {m["id"]: m for m in memories}


@pytest.mark.eval
def test_eval_temporal_windows_hold_their_gold(eval_dir: Path) -> None:
    queries, memories = _eval_rows(eval_dir)
    zone = ZoneInfo("Europe/Berlin")
    temporal = [q for q in queries if q["category"] == "temporal"]
    found, held, misses = 0, 0, []
    for q in temporal:
        window = find_window(q["query"], datetime.fromisoformat(q["as_of"]), zone)
        if window is None:
            continue
        found += 1
        outside = [g for g in q["gold"] if not within(memories[g]["created_at"], window)]
        if outside:
            misses.append(f"{q['qid']} {q['query']!r} -> {window.start}..{window.end} misses "
                          + ", ".join(f"{g}@{memories[g]['created_at']}" for g in outside))
        else:
            held += 1
    report = f"temporal: {found}/{len(temporal)} with a window, {held}/{found} hold all gold; misses: {misses}"
    assert found >= 0.75 * len(temporal), report
    assert held >= 0.9 * found, report


@pytest.mark.eval
def test_eval_current_facts_get_no_strict_window(eval_dir: Path) -> None:
    queries, _ = _eval_rows(eval_dir)
    zone = ZoneInfo("Europe/Berlin")
    strict = [(q["qid"], q["query"], w.phrase) for q in queries if q["category"] == "current_fact"
              if (w := find_window(q["query"], datetime.fromisoformat(q["as_of"]), zone)) and w.strict]
    assert not strict, f"current-fact queries restricted to a time window: {strict}"


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("query", "unit", "event", "start", "end"),
    CASES["test_an_event_anchor_is_the_unit_around_the_events_local_day"])
def test_an_event_anchor_is_the_unit_around_the_events_local_day(zone, query, unit, event, start, end):
    anchor = find_event_anchor(query)
    assert (anchor.unit, anchor.event) == (unit, event) and find_window(query, utc("2026-01-01T00:00"),
                                                                          ZoneInfo(zone)) is None
    window = event_window(anchor, at("2025-09-03T23:30", zone), ZoneInfo(zone))  # late Wednesday, local time
    assert (window.start, window.end, window.strict) == (at(start, zone), at(end, zone), True)
    assert event not in strip_time_words(query, window)


@pytest.mark.parametrize("query", CASES["test_no_event_anchor"])
def test_no_event_anchor(query):
    assert find_event_anchor(query) is None
