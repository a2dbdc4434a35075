"""Time words in a recall query -> a window of UTC time (seed 003, "time-windowed recall").

Seed 003 anchors recall on time when the owner does ("what did we work on yesterday?": `memory_recent` with a
`since` bound, `memory_today` = the last 24 h); the eval set (shared/eval, category `temporal`) asks about named
days, weekends, months, seasons and holidays relative to the moment of asking. This module only reads the query:
it turns the English time words in it into a [start, end) window in aware UTC, computed on the owner's calendar
(days, weeks, months begin at local midnight in the owner's zone; weeks begin on Monday, as in ISO 8601).
Read-only and pure: no I/O, no clock (the caller passes `now`).

Rules, where a phrase is ambiguous:
- "last X" for a recurring X (Saturday, March, summer, Easter): the most recent X that is over, so on a Saturday
  "last Saturday" is a week ago and in March "last March" is a year ago. "in/on/at X" or a bare X: the most
  recent X that has begun (the current one included); weekdays: the most recent before today. "this X": the X
  of the current week or year (it may lie ahead).
- Seasons are meteorological, northern hemisphere: spring Mar-May, summer Jun-Aug, autumn/fall Sep-Nov, winter
  Dec-Feb. "winter 2025" is the one that begins in December 2025; "this winter" in January or February is the
  one that began the December before.
- Holidays: Christmas (24-26 Dec), Christmas Eve/Day, Boxing Day, New Year's Eve/Day, New Year (31 Dec-1 Jan),
  Easter (Gregorian, Good Friday to Easter Monday), Good Friday, Easter Sunday/Monday, Valentine's Day,
  Halloween, German Unity Day (3 Oct; the eval owner lives in Berlin).
- Parts of a day: morning 05-12, afternoon 12-17, evening 17-24, night 17-06; New Year's Eve runs to 06:00 on
  1 January (the party is past midnight). "recently"/"lately": the last `RECENT_DAYS` days, soft.
- A full month name counts only after in/last/this/since/during/on/of/early/mid/late, beside a day number, or
  before a year ("the March hare", "may I" are not months); "May" only after in/last or with a day or year;
  abbreviations ("Mar") only with a day or year; a season only after last/this/in/during/since/over or before a
  year ("the spring in Furnas" is none). Lower-case "last march" still reads as the month.
- "last year", "this year", "in 2025" beside a yearless date, month, season or holiday choose its year
  ("Easter last year", "25 April last year"). "since X" runs from the start of X to the end of today.
- "(in) the week of X" for a day X ("the week of 3 March", "week of March 3rd", "week of 2026-03-03"): the
  Monday-Sunday week holding X, on the owner's calendar.
- Absurd values give None, never an exception: years are read only as 19xx/20xx and a window must begin in
  `MIN_YEAR`..`MAX_YEAR` ("999 years ago", "last 99999 days" give None; "last 36500 days" is fine); a count is
  1-6 digits and 0 is no count ("last 0 days", "0 days ago"); impossible dates ("30 February", "2026-13-30",
  "13/45/2026") give nothing, not even their year. Numeric dates like 03/04/2026 are not read (day or month
  first?); only their year is, softly.
- Several expressions: overlapping matches keep the longest, then the narrowest window wins.
- strict (restrict recall to the window) unless the mention is soft, where recall should only boost: "recently",
  "lately", "the other day"; a vague count ("a few weeks ago"); "around/roughly X"; a bare year ("my 2025
  tax return"); a bare weekday or holiday ("Sunday brunch", "Christmas dish"); a window that begins after `now`
  (nothing is remembered there yet: "this weekend" on a Wednesday).
- Event anchors give None here: they need the owner's memories. `find_event_anchor` reads the form "the
  day/week/weekend/month/year (that) I/we <event>" ("the week I moved to Berlin"); recall finds the event among
  the memories and `event_window` builds the window around it. Others ("on my birthday", "while Duarte was
  visiting") are not read.
"""

from __future__ import annotations

import bisect
import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta, tzinfo

