"""The memory: the atomic unit of what the twin knows (seed 000; fields per DESIGN.md "The memory")."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime

from twin.outside_text import strip_controls  # noqa: F401 - memory content's rule, imported from here

KINDS = ("fact", "episode", "preference", "relationship", "document", "insight")
SENSITIVITIES = ("public", "internal", "private", "sensitive")
"""Levels from least to most restricted (seed 003); recall hides levels above its ``max_sensitivity``."""
DEFAULT_SENSITIVITY = "private"
"""Level of a memory holding no secret (seed 003: "otherwise defaults to private")."""
SENSITIVE = "sensitive"
MEMORY_ID_PATTERN = r"^[1-9][0-9]*$"
"""A memory id written as text (a URL path, a resource URI, a command argument): a whole number in plain digits,
no sign, point, exponent, space, underscore or leading zero ("1.0", "+1", "01", "1_000" are not ids)."""
_MEMORY_ID = re.compile(MEMORY_ID_PATTERN)


def memory_id_of(text: object) -> int:
    """The memory id `text` spells (`MEMORY_ID_PATTERN`; an int ≥ 1 is taken as it is). Raises `ValueError`
    saying what an id looks like (each interface shows it as the caller's error naming its field). An id beyond
    SQLite's INTEGER is returned as it is: no memory has it."""
    if isinstance(text, int) and not isinstance(text, bool) and text >= 1:
        return text
    if isinstance(text, str) and _MEMORY_ID.fullmatch(text):
        return int(text)
    raise ValueError(f"a memory id is a whole number ≥ 1 in plain digits, not {str(text)[:40]!r}")


def stricter(*levels: str) -> str:
    """The most restricted of `levels` (names from `SENSITIVITIES`; an unknown name counts as ``private``):
    a memory that replaces, updates, restates or is merged with another is at least as sensitive as it. Raises
    `ValueError` when no level is given."""
    if not levels:
        raise ValueError("stricter() needs at least one sensitivity")
    rank = {name: n for n, name in enumerate(SENSITIVITIES)}
    return max(levels, key=lambda level: rank.get(level, rank[DEFAULT_SENSITIVITY]))


def levels_up_to(max_sensitivity: str) -> tuple[str, ...]:
    """The levels a read that shows at most `max_sensitivity` shows (seed 003's `maxSensitivity`: "private", the
    default of every recall path, shows all but `sensitive`). Raises `ValueError` for a name not in
    `SENSITIVITIES`."""
    if max_sensitivity not in SENSITIVITIES:
        raise ValueError(f"unknown sensitivity {max_sensitivity!r}; use one of {', '.join(SENSITIVITIES)}")
    return SENSITIVITIES[:SENSITIVITIES.index(max_sensitivity) + 1]


STATUSES = ("active", "superseded")

_WHITESPACE = re.compile(r"\s+")
SENSITIVE_HIDDEN = "(sensitive: hidden unless asked for: --sensitive, max_sensitivity=sensitive)"
"""What every output path shows instead of a sensitive memory's text when it was not asked for (`Memory.shown`):
the words of every interface that asks (the CLI's flag, the API's and MCP's argument)."""


def utc_now() -> str:
    """The current time as UTC ISO-8601 with seconds and a `Z` suffix, e.g. `2026-11-30T08:12:03Z`."""
    return format_time(datetime.now(UTC))


def parse_time(value: str) -> datetime:
    """Parse an ISO-8601 time (`Z` or an offset; a naive value is taken as UTC) into an aware UTC datetime.

    Raises `ValueError` for text that is not ISO-8601.
    """
    parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def format_time(moment: datetime) -> str:
    """An aware datetime as UTC ISO-8601 `YYYY-MM-DDTHH:MM:SSZ`, the year always four digits (`0999-05-05T…`:
    glibc's `%Y` writes `999`, which `parse_time` cannot read and which sorts after `2026` where times are compared
    as text, as the store's are). Raises `OverflowError` when the UTC shift leaves year 1."""
    utc = moment.astimezone(UTC)
    return f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}Z"


def normal_time(value: str) -> str:
    """`value` (ISO-8601, `parse_time`'s forms) as the store writes and compares times, UTC `YYYY-MM-DDTHH:MM:SSZ`
    (`format_time`): the one reading of a time an interface is given (the API's `since`/`until`, the CLI's
    `--since`/`--as-of`). Raises `ValueError` for text that is not ISO-8601 or a moment before year 1 in UTC."""
    try:
        return format_time(parse_time(value))
    except (OverflowError, AttributeError) as exc:
        raise ValueError(f"not a time twin can store: {value!r}") from exc


