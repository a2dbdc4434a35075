"""Who asks, and the one rule of what they reach (seed 003's projects; DESIGN.md invariant 9: every interface calls
`reach`): the caller (`CALLER`, set by the interface that authenticated them) and their active project decide
which stored namespaces a read looks in and which one a write goes to.

- The twin's owner (`OWNER`: the API's token file, a page session, the CLI, `twin mcp`) keeps their user-global
  memories in the namespaces they name (`twin.namespaces`), as before projects existed.
- A person the owner added (`twin.operations.people`) keeps theirs in their own `person:<id>:<name>` namespaces
  (`twin.namespaces.person_namespace`): the owner's user-global memories are never in their reach, nor the reverse
  (seed 003: "A user-global entry is invisible to anyone else, period").
- A project is a namespace with members (`project:<id>`). Named by a call's `project` (an id or a name), or else
  the caller's active project: a read looks in it and in the caller's user-global namespaces (seed 003: "search /
  recent / neighbors union the active project with user-global"); a write goes to it ("remember / forget / update
  target the active project directly"). An id that does not resolve is `NotFound` (404), the id of a project the
  caller is no member of `Forbidden` (403), as seed 003's error table says. A name resolves only among the
  caller's own projects and those shared with them (`project_for`): any other name is 404, where seed 003 answers
  403 for "the project name is right" (that 403 would tell a non-member which names exist).

Sensitive memories are shown only to a caller asking for them (`twin.operations.context.sensitivity_levels`), and
only from the namespaces `reach` gives: a member asking for `sensitive` sees the sensitive memories of a project
they reach and their own, never another scope's.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass

from twin.exceptions import Forbidden, InvalidInput, NotFound
from twin.namespaces import DEFAULT_NAMESPACE, person_namespace, project_namespace, scope
from twin.store import Store
from twin.store.people import OWNER_ID
from twin.store.projects import Project, active_project, is_member, named_among, project_by_id

PROJECT_REF_MAX = 64
"""The longest project reference (an id or a name) a caller may give."""


@dataclass(frozen=True)
class Caller:
    """Who asks: `person_id` (`OWNER_ID` for the twin's owner, else a `people` row's id) and `name`."""

    person_id: str
    name: str

    @property
    def is_owner(self) -> bool:
        """True for the twin's owner."""
        return self.person_id == OWNER_ID


OWNER = Caller(OWNER_ID, "owner")
CALLER: ContextVar[Caller] = ContextVar("twin_caller", default=OWNER)
"""Who asks for the operation running now. The owner unless an interface authenticated someone else: the API's
guard sets it from the bearer token (`twin.api.guard`) for the request, the API's lanes carry it into their
threads. A process of the owner's own (the CLI, `twin mcp` over stdio) leaves it at `OWNER`."""


@dataclass(frozen=True)
class Reach:
    """What one call reaches: `reads` the stored namespaces a read looks in (the project's last), `write` the one
    a write goes to, `project` the project in scope (None: user-global only)."""

    reads: tuple[str, ...]
    write: str
    project: Project | None


def caller() -> Caller:
    """The caller of the operation running now (`CALLER`)."""
    return CALLER.get()


def require_owner(what: str) -> None:
    """Raise `Forbidden` unless the twin's owner asks (`what` names the operation): the profile, status, diary,
    signals, reflection, the dream cycle and learning read or change the owner's own twin."""
    if not caller().is_owner:
        raise Forbidden(f"{what} is the twin owner's alone")


def user_global(who: Caller, names: Iterable[str]) -> tuple[str, ...]:
    """The stored namespaces of `who`'s user-global `names` (checked caller names): the names themselves for the
    owner, `person:<id>:<name>` for anyone else. Pure."""
    return tuple(names) if who.is_owner else tuple(person_namespace(who.person_id, n) for n in names)


def agreed_project(*given: str | None) -> str | None:
    """The one project a call names where it may name it in several places (a path, the query, the body): None
    when none does; raises `InvalidInput` (field `project`) when two name different ones, so no part of a request
    can decide a scope another part denies."""
    named = {g for g in given if g is not None}
    if len(named) > 1:
        raise InvalidInput("the request names more than one project (path, query and body must agree)",
                           field="project")
    return named.pop() if named else None


def project_for(store: Store, who: Caller, ref: str) -> Project:
    """The project `ref` names for `who`: by id (in any case: a ULID is Crockford base 32), any project
    (`Forbidden` when `who` is no member: seed 003's 403 "not a member"; an id is unguessable, so the 403 tells
    nothing); by name, only among the projects `who` is a member of (`by_name`), so a name `who` cannot reach is
    `NotFound` (404), as if no project had it: a non-member guessing names learns nothing (issue 19). Raises
    `InvalidInput` (field `project`) for a reference that is no string or too long, or a name that is ambiguous
    (`by_name`)."""
    if not isinstance(ref, str) or not ref.strip() or len(ref) > PROJECT_REF_MAX:
        raise InvalidInput(f"project must be a project's id or name (1-{PROJECT_REF_MAX} characters)",
                           field="project")
    ref = ref.strip()
    found = project_by_id(store, ref.upper())  # a ULID is Crockford base 32: its letters in any case
    if found is None:
        return by_name(store, who, ref)
    if not is_member(store, found.id, who.person_id):  # the id given, never the name: an id tells no name
        raise Forbidden(f"not a member of project {ref!r}")
    return found


def by_name(store: Store, who: Caller, name: str) -> Project:
    """The project `name` (any case) means to `who`, among the projects they are a member of: their own when they
    have one of that name (names are unique per owner), so nobody sharing a project with them can change what
    their own names mean; else the one shared with them of that name. Raises `NotFound` when none of theirs has
    it, `InvalidInput` (field `project`, naming the ids) when two or more shared with them by others have it and
    none of their own does: the caller gives the id (project_list shows it)."""
    named = named_among(store, who.person_id, name)
    if not named:
        raise NotFound(f"no such project {name!r} (project_list shows yours)", field="project")
    if named[0].owner_id == who.person_id or len(named) == 1:
        return named[0]
    raise InvalidInput(f"{len(named)} projects shared with you are named {name!r} ("
                       f"{', '.join(p.id for p in named)}); name one by its id", field="project")


def reach(store: Store, namespace: str = DEFAULT_NAMESPACE, include_namespaces: Iterable[str] | None = None,
          project: str | None = None) -> Reach:
    """What the caller (`CALLER`) reaches in this call: their user-global `namespace` and `include_namespaces`
    (`twin.namespaces.scope` checks them: `NamespaceError`), and the project `project` names or else their active
    one (`project_for`'s errors: 404, 403). An active project the caller is no member of any more (unshared
    since they activated it) is `Forbidden` too, until they deactivate it or name a project: a write meant for
    the project never lands silently in their own memories, nor a read answers from them alone. Reads the store
    (the project, membership); changes nothing."""
    who = caller()
    names = user_global(who, scope(namespace, include_namespaces))
    found = project_for(store, who, project) if project is not None else active_project(store, who.person_id)
    if found is not None and not is_member(store, found.id, who.person_id):  # an active project since unshared
        raise Forbidden("your active project is no longer shared with you: deactivate it (project_deactivate, "
                        "twin project deactivate, /project off) or name another project; nothing was read or "
                        "written")
    if found is None:
        return Reach(names, names[0], None)
    shared = project_namespace(found.id)
    return Reach((*names, shared), shared, found)
