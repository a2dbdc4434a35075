"""Binding the twin owner's sources to a project (issue 19: "a files root, a Telegram chat or an email label can be
bound to a project, so what arrives there is learned into it"), for every interface (`twin project bind|unbind`,
`/v1/projects/{project}/sources`). The bindings live in `twin.store.project_sources`; the one rule that reads them
when a connector stages an item is `twin.ingest.bound_namespace`.

A binding applies to what arrives from then on: what a source taught before stays where it was learned until the
file or thread changes (then `twin.ingest.stage` forgets its older memories there: `moved_from`), and unbinding
leaves what the project learned in the project. The sources are the twin owner's (their folders, their
chats, their mailbox), so only the twin's owner binds and unbinds, and only into a project they are a member of.

Errors: `Forbidden` (403) for anyone but the twin's owner or a project out of their reach, `NotFound` (404) for a
project that does not resolve or a source not bound to it, `InvalidInput` (422, naming the field; 409 `conflict`
for a source bound to another project) for bad input.
"""

from __future__ import annotations

import os
import re
import sqlite3

from twin.exceptions import InvalidInput, NotFound
from twin.memory import utc_now
from twin.operations.context import Context
from twin.operations.projects import project_out
from twin.operations.scopes import caller, project_for, require_owner
from twin.operations.shapes import ProjectOut
from twin.outside_text import UNSAFE
from twin.store.project_sources import KINDS, LABEL_MAX_CHARS, SourceBinding, add_binding, remove_binding

CHAT_ID = re.compile(r"-?[0-9]{1,20}")
"""A Telegram chat id: an integer (a group's is negative, `-100…` for a supergroup; Bot API `Chat.id`)."""
PATH_MAX = 4096
"""The longest folder path accepted (Linux's PATH_MAX)."""


def checked_source(kind: object, value: object, exists: bool = True) -> tuple[str, str]:
    """`(kind, value)` as stored: `files` a folder given as an absolute path (normalised, `~` expanded; with
    `exists`, one that is there now); `telegram_chat` a chat id as decimal text; `gmail_label` a label's name as
    Gmail shows it (`School`, `Household/Bills`: '/', spaces and any script allowed) or its id (`Label_12`, `INBOX`),
    as given, at most `LABEL_MAX_CHARS` and without control characters (`twin.outside_text.UNSAFE`). Raises
    `InvalidInput` naming `kind` (not one of `KINDS`) or `value` (saying what it must be). Reads the file system
    (whether the folder exists)."""
    if kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}", field="kind")
    if isinstance(value, int) and not isinstance(value, bool) and kind == "telegram_chat":
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"value must be the {kind.replace('_', ' ')} to bind", field="value")
    value = value.strip()
    if kind == "telegram_chat":
        if CHAT_ID.fullmatch(value) is None:
            raise InvalidInput("a Telegram chat is its id: an integer such as -1001234567890", field="value")
        return kind, str(int(value))
    if kind == "gmail_label":
        if len(value) > LABEL_MAX_CHARS or UNSAFE.search(value):
            raise InvalidInput(f"a Gmail label is its name as Gmail shows it (School, Household/Bills) or its id "
                               f"(Label_12), at most {LABEL_MAX_CHARS} characters, no control characters",
                               field="value")
        return kind, value
    path = os.path.expanduser(value)
    if len(path) > PATH_MAX or "\x00" in path or not os.path.isabs(path):
        raise InvalidInput("a files source is a folder's absolute path", field="value")
    if exists and not os.path.isdir(path):
        raise InvalidInput(f"no folder at {path[:200]!r}", field="value")
    return kind, os.path.normpath(path)


def bind_source(ctx: Context, project: str, kind: str, value: str) -> ProjectOut:
    """Bind the twin owner's source `(kind, value)` (`checked_source`) to `project` (an id or a name): what
    arrives there from now on is learned into the project. Binding it again to the same project changes nothing
    (a Gmail label named in another case is the same label: `project_sources.label_key`).
    Raises `Forbidden` (not the twin's owner; no member), `NotFound` (no such project), `InvalidInput` (bad input;
    code `conflict` when the source is bound to another project: unbind it there first)."""
    require_owner("binding a source to a project")
    kind, value = checked_source(kind, value)
    found = project_for(ctx.store, caller(), project)
    try:
        added = add_binding(ctx.store, SourceBinding(kind, value, found.id, utc_now()))
    except sqlite3.IntegrityError as exc:
        raise InvalidInput(f"that {kind.replace('_', ' ')} is bound to another project; unbind it there first",
                           field="value", code="conflict") from exc
    if added:
        ctx.activity.record("system", f"Bound a {kind.replace('_', ' ')} source to project {found.id}.")
    return project_out(ctx, found, caller())


def unbind_source(ctx: Context, project: str, kind: str, value: str) -> ProjectOut:
    """Unbind source `(kind, value)` from `project`: what arrives there from now on is learned into the owner's
    user-global memories again; what the project learned stays in it. Raises `Forbidden`, `NotFound` (no such
    project, or the source is not bound to it), `InvalidInput` (bad kind or value; a files folder need not exist
    any more)."""
    require_owner("unbinding a source from a project")
    kind, value = checked_source(kind, value, exists=False)  # a folder gone since it was bound can be unbound
    found = project_for(ctx.store, caller(), project)
    if not remove_binding(ctx.store, kind, value, found.id):
        raise NotFound(f"that {kind.replace('_', ' ')} is not bound to project {found.name!r}")
    ctx.activity.record("system", f"Unbound a {kind.replace('_', ' ')} source from project {found.id}.")
    return project_out(ctx, found, caller())
