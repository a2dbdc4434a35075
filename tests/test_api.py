"""The HTTP API over real HTTP: uvicorn on a free loopback port, httpx against it (tests/api_server.py). Every
route's success and error shapes, the door (token, Host, Origin, body size), the limit cap, erasure, and
sensitive memories hidden on every read path unless asked."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from erasure import traces

from twin.api.token import rotate_token
from twin.store import Store, edges

PIN = "Owner's bank card PIN is 8264."
COFFEE = "Owner prefers dark roast over espresso."


@pytest.fixture
def api(keyword_api):
    """A running API over an empty store, keyword-only (no model load), no daemon (conftest's `keyword_api`)."""
    return keyword_api


def post(api, path: str, body: dict) -> dict:
    response = api.client.post(path, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def error_of(response, status: int) -> dict:
    """The `{code, message, field?}` of an error answer, after checking its status and shape."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), body
    assert "Traceback" not in response.text
    return body["error"]


def test_seed_000_routes(api):
    made = post(api, "/api/twin/memories", {"kind": "preference", "content": COFFEE, "source": "muse",
                                            "importance": 0.5, "tags": ["coffee"]})
    assert {k: made[k] for k in ("kind", "content", "source", "importance", "tags")} == {
        "kind": "preference", "content": COFFEE, "source": "muse", "importance": 0.5, "tags": ["coffee"]}
    assert made["id"] >= 1 and made["created_at"].endswith("Z") and made["last_accessed"] is None
    again = post(api, "/api/twin/memories", {"content": COFFEE})
    assert again["id"] == made["id"] and again["importance"] > 0.5  # seed 000: a duplicate reinforces
    post(api, "/api/twin/memories", {"kind": "fact", "content": "Owner's sister Mira lives in Porto."})
    listed = api.client.get("/api/twin/memories").json()
    assert [m["content"] for m in listed] == ["Owner's sister Mira lives in Porto.", COFFEE]  # newest first
    found = api.client.get("/api/twin/memories", params={"q": "dark roast", "limit": 5}).json()
    assert found[0]["id"] == made["id"] and found[0]["score"] > 0
    assert api.client.get("/api/twin/memories", params={"kind": "fact"}).json()[0]["kind"] == "fact"
    refused = error_of(api.client.post("/api/twin/memories", json={"content": "ok"}), 422)
    assert refused["code"] == "rejected" and refused["field"] == "content"
    assert api.client.delete(f"/api/twin/memories/{made['id']}").json() == {"ok": True}
    assert error_of(api.client.delete(f"/api/twin/memories/{made['id']}"), 404)["code"] == "not_found"
    learned = post(api, "/api/twin/learn", {"text": "I just switched to a 5am wake-up and I hate it.",
                                            "source": "muse"})
    assert len(learned) == 1 and "5am" in learned[0]["content"] and learned[0]["source"] == "muse"
    assert post(api, "/api/twin/reflect", {}) | {"note": ""} == {
        "ran": False, "new_memories": 0, "signals": [], "widgets": [], "thought": None, "profile_updated": False,
        "note": ""}  # no model provider: reflection does not run (seed 001: degrade)
    diary = api.client.get("/api/twin/activity").json()
    assert diary[0]["id"] > diary[-1]["id"] and all(COFFEE not in line["text"] for line in diary)
    assert any(line["kind"] == "forgot" for line in diary)


def test_capture_answers_in_seed_003_shapes(api):
    assert post(api, "/v1/capture", {"content": "thanks"}) == {"id": None, "rejected": "filler: thanks"}
    forced = post(api, "/v1/capture", {"content": "Owner has a cat.", "force": True})
    assert set(forced) == {"id"}
    first = post(api, "/v1/capture", {"content": "Owner lives in Lisbon.", "source_type": "chat"})
    assert post(api, "/v1/capture", {"content": "Owner lives in Lisbon."}) == {"id": first["id"],
                                                                               "deduplicated": True}
    moved = post(api, "/v1/capture", {"content": "Owner lives in Berlin."})
    assert moved["superseded"] == [first["id"]] and "Berlin" in moved["reason"]
    refined = post(api, "/v1/capture", {"content": "Owner lives in Berlin with Lena."})
    assert refined["id"] == moved["id"] and refined["updated"] is True
    stored = api.client.get(f"/v1/memories/{moved['id']}").json()
    assert stored["content"] == "Owner lives in Berlin with Lena." and stored["provenance"]["confidence"] == 1.0
    history = api.client.get(f"/v1/memories/{first['id']}/history").json()
    assert [m["id"] for m in history["chain"]] == [first["id"], moved["id"]] and history["current"] == moved["id"]
    plain = post(api, "/v1/remember", {"content": "Owner lives in Madrid."})  # remember: no supersession
    assert set(plain) == {"id"} and api.client.get(f"/v1/memories/{moved['id']}").json()["status"] == "active"


def test_update_keeps_id_hits_and_edges_and_drops_the_vector(api):
    a = post(api, "/v1/remember", {"content": "Owner's favourite tea is sencha.", "tags": ["tea"]})["id"]
    b = post(api, "/v1/remember", {"content": "Owner drinks tea every afternoon."})["id"]
    with Store(api.settings.db_path) as store:
        store.conn.execute("UPDATE memories SET hits = 7 WHERE id = ?", (a,))
        store.save_embeddings([a], np.ones((1, 4), dtype=np.float32) / 2, "test-model")
        edges.insert_edges(store, [(a, b, "co_occurs", 0.8, "2026-01-01T00:00:00Z")])
    changed = api.client.patch(f"/v1/memories/{a}", json={"content": "Owner's favourite tea is gyokuro.",
                                                          "confidence": 0.7}).json()
    assert changed["id"] == a and changed["hits"] == 7 and changed["content"].endswith("gyokuro.")
    assert changed["tags"] == ["tea"] and changed["provenance"]["confidence"] == 0.7 and changed["updated_at"]
    with Store(api.settings.db_path) as store:
        assert store.count_vectors([a]) == 0 and edges.count_touching(store, [a]) == 1
    only_kind = api.client.patch(f"/v1/memories/{b}", json={"kind": "episode"}).json()
    assert only_kind["kind"] == "episode" and only_kind["content"] == "Owner drinks tea every afternoon."
    conflict = error_of(api.client.patch(f"/v1/memories/{b}", json={"content": "Owner's favourite tea is gyokuro."}),
                        409)
    assert conflict == {"code": "conflict", "message": "another memory already says this", "field": "content"}
    assert "give at least one field to change" in error_of(api.client.patch(f"/v1/memories/{b}", json={}), 422)[
        "message"]
    assert error_of(api.client.patch("/v1/memories/99999", json={"kind": "fact"}), 404)["code"] == "not_found"


def test_update_passes_the_worthiness_gate_like_capture(api):
    """New content that capture would refuse (filler in any language, text under 12 characters) is refused by an
    update too: 422 `rejected` with the gate's reason, the memory unchanged; metadata alone still changes."""
    fact = "Owner's dentist appointment is on the 14th at Dr. Okafor's."
    made = post(api, "/v1/remember", {"content": fact, "tags": ["health"]})["id"]
    for filler in ("k", "ok", "Thanks so much!", "merci 👍", "👍👍", "Owner is fine.", "short one"):
        refused = error_of(api.client.patch(f"/v1/memories/{made}", json={"content": filler}), 422)
        assert refused["code"] == "rejected" and refused["field"] == "content", filler
        assert "filler" in refused["message"] or "shorter than 12" in refused["message"], refused
        assert api.client.get(f"/v1/memories/{made}").json()["content"] == fact
    assert api.client.patch(f"/v1/memories/{made}", json={"importance": 0.9}).json()["content"] == fact
    moved = "Owner's dentist appointment moved to the 21st at Dr. Okafor's."
    assert api.client.patch(f"/v1/memories/{made}", json={"content": moved}).json()["content"] == moved


@pytest.mark.parametrize("bad", ["1.0", "+1", "01", "%201", "1_000", "1e0", "0", "-1", "abc", "１"])
def test_an_id_in_a_path_is_plain_digits_or_a_422(api, bad):
    """`1.0`, `+1`, `01`, ` 1`, `1_000`, a full-width digit … are no memory id on any route that takes one in its
    path (GET, PATCH, DELETE, neighbors, history, seed 000's DELETE): 422 naming it, and nothing is touched."""
    made = post(api, "/v1/remember", {"content": "Owner's bike lock code is kept in the blue notebook."})["id"]
    assert made == 1
    for method, path, body in (("GET", "/v1/memories/{}", None), ("PATCH", "/v1/memories/{}", {"kind": "episode"}),
                               ("DELETE", "/v1/memories/{}", None), ("GET", "/v1/memories/{}/neighbors", None),
                               ("GET", "/v1/memories/{}/history", None), ("DELETE", "/api/twin/memories/{}", None)):
        refused = error_of(api.client.request(method, path.format(bad), json=body), 422)
        assert refused["field"] == "memory_id" and "plain digits" in refused["message"], (method, path)
        assert "pydantic" not in refused["message"]
    kept = api.client.get("/v1/memories/1").json()
    assert kept["kind"] == "fact" and kept["content"].startswith("Owner's bike lock")


def test_what_came_over_the_api_without_a_source_is_labelled_api(api):
    """One default source for every write over the API (learn, seed 000's memories, capture, remember); a source
    given is kept as given."""
    learned = post(api, "/api/twin/learn", {"text": "My niece Lior plays the cello in a youth orchestra."})
    made = post(api, "/api/twin/memories", {"content": "Owner's car is a grey 2014 Skoda Octavia."})
    captured = post(api, "/v1/capture", {"content": "Owner's gym closes at 22:00 on weekdays."})
    remembered = post(api, "/v1/remember", {"content": "Owner's building has a bike room in the basement."})
    sources = [learned[0]["source"], made["source"]] + [
        api.client.get(f"/v1/memories/{x['id']}").json()["source"] for x in (captured, remembered)]
    assert sources == ["api"] * 4
    named = post(api, "/api/twin/learn", {"text": "My dentist is Dr. Haruka Sato in Graz.", "source": "notes"})
    assert named[0]["source"] == "notes"


def test_the_token_is_required_and_rotates(api):
    with api.anonymous() as anonymous:
        for method, path in (("GET", "/api/twin/memories"), ("POST", "/v1/search"), ("GET", "/openapi.json"),
                             ("DELETE", "/api/twin/memories/1")):
            refused = anonymous.request(method, path)
            assert error_of(refused, 401)["code"] == "unauthorized" and refused.headers["www-authenticate"] == "Bearer"
        wrong = anonymous.get("/v1/stats", headers={"Authorization": "Bearer " + api.token[:-1] + "x"})
        assert error_of(wrong, 401)["code"] == "unauthorized"
        assert error_of(anonymous.get("/v1/stats", headers={"Authorization": api.token}), 401)  # no "Bearer"
        new = rotate_token(api.settings.api_token_path)
        assert error_of(api.client.get("/v1/stats"), 401)  # the old token stops at once
        assert anonymous.get("/v1/stats", headers={"Authorization": f"Bearer {new}"}).status_code == 200
    assert oct(api.settings.api_token_path.stat().st_mode & 0o777) == "0o600"


def test_foreign_host_and_origin_are_refused(api):
    for host in ("evil.example", "evil.example:7821", "192.168.1.20"):
        assert error_of(api.client.get("/v1/stats", headers={"Host": host}), 403)["code"] == "forbidden_host"
    for host in ("localhost", f"127.0.0.1:{api.settings.api_port}", f"[::1]:{api.settings.api_port}"):
        assert api.client.get("/v1/stats", headers={"Host": host}).status_code == 200
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{api.settings.api_port + 1}"):
        refused = api.client.post("/v1/search", json={"query": "x"}, headers={"Origin": origin})
        assert error_of(refused, 403)["code"] == "forbidden_origin"
    own = api.client.get("/v1/stats", headers={"Origin": f"http://127.0.0.1:{api.settings.api_port}"})
    assert own.status_code == 200 and "access-control-allow-origin" not in own.headers
    preflight = api.client.options("/v1/search", headers={"Origin": "http://evil.example",
                                                         "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers


def test_bodies_over_one_mebibyte_are_refused(api):
    big = json.dumps({"text": "a" * (1 << 20)}).encode()
    assert error_of(api.client.post("/api/twin/learn", content=big,
                                    headers={"content-type": "application/json"}), 413)["code"] == "too_large"

    def chunks():  # no Content-Length: the bytes are counted as they arrive
        yield b'{"text": "'
        for _ in range(20):
            yield b"b" * 65536
        yield b'"}'

    streamed = api.client.post("/api/twin/learn", content=chunks(), headers={"content-type": "application/json"})
    assert error_of(streamed, 413)["code"] == "too_large"
    assert api.client.get("/api/twin/memories").json() == []  # nothing of either was learned
    fits = post(api, "/api/twin/learn", {"text": "Owner keeps bees on the roof of the garage." + " " * 500_000})
    assert len(fits) == 1


def numbered(api, count: int, text: str, day: str) -> None:
    """`count` memories `text.format(n)`, one a second from midnight UTC of `day` (n = 0 the oldest)."""
    with Store(api.settings.db_path) as store, store.atomic():
        for n in range(count):
            store.insert_memory("owner", "fact", text.format(n), "test", 0.5,
                                created_at=f"{day}T00:{n // 60:02d}:{n % 60:02d}Z")


def test_limit_is_at_most_200_and_nothing_older_is_hidden(api):
    numbered(api, 230, "Owner noted item number {} today.", "2026-01-01")
    listed = api.client.get("/api/twin/memories", params={"limit": 200}).json()
    assert len(listed) == 200 and listed[0]["content"] == "Owner noted item number 229 today."
    assert error_of(api.client.get("/api/twin/memories", params={"limit": 10**30}), 422)["field"] == "limit"
    assert 0 < len(post(api, "/v1/search", {"query": "item number", "limit": 200})["results"]) <= 200
    too_many = api.client.post("/v1/search", json={"query": "item number", "limit": 5000})
    assert error_of(too_many, 422)["field"] == "limit"
    older = api.client.get("/v1/recent", params={"since": "2026-01-01T00:00:00Z", "limit": 200}).json()
    assert len(older) == 200 and older[-1]["content"] == "Owner noted item number 30 today."
    assert error_of(api.client.get("/v1/recent", params={"since": "2026-01-01T00:00:00Z", "limit": 230}), 422)
    assert len(api.client.get("/v1/recent", params={"since": "2026-01-01T00:03:00Z"}).json()) == 50
    assert error_of(api.client.get("/api/twin/memories", params={"limit": 0}), 422)["field"] == "limit"
    assert error_of(api.client.post("/v1/search", json={"query": "x", "limit": -1}), 422)["field"] == "limit"


def test_the_next_page_holds_when_the_last_memory_shown_was_forgotten(api):
    numbered(api, 12, "Owner filed receipt number {}.", "2026-02-01")
    first = api.client.get("/v1/memories", params={"limit": 5}).json()
    last = first[-1]
    api.client.delete(f"/v1/memories/{last['id']}").raise_for_status()
    missed = api.client.get("/v1/memories", params={"limit": 5, "after": last["id"]})
    assert error_of(missed, 404)["field"] == "after" and "after_created_at" in missed.json()["error"]["message"]
    rest = api.client.get("/v1/memories", params={"limit": 200, "after": last["id"],
                                                 "after_created_at": last["created_at"]}).json()
    assert [m["content"] for m in rest] == [f"Owner filed receipt number {n}." for n in range(6, -1, -1)]
    assert error_of(api.client.get("/v1/memories", params={"after_created_at": last["created_at"]}), 422)[
        "field"] == "after_created_at"
    assert error_of(api.client.get("/v1/memories", params={"after": 1, "after_created_at": "soon"}), 422)[
        "field"] == "after_created_at"


def test_a_value_of_the_wrong_json_type_is_refused_naming_its_field(api):
    post(api, "/v1/remember", {"content": "Owner keeps the spare bike key in the blue jar."})
    for body, field in (({"query": "bike key", "limit": True}, "limit"), ({"query": "bike key", "limit": "3"}, "limit"),
                        ({"query": "bike key", "limit": 2.5}, "limit"), ({"query": 7}, "query"),
                        ({"query": "bike key", "since": False}, "since")):
        assert error_of(api.client.post("/v1/search", json=body), 422)["field"] == field, body
    refused = api.client.post("/v1/remember", json={"content": "Owner likes figs.", "importance": True})
    assert error_of(refused, 422)["field"] == "importance"
    assert error_of(api.client.post("/v1/remember", json={"content": ["Owner likes figs."]}), 422)["field"] == "content"
    assert [m["content"] for m in api.client.get("/api/twin/memories").json()] == [
        "Owner keeps the spare bike key in the blue jar."]  # nothing refused was stored
    assert len(post(api, "/v1/search", {"query": "bike key", "limit": 3})["results"]) == 1  # an integer still is one
    assert post(api, "/v1/remember", {"content": "Owner likes figs.", "importance": 1})["id"]  # … and a number


def test_a_connectors_source_is_refused_so_its_file_cannot_take_the_memory_with_it(api, tmp_path):
    for source in ("file:/home/owner/notes.md", "email:18c2f", "telegram:42", "browser"):
        refused = api.client.post("/v1/remember", json={"content": "Owner's bike lock code is 2231.", "source": source})
        assert error_of(refused, 422)["field"] == "source" and "name your own" in refused.json()["error"]["message"]
        learned = api.client.post("/api/twin/learn", json={"text": "I keep my bike at the station.", "source": source})
        assert error_of(learned, 422)["field"] == "source"
    assert api.client.get("/api/twin/memories").json() == []
    own = post(api, "/v1/remember", {"content": "Owner's bike lock code is 2231.", "source": "notes:file-bike"})
    assert own["id"] and api.client.get(f"/v1/memories/{own['id']}").json()["source"] == "notes:file-bike"


def test_context_keeps_to_since_as_search_does(api):
    post(api, "/v1/remember", {"content": "Owner tunes the cello every Sunday morning."})
    assert post(api, "/v1/context", {"query": "cello"})["results"]
    later = post(api, "/v1/context", {"query": "cello", "since": "2099-01-01T00:00:00Z"})
    assert later["results"] == [] and later["recent"] == {}
    assert error_of(api.client.post("/v1/context", json={"query": "cello", "since": "abc"}), 422)["field"] == "since"


def test_a_time_before_the_year_1000_is_an_ordinary_bound_on_every_read(api):
    """A year of fewer than four digits was written unpadded ("999-05-05T…"): a 500 on search, and bounds that
    compared as text after 2026 on the lists (found by a breaker run)."""
    post(api, "/v1/remember", {"content": "Owner repaints the garden gate every spring."})
    for since in ("0001-01-01", "0999-05-05T00:00:00Z", "0500-01-01T00:00:00+00:00"):
        assert len(post(api, "/v1/search", {"query": "garden gate", "since": since})["results"]) == 1, since
        assert len(post(api, "/v1/context", {"query": "garden gate", "since": since})["results"]) == 1, since
        assert len(api.client.get("/v1/recent", params={"since": since}).json()) == 1, since
        assert len(api.client.get("/api/twin/memories", params={"since": since}).json()) == 1, since
    # a shift that leaves year 1 is a clear 422, never a 500
    refused = api.client.post("/v1/search", json={"query": "gate", "since": "0001-01-01T00:00:00+05:00"})
    assert error_of(refused, 422)["field"] == "since"


def test_an_id_or_cursor_beyond_sqlites_integer_is_a_clear_answer_never_a_500(api):
    kept = post(api, "/v1/remember", {"content": "Owner's canoe paddle hangs in the garage."})["id"]
    for big in (2**63, 10**30):
        for method, path in (("GET", f"/v1/memories/{big}"), ("DELETE", f"/v1/memories/{big}"),
                             ("GET", f"/v1/memories/{big}/neighbors"), ("GET", f"/v1/memories/{big}/history")):
            answer = api.client.request(method, path)
            assert answer.status_code in (404, 422) and "Traceback" not in answer.text, (method, path, answer.text)
        for path in ("/v1/activity", "/v1/memories", "/v1/activity/stream"):
            assert error_of(api.client.get(path, params={"after": big}), 422)["field"] == "after", path
    assert api.client.get("/v1/activity", params={"after": 2**63 - 1}).json() == []
    assert api.client.get(f"/v1/memories/{kept}").status_code == 200


def test_learn_answers_say_what_was_not_read_and_why_nothing_was_kept(api):
    long = " ".join(f"Owner noted that shelf {n} holds the {n}th box of old letters." for n in range(1, 21))
    done = post(api, "/v1/learn", {"text": long})
    assert len(done["created"]) == 12 and "the rest of it was not read" in done["note"]
    short = post(api, "/v1/learn", {"text": "ok"})
    assert short["created"] == [] and short["rejected"] == [{"content": None, "reason": "filler: ok"}]
    assert short["note"] is None
    # seed 001's list answer says it in headers (an empty list for a megabyte of text had no reason)
    legacy = api.client.post("/api/twin/learn", json={"text": "x" * 1_000_000})
    assert legacy.json() == [] and legacy.headers["Twin-Not-Stored"] == "1" and "Twin-Note" not in legacy.headers
    legacy = api.client.post("/api/twin/learn", json={"text": long.replace("Owner", "The owner")})
    assert "the rest of it was not read" in legacy.headers["Twin-Note"], legacy.headers


def test_a_profile_edit_of_the_wrong_shape_is_refused_and_changes_nothing(api):
    good = {"facts": ["Owner rows on the Douro."], "goals": [], "preferences": [], "routines": [], "tone": "warm"}
    assert api.client.put("/v1/profile", json=good).status_code == 200
    for bad, field in (({**good, "facts": "Owner rows."}, "facts"), ({**good, "goals": [1, 2]}, "goals"),
                       ({**good, "tone": 5}, "tone"), ({**good, "routines": [None]}, "routines")):
        assert error_of(api.client.put("/v1/profile", json=bad), 422)["field"] == field, bad
    assert api.client.get("/v1/profile").json()["facts"] == ["Owner rows on the Douro."]


def test_a_body_that_is_missing_not_json_or_not_an_object_is_an_error_naming_body(api):
    headers = {"content-type": "application/json"}
    for content, said in ((b"", "a JSON object is required"), (b"{bad", "not valid JSON"),
                          (b"[1, 2]", "must be a JSON object"), (b'"text"', "must be a JSON object")):
        answer = api.client.post("/v1/search", content=content, headers=headers)
        assert error_of(answer, 422)["field"] == "body" and said in answer.json()["error"]["message"], content
    text = api.client.post("/v1/search", content=b"query=tea", headers={"content-type": "text/plain"})
    assert error_of(text, 422)["field"] == "body"
    broken = api.client.post("/v1/remember", content=b'{"content": "Owner likes \xff tea."}', headers=headers)
    assert broken.status_code in (400, 422) and broken.json()["error"]["field"] == "body"
    unknown = api.client.post("/v1/search", json={"query": "tea", "project": "no-such-project"})
    assert error_of(unknown, 404)["field"] == "project"
    made = post(api, "/v1/remember", {"content": "Owner likes jasmine tea in the evening."})["id"]
    nothing = api.client.patch(f"/v1/memories/{made}", json={"kind": None})
    assert "give at least one field to change (content, kind" in error_of(nothing, 422)["message"]
    assert error_of(nothing, 422).get("field") != "content"


def test_a_blank_query_is_the_callers_error_not_an_empty_answer(api):
    for path in ("/v1/search", "/v1/context"):
        for blank in ("", "   \t ", "\u202e\u0000\ufeff", "\u200b\u200d \u2066"):  # invisible alone is blank
            assert error_of(api.client.post(path, json={"query": blank}), 422)["field"] == "query", (path, blank)
    for blank in ("\u202e\u0000\ufeff", "\ufeff"):
        refused = api.client.post("/v1/remember", json={"content": blank})
        assert error_of(refused, 422)["field"] == "content", blank
        assert error_of(api.client.post("/v1/learn", json={"text": blank}), 422)["field"] == "text", blank
    assert api.client.get("/api/twin/memories", params={"q": ""}).status_code == 200  # no q: the listing


def test_the_limit_rule_refuses_what_is_not_an_integer():
    from twin.exceptions import InvalidInput
    from twin.limits import checked_limit

    assert checked_limit(np.int64(5)) == 5 and checked_limit(200) == 200
    for bad in (True, False, 2.0, "3", None, 0, 201):
        with pytest.raises(InvalidInput):
            checked_limit(bad)


def test_delete_erases_text_and_vector_bytes(api):
    keep = post(api, "/v1/remember", {"content": "Owner waters the quinceberry tree on Sundays."})["id"]
    gone = post(api, "/v1/remember", {"content": "Owner hid the zorblatine key under the third flowerpot."})["id"]
    vector = np.random.default_rng(7).standard_normal((1, 384)).astype(np.float32)
    vector /= np.linalg.norm(vector)
    with Store(api.settings.db_path) as store:
        store.save_embeddings([gone], vector, "test-model")
        edges.insert_edges(store, [(gone, keep, "co_occurs", 0.7, "2026-01-01T00:00:00Z")])
    assert traces(api.settings.data_dir, ["zorblatine"], [vector.tobytes()])  # the scan can fail: it is there
    answer = api.client.delete(f"/v1/memories/{gone}").json()
    assert answer["ok"] and answer["removed"]["memories"] == 1 and answer["removed"]["vectors"] == 1
    assert answer["removed"]["edges"] == 1
    assert traces(api.settings.data_dir, ["zorblatine", "flowerpot"], [vector.tobytes()]) == []
    assert traces(api.settings.data_dir, ["quinceberry"])  # the other memory is still there
    assert error_of(api.client.get(f"/v1/memories/{gone}"), 404)["code"] == "not_found"


def test_sensitive_memories_are_hidden_on_every_read_path(api):
    pin = post(api, "/v1/remember", {"content": PIN})["id"]
    other = post(api, "/v1/remember", {"content": "Owner's bank card is blue with a card number hidden."})["id"]
    coffee = post(api, "/v1/remember", {"content": COFFEE, "sensitivity": "public"})["id"]
    with Store(api.settings.db_path) as store:
        assert store.get(pin).sensitivity == "sensitive" and store.get(coffee).sensitivity == "public"
        edges.insert_edges(store, [(other, pin, "co_occurs", 0.9, "2026-01-01T00:00:00Z")])

    def seen(path: str, body: dict | None = None, **params) -> str:
        response = api.client.post(path, json=body) if body is not None else api.client.get(path, params=params)
        assert response.status_code == 200, response.text
        return response.text

    reads = [("/api/twin/memories", None, {}), ("/api/twin/memories", None, {"q": "bank card PIN"}),
             ("/v1/search", {"query": "bank card PIN"}, {}), ("/v1/context", {"query": "bank card PIN"}, {}),
             ("/v1/recent", None, {}), ("/v1/today", None, {}), (f"/v1/memories/{pin}", None, {}),
             (f"/v1/memories/{other}/neighbors", None, {}), (f"/v1/memories/{pin}/history", None, {})]
    for path, body, params in reads:
        assert "8264" not in seen(path, body, **params), path
    asked = {"max_sensitivity": "sensitive"}
    for path, body, params in reads:
        assert "8264" in seen(path, body and {**body, **asked}, **(params | asked if body is None else params)), path
    camel = seen("/v1/search", {"query": "bank card PIN", "maxSensitivity": "sensitive"})
    assert "8264" in camel
    public_only = json.loads(seen("/v1/search", {"query": "bank card espresso roast", "max_sensitivity": "public"}))
    assert [r["id"] for r in public_only["results"]] == [coffee]
    assert [m["id"] for m in json.loads(seen("/v1/recent", max_sensitivity="public"))] == [coffee]
    hidden = api.client.get(f"/v1/memories/{pin}").json()["content"]
    assert "max_sensitivity" in hidden  # the API's own argument is what the hidden text names


def test_search_weights_context_and_degraded(api):
    post(api, "/v1/remember", {"content": "Owner's commit a91f3c fixed the login bug."})
    post(api, "/v1/remember", {"content": "Owner prefers short meetings in the morning.", "kind": "preference"})
    found = post(api, "/v1/search", {"query": "a91f3c", "weights": {"keyword": 1, "vector": 0, "graph": 0.05}})
    assert "a91f3c" in found["results"][0]["content"] and found["ignored_weights"] == ["graph"]
    assert found["degraded"] is True and "keyword-only" in found["reason"]  # no embedder here
    for weights in ({"keyword": 2}, {"keyword": 0, "vector": 0}, {"importance": 0.6, "recency": 0.5}, {"bm25": 1}):
        assert error_of(api.client.post("/v1/search", json={"query": "x", "weights": weights}), 422)[
            "field"] == "weights"
    context = post(api, "/v1/context", {"query": "meetings", "recent_limit": 5})
    assert context["results"][0]["kind"] == "preference"
    assert sorted(context["recent"]) == ["fact", "preference"] and len(context["recent"]["fact"]) == 1
    with Store(api.settings.db_path) as store:
        store.conn.execute("DROP TABLE memory_edges")  # the graph cannot be read
    answer = api.client.get("/v1/memories/1/neighbors", params={"depth": 2}).json()
    assert answer["degraded"] is True and answer["neighbors"] == [] and "graph" in answer["reason"]


def test_errors_name_the_field_and_never_show_a_traceback(api, monkeypatch):
    cases = [(api.client.post("/v1/capture", json={"content": "Owner naps.", "kind": "habit"}), "kind"),
             (api.client.post("/v1/capture", json={"content": "Owner naps daily.", "colour": "red"}), "colour"),
             (api.client.post("/v1/capture", json={"content": "Owner naps daily.", "importance": 2}), "importance"),
             (api.client.post("/v1/search", json={}), "query"),
             (api.client.get("/v1/recent", params={"namespace": "work/../x"}), "namespace"),
             (api.client.post("/v1/search", json={"query": "x", "namespace": "bad name!"}), "namespace"),
             (api.client.post("/v1/search", json={"query": "x", "includeNamespaces": ["default"] * 17}),
              "include_namespaces"),
             (api.client.post("/v1/search", json={"query": "x", "since": "yesterday-ish"}), "since"),
             (api.client.get("/v1/memories/1/neighbors", params={"depth": 4}), "depth"),
             (api.client.post("/api/twin/learn", content=b"{not json", headers={"content-type": "application/json"}),
              "body")]
    for response, field in cases:
        error = error_of(response, 422)
        assert error.get("field") == field, (field, error)
    assert error_of(api.client.get("/v1/nothing-here"), 404)["code"] == "not_found"
    assert error_of(api.client.put("/v1/search", json={}), 405)["code"] == "method_not_allowed"
    assert error_of(api.client.get("/v1/memories/99999"), 404)["message"] == "no memory #99999"
    assert error_of(api.client.get(f"/v1/memories/{2**70}"), 404)

    def broken(*args, **kwargs):
        raise RuntimeError("a bug with /secret/path in it")

    monkeypatch.setattr("twin.operations.stats", broken)
    bug = error_of(api.client.get("/v1/stats"), 500)
    assert bug["code"] == "internal" and "secret" not in json.dumps(bug)

    def store_fails(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr("twin.operations.profile", store_fails)
    assert error_of(api.client.get("/v1/profile"), 503)["code"] == "unavailable"


def test_the_other_v1_reads(api):
    post(api, "/v1/remember", {"content": "Owner started learning the cello this week."})
    stats = api.client.get("/v1/stats").json()
    assert stats["total_warm"] == 1 and stats["by_namespace"] == {"default": {"warm": 1, "cold": 0}}
    assert api.client.get("/v1/signals").json() == []
    assert error_of(api.client.get("/v1/signals", params={"status": "lost"}), 422)["field"] == "status"
    assert set(api.client.get("/v1/profile").json()) >= {"facts", "goals", "preferences"}
    status = api.client.get("/v1/status").json()
    assert status["memories"] == 1 and status["api"]["exposed"] is False
    assert any("Redis" in line for line in status["degraded"])  # no daemon here: said, not a 500
    adoption = api.client.get("/v1/adoption").json()
    assert "memory_context" in adoption["tools"] and adoption["instructions_hash"].startswith("sha256:")
    stale = post(api, "/v1/adoption", {"observed_tools": ["memory_search"], "observed_instructions_hash": "sha256:old"})
    assert len(stale["diagnostics"]) == 2 and stale["refresh"]
    camel = post(api, "/v1/adoption", {"observedTools": ["memory_search"], "observedInstructionsHash": "sha256:old"})
    assert camel["diagnostics"] == stale["diagnostics"]
    current = post(api, "/v1/adoption", {"observed_tools": adoption["tools"],
                                         "observed_instructions_hash": adoption["instructions_hash"]})
    assert current["diagnostics"] == [] and current["refresh"] == []
    assert error_of(api.client.post("/v1/adoption", json={"tools": ["memory_search"]}), 422)["field"] == "tools"
    assert post(api, "/v1/dream-cycle", {})["walked"] == 1
    recap = post(api, "/v1/session-recap", {"summary": "Owner decided to move the team sync to Thursdays. "
                                                       "What time is it?"})
    assert [m["content"] for m in recap["created"]] and all("What time" not in m["content"]
                                                            for m in recap["created"])
    assert len(api.client.get("/v1/today").json()) == 1 + len(recap["created"])
