"""The `page_sessions` table: the page's sessions (`twin.api.session`), kept so that a restarted API still knows
them. A row holds only SHA-256 digests (of the cookie's secret, of the CSRF token, of the page key), never a secret,
and `used_at`, when the session last let a request in (UTC ISO-8601 `YYYY-MM-DDTHH:MM:SSZ`, so text order is time
order). Migration `0016_page_sessions` made the table (twin.store.schema)."""

from __future__ import annotations

from typing import NamedTuple

from twin.store.core import Store


class SessionDigests(NamedTuple):
    """One stored session: the digests of its CSRF token and page key (32 bytes each), and `used_at`."""

    csrf_sha256: bytes
    key_sha256: bytes
    used_at: str


def add_session(store: Store, secret_sha256: bytes, csrf_sha256: bytes, key_sha256: bytes, used_at: str,
                keep: int) -> None:
    """Store a new session used at `used_at`, then keep only the `keep` used last (the one used longest ago goes
    first; ties by digest). One transaction (joins the caller's when there is one)."""
    with store.atomic() as conn:
        conn.execute("INSERT INTO page_sessions (secret_sha256, csrf_sha256, key_sha256, used_at) VALUES (?, ?, ?, ?)",
                     (secret_sha256, csrf_sha256, key_sha256, used_at))
        conn.execute("DELETE FROM page_sessions WHERE secret_sha256 NOT IN (SELECT secret_sha256 FROM page_sessions"
                     " ORDER BY used_at DESC, secret_sha256 LIMIT ?)", (keep,))


def find_session(store: Store, secret_sha256: bytes) -> SessionDigests | None:
    """The session whose secret has this digest, or None (read-only)."""
    row = store.conn.execute("SELECT csrf_sha256, key_sha256, used_at FROM page_sessions WHERE secret_sha256 = ?",
                             (secret_sha256,)).fetchone()
    return SessionDigests(*row) if row else None


def touch_session(store: Store, secret_sha256: bytes, used_at: str) -> None:
    """Record that the session was used at `used_at` (absent is fine: it was ended meanwhile)."""
    store.conn.execute("UPDATE page_sessions SET used_at = ? WHERE secret_sha256 = ?", (used_at, secret_sha256))


def drop_used_before(store: Store, moment: str) -> int:
    """Remove the sessions last used before `moment` (UTC ISO-8601); how many went."""
    return store.conn.execute("DELETE FROM page_sessions WHERE used_at < ?", (moment,)).rowcount


def drop_session(store: Store, secret_sha256: bytes) -> None:
    """Remove one session (absent is fine)."""
    store.conn.execute("DELETE FROM page_sessions WHERE secret_sha256 = ?", (secret_sha256,))


def drop_all_sessions(store: Store) -> int:
    """Remove every session (`twin token --rotate`, `twin open --end-sessions`); how many there were."""
    return store.conn.execute("DELETE FROM page_sessions").rowcount


def count_sessions(store: Store) -> int:
    """How many sessions are stored, expired ones included (read-only)."""
    return store.conn.execute("SELECT count(*) FROM page_sessions").fetchone()[0]
