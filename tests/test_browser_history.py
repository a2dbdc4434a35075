"""Browser history (LIBRARY_NOTES §6) on real SQLite files with the Chromium and Firefox schemas under a fake HOME:
profile discovery (native, snap, Flatpak, Local State names, profiles.ini), copies of locked and WAL-only
databases, cursors, which visits count, the URL deny-list, time conversion, corrupt copies and retries; then
interests: the heuristic clustering, the sentence, and the model clustering against the local fake provider."""

from __future__ import annotations

import json
import logging
import os
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from browser_fixtures import (
    AUTO_SUBFRAME,
    CLIENT_REDIRECT,
    FF_BOOKMARK,
    FF_DOWNLOAD,
    FF_EMBED,
    FF_FRAMED_LINK,
    FF_LINK,
    FF_REDIRECT_PERMANENT,
    FF_REDIRECT_TEMPORARY,
    FF_RELOAD,
    FF_TYPED,
    KEYWORD_GENERATED,
    LINK,
    MANUAL_SUBFRAME,
    REDIRECT_HOP,
    REDIRECTED_TO,
    RELOAD,
    TYPED,
    add_chromium_visits,
    add_firefox_visits,
    history_writer,
    make_chromium_profile,
    make_firefox_profile,
)
from case_tables import case_tables
from fake_llm import Reply

from twin.connectors import browser_history
from twin.connectors.browser_history import BrowserProfile, HistoryUnreadable, clean_url, find_profiles, read_visits
from twin.learn.interests import Interest, PageVisit, cluster_visits, cluster_with_model, interest_text, learn_interests
from twin.llm.provider import DATA_RULE, BadAnswer
from twin.outside_text import UNSAFE

CASES = case_tables("browser_history")
"""The case tables of this module (tests/data/browser_history_cases.toml)."""

T0 = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def chrome(history: Path) -> BrowserProfile:
    """A Chrome profile for `history`."""
    return BrowserProfile("chrome", "Default", history)


def firefox(places: Path) -> BrowserProfile:
    """A Firefox profile for `places`."""
    return BrowserProfile("firefox", "default-release", places)


def page(url: str, minutes: int = 0, kind: int = LINK, title: str = "A page", hidden: bool = False) -> tuple:
    """A fixture visit (browser_fixtures.Visit) `minutes` after T0."""
    return (url, title, T0 + timedelta(minutes=minutes), kind, hidden)


def urls(visits) -> list[str]:
    """The URLs of `visits`, in order."""
    return [v.url for v in visits]


# -- finding profiles -------------------------------------------------------------------------------------------
def test_find_profiles_lists_every_location_in_a_fixed_order(tmp_path):
    home = tmp_path / "home"
    make_chromium_profile(home, "chrome", "Default", name="Personal")
    make_chromium_profile(home, "chrome", "Profile 10", name="Side project")
    make_chromium_profile(home, "chrome", "Profile 2", name="Work")
    make_chromium_profile(home, "chrome", "Imported")  # any dir with a History file
    make_chromium_profile(home, "chrome", "System Profile")  # the profile picker: not browsing
    (home / ".config/google-chrome/Profile 3").mkdir()  # no History: not listed
    (home / ".config/google-chrome/Profile 4").mkdir()
    (home / ".config/google-chrome/Profile 4/History").symlink_to(tmp_path / "gone")  # dangling: not listed
    for browser in ("chrome-beta", "chrome-unstable", "chromium", "chromium-snap", "brave", "edge", "vivaldi",
                    "chrome-flatpak", "chromium-flatpak", "brave-flatpak", "edge-flatpak", "vivaldi-flatpak"):
        make_chromium_profile(home, browser)
    make_firefox_profile(home, profile="abcd1234.default-release", name="default-release")
    make_firefox_profile(home, profile="elsewhere/efgh5678.work", name="work", relative=False, default=False)
    with (home / ".mozilla/firefox/profiles.ini").open("a") as ini:  # listed, but never used: no places.sqlite
        ini.write("\n[Profile7]\nName=empty\nIsRelative=1\nPath=zzzz.empty\n")
    make_firefox_profile(home, browser="firefox-snap", profile="snap1234.default", name="default")
    make_firefox_profile(home, browser="firefox-flatpak", profile="flat1234.default", name="flatpak")

    found = find_profiles(home)

    assert [(p.browser, p.name, str(p.history.relative_to(home))) for p in found] == [
        ("chrome", "Personal", ".config/google-chrome/Default/History"),
        ("chrome", "Work", ".config/google-chrome/Profile 2/History"),
        ("chrome", "Side project", ".config/google-chrome/Profile 10/History"),
        ("chrome", "Imported", ".config/google-chrome/Imported/History"),
        ("chrome", "Default", ".config/google-chrome-beta/Default/History"),
        ("chrome", "Default", ".config/google-chrome-unstable/Default/History"),
        ("chromium", "Default", ".config/chromium/Default/History"),
        ("chromium", "Default", "snap/chromium/common/chromium/Default/History"),
        ("brave", "Default", ".config/BraveSoftware/Brave-Browser/Default/History"),
        ("edge", "Default", ".config/microsoft-edge/Default/History"),
        ("vivaldi", "Default", ".config/vivaldi/Default/History"),
        ("chrome", "Default", ".var/app/com.google.Chrome/config/google-chrome/Default/History"),
        ("chromium", "Default", ".var/app/org.chromium.Chromium/config/chromium/Default/History"),
        ("brave", "Default", ".var/app/com.brave.Browser/config/BraveSoftware/Brave-Browser/Default/History"),
        ("edge", "Default", ".var/app/com.microsoft.Edge/config/microsoft-edge/Default/History"),
        ("vivaldi", "Default", ".var/app/com.vivaldi.Vivaldi/config/vivaldi/Default/History"),
        ("firefox", "default-release", ".mozilla/firefox/abcd1234.default-release/places.sqlite"),
        ("firefox", "work", "elsewhere/efgh5678.work/places.sqlite"),
        ("firefox", "default", "snap/firefox/common/.mozilla/firefox/snap1234.default/places.sqlite"),
        ("firefox", "flatpak", ".var/app/org.mozilla.firefox/.mozilla/firefox/flat1234.default/places.sqlite"),
    ]
    assert find_profiles(home) == found
    assert found[0].key == f"chrome:{home}/.config/google-chrome/Default"
    assert len({p.key for p in found}) == len(found)


