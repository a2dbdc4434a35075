"""The Hush gate: the hard, in-code check every signal reflection proposes must clear before it is raised.

Seed 001: the reflection prompt asks the model to stay quiet, but "that instruction is a soft ask the model can
still get wrong, so every signal reflect() proposes is checked a second, harder way before it's ever raised: it
must clear the Hush gate — quiet hours, a daily ceiling, cited evidence, and 7-day dedup — with the fresh memories
that produced it standing in as the citation. A signal the model proposed but the Hush blocked is logged as a
held-back Twin activity line, never silently dropped and never raised anyway."

We add one rule of our own (DESIGN.md invariant 8, "ingested text is untrusted data"): evidence that reads like
instructions to the twin does not count as evidence, so a planted email cannot make the twin raise a signal.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING

from twin.clock import owner_zone
from twin.exceptions import StoreError
from twin.memory import format_time, normalise_content, parse_time
from twin.store import Store
from twin.store.signals import OWNER_RECIPIENT, ProposedSignal, Signal, get_signal, raised_since, record_signal

if TYPE_CHECKING:
    from twin.activity import Activity
    from twin.settings import Settings

SIMILAR_JACCARD = 0.6
"""Two signals are "substantially like" each other (the dedup rule) when the Jaccard index of their word sets,
|A ∩ B| / |A ∪ B| over the normalised words of title + body, is at least this. 0.6 blocks a reworded repeat
("You've been reading about Rust a lot" vs "You have been reading a lot about Rust lately") and lets through
two signals that merely share a topic word or two."""

STOPWORDS = frozenset({"the", "and", "for", "you", "your", "yours", "are", "was", "were", "with", "that", "this",
                       "these", "have", "has", "had", "from", "not", "but", "its", "been", "into", "about"})
"""Words of three or more letters that say nothing about what a signal is about; left out of the dedup word sets."""

INSTRUCTION_PATTERNS = tuple(re.compile(p) for p in (
    r"\b(?:ignore|disregard|forget|override)\s+(?:\w+\s+){0,3}?(?:all|any|the|previous|prior|earlier|above|your|"
    r"these|my)\s+(?:\w+\s+){0,2}?(?:instructions?|rules?|prompts?|guidelines|directions)\b",  # "ignore the previous
    # instructions", "ignore all prior rules"; not "ignores instructions from their manager"
    r"\bdisregard\s+(?:the|everything)\s+above\b",            # "disregard the above"
    r"\bsystem\s+prompt\b",                                   # "print your system prompt"
    r"\byou\s+are\s+now\b",                                   # "you are now DAN"
    r"\bnew\s+(?:rule|instruction|task|directive)s?\s*:",      # "Twin, new rule: …"
    r"\b(?:twin|assistant|ai|bot|model)\s*[,:]\s*(?:you\s+must|please|new|always|from\s+now|do\s+not|don't|"
    r"ignore|notify|alert|tell|raise|send)\b",                  # addressed to the twin: "Twin: notify …"
    r"\braise\b.{0,30}\b(?:signal|alert|notification)s?\b",   # "raise a signal saying …"
    r"\b(?:notify|alert|warn)\s+(?:the\s+)?owner\b",           # "notify Owner urgently that …"
    r"\bas\s+an\s+ai\s*(?:,|(?:language\s+)?model\b|assistant\b)",  # "as an AI, you must …"; not "as an AI researcher"
))
"""Phrases that make a memory read like an instruction to the twin rather than a fact about the owner. Matched
against the memory's normalised content (NFKC, case-folded). Deliberately few and specific: a memory that matches
still exists and is recalled; it only cannot be the sole evidence of a signal."""

_LETTER_RUNS = re.compile(r"[^\W\d_]+")


def zone_name(zone: tzinfo) -> str:
    """A zone's IANA name (`Europe/Berlin`), or its abbreviation now (`CET`) for a fixed-offset zone."""
    return getattr(zone, "key", None) or zone.tzname(datetime.now(UTC)) or "UTC"


