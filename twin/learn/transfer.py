"""Export and import of memories as JSON lines, losslessly, for backups and migrations.

One line per memory with every field of `Memory` (ids, times as UTC ISO-8601, tags, provenance,
sensitivity, status, tier, what superseded it and why) and its outgoing graph edges (`edges: [[to id, kind,
strength], ...]`). Import goes through the dedup path: a memory whose normalised content is already known is
left as it is (not duplicated, and not reinforced either: restoring a backup twice must not inflate
importance); new memories are embedded by the usual batched flush and get their nearest-neighbour edges like
any new memory. A file's sensitivity is never trusted downwards: content holding a secret is `sensitive`
whatever the line says (`twin.text.sensitivity`). What a line may hold, and what makes it a bad line that is
reported and skipped while the rest is imported: `twin.learn.import_lines`.

An export of the whole twin (`twin.operations.transfer`) puts lines of another sort before the memories: records,
objects with a `record` field (people, projects, bound sources). This module reads every line and hands each record
to the `Records` it is given, with the stored namespaces (`person:<id>:<name>`, `project:<id>`) of the memories;
a line without `record` is a memory, as in every export before records existed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Protocol, TextIO

from twin.activity import Activity
from twin.learn.import_lines import BadLine, checked_row, line_notes, read_line, shown
from twin.memory import content_sha256, utc_now
from twin.namespaces import DEFAULT_NAMESPACE, checked
from twin.outside_text import json_text, strip_controls
from twin.store import Store
from twin.store.edges import edges_of_being, insert_edges
from twin.store.ids import INTEGER_MAX, Namespaces


class Records(Protocol):
    """What imports the record lines of a whole-twin export and maps the stored namespaces its memories name
    (`twin.operations.transfer.TwinRecords`: people and projects are above this layer)."""

    def read(self, raw: dict, number: int) -> None:
        """Import one record line's object (`raw` has a `record` field; `number`: its line in the file, 1-based, for
        the problems of later lines that name it). Raises `BadLine` (never with a memory's text); `import_memories`
        runs it in a savepoint, so a bad record keeps nothing of itself."""

    def namespace(self, name: str) -> str:
        """The namespace here of a memory line's stored `name` (`person:<id>:<name>`, `project:<id>`). Raises
        `BadLine` for a person or project the import does not know."""

    def summary(self) -> str:
        """What the records imported, for the diary line ("1 people, 1 projects and 0 bound sources (0 already
        known)")."""


def export_memories(store: Store, being: str, out: TextIO, namespaces: Namespaces = None) -> int:
    """Write every memory of `being` (all statuses) in `namespaces` (None: every namespace) in the order they were
    stored (by id: an import into a fresh data dir gives each its own id only while they rise, and an export in
    `created_at` order put a memory imported with an old date before older ids, so 13,095 of 13,097 came back under
    new ids: a breaker run), one JSON object per line with its `namespace` (`json_text`: UTF-8, terminal controls
    and lone surrogates as `\\uXXXX` escapes, so the file is safe on a terminal and always encodable). Returns the
    count."""
    edges: dict[int, list[list]] = {}
    for src, dst, kind, strength in edges_of_being(store, being):
        edges.setdefault(src, []).append([dst, kind, strength])
    n = 0
    for memory in sorted(store.list_memories(being, limit=10**12, include_superseded=True, namespaces=namespaces),
                         key=lambda m: m.id):
        out.write(json_text({**memory.to_dict(), "edges": edges.get(memory.id, [])}) + "\n")
        n += 1
    return n


def import_memories(store: Store, activity: Activity | None, being: str, lines: Iterable[str | bytes],
                    namespace: str = DEFAULT_NAMESPACE, records: Records | None = None) -> dict:
    """Import JSON-lines memories into `being`, each into the namespace its line names (`namespace` for a line that
    names none: an export made before namespaces; `twin.namespaces.checked`, a bad name raises `NamespaceError`).
    Returns `{created, known, skipped, problems, notes, ids, renumbered}` where `ids` maps each line number to the
    memory id it became (new, or the one already known), `notes` lists "line N: note" for lines imported otherwise
    than they say (`import_lines.line_notes`) and `renumbered` counts the new memories that could not keep their
    line's id (`Store.fresh_memory_id`: it is, or was, used here); the others keep it.

    A line with a `record` field goes to `records.read` (a bad line without `records`), and a memory's stored
    namespace of a person or a project to `records.namespace` (a bad line without `records`); records come before
    the memories that need them, as the export writes them.

    Every line is read and checked on its own (`twin.learn.import_lines`: the rules per field): a bad line is skipped
    and listed in `problems` as "line N: why" (never its memory's text), every good line is imported, so one
    bad line costs nothing else. Pass a file through `import_lines.bounded_lines` so a huge line is bounded.
    `superseded_by` (and its reason) is kept only when it refers to another memory imported in the same run; a
    superseded memory whose successor is not there is imported as active (else it would stay hidden for ever)
    and listed in `problems`. Edges are restored when both ends were imported in the run; every new memory is
    also marked for its nearest-neighbour edges. Raises `sqlite3.Error` only when the store itself fails (then
    nothing is imported: one transaction).
    """
    checked(namespace)
    report = {"created": 0, "known": 0, "skipped": 0, "problems": [], "notes": [], "ids": {}}
    old_to_new: dict[int, int] = {}
    renumbered = 0  # new memories whose export id is taken (or was, by a memory since forgotten) here
    superseded: list[tuple[int, object, object, int]] = []
    edges: list[tuple[int, object]] = []
    with store.atomic():
        for number, line in enumerate(lines, 1):
            try:
                raw = read_line(line, number)
                if raw is None:
                    continue
                if "record" in raw:
                    if records is None:
                        raise BadLine(f"record {shown(raw['record'])}: only an import of the whole twin reads "
                                      "records")
                    with store.atomic():  # a savepoint: a bad record keeps nothing of itself
                        records.read(raw, number)
                    continue
                mid, created, notes = _import_row(store, being, raw, namespace, records)
            except BadLine as exc:
                report["skipped"] += 1
                report["problems"].append(f"line {number}: {exc}")
                continue
            report["notes"] += [f"line {number}: {note}" for note in notes]
            report["created" if created else "known"] += 1
            if created and raw.get("status") == "superseded":
                superseded.append((mid, raw.get("superseded_by"), raw.get("supersede_reason"), number))
            if created and isinstance(raw.get("edges"), list):
                edges.append((mid, raw["edges"]))
            report["ids"][number] = mid
            if _is_id(raw.get("id")):
                old_to_new[raw["id"]] = mid
                renumbered += created and mid != raw["id"]
            elif created and "id" in raw:
                report["notes"].append(f"line {number}: id {shown(raw['id'])} is not a memory id; imported as "
                                       f"#{mid}")
        for mid, old_target, reason, number in superseded:
            target = old_to_new.get(old_target) if _is_id(old_target) else None
            if target is not None and len({f.namespace for f in store.ranking_fields([mid, target]).values()}) > 1:
                target = None  # a supersession never crosses namespaces (seed 003)
            if target is None or target == mid or _leads_back(store, target, mid):
                store.revive(mid)  # inserted superseded, with no successor yet
                why = ("itself" if target == mid else
                       f"{shown(old_target)}, which is superseded by it in turn (a cycle hides both)" if target
                       else f"{shown(old_target)}, which is not in the import")
                report["problems"].append(f"line {number}: superseded by {why}; imported as active")
                continue
            why = " ".join(strip_controls(reason).split())[:300] if isinstance(reason, str) else None
            store.supersede(mid, target, why or None)
        if left := _restore_edges(store, edges, old_to_new):
            report["notes"].append(f"{left} exported graph edge(s) not restored (malformed, or to a memory not in "
                                   "the import); the embedding worker links the memories again")
    report["renumbered"] = renumbered
    if activity is not None:
        also = f" and {records.summary()}" if records is not None else ""
        activity.record("learned", f"Imported {report['created']} memories ({report['known']} already known, "
                                   f"{report['skipped']} bad lines skipped){also}.")
    return report


def _is_id(value: object) -> bool:
    """A memory id as an export writes one: a whole number 1..2^63-1 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= INTEGER_MAX


def _import_row(store: Store, being: str, raw: dict, namespace: str,
                records: Records | None) -> tuple[int, bool, list[str]]:
    """`(memory id, True when new, notes)` for one line's object: the memory already known by its content, else
    inserted (with its edge marker); `notes` says what it became that the line did not say (`line_notes`; none for
    a memory already known). Raises `BadLine` for a bad field, or a row the store's constraints refuse."""
    row = checked_row(raw, namespace, None if records is None else records.namespace)
    existing = store.find_by_sha(being, content_sha256(row["content"]), row["namespace"])
    if existing is not None:
        return existing.id, False, []
    keep = raw.get("id") if store.fresh_memory_id(raw.get("id")) else None  # a fresh twin keeps the export's ids
    try:
        mid = store.insert_memory(being, **row, memory_id=keep)
    except sqlite3.IntegrityError as exc:
        raise BadLine(f"refused by the store ({exc})") from exc
    store.add_edge_markers([mid], row["created_at"])
    return mid, True, line_notes(raw, row, being)


def _leads_back(store: Store, start: int, mid: int) -> bool:
    """True when following `superseded_by` from `start` reaches `mid` (superseding `mid` by `start` would close a
    cycle, and every memory of a cycle is hidden from recall for good: a breaker run imported one)."""
    seen: set[int] = set()
    current: int | None = start
    while current is not None and current not in seen:
        if current == mid:
            return True
        seen.add(current)
        current = dict(store.successors([current])).get(current)
    return False


def _restore_edges(store: Store, edges: list[tuple[int, object]], old_to_new: dict[int, int]) -> int:
    """Insert the exported edges `(new src id, [[old dst id, kind, strength], ...])` whose other end was imported
    too. Returns how many were not restored: malformed (a kind or a strength out of range, not a list of three), to
    a memory not in the import, or to itself; they only lose an edge the embedding worker finds again, and the
    import says how many (a breaker run saw them dropped without a word)."""
    rows, left = [], 0
    for src, items in edges:
        for item in items:
            if not (isinstance(item, list) and len(item) == 3 and _is_id(item[0]) and item[0] in old_to_new
                    and item[1] in ("co_occurs", "co_inferred") and isinstance(item[2], (int, float))
                    and not isinstance(item[2], bool)):
                left += 1
                continue
            dst = old_to_new[item[0]]
            if dst != src and 0 <= float(item[2]) <= 1:
                rows.append((src, dst, item[1], float(item[2]), utc_now()))
            else:
                left += 1
    insert_edges(store, rows)
    return left
