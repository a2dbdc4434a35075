"""Real browser history databases for tests: Chromium's `History` and Firefox's `places.sqlite` with the schemas
the browsers create (Chromium's `sql/` dump of a current profile; Firefox's `nsPlacesTables.h`), written where
the browsers keep them under a fake HOME (LIBRARY_NOTES §6). Reusable by any test (connector, daemon).

A visit is `(url, title, when, kind, hidden)`: `when` an aware datetime; `kind` the Chromium `transition` (use
the constants below) or the Firefox `visit_type`; `hidden` the `urls.hidden` / `moz_places.hidden` flag.
"""

from __future__ import annotations

import configparser
import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

Visit = tuple[str, str, datetime, int, bool]

CHROMIUM_ROOTS = {
    "chrome": ".config/google-chrome",
    "chrome-beta": ".config/google-chrome-beta",
    "chrome-unstable": ".config/google-chrome-unstable",
    "chromium": ".config/chromium",
    "chromium-snap": "snap/chromium/common/chromium",
    "brave": ".config/BraveSoftware/Brave-Browser",
    "edge": ".config/microsoft-edge",
    "vivaldi": ".config/vivaldi",
    "chrome-flatpak": ".var/app/com.google.Chrome/config/google-chrome",
    "chromium-flatpak": ".var/app/org.chromium.Chromium/config/chromium",
    "brave-flatpak": ".var/app/com.brave.Browser/config/BraveSoftware/Brave-Browser",
    "edge-flatpak": ".var/app/com.microsoft.Edge/config/microsoft-edge",
    "vivaldi-flatpak": ".var/app/com.vivaldi.Vivaldi/config/vivaldi",
}
FIREFOX_ROOTS = {
    "firefox": ".mozilla/firefox",
    "firefox-snap": "snap/firefox/common/.mozilla/firefox",
    "firefox-flatpak": ".var/app/org.mozilla.firefox/.mozilla/firefox",
}

# Chromium transitions (ui/base/page_transition_types.h): core type | qualifiers.
CHAIN_START, CHAIN_END = 0x10000000, 0x20000000
CLIENT_REDIRECT, SERVER_REDIRECT = 0x40000000, 0x80000000
LINK = 0 | CHAIN_START | CHAIN_END
"""A link click that was not redirected: a one-visit chain."""
TYPED = 1 | CHAIN_START | CHAIN_END
AUTO_SUBFRAME = 3 | CHAIN_START | CHAIN_END
MANUAL_SUBFRAME = 4 | CHAIN_START | CHAIN_END
RELOAD = 8 | CHAIN_START | CHAIN_END
KEYWORD_GENERATED = 10 | CHAIN_START | CHAIN_END
REDIRECT_HOP = 0 | CHAIN_START
"""The first visit of a redirect chain (the URL that redirected)."""
REDIRECTED_TO = 0 | SERVER_REDIRECT | CHAIN_END
"""The last visit of a server-redirect chain: the page shown."""

# Firefox visit types (nsINavHistoryService).
FF_LINK, FF_TYPED, FF_BOOKMARK, FF_EMBED = 1, 2, 3, 4
FF_REDIRECT_PERMANENT, FF_REDIRECT_TEMPORARY, FF_DOWNLOAD, FF_FRAMED_LINK, FF_RELOAD = 5, 6, 7, 8, 9

