"""`twin forget`: by id, a whole source or everything about someone, with its dry run and its question."""

from __future__ import annotations

import argparse
import sys

from twin.activity import Activity
from twin.cli.output import print_json, show
from twin.cli.queues import reachable_bus
from twin.settings import Settings
from twin.store import Store


def cmd_forget(settings: Settings, args: argparse.Namespace) -> int:
    """Forget memories for good: by id (at once, as always), a whole source (`--source file:/path`,
    `email:<thread>`, `telegram:<chat>`, `browser`; `'file:/folder/*'` for every source that starts so) or
    everything about a person or thing (`--about "Ana Souza"`: the whole name, and each part of it alone, "Ana"
    or "Dr. Souza", unless `--whole`; the dry run lists those apart). With their rows go their full-text entries,
    vectors and index entries, edges, the chat transcript rows and summaries that hold them, and a source's
    email thread rows and file manifest entries. `--dry-run` lists all of it per table and changes nothing;
    `--source` and `--about` ask first on a terminal and, like `git clean`, need `--yes` otherwise. The index
    is scrubbed at the daemon's next checkpoint."""
    from twin.lifecycle import forgetting
    from twin.operations import Context
    from twin.operations.writes import after_forget

    by_ids = bool(args.ids)
    if by_ids == bool(args.source is not None or args.about is not None):
        print("twin: forget takes memory ids, or --source / --about (not both)", file=sys.stderr)
        return 2
    with Store(settings.db_path) as store:
        try:
            todo = forgetting.plan(store, settings.being, ids=args.ids or None, source=args.source, about=args.about,
                                   whole=args.whole, namespaces=None if args.all_namespaces else (args.namespace,))
        except ValueError as exc:
            print(f"twin: {exc}", file=sys.stderr)
            return 2
        if args.dry_run or (args.json and not by_ids and not args.yes):  # JSON is never interactive: a plan
            _print_plan(todo, args, dry_run=True)
            return 0
        if not by_ids and not todo.empty and not args.yes and not _confirmed(todo, args):
            return 2 if not sys.stdin.isatty() else 1
        done = forgetting.carry_out(store, Activity(store, settings.being), todo)
        after_forget(Context(settings, store, Activity(store, settings.being), lambda: reachable_bus(settings)), done)
    if args.json:
        print_json({"dry_run": False, **done.to_dict(reveal_sensitive=args.sensitive)})
        return 1 if by_ids and set(args.ids) - {m.id for m in done.memories} else 0
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
    if args.json:
        print_json({"dry_run": dry_run, **todo.to_dict(reveal_sensitive=args.sensitive)})
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
