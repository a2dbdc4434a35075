"""Export and import of the whole twin (`twin export`, `twin import`; issue 19): the people the owner added, the
projects with their members, active pointers and bound sources, then every memory of every scope, as JSON lines
that a fresh data dir imports to the same twin. The memories' lines and their rules are
`twin.learn.transfer`'s; this module writes and reads the lines before them, one record each, in this order:

- `{"record": "person", "id", "name", "added_at"}`: a person's name and id, never a token (twin keeps only its
  digest) nor a Telegram pairing. Imported, a person is matched by name (any case); one not here is added, with
  their id when it is free, and reaches nothing until the owner gives them a new token (`people.issue_token`,
  `twin people token NAME`): the report lists them under `tokens_needed`.
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
    twin's person ids to this one's, the projects brought in, the ids whose record was a bad line."""

    def __init__(self, store: Store):
        self.store = store
        self.people: dict[str, str] = {OWNER_ID: OWNER_ID}
        self.projects: set[str] = set()
        self.refused: set[tuple[str, str]] = set()
        self.counts = {kind: {"created": 0, "known": 0} for kind in RECORDS}
        self.tokens_needed: list[str] = []

    def read(self, raw: dict) -> None:
        """Import one record (module docstring). Raises `BadLine` naming what is wrong; the record's id is then
        refused for the rest of the import (its memories and bindings are bad lines too)."""
        kind = raw.get("record")
        if kind not in RECORDS:
            raise BadLine(f"record {shown(kind)} is not one of {', '.join(RECORDS)}")
        try:
            created = {"person": self._person, "project": self._project, "binding": self._binding}[kind](raw)
        except BadLine:
            ref = raw.get("id")
            brought = self.projects if kind == "project" else self.people
            if kind != "binding" and isinstance(ref, str) and ref not in brought:
                self.refused.add((kind, ref))  # a bad repeat of a record imported before leaves that one be
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

    def _person(self, raw: dict) -> bool:
        exported = _text(raw, "id")
        if PERSON_ID_PATTERN.fullmatch(exported) is None or exported == OWNER_ID:
            raise BadLine(f"id {shown(exported)} is not a person's id")
        if exported in self.people:
            raise BadLine(f"a record of person {shown(exported)} came before")
        name = _checked(checked_person_name, raw.get("name"))
        found = people.find_person(self.store, name)
        if found is not None:
            self.people[exported] = found.id
            return False
        here = exported if people.person_by_id(self.store, exported) is None else secrets.token_hex(8)
        person = import_person(self.store, here, name, time_field(raw, "added_at") or utc_now())
        self.people[exported] = person.id
        self.tokens_needed.append(person.name)
        return True

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
        if found is not None:
            if found.name.casefold() != name.casefold() or found.owner_id != owner:
                raise BadLine(f"project {project_id} is here already with another "
                              f"{'name' if found.owner_id == owner else 'owner'} ({shown(found.name)})")
        else:
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
            raise BadLine(f"person {shown(exported)}'s record was a bad line")
        if exported in self.people:
            return self.people[exported]
        if people.person_by_id(self.store, exported) is not None:
            return exported
        raise BadLine(f"person {shown(exported)} is in no person record before this line, nor here")

    def _project_here(self, project_id: str) -> str:
        """`project_id` when a project record of this import brought it in or it is here. Raises `BadLine`."""
        if ("project", project_id) in self.refused:
            raise BadLine(f"project {shown(project_id)}'s record was a bad line")
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