CHROMIUM_SCHEMA = (
    "CREATE TABLE meta(key LONGVARCHAR NOT NULL UNIQUE PRIMARY KEY, value LONGVARCHAR)",
    "CREATE TABLE urls(id INTEGER PRIMARY KEY AUTOINCREMENT,url LONGVARCHAR,title LONGVARCHAR,visit_count INTEGER "
    "DEFAULT 0 NOT NULL,typed_count INTEGER DEFAULT 0 NOT NULL,last_visit_time INTEGER NOT NULL,hidden INTEGER "
    "DEFAULT 0 NOT NULL)",
    "CREATE TABLE visits(id INTEGER PRIMARY KEY AUTOINCREMENT,url INTEGER NOT NULL,visit_time INTEGER NOT NULL,"
    "from_visit INTEGER,external_referrer_url TEXT,transition INTEGER DEFAULT 0 NOT NULL,segment_id INTEGER,"
    "visit_duration INTEGER DEFAULT 0 NOT NULL,incremented_omnibox_typed_score BOOLEAN DEFAULT FALSE NOT NULL,"
    "opener_visit INTEGER,originator_cache_guid TEXT,originator_visit_id INTEGER,originator_from_visit INTEGER,"
    "originator_opener_visit INTEGER,is_known_to_sync BOOLEAN DEFAULT FALSE NOT NULL,"
    "consider_for_ntp_most_visited BOOLEAN DEFAULT FALSE NOT NULL,visited_link_id INTEGER DEFAULT 0 NOT NULL,"
    "app_id TEXT)",
    "CREATE TABLE visit_source(id INTEGER PRIMARY KEY,source INTEGER NOT NULL)",
    "CREATE TABLE keyword_search_terms (keyword_id INTEGER NOT NULL,url_id INTEGER NOT NULL,term LONGVARCHAR NOT "
    "NULL,normalized_term LONGVARCHAR NOT NULL)",
    "CREATE TABLE segments (id INTEGER PRIMARY KEY,name VARCHAR,url_id INTEGER NON NULL)",
    "CREATE TABLE segment_usage (id INTEGER PRIMARY KEY,segment_id INTEGER NOT NULL,time_slot INTEGER NOT NULL,"
    "visit_count INTEGER DEFAULT 0 NOT NULL)",
    "CREATE INDEX urls_url_index ON urls (url)",
    "CREATE INDEX visits_url_index ON visits (url)",
    "CREATE INDEX visits_from_index ON visits (from_visit)",
    "CREATE INDEX visits_time_index ON visits (visit_time)",
    "CREATE INDEX segments_name ON segments(name)",
    "CREATE INDEX segments_url_id ON segments(url_id)",
    "CREATE INDEX keyword_search_terms_index1 ON keyword_search_terms (keyword_id, normalized_term)",
    "INSERT INTO meta (key, value) VALUES ('mmap_status', '-1'), ('version', '70'), "
    "('last_compatible_version', '16'), ('early_expiration_threshold', '13405441751172735')",
)
FIREFOX_SCHEMA = (
    "CREATE TABLE moz_origins ( id INTEGER PRIMARY KEY, prefix TEXT NOT NULL, host TEXT NOT NULL, frecency INTEGER "
    "NOT NULL, recalc_frecency INTEGER NOT NULL DEFAULT 0, alt_frecency INTEGER, recalc_alt_frecency INTEGER NOT "
    "NULL DEFAULT 0, UNIQUE (prefix, host) )",
    "CREATE TABLE moz_places (   id INTEGER PRIMARY KEY, url LONGVARCHAR, title LONGVARCHAR, rev_host LONGVARCHAR, "
    "visit_count INTEGER DEFAULT 0, hidden INTEGER DEFAULT 0 NOT NULL, typed INTEGER DEFAULT 0 NOT NULL, frecency "
    "INTEGER DEFAULT -1 NOT NULL, last_visit_date INTEGER , guid TEXT, foreign_count INTEGER DEFAULT 0 NOT NULL, "
    "url_hash INTEGER DEFAULT 0 NOT NULL , description TEXT, preview_image_url TEXT, site_name TEXT, origin_id "
    "INTEGER REFERENCES moz_origins(id), recalc_frecency INTEGER NOT NULL DEFAULT 0, alt_frecency INTEGER, "
    "recalc_alt_frecency INTEGER NOT NULL DEFAULT 0)",
    "CREATE TABLE moz_historyvisits (  id INTEGER PRIMARY KEY, from_visit INTEGER, place_id INTEGER, visit_date "
    "INTEGER, visit_type INTEGER, session INTEGER, source INTEGER DEFAULT 0 NOT NULL, triggeringPlaceId INTEGER)",
    "CREATE TABLE moz_meta (key TEXT PRIMARY KEY, value NOT NULL) WITHOUT ROWID",
    "CREATE UNIQUE INDEX moz_places_url_uniqueindex ON moz_places (url)",
    "CREATE INDEX moz_places_hostindex ON moz_places (rev_host)",
    "CREATE UNIQUE INDEX moz_places_guid_uniqueindex ON moz_places (guid)",
    "CREATE INDEX moz_places_originidindex ON moz_places (origin_id)",
    "CREATE INDEX moz_historyvisits_placedateindex ON moz_historyvisits (place_id, visit_date)",
    "CREATE INDEX moz_historyvisits_fromindex ON moz_historyvisits (from_visit)",
    "CREATE INDEX moz_historyvisits_dateindex ON moz_historyvisits (visit_date)",
    "PRAGMA user_version = 77",
)

