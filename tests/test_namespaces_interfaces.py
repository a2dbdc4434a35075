"""Namespaces through the interfaces (seed 003: every read and write takes `namespace`, default `default`; reads
also `include_namespaces`, at most 16): over real HTTP (uvicorn on a loopback port, httpx) and over MCP (the
SDK's client against `twin mcp` spawned over stdio, and against the streamable-HTTP mount). A memory of one
namespace is not there for a call in another (search, listing, by id, update, forget), a union finds both, and
a bad name or 17 names is the caller's error naming the field."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp_clients import checked, run, serving, stdio_server

from twin.settings import load_settings

STANDUP = "Owner's standup with the platform team starts at 9:15 on weekdays."
DENTIST = "Owner's dentist appointment with Dr. Okafor is on Friday at noon."
SEVENTEEN = [f"team-{n}" for n in range(17)]


@pytest.fixture
def api(keyword_api):
    """A running API over an empty store, keyword-only (no model load), no daemon (conftest's `keyword_api`)."""
    return keyword_api


def ok(response) -> object:
    assert response.status_code == 200, response.text
    return response.json()


def field_of(response) -> str | None:
    """The field a 422 names (`{error: {code, message, field}}`), after checking it is one."""
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid" and "Traceback" not in response.text
    return error.get("field")


def ids(rows) -> list[int]:
    return [r["id"] for r in rows]


def test_namespaces_isolate_over_http(api):
    c = api.client
    work = ok(c.post("/v1/capture", json={"content": STANDUP, "namespace": "work"}))["id"]
    home = ok(c.post("/v1/capture", json={"content": DENTIST}))["id"]
    assert ids(ok(c.post("/v1/search", json={"query": "standup platform team"}))["results"]) == []
    assert ids(ok(c.post("/v1/search", json={"query": "standup platform team", "namespace": "work"}))["results"]) \
        == [work]
    union = ok(c.post("/v1/search", json={"query": "standup dentist", "includeNamespaces": ["work"]}))["results"]
    assert sorted(ids(union)) == sorted([work, home])
    assert {r["id"]: r["namespace"] for r in union} == {work: "work", home: "default"}
    assert ids(ok(c.get("/api/twin/memories"))) == [home]
    assert ids(ok(c.get("/api/twin/memories", params={"namespace": "work"}))) == [work]
    assert ids(ok(c.get("/api/twin/memories", params={"include_namespaces": ["work"]}))) == [home, work]
    assert ids(ok(c.get("/api/twin/memories", params={"q": "standup"}))) == []
    assert ids(ok(c.get("/api/twin/memories", params={"q": "standup", "namespace": "work"}))) == [work]
    for path in ("/v1/recent", "/v1/today"):
        assert ids(ok(c.get(path))) == [home]
        assert ids(ok(c.get(path, params={"namespace": "work"}))) == [work]
        assert ids(ok(c.get(path, params={"namespace": "work", "include_namespaces": ["default"]}))) == [home, work]
    context = ok(c.post("/v1/context", json={"query": "standup", "namespace": "work"}))
    assert ids(context["results"]) == [work] and [ids(v) for v in context["recent"].values()] == [[work]]
    for path in (f"/v1/memories/{work}", f"/v1/memories/{work}/history", f"/v1/memories/{work}/neighbors"):
        assert c.get(path).status_code == 404  # not there for a call in `default`
        assert ok(c.get(path, params={"namespace": "work"}))
        assert ok(c.get(path, params={"include_namespaces": ["work"]}))
    assert ok(c.get(f"/v1/memories/{work}", params={"namespace": "work"}))["namespace"] == "work"


def test_writes_stay_in_their_namespace_over_http(api):
    c = api.client
    work = ok(c.post("/v1/capture", json={"content": STANDUP, "namespace": "work"}))["id"]
    twin = ok(c.post("/v1/capture", json={"content": STANDUP}))
    assert twin["id"] != work and not twin.get("deduplicated")  # identity is per namespace (invariant 2)
    assert ok(c.post("/v1/capture", json={"content": STANDUP, "namespace": "work"})) == {
        "id": work, "deduplicated": True}
    patch = {"importance": 0.9}
    assert c.patch(f"/v1/memories/{work}", json=patch).status_code == 404
    assert ok(c.patch(f"/v1/memories/{work}", json=patch, params={"namespace": "work"}))["importance"] == 0.9
    seeded = ok(c.post("/api/twin/memories", json={"content": DENTIST, "namespace": "work"}))
    assert seeded["namespace"] == "work"
    learned = ok(c.post("/api/twin/learn", json={"text": "I moved the quarterly planning to Mondays.",
                                                 "namespace": "work"}))
    assert learned and {m["namespace"] for m in learned} == {"work"}
    recap = ok(c.post("/v1/session-recap", json={"summary": "Owner decided the release train leaves on Tuesdays.",
                                                 "namespace": "work"}))
    assert recap["created"] and {m["namespace"] for m in recap["created"]} == {"work"}
    stats = ok(c.get("/v1/stats"))
    assert stats["by_namespace"]["default"]["warm"] == 1
    assert stats["by_namespace"]["work"]["warm"] == 3 + len(recap["created"])
    assert c.delete(f"/v1/memories/{work}").status_code == 404
    assert c.delete(f"/api/twin/memories/{work}").status_code == 404
    assert ok(c.delete(f"/api/twin/memories/{work}", params={"namespace": "work"})) == {"ok": True}
    assert ids(ok(c.get("/api/twin/memories", params={"q": "standup"}))) == [twin["id"]]  # the other one stays


def test_namespace_errors_name_their_field_over_http(api):
    c = api.client
    assert field_of(c.post("/v1/search", json={"query": "x", "include_namespaces": SEVENTEEN})) \
        == "include_namespaces"
    assert field_of(c.get("/api/twin/memories", params={"include_namespaces": SEVENTEEN})) == "include_namespaces"
    assert field_of(c.get("/v1/recent", params={"include_namespaces": ["ok", "not ok"]})) == "include_namespaces"
    assert field_of(c.post("/v1/capture", json={"content": STANDUP, "namespace": "x" * 65})) == "namespace"
    assert field_of(c.post("/api/twin/learn", json={"text": STANDUP, "namespace": ""})) == "namespace"
    assert field_of(c.get("/v1/memories/1", params={"namespace": "a b"})) == "namespace"
    assert field_of(c.delete("/v1/memories/1", params={"namespace": "é"})) == "namespace"
    assert ok(c.post("/v1/search", json={"query": "x", "include_namespaces": SEVENTEEN[:16]}))["results"] == []
    assert ok(c.get("/api/twin/memories")) == []  # nothing was written by the refused calls


def test_dream_and_reflect_take_the_namespace_over_http(api):
    """The dream walks the namespace it is given (every one when none is), a bad name is a 422 naming it on the
    dream and on reflection, and an unknown field is refused."""
    c = api.client
    for content, namespace in ((STANDUP, "work"), (DENTIST, "default"), ("Owner's locker code at work is 1234.",
                                                                        "work")):
        ok(c.post("/v1/remember", json={"content": content, "namespace": namespace}))
    assert ok(c.post("/v1/dream-cycle", json={"namespace": "work"}))["walked"] == 2
    assert ok(c.post("/v1/dream-cycle", json={"namespace": "default"}))["walked"] == 1
    assert ok(c.post("/v1/dream-cycle", json={"namespace": "empty-one"}))["walked"] == 0
    assert ok(c.post("/v1/dream-cycle", json={}))["walked"] == 3 and ok(c.post("/v1/dream-cycle"))["walked"] == 3
    for path in ("/v1/dream-cycle", "/api/twin/reflect"):
        for bad in ("", "a b", "x" * 65, "ünï"):
            assert field_of(c.post(path, json={"namespace": bad})) == "namespace", (path, bad)
        assert field_of(c.post(path, json={"namespace": "work", "namespaces": ["x"]})) == "namespaces"
    assert ok(c.post("/api/twin/reflect", json={"namespace": "work"}))["ran"] is False  # no model provider


READS_WITH_UNION = {"memory_context", "memory_search", "memory_recent", "memory_today", "memory_neighbors"}
WITHOUT_NAMESPACE = {"memory_stats", "memory_adoption", "project_list", "project_create", "project_delete",
                     "project_share", "project_unshare", "project_activate", "project_deactivate"}


def _mcp_session(client: Client) -> dict:
    """Capture in `work` and in `default`, then read and forget across them, over one connection."""
    async def go():
        listed = {t.name: t for t in (await client.list_tools()).tools}

        async def call(name, **arguments):
            return checked(listed[name], await client.call_tool(name, arguments))

        out = {"schemas": {name: set(t.input_schema["properties"]) for name, t in listed.items()}}
        out["work"] = (await call("memory_capture", content=STANDUP, namespace="work"))["id"]
        out["home"] = (await call("memory_capture", content=DENTIST))["id"]
        out["from_default"] = await call("memory_search", query="standup platform team")
        out["from_work"] = await call("memory_search", query="standup platform team", namespace="work")
        out["union"] = await call("memory_search", query="standup dentist", include_namespaces=["work"])
        out["recent_work"] = await call("memory_recent", namespace="work")
        out["stats"] = await call("memory_stats")
        out["too_many"] = await client.call_tool("memory_search", {"query": "x", "include_namespaces": SEVENTEEN})
        out["bad_name"] = await client.call_tool("memory_capture", {"content": STANDUP, "namespace": "no/slash"})
        out["forget_default"] = await client.call_tool("memory_forget", {"id": out["work"]})
        out["forget_work"] = await call("memory_forget", id=out["work"], namespace="work")
        out["after"] = await call("memory_search", query="standup", namespace="work")
        return out

    return run(client, lambda _: go())


def _assert_mcp_session(s: dict) -> None:
    for name, properties in s["schemas"].items():
        assert ("namespace" in properties) is (name not in WITHOUT_NAMESPACE), name
        assert ("include_namespaces" in properties) is (name in READS_WITH_UNION), name
    assert s["from_default"]["results"] == []
    assert ids(s["from_work"]["results"]) == [s["work"]]
    assert sorted(ids(s["union"]["results"])) == sorted([s["work"], s["home"]])
    assert ids(s["recent_work"]["memories"]) == [s["work"]]
    assert s["stats"]["by_namespace"] == {"default": {"warm": 1, "cold": 0}, "work": {"warm": 1, "cold": 0}}
    assert s["too_many"].is_error and "include_namespaces" in s["too_many"].content[0].text
    assert s["bad_name"].is_error and "namespace" in s["bad_name"].content[0].text
    assert s["forget_default"].is_error and f"no memory #{s['work']}" in s["forget_default"].content[0].text
    assert s["forget_work"]["ok"] is True and s["after"]["results"] == []


def test_namespaces_isolate_over_mcp_stdio(twin_paths, monkeypatch):
    monkeypatch.setenv("TWIN_EMBED_BACKEND", "none")  # `twin mcp` inherits it (the host's env block)
    _assert_mcp_session(_mcp_session(Client(stdio_server())))


def test_namespaces_isolate_over_mcp_streamable_http(twin_paths, monkeypatch):
    from starlette.applications import Starlette

    from twin.api.mcp_route import mount
    from twin.remote import LocalTwin

    monkeypatch.setenv("TWIN_EMBED_BACKEND", "none")
    app = Starlette()
    with LocalTwin(load_settings()) as twin:
        mount(app, twin)
        with serving(app) as url:
            _assert_mcp_session(_mcp_session(Client(f"{url}/mcp")))