RECENT_DAYS = 14
"""Days that "recently" / "lately" cover, today included (a soft window; seed 003's `memory_recent` has no fixed
span, so this is our choice)."""
DAY_PARTS_H = {"morning": (5, 12), "afternoon": (12, 17), "evening": (17, 24), "night": (17, 30)}
"""Parts of a day as hours after local midnight; 30 = 06:00 the next day."""
MIN_YEAR, MAX_YEAR = 1900, 2099
"""Years a window may begin in (what the year pattern 19xx/20xx can name); a window outside gives None."""
PHRASE_JOIN = " … "
"""Separates the parts of a phrase made of two expressions ("Easter … last year" in "Easter with Lena last year")."""

_MONTHS = tuple(calendar.month_name[1:])
_MON = r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?" \
       r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_Y = r"(?:,?\s+(?P<y>(?:19|20)\d\d)\b)?"
_NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
_NUMBERS |= {"a": 1, "an": 1, "couple of": 2, "a couple of": 2}
_VAGUE = {"few": 3, "a few": 3, "several": 4}
"""Counts that make a window soft ("a few weeks ago"), with the number used for them."""
_COUNT = r"\d{1,6}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a\s+)?few|several" \
         r"|(?:a\s+)?couple\s+of"
_NUM = rf"(?P<n>{_COUNT})"
_HOLIDAY = r"christmas\s+eve|christmas\s+day|boxing\s+day|christmas|xmas|new\s+year['’]?s\s+eve|nye" \
           r"|new\s+year['’]?s\s+day|new\s+year|good\s+friday|easter\s+sunday|easter\s+monday|easter" \
           r"|valentine['’]?s\s+day|halloween|german\s+unity\s+day"

PATTERNS: dict[str, re.Pattern[str]] = {name: re.compile(rx, re.IGNORECASE) for name, rx in {
    "iso_date": r"\b(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)\b",
    "day_month": rf"\b(?P<d>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?{_MON}\b\.?{_Y}",
    "month_day": rf"\b{_MON}\.?\s+(?P<d>[0-3]?\d)(?:st|nd|rd|th)?\b(?![:.]\d){_Y}",
    "week_of_month": rf"\b(?:the\s+)?(?P<which>first|last)\s+week\s+of\s+{_MON}\b{_Y}",
    "part_month": rf"\b(?P<part>early|mid|late)[-\s]+{_MON}\b{_Y}",
    "month": rf"\b(?:(?P<ctx>in|last|this|since|during|on|of)\s+)?{_MON}\b(?!['’]s\b){_Y}",
    "season": rf"\b(?:(?P<ctx>last|this|in|during|since|over)\s+(?:the\s+)?)?(?P<season>spring|summer|autumn|fall"
              rf"|winter)\b{_Y}",
    "holiday": rf"\b(?:(?P<ctx>last|this)\s+)?(?P<hol>{_HOLIDAY})\b{_Y}",
    "weekday": r"\b(?:(?P<ctx>last|this|on|past)\s+)?(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday"
               r"|sunday)\b",
    "day_part": r"\b(?:(?P<base>this|today|yesterday)\s+(?P<part>morning|afternoon|evening)|last\s+(?P<night>night)"
                r"|(?P<tonight>tonight))\b",
    "day": r"\b(?P<w>the\s+day\s+before\s+yesterday|today|yesterday|tomorrow)\b",
    "weekend": r"\b(?:(?P<ctx>this|last|past)|(?:on|at|over)\s+the)\s+weekend\b",
    "unit": r"\b(?P<ctx>this|last|previous)\s+(?P<unit>week|month|year)\b(?!\s+of\b)",
    "ago": rf"\b{_NUM}\s+(?P<unit>day|week|month|year)s?\s+ago\b",
    "rolling": rf"\b(?:(?:in|over|during|within)\s+)?(?:the\s+|this\s+|(?=(?:last|past)\s+(?:{_COUNT})\s))"
               rf"(?:last|past)\s+(?:{_NUM}\s+)?(?P<unit>day|week|month|year)s?\b(?!\s+of\b)",
    "recent": r"\b(?:recently|lately|of\s+late|the\s+other\s+day)\b",
    "year": r"\b(?:(?P<ctx>in|during|since|of|for|from)\s+)?(?P<y>(?:19|20)\d\d)\b(?![-/.]\d)",
}.items()}
"""Every time expression this module knows, by name; `_RESOLVE` turns a match of each into a local span."""

