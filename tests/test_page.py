"""The page at /twin in a real browser (Debian's chromium driven by Playwright; tests/page_browser.py) over a real
API (uvicorn on a free port, tests/api_server.py) and a store of a few hundred generated memories, keyword-only:
search with its breakdown, revealing a secret, editing and recalling the new text, forgetting one memory and a
whole source (checked in the store), teaching, live activity, reflecting, the profile's checks, stored XSS kept
inert, paging that reaches the oldest memory, axe-core on every view in light and dark. The door over httpx: the
one-time link, the cookie, the CSRF token, the headers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest
from api_server import running_api
from conftest import isolated_home
from page_browser import axe_path, chromium_path, corpus, fill, screenshot_dir

from twin.api.latency import SearchTimes
from twin.exceptions import InvalidInput
from twin.operations import Context
from twin.operations import page as page_ops
from twin.operations.page import new_page_link, redeem_page_link
from twin.settings import load_settings
from twin.store import Store

N_MEMORIES = int(os.environ.get("TWIN_PAGE_TEST_MEMORIES", "300"))
"""Generated memories in the store (more for the screenshots: `TWIN_PAGE_TEST_MEMORIES=3000`)."""
PIN = "Owner's bank card PIN is 8264."
SCRIPT_XSS = "Owner pasted <script>window.__xss = 1</script> into a note about fennel."
IMG_XSS = "Owner saved <img src=x onerror=\"window.__xss = 2\"> in a note about fennel."
GARDEN = "file:/home/owner/notes/allotment.md"
GARDEN_LINES = ("Owner grows purple kohlrabi on the allotment.", "Owner waters the allotment before sunrise.",
                "Owner shares the allotment shed with Jonas Silva.")
VIEWS = ("search", "memories", "teach", "activity", "signals", "profile", "sources", "stats")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """One API for the module over a store of `N_MEMORIES` generated memories, a secret, two XSS attempts and a
    source of three; keyword-only, no daemon. `api.ids` names the special memories."""
    home = tmp_path_factory.mktemp("page")
    with pytest.MonkeyPatch.context() as mp:
        isolated_home(mp, home)
        settings = load_settings()
        Context.open(settings).close()  # the store, migrated
        now = datetime.now(UTC)
        stamp = (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        special = [{"kind": "fact", "content": PIN, "source": "muse", "importance": 0.6, "created_at": stamp,
                    "sensitivity": "sensitive"}]
        special += [{"kind": "document", "content": text, "source": "muse", "importance": 0.5, "created_at": stamp}
                    for text in (SCRIPT_XSS, IMG_XSS)]
        special += [{"kind": "fact", "content": text, "source": GARDEN, "importance": 0.5, "created_at": stamp}
                    for text in GARDEN_LINES]
        fill(settings.db_path, settings.being, corpus(N_MEMORIES, end=now))
        ids = fill(settings.db_path, settings.being, special)
        with running_api(settings) as running:
            running.ids = {"pin": ids[0], "script": ids[1], "img": ids[2], "garden": ids[3:]}
            yield running


@pytest.fixture(scope="module")
def browser():
    """The system's chromium under Playwright (headless, no sandbox: tests may run as root)."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


def session(api, browser, **options):
    """A new browser context with a page session (a one-time link redeemed by the browser); its page, on /twin.
    Every request the page makes is recorded in `page.requests_seen`."""
    ctx = Context.open(api.settings)
    try:
        code = new_page_link(ctx)
    finally:
        ctx.close()
    context = browser.new_context(**options)
    page = context.new_page()
    page.requests_seen = []
    page.on("request", lambda request: page.requests_seen.append(request.url))
    page.set_default_timeout(15_000)
    page.goto(f"{api.url}/twin/session/{code}")
    page.wait_for_url(f"{api.url}/twin")
    page.get_by_label("Search your memories").wait_for()
    return page


