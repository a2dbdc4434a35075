"""The CLI and MCP asking the running daemon (`twin.remote`): the real API app (`twin.api.app.create_app`, its
lanes, its Guard and token) served by uvicorn on the configured loopback port; the CLI's reads answer the same
whether they went through it or ran in this process, on the same store; MCP's streamable HTTP at `/mcp` sits
behind the same token and Host/Origin checks."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import httpx
import pytest
from in_process import twin_cli
from mcp import Client
from mcp_clients import ROOT, free_socket, run, run_async, serving, stdio_server

from twin.settings import load_settings

QUERIES = ("where does my sister live", "coffee", "which antibiotic must doctors avoid?", "when is the standup")
TEXT = ("My sister Ana lives in Coimbra. I drink my coffee black. I'm allergic to penicillin. "
        "My bank PIN is 4921.")
WORK = "My standup with the platform team is at 9:15. I drink my coffee with oat milk at the office."
SCOPES = ((), ("--namespace", "work"), ("--include-namespace", "work"),
          ("--namespace", "work", "--include-namespace", "default"))
"""The namespace flags every read is run with (seed 003: one namespace, or a union)."""


@pytest.fixture
def api(twin_paths, monkeypatch):
    """The daemon's API, for real, on a free loopback port named in the settings (as `twin up` serves it);
    yields `(base URL, token)`."""
    from twin.api.app import create_app
    from twin.api.lanes import Lanes
    from twin.api.token import ensure_token

    sock = free_socket()
    monkeypatch.setenv("TWIN_API_PORT", str(sock.getsockname()[1]))
    settings = load_settings()
    token = ensure_token(settings.api_token_path)
    with serving(create_app(settings, Lanes(settings, lambda: None), warm=False), sock) as url:
        yield url, token


def _cli(*args: str) -> str:
    done = twin_cli(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _reads() -> dict[str, object]:
    """What the CLI's reads print, plain and JSON; use counts (hits, last_accessed) left out: a recall records
    them, so the second run sees the first's."""
    def untouched(rows):
        return [{k: v for k, v in r.items() if k not in ("hits", "last_accessed")} for r in json.loads(rows)]

    out: dict[str, object] = {}
    for scope in SCOPES:
        for q in QUERIES:
            out[f"recall {q} {scope}"] = _cli("recall", q, *scope)
            out[f"recall {q} {scope} --json"] = untouched(_cli("recall", q, *scope, "--json"))
            out[f"recall {q} {scope} --sensitive"] = _cli("recall", q, *scope, "--sensitive", "--limit", "3")
        for command in (("memories",), ("memories", "--kind", "fact"), ("today",),
                        ("recent", "--since", "2000-01-01"), ("memories", "--sensitive", "--limit", "2"),
                        ("memories", "--all")):
            out[f"{' '.join(command)} {scope}"] = _cli(*command, *scope)
            out[f"{' '.join(command)} {scope} --json"] = untouched(_cli(*command, *scope, "--json"))
    return out


def test_cli_reads_answer_the_same_with_and_without_the_daemon(twin_paths, monkeypatch):
    _cli("learn", TEXT)
    _cli("learn", "I live in Lisbon.")
    _cli("learn", "I live in Porto.")  # one superseded: `memories --all` runs here either way
    _cli("learn", "--namespace", "work", WORK)
    here = _reads()
    from twin.api.app import create_app
    from twin.api.lanes import Lanes
    from twin.api.token import ensure_token

    sock = free_socket()
    monkeypatch.setenv("TWIN_API_PORT", str(sock.getsockname()[1]))
    settings = load_settings()
    ensure_token(settings.api_token_path)
    with serving(create_app(settings, Lanes(settings, lambda: None), warm=False), sock):
        through = _reads()
        loaded = _model_loaded_by("recall", "coffee")
    assert through == here
    assert "Ana lives in Coimbra" in here["recall where does my sister live ()"]
    assert "4921" not in here["recall coffee ()"] and "4921" in here["memories --sensitive --limit 2 ()"]
    work, union = "('--namespace', 'work')", "('--include-namespace', 'work')"
    assert "platform team" not in here["recall when is the standup ()"] + here["memories ()"]
    assert "platform team" in here[f"recall when is the standup {work}"]
    assert "Coimbra" not in here[f"memories {work}"] and "platform team" in here[f"memories {work}"]
    assert "Coimbra" in here[f"memories {union}"] and "platform team" in here[f"memories {union}"]
    assert {m["namespace"] for m in here[f"recall coffee {union} --json"]} == {"default", "work"}
    assert loaded is False  # the daemon answered: no model in the CLI's process


