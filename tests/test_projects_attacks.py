"""Authorisation of people and projects tested as an attacker would (issue 19's security list), over real HTTP and
the real MCP client against the API's `/mcp`: a member guessing other projects' ids, a removed member's old token,
a project named in the path, the query and the body at once, and `max_sensitivity: sensitive` inside and outside a
project the caller reaches. Every refusal is the error seed 003's table names, and no answer carries a memory of a
scope the caller does not reach."""

from __future__ import annotations

import asyncio

import httpx
import httpx2
import pytest
from in_process import add_person
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_clients import run_async
from project_world import OTHER, OWNER_PLAIN, OWNER_SECRET, SHARED_PLAIN, SHARED_SECRET, seed

from twin.operations import Context
from twin.operations import people as people_ops
from twin.operations.projects import new_project_id
from twin.settings import load_settings


@pytest.fixture
def world(keyword_api):
    """The owner's memories (one sensitive), a project `flat` shared with alice (one sensitive memory), a project
    `studio` of bob's alice is no member of; alice's and bob's clients."""
    api, owner = keyword_api, keyword_api.client
    alice_token, bob_token = add_person("alice"), add_person("bob")
    clients = [httpx.Client(base_url=api.url, headers={"Authorization": f"Bearer {t}"}, timeout=30)
               for t in (alice_token, bob_token)]
    alice, bob = clients
    _, flat, studio, other = seed(owner, bob)
    yield {"api": api, "owner": owner, "alice": alice, "bob": bob, "flat": flat, "studio": studio,
           "other": other, "alice_token": alice_token}
    for client in clients:
        client.close()


