"""The `projects`, `project_members` and `active_projects` tables (seed 003's sub-brains): a project's `id` (a
ULID, stable), its `name` (unique per owner without regard to case: two people may each have a `flat`), its
`owner_id` and `created_at` (UTC ISO-8601); its
members by person id (the owner is one, `twin.store.people.OWNER_ID` for the twin's owner); and each person's
active project (seed 003: "server-side per-user state"). Deleting a project deletes its members and every active
pointer to it (cascades). Its memories are not here: they are the memories of namespace `project:<id>`
(`twin.namespaces.project_namespace`), erased by `twin.operations.projects.delete_project` through forgetting.
Migration `0019_projects` made the tables, `0024_project_names_per_owner` made names unique per owner
(twin.store.schema). Which project a name means to a caller is `twin.operations.scopes.project_for`'s rule."""

from __future__ import annotations

from typing import NamedTuple

from twin.store.core import Store


class Project(NamedTuple):
    """One project: `id` (26 characters, Crockford base 32), `name`, `owner_id`, `created_at` (UTC ISO-8601)."""

    id: str
    name: str
    owner_id: str
    created_at: str


_COLUMNS = "p.id, p.name, p.owner_id, p.created_at"


def add_project(store: Store, project: Project) -> Project:
    """Store `project` with its owner as its first member. Raises `sqlite3.IntegrityError` when its owner has a
    project of that name already (any case) or the id is taken. One transaction (joins the caller's)."""
    with store.atomic() as conn:
        conn.execute("INSERT INTO projects (id, name, owner_id, created_at) VALUES (?, ?, ?, ?)", project)
        conn.execute("INSERT INTO project_members (project_id, person_id, added_at) VALUES (?, ?, ?)",
                     (project.id, project.owner_id, project.created_at))
    return project


def project_by_id(store: Store, project_id: str) -> Project | None:
    """The project whose id is `project_id` (exactly), or None (read-only)."""
    row = store.conn.execute(f"SELECT {_COLUMNS} FROM projects p WHERE p.id = ?", (project_id,)).fetchone()
    return Project(*row) if row else None


def named_among(store: Store, person_id: str, name: str) -> list[Project]:
    """The projects named `name` (any case) that `person_id` is a member of: the one they own first (a name is
    unique per owner, so there is at most one), then the others by id. Projects they are no member of are never
    in it, whatever their name (read-only)."""
    rows = store.conn.execute(f"SELECT {_COLUMNS} FROM projects p JOIN project_members m ON m.project_id = p.id "
                              "WHERE m.person_id = ? AND p.name = ? ORDER BY p.owner_id != m.person_id, p.id",
                              (person_id, name))
    return [Project(*r) for r in rows]


def is_member(store: Store, project_id: str, person_id: str) -> bool:
    """True when `person_id` is a member of `project_id` (read-only)."""
    return store.conn.execute("SELECT 1 FROM project_members WHERE project_id = ? AND person_id = ?",
                              (project_id, person_id)).fetchone() is not None


def projects_of(store: Store, person_id: str) -> list[Project]:
    """The projects `person_id` is a member of (owner included), by name (read-only)."""
    rows = store.conn.execute(f"SELECT {_COLUMNS} FROM projects p JOIN project_members m ON m.project_id = p.id "
                              "WHERE m.person_id = ? ORDER BY p.name COLLATE NOCASE, p.id", (person_id,))
    return [Project(*r) for r in rows]


def all_projects(store: Store) -> list[Project]:
    """Every project in the store, by name (read-only): what reflection per project walks."""
    rows = store.conn.execute(f"SELECT {_COLUMNS} FROM projects p ORDER BY p.name COLLATE NOCASE, p.id")
    return [Project(*r) for r in rows]


def owned_by(store: Store, person_id: str) -> list[Project]:
    """The projects `person_id` owns, by name (read-only)."""
    rows = store.conn.execute(f"SELECT {_COLUMNS} FROM projects p WHERE p.owner_id = ? ORDER BY p.name, p.id",
                              (person_id,))
    return [Project(*r) for r in rows]


def members(store: Store, project_id: str) -> list[str]:
    """The person ids of `project_id`'s members: its owner first, then in the order they joined (read-only)."""
    return [person_id for person_id, _ in memberships(store, project_id)]


def memberships(store: Store, project_id: str) -> list[tuple[str, str]]:
    """`(person id, added_at)` of `project_id`'s members, its owner first, then in the order they joined
    (read-only): `members` and what an export keeps of them."""
    rows = store.conn.execute("SELECT m.person_id, m.added_at FROM project_members m JOIN projects p ON p.id ="
                              " m.project_id WHERE m.project_id = ? ORDER BY m.person_id != p.owner_id, m.added_at,"
                              " m.person_id", (project_id,))
    return [(r[0], r[1]) for r in rows]


def add_member(store: Store, project_id: str, person_id: str, added_at: str) -> bool:
    """Make `person_id` a member of `project_id`; False when they were one already."""
    with store.atomic() as conn:
        return conn.execute("INSERT OR IGNORE INTO project_members (project_id, person_id, added_at) VALUES "
                            "(?, ?, ?)", (project_id, person_id, added_at)).rowcount > 0


def remove_member(store: Store, project_id: str, person_id: str) -> bool:
    """Remove `person_id` from `project_id`; False when they were no member. Their active pointer to it stays, so
    their next call is refused until they deactivate it (`twin.operations.scopes.reach`) instead of silently
    answering from, and writing to, their own memories; shared again, it holds again."""
    with store.atomic() as conn:
        return conn.execute("DELETE FROM project_members WHERE project_id = ? AND person_id = ?",
                            (project_id, person_id)).rowcount > 0


def forget_person(store: Store, person_id: str) -> None:
    """Remove `person_id` from every project and their active pointer (a removed person). Joins the caller's
    transaction."""
    with store.atomic() as conn:
        conn.execute("DELETE FROM active_projects WHERE person_id = ?", (person_id,))
        conn.execute("DELETE FROM project_members WHERE person_id = ?", (person_id,))


def remove_project(store: Store, project_id: str) -> bool:
    """Delete the project row (its members and active pointers go by cascade); False when there was none."""
    with store.atomic() as conn:
        return conn.execute("DELETE FROM projects WHERE id = ?", (project_id,)).rowcount > 0


def active_project(store: Store, person_id: str) -> Project | None:
    """`person_id`'s active project, or None (read-only)."""
    row = store.conn.execute(f"SELECT {_COLUMNS} FROM active_projects a JOIN projects p ON p.id = a.project_id "
                             "WHERE a.person_id = ?", (person_id,)).fetchone()
    return Project(*row) if row else None


def active_pointers(store: Store) -> dict[str, str]:
    """`{person id: project id}` of every active project (read-only): what an export keeps of them."""
    return dict(store.conn.execute("SELECT person_id, project_id FROM active_projects ORDER BY person_id"))


def set_active(store: Store, person_id: str, project_id: str | None) -> None:
    """Make `project_id` `person_id`'s active project; None clears it."""
    with store.atomic() as conn:
        if project_id is None:
            conn.execute("DELETE FROM active_projects WHERE person_id = ?", (person_id,))
        else:
            conn.execute("INSERT INTO active_projects (person_id, project_id) VALUES (?, ?) ON CONFLICT (person_id)"
                         " DO UPDATE SET project_id = excluded.project_id", (person_id, project_id))