def normalise_content(content: str) -> str:
    """The identity form of a memory's content: Unicode NFKC, case-folded, whitespace collapsed and trimmed.

    DESIGN.md invariant 2 ("idempotent ingest").
    """
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", content).casefold()).strip()


def content_sha256(content: str) -> str:
    """Hex SHA-256 of `normalise_content(content)` encoded as UTF-8 (lone surrogates replaced)."""
    return hashlib.sha256(normalise_content(content).encode("utf-8", "replace")).hexdigest()


@dataclass
class Memory:
    """One memory row, as stored in SQLite and exported as JSON lines.

    `content` is one third-person sentence; times are UTC ISO-8601 strings; `importance` is 0..1;
    `provenance` holds `source_type`, `captured_from` and `confidence` (0..1). `tier` is `warm` or `cold`
    (seed 003's decay); a superseded memory says why in `supersede_reason`; `updated_at` is set when a capture
    updated it in place; `namespace` is the one it belongs to (`twin.namespaces`, seed 003).
    """

    id: int
    being_id: str
    kind: str
    content: str
    source: str
    importance: float
    tags: list[str] = field(default_factory=list)
    created_at: str = ""
    last_accessed: str | None = None
    hits: int = 0
    sensitivity: str = "private"
    provenance: dict = field(default_factory=dict)
    status: str = "active"
    superseded_by: int | None = None
    content_sha256: str = ""
    tier: str = "warm"
    supersede_reason: str | None = None
    updated_at: str | None = None
    namespace: str = "default"

    def to_dict(self) -> dict:
        """Every field, JSON-serialisable (the export line format)."""
        return asdict(self)

    def shown(self, reveal_sensitive: bool, mask: Callable[[str], str] | None = None) -> Memory:
        """The memory as an output path may show it: itself, or, for a `sensitive` one when `reveal_sensitive` is
        False, a copy whose `content` is `SENSITIVE_HIDDEN` (or `mask(content)`: `twin learn` echoes the sentence
        with its secret values masked, `twin.text.sensitivity.redact`) and whose `content_sha256` and
        `supersede_reason` are empty (a hash of a short PIN sentence is as good as the PIN; a reason may quote the
        old value).
        The one rule every interface applies, text and JSON alike (README: "sensitive memories show their text
        only with `--sensitive`"; DESIGN.md invariant 9)."""
        if reveal_sensitive or self.sensitivity != SENSITIVE:
            return self
        return replace(self, content=mask(self.content) if mask else SENSITIVE_HIDDEN, content_sha256="",
                       supersede_reason=None)


@dataclass(frozen=True)
class RankReason:
    """Why a recall result ranks where it does, when a rule of recall moved it (`twin.recall.reasons`: each is made
    by the rule that applied it, in `twin.recall.hybrid`): `code` a stable word (`time_window`, `soft_window`,
    `newest_value`, `older_value`, `newer_statement`, `older_statement`, `superseded_later`, `replaces`), `words`
    for people, `others` the ids of the memories it was compared with (ranked above them, below them, or replacing
    them), `quotes_memory` True when `words` quote text of a memory (a supersession's reason: hidden with a
    sensitive memory's text, as `Memory.shown` hides `supersede_reason`)."""

    code: str
    words: str
    others: tuple[int, ...] = ()
    quotes_memory: bool = False

    def to_dict(self) -> dict:
        """`{code, words, others}` (JSON-ready; `others` a list)."""
        return {"code": self.code, "words": self.words, "others": list(self.others)}


@dataclass
class Recalled:
    """One recall result: the memory and its scores (all 0..1; `score` is the final blended score); `in_window`
    when the query named a strict time window ("last Saturday") and the memory was made inside it; `reasons` what
    moved it from where its score alone put it (`RankReason`, in the order the rules ran; empty when none did)."""

    memory: Memory
    score: float
    keyword: float
    vector: float
    recency: float
    in_window: bool = False
    reasons: tuple[RankReason, ...] = ()

    @property
    def relevance(self) -> float:
        """How well the query itself found this memory, 0..1: the larger of its keyword score and its cosine (not
        its importance or age); the cut of `Recall.recall(min_relevance=…)`."""
        return max(self.keyword, self.vector)

    def to_dict(self) -> dict:
        """The memory's fields plus `score`, `keyword`, `vector`, `recency` and `relevance`, rounded to 4 places,
        `in_window` and `reasons` (`RankReason.to_dict` each)."""
        out = self.memory.to_dict()
        out.update(score=round(self.score, 4), keyword=round(self.keyword, 4),
                   vector=round(self.vector, 4), recency=round(self.recency, 4), relevance=round(self.relevance, 4),
                   in_window=self.in_window, reasons=[r.to_dict() for r in self.reasons])
        return out
