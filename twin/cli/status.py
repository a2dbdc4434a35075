"""Commands that say how the twin is: status, doctor, activity, signals, email waiting."""

from __future__ import annotations

import argparse
import os
import sys
import time

from twin.activity import Activity
from twin.cli.output import INDENT, emit, print_json, report_lines, show
from twin.cli.queues import REDIS_ANSWER_S, probe_redis
from twin.exceptions import TwinError
from twin.memory import parse_time
from twin.settings import Settings
from twin.store import Store


def cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    """Counts, embedding backlog, queue depths, index state and degraded modes (the daemon's API among them:
    `twin.remote.api_problem`)."""
    from twin.health import status
    from twin.remote import api_problem

    bus, redis_error = probe_redis(settings)
    with Store(settings.db_path) as store:
        report = status(settings, store, bus, redis_error, REDIS_ANSWER_S)
    problem = api_problem(settings)
    if problem is not None:
        report["degraded"].append(problem)
    return emit(args, report, lambda: print_status(report))


def print_status(report: dict) -> None:
    """`twin status` for people (`twin.health.status`'s report): the counts as aligned `key: value` lines, a
    section per component (index, queues, staged, files, model, signals, the sources, lifecycle), gmail in its
    own words (`_gmail_lines`), and last the degraded modes one per line, or `degraded: ok`."""
    body = {k: v for k, v in report.items() if k != "degraded"}
    for text, style in report_lines(body, own={"gmail": _gmail_lines}):
        show(text, style=style)
    degraded = report.get("degraded") or []
    if not degraded:
        show("degraded: ok", style="green")
        return
    show("degraded", style="bold")
    for line in degraded:
        show(INDENT + line, style="yellow")


STATUS_WAITING_SHOWN = 3
"""Threads waiting for a reply that the plain `twin status` names (the newest; `twin email waiting` has all)."""


def _gmail_lines(state: dict) -> list[str]:
    """The gmail part of `twin status` in plain words: the account and last sync, threads read, how many wait for
    a reply, then the newest few of those, one per line (who, subject, since when, what they ask)."""
    if not state.get("connected"):
        return ["gmail: not connected (run `twin connect gmail`)"]
    sync = f"last sync {state['last_sync']}" if state.get("last_sync") else "not synced yet"
    lines = [f"gmail: {state.get('account') or 'connected'}, {sync}, {state['threads']} thread(s) read"]
    count = state["needs_reply"]
    if not count:
        return [*lines, "gmail: no thread waits for your reply"]
    shown = state["waiting"][:STATUS_WAITING_SHOWN]
    more = f"; the newest {len(shown)} below, `twin email waiting` lists all" if count > len(shown) else ""
    lines.append(f"gmail: {count} thread{'s' if count != 1 else ''} wait{'s' if count == 1 else ''} for your "
                 f"reply{more}")
    return lines + [f"  {_waiting_line(thread)}" for thread in shown]