_PREFIX = re.compile(r"\b(?P<p>since|around|roughly|circa|approximately|(?:the\s+)?week\s+of)\s+(?:the\s+)?$",
                     re.IGNORECASE)
_NUMERIC_DATE = re.compile(r"\b(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.]$")
_LAST_WORD = re.compile(r"(\w+)\s+$")
"""The day and month glued before a year ("13/45/" in "13/45/2026"), to drop the year of an impossible date."""
_ANCHORED = {"day_month", "month_day", "week_of_month", "part_month", "month", "season", "holiday"}
_BARE_OK = {"weekday": {"on", "since", "during"}, "holiday": {"on", "at", "for", "over", "during", "since"}}
"""A weekday or holiday with none of these words before it (and no last/this/year) is soft: "Sunday brunch"."""
_MONTH_CONTEXT = {"in", "last", "this", "since", "during", "on", "of", "early", "mid", "late"}


@dataclass(frozen=True)
class TimeWindow:
    """[start, end) in aware UTC; `phrase` the query words that named it; `strict` True when the query is about
    the window (restrict recall to it), False when the mention is soft (only boost memories inside it)."""

    start: datetime
    end: datetime
    phrase: str
    strict: bool


@dataclass(frozen=True)
class _Ctx:
    today: date
    now: datetime  # local wall clock, naive
    year: int | None = None  # a year chosen by "last year" / "in 2025" elsewhere in the query


Span = tuple[datetime, datetime]  # local wall clock, naive, end exclusive


def _d(day: date, hours: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day) + timedelta(hours=hours)


def _days(day: date, n: int = 1) -> Span:
    return _d(day), _d(day + timedelta(days=n))


def _add_months(day: date, k: int) -> date:
    y, m = divmod(day.month - 1 + k, 12)
    year, month = day.year + y, m + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _easter(year: int) -> date:
    """Gregorian Easter Sunday (anonymous Gregorian algorithm, Meeus/Jones/Butcher)."""
    a, (b, c) = year % 19, divmod(year, 100)
    (d, e), g = divmod(b, 4), (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    ell = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * ell) // 451
    month, day = divmod(h + ell - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _n(m: re.Match[str]) -> int:
    raw = re.sub(r"\s+", " ", (m.groupdict().get("n") or "a").lower())
    return int(raw) if raw.isdigit() else _NUMBERS.get(raw) or _VAGUE.get(raw, 1)


def _month_num(name: str) -> int:
    return [m[:3].lower() for m in _MONTHS].index(name[:3].lower()) + 1


def _recurring(inst: Callable[[int], Span | None], ctx: str | None, c: _Ctx) -> Span | None:
    """The instance of a yearly thing the words mean (module docstring: last = over, this = this year, else begun)."""
    if c.year is not None:
        return inst(c.year)
    if ctx == "this":
        return inst(c.today.year)
    for year in range(c.today.year + 1, c.today.year - 9, -1):
        span = inst(year)
        if span is not None and (span[1] <= c.now if ctx in ("last", "past") else span[0] <= c.now):
            return span
    return None


def _anchored(m: re.Match[str], c: _Ctx, inst: Callable[[int], Span | None]) -> Span | None:
    y = m.groupdict().get("y")
    return inst(int(y)) if y else _recurring(inst, (m.groupdict().get("ctx") or "").lower() or None, c)


def _r_date(m: re.Match[str], c: _Ctx) -> Span | None:
    month = int(m["m"]) if m.groupdict().get("m") else _month_num(m["mon"])

    def inst(year: int) -> Span | None:
        try:
            return _days(date(year, month, int(m["d"])))
        except ValueError:  # 30 February, 29 February outside a leap year
            return None

    return _anchored(m, c, inst)


def _r_month(m: re.Match[str], c: _Ctx) -> Span | None:
    month, part, which = _month_num(m["mon"]), m.groupdict().get("part"), m.groupdict().get("which")

    def inst(year: int) -> Span:
        start, end = date(year, month, 1), _add_months(date(year, month, 1), 1)
        if part:
            lo, hi = {"early": (1, 11), "mid": (11, 21), "late": (21, None)}[part.lower()]
            start, end = start.replace(day=lo), end if hi is None else start.replace(day=hi)
        elif which:
            start, end = (start, start + timedelta(7)) if which.lower() == "first" else (end - timedelta(7), end)
        return _d(start), _d(end)

    return _anchored(m, c, inst)


def _r_season(m: re.Match[str], c: _Ctx) -> Span | None:
    first = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}[m["season"].lower()]
    if first == 12 and (m["ctx"] or "").lower() == "this" and c.today.month <= 2 and c.year is None:
        c = replace(c, year=c.today.year - 1)
    return _anchored(m, c, lambda y: (_d(date(y, first, 1)), _d(_add_months(date(y, first, 1), 3))))


