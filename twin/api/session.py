"""The page's sessions (DESIGN.md invariant 8): a one-time link from `twin open` (`twin.operations.page`) is traded
for a session of three secrets, each 32 random bytes, of which the store keeps only SHA-256 digests
(`twin.store.page_sessions`: a restarted API keeps every session; `twin token --rotate` or `twin open
--end-sessions` ends them all).

- the session secret, in an HttpOnly, SameSite=Strict cookie (`SESSION_COOKIE`);
- the CSRF token, in a cookie the page's script reads (`CSRF_COOKIE`) and sends back as `X-CSRF-Token` with every
  write;
- the page key, handed to the page in the address's fragment (`/twin#key=…`: a fragment is never sent to a server)
  and kept in the origin's `localStorage`; the page sends it as `X-Twin-Page-Key` with every request, reads
  included. Browsers send the cookies of 127.0.0.1 to every port of it, so any other local server the owner opens
  in the same browser receives both cookies; it never has the key (`localStorage` belongs to one origin: scheme,
  host and port), so the cookies alone read and write nothing. A new tab on the same origin shares the key.

Every comparison is of digests, in constant time. A session lasts `SESSION_TTL_S` after its last request; at most
`SESSIONS_MAX` are kept."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from twin.memory import format_time
from twin.store import Store
from twin.store import page_sessions as stored

SESSION_COOKIE = "twin_session"
CSRF_COOKIE = "twin_csrf"
CSRF_HEADER = "x-csrf-token"
KEY_HEADER = "x-twin-page-key"
"""The header that carries the page key with every request of the page."""
SESSION_TTL_S = 12 * 3600
"""Seconds a session lasts after its last request (a workday; then `twin open` again)."""
SESSIONS_MAX = 32
"""Sessions kept at once; the one used longest ago goes first."""
RENEW_S = 60
"""A session's last use is written to the store at most once in this many seconds (not at every request)."""
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
"""Methods that change nothing: they need no CSRF token (the page key, yes)."""
LET_IN, NO_SESSION, NO_KEY, NO_CSRF = "let in", "no session", "no key", "no csrf"
"""What `PageSessions.check` finds."""


def digest(value: str) -> bytes:
    """The SHA-256 of `value` (UTF-8, lone surrogates kept), 32 bytes: what the store keeps of a secret."""
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).digest()


class NewSession(NamedTuple):
    """The three secrets of a session just started (each `secrets.token_urlsafe(32)`, 43 characters)."""

    secret: str
    csrf: str
    key: str


def _same(given: str | None, expected: bytes) -> bool:
    return bool(given) and secrets.compare_digest(digest(given), expected)


class PageSessions:
    """The page's sessions in the store at `db_path`, through one connection of their own (opened at first use,
    shared by the threads that call in, one at a time). `clock` gives Unix seconds (wall time: a session outlives
    the process)."""

    def __init__(self, db_path: Path, ttl_s: float = SESSION_TTL_S, clock=time.time):
        self.db_path, self.ttl_s, self.clock = Path(db_path), ttl_s, clock
        self._store: Store | None = None
        self._lock = threading.Lock()

    def _db(self) -> Store:
        if self._store is None:
            self._store = Store(self.db_path).open()
        return self._store

    def _at(self, seconds_ago: float = 0) -> str:
        return format_time(datetime.fromtimestamp(self.clock() - seconds_ago, UTC))

    def start(self) -> NewSession:
        """A new session, stored as digests; the expired ones and those past `SESSIONS_MAX` dropped."""
        new = NewSession(secrets.token_urlsafe(32), secrets.token_urlsafe(32), secrets.token_urlsafe(32))
        with self._lock:
            db = self._db()
            with db.atomic():
                stored.drop_used_before(db, self._at(self.ttl_s))
                stored.add_session(db, digest(new.secret), digest(new.csrf), digest(new.key), self._at(),
                                   keep=SESSIONS_MAX)
        return new

    def check(self, secret: str | None, key: str | None, method: str, csrf: str | None) -> str:
        """`LET_IN` when `secret` is a live session's, `key` its page key and, for a write (`method` not in
        `SAFE_METHODS`), `csrf` its token; else what is missing first: `NO_SESSION` (no live session of that
        secret), `NO_KEY`, `NO_CSRF`. A request let in renews the session (written at most every `RENEW_S`)."""
        if not secret:
            return NO_SESSION
        with self._lock:
            db = self._db()
            found = stored.find_session(db, digest(secret))
            if found is None or found.used_at < self._at(self.ttl_s):
                return NO_SESSION
            if not _same(key, found.key_sha256):
                return NO_KEY
            if method.upper() not in SAFE_METHODS and not _same(csrf, found.csrf_sha256):
                return NO_CSRF
            if found.used_at < self._at(RENEW_S):
                stored.touch_session(db, digest(secret), self._at())
            return LET_IN

    def end_all(self) -> int:
        """End every session; how many there were."""
        with self._lock:
            return stored.drop_all_sessions(self._db())

    def close(self) -> None:
        """Close the connection (opened again at the next use)."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def __len__(self) -> int:
        """How many sessions are live (not expired)."""
        with self._lock:
            db = self._db()
            with db.atomic():
                stored.drop_used_before(db, self._at(self.ttl_s))
                return stored.count_sessions(db)
