"""A project's name is unique per owner, and resolves only within the caller's reach (issue 19: with names unique
in the whole twin, a person the owner added learnt from a 409, or from a 403 by name, which names the owner's
projects have, and could take a name the owner would want). Over real HTTP with each person's own token
(conftest's `keyword_api`), and migration `0024_project_names_per_owner` on a real SQLite file of the schema
before it."""

from __future__ import annotations

import sqlite3

import httpx
import pytest
from in_process import add_person

from twin.store import Store, schema
from twin.store.projects import Project, add_project, members, named_among

OWNER_FLAT = "The owner's flat has a blue front door."
ALICE_FLAT = "Alice's flat has a green front door."
BOB_FLAT = "Bob's flat has a red front door."
STUDIO = "Bob's studio kiln fires at 1240 degrees on Saturdays."


@pytest.fixture
def people(keyword_api):
    """The owner's client and clients of alice, bob and carol (people the owner added), each with their token."""
    clients = {name: httpx.Client(base_url=keyword_api.url, headers={"Authorization": f"Bearer {add_person(name)}"},
                                  timeout=30) for name in ("alice", "bob", "carol")}
    yield {"owner": keyword_api.client, **clients}
    for client in clients.values():
        client.close()


def ok(response) -> dict | list:
    assert response.status_code == 200, response.text
    return response.json()


def error(response) -> tuple[int, str, str | None]:
    body = response.json()["error"]
    return response.status_code, body["code"], body.get("field")


def found(client: httpx.Client, query: str, **body) -> set[str]:
    return {r["content"] for r in ok(client.post("/v1/search", json={"query": query, **body}))["results"]}


def recent(client: httpx.Client, project: str) -> set[str]:
    """Every memory `client`'s caller reads with `project` (theirs and the project's), newest first."""
    return {r["content"] for r in ok(client.get("/v1/recent", params={"project": project, "limit": 200}))}


def test_a_person_may_name_a_project_as_the_owner_did_and_no_read_crosses(people):
    owner, alice = people["owner"], people["alice"]
    owners = ok(owner.post("/v1/projects", json={"name": "flat"}))["id"]
    ok(owner.post("/v1/remember", json={"content": OWNER_FLAT, "project": "flat"}))
    hers = ok(alice.post("/v1/projects", json={"name": "FLAT"}))  # the owner's name, any case: no conflict
    assert hers["id"] != owners and hers["role"] == "owner" and hers["members"] == ["alice"]
    ok(alice.post("/v1/remember", json={"content": ALICE_FLAT, "project": "flat"}))  # by name: her own
    assert found(owner, "flat front door", project="flat") == {OWNER_FLAT}
    assert found(alice, "flat front door", project="Flat") == {ALICE_FLAT}
    assert error(owner.post("/v1/search", json={"query": "door", "project": hers["id"]}))[:2] == (403, "forbidden")
    assert error(alice.post("/v1/search", json={"query": "door", "project": owners}))[:2] == (403, "forbidden")
    # each one's own name twice is still a conflict
    assert error(owner.post("/v1/projects", json={"name": "Flat"})) == (409, "conflict", "name")
    assert error(alice.post("/v1/projects", json={"name": "flat"})) == (409, "conflict", "name")
    assert [p["id"] for p in ok(owner.get("/v1/projects"))] == [owners]
    assert [p["id"] for p in ok(alice.get("/v1/projects"))] == [hers["id"]]
    # deleting hers by name deletes hers, never the owner's
    assert ok(alice.delete("/v1/projects/flat"))["id"] == hers["id"]
    assert found(owner, "flat front door", project="flat") == {OWNER_FLAT}


def test_a_name_out_of_reach_is_a_404_like_no_project_and_its_id_a_403(people):
    alice, bob = people["alice"], people["bob"]
    studio = ok(bob.post("/v1/projects", json={"name": "studio"}))["id"]
    ok(bob.post("/v1/remember", json={"content": STUDIO, "project": studio}))

    def by_name(name: str) -> list[httpx.Response]:
        return [alice.post("/v1/search", json={"query": "kiln", "project": name}),
                alice.get("/v1/recent", params={"project": name}),
                alice.post("/v1/capture", json={"content": "The studio's kiln is broken for good.", "project": name}),
                alice.get(f"/v1/projects/{name}"),
                alice.post(f"/v1/projects/{name}/activate"),
                alice.delete(f"/v1/projects/{name}")]

    for name in ("studio", "STUDIO"):  # bob's, out of her reach: word for word what a name nobody has gets
        answers, nobodys = by_name(name), by_name("studia")
        assert [error(r)[:2] for r in answers] == [(404, "not_found")] * len(answers)
        assert [r.json()["error"]["message"].replace(name, "?") for r in answers] == [
            r.json()["error"]["message"].replace("studia", "?") for r in nobodys]
    by_id = [alice.post("/v1/search", json={"query": "kiln", "project": studio}),
             alice.post(f"/v1/projects/{studio}/activate"), alice.delete(f"/v1/projects/{studio}")]
    assert [error(r)[:2] for r in by_id] == [(403, "forbidden")] * len(by_id)  # seed 003: 403 not a member
    assert ok(alice.post("/v1/projects", json={"name": "studio"}))["id"] != studio  # no 409 to probe with
    assert ok(alice.delete("/v1/projects/studio"))["removed"]["memories"] == 0  # hers, not bob's
    # shared with her, the name is hers to use; unshared, it is gone again
    ok(bob.post(f"/v1/projects/{studio}/members", json={"person": "alice"}))
    assert found(alice, "kiln fires", project="studio") == {STUDIO}
    ok(bob.delete(f"/v1/projects/{studio}/members/alice"))
    assert error(alice.post("/v1/search", json={"query": "kiln", "project": "studio"}))[:2] == (404, "not_found")
    assert error(alice.post("/v1/search", json={"query": "kiln", "project": studio}))[:2] == (403, "forbidden")
    assert found(bob, "kiln fires", project="studio") == {STUDIO}  # nothing of bob's changed