def _r_holiday(m: re.Match[str], c: _Ctx) -> Span | None:
    key = re.sub(r"\s+", " ", re.sub(r"['’]", "", m["hol"].lower()))
    key = {"xmas": "christmas", "nye": "new years eve"}.get(key, key)
    fixed = {"christmas": (12, 24, 3), "christmas eve": (12, 24, 1), "christmas day": (12, 25, 1),
             "boxing day": (12, 26, 1), "new years day": (1, 1, 1), "valentines day": (2, 14, 1),
             "halloween": (10, 31, 1), "german unity day": (10, 3, 1)}
    easter = {"good friday": (-2, 1), "easter sunday": (0, 1), "easter monday": (1, 1), "easter": (-2, 4)}

    def inst(year: int) -> Span:
        if key in easter:
            return _days(_easter(year) + timedelta(easter[key][0]), easter[key][1])
        if key == "new years eve":
            return _d(date(year, 12, 31)), _d(date(year, 12, 31), 30)
        if key == "new year":
            return _d(date(year - 1, 12, 31)), _d(date(year, 1, 2))
        month, day, n = fixed[key]
        return _days(date(year, month, day), n)

    return _anchored(m, c, inst)


def _unit_span(unit: str, day: date, shift: int) -> Span:
    """The calendar day/week/month/year containing `day`, moved by `shift` units."""
    if unit == "day":
        return _days(day + timedelta(shift))
    if unit == "week":
        return _days(day - timedelta(day.weekday()) + timedelta(weeks=shift), 7)
    if unit == "month":
        start = _add_months(day.replace(day=1), shift)
        return _d(start), _d(_add_months(start, 1))
    return _d(date(day.year + shift, 1, 1)), _d(date(day.year + shift + 1, 1, 1))


def _r_rolling(m: re.Match[str], c: _Ctx) -> Span:
    n, unit = _n(m), m["unit"].lower()
    start = {"day": lambda: c.today - timedelta(n), "week": lambda: c.today - timedelta(weeks=n),
             "month": lambda: _add_months(c.today, -n), "year": lambda: _add_months(c.today, -12 * n)}[unit]()
    return _d(start), _d(c.today + timedelta(1))


def _r_weekday(m: re.Match[str], c: _Ctx) -> Span:
    wd = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday").index(m["wd"].lower())
    if (m["ctx"] or "").lower() == "this":
        return _days(c.today + timedelta(wd - c.today.weekday()))
    return _days(c.today - timedelta((c.today.weekday() - wd) % 7 or 7))


def _r_weekend(m: re.Match[str], c: _Ctx) -> Span:
    saturday = c.today + timedelta(5 - c.today.weekday())
    ctx = (m["ctx"] or "").lower()
    if ctx in ("last", "past") or (not ctx and c.today.weekday() < 5):
        saturday -= timedelta(7)
    return _days(saturday, 2)


def _r_day_part(m: re.Match[str], c: _Ctx) -> Span:
    base = (m["base"] or "").lower()
    day = c.today - timedelta(1) if base == "yesterday" or m["night"] else c.today
    lo, hi = DAY_PARTS_H[(m["part"] or "night").lower()]
    return _d(day, lo), _d(day, hi)


