"""What each connector has saved, as `twin status` shows it: one reader per connector (`state`) and the degraded
lines it implies (`degraded`), light to import (no connector and none of their clients: `twin status` runs them
for every registered connector, enabled or not).

The connector classes answer `state(store)` through these, and the registry (`twin.connectors.REGISTRY`) names them,
so the keys a connector saves are read here and in the connector alone, never by `twin status`.
"""

from __future__ import annotations

from twin.settings import Settings
from twin.store import Store, email_threads, manifest, state
from twin.store import chat as transcript

STATUS_WAITING = 5
"""Threads waiting for a reply that `twin status` names (the newest); `twin email waiting` lists them all."""


def waiting_threads(store: Store, being: str, *, newest_first: bool = False, limit: int | None = None) -> list[dict]:
    """The email threads of `being` that wait for the owner's reply (`twin.connectors.needs_reply`'s rule, as the last
    sync saw them): `[{thread_id, subject, from, at, asks, messages}]`, `at` the newest message's time (UTC
    ISO-8601, since when it waits), `asks` the sentence that asks (None when unknown); oldest first unless
    `newest_first`; all of them unless `limit`. Read-only; the one query `twin status`, `twin email waiting`
    and any other interface use."""
    return [{"thread_id": r.thread_id, "subject": r.subject, "from": r.last_from, "at": r.last_message_at,
             "asks": r.reply_reason, "messages": r.message_count}
            for r in email_threads.waiting(store, being, newest_first=newest_first, limit=limit)]


def files_state(settings: Settings, store: Store) -> dict:
    """The watched folders (from the settings, else as the running daemon recorded them) and the files manifest's
    counts (`twin.store.manifest.counts`). Read-only."""
    roots = [str(r) for r in settings.files_roots] or state.get_json(store, "files", settings.being, "roots") or []
    return {"roots": roots, **manifest.counts(store, settings.being)}


def record_files_roots(settings: Settings, store: Store) -> None:
    """The watched folders as the daemon runs them, for `twin status` (`files_state`) while it runs."""
    state.set_json(store, "files", settings.being, "roots", [str(r) for r in settings.files_roots])


def gmail_state(settings: Settings, store: Store) -> dict:
    """Whether Gmail is connected (a token file exists; its content is never shown), the account, the last
    sync (UTC ISO-8601) and historyId, threads read, how many need a reply, the newest of them (`waiting`: at most
    `STATUS_WAITING`, newest first, shaped as `waiting_threads`), the sign-in problem that stopped it and the
    failure of the syncs since the last one that worked (`{at, reason}`; None if none). Read-only."""
    if not settings.gmail_token_path.exists():
        return {"connected": False}
    being = settings.being
    threads, waiting = email_threads.counts(store, being)
    return {"connected": True, "account": state.get_text(store, "gmail", being, "address"),
            "last_sync": state.get_time(store, "gmail", being, "last_sync"),
            "history_id": store.get_cursor("gmail", being, "history_id"), "threads": threads,
            "needs_reply": waiting, "waiting": waiting_threads(store, being, newest_first=True, limit=STATUS_WAITING),
            "auth_error": state.get_json(store, "gmail", being, "auth_error"),
            "sync_error": state.get_json(store, "gmail", being, "sync_error")}


def gmail_degraded(state: dict) -> list[str]:
    """The sign-in problem that stopped Gmail, else the failure of its syncs since the last one that worked."""
    if state.get("auth_error"):
        return [f"Gmail stopped at {state['auth_error']['at']}: {state['auth_error']['reason']}; "
                "run `twin connect gmail`"]
    if state.get("sync_error"):
        return [f"Gmail syncs fail since {state['sync_error']['at']} ({state['sync_error']['reason']}); "
                "twin keeps trying"]
    return []


def browser_state(settings: Settings, store: Store) -> dict:
    """Whether browser history is read, when it was last imported (UTC ISO-8601; None before the first import),
    how many profiles have a cursor, and the profiles the last import could not read (their reasons). Read-only."""
    if not settings.browser_enabled:
        return {"enabled": False}
    profiles = store.count_cursors("browser", settings.being, "visit:")
    return {"enabled": True, "last_import": state.get_time(store, "browser", settings.being, "last_import"),
            "profiles": profiles, "every_s": settings.browser_interval_s,
            "unreadable": state.get_json(store, "browser", settings.being, "unreadable") or []}


def browser_degraded(state: dict) -> list[str]:
    """The browser profiles the last import could not read, in one line."""
    return ["Browser history: " + "; ".join(state["unreadable"])] if state.get("unreadable") else []


def telegram_state(settings: Settings, store: Store) -> dict:
    """Whether the Telegram connector is on (a bot token is set; never shown), its owners (allowed and paired
    user ids), the last handled update id, and when Telegram last refused the token (None if it did not).
    Read-only."""
    if settings.telegram_bot_token is None:
        return {"enabled": False}
    paired = transcript.paired_owners(store, "telegram", settings.being)
    return {"enabled": True, "owners": sorted(paired | set(settings.telegram_allowed_users)),
            "last_update_id": store.get_cursor("telegram", settings.being, "update_id"),
            "token_refused": state.get_time(store, "telegram", settings.being, "token_refused")}


def telegram_degraded(state: dict) -> list[str]:
    """A refused bot token, and a bot that answers no one yet."""
    lines = []
    if state.get("token_refused"):
        lines.append(f"Telegram refused the bot token at {state['token_refused']}: fix TWIN_TELEGRAM_BOT_TOKEN in "
                     "the env file and restart twin")
    if state.get("owners") == []:
        lines.append("Telegram: the bot answers no one yet: run `twin telegram pair` and send the code to the bot "
                     "(or set TWIN_TELEGRAM_ALLOWED_USERS)")
    return lines