def test_find_profiles_in_an_empty_home_and_a_malformed_profiles_ini(tmp_path, caplog):
    assert find_profiles(tmp_path / "nobody") == []
    make_firefox_profile(tmp_path, browser="firefox-snap", profile="snap1234.default")
    ini = tmp_path / ".mozilla/firefox/profiles.ini"
    ini.parent.mkdir(parents=True)
    ini.write_text("Path=abcd.default\n[[[ not an ini")
    (tmp_path / ".config/google-chrome").mkdir(parents=True)
    (tmp_path / ".config/google-chrome/Local State").write_text("{not json")  # names fall back to the dir
    make_chromium_profile(tmp_path, "chrome", "Profile 1")

    with caplog.at_level(logging.WARNING, logger="twin.connectors.browser_history"):
        found = find_profiles(tmp_path)

    assert [(p.browser, p.name) for p in found] == [("chrome", "Profile 1"), ("firefox", "default-release")]
    assert any("profiles.ini" in r.getMessage() for r in caplog.records)


# -- reading: copies of databases the browser holds -------------------------------------------------------------
@pytest.mark.slow
def test_locked_chromium_database_is_read_from_a_copy(tmp_path):
    history = make_chromium_profile(tmp_path, visits=[page(f"https://docs.rs/tokio/{i}", i) for i in range(3)])
    with history_writer(history, exclusive=True) as browser:  # what Chrome's HistoryDatabase does
        add_chromium_visits(browser, [page("https://tokio.rs/tokio/tutorial", 10)])  # committed, lock kept
        browser.execute("BEGIN IMMEDIATE")  # and a write in progress (a hot -journal)
        browser.execute("INSERT INTO urls (url, title, last_visit_time) VALUES ('https://half.example/', '', 1)")
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            sqlite3.connect(f"file:{history}?mode=ro", uri=True).execute("SELECT COUNT(*) FROM visits").fetchall()
        before = history.read_bytes(), Path(f"{history}-journal").read_bytes()

        visits, cursor = read_visits(chrome(history), 0, None, 100, tmp_path / "work")

        assert (history.read_bytes(), Path(f"{history}-journal").read_bytes()) == before  # the original untouched
    assert urls(visits) == [f"https://docs.rs/tokio/{i}" for i in range(3)] + ["https://tokio.rs/tokio/tutorial"]
    assert cursor == 4
    assert list((tmp_path / "work").iterdir()) == []