TIMES = ("created_at", "last_accessed", "updated_at", "hits")
"""Fields of a memory that differ between two runs of the same writes (the time they ran at)."""


def _timeless(out: str) -> object:
    """JSON output with the `TIMES` of every memory in it left out."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in TIMES}
        return [strip(v) for v in value] if isinstance(value, list) else value

    return strip(json.loads(out))


BIG_TEXT = "My cat Miso sleeps on the piano. " + "Olá, ação. " * 60000
"""A text longer, as JSON, than the API takes in one body (1 MiB): `twin learn` learns it in its own process."""


def _writes() -> list[tuple[str, int, object, str]]:
    """`twin learn` and `twin forget` on an empty store, in order: `(command, exit code, stdout, stderr)`, JSON
    stdout without its times. Learns new, reinforced, superseded, sensitive (masked, then shown), rejected and
    nothing-memorable text, into two namespaces, and a text too long for the API; forgets one id, ids with one
    missing, a sensitive one as JSON (hidden, then shown) and one of the other namespace."""
    steps = (("learn", "My brother Tiago repairs bicycles in Braga. My gym locker code is 7730."),
             ("learn", "My brother Tiago repairs bicycles in Braga.", "--json"),
             ("learn", "I moved to Aveiro.", "--source", "note:moves"), ("learn", "I moved to Faro.", "--json"),
             ("learn", "My wifi password is hunter-42-blue.", "--sensitive"),
             ("learn", "My alarm code is 5512.", "--json"), ("learn", "ok thanks"), ("learn", "ok", "--force"),
             ("learn", "   "), ("learn", "--namespace", "work", "Our deploy freeze starts every Thursday at noon."),
             ("memories", "--all", "--sensitive", "--json"), ("forget", "1"), ("forget", "2", "999999"),
             ("forget", "5", "--json"), ("forget", "6", "--json", "--sensitive"), ("forget", "3", "999", "--json"),
             ("forget", "8"), ("forget", "--namespace", "work", "8"), ("learn", "-"), ("memories", "--all", "--json"))
    out = []
    for step in steps:
        done = twin_cli(*step, stdin=BIG_TEXT if step[-1] == "-" else None)
        stdout = _timeless(done.stdout) if "--json" in step and done.stdout else done.stdout
        out.append((" ".join(step), done.returncode, stdout, done.stderr))
    return out


def test_cli_writes_answer_the_same_with_and_without_the_daemon(twin_paths, monkeypatch, tmp_path):
    """The same writes on two empty stores, one in this process and one through the real API, print the same."""
    here = _writes()
    from twin.api.app import create_app
    from twin.api.lanes import Lanes
    from twin.api.token import ensure_token

    sock = free_socket()
    monkeypatch.setenv("TWIN_API_PORT", str(sock.getsockname()[1]))
    monkeypatch.setenv("TWIN_DATA_DIR", str(tmp_path / "other"))
    settings = load_settings()
    ensure_token(settings.api_token_path)
    with serving(create_app(settings, Lanes(settings, lambda: None), warm=False), sock):
        through = _writes()
        rosa = ("learn", "My neighbour Rosa keeps bees on her roof.")
        loaded = _model_loaded_by(*rosa)
        # the operations never imported here: the daemon learned it
        learned_here = _model_loaded_by("learn", "My neighbour Jo keeps goats in Tavira.", module="twin.operations")
        # a CLI given another data dir never lets this daemon answer for it (its store is another): it learns,
        # recalls and forgets in its own data dir, and the daemon's store is untouched
        elsewhere = {"TWIN_DATA_DIR": str(tmp_path / "elsewhere")}
        other_learned_here = _model_loaded_by("learn", "My neighbour Lia keeps hens.", module="twin.operations",
                                              env=elsewhere)
        answered = json.loads(twin_cli("recall", "who keeps bees", "--json").stdout)
        forgot_there = subprocess.run([sys.executable, "-m", "twin", "forget", str(answered[0]["id"])],
                                      capture_output=True, text=True, timeout=120, cwd=ROOT,
                                      env={**os.environ, **elsewhere, "PYTHONPATH": str(ROOT)})
        hens = json.loads(twin_cli("recall", "who keeps hens", "--json").stdout)
        forgot_here = _model_loaded_by("forget", str(answered[0]["id"]), module="twin.operations")
        after = json.loads(twin_cli("recall", "who keeps bees", "--json").stdout)
    for mine, theirs in zip(here, through, strict=True):
        assert theirs == mine, mine[0]
    said = dict((cmd, (rc, stdout, err)) for cmd, rc, stdout, err in here)
    assert "7730" not in said["learn My brother Tiago repairs bicycles in Braga. My gym locker code is 7730."][1]
    assert "hunter-42-blue" in said["learn My wifi password is hunter-42-blue. --sensitive"][1]
    assert "reinforced" in said["learn My brother Tiago repairs bicycles in Braga. --json"][1]
    assert said["learn I moved to Faro. --json"][1]["superseded"], "the move superseded the old town"
    assert "5512" not in json.dumps(said["learn My alarm code is 5512. --json"][1])
    assert said["forget 2 999999"][0] == 1 and "forgot #2" in said["forget 2 999999"][1]
    assert "no memory #999999" in said["forget 2 999999"][2]
    assert said["forget 3 999 --json"][1]["missing"] == [999] and said["forget 3 999 --json"][0] == 1
    assert "5512" in said["forget 6 --json --sensitive"][1]["memories"][0]["content"]
    assert "hunter" not in json.dumps(said["forget 5 --json"][1])
    assert said["forget 8"][0] == 1 and said["forget --namespace work 8"][0] == 0  # another namespace's id
    left = {m["id"] for m in said["memories --all --json"][1]}
    assert left == {4, 7, 9} and "learned   #9 fact: Owner's cat Miso" in said["learn -"][1]
    assert loaded is False and learned_here is False
    assert other_learned_here is True and (tmp_path / "elsewhere" / "twin.db").exists()
    assert [m["content"] for m in answered[:1]] == ["Owner's neighbour Rosa keeps bees on her roof."]
    assert forgot_there.returncode == 1 and "no memory" in forgot_there.stderr  # not the daemon's memory to forget
    assert "Lia" not in json.dumps(hens)  # learned into its own data dir, not the daemon's
    assert forgot_here is False and answered[0]["id"] not in {m["id"] for m in after}  # the daemon forgot it


def _model_loaded_by(*args: str, module: str = "onnxruntime", env: dict | None = None) -> bool:
    """Run `twin ARGS` as a process (with `env` added to this one's); whether it imported `module` (onnxruntime:
    loaded the embedding model)."""
    code = ("import sys, twin.cli; rc = twin.cli.main(sys.argv[2:]); "
            "print(sys.argv[1] in sys.modules, file=sys.stderr); sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code, module, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {}), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done.stderr.strip().splitlines()[-1] == "True"


def test_without_a_daemon_the_cli_loads_the_model_here(twin_paths):
    _cli("learn", TEXT)
    assert _model_loaded_by("recall", "coffee") is True


def test_mcp_over_the_api_behind_its_token_host_and_origin(api):
    url, token = api
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    assert httpx.post(f"{url}/mcp", json=hello, headers=headers).status_code == 401
    wrong = {**headers, "Authorization": "Bearer not-the-token"}
    assert httpx.post(f"{url}/mcp", json=hello, headers=wrong).status_code == 401
    bearer = {**headers, "Authorization": f"Bearer {token}"}
    assert httpx.post(f"{url}/mcp", json=hello, headers={**bearer, "Host": "evil.example"}).status_code in (403, 421)
    assert httpx.post(f"{url}/mcp", json=hello, headers={**bearer, "Origin": "https://evil.example"}
                      ).status_code == 403

    import httpx2

    async def go(client: Client):
        captured = await client.call_tool("memory_capture", {"content": "Owner's piano lesson is on Wednesdays."})
        found = await client.call_tool("memory_search", {"query": "when is the piano lesson"})
        gone = await client.call_tool("memory_forget", {"id": captured.structured_content["id"]})
        return [t.name for t in (await client.list_tools()).tools], captured, found, gone

    from mcp.client.streamable_http import streamable_http_client

    async def session():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            return await run_async(Client(streamable_http_client(f"{url}/mcp", http_client=http)), go)

    names, captured, found, gone = asyncio.run(session())
    assert len(names) == 19 and not captured.is_error
    assert found.structured_content["results"][0]["id"] == captured.structured_content["id"]
    assert gone.structured_content["ok"] is True


def test_the_access_goes_to_the_daemon_and_back(api, twin_paths):
    """An AutoTwin answers through the daemon (a write made over HTTP is seen by a read here), a call the API has
    no route for runs here, and the API's errors come back as twin's (NotFound, InvalidInput naming the field)."""
    from twin.exceptions import InvalidInput, NotFound
    from twin.remote import open_twin

    settings = load_settings()
    with open_twin(settings) as twin:
        made = twin.capture_memory(content="Owner's bike is a green Brompton.", source="test")
        assert twin.answered_here is False
        assert twin.get_memory(memory_id=made["id"])["content"] == "Owner's bike is a green Brompton."
        listed = twin.list_memories(include_superseded=True)
        assert twin.answered_here is True and [m["id"] for m in listed] == [made["id"]]
        with pytest.raises(NotFound):
            twin.forget_memory(memory_id=made["id"] + 1000)
        with pytest.raises(InvalidInput) as bad:
            twin.search(query="bike", weights={"loudness": 1})
        assert bad.value.field == "weights" and twin.answered_here is False
        stale = twin.adoption(observed_tools=["memory_search"], observed_instructions_hash="sha256:old")
        assert twin.answered_here is False and len(stale["diagnostics"]) == 2
        assert twin.adoption(observed_tools=stale["tools"], observed_instructions_hash=stale["instructions_hash"]
                             )["diagnostics"] == []


def test_a_long_lived_access_survives_a_token_rotation(api, twin_paths):
    """`twin token --rotate` while an access lives (a running `twin mcp`): its next call reads the token file
    again and goes through, reads and writes alike, several rotations in a row; a token the file does not cure is
    refused with `TokenRefused`, and nothing was written by the refused call."""
    from twin.api.token import rotate_token
    from twin.remote import DaemonTwin, TokenRefused, daemon_url, open_twin

    settings = load_settings()
    with open_twin(settings) as twin:
        first = twin.capture_memory(content="Owner's canoe is stored in the boathouse at Lake Ohrid.", source="t")
        for n in range(3):
            rotate_token(settings.api_token_path)
            assert twin.get_memory(memory_id=first["id"])["id"] == first["id"] and twin.answered_here is False
            made = twin.capture_memory(content=f"Owner's locker number at the climbing gym is {71 + n}.", source="t")
            assert made["id"] > first["id"]
    stale = DaemonTwin(daemon_url(settings), "not-the-token", token_source=lambda: "also-not-the-token")
    with pytest.raises(TokenRefused):
        stale.capture_memory(content="Owner's kayak is red and lives in the garage.", source="t")
    with pytest.raises(TokenRefused):
        DaemonTwin(daemon_url(settings), "not-the-token").stats()
    assert not any("kayak" in m["content"] for m in open_twin(settings).list_memories(limit=50))


BAD_INPUTS = (  # (MCP tool, its arguments, the same input as an HTTP request)
    ("memory_capture", {"content": ""}, ("POST", "/v1/capture", {"json": {"content": ""}})),
    ("memory_capture", {"content": " \n\t "}, ("POST", "/v1/capture", {"json": {"content": " \n\t "}})),
    ("memory_remember", {"content": "Owner's desk is by the window.", "importance": 1.5},
     ("POST", "/v1/remember", {"json": {"content": "Owner's desk is by the window.", "importance": 1.5}})),
    ("memory_search", {"query": "desk", "limit": 0}, ("POST", "/v1/search", {"json": {"query": "desk", "limit": 0}})),
    ("memory_recent", {"since": "last tuesday"}, ("GET", "/v1/recent", {"params": {"since": "last tuesday"}})),
    ("memory_forget", {"id": 0}, ("DELETE", "/v1/memories/0", {})),
    ("memory_update", {"id": "1.0", "kind": "fact"}, ("PATCH", "/v1/memories/1.0", {"json": {"kind": "fact"}})),
    ("memory_session_recap", {"summary": ""}, ("POST", "/v1/session-recap", {"json": {"summary": ""}})),
)


def test_bad_input_says_the_same_on_every_path(api, twin_paths):
    """The same bad input gets the same words over the API, over MCP in this process and over MCP through the
    daemon (the field's name aside: the API's path calls the id `memory_id`), never pydantic's link."""
    import re

    from twin.mcp_server.server import build_server
    from twin.remote import LocalTwin, open_twin

    url, token = api
    settings = load_settings()
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as http:
        over_http = [http.request(method, path, **kw) for _, _, (method, path, kw) in BAD_INPUTS]
    assert all(r.status_code == 422 for r in over_http), [r.text for r in over_http]
    said = [r.json()["error"]["message"] for r in over_http]

    async def tools(twin):
        async with Client(build_server(twin)) as client:
            return [(await client.call_tool(name, args)) for name, args, _ in BAD_INPUTS]

    def words(text: str) -> str:
        return re.sub(r"^(?:memory_id|id): ", "", re.sub(r"^Error executing tool \w+: ", "", text))

    for twin in (LocalTwin(settings), open_twin(settings)):
        with twin:
            answers = asyncio.run(tools(twin))
        for (name, args, _), answer, expected in zip(BAD_INPUTS, answers, said, strict=True):
            assert answer.is_error, (name, args)
            assert words(answer.content[0].text) == words(expected), (twin.describe(), name, args)
    assert not any("pydantic" in m or "For further" in m for m in said)


