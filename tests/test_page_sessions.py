"""The page's sessions and its loose ends, over real HTTP (the API in a thread, tests/api_server.py, or as its own
process, `python -m twin.api`, where a restart matters) and in a real browser (chromium under Playwright): a session
kept in the store outlives a restart of the API; the cookies alone (what a server on another port of 127.0.0.1
receives) read and write nothing without the page key; `twin token --rotate` and `twin open --end-sessions` end every
session; expiry and the cap; `twin open` without a daemon; the page while the twin is down and after it is back; the
one limit rule of every interface; the profile's line length."""

from __future__ import annotations

import hashlib
import re
import signal
import subprocess
import sys
import time
from contextlib import closing, contextmanager
from pathlib import Path

import httpx
import pytest
from api_server import running_api
from conftest import isolated_home
from page_browser import chromium_path

from twin.api.session import LET_IN, NO_CSRF, NO_KEY, NO_SESSION, RENEW_S, SESSIONS_MAX, PageSessions, digest
from twin.operations import Context
from twin.operations.page import new_page_link
from twin.profile import MAX_ITEM_CHARS
from twin.settings import load_settings
from twin.store import Store
from twin.store import page_sessions as stored

KEY_HEADER = "X-Twin-Page-Key"


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    """An isolated twin (its own dirs and API port, keyword-only) with a migrated store; the environment points at
    it for the whole module (subprocesses inherit it)."""
    home = tmp_path_factory.mktemp("sessions")
    with pytest.MonkeyPatch.context() as mp:
        isolated_home(mp, home)
        configured = load_settings()
        Context.open(configured).close()
        yield configured


@pytest.fixture
def api(settings):
    """The API in a thread of this process (tests/api_server.py)."""
    with running_api(settings) as running:
        yield running


class ApiProcess:
    """`python -m twin.api` as its own process, started and killed at will (SIGKILL: a crash, nothing tidied)."""

    def __init__(self, settings, log: Path):
        self.settings, self.log, self.proc = settings, log, None
        self.url = f"http://127.0.0.1:{settings.api_port}"

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "twin.api"], stdout=out, stderr=out)
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                token = self.settings.api_token_path.read_text().strip()
                if httpx.get(f"{self.url}/v1/health", headers={"Authorization": f"Bearer {token}"}).status_code == 200:
                    return
            except (OSError, httpx.HTTPError):
                pass
            assert time.monotonic() < deadline, "the API did not start"
            time.sleep(0.1)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)


@contextmanager
def api_process(settings, tmp_path):
    """An `ApiProcess`, started; killed at the end whatever happens."""
    running = ApiProcess(settings, tmp_path / "api.log")
    running.start()
    try:
        yield running
    finally:
        running.kill()


def link(settings) -> str:
    ctx = Context.open(settings)
    try:
        return new_page_link(ctx)
    finally:
        ctx.close()


def open_session(url: str, settings) -> tuple[httpx.Client, str]:
    """A client holding a page session's cookies, as the browser gets them from a `twin open` link, and the page
    key the link's redirect put in the address's fragment."""
    client = httpx.Client(base_url=url, timeout=30)
    answer = client.get(f"/twin/session/{link(settings)}")
    assert answer.status_code == 303, answer.text
    found = re.fullmatch(r"/twin#key=([A-Za-z0-9_-]{43})", answer.headers["location"])
    assert found, answer.headers["location"]
    return client, found.group(1)


def twin(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "twin", *args], capture_output=True, text=True, timeout=timeout)


def memory_count(settings) -> int:
    with Store(settings.db_path) as db:
        return db.conn.execute("SELECT count(*) FROM memories").fetchone()[0]