def test_firefox_visits_only_in_the_wal_are_read(tmp_path):
    places = make_firefox_profile(tmp_path, visits=[page("https://tokio.rs/", 0, FF_LINK)])
    with history_writer(places, exclusive=True) as browser:  # Firefox ≥ 63: exclusive, WAL not checkpointed
        add_firefox_visits(browser, [page("https://tokio.rs/tokio/tutorial", 5, FF_LINK),
                                     page("https://docs.rs/tokio/", 6, FF_TYPED)])
        assert Path(f"{places}-wal").stat().st_size > 0
        immutable = sqlite3.connect(f"file:{places}?immutable=1", uri=True)
        assert immutable.execute("SELECT COUNT(*) FROM moz_historyvisits").fetchone() == (1,)  # why we copy
        immutable.close()

        visits, cursor = read_visits(firefox(places), 0, None, 100, tmp_path / "work")

    assert urls(visits) == ["https://tokio.rs/", "https://tokio.rs/tokio/tutorial", "https://docs.rs/tokio/"]
    assert cursor == 3


def test_chromium_wal_database_is_read_too(tmp_path):
    history = make_chromium_profile(tmp_path, visits=[page("https://docs.rs/", 0)], wal=True)
    with history_writer(history) as browser:
        add_chromium_visits(browser, [page("https://docs.rs/tokio/", 1)])
        visits, cursor = read_visits(chrome(history), 0, None, 10, tmp_path / "work")
    assert (urls(visits), cursor) == (["https://docs.rs/", "https://docs.rs/tokio/"], 2)


# -- reading: cursors, limits, since -----------------------------------------------------------------------------
@pytest.mark.parametrize("browser", ["chrome", "firefox"])
def test_a_second_read_after_the_cursor_returns_only_new_visits(tmp_path, browser):
    make, add, kind = (make_chromium_profile, add_chromium_visits, LINK) if browser == "chrome" else \
        (make_firefox_profile, add_firefox_visits, FF_LINK)
    db = make(tmp_path, visits=[page(f"https://docs.rs/a{i}", i, kind) for i in range(3)])
    profile = find_profiles(tmp_path)[0]

    first, cursor = read_visits(profile, 0, None, 100, tmp_path / "work")
    with history_writer(db) as conn:
        add(conn, [page("https://docs.rs/a0", 10, kind), page("https://docs.rs/b", 11, kind)])
    second, cursor2 = read_visits(profile, cursor, None, 100, tmp_path / "work")
    third, cursor3 = read_visits(profile, cursor2, None, 100, tmp_path / "work")

    assert (urls(first), cursor) == (["https://docs.rs/a0", "https://docs.rs/a1", "https://docs.rs/a2"], 3)
    assert [(v.visit_id, v.url) for v in second] == [(4, "https://docs.rs/a0"), (5, "https://docs.rs/b")]
    assert (third, cursor3) == ([], 5)


def test_cleared_firefox_history_restarts_ids_below_the_cursor_and_is_read_again(tmp_path):
    db = make_firefox_profile(tmp_path, visits=[page(f"https://docs.rs/a{i}", i, FF_LINK) for i in range(5)])
    profile = find_profiles(tmp_path)[0]
    _, cursor = read_visits(profile, 0, None, 100, tmp_path / "work")
    with history_writer(db) as conn:  # "Clear recent history: everything", then two new visits
        conn.execute("DELETE FROM moz_historyvisits")  # no AUTOINCREMENT: the next id is 1 again
        conn.commit()
        add_firefox_visits(conn, [page("https://tokio.rs/x", 20, FF_LINK), page("https://tokio.rs/y", 21, FF_LINK)])
    visits, after = read_visits(profile, cursor, None, 100, tmp_path / "work")
    assert cursor == 5 and urls(visits) == ["https://tokio.rs/x", "https://tokio.rs/y"] and after == 2


def test_limit_keeps_the_newest_and_the_cursor_passes_them_all(tmp_path):
    history = make_chromium_profile(tmp_path, visits=[page(f"https://docs.rs/p{i}", i) for i in range(10)])
    visits, cursor = read_visits(chrome(history), 0, None, 4, tmp_path / "work")
    assert ([v.visit_id for v in visits], cursor) == ([7, 8, 9, 10], 10)
    assert read_visits(chrome(history), cursor, None, 4, tmp_path / "work") == ([], 10)
    with pytest.raises(ValueError):
        read_visits(chrome(history), 0, None, 0, tmp_path / "work")


@pytest.mark.parametrize("browser", ["chrome", "firefox"])
def test_since_skips_older_visits_but_the_cursor_counts_them(tmp_path, browser):
    make, kind = (make_chromium_profile, LINK) if browser == "chrome" else (make_firefox_profile, FF_LINK)
    make(tmp_path, visits=[page("https://docs.rs/old", -10 * 1440, kind), page("https://docs.rs/mid", -5 * 1440, kind),
                           page("https://docs.rs/new", -1440, kind)])
    visits, cursor = read_visits(find_profiles(tmp_path)[0], 0, T0 - timedelta(days=7), 100, tmp_path / "work")
    assert (urls(visits), cursor) == (["https://docs.rs/mid", "https://docs.rs/new"], 3)


