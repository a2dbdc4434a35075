"""The `twin` command line (argparse): the parser of every command and `main`."""

from __future__ import annotations

import argparse
import importlib
import os
import sqlite3
import sys

from twin import __version__
from twin.cli.arguments import (
    folder,
    limit,
    memory_id,
    namespace_name,
    port,
    positive,
    private_output,
    share,
    time_point,
)
from twin.cli.output import show
from twin.exceptions import SettingsError, TwinError
from twin.memory import KINDS
from twin.namespaces import DEFAULT_NAMESPACE, INCLUDE_MAX, NamespaceError
from twin.settings import load_settings
from twin.startup_checks import startup_warnings

JSON_HELP = "print the result as JSON (one line, for scripts) instead of lines for people"
"""The help of `--json` where a command says nothing more particular."""


class Command:
    """A command's function, `twin.cli.<module>.<name>`, imported when it runs or its help is shown: `twin
    recall` through the daemon loads what recall needs, not what every command needs (the store, numpy, the
    connectors: 0.37 s of imports before, measured by bench/cli_via_daemon.py)."""

    def __init__(self, module: str, name: str):
        self.module, self.name = f"twin.cli.{module}", name

    def function(self):
        """The command's function `(settings, args) -> exit code`, imported now."""
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, settings, args: argparse.Namespace) -> int:
        return self.function()(settings, args)


class CommandParser(argparse.ArgumentParser):
    """An argparse parser whose description is its `command`'s docstring, read when the help is printed."""

    command: Command | None = None

    def format_help(self) -> str:
        if self.command is not None and self.description is None:
            self.description = self.command.function().__doc__
        return super().format_help()


def add_command(sub, name: str, func: Command, help_: str, json_help: str | None = None) -> argparse.ArgumentParser:
    """Add the command `name` to the subparsers `sub`: `func(settings, args) -> exit code` runs it, its docstring
    is the command's description. With `json_help`, the command takes `--json` (`args.json`; the command prints
    through `twin.cli.output.emit`): the one place a command gets it."""
    p = sub.add_parser(name, help=help_)
    p.command = func
    p.set_defaults(func=func)
    if json_help is not None:
        p.add_argument("--json", action="store_true", help=json_help)
    return p


def add_namespace(p: argparse.ArgumentParser, reads: bool = False, help_: str | None = None) -> None:
    """`--namespace NAME` (`args.namespace`, default `default`) on a command that reads or writes memories, and for
    a read `--include-namespace NAME` (repeatable, `args.include_namespaces`: seed 003's union, at most 16)."""
    p.add_argument("--namespace", type=namespace_name, default=DEFAULT_NAMESPACE,
                   help=help_ or f"the namespace (default {DEFAULT_NAMESPACE})")
    if reads:
        p.add_argument("--include-namespace", dest="include_namespaces", type=namespace_name, action="append",
                       help=f"look in this namespace too (repeatable, at most {INCLUDE_MAX})")