def code(response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def texts(response) -> set[str]:
    """Every memory text anywhere in a JSON answer."""
    found: set[str] = set()

    def walk(value):
        if isinstance(value, dict):
            if isinstance(value.get("content"), str):
                found.add(value["content"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(response.json())
    return found


def test_a_member_guessing_project_ids_learns_nothing(world):
    alice, studio, other = world["alice"], world["studio"], world["other"]
    guesses = [new_project_id() for _ in range(20)] + ["flat2", "project:" + studio, studio[:-1] + "u"]
    for guess in guesses:  # ids and names that resolve to nothing: 404, as seed 003's table says
        assert code(alice.post("/v1/search", json={"query": "kiln", "project": guess})) == (404, "not_found"), guess
    for bad in ("", " ", "x" * 65):
        assert code(alice.post("/v1/search", json={"query": "kiln", "project": bad}))[0] == 422
    # a name that is right but out of reach: 404 too, so guessing names tells nothing (names resolve only among
    # the caller's projects; seed 003's 403 for it would confirm the name)
    for name in ("studio", "STUDIO"):
        assert code(alice.post("/v1/search", json={"query": "kiln", "project": name})) == (404, "not_found")
    # the real id of a project she is no member of: 403 on every route, nothing read or changed
    refusals = [
        alice.post("/v1/search", json={"query": "kiln fires", "project": studio}),
        alice.post("/v1/context", json={"query": "kiln fires", "project": studio}),
        alice.get("/v1/recent", params={"project": studio}),
        alice.get("/v1/today", params={"project": studio}),
        alice.get("/api/twin/memories", params={"project": studio}),
        alice.get(f"/v1/memories/{other}", params={"project": studio}),
        alice.get(f"/v1/memories/{other}/history", params={"project": studio}),
        alice.get(f"/v1/memories/{other}/neighbors", params={"project": studio}),
        alice.patch(f"/v1/memories/{other}", params={"project": studio}, json={"importance": 0.1}),
        alice.delete(f"/v1/memories/{other}", params={"project": studio}),
        alice.post("/v1/capture", json={"content": "The studio's kiln is broken forever now.", "project": studio}),
        alice.post(f"/v1/projects/{studio}/activate"),
        alice.post(f"/v1/projects/{studio}/members", json={"person": "alice"}),
        alice.delete(f"/v1/projects/{studio}/members/bob"),
        alice.delete(f"/v1/projects/{studio}"),
        alice.post("/v1/search", json={"query": "kiln fires", "project": studio.lower()}),  # the same id
    ]
    assert [code(r) for r in refusals] == [(403, "forbidden")] * len(refusals)
    assert not [r.text for r in refusals if "studio" in r.text]  # a refusal by id never tells the project's name
    # by id with no project named: as if there were no such memory
    for response in (alice.get(f"/v1/memories/{other}"), alice.delete(f"/v1/memories/{other}")):
        assert code(response) == (404, "not_found")
    assert world["bob"].get(f"/v1/memories/{other}", params={"project": studio}).json()["content"] == OTHER
    assert [p["name"] for p in alice.get("/v1/projects").json()] == ["flat"]


def test_a_removed_members_old_token_opens_nothing(world):
    api, token = world["api"], world["alice_token"]
    assert world["alice"].post("/v1/search", json={"query": "recycling", "project": "flat"}).status_code == 200
    ctx = Context.open(load_settings())
    try:
        people_ops.remove_person(ctx, "alice")
    finally:
        ctx.close()
    alice = world["alice"]
    for response in (alice.post("/v1/search", json={"query": "recycling", "project": "flat"}),
                     alice.get("/v1/projects"), alice.get("/v1/health")):
        assert code(response) == (401, "unauthorized")
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18",
               "Authorization": f"Bearer {token}"}
    assert httpx.post(f"{api.url}/mcp", json=hello, headers=headers).status_code == 401
    assert [m for p in world["owner"].get("/v1/projects").json() for m in p["members"]] == ["owner"]


def test_a_project_named_in_path_query_and_body_must_agree(world):
    alice, owner, flat, studio = world["alice"], world["owner"], world["flat"], world["studio"]
    conflicting = [
        alice.post("/v1/search", params={"project": studio}, json={"query": "recycling", "project": flat}),
        alice.post("/v1/search", params={"project": flat}, json={"query": "recycling", "project": studio}),
        alice.get("/v1/recent", params=[("project", flat), ("project", studio)]),
        alice.post(f"/v1/projects/{flat}/activate", params={"project": studio}),
        alice.post(f"/v1/projects/{flat}/activate", json={"project": studio}),
        owner.post(f"/v1/projects/{flat}/members", params={"project": flat}, json={"person": "bob",
                                                                                 "project": studio}),
        owner.delete(f"/v1/projects/{flat}", params={"project": studio}),
    ]
    for response in conflicting:
        assert response.status_code == 422 and response.json()["error"]["field"] == "project", response.text
        assert not texts(response) - {None}
    assert [p["id"] for p in owner.get("/v1/projects").json()] == [flat]  # nothing deleted
    assert owner.get("/v1/projects").json()[0]["members"] == ["owner", "alice"]  # bob not added
    agreeing = alice.post("/v1/search", params={"project": flat}, json={"query": "recycling", "project": flat})
    assert texts(agreeing) == {SHARED_PLAIN}


def test_sensitive_only_inside_what_the_caller_reaches(world):
    alice, flat = world["alice"], world["flat"]
    asked = {"query": "code PIN card alarm recycling allotment", "max_sensitivity": "sensitive"}
    inside = alice.post("/v1/search", json={**asked, "project": flat})
    assert texts(inside) == {SHARED_SECRET, SHARED_PLAIN}  # the project's sensitive one, revealed
    assert texts(alice.post("/v1/search", json={**asked, "project": flat, "max_sensitivity": "private"})) == {
        SHARED_PLAIN}  # hidden unless asked
    assert texts(alice.post("/v1/search", json=asked)) == set()  # outside the project: nothing
    assert code(alice.post("/v1/search", json={**asked, "project": world["studio"]})) == (403, "forbidden")
    assert texts(alice.get("/v1/recent", params={"max_sensitivity": "sensitive"})) == set()
    context = alice.post("/v1/context", json={**asked, "project": flat})
    assert texts(context) == {SHARED_SECRET, SHARED_PLAIN}
    # the owner's own secret is there for the owner alone
    assert texts(world["owner"].post("/v1/search", json=asked)) == {OWNER_SECRET, OWNER_PLAIN}


def _mcp(url: str, token: str, go):
    async def session():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            return await run_async(Client(streamable_http_client(f"{url}/mcp", http_client=http)), go)

    return asyncio.run(session())


def test_mcp_knows_each_person_by_their_token(world):
    api, flat, studio = world["api"], world["flat"], world["studio"]

    async def go(client: Client):
        listed = await client.call_tool("project_list", {})
        mine = await client.call_tool("memory_search", {"query": "allotment PIN recycling kiln"})
        refused = await client.call_tool("memory_search", {"query": "kiln", "project": studio})
        unnamed = await client.call_tool("project_activate", {"project": "studio"})
        activated = await client.call_tool("project_activate", {"project": "flat"})
        written = await client.call_tool("memory_capture", {"content": "The flat's spare key is with Mrs Okoro."})
        context = await client.call_tool("memory_context", {"query": "spare key recycling allotment"})
        stats = await client.call_tool("memory_stats", {})
        return listed, mine, refused, unnamed, activated, written, context, stats

    listed, mine, refused, unnamed, activated, written, context, stats = _mcp(api.url, world["alice_token"], go)
    assert [p["id"] for p in listed.structured_content["projects"]] == [flat]
    assert mine.structured_content["results"] == []  # the owner's memories: invisible to her
    assert refused.is_error and "not a member" in refused.content[0].text  # bob's by id: 403
    assert unnamed.is_error and "no such project" in unnamed.content[0].text  # by name: as if there were none
    assert activated.structured_content["active"] is True
    pack = context.structured_content["context_pack"]
    scoped = {m["content"] for ms in pack["projectScoped"].values() for m in ms}
    assert scoped == {SHARED_PLAIN, "The flat's spare key is with Mrs Okoro."} and pack["userGlobal"] == {}
    assert stats.is_error  # the twin's counts are the owner's
    owner_view = world["owner"].post("/v1/search", json={"query": "spare key", "project": flat}).json()
    assert [r["id"] for r in owner_view["results"]] == [written.structured_content["id"]]
