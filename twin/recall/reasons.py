"""The words of the reasons recall gives for a result's place (`twin.memory.RankReason`), one function per rule.

Each rule of `twin.recall.hybrid` that moves a result (a time window the query names, the newest value of a slot
lifted above older ones, a newer statement lifted above an older one that says nearly the same, a supersession)
calls the function here when it applies, with what it decided: the reason is made where the rule is applied and
never worked out again by an interface (the page, `twin recall --why`, HTTP and MCP show these words as given).
Pure: no I/O. Memory ids are written `#123`; times are the owner's calendar dates with the zone named.
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo

from twin.memory import RankReason
from twin.recall.time_window import TimeWindow

TIME_WINDOW, SOFT_WINDOW = "time_window", "soft_window"
NEWEST_VALUE, OLDER_VALUE = "newest_value", "older_value"
NEWER_STATEMENT, OLDER_STATEMENT = "newer_statement", "older_statement"
SUPERSEDED_LATER, REPLACES = "superseded_later", "replaces"
NEXT_TO_TURN = "next_to_turn"
CODES = (TIME_WINDOW, SOFT_WINDOW, NEWEST_VALUE, OLDER_VALUE, NEWER_STATEMENT, OLDER_STATEMENT, SUPERSEDED_LATER,
         REPLACES, NEXT_TO_TURN)
"""Every reason code, stable (clients may switch on them)."""
QUOTE_CHARS = 120
"""A supersession reason quoted in `replaces` is cut to this many characters."""


def zone_name(zone: tzinfo) -> str:
    """The name of `zone` as people read it: its IANA key ("Europe/Berlin"), else `str(zone)` ("UTC")."""
    return getattr(zone, "key", None) or str(zone)


def window_span(window: TimeWindow, zone: tzinfo) -> str:
    """`window` on the owner's calendar in `zone`: "2026-11-14" for one whole day, "2026-11-09 to 2026-11-15" for
    whole days, "2026-11-14 17:00 to 2026-11-15 00:00" for parts of days (the end is exclusive, as in the window)."""
    start, end = window.start.astimezone(zone), window.end.astimezone(zone)
    if start.time() == end.time() == datetime.min.time():
        last = (end - timedelta(days=1)).date()
        return start.date().isoformat() if last <= start.date() else f"{start.date()} to {last}"
    return f"{start:%Y-%m-%d %H:%M} to {end:%Y-%m-%d %H:%M}"


def _ids(ids: tuple[int, ...]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def in_window(window: TimeWindow, zone: tzinfo, lift: float) -> RankReason:
    """A result made inside the window the query names: for a strict window (`TimeWindow.strict`: "last
    Saturday") its age not counted (recency is 1 for every result), lifted × `lift` over memories of other times
    (1: it only got in, `time_filter="strict"`); for a soft one ("recently") lifted × `lift`."""
    named = f"'{window.phrase}', " if window.phrase else ""
    where = f"Made in the time your query names ({named}{window_span(window, zone)}, {zone_name(zone)})"
    lifted = f", lifted ×{lift:g} above memories of other times" if lift != 1.0 else ""
    if window.strict:
        return RankReason(TIME_WINDOW, f"{where}: its age not counted{lifted}")
    return RankReason(SOFT_WINDOW, f"{where}{lifted}")


def slot_label(slot: tuple[str, str]) -> str:
    """A slot `(subject, attribute)` as people read it: "Owner / employer", "Sister mira / home city"."""
    subject, attribute = slot
    return f"{subject[:1].upper()}{subject[1:]} / {attribute}"


def newest_value(slot: tuple[str, str], older: tuple[int, ...]) -> RankReason:
    """The newest value of `slot` among the results, lifted just above the `older` values (ids) that scored above
    it (`Recall._newest_of_slot`)."""
    n = len(older)
    return RankReason(NEWEST_VALUE, f"Newest value of '{slot_label(slot)}': ranked above {n} older "
                                    f"value{'' if n == 1 else 's'} ({_ids(older)})", older)


def older_value(slot: tuple[str, str], newest: int) -> RankReason:
    """An older value of `slot`, passed by the newest one (`newest`, an id) that was lifted above it."""
    return RankReason(OLDER_VALUE, f"An older value of '{slot_label(slot)}' (newer: #{newest}, ranked above it)",
                      (newest,))


def newer_statement(older: tuple[int, ...]) -> RankReason:
    """A result lifted just above the `older` results (ids) that say nearly the same of the same subject
    (`Recall._newer_first`)."""
    return RankReason(NEWER_STATEMENT, f"A newer statement of what {_ids(older)} say{'s' if len(older) == 1 else ''}:"
                                       " ranked above", older)


def older_statement(newer: tuple[int, ...]) -> RankReason:
    """A result passed by the `newer` ones (ids) that say nearly the same of the same subject."""
    return RankReason(OLDER_STATEMENT, f"An older statement: {_ids(newer)} say{'s' if len(newer) == 1 else ''} nearly "
                                       "the same, newer, ranked above it", newer)


def next_to_turn(neighbour: int, share: float) -> RankReason:
    """A result lifted by ×`share` of the score of `neighbour` (an id), the turn just before or after it in the
    same conversation, which the query matched too (`Recall._with_turns`)."""
    return RankReason(NEXT_TO_TURN, f"Learned right before or after #{neighbour} from the same source (a chat's "
                                    f"next turn), which matches your query too: lifted by {share:g} × its score",
                      (neighbour,))


def superseded_later(by: int | None, at: str | None, as_of: str) -> RankReason:
    """A result current at the moment asked about (`as_of`, UTC ISO-8601: a replay) that was superseded later, by
    `by` at `at`: found as it was then."""
    when = f" at {at}" if at else ""
    successor = f"#{by}" if by is not None else "a newer memory"
    return RankReason(SUPERSEDED_LATER, f"Superseded by {successor}{when}, after {as_of}: current then",
                      () if by is None else (by,))


def replaces(replaced: list[tuple[int, str | None]]) -> RankReason:
    """A result that superseded the memories `replaced` (`(id, their supersede_reason or None)`): they are no longer
    searched, so it answers in their place. A reason quotes memory text (the values it names), cut to
    `QUOTE_CHARS`."""
    ids = tuple(i for i, _ in replaced)
    said = "; ".join(why if len(why) <= QUOTE_CHARS else why[:QUOTE_CHARS - 1] + "…" for _, why in replaced if why)
    return RankReason(REPLACES, f"Replaces {_ids(ids)}{f' ({said})' if said else ''}: superseded, no longer searched",
                      ids, quotes_memory=bool(said))
