"""`twin import --capture`: a history from another tool replayed through capture, as live learning would have
learned it (issue 15): each fact at its own `created_at`, oldest first, so a later fact supersedes or updates an
earlier one, exact duplicates reinforce, and the worthiness gate rejects filler (`twin.learn.capture`). The plain
`twin import` (`twin.learn.transfer`) restores a twin export as it was, without capture.

What a file may hold: JSON lines, or one JSON document (an array, or an object holding its array under `results`
or `memories`, as mem0's `get_all` answers), each item an object in one of these shapes:

- a twin export line (`twin export`): `content`, `created_at`, `kind`, `source`, `sensitivity`, `namespace`; the
  export's records of people, projects and bound sources (`record`) are left out, with a note;
- a dated fact: `{content | text | memory, created_at, kind?, source?}`;
- mem0's memory object (its API reference: `id`, `memory`, `hash`, `metadata`, `user_id`, `created_at`,
  `updated_at`; ISO-8601 times with an offset): `memory` is the text;
- ChatGPT's saved memories (the `memory.json` of its data export as third parties describe it; OpenAI publishes no
  schema): `content`, `enabled` and a time (`created_at`/`create_time`, ISO-8601 or seconds since 1970); a memory
  switched off (`enabled: false`) is left out, with a note.

The text is taken as written (a memory sentence, not a conversation: no extraction), cleaned of terminal controls;
times follow `import_lines.time_field` (a missing time is the moment of the import, with a note); `kind` one of
`twin.memory.KINDS` (default fact). A bad item is counted and named by its line (or item) number with why, never its
text, and nothing else is lost.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from twin.activity import Activity
from twin.learn.capture import capture
from twin.learn.import_lines import MAX_CONTENT_CHARS, BadLine, json_type, read_line, shown, time_field
from twin.memory import KINDS, SENSITIVE, stricter, utc_now
from twin.namespaces import DEFAULT_NAMESPACE, NamespaceError, checked
from twin.outside_text import escape_controls, strip_controls
from twin.store import Store
from twin.text.extractor import Candidate

TEXT_FIELDS = ("content", "text", "memory")
"""Where an item's text may be, first found wins (twin and dated facts: `content`/`text`; mem0: `memory`)."""
TIME_KEYS = ("created_at", "create_time", "createdAt", "timestamp")
"""Where an item's creation time may be (ChatGPT's export uses `create_time` in seconds elsewhere in its files)."""
LIST_KEYS = ("results", "memories")
"""Keys under which a one-document file holds its items (mem0's `get_all` answers `{"results": [...]}`)."""
IMPORTANCE = 0.4
"""Importance of a captured item that gives none (the store's default)."""


