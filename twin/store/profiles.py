"""The `profiles` rows (the owner's profile as JSON, `twin.profile`) and `provider_usage` (model calls per UTC day
and tier, the daily budget of `twin.llm.provider`). Each runs in the caller's transaction when there is one.
"""

from __future__ import annotations

from twin.store.core import Store


def profile_json(store: Store, being: str) -> str | None:
    """The stored profile JSON of `being`, or None when none was ever written (read-only)."""
    row = store.conn.execute("SELECT data FROM profiles WHERE being_id = ?", (being,)).fetchone()
    return row[0] if row else None


def save_profile_json(store: Store, being: str, data: str, now: str) -> None:
    """Insert or replace the profile JSON of `being`; `now` is UTC ISO-8601."""
    store.conn.execute("INSERT INTO profiles (being_id, data, updated_at) VALUES (?, ?, ?)"
                       " ON CONFLICT (being_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
                       (being, data, now))


def calls_on(store: Store, day: str, tier: str | None) -> int:
    """Model calls of `tier` counted on `day` (`YYYY-MM-DD`, UTC); of every tier when `tier` is None (read-only)."""
    row = store.conn.execute("SELECT COALESCE(SUM(calls), 0) FROM provider_usage WHERE day = ?"
                             " AND (? IS NULL OR tier = ?)", (day, tier, tier)).fetchone()
    return int(row[0])


def count_call(store: Store, day: str, tier: str) -> None:
    """Count one model call of `tier` on `day` (`YYYY-MM-DD`, UTC)."""
    store.conn.execute("INSERT INTO provider_usage (day, tier, calls) VALUES (?, ?, 1)"
                       " ON CONFLICT (day, tier) DO UPDATE SET calls = calls + 1", (day, tier))
