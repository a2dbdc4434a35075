"""People and projects (issue 19, seed 003) over real HTTP (uvicorn on a loopback port, httpx) and the real CLI:
each person's own token, the seven project operations under `/v1/projects`, the one scope rule (an active project
read with the caller's own memories, writes into it; a person's own memories never the owner's, and the reverse),
404 for a project that does not resolve and 403 for one out of reach, and deleting a project erasing its text from
every file under the data dir."""

from __future__ import annotations

import httpx
import pytest
from erasure import traces
from in_process import add_person, twin_cli

from twin.operations import Context
from twin.operations import people as people_ops
from twin.settings import load_settings

BOILER = "The flat's boiler is serviced every March by Calor Heating."
WIFI = "The flat's Wi-Fi network is called Gecko Lounge."
DIARY = "Owner keeps a private diary about the Halvorsen negotiation."
PARTNER_OWN = "Alice runs the Tuesday pottery class at the Kiln Works."


@pytest.fixture
def api(keyword_api):
    """A running API over an empty store, keyword-only, no daemon (conftest's `keyword_api`)."""
    yield keyword_api
    for client in OPEN_CLIENTS:
        client.close()
    OPEN_CLIENTS.clear()


OPEN_CLIENTS: list[httpx.Client] = []



def as_person(api, token: str) -> httpx.Client:
    """A client of `api` carrying a person's token (closed after the test)."""
    client = httpx.Client(base_url=api.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    OPEN_CLIENTS.append(client)
    return client


def ok(response) -> object:
    assert response.status_code == 200, response.text
    return response.json()


def status_of(response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def contents(rows) -> set[str]:
    return {r["content"] for r in rows}


def found(client: httpx.Client, query: str, **body) -> set[str]:
    return contents(ok(client.post("/v1/search", json={"query": query, **body}))["results"])


def test_a_person_has_a_token_of_their_own_and_loses_it_at_removal(api):
    token = add_person("alice")
    alice = as_person(api, token)
    owner = api.client
    ok(owner.post("/v1/capture", json={"content": DIARY}))
    assert ok(alice.get("/v1/health"))["ok"] is True
    assert found(alice, "private diary Halvorsen negotiation") == set()  # the owner's own: invisible, period
    assert ok(alice.get("/v1/recent")) == [] and ok(alice.get("/api/twin/memories")) == []
    mine = ok(alice.post("/v1/capture", json={"content": PARTNER_OWN}))["id"]
    assert found(alice, "pottery class Kiln Works") == {PARTNER_OWN}
    assert found(owner, "pottery class Kiln Works") == set()  # and the reverse
    assert owner.get(f"/v1/memories/{mine}").status_code == 404
    assert ok(alice.get("/v1/signals")) == []  # only signals drawn for her from a project of hers (none yet)
    for path in ("/v1/stats", "/v1/status", "/v1/profile", "/api/twin/activity",
                 "/v1/memories", "/v1/activity", "/v1/stats/weeks", "/v1/stats/supersessions",
                 "/v1/stats/recall-latency", "/v1/forget-source?source=api"):  # the owner's, and the page's routes
        assert status_of(alice.get(path)) == (403, "forbidden"), path
    for response in (alice.post("/v1/forget-source", json={"source": "api"}), alice.put("/v1/profile", json={}),
                     alice.post("/v1/learn", json={"text": "Alice learned that the owner likes jazz."}),
                     alice.post("/api/twin/reflect"), alice.post("/v1/dream-cycle")):
        assert status_of(response) == (403, "forbidden"), response.request.url
    assert contents(ok(owner.get("/v1/recent"))) == {DIARY}  # nothing of hers was learned or forgotten
    assert alice.get("/twin/api/memories").status_code == 403  # the page is the owner's
    ok(alice.post("/v1/projects", json={"name": "pottery"}))
    assert twin_cli("people", "remove", "alice").returncode == 0
    for path in ("/v1/health", "/v1/recent", "/v1/projects"):
        assert status_of(alice.get(path)) == (401, "unauthorized"), path  # at once, no restart
    assert ok(owner.get("/v1/projects")) == []
    ctx = Context.open(load_settings())
    try:
        assert ctx.store.get(mine) is None  # their own memories went with them
        assert people_ops.person_of_token(ctx.store, token) is None
        stored = ctx.store.conn.execute("SELECT count(*) FROM people").fetchone()[0]
    finally:
        ctx.close()
    assert stored == 0


def test_the_cli_adds_lists_and_removes_people_and_keeps_only_a_digest(twin_paths, tmp_path):
    path = tmp_path / "bob.token"
    assert twin_cli("people", "add", "bob", "--token-file", str(path)).returncode == 0
    token = path.read_text().strip()
    assert (path.stat().st_mode & 0o777) == 0o600 and len(token) >= 43
    assert "bob" in twin_cli("people", "list").stdout and token not in twin_cli("people", "list", "--json").stdout
    assert twin_cli("people", "add", "BOB").returncode == 1  # names are unique, any case
    assert token.encode() not in twin_paths.db_path.read_bytes()  # only the digest is stored
    ctx = Context.open(load_settings())
    try:
        assert people_ops.person_of_token(ctx.store, token).name == "bob"
    finally:
        ctx.close()
    assert twin_cli("people", "remove", "bob").returncode == 0
    assert "bob" not in twin_cli("people", "list").stdout


def test_an_id_in_lower_case_names_its_project_and_the_owner_is_no_person(api, twin_paths):
    """A project's id is a ULID (Crockford base 32: case does not matter); `twin people token owner` says where
    the owner's own token is instead of "no person named"."""
    made = ok(api.client.post("/v1/projects", json={"name": "orchard"}))
    assert ok(api.client.get(f"/v1/projects/{made['id'].lower()}"))["id"] == made["id"]
    refused = twin_cli("people", "token", "owner")
    assert refused.returncode != 0 and "twin token --rotate" in refused.stderr, refused


def test_a_person_reads_their_own_namespace_by_its_own_name(api):
    """A person's own memories come back in the namespace they name (`default`, `work`), never the stored
    `person:<id>:…` that no call takes; the namespace they read is one they may pass back."""
    alice = as_person(api, add_person("alice"))
    made = ok(alice.post("/v1/remember", json={"content": PARTNER_OWN}))
    assert ok(alice.get(f"/v1/memories/{made['id']}"))["namespace"] == "default"
    ok(alice.post("/v1/remember", json={"content": "Alice's studio rent is due on the 3rd.", "namespace": "work"}))
    hits = ok(alice.post("/v1/search", json={"query": "studio rent", "namespace": "work"}))["results"]
    assert [h["namespace"] for h in hits] == ["work"]
    listed = ok(alice.get("/v1/recent", params={"namespace": hits[0]["namespace"]}))
    assert contents(listed) == {"Alice's studio rent is due on the 3rd."}


def test_a_project_shared_written_by_both_unshared_and_deleted(api):
    owner, alice = api.client, as_person(api, add_person("alice"))
    ok(owner.post("/v1/capture", json={"content": DIARY}))
    made = ok(owner.post("/v1/projects", json={"name": "flat"}))
    pid = made["id"]
    assert len(pid) == 26 and made["role"] == "owner" and made["members"] == ["owner"]
    assert status_of(alice.post("/v1/search", json={"query": "boiler", "project": pid})) == (403, "forbidden")
    shared = ok(owner.post(f"/v1/projects/{pid}/members", json={"person": "alice"}))
    assert shared["members"] == ["owner", "alice"]
    assert [p["id"] for p in ok(alice.get("/v1/projects"))] == [pid]
    assert ok(alice.get("/v1/projects"))[0]["role"] == "member"
    boiler = ok(owner.post("/v1/capture", json={"content": BOILER, "project": "flat"}))["id"]
    assert ok(alice.post(f"/v1/projects/{pid}/activate"))["active"] is True
    wifi = ok(alice.post("/v1/capture", json={"content": WIFI}))["id"]  # the active project: written there
    ok(alice.post("/v1/projects/deactivate"))
    ok(alice.post("/v1/capture", json={"content": PARTNER_OWN}))  # no active project: her own
    ok(alice.post(f"/v1/projects/{pid}/activate"))
    # alice reads the project with her own memories; never the owner's diary
    assert found(alice, "boiler Wi-Fi pottery diary Halvorsen") == {BOILER, WIFI, PARTNER_OWN}
    assert contents(ok(alice.get("/v1/recent"))) == {BOILER, WIFI, PARTNER_OWN}
    # the owner, with no active project, reads only their own; naming the project unions it
    assert found(owner, "boiler Wi-Fi diary Halvorsen") == {DIARY}
    assert found(owner, "boiler Wi-Fi diary Halvorsen", project=pid) == {BOILER, WIFI, DIARY}
    assert ok(owner.get(f"/v1/memories/{wifi}", params={"project": pid}))["content"] == WIFI
    assert owner.get(f"/v1/memories/{wifi}").status_code == 404
    # update and forget target the active project
    assert ok(alice.patch(f"/v1/memories/{boiler}", json={"importance": 0.9}))["importance"] == 0.9
    # the context pack, by scope
    pack = ok(owner.post("/v1/context", json={"query": "boiler diary", "project": pid}))["context_pack"]
    assert {m["content"] for ms in pack["projectScoped"].values() for m in ms} == {BOILER, WIFI}
    assert {m["content"] for ms in pack["userGlobal"].values() for m in ms} == {DIARY}
    # unshared: alice's reads of it fail from that moment; her calls that would have gone to it as her active
    # project are refused until she deactivates it (a write meant for it never lands silently in her own)
    ok(owner.delete(f"/v1/projects/{pid}/members/alice"))
    assert status_of(alice.post("/v1/search", json={"query": "boiler", "project": pid})) == (403, "forbidden")
    assert status_of(alice.get(f"/v1/memories/{boiler}", params={"project": pid})) == (403, "forbidden")
    assert status_of(alice.post("/v1/search", json={"query": "boiler Wi-Fi pottery"})) == (403, "forbidden")
    meant = alice.post("/v1/capture", json={"content": "The flat's spare fuse is in the hall cupboard."})
    assert status_of(meant) == (403, "forbidden") and "no longer shared" in meant.text and "flat" not in meant.text
    assert ok(alice.post("/v1/projects/deactivate")) == []
    assert found(alice, "boiler Wi-Fi pottery fuse") == {PARTNER_OWN}
    # deleted: every trace of its text leaves the data dir
    done = ok(owner.delete(f"/v1/projects/{pid}"))
    assert done["removed"]["memories"] == 2
    assert status_of(owner.post("/v1/search", json={"query": "boiler", "project": pid})) == (404, "not_found")
    assert owner.get(f"/v1/memories/{boiler}", params={"project": pid}).status_code == 404
    assert found(owner, "diary Halvorsen") == {DIARY}
    assert traces(api.settings.data_dir, [b"Calor Heating", b"Gecko Lounge"]) == []


def test_who_may_change_a_project(api):
    owner, alice = api.client, as_person(api, add_person("alice"))
    add_person("bob")
    pid = ok(alice.post("/v1/projects", json={"name": "kiln"}))["id"]
    assert ok(alice.post(f"/v1/projects/{pid}/members", json={"person": "owner"}))["members"] == ["alice", "owner"]
    for response in (owner.delete(f"/v1/projects/{pid}"),  # a member, not its owner
                     owner.post(f"/v1/projects/{pid}/members", json={"person": "bob"}),
                     owner.delete(f"/v1/projects/{pid}/members/alice")):
        assert status_of(response) == (403, "forbidden")
    assert status_of(alice.delete(f"/v1/projects/{pid}/members/alice")) == (422, "invalid")  # not themselves
    assert status_of(alice.post(f"/v1/projects/{pid}/members", json={"person": "carol"})) == (404, "not_found")
    mine = ok(owner.post("/v1/projects", json={"name": "KILN"}))["id"]  # alice's name: unique per owner only
    assert mine != pid and status_of(owner.post("/v1/projects", json={"name": "kiln"})) == (409, "conflict")
    ok(owner.delete(f"/v1/projects/{mine}"))
    assert ok(owner.post(f"/v1/projects/{pid}/activate"))["active"] is True
    assert ok(owner.post("/v1/projects/deactivate"))[0]["active"] is False


def test_the_cli_runs_the_project_operations(twin_paths):
    add_person("alice")
    assert twin_cli("project", "create", "garden").returncode == 0
    assert twin_cli("project", "share", "garden", "alice").returncode == 0
    assert twin_cli("project", "activate", "garden").returncode == 0
    listed = twin_cli("project", "list").stdout
    assert "garden" in listed and "active" in listed and "alice" in listed
    assert twin_cli("learn", "Owner planted three apple trees in the garden.", "--force").returncode == 0
    learned = twin_cli("learn", "The garden shed's padlock code is 4471.", "--force")
    assert learned.returncode == 0 and "4471" not in learned.stdout, learned.stderr  # read back, masked
    ctx = Context.open(load_settings())
    try:
        spaces = set(ctx.store.namespace_counts(ctx.being))
    finally:
        ctx.close()
    assert len(spaces) == 1 and spaces.pop().startswith("project:")  # learned into the active project
    assert "into project garden (its members read it" in learned.stdout  # and it says so: alice reads it
    assert "apple trees" in twin_cli("recall", "apple trees garden").stdout  # read with the active project
    assert twin_cli("project", "deactivate").returncode == 0
    own = twin_cli("learn", "Owner's dentist is Dr Okafor on Birch Street.", "--force")
    assert own.returncode == 0 and "into project" not in own.stdout
    assert twin_cli("project", "unshare", "garden", "owner").returncode == 1
    assert twin_cli("project", "delete", "garden").returncode == 0
    assert "garden" not in twin_cli("project", "list").stdout


def test_a_token_file_that_cannot_be_made_adds_nobody(twin_paths, tmp_path):
    """`twin people add NAME --token-file PATH` where something is at PATH: exit 2, a clear line, nobody added (a
    person with a token nobody has was left behind, after a traceback)."""
    taken = tmp_path / "taken.token"
    taken.write_text("someone else's\n")
    done = twin_cli("people", "add", "carol", "--token-file", str(taken))
    assert done.returncode == 2 and "nobody was added" in done.stderr and "Traceback" not in done.stderr
    assert taken.read_text() == "someone else's\n" and "carol" not in twin_cli("people", "list").stdout
    missing = twin_cli("people", "add", "carol", "--token-file", str(tmp_path / "no" / "dir" / "t"))
    assert missing.returncode == 2 and "carol" not in twin_cli("people", "list").stdout
    assert twin_cli("people", "add", "carol", "--token-file", str(tmp_path / "carol.token")).returncode == 0


def test_a_name_that_is_no_path_segment_names_nothing_and_reaches_no_other_route(api):
    """A project (or person, or memory id) argument holding "/", "?", ".." or spaces inside: `NotFound` before any
    request, never another route ("work/members/bob" was a DELETE of bob's membership)."""
    from twin.exceptions import NotFound
    from twin.remote import DaemonTwin, path_segment

    add_person("bob")
    twin = DaemonTwin(api.url, api.token)
    twin.create_project(name="work")
    twin.share_project(project="work", person="bob")
    for ref in ("work/members/bob", "work?x=1", "..", ".", "nope/../work", "wo rk", "work#x", "%2e%2e", ""):
        with pytest.raises(NotFound):
            twin.delete_project(project=ref)
    assert twin.show_project(project="work")["members"] == ["owner", "bob"]  # nothing happened to it
    assert twin.show_project(project=" work ")["name"] == "work"  # stripped, as names are when made
    assert path_segment("memory_id", 42) == "42"
    with pytest.raises(NotFound, match="no such memory"):
        path_segment("memory_id", "1/neighbors")


def test_the_seven_operations_through_the_daemons_api_as_the_cli_sends_them(api):
    """`twin project …` with a daemon: `twin.remote.DaemonTwin` over each project route, errors mapped back."""
    from twin.exceptions import Forbidden, InvalidInput, NotFound
    from twin.remote import DaemonTwin

    add_person("alice")
    twin = DaemonTwin(api.url, api.token)
    made = twin.create_project(name="attic")
    assert twin.share_project(project="attic", person="alice")["members"] == ["owner", "alice"]
    assert twin.activate_project(project=made["id"])["active"] is True
    twin.capture_memory(content="The attic's skylight leaks when the wind is from the west.")
    assert [p["active"] for p in twin.list_projects()] == [True]
    assert twin.unshare_project(project="attic", person="alice")["members"] == ["owner"]
    assert twin.deactivate_project()[0]["active"] is False
    with pytest.raises(InvalidInput):
        twin.unshare_project(project="attic", person="owner")
    with pytest.raises(NotFound):
        twin.delete_project(project=new_id())
    bob = as_person(api, add_person("bob"))
    other = ok(bob.post("/v1/projects", json={"name": "bobs"}))["id"]
    with pytest.raises(Forbidden):
        twin.delete_project(project=other)
    assert twin.delete_project(project="attic")["removed"]["memories"] == 1
    assert [p["name"] for p in twin.list_projects()] == []


def new_id() -> str:
    from twin.operations.projects import new_project_id

    return new_project_id()