# -- reading: which visits count ---------------------------------------------------------------------------------
def test_chromium_skips_hidden_redirect_hops_reloads_and_subframes(tmp_path):
    history = make_chromium_profile(tmp_path, visits=[
        page("https://docs.rs/tokio/", 0, TYPED),
        page("https://t.co/abc", 1, REDIRECT_HOP),  # the link that redirected
        page("https://example.org/article", 1, REDIRECTED_TO),  # where it arrived: the page shown
        page("https://docs.rs/tokio/", 2, RELOAD),
        page("https://ads.example/frame", 3, AUTO_SUBFRAME),
        page("https://embed.example/player", 4, MANUAL_SUBFRAME),
        page("https://search.example/results", 5, KEYWORD_GENERATED),
        page("https://hidden.example/", 6, LINK, hidden=True),
        page("https://example.org/meta-refreshed", 7, 0 | CLIENT_REDIRECT | 0x20000000),
        page("https://tokio.rs/", 8, LINK),
    ])
    visits, cursor = read_visits(chrome(history), 0, None, 100, tmp_path / "work")
    assert [(v.visit_id, v.url) for v in visits] == [
        (1, "https://docs.rs/tokio/"), (3, "https://example.org/article"), (9, "https://example.org/meta-refreshed"),
        (10, "https://tokio.rs/")]
    assert cursor == 10


def test_firefox_skips_hidden_places_downloads_frames_embeds_and_reloads(tmp_path):
    places = make_firefox_profile(tmp_path, visits=[
        page("https://docs.rs/tokio/", 0, FF_LINK),
        page("https://t.co/abc", 1, FF_LINK, hidden=True),  # a redirect source: Firefox hides the place
        page("https://example.org/article", 1, FF_REDIRECT_TEMPORARY),  # where it arrived
        page("http://tokio.rs/", 2, FF_TYPED, hidden=True),
        page("https://tokio.rs/", 2, FF_REDIRECT_PERMANENT),
        page("https://files.example/big.iso", 3, FF_DOWNLOAD),
        page("https://ads.example/frame", 4, FF_FRAMED_LINK, hidden=True),
        page("https://docs.rs/tokio/", 5, FF_RELOAD),
        page("https://embed.example/x", 6, FF_EMBED),
        page("https://news.ycombinator.com/", 7, FF_TYPED),
        page("https://www.rust-lang.org/", 8, FF_BOOKMARK),
    ])
    visits, cursor = read_visits(firefox(places), 0, None, 100, tmp_path / "work")
    assert urls(visits) == ["https://docs.rs/tokio/", "https://example.org/article", "https://tokio.rs/",
                            "https://news.ycombinator.com/", "https://www.rust-lang.org/"]
    assert cursor == 11


def test_read_cleans_urls_and_titles_and_applies_the_deny_list(tmp_path):
    history = make_chromium_profile(tmp_path, visits=[
        page("https://docs.rs/tokio/latest/tokio/?search=spawn#method", 0, title="tokio\x1b[31m - Rust\x07"),
        page("https://www.mybank.com/accounts/overview", 1),
        page("http://192.168.1.1/admin", 2),
        page("file:///home/owner/notes.txt", 3),
        page("https://docs.rs/private-crate/", 4),
    ])
    visits, cursor = read_visits(chrome(history), 0, None, 100, tmp_path / "work", extra_deny=["DOCS.RS/private*"])
    assert [(v.url, v.title) for v in visits] == [("https://docs.rs/tokio/latest/tokio/", "tokio - Rust")]
    assert cursor == 5


def test_titles_arrive_without_terminal_controls_line_breaks_or_bidi_overrides(tmp_path):
    hostile = ["\x1b]52;c;cm0gLXJm\x07", "\x9b2J", "\u202egpj.exe", "\n2026-11-30T08:00:00Z  Forgot 3 memory(ies).",
               "\u2066x\u2069\u200f", "\u2028\x85\x7f"]
    history = make_chromium_profile(tmp_path, visits=[
        page(f"https://docs.rs/crate{n}/", n, title=f"crate{n} {text} docs") for n, text in enumerate(hostile)])
    visits, _ = read_visits(chrome(history), 0, None, 100, tmp_path / "work")
    assert len(visits) == len(hostile)
    assert all(v.title.startswith(f"crate{n} ") and v.title.endswith(" docs") and not UNSAFE.search(v.title)
               for n, v in enumerate(sorted(visits, key=lambda v: v.url)))
    assert sorted(v.title for v in visits)[3] == "crate3 2026-11-30T08:00:00Z Forgot 3 memory(ies). docs"


