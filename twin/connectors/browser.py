"""The browser-history connector: what the owner reads on the web, as a few interests (seed 001).

At most one import every `browser_interval_s` (seed 001: 24 hours), plus `twin sync browser` to run one now.
An import reads every Chromium-family and Firefox profile under the home directory
(`twin.connectors.browser_history`: a private copy of each database with its WAL, visits after the profile's
cursor, hidden/redirect/reload visits and deny-listed URLs skipped, query strings dropped), then the visits
are clustered into interests and learned with source `browser` (`twin.learn.interests.learn_interests`): in the
daemon by a learn job, in `twin sync browser` directly. The per-profile cursors (`visit:<profile key>`, the
highest visit id read) and `last_import` are saved only after the visits were pushed or learned
(invariant 3). A file lock keeps the daemon and `twin sync browser` from importing at the same time.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from twin import ingest
from twin.activity import Activity
from twin.connectors import OwnStoreConnector, stopped_within
from twin.connectors.browser_history import HistoryUnreadable, find_profiles, read_visits
from twin.ingest import Ingest
from twin.learn.interests import PageVisit, learn_interests
from twin.memory import parse_time, utc_now
from twin.store import Store, private_dir, state
from twin.text.sensitivity import redact

if TYPE_CHECKING:
    from twin.settings import Settings
    from twin.workers.bus import Bus

log = logging.getLogger(__name__)

CONNECTOR = "browser"
CHECK_EVERY_S = 3600.0
"""The connector wakes at least this often to see whether an import is due (the clock may have jumped)."""


class BrowserBusy(Exception):
    """Another process (the daemon, or another `twin sync browser`) is importing browser history right now."""


@contextlib.contextmanager
def import_lock(settings: Settings) -> Iterator[None]:
    """Hold `<data dir>/browser.lock` (flock, not blocking) for one import; raises `BrowserBusy` if it is held."""
    private_dir(settings.data_dir)
    with open(settings.data_dir / "browser.lock", "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise BrowserBusy("a browser-history import is already running (the daemon's, or another "
                              "`twin sync browser`); try again in a minute") from exc
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass
class BrowserRead:
    """The new visits of one import across profiles (oldest first per profile), how many profiles were read,
    the cursors to save after them (`{cursor key: highest visit id}`) and profiles that could not be read."""

    visits: list[PageVisit] = field(default_factory=list)
    profiles: int = 0
    cursors: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def read_new_visits(settings: Settings, store: Store, home: Path | None = None) -> BrowserRead:
    """Read the visits after each profile's cursor (the last `browser_first_days` days for a profile seen for
    the first time), at most `browser_max_visits` per profile, deny-listed URLs left out (the built-in list
    plus `browser_deny`). Copies go to `<data dir>/browser-copy` (0700) and are deleted. A profile that cannot
    be read is listed in `problems` and keeps its cursor. Blocking."""
    read = BrowserRead()
    work_dir = private_dir(settings.data_dir / "browser-copy")
    first_since = datetime.now(UTC) - timedelta(days=settings.browser_first_days)
    for profile in find_profiles(home or Path.home()):
        key = f"visit:{profile.key}"
        after = int(store.get_cursor(CONNECTOR, settings.being, key) or 0)
        try:
            visits, last_id = read_visits(profile, after, None if after else first_since,
                                          settings.browser_max_visits, work_dir, settings.browser_deny)
        except HistoryUnreadable as exc:
            log.warning("browser: %s", exc)
            read.problems.append(str(exc))
            continue
        read.profiles += 1
        read.cursors[key] = last_id
        read.visits.extend(PageVisit(page_id(v.url), redact(v.title), v.visited_at) for v in visits)
    return read


def page_id(url: str) -> str:
    """What leaves the reader for a page: its scheme and host (the interest's site) and a hash of its path (to
    count distinct pages), never the path itself: a path can carry a session id or a token, and the visits
    travel through Redis (whose AOF is on disk) and, as site and title, to a model provider."""
    parts = urlsplit(url)
    digest = hashlib.sha256(parts.path.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{parts.scheme}://{parts.netloc}/{digest}"


def save_cursors(store: Store, being: str, read: BrowserRead) -> None:
    """Save every profile's cursor, `last_import` (now, UTC ISO-8601) and the profiles that could not be read
    (`unreadable`, for `twin status`) in one transaction."""
    with store.atomic():
        for key, last_id in read.cursors.items():
            store.set_cursor(CONNECTOR, being, key, str(last_id))
        state.set_time(store, CONNECTOR, being, "last_import", utc_now())
        state.set_json(store, CONNECTOR, being, "unreadable", read.problems)


def note_problems(activity: Activity, read: BrowserRead) -> None:
    """One diary line per profile that could not be read (its reason; never a URL)."""
    for problem in read.problems:
        activity.record("error", f"Browser: {problem}")


def import_now(settings: Settings, home: Path | None = None) -> dict:
    """`twin sync browser`: one import in this process, learned at once (the model clusters when a provider is
    configured), then the daemon is asked to embed. Returns `{line, visits, profiles, interests, problems}`
    (`interests`: the learned sentences). Raises `BrowserBusy` when an import is running elsewhere."""
    from twin.llm.provider import provider_for

    with import_lock(settings), Store(settings.db_path) as store:
        read = read_new_visits(settings, store, home)
        activity = Activity(store, settings.being)
        note_problems(activity, read)
        provider = provider_for(settings, store)
        try:
            texts, line = learn_interests(store, activity, settings.being, read.visits, read.profiles, provider)
        finally:
            if provider is not None:
                provider.close()
        save_cursors(store, settings.being, read)
    _ask_for_embedding(settings)
    return {"line": line, "visits": len(read.visits), "profiles": read.profiles, "interests": texts,
            "problems": read.problems}


def _ask_for_embedding(settings: Settings) -> None:
    from twin.redis_client import open_redis
    from twin.workers.bus import Bus

    client = open_redis(settings, connect_timeout_s=2, answer_timeout_s=2)
    try:
        Bus(client).notify_embed()
    except Exception:  # noqa: BLE001 - no daemon running: the memories wait in SQLite for the next start
        log.info("browser: Redis not reachable; the new memories are embedded when twin runs")
    finally:
        client.close()


class BrowserConnector(OwnStoreConnector):
    """Imports browser history when one is due (seed 001: at most once every 24 hours) while the daemon runs. The
    constructor only stores what it is given; `open()` (which `run` calls) opens a store connection of the
    connector's own (`OwnStoreConnector`: imports run in worker threads and hold transactions), closed when `run`
    returns or by `close()`."""

    def __init__(self, settings: Settings, store: Store, bus: Bus, activity: Activity):
        super().__init__(settings, store, bus, activity)
        self.failing = False

    def state(self, store: Store) -> dict:
        """What `twin status` shows of browser history (`twin.connectors.source_state.browser_state`; read-only)."""
        from twin.connectors.source_state import browser_state

        return browser_state(self.settings, store)

    def due_in_s(self) -> float:
        """Seconds until the next import is due (≤ 0: now), from the `last_import` cursor."""
        last = state.get_time(self.store, CONNECTOR, self.being, "last_import")
        if last is None:
            return 0.0
        return self.settings.browser_interval_s - (datetime.now(UTC) - parse_time(last)).total_seconds()

    async def run(self, stop: asyncio.Event) -> None:
        """Import whenever one is due, until `stop`. A failed import is logged (one diary line until one works)
        and tried again an hour later; an import running in `twin sync browser` is simply waited out. Opens the
        connector's store first and closes it on the way out."""
        self.open()
        try:
            await self._schedule(stop)
        finally:
            self.close()

    async def _schedule(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            wait_s = self.due_in_s()
            if wait_s <= 0:
                wait_s = await self._import_safely()
            await stopped_within(stop, min(max(wait_s, 1.0), CHECK_EVERY_S))

    async def _import_safely(self) -> float:
        try:
            await asyncio.to_thread(self.import_once)
        except BrowserBusy:
            return 60.0
        except Exception as exc:  # noqa: BLE001 - Redis away, a disk error: try again later, say it once
            log.warning("browser: import failed (%s: %s); trying again in an hour", type(exc).__name__, exc)
            if not self.failing:
                self.activity.record("error", f"Browser history import failed ({type(exc).__name__}); trying "
                                              "again in an hour.")
            self.failing = True
            return CHECK_EVERY_S
        self.failing = False
        return self.settings.browser_interval_s

    def import_once(self) -> BrowserRead:
        """One import (blocking; after `open()`): read, stage the visits as one `interests` item (its learn job
        clusters, learns and writes the diary line) in the transaction that saves the cursors, then queue it.
        Nothing new: only `last_import` moves, and the diary says so once when no browser profile exists at all.
        Raises `BrowserBusy` and store errors."""
        with import_lock(self.settings):
            read = read_new_visits(self.settings, self.store)
            ids: list[int] = []
            if read.visits:
                with self.store.atomic():  # handed over with the cursors that move past them (invariant 3)
                    ids = ingest.stage(self.store, [Ingest(self.being, "browser", "", "interests", extra={
                        "visits": [v.to_list() for v in read.visits], "profiles": read.profiles})])
                    save_cursors(self.store, self.being, read)
            elif read.profiles == 0 and not read.problems and not state.is_set(self.store, CONNECTOR, self.being,
                                                                                 "last_import"):
                self.activity.record("browsed", "Browser: no Chrome, Chromium, Brave, Edge, Vivaldi or Firefox "
                                                "history found; looking again daily.")
            else:
                log.info("browser: no new visits in %d profile(s)", read.profiles)
            note_problems(self.activity, read)
            if ids:
                self.bus.push(self.store, ids, self.being, "interests")  # refused: it waits in SQLite, queued later
            else:
                save_cursors(self.store, self.being, read)
        return read