# -- the door ------------------------------------------------------------------------------------------------------
def test_the_cookies_alone_read_and_write_nothing(api, settings):
    owner, key = open_session(api.url, settings)
    jar = dict(owner.cookies)
    assert set(jar) == {"twin_session", "twin_csrf"}
    with closing(owner):
        before = memory_count(settings)
        # what a server on another port of 127.0.0.1 receives: both cookies, never the page key
        with httpx.Client(base_url=api.url, cookies=jar, timeout=30) as stolen:
            for path in ("/v1/memories", "/v1/profile", "/api/twin/activity", "/v1/status"):
                refused = stolen.get(path)
                assert refused.status_code == 401 and refused.json()["error"]["code"] == "page_key", path
            with stolen.stream("GET", "/v1/activity/stream") as stream:
                assert stream.status_code == 401
            for headers in ({"X-CSRF-Token": jar["twin_csrf"]}, {"X-CSRF-Token": jar["twin_csrf"], KEY_HEADER: ""},
                            {"X-CSRF-Token": jar["twin_csrf"], KEY_HEADER: key[:-1] + ("A" if key[-1] != "A" else "B")},
                            {"X-CSRF-Token": jar["twin_csrf"], KEY_HEADER: jar["twin_session"]}):
                wrote = stolen.post("/v1/remember", json={"content": "Owner hides the spare key in the shed."},
                                    headers=headers)
                assert wrote.status_code == 401
        assert memory_count(settings) == before  # nothing was written
        with httpx.Client(base_url=api.url, timeout=30) as keyed_only:  # the key without the cookie: nothing
            assert keyed_only.get("/v1/memories", headers={KEY_HEADER: key}).status_code == 401
        mine = {KEY_HEADER: key}
        assert owner.get("/v1/memories", params={"limit": 1}, headers=mine).status_code == 200
        refused = owner.post("/v1/remember", json={"content": "Owner hides the spare key in the shed."}, headers=mine)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "csrf"
        made = owner.post("/v1/remember", json={"content": "Owner hides the spare key in the shed."},
                          headers={**mine, "X-CSRF-Token": jar["twin_csrf"]})
        assert made.status_code == 200 and memory_count(settings) == before + 1