# -- times -------------------------------------------------------------------------------------------------------
def test_chromium_and_firefox_epochs(tmp_path):
    history = make_chromium_profile(tmp_path, visits=[page("https://docs.rs/", 0)])
    places = make_firefox_profile(tmp_path, visits=[page("https://docs.rs/", 0, FF_LINK)])
    with history_writer(history) as conn:  # raw values: 13e15 µs after 1601 is 1355526400 s after 1970
        conn.execute("UPDATE visits SET visit_time = 13000000000000000")
        conn.commit()
    with history_writer(places) as conn:
        conn.execute("UPDATE moz_historyvisits SET visit_date = 1764478800000000")
        conn.commit()
    [chromium], _ = read_visits(chrome(history), 0, None, 10, tmp_path / "work")
    [mozilla], _ = read_visits(firefox(places), 0, None, 10, tmp_path / "work")
    assert chromium.visited_at == "2012-12-14T23:06:40Z"
    assert mozilla.visited_at == "2025-11-30T05:00:00Z"


@pytest.mark.parametrize("browser", ["chrome", "firefox"])
def test_times_across_the_berlin_dst_changes_are_utc(tmp_path, browser):
    berlin = ZoneInfo("Europe/Berlin")
    moments = [datetime(2026, 3, 29, 1, 59, tzinfo=berlin), datetime(2026, 3, 29, 3, 1, tzinfo=berlin),  # CET → CEST
               datetime(2026, 10, 25, 2, 30, tzinfo=berlin, fold=0),  # 02:30 CEST, then the clock goes back
               datetime(2026, 10, 25, 2, 30, tzinfo=berlin, fold=1)]  # 02:30 CET, an hour later
    make, kind = (make_chromium_profile, LINK) if browser == "chrome" else (make_firefox_profile, FF_LINK)
    make(tmp_path, visits=[(f"https://docs.rs/{i}", "t", m, kind, False) for i, m in enumerate(moments)])
    visits, _ = read_visits(find_profiles(tmp_path)[0], 0, None, 10, tmp_path / "work")
    assert [v.visited_at for v in visits] == ["2026-03-29T00:59:00Z", "2026-03-29T01:01:00Z",
                                              "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"]


# -- unreadable copies -------------------------------------------------------------------------------------------
def test_garbage_database_is_unreadable_after_the_retries(tmp_path, caplog):
    history = tmp_path / ".config/google-chrome/Default/History"
    history.parent.mkdir(parents=True)
    history.write_bytes(os.urandom(64 * 1024))
    [profile] = find_profiles(tmp_path)
    with caplog.at_level(logging.INFO, logger="twin.connectors.browser_history"), \
            pytest.raises(HistoryUnreadable) as raised:
        read_visits(profile, 0, None, 10, tmp_path / "work")
    assert "chrome profile 'Default'" in str(raised.value) and "3 copies" in str(raised.value)
    assert len([r for r in caplog.records if "failed" in r.getMessage()]) == 3
    assert list((tmp_path / "work").iterdir()) == []