EPOCH_1601 = datetime(1601, 1, 1, tzinfo=UTC)
EPOCH_1970 = datetime(1970, 1, 1, tzinfo=UTC)


def chromium_time(moment: datetime) -> int:
    """`moment` as Chromium stores it: µs since 1601-01-01 UTC."""
    delta = moment - EPOCH_1601
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def firefox_time(moment: datetime) -> int:
    """`moment` as Firefox stores it: µs since 1970-01-01 UTC."""
    delta = moment - EPOCH_1970
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _int32(value: int) -> int:
    """Chromium writes `transition` as a signed 32-bit int (SERVER_REDIRECT makes it negative)."""
    return value - (1 << 32) if value & 0x80000000 else value


def add_chromium_visits(conn: sqlite3.Connection, visits: Sequence[Visit]) -> list[int]:
    """Insert `visits` as Chromium does (one `urls` row per URL, one `visits` row per visit) and commit;
    returns the new visit ids."""
    ids = []
    for url, title, when, transition, hidden in visits:
        t = chromium_time(when)
        row = conn.execute("SELECT id FROM urls WHERE url = ?", (url,)).fetchone()
        if row is None:
            url_id = conn.execute("INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time, hidden)"
                                  " VALUES (?, ?, 1, 0, ?, ?)", (url, title, t, int(hidden))).lastrowid
        else:
            url_id = row[0]
            conn.execute("UPDATE urls SET title = ?, visit_count = visit_count + 1, last_visit_time = ?, hidden = ?"
                         " WHERE id = ?", (title, t, int(hidden), url_id))
        ids.append(conn.execute("INSERT INTO visits (url, visit_time, from_visit, transition, segment_id, "
                                "visit_duration) VALUES (?, ?, 0, ?, 0, 0)", (url_id, t, _int32(transition))).lastrowid)
    conn.commit()
    return ids


def add_firefox_visits(conn: sqlite3.Connection, visits: Sequence[Visit]) -> list[int]:
    """Insert `visits` as Firefox does (`moz_origins`, `moz_places`, `moz_historyvisits`) and commit; returns
    the new visit ids."""
    ids = []
    for url, title, when, visit_type, hidden in visits:
        t = firefox_time(when)
        parts = urlsplit(url)
        host = parts.hostname or ""
        conn.execute("INSERT OR IGNORE INTO moz_origins (prefix, host, frecency) VALUES (?, ?, 100)",
                     (f"{parts.scheme}://", host))
        origin = conn.execute("SELECT id FROM moz_origins WHERE prefix = ? AND host = ?",
                              (f"{parts.scheme}://", host)).fetchone()[0]
        row = conn.execute("SELECT id FROM moz_places WHERE url = ?", (url,)).fetchone()
        if row is None:
            count = conn.execute("SELECT COUNT(*) FROM moz_places").fetchone()[0]
            place = conn.execute(
                "INSERT INTO moz_places (url, title, rev_host, visit_count, hidden, typed, frecency, "
                "last_visit_date, guid, url_hash, origin_id) VALUES (?, ?, ?, 1, ?, 0, 100, ?, ?, 0, ?)",
                (url, title, host[::-1] + ".", int(hidden), t, f"guid{count:08d}", origin)).lastrowid
        else:
            place = row[0]
            conn.execute("UPDATE moz_places SET title = ?, visit_count = visit_count + 1, last_visit_date = ?, "
                         "hidden = ? WHERE id = ?", (title, t, int(hidden), place))
        ids.append(conn.execute("INSERT INTO moz_historyvisits (from_visit, place_id, visit_date, visit_type, "
                                "session, source) VALUES (0, ?, ?, ?, 0, 0)", (place, t, visit_type)).lastrowid)
    conn.commit()
    return ids