def test_cli_usage_errors_exit_2_with_the_daemon_up_or_not(twin_paths, monkeypatch):
    """Too many `--include-namespace`, a bad `--namespace`, an id that is not plain digits: usage errors, exit 2,
    whether the call went through the daemon's API or ran here (no daemon: `TWIN_API_ENABLED=false`)."""
    seventeen = [arg for n in range(17) for arg in ("--include-namespace", f"team-{n}")]
    cases = (("memories", *seventeen), ("recent", "--namespace", "not a name"), ("neighbors", "1.0"),
             ("forget", "+1"), ("memories", "--namespace", "x" * 65), ("dream", "--namespace", "a/b"))

    def exits() -> list[int]:
        return [twin_cli(*args).returncode for args in cases]

    sock = free_socket()
    monkeypatch.setenv("TWIN_API_PORT", str(sock.getsockname()[1]))
    from twin.api.app import create_app
    from twin.api.lanes import Lanes
    from twin.api.token import ensure_token

    settings = load_settings()
    ensure_token(settings.api_token_path)
    with serving(create_app(settings, Lanes(settings, lambda: None), warm=False), sock):
        assert exits() == [2] * len(cases)
    monkeypatch.setenv("TWIN_API_ENABLED", "false")
    assert exits() == [2] * len(cases)