def _r_day(m: re.Match[str], c: _Ctx) -> Span:
    shift = {"today": 0, "yesterday": -1, "tomorrow": 1}.get(m["w"].lower(), -2)
    return _days(c.today + timedelta(shift))


_RESOLVE: dict[str, Callable[[re.Match[str], _Ctx], Span | None]] = {
    "iso_date": _r_date, "day_month": _r_date, "month_day": _r_date, "week_of_month": _r_month,
    "part_month": _r_month, "month": _r_month, "season": _r_season, "holiday": _r_holiday, "weekday": _r_weekday,
    "day_part": _r_day_part, "day": _r_day, "weekend": _r_weekend,
    "unit": lambda m, c: _unit_span(m["unit"].lower(), c.today, 0 if m["ctx"].lower() == "this" else -1),
    "ago": lambda m, c: _unit_span(m["unit"].lower(), c.today, -_n(m)),
    "rolling": _r_rolling,
    "recent": lambda m, c: (_d(c.today - timedelta(RECENT_DAYS - 1)), _d(c.today + timedelta(1))),
    "year": lambda m, c: _unit_span("year", date(int(m["y"]), 1, 1), 0),
}


def _ending_at(rx: re.Pattern[str], query: str, end: int) -> re.Match[str] | None:
    """`rx` (anchored with `$`) matched in the 80 characters before `end`: constant time per match, so a long query
    of many time words stays linear (searching the whole prefix each time was quadratic)."""
    return rx.search(query, max(0, end - 80), end)


def _accepted(name: str, m: re.Match[str], query: str) -> bool:
    """Month and season words count only with the context the module docstring names; a year only when it does
    not end an impossible numeric date ("13/45/2026"); a count ("last 0 days") only when it is not 0."""
    if name == "year" and (glued := _ending_at(_NUMERIC_DATE, query, m.start())):
        a, b = int(glued["a"]), int(glued["b"])
        return (1 <= a <= 12 and 1 <= b <= 31) or (1 <= b <= 12 and 1 <= a <= 31)
    if name in ("ago", "rolling") and m["n"] and _n(m) == 0:
        return False
    if name == "season":
        return bool(m["ctx"] or m["y"])
    if name not in ("month", "part_month") or m["y"]:
        return True
    mon = m["mon"].lower()
    before = _ending_at(_LAST_WORD, query, m.start())
    words = {(m.groupdict().get("ctx") or m.groupdict().get("part") or "").lower(), before[1].lower() if before else ""}
    if mon == "may":
        return bool(words & {"in", "last"})
    return mon.capitalize() in _MONTHS and bool(words & _MONTH_CONTEXT)


def _year_of(name: str, m: re.Match[str], c: _Ctx) -> int | None:
    if name == "unit" and m["unit"].lower() == "year":
        return c.today.year - (m["ctx"].lower() != "this")
    return int(m["y"]) if name == "year" else None


