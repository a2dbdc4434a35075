"""Export and import of the whole twin (`twin export`, `twin import`; issue 19): the people the owner added, the
projects with their members, active pointers and bound sources, then every memory of every scope, as JSON lines
that a fresh data dir imports to the same twin. The memories' lines and their rules are
`twin.learn.transfer`'s; this module writes and reads the lines before them, one record each, in this order:

- `{"record": "person", "id", "name", "added_at"}`: a person's name and id, never a token (twin keeps only its
  digest) nor a Telegram pairing. Imported, a person is matched by name (any case) to a person of this twin, never
  to one another record of the file brought in or matched (two people of one file never merge: a bad line); one
  not here is added, with their id when it is free, and reaches nothing until the owner gives them a new token
  (`people.issue_token`, `twin people token NAME`): the report lists them under `tokens_needed`.
- `{"record": "project", "id", "name", "owner_id", "created_at", "members": [{"person_id", "added_at"}, ...],
  "active_for": [person id, ...]}`: a project as `twin.store.projects` keeps it. Matched by id: one here of that
  id and the same name (any case) and owner is the same project (the members it lacks are added); another name or
  owner is a bad line, as a name taken here by another id is. An active pointer is set only for a member who has
  none here.
- `{"record": "binding", "kind", "value", "project_id", "added_at"}`: a source bound to a project
  (`twin.store.project_sources`; the value checked by `project_sources.checked_source`, a folder need not exist
  yet). One bound here to another project is a bad line.

Person ids in a record and in a memory's namespace (`person:<id>:<name>`) are the exporting twin's: they are mapped
to the person's id here. A memory in the scope of a person or project that no earlier record of the file brought in
and that is not here either, or whose record was a bad line, is a bad line too. A bad record keeps nothing of
itself (a savepoint) and is reported "line N: why" as a bad memory line is; every other line is imported.

In one file a person id and a project id have one record each (`TwinRecords._claim`): a second record of the id is
a bad line. One the same as the first is only that; one that says otherwise makes the file contradict itself about
the id (which project is it, whose members?), so from that line on the id is refused as a bad record's is: none of
its memories, bindings or memberships go in, neither record's (what the first record imported before stays).
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Iterable
from typing import TextIO

from twin.exceptions import InvalidInput
from twin.learn.import_lines import BadLine, shown, time_field
from twin.learn.transfer import export_memories, import_memories
from twin.memory import utc_now
from twin.namespaces import (
    DEFAULT_NAMESPACE,
    PERSON_ID_PATTERN,
    PROJECT_ID_PATTERN,
    checked,
    person_namespace,
    project_namespace,
    split_stored,
)
from twin.operations.context import Context
from twin.operations.people import checked_person_name, import_person
from twin.operations.project_sources import checked_source
from twin.operations.projects import checked_project_name
from twin.operations.scopes import require_owner
from twin.outside_text import json_text
from twin.store import Store, people, projects
from twin.store.people import OWNER_ID
from twin.store.project_sources import SourceBinding, add_binding, all_bindings

RECORDS = ("person", "project", "binding")
"""The records a whole-twin export holds before its memories, in the order it writes them."""


def export_twin(ctx: Context, out: TextIO, namespace: str | None = None) -> dict[str, int]:
    """Write the whole twin to `out` (module docstring): every person, project and bound source, then every memory
    (`export_memories`); with `namespace` (a caller's name, checked) that namespace's memories alone, no records.
    Returns `{memories, people, projects, bindings}` counts. Read-only. Raises `Forbidden` unless the owner asks
    (an export holds every person's memories)."""
    require_owner("exporting the twin")
    counts = {"people": 0, "projects": 0, "bindings": 0}
    if namespace is None:
        for person in people.list_people(ctx.store):
            _write(out, {"record": "person", "id": person.id, "name": person.name, "added_at": person.added_at})
            counts["people"] += 1
        active = projects.active_pointers(ctx.store)
        for project in projects.all_projects(ctx.store):
            members = projects.memberships(ctx.store, project.id)
            _write(out, {"record": "project", **project._asdict(),
                         "members": [{"person_id": p, "added_at": at} for p, at in members],
                         "active_for": [p for p, _ in members if active.get(p) == project.id]})
            counts["projects"] += 1
        for binding in all_bindings(ctx.store):
            _write(out, {"record": "binding", **binding._asdict()})
            counts["bindings"] += 1
    scope = None if namespace is None else (checked(namespace),)
    return {"memories": export_memories(ctx.store, ctx.being, out, scope), **counts}


def import_twin(ctx: Context, lines: Iterable[str | bytes], namespace: str = DEFAULT_NAMESPACE) -> dict:
    """Import a whole-twin export (or an older export of memories alone) into this twin: `import_memories`'
    report, and `records` (`{person|project|binding: {"created": n, "known": n}}`) and `tokens_needed` (the names
    of the people added, who need a new token: `people.issue_token`). One transaction, as `import_memories`.
    Raises `Forbidden` unless the owner asks, `NamespaceError` for a bad `namespace`."""
    require_owner("importing into the twin")
    records = TwinRecords(ctx.store)
    report = import_memories(ctx.store, ctx.activity, ctx.being, lines, namespace, records)
    return {**report, "records": records.counts, "tokens_needed": records.tokens_needed}


def _write(out: TextIO, record: dict) -> None:
    out.write(json_text(record) + "\n")


class TwinRecords:
    """The records of one import into `store` (`twin.learn.transfer.Records`), and what they mapped: the exporting
    twin's person ids to this one's (and back, with the line that mapped each), the projects brought in, the first
    record of each person and project id (`_claim`), the ids refused with why."""

    def __init__(self, store: Store):
        self.store = store
        self.people: dict[str, str] = {OWNER_ID: OWNER_ID}
        self.mapped_from: dict[str, tuple[str, int]] = {}
        self.projects: set[str] = set()
        self.claims: dict[tuple[str, str], tuple[int, dict]] = {}
        self.refused: dict[tuple[str, str], str] = {}
        self.counts = {kind: {"created": 0, "known": 0} for kind in RECORDS}
        self.tokens_needed: list[str] = []

    def read(self, raw: dict, number: int) -> None:
        """Import one record, line `number` of the file (module docstring). Raises `BadLine` naming what is wrong;
        the record's id is then refused for the rest of the import (its memories, bindings and memberships are bad
        lines too), unless the line only repeated an earlier record of its id word for word (`_claim`)."""
        kind = raw.get("record")
        if kind not in RECORDS:
            raise BadLine(f"record {shown(kind)} is not one of {', '.join(RECORDS)}")
        key = (kind, raw["id"]) if kind != "binding" and isinstance(raw.get("id"), str) else None
        if key is not None:
            self._claim(key, raw, number)
        try:
            created = (self._person(raw, number) if kind == "person"
                       else {"project": self._project, "binding": self._binding}[kind](raw))
        except BadLine:
            if key is not None:
                self.refused[key] = f"its record on line {number} was a bad line"
            raise
        self.counts[kind]["created" if created else "known"] += 1

    def namespace(self, name: str) -> str:
        """The namespace here of a memory's stored `name`: a project's as it is (its id is kept), a person's with
        their id here. Raises `BadLine` for a scope the import does not know."""
        parts = split_stored(name)
        if parts is None:
            raise BadLine(f"namespace {shown(name)} is no person's or project's namespace")
        kind, ref, own = parts
        try:
            if kind == "project":
                return project_namespace(self._project_here(ref))
            return person_namespace(self._person_here(ref), own)
        except BadLine as exc:
            raise BadLine(f"namespace {shown(name)}: {exc}") from exc

    def summary(self) -> str:
        """The records' counts for the diary line: "1 people, 1 projects and 2 bound sources (0 already known)"."""
        made = {kind: n["created"] for kind, n in self.counts.items()}
        known = sum(n["known"] for n in self.counts.values())
        return (f"{made['person']} people, {made['project']} projects and {made['binding']} bound sources "
                f"({known} already known)")

    def _claim(self, key: tuple[str, str], raw: dict, number: int) -> None:
        """The rule of one file: one record per person id and per project id (issue 19). The first record of `key`
        (`(kind, id)`), good or bad, is the one the file gives; a later one is a bad line: one the same as the first
        (as JSON objects) only that, one that says otherwise makes the file contradict itself about the id, which is
        refused from then on (neither record's memories, bindings or members go in; what the first imported
        stays)."""
        line, first = self.claims.setdefault(key, (number, raw))
        if line == number:
            return
        kind, ref = key
        if first == raw:
            raise BadLine(f"{kind} {shown(ref)} has the same record on line {line} already")
        self.refused[key] = f"two records of the file claim it (lines {line} and {number}), which contradict each other"
        raise BadLine(f"{kind} {shown(ref)} has another record on line {line}: the file contradicts itself, so "
                      f"nothing more of {kind} {shown(ref)} is imported")

    def _person(self, raw: dict, number: int) -> bool:
        exported = _text(raw, "id")
        if PERSON_ID_PATTERN.fullmatch(exported) is None or exported == OWNER_ID:
            raise BadLine(f"id {shown(exported)} is not a person's id")
        name = _checked(checked_person_name, raw.get("name"))
        found = people.find_person(self.store, name)
        if found is not None and found.id in self.mapped_from:  # two ids of one file never merge
            other, line = self.mapped_from[found.id]
            raise BadLine(f"name {shown(name)} is taken (any case) by person {shown(other)} of line {line}")
        if found is not None:
            self._map(exported, found.id, number)
            return False
        here = exported if people.person_by_id(self.store, exported) is None else secrets.token_hex(8)
        person = import_person(self.store, here, name, time_field(raw, "added_at") or utc_now())
        self._map(exported, person.id, number)
        self.tokens_needed.append(person.name)
        return True

    def _map(self, exported: str, here: str, number: int) -> None:
        self.people[exported] = here
        self.mapped_from[here] = (exported, number)

    def _project(self, raw: dict) -> bool:
        project_id = _text(raw, "id")
        if PROJECT_ID_PATTERN.fullmatch(project_id) is None:
            raise BadLine(f"id {shown(project_id)} is not a project's id")
        name = _checked(checked_project_name, raw.get("name"))
        owner = self._person_here(_text(raw, "owner_id"))
        created_at = time_field(raw, "created_at") or utc_now()
        members = [(self._person_here(_text(m, "person_id")), time_field(m, "added_at") or created_at)
                   for m in _objects(raw, "members")]
        active = [self._person_here(p) for p in _strings(raw, "active_for")]
        found = projects.project_by_id(self.store, project_id)
        if found is not None and found.name.casefold() != name.casefold():
            raise BadLine(f"project {project_id} is here already with another name ({shown(found.name)})")
        if found is not None and found.owner_id != owner:
            raise BadLine(f"project {project_id} is here already with another owner ({self._named(found.owner_id)})")
        if found is None:
            try:
                projects.add_project(self.store, projects.Project(project_id, name, owner, created_at))
            except sqlite3.IntegrityError as exc:
                raise BadLine(f"its owner has a project named {shown(name)} here already, with another id") from exc
        for member, added_at in members:
            projects.add_member(self.store, project_id, member, added_at)
        for person in active:
            if not projects.is_member(self.store, project_id, person):
                raise BadLine(f"active_for names {shown(person)}, who is no member")
            if projects.active_project(self.store, person) is None:
                projects.set_active(self.store, person, project_id)
        self.projects.add(project_id)
        return found is None

    def _named(self, person_id: str) -> str:
        """`person_id` as a problem names a person here: "the twin's owner" or "person 'name'"."""
        if person_id == OWNER_ID:
            return "the twin's owner"
        person = people.person_by_id(self.store, person_id)
        return f"person {shown(person.name if person is not None else person_id)}"

    def _binding(self, raw: dict) -> bool:
        project_id = self._project_here(_text(raw, "project_id"))
        try:
            kind, value = checked_source(raw.get("kind"), raw.get("value"), exists=False)
        except InvalidInput as exc:
            raise BadLine(str(exc)) from exc
        try:
            return add_binding(self.store, SourceBinding(kind, value, project_id,
                                                         time_field(raw, "added_at") or utc_now()))
        except sqlite3.IntegrityError as exc:
            raise BadLine(f"that {kind.replace('_', ' ')} is bound to another project here") from exc

    def _person_here(self, exported: str) -> str:
        """This twin's id of the exporting twin's person `exported`: mapped by a person record of this import, else
        a person of that id here (an older export brought back home). Raises `BadLine`."""
        if ("person", exported) in self.refused:
            raise BadLine(f"person {shown(exported)} is refused: {self.refused['person', exported]}")
        if exported in self.people:
            return self.people[exported]
        if people.person_by_id(self.store, exported) is not None:
            return exported
        raise BadLine(f"person {shown(exported)} is in no person record before this line, nor here")

    def _project_here(self, project_id: str) -> str:
        """`project_id` when a project record of this import brought it in or it is here. Raises `BadLine`."""
        if ("project", project_id) in self.refused:
            raise BadLine(f"project {shown(project_id)} is refused: {self.refused['project', project_id]}")
        if project_id in self.projects:
            return project_id
        if projects.project_by_id(self.store, project_id) is not None:
            return project_id
        raise BadLine(f"project {shown(project_id)} is in no project record before this line, nor here")


def _text(raw: dict, key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise BadLine(f"{key} must be a non-empty string")
    return value


def _strings(raw: dict, key: str) -> list[str]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise BadLine(f"{key} must be a list of strings")
    return value


def _objects(raw: dict, key: str) -> list[dict]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise BadLine(f"{key} must be a list of objects")
    return value


def _checked(check: Callable[[object], str], value: object) -> str:
    try:
        return check(value)
    except InvalidInput as exc:
        raise BadLine(f"{exc} (not {shown(value)})") from exc