def build_parser() -> argparse.ArgumentParser:
    """The argparse tree of every `twin` command."""
    parser = CommandParser(prog="twin", description="A personal memory daemon.")
    parser.add_argument("--version", action="version", version=f"twin {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, where: str, help_: str, json_help: str | None = None) -> argparse.ArgumentParser:
        """Command `name` run by `twin.cli.<where>`'s `cmd_<name>` (`where` "module:function" names another)."""
        module, _, function = where.partition(":")
        return add_command(sub, name, Command(module, function or f"cmd_{name}"), help_, json_help)

    p = add("up", "run", "run the daemon in the foreground")
    p.add_argument("--files", type=folder, action="append", help="a folder to learn from (repeatable)")
    p = add("learn", "memories", "learn from TEXT now (through the running daemon when it answers)",
            json_help=JSON_HELP)
    p.add_argument("text", help="what to learn, or - to read it from stdin")
    p.add_argument("--force", action="store_true",
                   help="store what the worthiness gate would reject (short, filler); still deduplicated")
    p.add_argument("--source", default="muse", help="where it came from (default muse); control characters are "
                   "stored escaped")
    p.add_argument("--sensitive", action="store_true", help="print secret values of sensitive memories learned")
    add_namespace(p, help_="the namespace to learn into (default default)")
    p = add("recall", "memories", "recall memories by meaning", json_help=JSON_HELP)
    add_namespace(p, reads=True)
    p.add_argument("query")
    p.add_argument("--limit", type=limit, default=10, help="at most this many (1-200)")
    p.add_argument("--kind", choices=KINDS)
    p.add_argument("--since", type=time_point)
    p.add_argument("--as-of", dest="as_of", type=time_point, help="replay recall at this UTC time")
    p.add_argument("--sensitive", action="store_true", help="include sensitive memories (secrets)")
    p.add_argument("--min-relevance", dest="min_relevance", type=share, default=None,
                   help="drop results the query found less well than this (0..1; none left: nothing printed)")
    p.add_argument("--why", action="store_true",
                   help="say under each result what moved it (a time window, a newer value, a supersession)")
    for name, help_ in (("memories", "list memories, newest first"),
                        ("recent", "memories made since --since, newest first"),
                        ("today", "memories made today (your time zone), newest first")):
        p = add(name, "memories:cmd_memories", help_, json_help=JSON_HELP)
        p.add_argument("--kind", choices=KINDS)
        p.add_argument("--limit", type=limit, default=50, help="at most this many (1-200)")
        p.add_argument("--all", action="store_true", help="include superseded memories")
        p.add_argument("--sensitive", action="store_true", help="include sensitive memories (secrets)")
        add_namespace(p, reads=True)
        if name == "recent":
            p.add_argument("--since", type=time_point, help="UTC ISO-8601 lower bound of created_at")
    p = add("forget", "forget", "forget memories by id, a whole source, or everything about something",
            json_help="as JSON: the plan (a dry run) unless --yes or ids are given, then what was forgotten")
    p.add_argument("ids", type=memory_id, nargs="*", help="memory ids (forgotten at once, through the running "
                   "daemon when it answers; --source, --about, --dry-run and --all-namespaces open the store here)")
    p.add_argument("--source", help="every memory of this source: file:/path, email:<thread>, telegram:<chat>, "
                   "browser; end it with * for every source that starts so ('file:/home/me/notes/*'), with \\* "
                   "for a name that ends in * itself ('file:/home/me/plan\\*')")
    p.add_argument("--about", help="every memory that mentions this person or thing, and the chat rows that do; "
                   "a name's parts count alone too ('Ana', 'Dr. Souza' for 'Ana Souza'), listed apart")
    p.add_argument("--whole", action="store_true", help="with --about: only what names it whole")
    p.add_argument("--dry-run", "-n", action="store_true", help="list what would go, per table; change nothing")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask (needed with --source/--about off a terminal)")
    p.add_argument("--sensitive", action="store_true", help="show the text of sensitive memories in the list")
    add_namespace(p, help_="forget only in this namespace (default default)")
    p.add_argument("--all-namespaces", action="store_true", help="forget in every namespace")
    p = add("activity", "status", "the activity diary", json_help=JSON_HELP)
    p.add_argument("-n", type=limit, default=60, help="the newest this many lines (1-200)")
    p.add_argument("--follow", "-f", action="store_true")
    p = add("status", "status", "counts, queues, index and degraded modes", json_help=JSON_HELP)
    p = add("doctor", "status", "self-check that the memory loop is closed", json_help=JSON_HELP)
    p.add_argument("--repair", action="store_true", help="rebuild the full-text index first")
    p = add("backfill", "run", "embed every memory that lacks a vector of the current model (resumable)")
    p.add_argument("--batch", type=positive, default=200, help="memories per embedding call and checkpoint")
    p = add("export", "transfer", "write the whole twin as JSON lines: people, projects, every memory")
    p.add_argument("--output", "-o", type=private_output, default="-",
                   help="file to write (created 0600); default stdout")
    p.add_argument("--namespace", type=namespace_name, help="only this namespace (default: every one)")
    p = add("profile", "transfer", "show the profile, or edit it by hand", json_help=JSON_HELP)
    p.add_argument("action", nargs="?", choices=("show", "edit"), default="show")
    p.add_argument("--file", type=argparse.FileType("rb"), help="with edit: read the new profile "
                   "(TOML, as `twin profile` prints it) from this file instead of opening an editor")
    p = add("reflect", "run", "reflect now and print what it raised", json_help=JSON_HELP)
    p = add("signals", "status", "raised and held-back signals with their evidence", json_help=JSON_HELP)
    p.add_argument("--status", choices=("raised", "held"), help="only these")
    p.add_argument("--limit", type=limit, default=20, help="at most this many (1-200)")
    p = add("dream", "run", "run the dream cycle now: merge near-duplicates, link related memories",
            json_help=JSON_HELP)
    p.add_argument("--namespace", type=namespace_name, help="only this namespace (default: every one)")
    p = add("stats", "memories", "memory counts by kind and tier, graph edges, last decay and dream",
            json_help=JSON_HELP)
    p = add("neighbors", "memories", "memories linked to memory ID in the graph", json_help=JSON_HELP)
    p.add_argument("id", type=memory_id)
    p.add_argument("--depth", type=int, choices=(1, 2, 3), default=1, help="edges away, 1-3 (default 1)")
    p.add_argument("--sensitive", action="store_true", help="include sensitive memories")
    p = add("telegram", "sources", "pair your Telegram account with the bot, or list its owners",
            json_help="with owners: the owners as JSON")
    p.add_argument("action", choices=("pair", "owners"))
    p = add("connect", "sources", "connect a source that needs signing in (gmail)")
    p.add_argument("source", choices=("gmail",))
    p.add_argument("--port", type=port, default=8765, help="local port Google redirects to (default 8765)")
    p.add_argument("--no-browser", action="store_true", help="only print the URL (a headless machine)")
    p.add_argument("--timeout", type=positive, default=300, help="seconds to wait for the sign-in")
    p = add("sync", "sources", "import browser history now instead of at the daily pace", json_help=JSON_HELP)
    p.add_argument("source", choices=("browser",))
    p = add("email", "status", "email threads that wait for your reply, oldest first", json_help=JSON_HELP)
    p.add_argument("action", choices=("waiting",))
    add("mcp", "run", "serve MCP over stdin/stdout for a desktop agent host (Claude Desktop, Claude Code, …)")
    p = add("open", "status", "print (and with a desktop, open) a one-time link to the page at /twin")
    p.add_argument("--no-browser", action="store_true", help="only print the link")
    p.add_argument("--end-sessions", action="store_true", help="end every page session instead (no link)")
    p = add("token", "status", "print the HTTP API's bearer token (made if there is none)")
    p.add_argument("--rotate", action="store_true", help="replace it with a new one (the old one stops working) and "
                   "end every page session")
    p = add("people", "people", "the people who may use the API and MCP besides you, each with a token of their "
            "own", json_help=JSON_HELP)
    p.add_argument("action", choices=("add", "list", "remove", "pair", "token"))
    p.add_argument("name", nargs="?", help="the person's name (add, remove, pair: a code for their Telegram, token: "
                   "a new token, the old one refused from then on)")
    p.add_argument("--token-file", help="with add and token: write the new token to this new file (0600) instead of "
                   "printing it")
    p = add("project", "people", "your projects: memories shared with the people you choose", json_help=JSON_HELP)
    p.add_argument("action", choices=("list", "show", "create", "delete", "share", "unshare", "activate",
                                      "deactivate", "bind", "unbind"))
    p.add_argument("target", nargs="?", help="a NAME (create) or a PROJECT's id or name")
    p.add_argument("person", nargs="?", help="with share and unshare: the person's name")
    bound = p.add_mutually_exclusive_group()
    bound.add_argument("--files", metavar="PATH", help="with bind and unbind: a folder whose files are learned into "
                       "the project (it and everything under it; the files learned before move in, and out again "
                       "with unbind)")
    bound.add_argument("--telegram-chat", metavar="ID", help="with bind and unbind: a Telegram chat id (a group's "
                       "is negative) whose messages are learned into the project")
    bound.add_argument("--gmail-label", metavar="LABEL", help="with bind and unbind: a Gmail label, by its name "
                       "as Gmail shows it (School, 'Household/Bills'; any case) or its id (Label_12), whose threads "
                       "are learned into the project")
    p = add("import", "transfer", "read a twin export or memories from JSON lines (exit 1 when a bad line was "
                                  "skipped; the rest is imported)")
    p.add_argument("input", type=argparse.FileType("rb"), help="a JSON-lines file, or - for stdin")
    add_namespace(p, help_="the namespace of lines that name none (default default)")
    p.add_argument("--capture", action="store_true", help="capture each fact at its own created_at, oldest first, "
                   "as live learning would (dedup, update, supersede): a twin export, dated facts, mem0 or ChatGPT "
                   "memories")
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
    except (NamespaceError, SettingsError) as exc:  # bad usage (too many --include-namespace); Redis refused the login
        show(f"twin: {exc}", file=sys.stderr)
        return 2
    except TwinError as exc:
        show(f"twin: {exc}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:  # e.g. "database or disk is full": one line, not a traceback
        show(f"twin: the store at {settings.db_path} failed: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