def find_window(query: str, now: datetime, zone: tzinfo) -> TimeWindow | None:
    """The time window the query names, or None when it names none (rules and sources: module docstring).

    `now`: the moment of asking, timezone-aware (eval: the query's `as_of`); `zone`: the owner's zone, on whose
    calendar days, weeks (from Monday), months and years begin at local midnight. Returns [start, end) in aware
    UTC, DST-correct (a spring-forward day is 23 h long). Raises ValueError when `now` is naive, and nothing else
    for any `query`: absurd values ("March 10000", "last 0 days", "13/45/2026", "999 years ago", a window not
    beginning in MIN_YEAR..MAX_YEAR) give None (module docstring). Read-only.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("find_window: `now` must be timezone-aware (pass an aware UTC datetime)")
    local = now.astimezone(zone)
    c = _Ctx(today=local.date(), now=local.replace(tzinfo=None))
    found = [(name, m) for name, rx in PATTERNS.items() for m in rx.finditer(query) if _accepted(name, m, query)]
    chosen: list[tuple[str, re.Match[str]]] = []
    taken: list[tuple[int, int]] = []  # spans of `chosen`, sorted and disjoint, so one bisect finds an overlap
    for name, m in sorted(found, key=lambda f: f[1].start() - f[1].end()):  # longest first
        i = bisect.bisect(taken, (m.start(), m.end()))
        if (i == 0 or taken[i - 1][1] <= m.start()) and (i == len(taken) or m.end() <= taken[i][0]):
            bisect.insort(taken, (m.start(), m.end()))
            chosen.append((name, m))
    year = next(((n, m, y) for n, m in chosen if (y := _year_of(n, m, c)) is not None), None)
    best: TimeWindow | None = None
    for name, m in sorted(chosen, key=lambda f: f[1].start()):
        parts, cc = [m], c
        if year is not None and name in _ANCHORED and not m.groupdict().get("y"):
            parts, cc = sorted([m, year[1]], key=lambda p: p.start()), replace(c, year=year[2])
        try:
            span = _RESOLVE[name](m, cc)
            window = None if span is None else _window(query, name, m, parts, span, c, zone)
        except (ValueError, OverflowError):  # beyond what `date` holds: "999999 years ago"
            continue
        if window is not None and (best is None or window.end - window.start < best.end - best.start):
            best = window
    return best


def _window(query: str, name: str, m: re.Match[str], parts: list[re.Match[str]], span: Span, c: _Ctx,
            zone: tzinfo) -> TimeWindow | None:
    """The TimeWindow for a resolved span: "since"/"around"/"the week of" before it, strictness (module
    docstring), phrase, UTC; None when it does not begin in MIN_YEAR..MAX_YEAR."""
    start, end = span
    prefix = _ending_at(_PREFIX, query, parts[0].start())
    pre = "" if prefix is None else re.sub(r"\s+", " ", prefix["p"].lower())
    if pre.endswith("week of"):
        if end - start > timedelta(days=1):  # "the week of March": no single day to hold
            prefix, pre = None, ""
        else:
            start, end = _unit_span("week", start.date(), 0)
    if not MIN_YEAR <= start.year <= MAX_YEAR:
        return None
    lead = parts[0].start() if prefix is None else prefix.start()
    if pre == "since" or m[0].lower().startswith("since"):
        end = _d(c.today + timedelta(1))
    n = (m.groupdict().get("n") or "").lower()
    before = _ending_at(_LAST_WORD, query, m.start())
    bare = name in _BARE_OK and not (m["ctx"] or m.groupdict().get("y") or len(parts) > 1 or pre.endswith("week of")
                                     or (before and before[1].lower() in _BARE_OK[name]))
    soft = (name == "recent" or re.sub(r"\s+", " ", n) in _VAGUE or (name == "year" and not m["ctx"]) or bare
            or pre in ("around", "roughly", "circa", "approximately") or start >= c.now)
    texts = [query[lead: parts[0].end()]] + [p[0] for p in parts[1:]]
    if len(parts) == 2 and not query[parts[0].end(): parts[1].start()].strip(" ,"):
        texts = [query[lead: parts[1].end()]]
    utc = [t.replace(tzinfo=zone).astimezone(UTC) for t in (start, end)]
    return TimeWindow(utc[0], utc[1], PHRASE_JOIN.join(t.strip() for t in texts), not soft)


_EVENT_ANCHOR = re.compile(
    r"(?:\b(?:in|on|during|over|at)\s+)?\b(?:the|that)\s+(?P<unit>day|week|weekend|month|year)\s+(?:that\s+|when\s+)?"
    r"(?P<who>I|we)\s+(?P<event>[^?.!,;:]{3,120}?)\s*(?=[?.!,;:]|$)", re.IGNORECASE)


@dataclass(frozen=True)
class EventAnchor:
    """A time named by an event of the owner's life: `unit` day|week|weekend|month|year, `event` the clause as the
    owner wrote it ("moved to Berlin"), `phrase` the query words that named it (to strip before searching)."""

    unit: str
    event: str
    phrase: str


def find_event_anchor(query: str) -> EventAnchor | None:
    """The first "the <unit> (that/when) I/we <event>" in `query` ("what did I buy the week I moved?" → week,
    "moved"), or None. The event clause runs to the end of the sentence (3-120 characters). Read-only."""
    m = _EVENT_ANCHOR.search(query[:2000])
    if m is None:
        return None
    return EventAnchor(m["unit"].lower(), " ".join(m["event"].split()), m[0].strip())


def event_window(anchor: EventAnchor, when: datetime, zone: tzinfo) -> TimeWindow:
    """The owner's calendar `anchor.unit` holding the event's moment `when` (aware): that day, that Monday-Sunday
    week, that Saturday-Sunday weekend (or the one just before, for a weekday), that month or year; strict, in
    aware UTC, `phrase` = the anchor's. Raises ValueError for a naive `when`."""
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError("event_window: `when` must be timezone-aware")
    day = when.astimezone(zone).date()
    if anchor.unit == "weekend":
        saturday = day - timedelta((day.weekday() - 5) % 7)
        start, end = _days(saturday, 2)
    else:
        start, end = _unit_span(anchor.unit, day, 0)
    utc = [t.replace(tzinfo=zone).astimezone(UTC) for t in (start, end)]
    return TimeWindow(utc[0], utc[1], anchor.phrase, True)