@dataclass
class CaptureImport:
    """What `capture_import` did: counts per capture path (`created`, `deduplicated`, `updated`, `superseded`:
    memories hidden by a later fact, `rejected` by the gate), `skipped` bad items with `problems` ("line 4: why"),
    `notes` for items imported otherwise than they say, and `ids` (line or item number → memory id)."""

    created: int = 0
    deduplicated: int = 0
    updated: int = 0
    superseded: int = 0
    rejected: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ids: dict[int, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Every field, JSON-serialisable."""
        return dict(vars(self))


@dataclass(frozen=True)
class Fact:
    """One good item: its `number` (line or item), `content`, `created_at` (UTC ISO-8601), `kind`, `source`,
    `namespace`, and whether it is `sensitive` (a twin export said so)."""

    number: int
    content: str
    created_at: str
    kind: str
    source: str
    namespace: str
    sensitive: bool


def read_items(lines: Iterable[bytes | str]) -> tuple[list[tuple[int, object]], str]:
    """`([(number, parsed item or the BadLine it raised)], "line" | "item")`: JSON lines, or, when the first
    non-blank line is not a whole JSON object, the file as one JSON document (`LIST_KEYS`), numbered by item."""
    lines = list(lines)
    out: list[tuple[int, object]] = []
    for number, line in enumerate(lines, 1):
        try:
            raw = read_line(line, number)
        except BadLine as exc:
            raw = exc
        if raw is None:
            continue
        if not out and (isinstance(raw, BadLine) or (not any(k in raw for k in TEXT_FIELDS)
                                                         and any(isinstance(raw.get(k), list) for k in LIST_KEYS))):
            document = _one_document(lines)
            if document is not None:
                return document, "item"
        out.append((number, raw))
    return out, "line"


def _one_document(lines: list[bytes | str]) -> list[tuple[int, object]] | None:
    """The items of a file that is one JSON array or object (`LIST_KEYS`), or None when it is not one."""
    text = b"".join(x if isinstance(x, bytes) else x.encode("utf-8") for x in lines).decode("utf-8", "replace")
    try:
        whole = json.loads(text.removeprefix("\ufeff"))
    except (ValueError, RecursionError):
        return None
    if isinstance(whole, dict):
        whole = next((whole[k] for k in LIST_KEYS if isinstance(whole.get(k), list)), None)
    if not isinstance(whole, list):
        return None
    return [(n, item if isinstance(item, dict) else BadLine(f"not a JSON object but {json_type(item)}"))
            for n, item in enumerate(whole, 1)]


def fact_of(raw: dict, number: int, namespace: str, notes: list[str], unit: str) -> Fact | None:
    """The `Fact` of one item, or None for a ChatGPT memory switched off (noted). Raises `BadLine` naming the bad
    field."""
    if "record" in raw:
        notes.append(f"{unit} {number}: a record of a whole-twin export (a person, a project, a bound source), not a "
                     "memory; not captured (`twin import` without --capture restores it)")
        return None
    if raw.get("enabled") is False:
        notes.append(f"{unit} {number}: switched off in its source (enabled: false); not imported")
        return None
    text = next((raw[k] for k in TEXT_FIELDS if k in raw), None)
    if not isinstance(text, str) or not strip_controls(text).strip():
        raise BadLine(f"no text: one of {', '.join(TEXT_FIELDS)} must be a non-empty string")
    content = " ".join(strip_controls(text).split())
    if len(content) > MAX_CONTENT_CHARS:
        raise BadLine(f"the text is longer than {MAX_CONTENT_CHARS} characters")
    created = next((time_field(raw, k) for k in TIME_KEYS if raw.get(k) is not None), None)
    if created is None:
        created = utc_now()
        notes.append(f"{unit} {number}: no created_at; captured as of now")
    kind = raw.get("kind") if raw.get("kind") is not None else "fact"
    if kind not in KINDS:
        raise BadLine(f"kind {shown(kind)} is not one of {KINDS}")
    source = raw.get("source")
    if source is not None and not isinstance(source, str):
        raise BadLine(f"source must be a string, not {json_type(source)}")
    try:
        space = namespace if raw.get("namespace") is None else checked(raw["namespace"])
    except NamespaceError as exc:
        raise BadLine(f"namespace {shown(raw['namespace'])} is not a namespace name") from exc
    return Fact(number, content, created, kind, escape_controls(source) if source else "import", space,
                raw.get("sensitivity") == SENSITIVE or raw.get("sensitive") is True)


def capture_import(store: Store, activity: Activity | None, being: str, lines: Iterable[bytes | str],
                   namespace: str = DEFAULT_NAMESPACE) -> CaptureImport:
    """Capture every good item of `lines` (module docstring) for `being`, in `created_at` order (ties in file
    order), each at its own time, into the namespace it names or else `namespace` (`NamespaceError` for a bad
    one). One transaction: a store failure (`sqlite3.Error`) imports nothing; a bad item costs only itself. One
    diary line with the counts, never text. Pass a file through `import_lines.bounded_lines`."""
    checked(namespace)
    report = CaptureImport()
    items, unit = read_items(lines)
    facts: list[Fact] = []
    for number, raw in items:
        try:
            if isinstance(raw, BadLine):
                raise raw
            fact = fact_of(raw, number, namespace, report.notes, unit)
        except BadLine as exc:
            report.skipped += 1
            report.problems.append(f"{unit} {number}: {exc}")
            continue
        if fact is not None:
            facts.append(fact)
    facts.sort(key=lambda f: (f.created_at, f.number))
    with store.atomic():
        for fact in facts:
            _capture_one(store, being, fact, report, unit)
    if activity is not None:
        activity.record("learned", f"Captured an import: {report.created} new, {report.deduplicated} already known,"
                                   f" {report.updated} updated, {report.superseded} superseded, {report.rejected} "
                                   f"rejected, {report.skipped} bad {unit}s skipped.")
    return report


def _capture_one(store: Store, being: str, fact: Fact, report: CaptureImport, unit: str) -> None:
    """One fact through `capture` at its own time, tallied in `report`. A memory already in the store that is
    newer than the fact and that capture would hide by it stays current instead: the fact is superseded by the
    newest such memory (live learning would have learned them in that order)."""
    candidate = Candidate(fact.kind, fact.content, IMPORTANCE, (), sensitive=fact.sensitive)
    provenance = {"source_type": fact.source.split(":", 1)[0], "captured_from": f"import {fact.number}",
                  "confidence": 1.0}
    outcome = capture(store, being, candidate, fact.source, fact.created_at, provenance, namespace=fact.namespace)
    if outcome.rejected:
        report.rejected += 1
        report.notes.append(f"{unit} {fact.number}: not stored: {outcome.rejected}")
        return
    report.ids[fact.number] = outcome.id
    hidden = _keep_newer_current(store, outcome.id, fact, outcome.supersessions)
    report.superseded += len(outcome.superseded) - len(hidden) + (1 if hidden else 0)
    if outcome.deduplicated:
        report.deduplicated += 1
    elif outcome.updated:
        report.updated += 1
    else:
        report.created += 1


def _keep_newer_current(store: Store, new_id: int, fact: Fact, supersessions: list) -> list[int]:
    """Undo the supersessions of `supersessions` (capture's, by `new_id`) whose hidden memory was made after
    `fact`: each is current again, and `new_id` is superseded by the newest of them, the stricter sensitivity of
    the two on that one. Returns the ids made current again."""
    made = {m.id: m.created_at for m in store.get_many(s.id for s in supersessions).values()}
    newer = [s.id for s in supersessions if made.get(s.id, "") > fact.created_at]
    if not newer:
        return []
    for mid in newer:
        store.revive(mid)
    head = max(newer, key=lambda mid: (made[mid], mid))
    store.supersede(new_id, head, f"imported after #{head} but older: #{head} is the newer statement")
    store.set_sensitivity(head, stricter(*store.sensitivities([head, new_id])))
    return newer
