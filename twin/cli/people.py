"""`twin people …` (the people the owner adds, each with a token of their own) and `twin project …` (seed 003's
projects, as the owner: through the daemon's API when it answers, else here), calling the operations every
interface calls (`twin.operations.people`, `twin.operations.projects`)."""

from __future__ import annotations

import argparse
import os
import sys

from twin.cli.output import emit, show
from twin.settings import Settings


def open_token_file(path: str):
    """A new file at `path`, 0600 from its creation (as the owner's token file is), open for writing a token: made
    before the person is, so a path that cannot take it leaves no person behind with a token nobody has. Raises
    `FileExistsError` when something is there (a token is never written over another), `OSError` otherwise."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8")


def cmd_people(settings: Settings, args: argparse.Namespace) -> int:
    """The people who may use the twin's HTTP API and MCP besides you, each with a token of their own: `add NAME`
    makes one and shows its token once (or writes it, 0600, to `--token-file`; twin keeps only its digest); `list`;
    `remove NAME` refuses their token (and their Telegram account) at once and forgets their own memories and the
    projects they own, as `twin forget` does; `pair NAME` prints a one-time code the person sends to the bot as
    `/start CODE` within 10 minutes, after which the bot answers them as themselves; `token NAME` gives them a new
    token (shown once or written to `--token-file`) and refuses their old one: what a person `twin import` brought
    in needs. A person sees only projects shared with them and their own memories, never yours."""
    from twin.cli.queues import reachable_bus
    from twin.operations import Context, people

    ctx = Context.open(settings, bus=lambda: reachable_bus(settings))
    try:
        if args.action == "list":
            rows = [p.model_dump() for p in people.list_people(ctx)]
            return emit(args, rows, lambda: [show(f"{r['name']}  (added {r['added_at']}"
                                                         f"{'; Telegram paired' if r['telegram'] else ''})")
                                                    for r in rows] or show(
                "no people yet (twin people add NAME)"))
        if not args.name:
            show(f"twin: people {args.action} needs a NAME", file=sys.stderr)
            return 2
        if args.action in ("add", "token"):
            return _give_token(ctx, args)
        if args.action == "pair":
            paired = people.pair_telegram(ctx, args.name)
            return emit(args, paired.model_dump(), lambda: show(
                f"{paired.name} sends this to your bot on Telegram before {paired.expires_at}:\n\n"
                f"    /start {paired.code}\n\nThe account that sends it is {paired.name}'s: the bot answers it "
                f"with {paired.name}'s memories and projects only, never yours.", newlines=True))
        done = people.remove_person(ctx, args.name)
        return emit(args, done.model_dump(), lambda: show(
            f"removed {done.name}: their token is refused from now on; forgot {done.removed.get('memories', 0)} "
            f"memories and {len(done.projects_deleted)} projects of theirs"))
    finally:
        ctx.close()


def _give_token(ctx, args: argparse.Namespace) -> int:
    """`twin people add NAME` (a new person) or `twin people token NAME` (a new token for a person, their old one
    refused: what a person imported from an export needs): the token is shown once, or written to the new file
    `--token-file` (0600) made before anything changes, so a path that cannot take it changes nothing. `ctx` is an
    open `twin.operations.Context`."""
    from twin.operations import people

    adding = args.action == "add"
    try:
        out = open_token_file(args.token_file) if args.token_file else None
    except OSError as exc:
        why = "something is there (a token is never written over another)" if isinstance(
            exc, FileExistsError) else (exc.strerror or str(exc))
        show(f"twin: --token-file {args.token_file}: {why}; {'nobody was added' if adding else 'no token changed'}",
             file=sys.stderr)
        return 2
    try:
        given = (people.add_person if adding else people.issue_token)(ctx, args.name)
    except BaseException:
        if out is not None:
            out.close()
            os.unlink(args.token_file)
        raise
    done = (f"added {given.name}; their token" if adding
            else f"a new token for {given.name} (the old one no longer works)")
    if out is not None:
        with out:
            out.write(given.token + "\n")
        value = {**given.model_dump(), "token": None, "token_file": args.token_file}
        return emit(args, value, lambda: show(f"{done} is in {args.token_file} (0600), shown nowhere else"))
    return emit(args, given.model_dump(), lambda: (
        show(f"{done} (shown this once, give it to them):"), show(given.token)))


def _project_line(p: dict) -> str:
    flags = ", ".join(x for x in (p["role"], "active" if p["active"] else "") if x)
    bound = "".join(f"; {b['kind'].replace('_', ' ')} {b['value']}" for b in p.get("sources") or ())
    return f"{p['name']}  {p['id']}  ({flags}; members: {', '.join(p['members'])}{bound})"


def _moving(answer: dict, action: str) -> str:
    """What a bind or unbind answer adds to the project's line: how many files learned before move
    (`SourceBoundOut.files_moving`), or nothing."""
    n = answer.get("files_moving") or 0
    note = f"; note: {answer['warning']}" if answer.get("warning") else ""
    if not n:
        return note
    files = f"{n} file learned before is" if n == 1 else f"{n} files learned before are"
    where = "into it" if action == "bind" else "out of it, back where the other bindings put them"
    return f"; {files} moving {where} (learned again by the daemon){note}"


def bound_source(args: argparse.Namespace) -> tuple[str, str] | None:
    """The `(kind, value)` that `--files`, `--telegram-chat` or `--gmail-label` names (a folder made absolute
    against this shell's directory: the daemon's is another), or None when none does."""
    if args.files is not None:  # an empty value stays empty (refused as such), never "this directory"
        return "files", os.path.abspath(os.path.expanduser(args.files)) if args.files.strip() else args.files
    if args.telegram_chat is not None:
        return "telegram_chat", args.telegram_chat
    if args.gmail_label is not None:
        return "gmail_label", args.gmail_label
    return None


def cmd_project(settings: Settings, args: argparse.Namespace) -> int:
    """Your projects (seed 003's sub-brains: memories you share with the people you choose, who read and write
    them): `list`, `show PROJECT`, `create NAME`, `delete PROJECT` (every memory in it forgotten, no undo),
    `share PROJECT PERSON`, `unshare PROJECT PERSON`, `activate PROJECT` (memory commands, MCP and the API then
    read it with your own memories and write into it, on every device), `deactivate`, `bind PROJECT --files PATH
    | --telegram-chat ID | --gmail-label LABEL` (what arrives there from now on is learned into the project; the files
    a folder taught before move into it, and out again with `unbind`) and `unbind` the same. PROJECT is an id or a
    name."""
    from twin.cli.queues import reachable_bus
    from twin.remote import open_twin

    with open_twin(settings, bus=lambda: reachable_bus(settings)) as twin:
        action = args.action
        if action in ("list", "deactivate"):
            rows = twin.list_projects() if action == "list" else twin.deactivate_project()
            return emit(args, rows, lambda: [show(_project_line(p)) for p in rows] or show(
                "no projects yet (twin project create NAME)"))
        if not args.target:
            show(f"twin: project {action} needs a {'NAME' if action == 'create' else 'PROJECT'}", file=sys.stderr)
            return 2
        if action in ("bind", "unbind"):
            source = bound_source(args)
            if source is None:
                show(f"twin: project {action} needs --files PATH, --telegram-chat ID or --gmail-label LABEL",
                     file=sys.stderr)
                return 2
            op = twin.bind_source if action == "bind" else twin.unbind_source
            made = op(project=args.target, kind=source[0], value=source[1])
            return emit(args, made, lambda: show(_project_line(made) + _moving(made, action)))
        if action == "create":
            made = twin.create_project(name=args.target)
            return emit(args, made, lambda: show(_project_line(made)))
        if action == "delete":
            done = twin.delete_project(project=args.target)
            n = done["removed"]["memories"]
            return emit(args, done, lambda: show(f"deleted project {done['id']} and its {n} "
                                                 f"memor{'y' if n == 1 else 'ies'}"))
        if action in ("activate", "show"):
            made = (twin.activate_project if action == "activate" else twin.show_project)(project=args.target)
            return emit(args, made, lambda: show(_project_line(made)))
        if not args.person:
            show(f"twin: project {action} needs PROJECT and PERSON", file=sys.stderr)
            return 2
        op = twin.share_project if action == "share" else twin.unshare_project
        made = op(project=args.target, person=args.person)
        return emit(args, made, lambda: show(_project_line(made)))