def test_sessions_survive_a_restart_and_the_store_keeps_only_digests(settings, tmp_path):
    with api_process(settings, tmp_path) as running:
        owner, key = open_session(running.url, settings)
        headers = {KEY_HEADER: key}
        assert owner.get("/v1/profile", headers=headers).status_code == 200
        secrets_ = [owner.cookies["twin_session"], owner.cookies["twin_csrf"], key]
        running.kill()
        with pytest.raises(httpx.TransportError):
            owner.get("/v1/profile", headers=headers)
        running.start()
        with closing(owner):
            assert owner.get("/v1/profile", headers=headers).status_code == 200
            made = owner.post("/v1/remember", json={"content": "Owner oils the bicycle chain every month."},
                              headers={**headers, "X-CSRF-Token": secrets_[1]})
            assert made.status_code == 200
    with Store(settings.db_path) as db:
        row = stored.find_session(db, hashlib.sha256(secrets_[0].encode()).digest())
    assert row is not None and (row.csrf_sha256, row.key_sha256) == (digest(secrets_[1]), digest(secrets_[2]))
    data = b"".join(p.read_bytes() for p in settings.db_path.parent.glob(settings.db_path.name + "*"))
    assert data and not any(s.encode() in data for s in secrets_)  # no secret in the database, its WAL included
    assert oct(settings.db_path.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("command", [("open", "--end-sessions"), ("token", "--rotate")])
def test_rotating_the_token_or_ending_sessions_ends_every_session(api, settings, command):
    sessions = [open_session(api.url, settings) for _ in range(2)]
    for client, key in sessions:
        assert client.get("/v1/profile", headers={KEY_HEADER: key}).status_code == 200
    done = twin(*command)
    assert done.returncode == 0, done.stderr
    assert "page session(s) ended" in done.stdout + done.stderr
    for client, key in sessions:
        with closing(client):
            assert client.get("/v1/profile", headers={KEY_HEADER: key}).status_code == 401
    with Store(settings.db_path) as db:
        assert stored.count_sessions(db) == 0
    fresh, key = open_session(api.url, settings)  # and a new link opens a new one
    with closing(fresh):
        assert fresh.get("/v1/profile", headers={KEY_HEADER: key}).status_code == 200


def test_sessions_expire_after_their_last_use_and_at_most_32_are_kept(tmp_path):
    now = [1_800_000_000.0]
    sessions = PageSessions(tmp_path / "twin.db", ttl_s=3600, clock=lambda: now[0])
    first = sessions.start()
    assert sessions.check(first.secret, first.key, "GET", None) == LET_IN
    assert sessions.check(first.secret, first.key, "POST", None) == NO_CSRF
    assert sessions.check(first.secret, first.key, "DELETE", first.csrf) == LET_IN
    assert sessions.check(first.secret, first.csrf, "GET", None) == NO_KEY
    assert sessions.check(first.key, first.key, "GET", None) == NO_SESSION
    with Store(tmp_path / "twin.db") as db:
        used = stored.find_session(db, digest(first.secret)).used_at
    now[0] += RENEW_S / 2
    sessions.check(first.secret, first.key, "GET", None)
    with Store(tmp_path / "twin.db") as db:  # a use within RENEW_S writes nothing
        assert stored.find_session(db, digest(first.secret)).used_at == used
    now[0] += 3000  # 50.5 minutes after the start: used, so renewed
    assert sessions.check(first.secret, first.key, "GET", None) == LET_IN
    now[0] += 3000  # 100.5 minutes after the start, 50 after its last use: still live
    assert sessions.check(first.secret, first.key, "GET", None) == LET_IN
    now[0] += 3601  # an hour and a second without a use: gone
    assert sessions.check(first.secret, first.key, "GET", None) == NO_SESSION
    assert len(sessions) == 0
    made = []
    for _ in range(SESSIONS_MAX + 3):
        now[0] += 1
        made.append(sessions.start())
    assert len(sessions) == SESSIONS_MAX
    assert [sessions.check(s.secret, s.key, "GET", None) for s in made[:3]] == [NO_SESSION] * 3  # the oldest went
    assert all(sessions.check(s.secret, s.key, "GET", None) == LET_IN for s in made[3:])
    sessions.close()
    again = PageSessions(tmp_path / "twin.db", ttl_s=3600, clock=lambda: now[0])  # another process: the same
    assert again.check(made[-1].secret, made[-1].key, "GET", None) == LET_IN
    assert again.end_all() == SESSIONS_MAX and sessions.check(made[-1].secret, made[-1].key, "GET", None) == NO_SESSION
    again.close()
    sessions.close()


# -- twin open -----------------------------------------------------------------------------------------------------
def test_twin_open_says_in_one_line_when_the_daemon_does_not_answer(settings):
    done = twin("open", "--no-browser")
    assert done.returncode == 1 and done.stdout == ""  # no link to a page nobody serves
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("twin: warning:")]
    assert len(lines) == 1 and "not answering" in lines[0] and "twin up" in lines[0] and "systemctl" in lines[0]


def test_twin_open_prints_a_link_when_the_daemon_answers(api):
    done = twin("open", "--no-browser")
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(rf"{re.escape(api.url)}/twin/session/[A-Za-z0-9_-]{{32}}\n", done.stdout)


# -- one rule for limits -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [("memories", "--limit", "1000"), ("recall", "dinner", "--limit", "201"),
                                  ("recent", "--limit", "500"), ("signals", "--limit", "999"),
                                  ("activity", "-n", "250")])
def test_the_cli_refuses_a_limit_over_200_and_says_the_cap(settings, args):
    done = twin(*args)
    assert done.returncode == 2 and done.stdout == ""
    assert "limit must be 1-200" in done.stderr and f"(got {args[-1]})" in done.stderr
    assert "since or after" not in done.stderr  # the API's parameters: no command has them


