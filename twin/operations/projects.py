"""Seed 003's seven `project_*` operations (list, create, delete, share, unshare, activate, deactivate), for every
interface (the MCP tools, `/v1/projects`, `twin project`). Who may do what is seed 003's table: any person lists,
creates (they own what they create), activates and deactivates; only a project's owner deletes, shares and
unshares it, and the owner cannot unshare themselves. A project is a namespace with members
(`twin.operations.scopes`): deleting one forgets every memory of its namespace through the path `twin forget`
takes (`twin.lifecycle.forgetting.forget`: rows, FTS entries, vectors and index entries, edges, transcript rows,
the files scrubbed), then drops its members and the active pointers to it.

Errors: `NotFound` (404) for a project or person that does not resolve, `Forbidden` (403) for a project the
caller is no member of or may not change, `InvalidInput` (422; 409 `conflict` for a name the caller has taken)
for bad input. A name resolves only among the caller's projects (`twin.operations.scopes.project_for`).
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Iterable

from twin.exceptions import Forbidden, InvalidInput, NotFound
from twin.memory import utc_now
from twin.namespaces import NAME_PATTERN, project_namespace
from twin.operations.context import Context
from twin.operations.project_sources import release_files
from twin.operations.project_view import project_out
from twin.operations.scopes import OWNER, OWNER_ID, caller, project_for
from twin.operations.shapes import ProjectDeletedOut, ProjectOut
from twin.store import ingest_items, people
from twin.store import projects as stored
from twin.store.projects import Project

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""The ULID alphabet (Crockford's base 32)."""