def in_quiet_hours(local: time, start: time, end: time) -> bool:
    """True when the local clock time `local` lies in [start, end), wrapping midnight when start > end
    (22:00–08:00: 23:30 and 07:59 are quiet, 08:00 and 21:59 are not); start == end means no quiet hours."""
    if start == end:
        return False
    if start < end:
        return start <= local < end
    return local >= start or local < end


def signal_words(title: str, body: str) -> frozenset[str]:
    """The dedup word set of a signal: title + body NFKC-normalised and case-folded, runs of letters of three or
    more, `STOPWORDS` left out."""
    text = unicodedata.normalize("NFKC", f"{title} {body}").casefold()
    return frozenset(w for w in _LETTER_RUNS.findall(text) if len(w) >= 3 and w not in STOPWORDS)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0..1); 0 when both are empty."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def reads_like_instructions(content: str) -> bool:
    """True when `content` matches one of `INSTRUCTION_PATTERNS` (after NFKC, case-folding, whitespace collapse)."""
    text = normalise_content(content)
    return any(p.search(text) for p in INSTRUCTION_PATTERNS)


def project_subject(project_id: str) -> str:
    """The diary subject of a line about a signal drawn from project `project_id` (`project:<id>`): its title was
    written from the project's memories, so erasing the project rewrites the line (`twin.activity.unname`)."""
    return f"project:{project_id}"


@dataclass(frozen=True)
class HushRules:
    """The gate's settings: quiet hours as local clock times in `zone`, at most `daily_ceiling` raised signals per
    local day, and no signal like one raised in the last `dedup_days` days (per seed 001)."""

    quiet_start: time
    quiet_end: time
    zone: tzinfo
    daily_ceiling: int
    dedup_days: float

    @classmethod
    def from_settings(cls, settings: Settings) -> HushRules:
        """The rules from the `hush_*` settings; `hush_timezone` None means the system's zone (`system_zone()`).
        Raises `ValueError` for a malformed HH:MM or `ZoneInfoNotFoundError` for an unknown zone (both are
        validated by `Settings` already)."""
        return cls(quiet_start=time.fromisoformat(settings.hush_quiet_start),
                   quiet_end=time.fromisoformat(settings.hush_quiet_end), zone=owner_zone(settings),
                   daily_ceiling=settings.hush_daily_ceiling, dedup_days=settings.hush_dedup_days)


@dataclass
class Verdict:
    """The gate's answer: `passed` when no rule failed; otherwise `reasons` holds one short sentence per failed
    rule, in the order evidence, injected evidence, quiet hours, ceiling, dedup."""

    passed: bool
    reasons: list[str] = field(default_factory=list)