def test_the_api_answers_422_for_a_limit_over_200_and_serves_200(api):
    with Store(api.settings.db_path) as db, db.atomic():
        for n in range(205):
            db.insert_memory("owner", "fact", f"Owner counted parcel number {n} at the depot.", "test", 0.5,
                             created_at=f"2025-03-01T00:{n // 60:02d}:{n % 60:02d}Z")
    asked = [("GET", "/v1/memories", {"limit": 201}, None), ("GET", "/api/twin/memories", {"limit": 1000}, None),
             ("GET", "/api/twin/memories", {"limit": 10**30, "q": "parcel"}, None),
             ("GET", "/v1/recent", {"limit": 500}, None), ("GET", "/v1/signals", {"limit": 300}, None),
             ("GET", "/v1/activity", {"limit": 201}, None),
             ("POST", "/v1/search", None, {"query": "parcel", "limit": 5000}),
             ("POST", "/v1/context", None, {"query": "parcel", "recent_limit": 400})]
    for method, path, params, body in asked:
        answer = api.client.request(method, path, params=params, json=body)
        assert answer.status_code == 422, (path, answer.text)
        error = answer.json()["error"]
        assert error["field"] in ("limit", "recent_limit") and "must be 1-200" in error["message"], error
    assert len(api.client.get("/v1/memories", params={"limit": 200}).json()) == 200
    assert len(api.client.post("/v1/search", json={"query": "parcel depot", "limit": 200}).json()["results"]) > 0


# -- the profile's line length -------------------------------------------------------------------------------------
def test_a_profile_line_over_the_limit_is_refused_by_the_cli_and_the_api(api, settings, tmp_path):
    long_line = "Owner " + "really " * 14_285  # about 100,000 characters in one line
    draft = tmp_path / "profile.toml"
    draft.write_text(f'facts = ["Owner lives in Porto."]\ngoals = ["{long_line}"]\n')
    done = twin("profile", "edit", "--file", str(draft))
    assert done.returncode == 1 and "the profile was not changed" in done.stderr
    assert f"at most {MAX_ITEM_CHARS} characters" in done.stderr and long_line[:200] not in done.stderr
    assert api.client.get("/v1/profile").json()["facts"] == []
    for body in ({"goals": [long_line]}, {"tone": "x" * (MAX_ITEM_CHARS + 1)},
                 {"routines": ["Owner swims on Mondays.", "y" * (MAX_ITEM_CHARS + 1)]}):
        answer = api.client.put("/v1/profile", json=body)
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["field"] == next(iter(body)) and f"at most {MAX_ITEM_CHARS} characters" in error["message"]
    assert api.client.get("/v1/profile").json()["goals"] == []  # nothing changed
    fits = "z" * MAX_ITEM_CHARS
    assert api.client.put("/v1/profile", json={"goals": [fits]}).json()["goals"] == [fits]
    draft.write_text(f'goals = ["  {fits}  "]\n')  # spaces around it are not counted: they are not kept
    assert twin("profile", "edit", "--file", str(draft)).returncode == 0


# -- in the browser ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    """The system's chromium under Playwright (headless, no sandbox: tests may run as root)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield launched
        launched.close()