def new_project_id(now_ms: int | None = None) -> str:
    """A new ULID (seed 003: "Returns the assigned ULID"): 48 bits of Unix milliseconds and 80 random bits
    (`secrets`), 26 characters of `CROCKFORD`; unguessable by its random part."""
    value = ((time.time_ns() // 1_000_000 if now_ms is None else now_ms) << 80) | secrets.randbits(80)
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def checked_project_name(name: object) -> str:
    """`name` trimmed when it is a project name (the namespace rule: 1-64 letters, digits, '_', '.', '-'), else
    `InvalidInput` naming `name`. A name shaped like a ULID is refused too (a reference is an id before a name)."""
    if not isinstance(name, str) or NAME_PATTERN.fullmatch(name.strip()) is None or not name.strip("."):
        raise InvalidInput("name must be 1-64 letters, digits, '_', '.' or '-' (not dots alone)", field="name")
    if len(name.strip()) == 26 and all(c in CROCKFORD for c in name.strip()):
        raise InvalidInput("name must not look like a project id", field="name")
    return name.strip()


def person_named(ctx: Context, name: object) -> str:
    """The person id of `name` (`owner` for the twin's owner). Raises `InvalidInput` (field `person`) for no
    string, `NotFound` for nobody of that name."""
    if not isinstance(name, str) or not name.strip() or len(name) > 64:
        raise InvalidInput("person must be a person's name (twin people list)", field="person")
    if name.strip().lower() == OWNER.name:
        return OWNER_ID
    found = people.find_person(ctx.store, name.strip())
    if found is None:
        raise NotFound(f"no person named {name.strip()!r}", field="person")
    return found.id


def owned(ctx: Context, ref: str, what: str) -> Project:
    """The project `ref` names when the caller owns it; `project_for`'s errors, and `Forbidden` for a member who
    is not its owner (`what` names the operation)."""
    who = caller()
    found = project_for(ctx.store, who, ref)
    if found.owner_id != who.person_id:
        raise Forbidden(f"only the owner of project {found.name!r} can {what} it")
    return found


def list_projects(ctx: Context) -> list[ProjectOut]:
    """Seed 003's `project_list`: the projects the caller owns or is a member of, by name (read-only)."""
    who = caller()
    return [project_out(ctx, p, who) for p in stored.projects_of(ctx.store, who.person_id)]


def create_project(ctx: Context, name: str) -> ProjectOut:
    """Seed 003's `project_create`: a new project named `name` (`checked_project_name`), owned by the caller, its
    first member; a new ULID (`new_project_id`). Raises `InvalidInput` (code `conflict`, 409) when the caller has
    a project of that name already (any case). Names are unique per owner, not in the twin: another person's
    project of that name is no conflict, so a create tells nobody which names others use (issue 19); which
    project a name then means is `twin.operations.scopes.by_name`'s rule."""
    who = caller()
    project = Project(new_project_id(), checked_project_name(name), who.person_id, utc_now())
    try:
        stored.add_project(ctx.store, project)
    except sqlite3.IntegrityError as exc:
        raise InvalidInput(f"you have a project named {project.name!r} already", field="name",
                           code="conflict") from exc
    ctx.activity.record("system", f"Created project {project.id}.")
    return project_out(ctx, project, who)


def erase_scope(ctx: Context, namespaces: tuple[str, ...], moving: Iterable[str] = ()) -> dict[str, int]:
    """Forget every memory of `namespaces` (any status) with every copy of its text, and the staged items waiting
    to be learned into them (`twin.lifecycle.forgetting.plan` and `carry_out`, the path `twin forget` takes: rows,
    FTS entries, vectors and index entries, edges, transcript rows, the files scrubbed; the files they were learned
    from marked forgotten, learned again when they change: `forgetting.files_of`; then
    `twin.operations.writes.after_forget`: the daemon's index writer scrubs the vectors, Redis rewrites its
    append-only file, where queued payloads could hold text). The files of `moving` (paths whose text a release
    of the project's folders staged elsewhere: `project_sources.release_files`) keep their manifest rows. Returns
    what went, per table."""
    from twin.lifecycle.forgetting import carry_out, files_of, plan
    from twin.operations.writes import after_forget

    if not namespaces:
        return {}
    ids = sorted(ctx.store.scope_ids(ctx.being, namespaces))
    todo = plan(ctx.store, ctx.being, ids=ids, namespaces=namespaces)
    todo.manifest_entries = sorted((set(todo.manifest_entries) | set(files_of(ctx.store, ctx.being, todo.memories)))
                                   - set(moving))
    todo.staged = sorted(set(todo.staged) | set(ingest_items.in_namespaces(ctx.store, ctx.being, namespaces)))
    done = carry_out(ctx.store, ctx.activity, todo)
    after_forget(ctx, done)
    return done.counts()


def erase_project(ctx: Context, project: Project) -> dict[str, int]:
    """Erase the signals drawn from `project` (for every member: their text came from its memories) and the diary
    lines that repeat their titles (rewritten, `twin.activity.unname`), and everything
    of its namespace (`erase_scope`, whose scrub then covers the signals' pages too), then delete the project, its
    members, the active pointers to it and the sources bound to it; first its folders are released
    (`project_sources.release_files`: the files learned under them are learned again where the rules now put
    them). Returns what went, per table."""
    from twin.activity import naming, unname
    from twin.reflection.hush import project_subject
    from twin.store.signals import forget_project_signals

    moving = release_files(ctx, project.id)  # its folders' files go back where the rules put them now
    with ctx.store.atomic():
        signals_gone = forget_project_signals(ctx.store, project.id)
        unname(ctx.store, naming(ctx.store, ctx.being, project_subject(project.id), exact=True))
    removed = erase_scope(ctx, (project_namespace(project.id),), moving)
    removed["signals"] = removed.get("signals", 0) + signals_gone
    stored.remove_project(ctx.store, project.id)
    ctx.activity.record("system", f"Deleted project {project.id} and {removed['memories']} memories of it"
                        + (f"; {len(moving)} file(s) of its folders are learned again where they belong now."
                           if moving else "."))
    return removed


def delete_project(ctx: Context, project: str) -> ProjectDeletedOut:
    """Seed 003's `project_delete` (its owner only; no undo): `erase_project`. Raises `NotFound`, `Forbidden`."""
    found = owned(ctx, project, "delete")
    return ProjectDeletedOut(ok=True, id=found.id, removed=erase_project(ctx, found))


def share_project(ctx: Context, project: str, person: str) -> ProjectOut:
    """Seed 003's `project_share` (its owner only): `person` (a name; `owner` for the twin's owner) becomes a
    member, who reads and writes it. Sharing with a member again changes nothing. Raises `NotFound` (project or
    person), `Forbidden`."""
    found = owned(ctx, project, "share")
    member = person_named(ctx, person)
    if stored.add_member(ctx.store, found.id, member, utc_now()):
        ctx.activity.record("system", f"Shared project {found.id} with one more person.")
    return project_out(ctx, found, caller())


def unshare_project(ctx: Context, project: str, person: str) -> ProjectOut:
    """Seed 003's `project_unshare` (its owner only): `person` is no member from now on (their next read of it is
    403) and their active pointer to it is cleared. The owner cannot unshare themselves (`InvalidInput`, field
    `person`: delete the project instead); a person who is no member is `NotFound`."""
    found = owned(ctx, project, "unshare")
    member = person_named(ctx, person)
    if member == found.owner_id:
        raise InvalidInput("the owner cannot unshare themselves; delete the project instead", field="person")
    if not stored.remove_member(ctx.store, found.id, member):
        raise NotFound(f"{person.strip()!r} is no member of project {found.name!r}")
    ctx.activity.record("system", f"Unshared project {found.id} with one person.")
    return project_out(ctx, found, caller())


def show_project(ctx: Context, project: str) -> ProjectOut:
    """One project the caller is a member of (`twin project show`), with its bound sources for the twin's owner.
    Raises `NotFound`, `Forbidden` (`project_for`). Read-only."""
    who = caller()
    return project_out(ctx, project_for(ctx.store, who, project), who)


def activate_project(ctx: Context, project: str) -> ProjectOut:
    """Seed 003's `project_activate`: the caller's active project (kept in the store, so every device of theirs
    sees it) is `project` (an id or a name, of which they are a member). Raises `NotFound`, `Forbidden`."""
    who = caller()
    found = project_for(ctx.store, who, project)
    stored.set_active(ctx.store, who.person_id, found.id)
    return project_out(ctx, found, who)


def deactivate_project(ctx: Context) -> list[ProjectOut]:
    """Seed 003's `project_deactivate`: the caller has no active project from now on; answers `list_projects`."""
    stored.set_active(ctx.store, caller().person_id, None)
    return list_projects(ctx)