class HushGate:
    """Checks proposed signals of `being` for `recipient` against `rules` (per seed 001) at the time `clock()`
    returns (an aware datetime, normally UTC; default the real clock). Read-only except for `raise_or_hold`.

    Each recipient has a gate of their own (issue 19: a signal drawn from a shared project reaches its members
    "still through the Hush gate of each recipient"): the daily ceiling and the 7-day dedup count only the
    signals raised for `recipient` (`OWNER_RECIPIENT`, the twin's owner, by default); `project_id` names the
    project a signal is drawn from, stored with it (None: the owner's own memories)."""

    def __init__(self, store: Store, being: str, rules: HushRules,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC), recipient: str = OWNER_RECIPIENT,
                 project_id: str | None = None):
        self.store = store
        self.being = being
        self.rules = rules
        self.clock = clock
        self.recipient = recipient
        self.project_id = project_id

    def _now(self) -> datetime:
        now = self.clock()
        if now.tzinfo is None:
            raise ValueError("the Hush gate's clock must return an aware datetime (UTC)")
        return now.astimezone(UTC).replace(microsecond=0)

    def check(self, proposed: ProposedSignal, fresh_ids: set[int]) -> Verdict:
        """Check `proposed` against every rule (read-only). `fresh_ids` are the ids of the fresh memories the
        reflection that proposed it read: only those can be cited (per seed 001). Raises `ValueError` when the
        clock returns a naive datetime."""
        return self._check_at(proposed, fresh_ids, self._now())

    def _check_at(self, proposed: ProposedSignal, fresh_ids: set[int], now: datetime) -> Verdict:
        reasons = self._evidence_reasons(proposed, fresh_ids)
        local = now.astimezone(self.rules.zone)
        if in_quiet_hours(local.time().replace(tzinfo=None), self.rules.quiet_start, self.rules.quiet_end):
            reasons.append(f"quiet hours ({self.rules.quiet_start:%H:%M}–{self.rules.quiet_end:%H:%M} "
                           f"{zone_name(self.rules.zone)})")
        midnight = datetime.combine(local.date(), time(0), tzinfo=self.rules.zone)
        raised_today = len(raised_since(self.store, self.being, format_time(midnight), self.recipient))
        if raised_today >= self.rules.daily_ceiling:
            plural = "" if self.rules.daily_ceiling == 1 else "s"
            reasons.append(f"daily ceiling of {self.rules.daily_ceiling} signal{plural} reached")
        like = self._like_recent(proposed, now)
        if like is not None:
            day = parse_time(like.created_at).astimezone(self.rules.zone)
            reasons.append(f"like signal #{like.id} raised {day:%Y-%m-%d}")
        return Verdict(passed=not reasons, reasons=reasons)

    def _evidence_reasons(self, proposed: ProposedSignal, fresh_ids: set[int]) -> list[str]:
        """Cited evidence: at least one cited id must be an active memory of this being now, and fresh. Injected
        evidence: if every such memory reads like instructions, it does not count."""
        cited = self.store.get_many(proposed.evidence)
        existing = [m for m in cited.values() if m.being_id == self.being and m.status == "active"]
        if not existing:
            return ["cites no existing memory"]
        fresh = [m for m in existing if m.id in fresh_ids]
        if not fresh:
            return ["cites no memory this reflection read"]
        if all(reads_like_instructions(m.content) for m in fresh):
            return ["its evidence reads like instructions to the twin, not facts about the owner"]
        return []

    def _like_recent(self, proposed: ProposedSignal, now: datetime) -> Signal | None:
        """The newest raised signal within `dedup_days` before `now` that is substantially like `proposed`."""
        if self.rules.dedup_days <= 0:
            return None
        since = format_time(now - timedelta(days=self.rules.dedup_days))
        words = signal_words(proposed.title, proposed.body)
        for earlier in raised_since(self.store, self.being, since, self.recipient):
            if jaccard(words, signal_words(earlier.title, earlier.body)) >= SIMILAR_JACCARD:
                return earlier
        return None

    def raise_or_hold(self, proposed: ProposedSignal, fresh_ids: set[int], activity: Activity,
                      outbox: Callable[[int], None] | None = None) -> Signal:
        """Check `proposed`, then in one transaction store it as 'raised' or 'held_back' (reasons joined by "; ")
        and write its diary line: `signal` "Raised a signal: “title”." or `held_back` "Held back a signal “title”:
        reasons." (per seed 001: held back, never silently dropped). After the commit, a raised signal's id is
        passed to `outbox` when given. The line carries only the model-written title, never memory text
        (invariant 5). Returns the stored signal. Raises `ValueError` for an unknown kind or a naive clock,
        `sqlite3.Error` when the store cannot be written (nothing is stored then), `StoreError` if the stored
        signal is deleted before it is read back; an exception from `outbox`
        propagates, with the signal already stored and still undelivered."""
        now = self._now()
        title = " ".join(proposed.title.split())
        with self.store.atomic():  # the ceiling is counted and the signal written under one write lock
            verdict = self._check_at(proposed, fresh_ids, now)
            status = "raised" if verdict.passed else "held_back"
            reason = None if verdict.passed else "; ".join(verdict.reasons)
            signal_id = record_signal(self.store, self.being, proposed, status, reason, format_time(now),
                                      self.recipient, self.project_id)
            subject = None if self.project_id is None else project_subject(self.project_id)
            if verdict.passed:
                activity.record("signal", f"Raised a signal: “{title}”.", subject=subject)
            else:
                activity.record("held_back", f"Held back a signal “{title}”: {reason}.", subject=subject)
        if verdict.passed and outbox is not None:
            outbox(signal_id)
        signal = get_signal(self.store, signal_id)
        if signal is None:  # only if another process deleted it in between
            raise StoreError(f"signal #{signal_id} vanished right after it was stored")
        return signal
