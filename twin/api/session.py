"""The page's sessions (DESIGN.md invariant 8): a one-time link from `twin open` (`twin.operations.page`) is traded
for a session, held here in the API process's memory only (a restarted API forgets every session: `twin open`
again). The browser keeps the session secret in an HttpOnly, SameSite=Strict cookie (`SESSION_COOKIE`) and a CSRF
token in a cookie the page's script reads (`CSRF_COOKIE`) and sends back as `X-CSRF-Token` with every write; both
are compared in constant time. Only SHA-256 digests of the secrets are kept."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from dataclasses import dataclass

SESSION_COOKIE = "twin_session"
CSRF_COOKIE = "twin_csrf"
CSRF_HEADER = "x-csrf-token"
SESSION_TTL_S = 12 * 3600
"""Seconds a session lasts after its last request (a workday; then `twin open` again)."""
SESSIONS_MAX = 32
"""Sessions kept at once; the one used longest ago goes first."""
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
"""Methods that change nothing: they need no CSRF token."""


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).digest()


@dataclass
class Session:
    """One page session: the digest of its CSRF token and when it was last used (monotonic seconds)."""

    csrf: bytes
    used_at: float


class PageSessions:
    """The live sessions of one API process, safe to use from the event loop and from worker threads."""

    def __init__(self, ttl_s: float = SESSION_TTL_S, clock=time.monotonic):
        self.ttl_s, self.clock = ttl_s, clock
        self._by_secret: dict[bytes, Session] = {}
        self._lock = threading.Lock()

    def start(self) -> tuple[str, str]:
        """A new session: `(secret, csrf)`, each 32 random bytes URL-safe; the oldest is dropped past
        `SESSIONS_MAX`."""
        secret, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        with self._lock:
            self._expire()
            while len(self._by_secret) >= SESSIONS_MAX:
                oldest = min(self._by_secret, key=lambda k: self._by_secret[k].used_at)
                del self._by_secret[oldest]
            self._by_secret[_digest(secret)] = Session(_digest(csrf), self.clock())
        return secret, csrf

    def _expire(self) -> None:
        now = self.clock()
        for key in [k for k, s in self._by_secret.items() if now - s.used_at > self.ttl_s]:
            del self._by_secret[key]

    def live(self, secret: str | None) -> bool:
        """True when `secret` is the secret of a live session (not renewed by this)."""
        if not secret:
            return False
        with self._lock:
            self._expire()
            return _digest(secret) in self._by_secret

    def allows(self, secret: str | None, method: str, csrf: str | None) -> bool:
        """True when `secret` is a live session and, for a write (`method` not in `SAFE_METHODS`), `csrf` is its
        token (compared in constant time). A request let in renews the session."""
        if not secret:
            return False
        with self._lock:
            self._expire()
            session = self._by_secret.get(_digest(secret))
            if session is None:
                return False
            if method.upper() not in SAFE_METHODS and not (
                    csrf and secrets.compare_digest(_digest(csrf), session.csrf)):
                return False
            session.used_at = self.clock()
            return True

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._by_secret)