def today_window(now: datetime, zone: tzinfo) -> TimeWindow:
    """Today on the owner's calendar: local midnight to the next, in aware UTC, strict (seed 003 `memory_today`
    uses the last 24 h; a calendar day is what "today" means to the owner). Raises ValueError for a naive `now`."""
    window = find_window("today", now, zone)
    if window is None:  # unreachable: "today" always resolves
        raise ValueError("today_window: 'today' did not resolve")
    return window


def within(created_at: str | datetime, window: TimeWindow) -> bool:
    """True when `created_at` (UTC ISO-8601 such as "2026-03-14T09:30:00Z", or a datetime; naive = UTC) lies in
    [window.start, window.end). Raises ValueError for an unparsable string."""
    when = datetime.fromisoformat(created_at) if isinstance(created_at, str) else created_at
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return window.start <= when < window.end


_ISO_DATE = re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b")
_CALENDAR_NAME = re.compile(rf"\b(?:(?:19|20)\d\d|{_MON})\b", re.IGNORECASE)
_RELATIVE_WORDS = frozenset("""the of in on at for during over from since last this past next early mid late around
    roughly circa approximately week weekend ago""".split())


def date_words(phrase: str, alone: bool) -> list[str]:
    """The words of a time phrase that a memory's text may hold as written, to keep in a keyword search: an ISO date
    ("2026-12-15") always, as files and mail write it; when the phrase is the whole query (`alone`: "March 2026",
    "October 13, 2023"), every word of a phrase naming a calendar date, month or year but the relative ones ("in",
    "last", "early"…). [] for a relative phrase ("yesterday", "3 days ago", "last week"). Pure."""
    if alone and _CALENDAR_NAME.search(phrase):
        return [w for w in re.findall(r"[\w-]+", phrase) if w.lower() not in _RELATIVE_WORDS]
    return _ISO_DATE.findall(phrase)


def strip_time_words(query: str, window: TimeWindow | None, keep_dates: bool = True) -> str:
    """The query without the window's phrase (each part once, case-insensitive, with a preposition just before
    it: "on", "in", "for", ...), spaces tidied, so keyword search does not look for "yesterday". With
    `keep_dates` (the default), the words `date_words` keeps stay: a memory that says "2026-12-15" keeps its
    keyword credit for a query holding that date. The query unchanged when `window` is None."""
    if window is None:
        return query
    parts = window.phrase.split(PHRASE_JOIN)
    for part in parts:
        rx = r"(?:\b(?:on|in|at|for|during|over|from|of)\s+)?" + re.escape(part)
        query = re.sub(rx, " ", query, count=1, flags=re.IGNORECASE)
    query = re.sub(r"\s+([?.!,;:])", r"\1", re.sub(r"\s+", " ", query)).strip()
    if not keep_dates:
        return query
    alone = re.search(r"\w", query) is None
    kept = [w for part in parts for w in date_words(part, alone)]
    return " ".join([query, *kept]).strip() if kept else query
