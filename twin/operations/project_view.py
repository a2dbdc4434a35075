"""How a project shows to a caller (`ProjectOut`, seed 003's project objects): its owner's and members' names and,
for the twin's owner, its bound sources. Below `twin.operations.projects` and `.project_sources`, which both
answer with it."""

from __future__ import annotations

from twin.operations.context import Context
from twin.operations.scopes import OWNER, OWNER_ID, Caller
from twin.operations.shapes import ProjectOut, SourceOut
from twin.store import people
from twin.store import projects as stored
from twin.store.project_sources import bindings_of
from twin.store.projects import Project


def name_of(ctx: Context, person_id: str) -> str:
    """A person's name (`owner` for the twin's owner; the id itself for a person no longer there)."""
    if person_id == OWNER_ID:
        return OWNER.name
    found = people.person_by_id(ctx.store, person_id)
    return found.name if found else person_id


def project_out(ctx: Context, project: Project, who: Caller) -> ProjectOut:
    """`project` as `who` sees it (`ProjectOut`; its bound sources for the twin's owner alone)."""
    active = stored.active_project(ctx.store, who.person_id)
    sources = [SourceOut(kind=b.kind, value=b.value, added_at=b.added_at)
               for b in bindings_of(ctx.store, project.id)] if who.is_owner else []
    return ProjectOut(id=project.id, name=project.name, owner=name_of(ctx, project.owner_id),
                      role="owner" if project.owner_id == who.person_id else "member",
                      members=[name_of(ctx, m) for m in stored.members(ctx.store, project.id)],
                      active=active is not None and active.id == project.id, created_at=project.created_at,
                      sources=sources)