def test_http_mcp_and_the_cli_carry_the_reasons_and_each_search_is_in_the_latency_chart(api):
    """One supersession, then the same search over `/v1/search`, the `/mcp` tool and `twin recall --why` through
    the daemon: each answer says the newer memory replaced the older (the reason recall made, quoted as it is), and
    the page's latency data counts all three searches, each under the interface that asked."""
    url, token = api
    bearer = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=bearer, timeout=30) as http:
        old = http.post("/v1/capture", json={"content": "Owner works at Halden Logistics in Hamburg."}).json()
        new = http.post("/v1/capture", json={"content": "Owner now works at Fjordline Robotics."}).json()
        assert new["superseded"] == [old["id"]]
        before = http.get("/v1/stats/recall-latency").json()["by_interface"]
        found = http.post("/v1/search", json={"query": "works Fjordline Robotics"}).json()["results"]
    over_http = {hit["id"]: hit["reasons"] for hit in found}
    said = [r for r in over_http[new["id"]] if r["code"] == "replaces"]
    assert len(said) == 1 and said[0]["others"] == [old["id"]] and said[0]["words"].startswith(f"Replaces #{old['id']}")

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def session():
        async with httpx2.AsyncClient(headers=bearer) as client_http:
            return await run_async(Client(streamable_http_client(f"{url}/mcp", http_client=client_http)),
                                   lambda client: client.call_tool("memory_search",
                                                                   {"query": "works Fjordline Robotics"}))

    over_mcp = {hit["id"]: hit["reasons"] for hit in asyncio.run(session()).structured_content["results"]}
    assert over_mcp[new["id"]] == over_http[new["id"]]
    printed = _cli("recall", "works Fjordline Robotics", "--why")
    assert f"        why: {said[0]['words']}" in printed.splitlines()
    stdio = run(Client(stdio_server()), lambda client: client.call_tool("memory_search",
                                                                        {"query": "works Fjordline Robotics"}))
    assert {hit["id"]: hit["reasons"] for hit in stdio.structured_content["results"]}[new["id"]] == over_http[new["id"]]
    asked = httpx.get(f"{url}/v1/stats/recall-latency", headers=bearer).json()["by_interface"]
    assert {k: asked.get(k, 0) - before.get(k, 0) for k in ("http", "mcp", "cli", "mcp-stdio")} == {
        "http": 1, "mcp": 1, "cli": 1, "mcp-stdio": 1}


