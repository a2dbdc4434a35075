"""The people the owner adds (issue 19): `add_person`, `list_people`, `remove_person`, the twin owner's alone
(`twin people …`). Each person gets an API/MCP token of their own (`TOKEN_BYTES` random bytes, shown once by
`add_person`; the store keeps its SHA-256 digest only, as it keeps the page's session secrets) with which the API
and MCP know them (`person_of_token`: `twin.api.guard`). A removed person's token lets nothing in from that moment
(their row is gone), and nothing of theirs stays: their own memories and the projects they own are forgotten
through the path `twin forget` takes, and they leave every project they were a member of. `issue_token` replaces a
person's token (the old one is refused from then on): what a person imported from an export (`import_person`)
needs before they reach anything.

A person may pair their Telegram account as the owner pairs theirs: `pair_telegram` gives a one-time code (kept as
its SHA-256, `PAIR_CODE_TTL_S` to use it, a new code replaces the old), the person sends `/start CODE` to the bot
(`claim_telegram`), and from then on the bot answers them as their own `Caller` (`telegram_caller`). Removing the
person forgets the account and any unused code with their row."""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from datetime import UTC, datetime, timedelta

from twin.exceptions import InvalidInput, NotFound
from twin.memory import format_time, utc_now
from twin.namespaces import NAME_PATTERN
from twin.operations.context import Context
from twin.operations.projects import erase_project, erase_scope, person_named
from twin.operations.scopes import OWNER, Caller, require_owner
from twin.operations.shapes import PersonOut, PersonRemovedOut, TelegramPairOut
from twin.store import Store, projects
from twin.store import people as stored
from twin.store.people import OWNER_ID
from twin.store.signals import forget_recipient_signals

TOKEN_BYTES = 32
"""Random bytes in a person's token (`secrets.token_urlsafe`: 43 characters), as in the owner's (`twin.api.token`)."""
PAIR_CODE_BYTES = 6
"""Random bytes in a person's Telegram pairing code (12 hex digits: typed by hand, used once, within minutes)."""
PAIR_CODE_TTL_S = 600
"""How long a pairing code pairs (seconds), as the owner's (`twin.connectors.telegram.PAIR_CODE_TTL_S`)."""


def token_digest(token: str) -> bytes:
    """The SHA-256 of `token` (UTF-8, lone surrogates kept): what the store keeps of a person's token."""
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()


def person_of_token(store: Store, token: str | None) -> stored.Person | None:
    """The person whose token is `token`, or None (no token, or no live person holds it; read-only). The
    lookup is by digest, so the token itself is never compared or kept."""
    if not token:
        return None
    return stored.person_of_token(store, token_digest(token))


def checked_person_name(name: object) -> str:
    """`name` trimmed when it is a person's name (1-64 letters, digits, '_', '.', '-'; not `owner`), else
    `InvalidInput` naming `name`."""
    if not isinstance(name, str) or NAME_PATTERN.fullmatch(name.strip()) is None or not name.strip("."):
        raise InvalidInput("name must be 1-64 letters, digits, '_', '.' or '-' (not dots alone)", field="name")
    if name.strip().lower() == OWNER.name:
        raise InvalidInput("'owner' is the twin's owner", field="name")
    return name.strip()


def add_person(ctx: Context, name: str) -> PersonOut:
    """Add the person `name` with a new token, returned here once (`PersonOut.token`). Raises `InvalidInput`
    (code `conflict`) when someone of that name (any case) exists, `Forbidden` unless the owner asks."""
    require_owner("adding a person")
    name = checked_person_name(name)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        person = stored.add_person(ctx.store, secrets.token_hex(8), name, token_digest(token), utc_now())
    except sqlite3.IntegrityError as exc:
        raise InvalidInput(f"a person named {name!r} exists", field="name", code="conflict") from exc
    ctx.activity.record("system", f"Added a person ({person.id}) with a token of their own.")
    return PersonOut(id=person.id, name=person.name, added_at=person.added_at, token=token)


def added_person(ctx: Context, name: object) -> stored.Person:
    """The person the owner added as `name` (`twin.operations.projects.person_named`'s rule: any case). Raises
    `InvalidInput` or `NotFound` as that does; for the owner's own name, `NotFound` saying where the owner's token
    and Telegram are (`twin token --rotate`, `twin telegram pair`): the owner is no person added here."""
    person_id = person_named(ctx, name)
    if person_id == OWNER_ID:
        raise NotFound("the twin's owner is no person added here: the owner's token is `twin token --rotate`, "
                       "the owner's Telegram `twin telegram pair`")
    return stored.person_by_id(ctx.store, person_id)