def test_truncated_database_is_unreadable(tmp_path):
    visits = [page(f"https://docs.rs/crate-{i}/", i, title=f"crate {i} " + "words " * 40) for i in range(300)]
    history = make_chromium_profile(tmp_path, visits=visits)
    data = history.read_bytes()
    history.write_bytes(data[: len(data) // 2])
    with pytest.raises(HistoryUnreadable) as raised:
        read_visits(chrome(history), 0, None, 10, tmp_path / "work")
    assert "http" not in str(raised.value)
    assert list((tmp_path / "work").iterdir()) == []


def test_missing_database_is_unreadable(tmp_path):
    with pytest.raises(HistoryUnreadable, match="FileNotFoundError"):
        read_visits(chrome(tmp_path / "gone" / "History"), 0, None, 10, tmp_path / "work")


def test_a_torn_copy_is_retried(tmp_path, monkeypatch):
    history = make_chromium_profile(tmp_path, visits=[page("https://docs.rs/tokio/", 0)])
    real_copy = browser_history._copy_database
    temps: list[Path] = []

    def torn_once(source: Path, temp: Path) -> Path:  # the browser wrote mid-copy the first time
        temps.append(temp)
        assert temp.parent == tmp_path / "work" and temp.stat().st_mode & 0o777 == 0o700
        copy = real_copy(source, temp)
        if len(temps) == 1:
            copy.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
        return copy

    monkeypatch.setattr(browser_history, "_copy_database", torn_once)
    visits, cursor = read_visits(chrome(history), 0, None, 10, tmp_path / "work")
    assert (urls(visits), cursor, len(temps)) == (["https://docs.rs/tokio/"], 1, 2)
    assert not any(t.exists() for t in temps)


# -- the deny-list ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("url", CASES["test_clean_url_refuses"])
def test_clean_url_refuses(url):
    assert clean_url(url) is None


@pytest.mark.parametrize(("url", "cleaned"), CASES["test_clean_url_keeps_ordinary_pages"])
def test_clean_url_keeps_ordinary_pages(url, cleaned):
    assert clean_url(url) == cleaned


def test_extra_deny_globs_are_case_insensitive():
    assert clean_url("https://Intranet.example.com/Wiki/Page", ["intranet.*"]) is None
    assert clean_url("https://example.com/WIKI/x", ["*/wiki/*"]) is None
    assert clean_url("https://example.com/docs", ["intranet.*"]) == "https://example.com/docs"


# -- interests: the heuristic -----------------------------------------------------------------------------------
def realistic_history() -> list[PageVisit]:
    """14 pages on docs.rs and tokio.rs about tokio, 7 on two news sites, 3 one-offs, one page read twice."""
    docs = ["tokio - Rust", "Runtime in tokio::runtime - Rust", "spawn in tokio::task - Rust",
            "JoinHandle in tokio::task - Rust", "Builder in tokio::runtime - Rust", "select in tokio - Rust",
            "async_trait - Rust", "Mutex in tokio::sync - Rust", "mpsc in tokio::sync - Rust"]
    guides = ["Tutorial", "Spawning", "Async in depth", "Channels", "Select"]
    bbc = ["Election results live", "Storm warning for the coast", "Markets fall on rate fears",
           "Election count continues"]
    guardian = ["Election: what we know so far", "Heatwave across Europe", "Election night recap"]
    pages = [(f"https://docs.rs/tokio/{i}", t) for i, t in enumerate(docs)]
    pages += [(f"https://tokio.rs/tokio/{i}", f"{t} | Tokio - An asynchronous Rust runtime")
              for i, t in enumerate(guides)]
    pages += [(f"https://www.bbc.com/news/{i}", f"{t} - BBC News") for i, t in enumerate(bbc)]
    pages += [(f"https://www.theguardian.com/world/{i}", f"{t} | World news | The Guardian")
              for i, t in enumerate(guardian)]
    pages += [("https://en.wikipedia.org/wiki/Sourdough", "Sourdough - Wikipedia"),
              ("https://github.com/owner/dotfiles", "owner/dotfiles: my config"),
              ("https://www.youtube.com/watch", "Cat plays piano - YouTube")]
    pages.append(("https://docs.rs/tokio/0", "tokio - Rust"))  # a page read twice is one page
    return [PageVisit(url, title, f"2026-11-{20 + i % 9:02d}T{i % 24:02d}:00:00Z") for i, (url, title) in
            enumerate(pages)]


def test_heuristic_finds_the_tokio_reading_and_the_news():
    history = realistic_history()
    interests = cluster_visits(history)

    # the election pages of both sites are one topic; the storm, markets and heatwave pages of the same news sites
    # are no part of it (interests are topics, not sites: issue 13)
    assert [(i.pages, i.sites) for i in interests] == [(14, ["docs.rs", "tokio.rs"]),
                                                        (4, ["bbc.com", "theguardian.com"])]
    assert {"tokio", "runtime"} <= set(interests[0].topic.split()) and len(interests[0].topic.split()) <= 4
    assert "news" in interests[1].topic.split() and "election" in interests[1].topic.split()
    assert interests[0].first_at == "2026-11-20T00:00:00Z" and interests[0].last_at == "2026-11-28T08:00:00Z"
    shuffled = history[:]
    random.Random(7).shuffle(shuffled)
    assert cluster_visits(shuffled) == interests
    assert cluster_visits(history, limit=1) == interests[:1]


def test_heuristic_needs_three_pages_and_names_a_site_without_recurring_terms():
    few = [PageVisit("https://docs.rs/a", "tokio runtime", "2026-11-29T10:00:00Z"),
           PageVisit("https://docs.rs/b", "tokio runtime", "2026-11-29T11:00:00Z")]
    assert cluster_visits(few) == []
    varied = [PageVisit(f"https://news.ycombinator.com/item{i}", t, "2026-11-29T10:00:00Z")
              for i, t in enumerate(["Show: a tiny database", "Why postgres is fast", "Learning Haskell"])]
    [interest] = cluster_visits([*varied, PageVisit("not a url", "x", "bad time")])
    assert (interest.topic, interest.pages) == ("news.ycombinator.com", 3)
    assert interest_text(interest, NOW) == "Owner read a lot on news.ycombinator.com on 29 November 2026 (3 pages)."


def test_page_visit_round_trips_and_rejects_bad_shapes():
    visit = PageVisit("https://docs.rs/", "docs", "2026-11-30T05:00:00Z")
    assert PageVisit.from_list(json.loads(json.dumps(visit.to_list()))) == visit
    for bad in (["https://docs.rs/", "docs"], ["a", "b", 3], "abc", None):
        with pytest.raises(ValueError):
            PageVisit.from_list(bad)


def test_interest_text():
    tokio = Interest("rust async runtimes", 14, ["docs.rs", "tokio.rs"], "2026-11-24T08:00:00Z",
                     "2026-11-28T21:00:00Z")
    assert interest_text(tokio, NOW) == ("Owner read a lot about rust async runtimes between 24 and 28 November 2026 "
                                         "(14 pages on docs.rs and tokio.rs).")  # a date, never "this week"
    early = Interest("sourdough baking", 5, ["a.org", "b.org", "c.org", "d.org", "e.org"], "2026-11-03T08:00:00Z",
                     "2026-11-09T22:00:00Z")
    assert interest_text(early, NOW) == ("Owner read a lot about sourdough baking between 3 and 9 November 2026 "
                                         "(5 pages on a.org, b.org, c.org and 2 other sites).")
    across = Interest("tax forms", 4, ["a.org", "b.org", "c.org", "d.org"], "2026-10-28T08:00:00Z",
                      "2026-11-03T08:00:00Z")
    assert "between 28 October and 3 November 2026 (4 pages on a.org, b.org, c.org and 1 other site)" in \
        interest_text(across, NOW)
    one_day = Interest("chess openings", 3, ["lichess.org"], "2026-11-02T08:00:00Z", "2026-11-02T09:00:00Z")
    assert interest_text(one_day, NOW).endswith("chess openings on 2 November 2026 (3 pages on lichess.org).")


# -- interests: the model ---------------------------------------------------------------------------------------
def model_history() -> list[PageVisit]:
    """6 docs.rs pages, 4 tokio.rs pages and one Wikipedia page, on 28-29 November 2026."""
    docs = [PageVisit(f"https://docs.rs/tokio/{i}", f"Runtime {i} in tokio - Rust", f"2026-11-29T0{i}:00:00Z")
            for i in range(6)]
    guides = [PageVisit(f"https://tokio.rs/tokio/{i}", "Async channels | Tokio", f"2026-11-29T1{i}:00:00Z")
              for i in range(4)]
    return docs + guides + [PageVisit("https://en.wikipedia.org/wiki/Sourdough", "Sourdough", "2026-11-28T10:00:00Z")]


def test_model_clustering_with_one_call(fake_llm, provider):
    interests = cluster_with_model(provider, model_history())

    assert [(i.sites, i.pages) for i in interests] == [(["docs.rs"], 6), (["tokio.rs"], 4)]
    assert interests[0].topic and interests[0].first_at == "2026-11-29T00:00:00Z"
    [request] = fake_llm.chat_requests()
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert system.startswith("Task: interests.") and DATA_RULE in system
    assert user.startswith("<<<VISITS\n") and "docs.rs — Runtime 0 in tokio - Rust" in user


def test_model_answers_are_checked_against_the_visits(fake_llm, provider):
    fake_llm.script(Reply(content=json.dumps({"interests": [
        {"topic": "rust \x1b[31masync\x1b[0m runtimes", "pages": 99,
         "sites": ["https://www.docs.rs/tokio", "tokio.rs", "evil.example"]},
        {"topic": "x" * 200, "pages": "3", "sites": "docs.rs"},
        {"topic": "made up", "pages": 5, "sites": ["nowhere.example"]},
        "garbage",
        {"pages": 4, "sites": ["docs.rs"]},
        {"topic": "RUST ASYNC RUNTIMES", "pages": 2, "sites": ["docs.rs"]},
        {"topic": "bread", "pages": -1, "sites": ["en.wikipedia.org"]},
    ]})))
    interests = cluster_with_model(provider, model_history())
    assert [(i.topic, i.pages, i.sites) for i in interests] == [
        ("rust async runtimes", 10, ["docs.rs", "tokio.rs"]), ("x" * 80, 3, ["docs.rs"]),
        ("bread", 1, ["en.wikipedia.org"])]
    assert interests[0].first_at == "2026-11-29T00:00:00Z" and interests[0].last_at == "2026-11-29T13:00:00Z"


def test_model_input_is_bounded_to_the_newest_visits(fake_llm, provider):
    visits = [PageVisit(f"https://docs.rs/p{i}", f"page {i}", format(T0 + timedelta(minutes=i), "%Y-%m-%dT%H:%M:%SZ"))
              for i in range(400)]
    random.Random(3).shuffle(visits)
    cluster_with_model(provider, visits)
    user = fake_llm.chat_requests()[0]["messages"][1]["content"]
    lines = user.splitlines()[1:-1]
    assert len(lines) == 300 and lines[0] == "docs.rs — page 100" and lines[-1] == "docs.rs — page 399"


def test_a_garbage_model_answer_raises(fake_llm, provider):
    fake_llm.script(Reply(content="They seem to like Rust."), Reply(content='{"interests": "tokio"}'))
    with pytest.raises(BadAnswer):
        cluster_with_model(provider, model_history())
    assert len(fake_llm.chat_requests()) == 2
    assert cluster_with_model(provider, []) == []


# -- learning them ------------------------------------------------------------------------------------------------
def _browser_memories(store) -> list[str]:
    return [c for (c,) in store.conn.execute("SELECT content FROM memories WHERE source = 'browser' ORDER BY id")]


def test_learn_interests_offline_learns_one_memory_per_interest_and_one_diary_line(store, activity):
    texts, line = learn_interests(store, activity, "owner", realistic_history(), 2, None,
                                  now=datetime(2026, 11, 30, tzinfo=UTC))
    assert line == f"Browser: 25 visits read from 2 profiles; learned {len(texts)} interests."
    assert len(texts) == 2 and _browser_memories(store) == texts
    assert [(a.kind, a.text) for a in activity.recent(5)] == [("browsed", line)]
    # the same import again (an at-least-once redelivery) reinforces instead of duplicating
    learn_interests(store, activity, "owner", realistic_history(), 2, None, now=datetime(2026, 11, 30, tzinfo=UTC))
    assert _browser_memories(store) == texts


def test_learn_interests_uses_the_model_and_falls_back_on_garbage(store, activity, fake_llm, provider):
    texts, _ = learn_interests(store, activity, "owner", model_history(), 1, provider,
                               now=datetime(2026, 11, 30, tzinfo=UTC))
    assert len(fake_llm.chat_requests()) == 1 and texts and all("docs.rs" in t or "tokio.rs" in t for t in texts)
    fake_llm.script(Reply(content="I'd rather talk about the weather."), Reply(content="{not json"))
    fallback, line = learn_interests(store, activity, "owner", model_history(), 1, provider,
                                     now=datetime(2026, 11, 30, tzinfo=UTC))
    assert fallback == [interest_text(i, datetime(2026, 11, 30, tzinfo=UTC)) for i in cluster_visits(model_history())]
    assert any("Model clustering of browser history failed" in a.text for a in activity.recent(10) if a.kind == "model")
    assert line.startswith("Browser: ")


def test_what_leaves_the_reader_is_site_hashed_path_and_redacted_title(twin_env, store):
    from twin.connectors.browser import read_new_visits

    home = Path(os.environ["HOME"])
    secret = "hunter2-" + "x" * 8
    recent = datetime.now(UTC) - timedelta(hours=1)  # inside the first read's `browser_first_days` whatever the date
    make_chromium_profile(home, visits=[
        ("https://docs.rs/tokio/latest/session/ABCDEF0123456789/", "A page", recent, LINK, False),
        ("https://docs.rs/tokio/", f"My Wi-Fi password is {secret} - notes", recent, LINK, 0)])
    make_chromium_profile(home, "brave", visits=[("https://docs.rs/x", "A page", recent, LINK, False)])
    (home / ".config" / "BraveSoftware" / "Brave-Browser" / "Default" / "History").write_bytes(b"garbage" * 100)
    read = read_new_visits(twin_env, store)
    assert read.profiles == 1 and len(read.problems) == 1 and "brave" in read.problems[0]
    assert all(v.url.startswith("https://docs.rs/") and "session" not in v.url and "tokio" not in v.url
               for v in read.visits)
    assert len({v.url for v in read.visits}) == 2  # two distinct pages stay two
    assert all(secret not in v.title for v in read.visits) and "[redacted]" in read.visits[1].title
