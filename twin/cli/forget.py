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
    is scrubbed at the daemon's next checkpoint. Ids in one namespace go through the running daemon's API when it
    answers (`_forget_ids`); `--source`, `--about`, `--dry-run` and `--all-namespaces` open the store here: the
    plan they show lists each memory, chat row, thread and file, and the API answers counts only."""
    by_ids = bool(args.ids)
    if by_ids == bool(args.source is not None or args.about is not None):
        print("twin: forget takes memory ids, or --source / --about (not both)", file=sys.stderr)
        return 2
    if by_ids and not (args.dry_run or args.all_namespaces):
        return _forget_ids(settings, args)
    from twin.lifecycle import forgetting
    from twin.operations import Context
    from twin.operations.writes import after_forget

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
    if args.json and by_ids:  # --all-namespaces: the shape `_forget_ids` prints
        shown = done.to_dict(reveal_sensitive=args.sensitive)
        missing = [mid for mid in dict.fromkeys(args.ids) if mid not in {m.id for m in done.memories}]
        print_json({"dry_run": False, "counts": shown["counts"], "memories": shown["memories"], "missing": missing})
        return 1 if missing else 0
    if args.json:
        print_json({"dry_run": False, **done.to_dict(reveal_sensitive=args.sensitive)})
        return 0
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


def _forget_ids(settings: Settings, args: argparse.Namespace) -> int:
    """`twin forget ID…` in one namespace: each memory through `forget_memory` (`twin.remote.open_twin`: the running
    daemon's API when it answers, else this process, which tells the daemon to scrub its index); the same output
    either way. `--json` prints `{dry_run: false, counts, memories, missing}`: the counts summed over the ids, the
    memories as they were (read before, `Memory.shown`: a sensitive one's text only with `--sensitive`), the ids
    that named no memory. Exit code 1 when an id named none."""
    from twin.exceptions import NotFound
    from twin.lifecycle.forgetting import counts_line
    from twin.remote import open_twin

    ids = list(dict.fromkeys(args.ids))
    counts: dict[str, int] = {}
    memories, gone = [], []
    with open_twin(settings, lambda: reachable_bus(settings)) as twin:
        for mid in ids:
            try:
                if args.json:
                    shown = twin.get_memory(memory_id=mid, namespace=args.namespace,
                                            max_sensitivity="sensitive" if args.sensitive else None)
                done = twin.forget_memory(memory_id=mid, namespace=args.namespace)
            except NotFound:
                continue
            gone.append(mid)
            memories += [shown] if args.json else []
            for table, n in done["removed"].items():
                counts[table] = counts.get(table, 0) + n
    missing = [mid for mid in ids if mid not in gone]
    if args.json:
        print_json({"dry_run": False, "counts": counts, "memories": memories, "missing": missing})
        return 1 if missing else 0
    for mid in args.ids:
        show(f"forgot #{mid}" if mid in gone else f"no memory #{mid}", file=None if mid in gone else sys.stderr)
    if gone:
        show(f"removed {counts_line(counts)}")
    return 1 if missing else 0


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