@pytest.mark.parametrize("answer", ["html-404", "json-without-store", "not-json-200", "401", "silent"])
def test_another_program_on_the_apis_port_leaves_the_cli_in_its_own_data_dir(twin_paths, monkeypatch, answer):
    """No twin runs, but another program holds the API's port (a dev server, an old tool): its answer to
    `/v1/health` is no twin's health, so the CLI learns and recalls in its own data dir, as with no daemon, and
    sends that program nothing but the one health check (`AutoTwin.serves_this_store`), whose words never reach
    the terminal. Found by breaker runs: `twin recall` printed the program's 404 page (escape sequences and all) and
    exited 1; a 401 (another twin with its own token) refused every command; one that never answers held each
    command 120 s."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from twin.api.token import ensure_token

    asked: list[str] = []

    class Foreign(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            asked.append(f"{self.command} {self.path}")
            if answer == "silent":
                time.sleep(6)
                return
            status, kind, body = {"html-404": (404, "text/html", b"<!DOCTYPE HTML>\x1b[2J<p>Error code: 404</p>"),
                                  "json-without-store": (200, "application/json", b'{"ok": true}'),
                                  "not-json-200": (200, "text/plain", b"hello \x1b]0;title\x07"),
                                  "401": (401, "application/json",
                                          b'{"error": {"code": "unauthorized", "message": "\x1b[31mno"}}')}[answer]
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Foreign)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("TWIN_API_PORT", str(server.server_address[1]))
        ensure_token(load_settings().api_token_path)  # as after a daemon's first start: the CLI asks the port
        started = time.monotonic()
        learned = twin_cli("learn", "Owner bought a red kayak in October.")
        found = twin_cli("recall", "which kayak did I buy")
        assert learned.returncode == 0 and found.returncode == 0, learned.stderr + found.stderr
        assert "red kayak" in found.stdout
        assert "\x1b" not in learned.stderr + found.stderr + found.stdout  # the program's words are not shown
        assert time.monotonic() - started < 30
    finally:
        server.shutdown()
        server.server_close()
    assert asked and all(a == "GET /v1/health" for a in asked), asked


def test_a_search_with_fewer_results_than_asked_says_how_many_memories_wait_for_a_vector(api, twin_paths):
    """Right after a learn the new memory has no vector until the embedding worker runs (none here): the search
    answer counts the memories still without one when fewer results than the limit came back, and `twin recall`
    through the daemon says so on stderr instead of a bare "nothing found". Found by a breaker run (the field was
    always 0)."""
    url, token = api
    learned = twin_cli("learn", "Owner's favourite snack is salted pretzels from the bakery on Hauptstrasse.")
    assert learned.returncode == 0, learned.stderr
    answer = httpx.post(f"{url}/v1/search", json={"query": "volcano eruption lava", "limit": 10},
                        headers={"Authorization": f"Bearer {token}"}, timeout=30).json()
    assert answer["pending_vectors"] >= 1, answer
    recalled = twin_cli("recall", "volcano eruption lava")
    assert recalled.returncode == 0 and "have no vector yet" in recalled.stderr, recalled.stderr