def _waiting_line(thread: dict, now: float | None = None) -> str:
    """"Alice Smith, “Quarterly report”, waiting since 28 Nov 2026 09:00 UTC (3 days): Can you send …"; `now` in
    seconds since the epoch (default: the clock)."""
    from datetime import UTC

    try:
        at = parse_time(thread["at"])
    except (TypeError, ValueError):
        since = "waiting"
    else:
        days = int(((now or time.time()) - at.timestamp()) // 86_400)
        age = "today" if days <= 0 else f"{days} day{'s' if days != 1 else ''}"
        since = f"waiting since {at.astimezone(UTC):%d %b %Y %H:%M} UTC ({age})"
    asks = f": {thread['asks']}" if thread.get("asks") else ""
    return f"{thread['from'] or 'someone'}, “{thread['subject']}”, {since}{asks}"


def cmd_email(settings: Settings, args: argparse.Namespace) -> int:
    """`waiting`: every email thread that waits for your reply, oldest first: who wrote last, the subject, since
    when it waits and what they ask (as the last Gmail sync saw them; a thread you answered leaves the list at
    the next sync)."""
    from twin.connectors.source_state import waiting_threads

    with Store(settings.db_path) as store:
        threads = waiting_threads(store, settings.being)

    def plain() -> None:
        for thread in threads:
            show(_waiting_line(thread))
        if not threads and not settings.gmail_token_path.exists():
            show("Gmail is not connected, so no thread is read (twin connect gmail)")
        elif not threads:
            show("no email thread waits for your reply")

    return emit(args, threads, plain)


def cmd_doctor(settings: Settings, args: argparse.Namespace) -> int:
    """Seed 004's self-check: the full-text index is healthy, vectors exist, a paraphrase ranks its memory first,
    the index matches SQLite. `--repair` first rebuilds the full-text index from the memories (what a failing
    full-text check asks for)."""
    from twin.health import doctor, repair_fts

    with Store(settings.db_path) as store:
        if args.repair:
            fixed = repair_fts(store)
            print(f"repaired: full-text index rebuilt from the memories in {fixed['seconds']:.2f} s "
                  f"({fixed['levels_before'] if fixed['levels_before'] is not None else 'unreadable'} → "
                  f"{fixed['levels_after']} level(s))", file=sys.stderr)
        checks = doctor(settings, store)
    ok = all(c["ok"] for c in checks)
    emit(args, {"ok": ok, "checks": checks}, lambda: [
        show(f"{'ok  ' if c['ok'] else 'FAIL'}  {c['check']}: {c['detail']}") for c in checks])
    return 0 if ok else 1


def cmd_activity(settings: Settings, args: argparse.Namespace) -> int:
    """Print the newest diary lines; `--follow` keeps printing new ones until interrupted."""
    with Store(settings.db_path) as store:
        diary = Activity(store, settings.being)
        last = 0
        while True:
            lines = diary.recent(args.n if last == 0 else 1000, after_id=last)
            for line in lines:
                if args.json:
                    print_json(line.__dict__)
                else:
                    show(f"{line.at}  {line.text}", flush=True)
                last = line.id
            if not args.follow:
                return 0
            try:
                time.sleep(1)
            except KeyboardInterrupt:
                return 0


def cmd_signals(settings: Settings, args: argparse.Namespace) -> int:
    """List raised and held-back signals, newest first, with their evidence and reasons."""
    from dataclasses import asdict

    from twin.store.signals import list_signals

    status = {"raised": "raised", "held": "held_back"}.get(args.status)
    with Store(settings.db_path) as store:
        signals = list_signals(store, settings.being, status=status, limit=args.limit)
        evidence = store.get_many({i for s in signals for i in s.evidence})

    def plain() -> None:
        for s in signals:
            show(f"#{s.id} {s.created_at} {s.status} {s.kind}: {s.title}")
            if s.body:
                show(f"    {s.body}")
            if s.reason:
                show(f"    held back: {s.reason}")
            for mid in s.evidence:
                memory = evidence.get(mid)
                show(f"    evidence #{mid}: " + (memory.content if memory is not None else "(forgotten)"))
        if not signals:
            show("no signals yet")

    return emit(args, [asdict(s) for s in signals], plain)


def cmd_token(settings: Settings, args: argparse.Namespace) -> int:
    """Print the HTTP API's bearer token (`<config dir>/api-token`, 0600; made now if the API never ran), for an
    `Authorization: Bearer …` header. `--rotate` replaces it: the running API takes the new one at its next
    request and refuses the old; every page session ends too (`twin.operations.page.end_page_sessions`)."""
    from twin.api.token import ensure_token, rotate_token

    if not args.rotate:
        show(ensure_token(settings.api_token_path))
        return 0
    ended = _end_page_sessions(settings)  # first: a store that fails leaves the token as it was, and says so
    token = rotate_token(settings.api_token_path)
    show(token)
    show(f"(the old token stops working now; {ended} page session(s) ended: `twin open` for a new one)",
         file=sys.stderr)
    return 0


def _end_page_sessions(settings: Settings) -> int:
    """End every page session in the store; how many there were."""
    from twin.operations import Context
    from twin.operations.page import end_page_sessions

    ctx = Context.open(settings)
    try:
        return end_page_sessions(ctx)
    finally:
        ctx.close()


def api_answers(settings: Settings) -> str | None:
    """None when the daemon's API answers `GET /v1/health` with our token, else why not, in one line that says
    how to start it."""
    from twin.remote import DaemonTwin, DaemonUnreachable, TokenRefused, daemon_token, daemon_url

    url = daemon_url(settings)
    start = "start the daemon (`systemctl --user start twin`, or `twin up` in a terminal), then `twin open` again"
    if not settings.api_enabled:
        return "the HTTP API is off (api_enabled = false), and the page is served by it: turn it on and restart"
    token = daemon_token(settings)
    try:
        if token is None:
            raise DaemonUnreachable("no token file yet")
        DaemonTwin(url, token).health()
    except DaemonUnreachable:
        return f"the twin is not answering at {url}: {start}"
    except TokenRefused:
        return f"something answers at {url} but refuses this twin's token (another twin's API?): {start}"
    except TwinError as exc:
        return f"the twin at {url} does not answer as it should ({exc}); see `journalctl --user -u twin`"
    return None


def cmd_open(settings: Settings, args: argparse.Namespace) -> int:
    """Print a one-time link to the page (`http://127.0.0.1:<port>/twin/session/<code>`): it works once, for five
    minutes, and opens a session in the browser that follows it (`twin.api.session`). First asks the daemon's API
    whether it answers (`GET /v1/health`): when it does not, says so in one line with how to start it and exits 1
    (no link). With a desktop (`$DISPLAY` or `$WAYLAND_DISPLAY`) and without `--no-browser` it also opens the link
    in the default browser. `--end-sessions` ends every page session instead (and prints no link)."""
    from twin.api.server import where
    from twin.operations import Context
    from twin.operations.page import LINK_TTL_S, new_page_link

    if args.end_sessions:
        show(f"{_end_page_sessions(settings)} page session(s) ended; `twin open` for a new one")
        return 0
    why = api_answers(settings)
    if why is not None:
        show(f"twin: {why}", file=sys.stderr)
        return 1
    ctx = Context.open(settings)
    try:
        code = new_page_link(ctx)
    finally:
        ctx.close()
    base = where(settings).split(" and ")[0]
    if settings.api_host in ("0.0.0.0", "::"):
        base = f"http://127.0.0.1:{settings.api_port}"
    link = f"{base}/twin/session/{code}"
    show(link)
    show(f"(works once, for {LINK_TTL_S // 60} minutes)", file=sys.stderr)
    if not args.no_browser and (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        import webbrowser

        webbrowser.open(link)
    return 0
