"""A person's Telegram chat with the twin (issue 19): the commands a person the owner added may send the bot once
their account is paired (`twin people pair NAME`, then `/start CODE`: `twin.operations.people.claim_telegram`).

Every command runs as that person's `Caller` (`CALLER` set for the call, reset after) through the operations every
interface calls (`twin.operations.reads`, `.writes`, `.projects`), so `twin.operations.scopes.reach` decides what
it reads and where it writes, exactly as for their API token or MCP: their own memories and the projects they are a
member of, never the owner's user-global memories (seed 003). Sensitive memories are never shown in a chat (the
reads' default `private`). A person's messages are not kept in the owner's chat transcript and never taught to the
owner's twin: only `/remember` writes, into the person's reach. Refusals (`InvalidInput`, `NotFound`, `Forbidden`)
are answered with their message; nothing is written then.

The owner's own chat asks it for the owner's reach (`owner_reach`: their active project, seed 003's "server-side
per-user state", so the owner's Telegram sees the project their CLI, API or MCP activated) and answers the owner's
`/project` with it (`owner_project`), by the same `twin.operations.scopes.reach` and `twin.operations.projects`.

The Telegram connector sits below the operations (the layers of ARCHITECTURE.md), so it is handed this module's
`TelegramPeople` by the interface that starts the daemon (`twin up`: `twin.cli.run`), not importing it.
"""

from __future__ import annotations

from twin.activity import Activity
from twin.exceptions import Forbidden, InvalidInput, NotFound
from twin.memory import KINDS
from twin.namespaces import DEFAULT_NAMESPACE
from twin.operations import people, projects, reads, writes
from twin.operations.context import Context
from twin.operations.scopes import CALLER, OWNER, Caller, reach
from twin.settings import Settings
from twin.store import Store

MEMBER_HELP = """I'm {owner}'s twin; you are {name} here. I keep your own memories and the projects shared with you.
/remember TEXT – remember this (in your active project, if one is)
/recall QUERY – what I remember about it
/memories [kind] – the newest memories
/forget ID … – forget memories by id
/projects – the projects shared with you
/project NAME – make a project active (/project off: none)
/help – this"""
SHOWN = 10
"""How many memories a reply lists (as the owner's chat: `twin.connectors.telegram`)."""