def _create(path: Path, schema: Sequence[str], wal: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        if wal:
            conn.execute("PRAGMA journal_mode=WAL")
        for statement in schema:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def make_chromium_profile(home: Path, browser: str = "chrome", profile: str = "Default",
                          visits: Sequence[Visit] = (), wal: bool = False, name: str | None = None) -> Path:
    """Create (or add to) a Chromium-family profile under `home`: `<root>/<profile>/History` with Chromium's
    schema and `visits`, where `<root>` is `CHROMIUM_ROOTS[browser]` (e.g. "brave", "chromium-snap",
    "edge-flatpak"). `name` is written to `<root>/Local State` → `profile.info_cache[profile].name`. `wal` puts
    the database in WAL mode. Returns the `History` path; every connection is closed (nothing in a WAL)."""
    root = home / CHROMIUM_ROOTS[browser]
    history = root / profile / "History"
    if not history.exists():
        _create(history, CHROMIUM_SCHEMA, wal)
    if name is not None:
        state_path = root / "Local State"
        state = json.loads(state_path.read_text()) if state_path.exists() else {"profile": {"info_cache": {}}}
        state["profile"]["info_cache"][profile] = {"name": name, "is_using_default_name": False}
        state_path.write_text(json.dumps(state))
    with history_writer(history, exclusive=False) as conn:
        add_chromium_visits(conn, visits)
    return history


def make_firefox_profile(home: Path, visits: Sequence[Visit] = (), wal: bool = True, browser: str = "firefox",
                         profile: str = "abcd1234.default-release", name: str = "default-release",
                         relative: bool = True, default: bool = True) -> Path:
    """Create (or add to) a Firefox profile under `home`: `places.sqlite` with Firefox's schema and `visits` in
    `<root>/<profile>/` (`root` = `FIREFOX_ROOTS[browser]`), or in `home/<profile>` with an absolute path when
    not `relative`; listed in `<root>/profiles.ini` as the next `[ProfileN]` (and `[Install…] Default=` when
    `default`). `wal` (Firefox's default) puts the database in WAL mode. Returns the `places.sqlite` path."""
    root = home / FIREFOX_ROOTS[browser]
    directory = root / profile if relative else home / profile
    places = directory / "places.sqlite"
    if not places.exists():
        _create(places, FIREFOX_SCHEMA, wal)
        ini = configparser.ConfigParser(interpolation=None)
        ini.optionxform = str  # keep Firefox's key case
        ini_path = root / "profiles.ini"
        if ini_path.exists():
            ini.read(ini_path)
        else:
            ini["General"] = {"StartWithLastProfile": "1", "Version": "2"}
        number = sum(1 for s in ini.sections() if s.startswith("Profile"))
        ini[f"Profile{number}"] = {"Name": name, "IsRelative": "1" if relative else "0",
                                   "Path": profile if relative else str(directory), "Default": "1" if default else "0"}
        if default:
            ini["Install4F96D1932A9F858E"] = {"Default": profile if relative else str(directory), "Locked": "1"}
        with ini_path.open("w") as handle:
            ini.write(handle, space_around_delimiters=False)
    with history_writer(places, exclusive=False) as conn:
        add_firefox_visits(conn, visits)
    return places


@contextmanager
def history_writer(path: Path, exclusive: bool = True) -> Iterator[sqlite3.Connection]:
    """A connection to a history database held the way the browser holds it: `locking_mode=EXCLUSIVE` (Chrome's
    HistoryDatabase, Firefox ≥ 63) when `exclusive`, and `wal_autocheckpoint=0`, so rows committed while it is
    open stay in the `-wal` file. Closing it (at the end of the block) checkpoints, like the browser's exit."""
    conn = sqlite3.connect(path)
    try:
        if exclusive:
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        conn.execute("PRAGMA wal_autocheckpoint=0")
        yield conn
    finally:
        conn.rollback()
        conn.close()