def until(condition, timeout_s: float = 20.0) -> None:
    """Wait until `condition()` is true (the page's CSP forbids `eval`: the test polls from Python)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the page did not get there in time"
        time.sleep(0.05)


def browser_session(url: str, settings, browser):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(f"{url}/twin/session/{link(settings)}")
    page.get_by_label("Search your memories").wait_for()
    return page


@pytest.mark.slow
def test_the_page_takes_its_key_out_of_the_address_and_a_new_tab_shares_it(api, settings, browser):
    page = browser_session(api.url, settings, browser)
    assert page.url == f"{api.url}/twin"  # the fragment is gone from the address at once
    key = page.evaluate("localStorage.getItem('twin_page_key')")
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", key)
    tab = page.context.new_page()  # a new tab of the same origin: the same cookies and the same key
    tab.goto(f"{api.url}/twin#profile")
    tab.get_by_role("button", name="Save the profile").wait_for()
    cookies = page.context.cookies()
    stranger = browser.new_context()  # the cookies alone, without the key: no session
    stranger.add_cookies(cookies)
    other = stranger.new_page()
    other.goto(f"{api.url}/twin#profile")
    other.get_by_role("heading", name="No session").wait_for()
    assert "page key" in other.locator("main").inner_text()
    stranger.close()
    page.context.close()


@pytest.mark.slow
def test_a_long_profile_line_is_refused_on_the_page(api, settings, browser):
    page = browser_session(api.url, settings, browser)
    page.goto(f"{api.url}/twin#profile")
    routines = page.get_by_label("Routines")
    routines.fill("Owner runs on Tuesdays.\n" + "Owner " + "always " * 14_285)
    page.get_by_role("button", name="Save the profile").click()
    page.get_by_role("alert").filter(has_text=f"at most {MAX_ITEM_CHARS} characters").wait_for()
    assert routines.get_attribute("aria-invalid") == "true"
    assert api.client.get("/v1/profile").json()["routines"] == []
    page.context.close()


@pytest.mark.slow
def test_the_page_says_the_twin_is_not_answering_and_comes_back_without_a_reload(settings, browser, tmp_path):
    with api_process(settings, tmp_path) as running:
        token = {"Authorization": f"Bearer {settings.api_token_path.read_text().strip()}"}
        page = browser_session(running.url, settings, browser)
        loads = []
        page.on("load", lambda _: loads.append(page.url))
        page.goto(f"{running.url}/twin#activity")
        state = page.locator("main p.note").first
        page.get_by_text("Live.").wait_for()
        running.kill()
        until(lambda: "not answering" in state.inner_text())
        assert "Failed to fetch" not in page.locator("body").inner_text()
        running.start()
        until(lambda: state.inner_text() == "Live.")
        before = page.locator(".diary li").count()
        httpx.post(f"{running.url}/v1/remember", json={"content": "Owner fixed the porch light on Friday."},
                   headers=token).raise_for_status()
        until(lambda: page.locator(".diary li").count() > before)  # the stream reconnected and a new line came
        assert page.locator(".diary li").first.get_attribute("data-kind") == "learned"
        running.kill()  # a read while it is down: said in words, tried again until it answers
        page.get_by_role("link", name="Memories").click()
        status = page.locator("#status")
        until(lambda: "not answering" in status.inner_text() and "Trying again" in status.inner_text())
        running.start()
        page.locator("ol[aria-label=Memories] li").first.wait_for(timeout=40_000)
        until(lambda: "not answering" not in status.inner_text())  # the view's own word replaces it
        page.get_by_role("link", name="Teach").click()  # a write while it is down: said, not resent
        running.kill()
        page.get_by_label("What should twin learn?").fill("Owner keeps the ladder behind the garage.")
        page.get_by_role("button", name="Learn").click()
        page.get_by_role("alert").filter(has_text="not answering").wait_for()
        assert loads == []  # nothing of this needed a reload
        page.context.close()
    with Store(settings.db_path) as db:
        assert not db.conn.execute("SELECT 1 FROM memories WHERE content LIKE '%ladder%'").fetchone()



def test_a_listing_cut_at_its_limit_names_only_what_the_command_has(twin_paths):
    from in_process import twin_cli

    for n in range(3):
        assert twin_cli("learn", f"Owner stacked {n + 2} crates of apples in the shed.").returncode == 0
    for args in (("memories", "--limit", "2"), ("today", "--limit", "2")):
        done = twin_cli(*args)
        assert done.returncode == 0 and len(done.stdout.splitlines()) == 2, done
        assert "--limit for more (up to 200)" in done.stderr and "twin export" in done.stderr
        assert "--since" not in done.stderr, args