def test_a_name_two_reachable_projects_share_means_the_callers_own_else_is_refused_naming_both(people):
    owner, alice, bob, carol = people["owner"], people["alice"], people["bob"], people["carol"]
    owners = ok(owner.post("/v1/projects", json={"name": "flat"}))["id"]
    bobs = ok(bob.post("/v1/projects", json={"name": "flat"}))["id"]
    for who, pid, text in ((owner, owners, OWNER_FLAT), (bob, bobs, BOB_FLAT)):
        ok(who.post("/v1/remember", json={"content": text, "project": pid}))
    ok(owner.post(f"/v1/projects/{owners}/members", json={"person": "alice"}))
    for who, pid in ((owner, owners), (bob, bobs)):
        ok(who.post(f"/v1/projects/{pid}/members", json={"person": "carol"}))
    # alice: one shared with her, then her own of the same name (made later, so its id sorts after): hers wins
    assert found(alice, "flat front door", project="flat") == {OWNER_FLAT}
    hers = ok(alice.post("/v1/projects", json={"name": "flat"}))["id"]
    ok(alice.post("/v1/remember", json={"content": ALICE_FLAT, "project": "flat"}))
    assert found(alice, "flat front door", project="flat") == {ALICE_FLAT}
    assert ok(alice.post("/v1/projects/flat/activate"))["id"] == hers
    assert found(alice, "flat front door", project=owners) == {OWNER_FLAT}  # the shared one, by its id
    # carol owns no `flat` and two are shared with her: refused, naming both ids, nothing written
    refused = [carol.post("/v1/search", json={"query": "door", "project": "flat"}),
               carol.post("/v1/capture", json={"content": "Carol's note: the flat door sticks.", "project": "flat"}),
               carol.post("/v1/projects/FLAT/activate")]
    assert [error(r) for r in refused] == [(422, "invalid", "project")] * len(refused)
    assert all(owners in r.text and bobs in r.text for r in refused)
    assert recent(owner, owners) == {OWNER_FLAT} and recent(bob, bobs) == {BOB_FLAT}
    assert found(carol, "flat front door", project=bobs) == {BOB_FLAT}
    ok(bob.delete(f"/v1/projects/{bobs}/members/carol"))
    assert found(carol, "flat front door", project="flat") == {OWNER_FLAT}  # one left in her reach


def test_the_migration_makes_names_unique_per_owner_keeping_projects_members_pointers_and_sources(tmp_path,
                                                                                                    monkeypatch):
    db = tmp_path / "old.db"
    flat = Project("01JAAAAAAAAAAAAAAAAAAAAAAA", "flat", "owner", "2026-01-01T00:00:00Z")
    garden = Project("01JBBBBBBBBBBBBBBBBBBBBBBB", "garden", "p-alice", "2026-01-02T00:00:00Z")
    with monkeypatch.context() as old:
        old.setattr(schema, "MIGRATIONS", tuple(m for m in schema.MIGRATIONS if m[0] < "0024"))
        with Store(db) as before:
            for project in (flat, garden):
                add_project(before, project)
            conn = before.conn
            conn.execute("INSERT INTO project_members VALUES (?, 'p-alice', '2026-01-03T00:00:00Z')", (flat.id,))
            conn.execute("INSERT INTO active_projects VALUES ('p-alice', ?)", (flat.id,))
            conn.execute("INSERT INTO project_sources VALUES ('files', '/home/o/Flat', ?, '2026-01-03T00:00:00Z')",
                         (flat.id,))
            with pytest.raises(sqlite3.IntegrityError):  # the old rule: one `flat` in the whole twin
                add_project(before, Project("01JCCCCCCCCCCCCCCCCCCCCCCC", "FLAT", "p-alice", "2026-01-04T00:00:00Z"))
            tables = ("projects", "project_members", "active_projects", "project_sources")
            rows = {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in tables}
    with Store(db) as store:
        conn = store.conn
        assert {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in tables} == rows
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1  # on again after the rebuild
        assert members(store, flat.id) == ["owner", "p-alice"]
        alices = add_project(store, Project("01JCCCCCCCCCCCCCCCCCCCCCCC", "FLAT", "p-alice", "2026-01-04T00:00:00Z"))
        with pytest.raises(sqlite3.IntegrityError):  # the new rule: one `flat` per owner
            add_project(store, Project("01JDDDDDDDDDDDDDDDDDDDDDDD", "Flat", "owner", "2026-01-05T00:00:00Z"))
        assert named_among(store, "p-alice", "flat") == [alices, flat]  # her own first
        assert named_among(store, "p-bob", "flat") == []
        store.conn.execute("DELETE FROM projects WHERE id = ?", (flat.id,))  # the cascades still hold
        assert conn.execute("SELECT count(*) FROM project_members WHERE project_id = ?", (flat.id,)).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM project_sources").fetchone() == (0,)
