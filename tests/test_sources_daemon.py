"""Gmail and browser history inside the real daemon: `twin up` as a subprocess (its own Redis, real workers)
against the fake Gmail server and browser profiles built with the real Chromium and Firefox schemas under a
temporary HOME; then a restart, which must import nothing again."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from browser_fixtures import (
    FF_LINK,
    LINK,
    TYPED,
    add_firefox_visits,
    history_writer,
    make_chromium_profile,
    make_firefox_profile,
)
from fake_gmail import FakeGmail, token_file_json
from test_daemon import start, stop, wait_for
from test_gmail import MAILBOX, OWNER

from twin.activity import Activity
from twin.store import Store

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime.now(UTC).replace(microsecond=0)


def _rust_reading() -> list[tuple]:
    pages = [("https://docs.rs/tokio/latest/tokio/runtime/index.html", "tokio::runtime - Rust"),
             ("https://tokio.rs/tokio/tutorial/async", "Async in depth | Tokio - An asynchronous Rust runtime"),
             ("https://docs.rs/tokio/latest/tokio/task/fn.spawn.html", "spawn in tokio::task - Rust async runtime"),
             ("https://tokio.rs/tokio/tutorial/spawning", "Spawning | Tokio - An asynchronous Rust runtime"),
             ("https://docs.rs/async-std/latest/async_std/", "async_std - Rust async runtime")]
    visits = [(url + f"?page={i}", title, NOW - timedelta(hours=30 - i), LINK, 0)
              for i, (url, title) in enumerate(pages * 3)]
    visits.append(("https://online.mybank.example/accounts/login?session=abc", "MyBank - Sign in", NOW, TYPED, 0))
    visits.append(("http://192.168.1.1/admin", "Router admin", NOW, TYPED, 0))
    return visits


def _baking_reading() -> list[tuple]:
    titles = ["Sourdough starter guide - The Perfect Loaf", "Baking sourdough in a dutch oven - King Arthur Baking",
              "Sourdough hydration explained - The Perfect Loaf", "Sourdough scoring patterns - King Arthur Baking"]
    hosts = ["https://www.theperfectloaf.com/guides/", "https://www.kingarthurbaking.com/blog/"]
    return [(f"{hosts[i % 2]}{i}", titles[i % 4], NOW - timedelta(hours=10 - i), FF_LINK, 0) for i in range(8)]


def _diary(env: dict) -> list[str]:
    db = Path(env["TWIN_DATA_DIR"]) / "twin.db"
    if not db.exists():
        return []
    with Store(db) as store:
        return [line.text for line in Activity(store, "owner").recent(500)]


def _memories(env: dict) -> list[tuple[str, str, int]]:
    with Store(Path(env["TWIN_DATA_DIR"]) / "twin.db") as store:
        return store.conn.execute("SELECT source, content, id FROM memories ORDER BY id").fetchall()


def _all_embedded(env: dict) -> bool:
    with Store(Path(env["TWIN_DATA_DIR"]) / "twin.db") as store:
        counts = store.counts("owner")
    return counts["memories"] == counts["embedded"] > 0


@pytest.fixture
def gmail_server():
    server = FakeGmail(OWNER).start()
    for thread in MAILBOX:
        server.add_thread(thread)
    yield server
    server.stop()


def test_gmail_and_browser_run_inside_the_daemon_and_a_restart_imports_nothing(daemon_env, gmail_server, tmp_path):
    home = Path(daemon_env["HOME"])
    make_chromium_profile(home, "chrome", "Default", _rust_reading(), name="Work")
    places = make_firefox_profile(home, [], wal=True)
    data = Path(daemon_env["TWIN_DATA_DIR"])
    data.mkdir(mode=0o700)
    (data / "gmail-token.json").write_text(token_file_json(gmail_server))
    (data / "gmail-token.json").chmod(0o600)
    env = {**daemon_env, "TWIN_GMAIL_API_URL": gmail_server.url, "TWIN_GMAIL_TOKEN_URL": gmail_server.token_uri,
           "TWIN_GMAIL_POLL_S": "10"}
    log = tmp_path / "daemon.log"

    with history_writer(places) as firefox:  # Firefox is running: its newest visits are only in the -wal
        add_firefox_visits(firefox, _baking_reading())
        proc = start(env, log)
        try:
            wait_for(lambda: any(line.startswith("Browser: ") for line in _diary(env)), 120, "the browser import")
            wait_for(lambda: any(line.startswith("Read 3 new email") for line in _diary(env)), 60, "the Gmail sync")
            wait_for(lambda: {s for s, _, _ in _memories(env) if s.startswith("email:")} ==
                     {"email:t-slides", "email:t-lunch", "email:t-tickets"} and _all_embedded(env), 120,
                     "the email memories, embedded")
            wait_for(lambda: any(s == "browser" for s, _, _ in _memories(env)) and _all_embedded(env), 60,
                     "the browser memories, embedded")
        finally:
            assert stop(proc) == 0, log.read_text()[-3000:]
    diary = _diary(env)
    browser_line = next(line for line in diary if line.startswith("Browser: "))
    assert "from 2 profiles" in browser_line and "learned" in browser_line
    assert "Read 3 new email thread(s); 1 needs a reply." in diary
    memories = _memories(env)
    interests = [c for s, c, _ in memories if s == "browser"]
    assert any("tokio" in c.lower() or "rust" in c.lower() for c in interests), interests
    assert any("sourdough" in c.lower() for c in interests), interests  # the WAL-only Firefox visits
    assert not any("bank" in c.lower() or "192.168" in c or "router" in c.lower() for c in interests)
    email = {s: c for s, c, _ in memories if s.startswith("email:")}
    assert "slides" in " ".join(c for s, c, _ in memories if s == "email:t-slides").lower()
    assert email

    # restart: Gmail syncs again (history.list) and finds nothing; the browser import is not due for 24 h
    before_requests = len(gmail_server.requests)
    proc = start(env, log)
    try:
        wait_for(lambda: any("/history" in r for r in gmail_server.requests[before_requests:]), 60,
                 "a Gmail sync after the restart")
        time.sleep(3)
    finally:
        assert stop(proc) == 0, log.read_text()[-3000:]
    after = _diary(env)[len(diary):]
    assert not [line for line in after if line.startswith(("Read ", "Browser: ", "Learned "))], after
    assert _memories(env) == memories
    assert not any("/threads" in r for r in gmail_server.requests[before_requests:])
    assert "twin stopped cleanly." in after


def test_twin_sync_browser_imports_now_and_then_finds_nothing_new(daemon_env):
    home = Path(daemon_env["HOME"])
    make_chromium_profile(home, "brave", "Default", _rust_reading())

    def sync() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "twin", "sync", "browser"], cwd=ROOT, env=daemon_env,
                              capture_output=True, text=True, timeout=120)

    first = sync()
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("Browser: 15 visits read from 1 profile; learned 1 interest"), first.stdout
    assert "tokio" in first.stdout.lower() or "rust" in first.stdout.lower()
    second = sync()
    assert second.returncode == 0 and second.stdout.startswith("Browser: 0 visits read from 1 profile"), second.stdout