class TelegramPeople:
    """The Telegram side of the people the owner added, for the connector (`twin.connectors.telegram`): `pair`
    claims a pairing code, `reply` answers a paired person's message; `owner_reach` and `owner_project` are the
    owner's active project in the owner's own chat. All run on the connector's store thread with its store
    connection, diary, recall and bus; none keeps state between calls."""

    def __init__(self, settings: Settings):
        self.settings = settings

    def _context(self, store: Store, activity: Activity, recall, bus) -> Context:
        return Context(self.settings, store, activity, bus=lambda: bus, _recall=recall)

    def pair(self, store: Store, activity: Activity, user_id: int, code: str) -> str | None:
        """Pair Telegram user `user_id` with the person whose live code is `code`: their name, or None (no live
        code: the sender stays a stranger). `people.claim_telegram` uses the code up."""
        who = people.claim_telegram(self._context(store, activity, None, None), user_id, code)
        return who.name if who else None

    def is_person(self, store: Store, user_id: int) -> bool:
        """True when `user_id` is a live person's paired account (read-only)."""
        return people.telegram_caller(store, user_id) is not None

    def reply(self, store: Store, activity: Activity, recall, bus, user_id: int, chat_id: int,
              text: str) -> str | None:
        """The answer to `text` from Telegram user `user_id` in chat `chat_id`, run as the person paired with that
        account; None when no live person is (removed, or never paired: the connector ignores them). Read at each
        message, so a removed person gets nothing from the moment the removal committed."""
        who = people.telegram_caller(store, user_id)
        if who is None:
            return None
        token = CALLER.set(who)
        try:
            return self._command(self._context(store, activity, recall, bus), who, chat_id, text.strip())
        except (InvalidInput, NotFound, Forbidden) as exc:
            return f"I can't: {exc}"
        finally:
            CALLER.reset(token)

    def owner_reach(self, store: Store) -> tuple[tuple[str, ...], str | None, str | None]:
        """The owner's reach now (`scopes.reach` as `OWNER`): `(reads, write, refusal)`, the stored namespaces a
        read of the owner's chat looks in (user-global `default`, then the active project's `project:<id>`), the
        one `/remember` writes to (the active project, else `default`), and None; or, when the owner's active
        project is one another person owns and has since unshared (`reach`'s `Forbidden`), `(("default",), None,
        why)`: the chat answers from the owner's own memories and `/remember` and `/recall` say why instead of
        writing where the owner did not mean. Read-only; read at each message, so an activation on any device
        holds at once."""
        token = CALLER.set(OWNER)
        try:
            found = reach(store)
        except Forbidden as exc:
            return (DEFAULT_NAMESPACE,), None, str(exc)
        finally:
            CALLER.reset(token)
        return found.reads, found.write, None

    def owner_project(self, store: Store, activity: Activity, rest: str) -> str:
        """The answer to the owner's `/project [NAME|off]`: the owner's projects (no `rest`), or the project
        `rest` names made active, or none (`off`) through `twin.operations.projects` as `OWNER` (what `twin project
        activate` does). A refusal (`NotFound`, `Forbidden`, `InvalidInput`) is answered with its message."""
        token = CALLER.set(OWNER)
        try:
            return self._project(self._context(store, activity, None, None), OWNER, 0, rest.strip())
        except (InvalidInput, NotFound, Forbidden) as exc:
            return f"I can't: {exc}"
        finally:
            CALLER.reset(token)

    def _command(self, ctx: Context, who: Caller, chat_id: int, text: str) -> str:
        name, _, rest = text.partition(" ")
        name, rest = name.split("@")[0].lower(), rest.strip()
        handlers = {"/start": self._help, "/help": self._help, "/remember": self._remember,
                    "/recall": self._recall, "/memories": self._memories, "/forget": self._forget,
                    "/projects": self._projects, "/project": self._project}
        if not name.startswith("/"):
            return "Send me a command:\n\n" + self._help(ctx, who, chat_id, "")
        handler = handlers.get(name)
        if handler is None:
            return f"I don't know {name}.\n\n" + self._help(ctx, who, chat_id, "")
        return handler(ctx, who, chat_id, rest)

    def _help(self, ctx: Context, who: Caller, chat_id: int, rest: str) -> str:
        return MEMBER_HELP.format(owner=ctx.being, name=who.name)

    def _where(self, ctx: Context) -> str:
        active = [p for p in projects.list_projects(ctx) if p.active]
        return f" in project {active[0].name}" if active else ""

    def _remember(self, ctx: Context, who: Caller, chat_id: int, rest: str) -> str:
        if not rest:
            return "What should I remember? /remember The boiler is serviced in May."
        done = writes.capture_memory(ctx, rest, source=f"telegram:{chat_id}", force=True, connector=True)
        if done.id is None:
            return "I found nothing to remember in that."
        return f"Remembered #{done.id}{self._where(ctx)}."

    def _recall(self, ctx: Context, who: Caller, chat_id: int, rest: str) -> str:
        if not rest:
            return "Recall what? /recall boiler"
        hits = reads.search(ctx, rest, limit=SHOWN).results
        if not hits:
            return f"I remember nothing about “{rest}”."
        return "\n".join(f"#{h.id} {h.content}" for h in hits)

    def _memories(self, ctx: Context, who: Caller, chat_id: int, rest: str) -> str:
        kind = rest.lower() or None
        if kind is not None and kind not in KINDS:
            return f"Kinds are: {', '.join(KINDS)}."
        shown = reads.list_memories(ctx, limit=SHOWN, kind=kind)
        return "\n".join(f"#{m.id} {m.kind}: {m.content}" for m in shown) or "No memories yet."

    def _forget(self, ctx: Context, who: Caller, chat_id: int, rest: str) -> str:
        try:
            ids = [int(part.lstrip("#")) for part in rest.replace(",", " ").split()]
        except ValueError:
            ids = []
        if not ids:
            return "Forget which? /forget 12 40"
        gone, missing = [], []
        for memory_id in ids:
            try:
                writes.forget_memory(ctx, memory_id)
                gone.append(memory_id)
            except NotFound:
                missing.append(memory_id)
        answer = f"Forgot {', '.join(f'#{i}' for i in gone)}." if gone else "Nothing was forgotten."
        return answer + (f" No memory {', '.join(f'#{i}' for i in missing)} here." if missing else "")

    def _projects(self, ctx: Context, who: Caller, chat_id: int, rest: str) -> str:
        shown = projects.list_projects(ctx)
        if not shown:
            return ("No project yet: twin project create NAME makes one." if who.is_owner
                    else "No project is shared with you yet.")
        return "\n".join(f"{p.name} ({p.role}{', active' if p.active else ''}; members: {', '.join(p.members)})"
                         for p in shown)

    def _project(self, ctx: Context, who: Caller, chat_id: int, rest: str) -> str:
        if not rest:
            return self._projects(ctx, who, chat_id, rest)
        if rest.lower() in ("off", "none"):
            projects.deactivate_project(ctx)
            return "No project is active: /remember keeps your own memories, /recall looks in them alone."
        active = projects.activate_project(ctx, rest)
        return f"Project {active.name} is active: /remember and /forget work in it, /recall looks in it too."
