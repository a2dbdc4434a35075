"""The `twin` command line (argparse): run the daemon, teach, recall, read, forget, inspect, move memories.

Read commands take `--json`. An invalid setting prints one line and exits 2.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import TextIO

from twin import __version__
from twin.activity import Activity
from twin.exceptions import SettingsError, TwinError
from twin.memory import KINDS, parse_time
from twin.outside_text import clean_name, escape_controls, json_text
from twin.settings import Settings, load_settings
from twin.startup_checks import startup_warnings
from twin.store import Store


def show(text: str = "", *, file: TextIO | None = None, newlines: bool = False, end: str = "\n",
         flush: bool = False) -> None:
    """Print one line of output (to stdout, or `file`): every command prints through here, since almost every
    line holds outside text (memory content, sources, diary lines, signal titles, profile values, error
    messages naming a file). Terminal controls in it are escaped (`twin.outside_text.escape_controls`); line
    breaks are escaped too unless `newlines` (a text of our own that spans lines)."""
    print(escape_controls(text, newlines=newlines), file=file or sys.stdout, end=end, flush=flush)


def _print_json(value: object) -> None:
    """`value` as one JSON line, controls and lone surrogates as `\\uXXXX` escapes (`outside_text.json_text`)."""
    show(json_text(value))


REDIS_ANSWER_S = 2.0
"""How long the CLI waits for Redis to answer a ping (connecting: 1 s)."""


def _probe_redis(settings: Settings):
    """`(Bus, None)` when Redis answers a ping within `REDIS_ANSWER_S`, else `(None, the error)`."""
    from redis import Redis

    from workers.bus import Bus

    client = Redis.from_url(settings.effective_redis_url, socket_connect_timeout=1, socket_timeout=REDIS_ANSWER_S)
    try:
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        return None, exc
    return Bus(client), None


def _bus(settings: Settings):
    """A Bus when Redis answers within `REDIS_ANSWER_S`, else None (the daemon picks the work up when it runs)."""
    return _probe_redis(settings)[0]


# -- commands ---------------------------------------------------------------------------------
def cmd_up(settings: Settings, args: argparse.Namespace) -> int:
    """Run the supervisor in the foreground (what systemd runs)."""
    import asyncio

    from daemon.supervisor import Supervisor
    from twin.logs import configure_logging

    if args.files:
        settings.files_roots = args.files
    configure_logging(settings.log_level, settings.secret_values)
    return asyncio.run(Supervisor(settings).run())


def cmd_learn(settings: Settings, args: argparse.Namespace) -> int:
    """Learn TEXT now (the same `learn()` every source uses) and ask the daemon to embed it. `--json` prints
    `{created, reinforced, updated, superseded, rejected}`: memories created, reinforced and updated (each
    updated one with its `reason`), `superseded: [{id, by, reason}]` for each memory this text hid, and
    `rejected: [{content, reason}]` for each candidate not stored."""
    from twin.extractor import MAX_PER_CALL
    from twin.learn import as_memories, learn
    from twin.provider import provider_for

    # stdin as bytes, decoded leniently: text that is not UTF-8 is still learned (with U+FFFD where it broke)
    text = sys.stdin.buffer.read().decode("utf-8", errors="replace") if args.text == "-" else args.text
    with Store(settings.db_path) as store:
        provider = provider_for(settings, store)
        # --source is outside text that becomes an identifier and diary text: one safe line (clean_name)
        source = clean_name(args.source)
        result = learn(store, Activity(store, settings.being), settings.being, text, source, provider=provider,
                       force=args.force)
        if provider is not None:
            provider.close()
        if result.updated:  # the old wording of a memory updated in place leaves the database files now
            from twin.forgetting import scrub_if_due

            scrub_if_due(store)
        bus = _bus(settings)
        if bus is not None and (result.created or result.updated):
            bus.notify_embed()
        created = as_memories(store, result.created)
        reinforced = as_memories(store, result.reinforced)
        updated = as_memories(store, result.updated)
    if args.json:
        _print_json({"created": [m.to_dict() for m in created], "reinforced": [m.to_dict() for m in reinforced],
                     "updated": [{**m.to_dict(), "reason": result.update_reasons.get(m.id)} for m in updated],
                     "superseded": [s.to_dict() for s in result.supersessions],
                     "rejected": [{"content": c, "reason": r} for c, r in result.rejections]
                     + [{"content": None, "reason": r} for r in result.skipped]})
        return 0
    for m in created:
        show(f"learned   #{m.id} {m.kind}: {m.content}")
    for m in reinforced:
        show(f"reinforced #{m.id} {m.kind}: {m.content} (importance {m.importance:.2f})")
    for m in updated:
        show(f"updated   #{m.id} {m.kind}: {m.content} ({result.update_reasons.get(m.id)})")
    for s in result.supersessions:
        show(f"superseded #{s.id} by #{s.by}: {s.reason} (kept: twin memories --all)")
    for reason in result.rejected + result.skipped:
        show(f"not stored: {reason}")
    if not (created or reinforced or updated or result.rejected or result.skipped):
        show("nothing memorable found in that text")
    if len(created) + len(reinforced) + len(updated) + len(result.rejected) >= MAX_PER_CALL:
        show(f"note: one text gives at most {MAX_PER_CALL} memories (seed 000); the rest of it was not read. "
              "Learn a long text in parts, or put it in a watched folder (files_max_memories per file).",
              file=sys.stderr)
    return 0


def cmd_recall(settings: Settings, args: argparse.Namespace) -> int:
    """Answer QUERY with the best-matching memories (hybrid recall)."""
    from twin.recall import open_recall

    with Store(settings.db_path) as store:
        recall = open_recall(settings, store)
        try:
            results = recall.recall(settings.being, args.query, limit=args.limit, kind=args.kind, since=args.since,
                                    as_of=args.as_of, touch=args.as_of is None, include_sensitive=args.sensitive)
            waiting = 0 if recall.keyword_only else store.count_pending_embeddings(recall.embedder.model_id)
        finally:
            recall.close()
    if waiting:
        show(f"({waiting} memories have no vector yet and are found by their words only: the daemon embeds "
              "them, or run twin backfill)", file=sys.stderr)
    if args.json:
        _print_json([r.to_dict() for r in results])
        return 0
    if recall.keyword_only:
        show("(keyword-only recall: no embedder)", file=sys.stderr)
    for r in results:
        m = r.memory
        show(f"#{m.id:<6} {r.score:.3f}  {m.kind:<12} {m.content}  [{m.source}]")
    if not results:
        show("nothing found")
    return 0


def cmd_memories(settings: Settings, args: argparse.Namespace) -> int:
    """List memories newest first (everything is readable: seed 000 "read all of it"; superseded ones with
    --all, sensitive ones with --sensitive). `twin recent` / `twin today` list those made since a time (since
    local midnight in the owner's zone, `time_window.today_window`); listing never re-promotes a cold memory
    (seed 003)."""
    since = args.since if getattr(args, "since", None) else None
    if args.command == "today":
        from datetime import UTC, datetime

        from twin.hush import owner_zone
        from twin.memory import format_time
        from twin.time_window import today_window

        since = format_time(today_window(datetime.now(UTC), owner_zone(settings)).start)
    with Store(settings.db_path) as store:
        rows = store.list_memories(settings.being, kind=args.kind, limit=args.limit, since=since,
                                   include_superseded=args.all)
    rows = [m for m in rows if args.sensitive or m.sensitivity != "sensitive"]
    if args.json:
        _print_json([m.to_dict() for m in rows])
        return 0
    for m in rows:
        why = f": {m.supersede_reason}" if m.supersede_reason else ""
        stale = f"  (superseded by #{m.superseded_by}{why})" if m.status == "superseded" else ""
        show(f"#{m.id:<6} {m.created_at}  {m.kind:<12} {m.content}  [{m.source}]{stale}")
    return 0


def cmd_forget(settings: Settings, args: argparse.Namespace) -> int:
    """Forget memories for good: by id (at once, as always), a whole source (`--source file:/path`,
    `email:<thread>`, `telegram:<chat>`, `browser`; `'file:/folder/*'` for every source that starts so) or
    everything about a person or thing (`--about "Ana Souza"`: the whole name, and each part of it alone, "Ana"
    or "Dr. Souza", unless `--whole`; the dry run lists those apart). With their rows go their full-text entries,
    vectors and index entries, edges, the chat transcript rows and summaries that hold them, and a source's
    email thread rows and file manifest entries. `--dry-run` lists all of it per table and changes nothing;
    `--source` and `--about` ask first on a terminal and, like `git clean`, need `--yes` otherwise. The index
    is scrubbed at the daemon's next checkpoint."""
    from twin import forgetting

    by_ids = bool(args.ids)
    if by_ids == bool(args.source is not None or args.about is not None):
        print("twin: forget takes memory ids, or --source / --about (not both)", file=sys.stderr)
        return 2
    with Store(settings.db_path) as store:
        try:
            todo = forgetting.plan(store, settings.being, ids=args.ids or None, source=args.source, about=args.about,
                                   whole=args.whole)
        except ValueError as exc:
            print(f"twin: {exc}", file=sys.stderr)
            return 2
        if args.dry_run or args.json_plan:
            _print_plan(todo, args, dry_run=True)
            return 0
        if not by_ids and not todo.empty and not args.yes and not _confirmed(todo, args):
            return 2 if not sys.stdin.isatty() else 1
        done = forgetting.carry_out(store, Activity(store, settings.being), todo)
    bus = _bus(settings)
    if bus is not None and done.vectors:
        bus.request_checkpoint()
        bus.rewrite_append_only_file()
    if by_ids:
        gone = {m.id for m in done.memories}
        for mid in args.ids:
            if mid in gone:
                show(f"forgot #{mid}")
            else:
                show(f"no memory #{mid}", file=sys.stderr)
        if gone:
            show(f"removed {done.line()}")
        return 1 if set(args.ids) - gone else 0
    if done.empty:
        show("nothing to forget: no memory or transcript row matches")
        return 0
    show(f"forgot {done.line()}")
    return 0


def _print_plan(todo, args: argparse.Namespace, dry_run: bool) -> None:
    """The plan per table (memories with ids and text, sensitive ones masked unless --sensitive: `Memory.shown`;
    for --about, those that mention only a part of the name listed apart, with the part)."""
    if args.json_plan:
        _print_json({"dry_run": dry_run, **todo.to_dict(reveal_sensitive=args.sensitive)})
        return
    counts = todo.counts()
    show(f"{'would forget' if dry_run else 'to forget'}: {todo.line()}")
    show(f"memories: {counts['memories']}")
    by_part = [m for m in todo.memories if m.id in todo.by_part]
    for m in todo.memories:
        if m.id not in todo.by_part:
            _plan_memory(m.shown(args.sensitive))
    if by_part:
        show(f"  mentioning only a part of \"{todo.about}\" (--whole leaves these out):")
        for m in by_part:
            _plan_memory(m.shown(args.sensitive), " (" + ", ".join(todo.by_part[m.id]) + ")")
    show(f"memories_fts: {counts['fts_rows']} row(s)")
    show(f"memory_embeddings: {counts['vectors']} vector(s); vector index: {counts['index_entries']} entr"
          f"{'y' if counts['index_entries'] == 1 else 'ies'}")
    show(f"memory_edges: {counts['edges']} edge(s)")
    by_chat: dict[str, list[int]] = {}
    for row_id, chat_id in todo.transcript_rows.items():
        by_chat.setdefault(chat_id, []).append(row_id)
    show(f"chat_messages: {counts['transcript_rows']} row(s) redacted"
          + "".join(f"; chat {c}: " + ", ".join(f"#{r}" for r in rows) for c, rows in sorted(by_chat.items())))
    show(f"chat_sessions: {counts['summaries']} summary(ies) rebuilt" + (f" ({', '.join(todo.summaries)})"
                                                                         if todo.summaries else ""))
    show(f"email_threads: {counts['email_threads']} row(s) cleared" + (f" ({', '.join(todo.email_threads)})"
                                                                        if todo.email_threads else ""))
    show(f"files_manifest: {counts['manifest_entries']} entr{'y' if counts['manifest_entries'] == 1 else 'ies'}"
          + (f" ({', '.join(todo.manifest_entries)})" if todo.manifest_entries else ""))
    show(f"ingest_items: {counts['staged_items']} item(s) waiting to be learned")
    show(f"activity: {counts['diary_lines']} diary line(s) naming it, rewritten to name no source")
    if dry_run:
        show("nothing was changed (dry run)")


def _plan_memory(m, note: str = "") -> None:
    """One memory line of a forget plan (`m` already `Memory.shown`)."""
    show(f"  #{m.id:<6} {m.kind:<12} {m.content}  [{m.source}]{note}")


def _confirmed(todo, args: argparse.Namespace) -> bool:
    """On a terminal: show the plan and ask. Otherwise (a script, a pipe) never ask: refuse, as `git clean` does
    without -f, and say which flag to add."""
    if not sys.stdin.isatty():
        show(f"twin: this would forget {todo.line()}; nothing was changed. Run it again with --dry-run to list "
              "it, or --yes to forget it.", file=sys.stderr)
        return False
    _print_plan(todo, args, dry_run=False)
    answer = input("Forget all of this for good? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        show("nothing was changed")
        return False
    return True


def cmd_activity(settings: Settings, args: argparse.Namespace) -> int:
    """Print the newest diary lines; `--follow` keeps printing new ones until interrupted."""
    with Store(settings.db_path) as store:
        diary = Activity(store, settings.being)
        last = 0
        while True:
            lines = diary.recent(args.n if last == 0 else 1000, after_id=last)
            for line in lines:
                if args.json:
                    _print_json(line.__dict__)
                else:
                    show(f"{line.at}  {line.text}", flush=True)
                last = line.id
            if not args.follow:
                return 0
            try:
                time.sleep(1)
            except KeyboardInterrupt:
                return 0


def cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    """Counts, embedding backlog, queue depths, index state and degraded modes."""
    from twin.health import status

    bus, redis_error = _probe_redis(settings)
    with Store(settings.db_path) as store:
        report = status(settings, store, bus, redis_error, REDIS_ANSWER_S)
    if args.json:
        _print_json(report)
        return 0
    for key, value in report.items():
        if key == "degraded":
            for line in value:
                show(f"degraded: {line}")
        elif key == "gmail":
            for line in _gmail_lines(value):
                show(line)
        else:
            show(f"{key}: {value}")
    return 0


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
    from twin.health import waiting_threads

    with Store(settings.db_path) as store:
        threads = waiting_threads(store, settings.being)
    if args.json:
        _print_json(threads)
        return 0
    for thread in threads:
        show(_waiting_line(thread))
    if not threads:
        show("no email thread waits for your reply")
    return 0


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
    if args.json:
        _print_json({"ok": ok, "checks": checks})
    else:
        for c in checks:
            show(f"{'ok  ' if c['ok'] else 'FAIL'}  {c['check']}: {c['detail']}")
    return 0 if ok else 1


def cmd_backfill(settings: Settings, args: argparse.Namespace) -> int:
    """Give every memory a vector of the current embedding model (after switching `embed_backend` or the
    remote model): embedded in batches, saved to SQLite after each (every 200), with a progress line each time.
    Interrupted, it resumes where it stopped when run again. Writes only SQLite: the daemon's embedding worker
    brings its index up to date. Run it with the daemon stopped or already restarted with the new setting."""
    from twin.backfill import backfill
    from twin.embedder import make_embedder

    with Store(settings.db_path) as store:
        embedder = make_embedder(settings.embed_backend, settings.embed_threads, settings, store)
        if embedder is None:
            show("twin: TWIN_EMBED_BACKEND=none: there is no embedding model to backfill with", file=sys.stderr)
            return 1
        try:
            embedder.open()
            pending = store.count_pending_embeddings(embedder.model_id)
            show(f"backfill: {pending} of {store.embedding_count(embedder.model_id) + pending} memories need a "
                  f"vector of {embedder.model_id}", flush=True)
            report = backfill(store, embedder, batch=args.batch, progress=lambda p: show(p.line(), flush=True),
                              activity=Activity(store, settings.being))
        except KeyboardInterrupt:
            show("backfill: interrupted; what was embedded is saved: run `twin backfill` again to resume",
                  file=sys.stderr)
            return 130
        finally:
            if hasattr(embedder, "close"):
                embedder.close()
    show(report.line())
    bus = _bus(settings)
    if bus is not None and report.embedded:
        bus.request_checkpoint()  # a running daemon catches its index up now, not at its next checkpoint
    return 0


def cmd_export(settings: Settings, args: argparse.Namespace) -> int:
    """Write every memory (all fields, all statuses) as JSON lines, oldest first."""
    from twin.transfer import export_memories

    with args.output as out, Store(settings.db_path) as store:
        if out is not sys.stdout:
            os.chmod(out.name, 0o600)  # an existing file keeps its mode on open: memories are private
        n = export_memories(store, settings.being, out)
    show(f"exported {n} memories", file=sys.stderr)
    return 0


def cmd_import(settings: Settings, args: argparse.Namespace) -> int:
    """Read memories from JSON lines through the dedup path; every bad line is reported (line number and why)
    and skipped, every good line is imported (`twin.import_lines` has the rules), and a line imported otherwise
    than it says gets a note. Exit 1 when any line was skipped (the good ones are imported all the same)."""
    from twin.import_lines import bounded_lines
    from twin.transfer import import_memories

    with args.input as source, Store(settings.db_path) as store:
        report = import_memories(store, Activity(store, settings.being), settings.being, bounded_lines(source))
    bus = _bus(settings)
    if bus is not None and report["created"]:
        bus.notify_embed()
    noted = f" ({len(report['notes'])} imported with a note)" if report["notes"] else ""
    show(f"imported {report['created']} new, {report['known']} already known, skipped {report['skipped']}{noted}")
    for problem in report["problems"]:
        show(f"  {problem}", file=sys.stderr)
    for note in report["notes"]:
        show(f"  {note} (imported)", file=sys.stderr)
    return 1 if report["skipped"] else 0


MAX_PROFILE_BYTES = 256 * 1024
"""A hand-edited profile larger than this is refused (4 lists of at most 40 short items fit many times over)."""


def cmd_profile(settings: Settings, args: argparse.Namespace) -> int:
    """Show the profile, or edit it by hand (`edit`: in $VISUAL/$EDITOR, or from `--file`)."""
    from twin.profile import Profile, load_profile, save_profile

    with Store(settings.db_path) as store:
        profile = load_profile(store, settings.being)
        if args.action == "show":
            if args.json:
                _print_json(profile.model_dump())
            else:
                show(profile.to_toml(), newlines=True, end="")
            return 0
        if args.file is not None:
            with args.file:  # opened by argparse; closed here, not left to the garbage collector
                raw = args.file.read(MAX_PROFILE_BYTES + 1)
        else:
            raw = _edit_text(profile.to_toml(), settings)
        if len(raw) > MAX_PROFILE_BYTES:
            raise TwinError(f"the new profile is larger than {MAX_PROFILE_BYTES} bytes; it was not changed")
        try:
            edited = Profile.from_toml(raw.decode("utf-8"))
        except ValueError as exc:  # UnicodeDecodeError included
            show(f"twin: the profile was not changed: {str(exc).splitlines()[0]}", file=sys.stderr)
            return 1
        if edited == profile:
            show("profile unchanged")
            return 0
        from twin.memory import utc_now

        with store.transaction():
            save_profile(store, settings.being, edited, utc_now())
        Activity(store, settings.being).record("profile", "You edited your profile by hand.")
    show("profile saved")
    return 0


def _edit_text(text: str, settings: Settings) -> bytes:
    """Open `text` in the owner's editor ($VISUAL, $EDITOR, else nano or vi) in a private temporary file in the
    data dir, and return the bytes saved (up to `MAX_PROFILE_BYTES` + 1: the caller refuses more). Raises
    `TwinError` when no editor runs, it fails, or the file it leaves cannot be read."""
    import shlex
    import shutil
    import subprocess
    import tempfile

    from twin.store import private_dir

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or shutil.which("nano") or shutil.which("vi")
    if not editor:
        raise TwinError("no editor found: set $EDITOR, or use `twin profile edit --file FILE`")
    with tempfile.TemporaryDirectory(prefix="profile-", dir=private_dir(settings.data_dir)) as folder:
        path = Path(folder) / "profile.toml"
        path.write_text(text, encoding="utf-8")
        try:
            code = subprocess.call([*shlex.split(editor), str(path)])
        except OSError as exc:
            raise TwinError(f"cannot run the editor {editor!r}: {exc.strerror or exc}") from exc
        if code != 0:
            raise TwinError(f"the editor exited with code {code}; the profile was not changed")
        try:
            with open(path, "rb") as edited:
                return edited.read(MAX_PROFILE_BYTES + 1)
        except OSError as exc:
            raise TwinError(f"the edited profile cannot be read ({exc.strerror or exc}); it was not changed") from exc


def cmd_reflect(settings: Settings, args: argparse.Namespace) -> int:
    """Reflect now (forced: no 3-new-memories gate) and print `{ran, signals, widgets, thought}`."""
    from twin.hush import HushGate, HushRules
    from twin.provider import provider_for
    from twin.reflection import reflect

    bus = _bus(settings)
    with Store(settings.db_path) as store:
        provider = provider_for(settings, store)
        gate = HushGate(store, settings.being, HushRules.from_settings(settings))
        outbox = None if bus is None else (lambda signal_id: bus.push_signal(signal_id, settings.being))
        try:
            result = reflect(store, Activity(store, settings.being), settings.being, provider, gate, force=True,
                             outbox=outbox)
        finally:
            if provider is not None:
                provider.close()
    if args.json:
        _print_json(result.to_dict())
        return 0
    show(f"ran: {str(result.ran).lower()} ({result.new_memories} new memories)"
          + (f"; {result.note}" if result.note else ""))
    for signal in result.signals:
        line = f"signal #{signal['id']} {signal['status']}: {signal['title']}"
        show(line + (f" ({signal['reason']})" if signal["reason"] else ""))
    for widget in result.widgets:
        show(f"widget suggested: {widget['type']} ({widget['reason']})")
    if result.thought:
        show(f"thought: {result.thought}")
    return 0


def cmd_signals(settings: Settings, args: argparse.Namespace) -> int:
    """List raised and held-back signals, newest first, with their evidence and reasons."""
    from dataclasses import asdict

    from twin.signals import list_signals

    status = {"raised": "raised", "held": "held_back"}.get(args.status)
    with Store(settings.db_path) as store:
        signals = list_signals(store, settings.being, status=status, limit=args.limit)
        evidence = store.get_many({i for s in signals for i in s.evidence})
    if args.json:
        _print_json([asdict(s) for s in signals])
        return 0
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
    return 0


def cmd_telegram(settings: Settings, args: argparse.Namespace) -> int:
    """`pair`: print a one-time code; the first Telegram user to send `/start CODE` to the bot within 10 minutes
    becomes an owner. `owners`: list the owners."""
    import secrets
    from datetime import UTC, datetime, timedelta

    from connectors.telegram import CONNECTOR, PAIR_CODE_TTL_S, pair_code_hash
    from twin.memory import format_time

    with Store(settings.db_path) as store:
        if args.action == "owners":
            from twin.chat import paired_owners

            paired = paired_owners(store, CONNECTOR, settings.being)
            for user_id in sorted(paired | set(settings.telegram_allowed_users)):
                show(f"{user_id} ({'paired' if user_id in paired else 'TWIN_TELEGRAM_ALLOWED_USERS'})")
            return 0
        code = secrets.token_hex(4)
        expires = format_time(datetime.now(UTC) + timedelta(seconds=PAIR_CODE_TTL_S))
        store.set_cursor(CONNECTOR, settings.being, "pair_code",
                         json.dumps({"sha256": pair_code_hash(code), "expires_at": expires}))
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
    from connectors.gmail import GmailAuthError, authorize

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
        store.delete_cursor("gmail", settings.being, "auth_error")
        Activity(store, settings.being).record("read_email", "Gmail connected (read-only).")
    show("Gmail is connected. A running twin picks the token up within seconds; `twin status` shows the sync.")
    return 0


def cmd_sync(settings: Settings, args: argparse.Namespace) -> int:
    """Import browser history now, whatever the 24-hour pace (seed 001): visits since the last import of each
    profile are clustered into interests and learned (with the model when one is configured)."""
    from connectors.browser import BrowserBusy, import_now

    try:
        report = import_now(settings)
    except BrowserBusy as exc:
        show(f"twin: {exc}", file=sys.stderr)
        return 1
    if args.json:
        _print_json(report)
        return 0
    show(report["line"])
    for text in report["interests"]:
        show(f"  {text}")
    for problem in report["problems"]:
        show(f"  skipped: {problem}", file=sys.stderr)
    return 0


def cmd_dream(settings: Settings, args: argparse.Namespace) -> int:
    """Run seed 003's dream cycle now: merge near-duplicate memories (cosine >= 0.97 and word overlap >= 0.5),
    then link memories that share 3 graph neighbours. Runs here, whether or not the daemon runs: the vectors come
    from SQLite and top-k from the index reader recall uses (the last checkpoint plus an exact search of newer
    vectors), and every write is to SQLite; a running daemon's index writer is then asked to scrub the merged
    memories' vectors, as after `twin forget`."""
    from twin.embedder import model_id_of
    from twin.index import VectorIndex
    from twin.lifecycle import VectorLookup, dream
    from twin.vectors import IndexReader

    with Store(settings.db_path) as store:
        model_id = model_id_of(settings)
        dim = store.embedding_dim(model_id) if model_id else None
        lookup = None
        if model_id and dim:
            reader = IndexReader(store, VectorIndex.for_settings(settings, model_id, dim))
            reader.open()
            lookup = VectorLookup(store, reader.search, model_id)
        result = dream(store, settings.being, lookup)
    bus = _bus(settings)
    if bus is not None and result["merged"]:
        bus.request_checkpoint()
    if args.json:
        _print_json(result)
    else:
        show(f"walked {result['walked']} memories, merged {result['merged']}, promoted {result['edgesPromoted']} "
              f"edges in {result['durationMs']} ms" + ("" if lookup else " (no vectors: nothing to merge)"))
    return 0


def cmd_stats(settings: Settings, args: argparse.Namespace) -> int:
    """Memory counts by kind and tier (warm/cold), superseded ones, graph edges, last decay and dream (seed 003)."""
    from twin.lifecycle import stats

    with Store(settings.db_path) as store:
        report = stats(store, settings.being)
    if args.json:
        _print_json(report)
        return 0
    for kind, tiers in report["by_kind"].items():
        show(f"{kind:<13} {tiers['warm']:>7} warm {tiers['cold']:>7} cold")
    show(f"{'total':<13} {report['total_warm']:>7} warm {report['total_cold']:>7} cold; "
          f"{report['superseded']} superseded")
    show(f"edges: {report['edges']['co_occurs']} co_occurs, {report['edges']['co_inferred']} co_inferred")
    show(f"last decay: {report['last_decay'] or 'never'}; last dream: {report['last_dream'] or 'never'}")
    return 0


def cmd_neighbors(settings: Settings, args: argparse.Namespace) -> int:
    """Memories linked to memory ID through the graph (seed 003), up to --depth edges away, scored by the product
    of edge strengths along the best path; superseded and sensitive ones hidden (--sensitive shows the latter).
    When the graph cannot be read the answer is empty and says "degraded" on stderr (seed 003)."""
    from twin.lifecycle import neighbors

    with Store(settings.db_path) as store:
        if store.get(args.id) is None:
            show(f"no memory #{args.id}", file=sys.stderr)
            return 1
        try:
            found = neighbors(store, args.id, depth=args.depth, include_sensitive=args.sensitive)
        except sqlite3.Error as exc:  # seed 003: a failed relations query is "degraded", the set empty
            show(f"degraded: the graph could not be read ({exc}); no neighbours shown", file=sys.stderr)
            found = []
    if args.json:
        _print_json([{**m.to_dict(), "score": round(score, 4)} for m, score in found])
        return 0
    for m, score in found:
        show(f"#{m.id:<6} {score:.3f}  {m.kind:<12} {m.content}  [{m.source}]")
    if not found:
        show("no neighbours")
    return 0


# -- parser -----------------------------------------------------------------------------------
def _whole(value: str) -> int:
    try:
        number = int(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from exc
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value!r}")
    return number


def _positive(value: str) -> int:
    """A count or limit: a whole number ≥ 1, capped at SQLite's largest integer."""
    return min(_whole(value), 2**63 - 1)


def _memory_id(value: str) -> int:
    number = _whole(value)
    if number > 2**63 - 1:
        raise argparse.ArgumentTypeError(f"no memory has id {value}")
    return number


def _port(value: str) -> int:
    number = _whole(value)
    if number > 65535:
        raise argparse.ArgumentTypeError(f"not a port (1-65535): {value!r}")
    return number


def _folder(value: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a folder: {value!r}")
    return path.resolve()


def _time(value: str) -> str:
    from twin.memory import format_time

    try:
        format_time(parse_time(value))
    except (ValueError, OverflowError) as exc:
        raise argparse.ArgumentTypeError(f"not an ISO-8601 time: {value!r}") from exc
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argparse tree of every `twin` command."""
    parser = argparse.ArgumentParser(prog="twin", description="A personal memory daemon.")
    parser.add_argument("--version", action="version", version=f"twin {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, func, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=func.__doc__)
        p.set_defaults(func=func)
        return p

    p = add("up", cmd_up, "run the daemon in the foreground")
    p.add_argument("--files", type=_folder, action="append", help="a folder to learn from (repeatable)")
    p = add("learn", cmd_learn, "learn from TEXT now")
    p.add_argument("text", help="what to learn, or - to read it from stdin")
    p.add_argument("--force", action="store_true",
                   help="store what the worthiness gate would reject (short, filler); still deduplicated")
    p.add_argument("--source", default="muse", help="where it came from (default muse); control characters are "
                   "stored escaped")
    p.add_argument("--json", action="store_true")
    p = add("recall", cmd_recall, "recall memories by meaning")
    p.add_argument("query")
    p.add_argument("--limit", type=_positive, default=10, help="at most this many (1-200)")
    p.add_argument("--kind", choices=KINDS)
    p.add_argument("--since", type=_time)
    p.add_argument("--as-of", dest="as_of", type=_time, help="replay recall at this UTC time")
    p.add_argument("--sensitive", action="store_true", help="include sensitive memories (secrets)")
    p.add_argument("--json", action="store_true")
    for name, help_ in (("memories", "list memories, newest first"),
                        ("recent", "memories made since --since, newest first"),
                        ("today", "memories made today (your time zone), newest first")):
        p = add(name, cmd_memories, help_)
        p.add_argument("--kind", choices=KINDS)
        p.add_argument("--limit", type=_positive, default=50)
        p.add_argument("--all", action="store_true", help="include superseded memories")
        p.add_argument("--sensitive", action="store_true", help="include sensitive memories (secrets)")
        p.add_argument("--json", action="store_true")
        if name == "recent":
            p.add_argument("--since", type=_time, help="UTC ISO-8601 lower bound of created_at")
    p = add("forget", cmd_forget, "forget memories by id, a whole source, or everything about something")
    p.add_argument("ids", type=_memory_id, nargs="*", help="memory ids (forgotten at once)")
    p.add_argument("--source", help="every memory of this source: file:/path, email:<thread>, telegram:<chat>, "
                   "browser; end it with * for every source that starts so ('file:/home/me/notes/*')")
    p.add_argument("--about", help="every memory that mentions this person or thing, and the chat rows that do; "
                   "a name's parts count alone too ('Ana', 'Dr. Souza' for 'Ana Souza'), listed apart")
    p.add_argument("--whole", action="store_true", help="with --about: only what names it whole")
    p.add_argument("--dry-run", "-n", action="store_true", help="list what would go, per table; change nothing")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask (needed with --source/--about off a terminal)")
    p.add_argument("--sensitive", action="store_true", help="show the text of sensitive memories in the list")
    p.add_argument("--json", dest="json_plan", action="store_true", help="the dry run's list as JSON")
    p = add("activity", cmd_activity, "the activity diary")
    p.add_argument("-n", type=_positive, default=60)
    p.add_argument("--follow", "-f", action="store_true")
    p.add_argument("--json", action="store_true")
    p = add("status", cmd_status, "counts, queues, index and degraded modes")
    p.add_argument("--json", action="store_true")
    p = add("doctor", cmd_doctor, "self-check that the memory loop is closed")
    p.add_argument("--repair", action="store_true", help="rebuild the full-text index first")
    p.add_argument("--json", action="store_true")
    p = add("backfill", cmd_backfill, "embed every memory that lacks a vector of the current model (resumable)")
    p.add_argument("--batch", type=_positive, default=200, help="memories per embedding call and checkpoint")
    p = add("export", cmd_export, "write all memories as JSON lines")
    p.add_argument("--output", "-o", type=argparse.FileType("w", encoding="utf-8"), default="-",
                   help="file to write (created 0600); default stdout")
    p = add("profile", cmd_profile, "show the profile, or edit it by hand")
    p.add_argument("action", nargs="?", choices=("show", "edit"), default="show")
    p.add_argument("--file", type=argparse.FileType("rb"), help="with edit: read the new profile "
                   "(TOML, as `twin profile` prints it) from this file instead of opening an editor")
    p.add_argument("--json", action="store_true")
    p = add("reflect", cmd_reflect, "reflect now and print what it raised")
    p.add_argument("--json", action="store_true")
    p = add("signals", cmd_signals, "raised and held-back signals with their evidence")
    p.add_argument("--status", choices=("raised", "held"), help="only these")
    p.add_argument("--limit", type=_positive, default=20)
    p.add_argument("--json", action="store_true")
    p = add("dream", cmd_dream, "run the dream cycle now: merge near-duplicates, link related memories")
    p.add_argument("--json", action="store_true")
    p = add("stats", cmd_stats, "memory counts by kind and tier, graph edges, last decay and dream")
    p.add_argument("--json", action="store_true")
    p = add("neighbors", cmd_neighbors, "memories linked to memory ID in the graph")
    p.add_argument("id", type=_memory_id)
    p.add_argument("--depth", type=int, choices=(1, 2, 3), default=1, help="edges away, 1-3 (default 1)")
    p.add_argument("--sensitive", action="store_true", help="include sensitive memories")
    p.add_argument("--json", action="store_true")
    p = add("telegram", cmd_telegram, "pair your Telegram account with the bot, or list its owners")
    p.add_argument("action", choices=("pair", "owners"))
    p = add("connect", cmd_connect, "connect a source that needs signing in (gmail)")
    p.add_argument("source", choices=("gmail",))
    p.add_argument("--port", type=_port, default=8765, help="local port Google redirects to (default 8765)")
    p.add_argument("--no-browser", action="store_true", help="only print the URL (a headless machine)")
    p.add_argument("--timeout", type=_positive, default=300, help="seconds to wait for the sign-in")
    p = add("sync", cmd_sync, "import browser history now instead of at the daily pace")
    p.add_argument("source", choices=("browser",))
    p.add_argument("--json", action="store_true")
    p = add("email", cmd_email, "email threads that wait for your reply, oldest first")
    p.add_argument("action", choices=("waiting",))
    p.add_argument("--json", action="store_true")
    p = add("import", cmd_import, "read memories from JSON lines (exit 1 when a bad line was skipped; the rest is "
                                  "imported)")
    p.add_argument("input", type=argparse.FileType("rb"), help="a JSON-lines file, or - for stdin")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of `twin`. Exit codes: 0 ok, 1 a command failed, 2 bad usage or an invalid setting.

    Files twin creates (exports included) are private: the umask is 077, and twin's own dirs are made 0700 before
    any command runs; what stays open, and an unknown `TWIN_…` variable, is said once on stderr
    (`twin.startup_checks`, invariant 8)."""
    os.umask(0o077)
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
    except SettingsError as exc:
        show(f"twin: {exc}", file=sys.stderr)
        return 2
    for line in startup_warnings(settings):
        show(f"twin: warning: {line}", file=sys.stderr)
    try:
        return args.func(settings, args)
    except TwinError as exc:
        show(f"twin: {exc}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:  # e.g. "database or disk is full": one line, not a traceback
        show(f"twin: the store at {settings.db_path} failed: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
