"""The `people` table: the people the owner adds (`twin people add`), each with an API/MCP token of their own. A row
holds the token's SHA-256 digest only, never the token (as `twin.store.page_sessions` keeps the page's secrets);
`name` is unique without regard to case; `added_at` UTC ISO-8601. The owner is no row: the owner's token is the
API's token file (`twin.api.token`). Migration `0018_people` made the table (twin.store.schema).

A person may also pair a Telegram account (`0023_people_telegram`): `pair_code_sha256` and `pair_expires_at` hold
the SHA-256 of the one-time code `twin people pair` printed (never the code) until it is used or replaced, then
`telegram_user_id` holds their Telegram user id. Both live on the person's row, so removing the person forgets
them at once."""

from __future__ import annotations

from typing import NamedTuple

from twin.store.core import Store

OWNER_ID = "owner"
"""The person id of the twin's owner wherever a person id is stored (`project_members`, `active_projects`, a
signal's `recipient`); no `people` row has it."""


class Person(NamedTuple):
    """One person: `id` (stable, random: `twin.operations.people`), `name`, `added_at` (UTC ISO-8601)."""

    id: str
    name: str
    added_at: str


def add_person(store: Store, person_id: str, name: str, token_sha256: bytes, added_at: str) -> Person:
    """Store a new person. Raises `sqlite3.IntegrityError` when `name` (any case) or the digest is taken."""
    with store.atomic() as conn:
        conn.execute("INSERT INTO people (id, name, token_sha256, added_at) VALUES (?, ?, ?, ?)",
                     (person_id, name, token_sha256, added_at))
    return Person(person_id, name, added_at)


def person_of_token(store: Store, token_sha256: bytes) -> Person | None:
    """The person whose token has this digest, or None (read-only; a removed person's row is gone, so their token
    lets nothing in from the moment `remove_person` committed)."""
    row = store.conn.execute("SELECT id, name, added_at FROM people WHERE token_sha256 = ?",
                             (token_sha256,)).fetchone()
    return Person(*row) if row else None


def find_person(store: Store, name: str) -> Person | None:
    """The person named `name` (any case), or None (read-only)."""
    row = store.conn.execute("SELECT id, name, added_at FROM people WHERE name = ?", (name,)).fetchone()
    return Person(*row) if row else None


def person_by_id(store: Store, person_id: str) -> Person | None:
    """The person of id `person_id`, or None (read-only)."""
    row = store.conn.execute("SELECT id, name, added_at FROM people WHERE id = ?", (person_id,)).fetchone()
    return Person(*row) if row else None


def list_people(store: Store) -> list[Person]:
    """Every person, in the order they were added (read-only)."""
    return [Person(*r) for r in store.conn.execute("SELECT id, name, added_at FROM people ORDER BY added_at, id")]


def remove_person(store: Store, person_id: str) -> bool:
    """Remove the person `person_id`; False when there was none. Joins the caller's transaction."""
    with store.atomic() as conn:
        return conn.execute("DELETE FROM people WHERE id = ?", (person_id,)).rowcount > 0


def set_token(store: Store, person_id: str, token_sha256: bytes) -> bool:
    """Replace the person's token digest with `token_sha256` (the earlier token lets nothing in once this
    committed); False when there is no such person. Raises `sqlite3.IntegrityError` when the digest is taken."""
    with store.atomic() as conn:
        return conn.execute("UPDATE people SET token_sha256 = ? WHERE id = ?", (token_sha256, person_id)).rowcount > 0


def set_pair_code(store: Store, person_id: str, code_sha256: bytes, expires_at: str) -> bool:
    """Keep `code_sha256` as the person's one-time Telegram pairing code until `expires_at` (UTC ISO-8601),
    replacing any earlier code (which can then pair no one). False when there is no such person."""
    with store.atomic() as conn:
        return conn.execute("UPDATE people SET pair_code_sha256 = ?, pair_expires_at = ? WHERE id = ?",
                            (code_sha256, expires_at, person_id)).rowcount > 0


def claim_pair_code(store: Store, code_sha256: bytes, telegram_user_id: int, now: str) -> Person | None:
    """Pair `telegram_user_id` with the person whose unexpired code (expiry after `now`, UTC ISO-8601) has this
    digest, and clear the code (used once); the person, or None when no live code matches. An account already
    paired with someone else is moved to this person (one person per Telegram account: the unique index)."""
    with store.atomic() as conn:
        row = conn.execute("SELECT id, name, added_at FROM people WHERE pair_code_sha256 = ? AND pair_expires_at > ?",
                           (code_sha256, now)).fetchone()
        if row is None:
            return None
        conn.execute("UPDATE people SET telegram_user_id = NULL WHERE telegram_user_id = ?", (telegram_user_id,))
        conn.execute("UPDATE people SET telegram_user_id = ?, pair_code_sha256 = NULL, pair_expires_at = NULL"
                     " WHERE id = ?", (telegram_user_id, row[0]))
    return Person(*row)


def person_of_telegram(store: Store, telegram_user_id: int) -> Person | None:
    """The person whose paired Telegram account is `telegram_user_id`, or None (read-only; a removed person's row
    is gone, so their account gets nothing from the moment `remove_person` committed)."""
    row = store.conn.execute("SELECT id, name, added_at FROM people WHERE telegram_user_id = ?",
                             (telegram_user_id,)).fetchone()
    return Person(*row) if row else None


def paired_on_telegram(store: Store) -> dict[str, int]:
    """`{person id: Telegram user id}` of the people who paired a Telegram account (read-only)."""
    return dict(store.conn.execute("SELECT id, telegram_user_id FROM people WHERE telegram_user_id IS NOT NULL"))
