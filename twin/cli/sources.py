"""Commands for the sources that need the owner: telegram pair/owners, connect gmail, sync browser."""

from __future__ import annotations

import argparse
import errno
import sys

from twin.activity import Activity
from twin.cli.output import emit, show
from twin.settings import Settings
from twin.store import Store, state


def cmd_telegram(settings: Settings, args: argparse.Namespace) -> int:
    """`pair`: print a one-time code; the first Telegram user to send `/start CODE` to the bot within 10 minutes
    becomes an owner. `owners`: list the owners (`--json`: `[{user_id, paired}]`, paired false for those of
    TWIN_TELEGRAM_ALLOWED_USERS)."""
    import secrets
    from datetime import UTC, datetime, timedelta

    from twin.connectors.telegram import CONNECTOR, PAIR_CODE_TTL_S, pair_code_hash
    from twin.memory import format_time

    with Store(settings.db_path) as store:
        if args.action == "owners":
            from twin.chat import paired_owners

            paired = paired_owners(store, CONNECTOR, settings.being)
            owners = [{"user_id": user_id, "paired": user_id in paired}
                      for user_id in sorted(paired | set(settings.telegram_allowed_users))]
            def plain() -> None:
                for o in owners:
                    show(f"{o['user_id']} ({'paired' if o['paired'] else 'TWIN_TELEGRAM_ALLOWED_USERS'})")
                if not owners:
                    bot = "" if settings.telegram_bot_token else "TWIN_TELEGRAM_BOT_TOKEN is not set; then "
                    show(f"no Telegram owner yet: {bot}pair your account with `twin telegram pair`")

            return emit(args, owners, plain)
        code = secrets.token_hex(4)
        expires = format_time(datetime.now(UTC) + timedelta(seconds=PAIR_CODE_TTL_S))
        state.set_json(store, CONNECTOR, settings.being, "pair_code",
                       {"sha256": pair_code_hash(code), "expires_at": expires})
    if settings.telegram_bot_token is None:
        show("note: TWIN_TELEGRAM_BOT_TOKEN is not set yet; put it in the env file and restart twin", file=sys.stderr)
    show(f"Send this to your bot on Telegram within {PAIR_CODE_TTL_S // 60} minutes:\n\n    /start {code}\n",
         newlines=True)
    show("The first account that sends it becomes the owner; twin answers no one else.")
    return 0


def cmd_connect(settings: Settings, args: argparse.Namespace) -> int:
    """Connect Gmail: sign in with Google in a browser (read-only access); the token is saved 0600 in the data
    dir and a running twin starts reading mail within seconds. Needs TWIN_GMAIL_CLIENT_SECRETS: the OAuth client
    file (type "Desktop app") of your own Google Cloud project with the Gmail API enabled."""
    from twin.connectors.gmail import GmailAuthError, authorize

    try:
        authorize(settings, port=args.port, open_browser=not args.no_browser, timeout_s=args.timeout)
    except GmailAuthError as exc:
        show(f"twin: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        show(f"twin: port {args.port} is in use (or was a moment ago): wait a minute or pick another with --port",
              file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - the flow's own errors (timeout, refused consent, bad response)
        show(f"twin: Gmail sign-in failed ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 1
    with Store(settings.db_path) as store:
        state.delete(store, "gmail", settings.being, "auth_error")
        Activity(store, settings.being).record("read_email", "Gmail connected (read-only).")
    show("Gmail is connected. A running twin picks the token up within seconds; `twin status` shows the sync.")
    return 0


def cmd_sync(settings: Settings, args: argparse.Namespace) -> int:
    """Import browser history now, whatever the 24-hour pace (seed 001): visits since the last import of each
    profile are clustered into interests and learned (with the model when one is configured)."""
    from twin.connectors.browser import BrowserBusy, import_now

    try:
        report = import_now(settings)
    except BrowserBusy as exc:
        show(f"twin: {exc}", file=sys.stderr)
        return 1

    def plain() -> None:
        show(report["line"])
        for text in report["interests"]:
            show(f"  {text}")
        for problem in report["problems"]:
            show(f"  skipped: {problem}", file=sys.stderr)

    return emit(args, report, plain)
