"""Time words -> UTC windows (twin.recall.time_window): every expression in two zones, DST weeks, a year boundary,
month names that are not months, "the week of" a day, absurd values and odd strings (None, never an exception),
and the eval set's temporal queries."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from twin.recall.time_window import (
    TimeWindow,
    event_window,
    find_event_anchor,
    find_window,
    strip_time_words,
    today_window,
    within,
)

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
WEDNESDAY_CASES = [
    ("what did I do today?", "2026-06-17", "2026-06-18", True),
    ("what did I do yesterday?", "2026-06-16", "2026-06-17", True),
    ("the day before yesterday", "2026-06-15", "2026-06-16", True),
    ("what did I eat this morning?", "2026-06-17T05:00", "2026-06-17T12:00", True),
    ("who called yesterday evening?", "2026-06-16T17:00", "2026-06-17", True),
    ("what's on this evening?", "2026-06-17T17:00", "2026-06-18", False),  # ahead of now: soft
    ("plans for tonight", "2026-06-17T17:00", "2026-06-18T06:00", False),
    ("where was I last night?", "2026-06-16T17:00", "2026-06-17T06:00", True),
    ("what did I do this week?", "2026-06-15", "2026-06-22", True),
    ("what did I do last week?", "2026-06-08", "2026-06-15", True),
    ("this weekend", "2026-06-20", "2026-06-22", False),
    ("what did I do last weekend?", "2026-06-13", "2026-06-15", True),
    ("what did I cook over the weekend?", "2026-06-13", "2026-06-15", True),
    ("what did I do last Saturday?", "2026-06-13", "2026-06-14", True),
    ("who did I see on Saturday?", "2026-06-13", "2026-06-14", True),
    ("on Monday", "2026-06-15", "2026-06-16", True),
    ("last Wednesday", "2026-06-10", "2026-06-11", True),  # today is Wednesday: a week ago
    ("what happened 3 days ago?", "2026-06-14", "2026-06-15", True),
    ("two weeks ago", "2026-06-01", "2026-06-08", True),
    ("a month ago", "2026-05-01", "2026-06-01", True),
    ("a year ago", "2025-01-01", "2026-01-01", True),
    ("a few weeks ago", "2026-05-25", "2026-06-01", False),
    ("in the last 3 days", "2026-06-14", "2026-06-18", True),
    ("in the past two weeks", "2026-06-03", "2026-06-18", True),
    ("in the last week", "2026-06-10", "2026-06-18", True),
    ("what have I been reading recently?", "2026-06-04", "2026-06-18", False),
    ("what have I cooked lately?", "2026-06-04", "2026-06-18", False),
    ("this month", "2026-06-01", "2026-07-01", True),
    ("what did I buy last month?", "2026-05-01", "2026-06-01", True),
    ("what did I do last March?", "2026-03-01", "2026-04-01", True),
    ("what did I do in March?", "2026-03-01", "2026-04-01", True),
    ("what did I read since March?", "2026-03-01", "2026-06-18", True),
    ("what happened in March 2025?", "2025-03-01", "2025-04-01", True),
    ("what happened March 2025", "2025-03-01", "2025-04-01", True),
    ("last June", "2025-06-01", "2025-07-01", True),  # June 2026 is not over
    ("in June", "2026-06-01", "2026-07-01", True),
    ("in July", "2025-07-01", "2025-08-01", True),  # the most recent July that has begun
    ("this July", "2026-07-01", "2026-08-01", False),
    ("what did I do in May?", "2026-05-01", "2026-06-01", True),
    ("last May", "2026-05-01", "2026-06-01", True),
    ("May 2025", "2025-05-01", "2025-06-01", True),
    ("early March", "2026-03-01", "2026-03-11", True),
    ("late May 2025", "2025-05-21", "2025-06-01", True),
    ("the first week of April", "2026-04-01", "2026-04-08", True),
    ("what happened in the last week of August 2025?", "2025-08-25", "2025-09-01", True),
    ("last year", "2025-01-01", "2026-01-01", True),
    ("this year", "2026-01-01", "2027-01-01", True),
    ("what did I do in 2025?", "2025-01-01", "2026-01-01", True),
    ("where is my 2025 tax return?", "2025-01-01", "2026-01-01", False),  # a bare year: soft
    ("this summer", "2026-06-01", "2026-09-01", True),
    ("which trips did I take last summer?", "2025-06-01", "2025-09-01", True),
    ("who had a baby last autumn?", "2025-09-01", "2025-12-01", True),
    ("in the fall", "2025-09-01", "2025-12-01", True),
    ("in the spring", "2026-03-01", "2026-06-01", True),
    ("this winter", "2026-12-01", "2027-03-01", False),
    ("last winter", "2025-12-01", "2026-03-01", True),
    ("what did I do at Christmas?", "2025-12-24", "2025-12-27", True),
    ("on Christmas Day 2024", "2024-12-25", "2024-12-26", True),
    ("what did I do last Easter?", "2026-04-03", "2026-04-07", True),  # Easter Sunday 5 April 2026
    ("what did I do for Easter last year?", "2025-04-18", "2025-04-22", True),  # Easter Sunday 20 April 2025
    ("on New Year's Eve", "2025-12-31", "2026-01-01T06:00", True),
    ("on Halloween", "2025-10-31", "2025-11-01", True),
    ("notes from 2026-03-14", "2026-03-14", "2026-03-15", True),
    ("what did I do on 14 March?", "2026-03-14", "2026-03-15", True),
    ("March 14th", "2026-03-14", "2026-03-15", True),
    ("the 14th of March 2025", "2025-03-14", "2025-03-15", True),
    ("what did I do on 25 April last year?", "2025-04-25", "2025-04-26", True),
    ("what changed since last week?", "2026-06-08", "2026-06-18", True),
    ("around 14 March", "2026-03-14", "2026-03-15", False),
    ("may I ask what I did in May?", "2026-05-01", "2026-06-01", True),
    ("what do I cook for Sunday brunch?", "2026-06-14", "2026-06-15", False),  # a bare weekday: soft
    ("what's my favourite Christmas dish?", "2025-12-24", "2025-12-27", False),
    ("what did I eat the other day?", "2026-06-04", "2026-06-18", False),
    ("last 2 weeks", "2026-06-03", "2026-06-18", True),
]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("query", "start", "end", "strict"), WEDNESDAY_CASES)
def test_expressions_on_a_wednesday(zone: str, query: str, start: str, end: str, strict: bool) -> None:
    check(query, WEDNESDAY, zone, start, end, strict)


NO_WINDOW = [
    "what did I do on my birthday?",  # an event anchor: needs the owner's memories
    "what did I do the week I moved?",
    "what did I do while Duarte was visiting?",
    "tell me about the March hare",
    "did I send a Mayday call?",
    "may I see my notes?",
    "I may have lost my keys",
    "who is April?",
    "what did June's sister say?",
    "what's Jan's phone number?",
    "did we march to the town hall?",
    "who do I meet on Saturdays?",
    "what am I studying at night school?",
    "what do I drink in the evening?",
    "how much rent do I pay each month?",
    "where do I live now?",
    "what's my job title these days?",
    "did I fall off my bike?",
    "the spring in Furnas",
    "what do I drink on summer evenings?",
]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("query", NO_WINDOW)
def test_no_window(zone: str, query: str) -> None:
    assert find_window(query, at(WEDNESDAY, zone), ZoneInfo(zone)) is None


WEEK_OF = [  # the Monday-Sunday week holding the day; 3 March 2026 is a Tuesday
    ("what did I do in the week of 3 March?", "2026-03-02", "2026-03-09", True),
    ("the week of March 3rd", "2026-03-02", "2026-03-09", True),
    ("week of 2026-03-03", "2026-03-02", "2026-03-09", True),
    ("the week of the 3rd of March 2025", "2025-03-03", "2025-03-10", True),  # a Monday: its own week
    ("in the week of 3 March last year", "2025-03-03", "2025-03-10", True),
    ("in the week of 29 March", "2026-03-23", "2026-03-30", True),  # Berlin springs forward that Sunday
    ("week of 8 March", "2026-03-02", "2026-03-09", True),  # Los Angeles springs forward that Sunday
    ("the week of Halloween", "2025-10-27", "2025-11-03", True),  # Berlin falls back 26 Oct, LA 2 Nov
    ("the week of 16 June", "2026-06-15", "2026-06-22", True),  # the current week: begun, so strict
]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("query", "start", "end", "strict"), WEEK_OF)
def test_week_of_a_day_is_its_whole_week(zone: str, query: str, start: str, end: str, strict: bool) -> None:
    check(query, WEDNESDAY, zone, start, end, strict)


def test_week_of_phrase_and_strip() -> None:
    query = "what did I do in the week of 3 March?"
    window = find_window(query, at(WEDNESDAY, "Europe/Berlin"), ZoneInfo("Europe/Berlin"))
    assert window is not None and window.phrase == "the week of 3 March"
    assert strip_time_words(query, window) == "what did I do?"


ABSURD = [  # None, never an exception or a window in the year 1027 (module docstring)
    "March 10000",
    "in the year 99999",
    "last 99999 days",  # would begin in 1752
    "last 0 days",
    "0 days ago",
    "13/45/2026",  # no such date, so not even its year
    "2026-13-30",
    "in the week of 31 February",
    "999 years ago",
    "last 999 years",
    "999999 weeks ago",  # beyond what `date` holds
]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("query", ABSURD)
def test_absurd_values_give_no_window(zone: str, query: str) -> None:
    assert find_window(query, at(WEDNESDAY, zone), ZoneInfo(zone)) is None


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("query", "start", "end", "strict"), [
    ("in the last 1000 days", "2023-09-21", "2026-06-18", True),  # counts above 999 are read
    ("last 36500 days", "1926-07-12", "2026-06-18", True),  # begins in MIN_YEAR..MAX_YEAR: kept
    ("what did I do on 03/04/2026?", "2026-01-01", "2027-01-01", False),  # a possible date: its year, softly
])
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
@pytest.mark.parametrize(("query", "start", "end"), [
    ("what did I do last Saturday?", "2026-06-13", "2026-06-14"),  # today is Saturday: a week ago
    ("on Saturday", "2026-06-13", "2026-06-14"),
    ("this Saturday", "2026-06-20", "2026-06-21"),
    ("last weekend", "2026-06-13", "2026-06-15"),
    ("this weekend", "2026-06-20", "2026-06-22"),
])
def test_on_a_saturday(zone: str, query: str, start: str, end: str) -> None:
    check(query, SATURDAY, zone, start, end, True)


NEW_YEAR = "2026-01-02T12:00"  # Friday 2 January 2026


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize(("query", "start", "end"), [
    ("what did I do last December?", "2025-12-01", "2026-01-01"),
    ("in December", "2025-12-01", "2026-01-01"),
    ("last week", "2025-12-22", "2025-12-29"),
    ("this week", "2025-12-29", "2026-01-05"),
    ("last month", "2025-12-01", "2026-01-01"),
    ("last year", "2025-01-01", "2026-01-01"),
    ("this winter", "2025-12-01", "2026-03-01"),
    ("last Christmas", "2025-12-24", "2025-12-27"),
    ("at New Year", "2025-12-31", "2026-01-02"),
    ("yesterday", "2026-01-01", "2026-01-02"),
])
def test_year_boundary(zone: str, query: str, start: str, end: str) -> None:
    check(query, NEW_YEAR, zone, start, end, True)


@pytest.mark.parametrize(("zone", "now", "query", "start", "end"), [
    # Berlin springs forward on Sunday 29 March 2026: that day is 23 h, the week before it 167 h.
    ("Europe/Berlin", "2026-03-30T08:00", "yesterday", "2026-03-28T23:00", "2026-03-29T22:00"),
    ("Europe/Berlin", "2026-03-30T08:00", "last week", "2026-03-22T23:00", "2026-03-29T22:00"),
    ("Europe/Berlin", "2026-03-30T08:00", "this morning", "2026-03-30T03:00", "2026-03-30T10:00"),
    # Los Angeles springs forward on Sunday 8 March 2026.
    ("America/Los_Angeles", "2026-03-10T18:00", "2 days ago", "2026-03-08T08:00", "2026-03-09T07:00"),
    ("America/Los_Angeles", "2026-03-10T18:00", "last week", "2026-03-02T08:00", "2026-03-09T07:00"),
    ("America/Los_Angeles", "2026-03-10T18:00", "last night", "2026-03-10T00:00", "2026-03-10T13:00"),
    # 03:00 UTC on 2 January is still 1 January in Los Angeles.
    ("Europe/Berlin", "2026-01-02T03:00", "yesterday", "2025-12-31T23:00", "2026-01-01T23:00"),
    ("America/Los_Angeles", "2026-01-02T03:00", "yesterday", "2025-12-31T08:00", "2026-01-01T08:00"),
    # 03:00 UTC on 1 January 2026 is still 2025 in Los Angeles: "last year" is 2024 there, 2025 in Berlin.
    ("America/Los_Angeles", "2026-01-01T03:00", "last year", "2024-01-01T08:00", "2025-01-01T08:00"),
    ("Europe/Berlin", "2026-01-01T03:00", "last year", "2024-12-31T23:00", "2025-12-31T23:00"),
])
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
@pytest.mark.parametrize(("query", "unit", "event", "start", "end"), [
    ("what did I buy the week I moved to Berlin?", "week", "moved to Berlin", "2025-09-01", "2025-09-08"),
    ("who did I meet on the day I started at Kestrel?", "day", "started at Kestrel", "2025-09-03", "2025-09-04"),
    ("where did we eat the weekend we visited Porto?", "weekend", "visited Porto", "2025-08-30", "2025-09-01"),
    ("what happened the month that I moved", "month", "moved", "2025-09-01", "2025-10-01"),
])
def test_an_event_anchor_is_the_unit_around_the_events_local_day(zone, query, unit, event, start, end):
    anchor = find_event_anchor(query)
    assert (anchor.unit, anchor.event) == (unit, event) and find_window(query, utc("2026-01-01T00:00"),
                                                                          ZoneInfo(zone)) is None
    window = event_window(anchor, at("2025-09-03T23:30", zone), ZoneInfo(zone))  # late Wednesday, local time
    assert (window.start, window.end, window.strict) == (at(start, zone), at(end, zone), True)
    assert event not in strip_time_words(query, window)


@pytest.mark.parametrize("query", ["the day is long", "what did I do this week?", "I moved the week before", ""])
def test_no_event_anchor(query):
    assert find_event_anchor(query) is None