def store(api) -> Store:
    return Store(api.settings.db_path)


def until(condition, timeout_s: float = 15.0) -> None:
    """Wait until `condition()` is true (the page's CSP forbids `eval`, so Playwright's string predicates cannot
    run in it: the test polls from Python)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the page did not get there in time"
        time.sleep(0.05)


def shoot(page, name: str) -> None:
    folder = screenshot_dir()
    if folder is not None:
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


# -- the door, over httpx -------------------------------------------------------------------------------------------
def test_link_works_once_and_sets_strict_http_only_cookies(api):
    out = subprocess.run([sys.executable, "-m", "twin", "open", "--no-browser"], capture_output=True, text=True,
                         timeout=60, check=True)
    link = out.stdout.strip()
    assert re.fullmatch(rf"{re.escape(api.url)}/twin/session/[A-Za-z0-9_-]{{32}}", link), out.stdout
    with api.anonymous() as browser_like:
        first = browser_like.get(link)
    assert first.status_code == 303 and re.fullmatch(r"/twin#key=[A-Za-z0-9_-]{43}", first.headers["location"])
    cookies = {c.split("=", 1)[0]: c.lower() for c in first.headers.get_list("set-cookie")}
    assert "httponly" in cookies["twin_session"] and "samesite=strict" in cookies["twin_session"]
    assert "path=/" in cookies["twin_session"] and "httponly" not in cookies["twin_csrf"]
    with api.anonymous() as other:
        again = other.get(link)
    assert again.status_code == 403 and "twin open" in again.text
    with Store(api.settings.db_path) as db:
        stored = [row[0] for row in db.conn.execute("SELECT key FROM state WHERE scope = 'page'")]
    assert link.rsplit("/", 1)[1] not in " ".join(stored)  # only a digest of a code is stored


def test_expired_or_unknown_link_is_refused(api):
    ctx = Context.open(api.settings)
    try:
        code = new_page_link(ctx)
        assert not redeem_page_link(ctx, code, now=datetime.now(UTC) + timedelta(minutes=6))
        assert not redeem_page_link(ctx, code)  # used up by the late try too
        assert not redeem_page_link(ctx, "A" * 32)
    finally:
        ctx.close()
    with api.anonymous() as anonymous:
        assert anonymous.get("/twin/session/" + "B" * 32).status_code == 403


def test_no_cookie_or_a_wrong_csrf_token_is_refused(api):
    ctx = Context.open(api.settings)
    try:
        code = new_page_link(ctx)
    finally:
        ctx.close()
    with api.anonymous() as anonymous:
        assert anonymous.get("/v1/memories").status_code == 401
        assert anonymous.post("/v1/remember", json={"content": "Owner likes quince jam."}).status_code == 401
    with api.anonymous() as owner:
        key = owner.get(f"/twin/session/{code}").headers["location"].split("#key=", 1)[1]
        owner.headers["X-Twin-Page-Key"] = key  # as the page sends it with every request (test_page_sessions.py)
        csrf = owner.cookies["twin_csrf"]
        assert owner.get("/v1/memories", params={"limit": 1}).status_code == 200  # a read needs no token
        for headers in ({}, {"X-CSRF-Token": "x" * 43}, {"X-CSRF-Token": owner.cookies["twin_session"]}):
            refused = owner.post("/v1/remember", json={"content": "Owner likes quince jam."}, headers=headers)
            assert refused.status_code == 403 and refused.json()["error"]["code"] == "csrf"
        made = owner.post("/v1/remember", json={"content": "Owner likes quince jam."}, headers={"X-CSRF-Token": csrf})
        assert made.status_code == 200
        assert owner.delete(f"/v1/memories/{made.json()['id']}").status_code == 403
        assert owner.delete(f"/v1/memories/{made.json()['id']}", headers={"X-CSRF-Token": csrf}).status_code == 200
    with api.anonymous() as forged:
        forged.cookies.set("twin_session", "not-a-session")
        assert forged.get("/v1/memories").status_code == 401


def test_every_answer_has_the_security_headers(api):
    for path, store_it in (("/twin", False), ("/twin/static/app.js", True), ("/v1/stats", False)):
        answer = api.client.get(path)
        assert answer.status_code == 200
        assert answer.headers["content-security-policy"].startswith("default-src 'self'; frame-ancestors 'none'")
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
        assert ("no-store" in answer.headers.get("cache-control", "")) is not store_it
    page = api.client.get("/twin").text
    assert "<script>" not in page and "style=" not in page and "<style" not in page  # no inline script or style
    assert re.findall(r'(?:src|href)="(https?:)?//', page) == []  # nothing from another origin


# -- the views, in the browser --------------------------------------------------------------------------------------
@pytest.mark.slow
def test_search_shows_the_breakdown_and_reveals_a_secret_only_when_asked(api, browser):
    page = session(api, browser)
    page.get_by_label("Search your memories").fill("kohlrabi allotment")
    first = page.locator(".results li").first
    first.wait_for()
    assert "kohlrabi" in first.locator(".content").inner_text()
    for signal in ("keyword", "vector", "recency", "relevance", "importance"):
        assert first.locator("dt", has_text=signal).count() == 1
    page.get_by_label("Search your memories").fill("bank card PIN")
    page.wait_for_timeout(600)
    assert PIN not in page.locator("main").inner_text()
    with page.expect_response(lambda r: r.url.endswith("/v1/search") and r.request.method == "POST") as answer:
        page.get_by_role("button", name="Reveal sensitive memories for this search").click()
    assert answer.value.headers["cache-control"] == "no-store"
    page.locator(".results li", has_text=PIN).wait_for()
    shoot(page, "search-revealed")
    page.get_by_label("Search your memories").fill("bank card PIN number")  # a new search hides it again
    page.wait_for_timeout(600)
    assert PIN not in page.locator("main").inner_text()
    page.get_by_role("button", name="Reveal sensitive memories for this search").click()
    page.locator(".results li", has_text=PIN).wait_for()
    page.get_by_label("Kind").select_option("fact")  # so does another kind
    page.wait_for_timeout(600)
    assert PIN not in page.locator("main").inner_text()
    page.context.close()


@pytest.mark.slow
def test_edit_a_memory_then_its_new_text_is_recalled(api, browser):
    target = api.ids["garden"][0]
    page = session(api, browser)
    page.goto(f"{api.url}/twin#memory/{target}")
    box = page.get_by_label(re.compile("New wording"))
    box.fill("Owner grows striped beetroot on the allotment.")
    page.get_by_role("button", name="Save").click()
    page.locator("blockquote", has_text="striped beetroot").wait_for()
    shoot(page, "memory-edited")
    assert "null" not in page.locator("main").inner_text().split()  # no absent part written as the word "null"
    with store(api) as db:
        edited = db.get(target)
    assert edited.id == target and edited.content == "Owner grows striped beetroot on the allotment."
    page.goto(f"{api.url}/twin#search")
    page.get_by_label("Search your memories").fill("striped beetroot")
    page.locator(".results li", has_text="striped beetroot").first.wait_for()
    assert page.locator(".results li").first.get_attribute("data-id") == str(target)
    page.context.close()


@pytest.mark.slow
def test_forget_one_memory_and_it_is_gone_from_the_store(api, browser):
    with store(api) as db:
        victim = db.list_memories(api.settings.being, limit=1, source_type="browser")[0]
    page = session(api, browser)
    page.goto(f"{api.url}/twin#memory/{victim.id}")
    page.get_by_role("button", name="Forget this memory…").click()
    page.get_by_role("button", name="Keep it").click()  # the first answer can be no
    with store(api) as db:
        assert db.get(victim.id) is not None
    page.get_by_role("button", name="Forget this memory…").click()  # by keyboard: focus on the safe answer
    assert page.evaluate("document.activeElement.textContent") == "Keep it"
    page.keyboard.press("Escape")  # cancels, and focus returns to the question
    assert page.evaluate("document.activeElement.textContent") == "Forget this memory…"
    with store(api) as db:
        assert db.get(victim.id) is not None
    page.get_by_role("button", name="Forget this memory…").click()
    page.get_by_role("button", name=f"Forget #{victim.id} for good").click()
    page.get_by_text(f"Forgotten: memory #{victim.id} is gone.").wait_for()
    with store(api) as db:
        assert db.get(victim.id) is None
        same = db.conn.execute("SELECT count(*) FROM memories WHERE content = ?", (victim.content,)).fetchone()[0]
    assert same == 0
    page.context.close()


@pytest.mark.slow
def test_forget_a_whole_source_with_its_count_first(api, browser):
    garden = api.ids["garden"]
    page = session(api, browser)
    page.goto(f"{api.url}/twin#memory/{garden[1]}")
    page.get_by_role("button", name="Forget everything from this source…").click()
    confirm = page.get_by_role("button", name="Forget 3 memories from this source")
    page.get_by_text(f"Everything from {GARDEN}: 3 memories").wait_for()
    shoot(page, "memory-forget-source-count")
    with store(api) as db:
        assert len(db.ids_by_source(api.settings.being, GARDEN)) == 3  # the count changed nothing
    confirm.click()
    page.get_by_text(f"Forgotten: 3 memories from {GARDEN}.").wait_for()
    with store(api) as db:
        assert db.ids_by_source(api.settings.being, GARDEN) == [] and not any(db.get_many(garden).values())
    page.context.close()


@pytest.mark.slow
def test_teach_shows_what_was_stored_and_what_was_known(api, browser):
    page = session(api, browser)
    page.goto(f"{api.url}/twin#teach")
    page.get_by_label("What should twin learn?").fill("My neighbour Ilse keeps three goats in Bergen.")
    page.get_by_role("button", name="Learn").click()
    page.get_by_role("heading", name="Stored (1)").wait_for()
    shoot(page, "teach-result")
    assert "Ilse" in page.locator("section.outcome").first.inner_text()
    page.get_by_role("button", name="Learn").click()
    page.get_by_role("heading", name="Already known (reinforced) (1)").wait_for()
    assert "null" not in page.locator("main").inner_text().split()
    with store(api) as db:
        assert any("Ilse" in m.content for m in db.list_memories(api.settings.being, limit=5, source_type="page"))
    page.context.close()


@pytest.mark.slow
def test_activity_arrives_live(api, browser):
    page = session(api, browser)
    page.goto(f"{api.url}/twin#activity")
    page.get_by_text("Live.").wait_for()
    before = page.locator(".diary li").count()
    api.client.post("/v1/remember", json={"content": "Owner repaired the allotment gate on Sunday."}).raise_for_status()
    until(lambda: page.locator(".diary li").count() > before)
    newest = page.locator(".diary li").first
    assert newest.get_attribute("data-kind") == "learned" and "allotment gate" not in newest.inner_text()
    page.get_by_label("Show").select_option("profile")
    assert page.locator(".diary li:visible").count() == page.locator(".diary li[data-kind=profile]").count()
    page.context.close()


@pytest.mark.slow
def test_reflect_now_shows_its_answer(api, browser):
    page = session(api, browser)
    page.goto(f"{api.url}/twin#signals")
    page.get_by_role("button", name="Reflect now").click()
    answer = page.locator(".reflected dl")
    answer.wait_for()
    shoot(page, "signals-reflected")
    text = answer.inner_text()
    for key in ("ran", "signals", "widgets", "thought"):
        assert key in text
    assert "false" in text  # no model provider: reflection does not run (seed 001: degrade), and says so
    page.context.close()


@pytest.mark.slow
def test_profile_edit_refuses_a_bad_value_and_saves_a_good_one(api, browser):
    page = session(api, browser)
    page.goto(f"{api.url}/twin#profile")
    goals = page.get_by_label("Goals")
    goals.fill("\n".join(f"Goal number {i}" for i in range(41)))
    page.get_by_role("button", name="Save the profile").click()
    page.get_by_role("alert").filter(has_text="at most 40").wait_for()
    assert goals.get_attribute("aria-invalid") == "true"
    shoot(page, "profile-refused")
    assert api.client.get("/v1/profile").json()["goals"] == []  # nothing changed
    goals.fill("Run a half marathon\nLearn Portuguese")
    page.get_by_label("Tone").fill("warm and brief")
    page.get_by_role("button", name="Save the profile").click()
    page.get_by_text("Profile saved.").wait_for()
    assert api.client.get("/v1/profile").json() | {"facts": []} == {
        "facts": [], "goals": ["Run a half marathon", "Learn Portuguese"], "preferences": [], "routines": [],
        "tone": "warm and brief"}
    page.context.close()


@pytest.mark.slow
def test_stored_xss_is_shown_as_text(api, browser):
    page = session(api, browser)
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.get_by_label("Search your memories").fill("fennel note")
    page.locator(".results li", has_text="<script>").wait_for()
    page.locator(".results li", has_text="onerror").wait_for()
    for view in (f"#memory/{api.ids['script']}", f"#memory/{api.ids['img']}", "#memories"):
        page.goto(f"{api.url}/twin{view}")
        page.locator("main h1").wait_for()
        page.wait_for_timeout(300)
        assert page.evaluate("window.__xss") is None
        assert page.locator("main img, main script").count() == 0
    page.goto(f"{api.url}/twin#memory/{api.ids['script']}")
    assert page.locator("blockquote").inner_text() == SCRIPT_XSS
    assert dialogs == []
    page.context.close()


@pytest.mark.slow
def test_memories_paging_reaches_the_oldest_and_skips_none(api, browser):
    with store(api) as db:
        expected = [m.id for m in db.list_memories(api.settings.being, limit=10**6, levels=("public", "internal",
                                                                                         "private"))]
    page = session(api, browser)
    page.goto(f"{api.url}/twin#memories")
    page.locator("ol[aria-label=Memories] li").first.wait_for()
    more = page.get_by_role("button", name="Show older")
    # the last memory shown is forgotten before "Show older": the next page still starts right after it (the page
    # sends its created_at with its id; a breaker run saw a 404 for a cursor whose row was gone)
    gone = int(page.locator("ol[aria-label=Memories] li").last.get_attribute("data-id"))
    api.client.delete(f"/v1/memories/{gone}").raise_for_status()
    shown_before = [int(i) for i in page.locator("ol[aria-label=Memories] li").evaluate_all(
        "items => items.map(li => li.dataset.id)")]
    expected = shown_before + [i for i in expected if i not in shown_before and i != gone]
    while more.is_visible():
        shown = page.locator("ol[aria-label=Memories] li").count()
        more.click()
        until(lambda shown=shown: page.locator("ol[aria-label=Memories] li").count() > shown or not more.is_visible())
    ids = [int(i) for i in page.locator("ol[aria-label=Memories] li").evaluate_all(
        "items => items.map(li => li.dataset.id)")]
    assert ids == expected  # newest first, every one, no gap, no repeat
    page.get_by_label("Source type").select_option("email")
    page.get_by_role("button", name="Show", exact=True).click()
    page.wait_for_timeout(500)
    sources = page.locator("ol[aria-label=Memories] .source").all_inner_texts()
    assert sources and all(s.startswith("email:") for s in sources)
    page.context.close()


@pytest.mark.slow
def test_every_view_passes_axe_in_light_and_dark_and_loads_nothing_from_elsewhere(api, browser):
    axe = axe_path()
    summary = {}
    for scheme in ("light", "dark"):
        page = session(api, browser, color_scheme=scheme, bypass_csp=True, viewport={"width": 1200, "height": 900})
        for view in VIEWS:
            page.goto(f"{api.url}/twin#{view}")
            page.locator("main h1").wait_for()
            page.wait_for_load_state("networkidle") if view != "activity" else page.get_by_text("Live.").wait_for()
            if view == "search":
                page.get_by_label("Search your memories").fill("dinner in Lisbon")
                page.locator(".results li").first.wait_for()
            page.add_script_tag(path=axe)
            found = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
            summary[f"{view}-{scheme}"] = {"violations": [{"id": v["id"], "impact": v["impact"],
                                                           "nodes": len(v["nodes"])} for v in found["violations"]],
                                           "passes": len(found["passes"])}
            shoot(page, f"{view}-{scheme}")
        page.keyboard.press("Tab")  # the first stop is the skip link: keyboard users reach the content at once
        assert page.evaluate("document.activeElement.textContent") == "Skip to the content"
        outside = [u for u in page.requests_seen if not u.startswith(api.url)]
        assert outside == []
        page.context.close()
    folder = screenshot_dir()
    if folder is not None:
        (folder / "axe.json").write_text(json.dumps(summary, indent=1))
    bad = {name: r["violations"] for name, r in summary.items() if r["violations"]}
    assert bad == {}


# -- the charts' numbers --------------------------------------------------------------------------------------------
def test_recall_latency_buckets_by_five_minutes_with_nearest_rank_percentiles():
    now = 1_767_225_600.0 + 7 * 60 + 30  # 2026-01-01T00:07:30Z, so the current bucket began at 00:05
    samples = [(now - 60 + i / 10, i / 1000) for i in range(1, 101)]  # 1..100 ms in the current bucket
    samples += [(now - 3600 + 200, 0.25), (now - 3600 + 200, 0.75)]  # the first bucket: 23:10-23:15
    samples += [(now - 3601 - 300, 9.0), (now + 300, 9.0)]  # before the hour, after now: in no bucket
    got = page_ops.recall_latency(None, samples, now=now)
    buckets = got["buckets"]
    assert got["step_min"] == 5 and len(buckets) == 12
    assert [b["start"] for b in (buckets[0], buckets[-1])] == ["2025-12-31T23:10:00Z", "2026-01-01T00:05:00Z"]
    assert buckets[-1] | {"start": None} == {"start": None, "count": 100, "p50_ms": 50.0, "p99_ms": 99.0}
    assert (buckets[0]["count"], buckets[0]["p50_ms"], buckets[0]["p99_ms"]) == (2, 250.0, 750.0)
    assert all(b["count"] == 0 and b["p50_ms"] is None for b in buckets[1:-1])
    wide = page_ops.recall_latency(None, samples, minutes=30, step=15, now=now)
    assert [b["count"] for b in wide["buckets"]] == [0, 100]
    for minutes, step in ((60, 7), (60, 0), (2000, 5), (5, 10)):
        with pytest.raises(InvalidInput):
            page_ops.recall_latency(None, samples, minutes=minutes, step=step, now=now)


def test_search_times_keep_only_the_newest():
    times = SearchTimes(size=3)
    for i in range(5):
        times.record(i / 100, at=1000.0 + i)
    assert len(times) == 3 and times.since(0) == [(1002.0, 0.02), (1003.0, 0.03), (1004.0, 0.04)]
    assert times.since(1003.5) == [(1004.0, 0.04)]


def _monday(at: datetime) -> str:
    return (at.date() - timedelta(days=at.weekday())).isoformat()


@pytest.mark.slow
def test_stats_draws_supersessions_in_the_week_the_newer_value_came(api, browser):
    now = datetime.now(UTC)
    stamp = lambda days: (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    rows = [{"kind": "fact", "content": f"Owner's {thing} is {value}.", "source": "muse", "importance": 0.5,
             "created_at": stamp(days)}
            for thing, value, days in (("bike lock code", "lost", 150), ("bike lock code", "2211", 120),
                                       ("gym day", "Monday", 130), ("gym day", "Thursday", 120),
                                       ("tram line", "the 4", 90), ("tram line", "the 12", 40))]
    ids = fill(api.settings.db_path, api.settings.being, rows)
    with store(api) as db, db.atomic():
        for old, new in ((0, 1), (2, 3), (4, 5)):
            db.supersede(ids[old], ids[new], "same slot, new value")
    weeks = api.client.get("/v1/stats/supersessions", params={"weeks": 26}).json()
    by_week = dict(zip(weeks["weeks"], weeks["counts"], strict=True))
    assert by_week[_monday(now - timedelta(days=120))] == 2 and by_week[_monday(now - timedelta(days=40))] == 1
    assert by_week[_monday(now - timedelta(days=150))] == 0  # the week of the old value counts nothing
    page = session(api, browser)
    page.goto(f"{api.url}/twin#stats")
    chart = page.locator("svg[aria-labelledby=supersessions-title]")
    chart.wait_for()
    bar = chart.locator(f"rect[data-week='{_monday(now - timedelta(days=120))}'] title")
    assert bar.text_content() == f"week of {_monday(now - timedelta(days=120))}: 2 superseded"
    assert chart.locator(f"rect[data-week='{_monday(now - timedelta(days=150))}']").count() == 0
    page.context.close()


@pytest.mark.slow
def test_stats_draws_the_recall_latency_of_the_searches_the_api_answered(api, browser):
    def searched() -> int:
        return sum(b["count"] for b in api.client.get("/v1/stats/recall-latency").json()["buckets"])

    before = searched()
    for query in ("dinner in Lisbon", "the roof repair", "sourdough"):
        api.client.post("/v1/search", json={"query": query, "limit": 5}).raise_for_status()
    api.client.get("/api/twin/memories", params={"q": "cargo bike"}).raise_for_status()
    api.client.post("/v1/search", json={"query": "x", "limit": 0})  # refused (422): no search ran, none timed
    assert searched() == before + 4
    got = api.client.get("/v1/stats/recall-latency", params={"minutes": 10, "step": 1}).json()
    assert len(got["buckets"]) == 10 and got["step_min"] == 1
    newest = [b for b in got["buckets"] if b["count"]][-1]
    assert 0 < newest["p50_ms"] <= newest["p99_ms"] < 60_000
    page = session(api, browser)
    page.goto(f"{api.url}/twin#stats")
    chart = page.locator("svg[aria-labelledby=latency-title]")
    chart.wait_for()
    assert chart.locator("rect").count() >= 2  # p50 and p99 of at least one five minutes
    assert page.get_by_text(f"{before + 4} searches, slowest p99").count() == 1
    page.context.close()


@pytest.mark.slow
def test_search_says_when_the_time_the_query_named_lifted_a_result(api, browser):
    now = datetime.now(UTC)
    rows = [{"kind": "episode", "content": text, "source": "muse", "importance": 0.5,
             "created_at": (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")}
            for text, days in (("Owner pickled quinces with Hannah Jensen on the balcony.", 0.02),
                               ("Owner bought quinces at the Saturday market in Porto.", 80))]
    recent, old = fill(api.settings.db_path, api.settings.being, rows)
    found = api.client.post("/v1/search", json={"query": "quinces in the last 3 days", "limit": 10}).json()
    flags = {hit["id"]: hit["in_window"] for hit in found["results"]}
    assert flags[recent] is True and flags.get(old, False) is False
    page = session(api, browser)
    query = page.get_by_label("Search your memories")
    query.fill("quinces in the last 3 days")
    lifted = page.locator(f".results li[data-id='{recent}']")
    lifted.wait_for()
    assert "Made in the time your query names" in lifted.locator(".reason").inner_text()
    shoot(page, "search-time-window")
    plain = api.client.post("/v1/search", json={"query": "quinces", "limit": 10}).json()["results"]
    assert {recent, old} <= {hit["id"] for hit in plain} and not any(hit["in_window"] for hit in plain)
    query.fill("quinces")
    until(lambda: page.locator(".results .reason").count() == 0)  # no time named: no reason given
    page.locator(f".results li[data-id='{old}']").wait_for()
    page.context.close()


@pytest.mark.slow
def test_search_shows_recalls_reasons_as_text_even_when_they_quote_markup(api, browser):
    """A supersession whose reason quotes markup, and a memory whose whole text is markup made today: the page
    shows each result's reasons as recall gave them (over `/v1/search`), as text; no element, no script runs."""
    now = datetime.now(UTC)
    markup = "<img src=x onerror=alert(1)>"
    stamp = lambda days: (now - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    old, new, bare = fill(api.settings.db_path, api.settings.being, [
        {"kind": "fact", "content": f"Owner worked at {markup} in Gdańsk.", "source": "muse", "importance": 0.5,
         "created_at": stamp(300)},
        {"kind": "fact", "content": "Owner works at Vesterhavn Ropeworks now.", "source": "muse", "importance": 0.5,
         "created_at": stamp(30)},
        {"kind": "document", "content": markup, "source": "muse", "importance": 0.5,
         "created_at": stamp(0)}])  # made now: minutes earlier is yesterday when the test runs just after midnight
    with store(api) as db, db.atomic():
        db.supersede(old, new, f"employer: {markup} -> Vesterhavn Ropeworks")
    page = session(api, browser)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    query = page.get_by_label("Search your memories")
    query.fill("Vesterhavn Ropeworks")
    replaced = page.locator(f".results li[data-id='{new}'] .reason[data-code='replaces']")
    replaced.wait_for()
    said = next(r for r in api.client.post("/v1/search", json={"query": "Vesterhavn Ropeworks"}).json()["results"]
                if r["id"] == new)["reasons"]
    assert replaced.inner_text() == said[0]["words"] and markup in said[0]["words"] and f"#{old}" in said[0]["words"]
    assert page.locator(".results img").count() == 0
    query.fill("onerror alert today")
    windowed = page.locator(f".results li[data-id='{bare}'] .reason[data-code='time_window']")
    windowed.wait_for()
    assert "Made in the time your query names ('today'" in windowed.inner_text()
    assert page.locator(f".results li[data-id='{bare}'] a").first.inner_text().strip() == markup
    assert page.locator(".results img").count() == 0 and dialogs == []
    assert page.evaluate("() => window.__xss") is None
    shoot(page, "search-reasons")
    page.goto(f"{api.url}/twin#stats")
    asked = page.locator("svg[aria-labelledby=latency-title] ~ ul .asked")
    asked.wait_for()  # the page's own searches are in the chart, named as the page's
    assert re.search(r"\bpage [1-9]", asked.inner_text()) and re.search(r"\bhttp [1-9]", asked.inner_text())
    page.context.close()


def test_the_page_loads_without_a_console_error_and_a_bad_memory_id_is_said_as_typed(api, browser):
    page = session(api, browser)
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.reload()
    page.get_by_label("Search your memories").wait_for()
    page.wait_for_load_state("networkidle")
    assert any(u.endswith("/twin/static/icon.svg") for u in page.requests_seen)  # its own icon, not /favicon.ico
    assert not any(u.endswith("/favicon.ico") for u in page.requests_seen)
    assert errors == []
    page.goto(f"{api.url}/twin#memory/abc")
    page.get_by_text("not 'abc'").wait_for()  # what was typed, not NaN
    page.context.close()