def issue_token(ctx: Context, name: str) -> PersonOut:
    """A new token for the person `name`, returned here once (`PersonOut.token`, as `add_person` does); their earlier
    token is refused from the moment it is replaced. What a person imported from an export needs
    (`import_person`: twin keeps no token, so an export holds none). Raises `NotFound` for no such person,
    `Forbidden` unless the owner asks."""
    require_owner("issuing a person's token")
    person = added_person(ctx, name)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    stored.set_token(ctx.store, person.id, token_digest(token))
    ctx.activity.record("system", f"Issued a new token for a person ({person.id}).")
    return PersonOut(id=person.id, name=person.name, added_at=person.added_at, token=token)


def import_person(store: Store, person_id: str, name: str, added_at: str) -> stored.Person:
    """Store a person read from an export (`twin.operations.transfer`), `name` checked by the caller, with the
    digest of a token shown to no one: they reach nothing until the owner gives them one (`issue_token`, `twin
    people token NAME`). No Telegram account: they pair again (`pair_telegram`). Raises `sqlite3.IntegrityError`
    when the id or the name (any case) is taken."""
    return stored.add_person(store, person_id, name, token_digest(secrets.token_urlsafe(TOKEN_BYTES)), added_at)


def list_people(ctx: Context) -> list[PersonOut]:
    """Every person the owner added, in the order they were added (no tokens: only digests are kept), each with
    whether they paired a Telegram account."""
    require_owner("the list of people")
    paired = stored.paired_on_telegram(ctx.store)
    return [PersonOut(id=p.id, name=p.name, added_at=p.added_at, telegram=p.id in paired)
            for p in stored.list_people(ctx.store)]


def remove_person(ctx: Context, name: str) -> PersonRemovedOut:
    """Remove the person `name`: their row (so their token is refused from now on), their own memories
    (`person:<id>:…` namespaces) and the projects they own (`erase_project`), each forgotten with every copy of its
    text, their memberships and the signals raised for them. Raises `NotFound`, `Forbidden` unless the owner asks."""
    require_owner("removing a person")
    person = added_person(ctx, name)
    stored.remove_person(ctx.store, person.id)  # first: the token lets nothing in while the rest is erased
    removed: dict[str, int] = {}
    deleted = []
    for project in projects.owned_by(ctx.store, person.id):
        deleted.append(project.id)
        for key, n in erase_project(ctx, project).items():
            removed[key] = removed.get(key, 0) + n
    projects.forget_person(ctx.store, person.id)
    removed["signals"] = removed.get("signals", 0) + forget_recipient_signals(ctx.store, person.id)
    own = tuple(ns for ns in ctx.store.namespace_counts(ctx.being) if ns.startswith(f"person:{person.id}:"))
    for key, n in erase_scope(ctx, own).items():
        removed[key] = removed.get(key, 0) + n
    ctx.activity.record("system", f"Removed a person ({person.id}), their memories and {len(deleted)} projects.")
    return PersonRemovedOut(id=person.id, name=person.name, projects_deleted=deleted, removed=removed)


def pair_telegram(ctx: Context, name: str, now: datetime | None = None) -> TelegramPairOut:
    """A one-time code with which the person `name` pairs their Telegram account: they send `/start CODE` to the
    bot within `PAIR_CODE_TTL_S` seconds (`claim_telegram`). The store keeps its SHA-256 only; a new code replaces
    the person's earlier one. Raises `NotFound` for no such person, `Forbidden` unless the owner asks."""
    require_owner("pairing a person's Telegram")
    person = added_person(ctx, name)
    code = secrets.token_hex(PAIR_CODE_BYTES)
    expires = format_time((now or datetime.now(UTC)) + timedelta(seconds=PAIR_CODE_TTL_S))
    stored.set_pair_code(ctx.store, person.id, token_digest(code), expires)
    ctx.activity.record("system", f"Made a Telegram pairing code for a person ({person.id}).")
    return TelegramPairOut(name=person.name, code=code, expires_at=expires)


def claim_telegram(ctx: Context, telegram_user_id: int, code: str) -> Caller | None:
    """Pair `telegram_user_id` with the person whose live code `code` is (`pair_telegram`): their `Caller`, or
    None when the code is no live one (wrong, expired, used, or its person removed). The code is used up."""
    if not isinstance(code, str) or not code.strip():
        return None
    person = stored.claim_pair_code(ctx.store, token_digest(code.strip()), telegram_user_id, utc_now())
    if person is None:
        return None
    ctx.activity.record("system", f"Telegram: paired user {telegram_user_id} with a person ({person.id}).")
    return Caller(person.id, person.name)


def telegram_caller(store: Store, telegram_user_id: int) -> Caller | None:
    """The `Caller` of the person whose paired Telegram account is `telegram_user_id`, or None (no live person
    has it; read-only)."""
    person = stored.person_of_telegram(store, telegram_user_id)
    return Caller(person.id, person.name) if person else None
