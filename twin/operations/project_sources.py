"""Binding the twin owner's sources to a project (issue 19: "a files root, a Telegram chat or an email label can be
bound to a project, so what arrives there is learned into it"), for every interface (`twin project bind|unbind`,
`/v1/projects/{project}/sources`). The bindings live in `twin.store.project_sources`; the one rule that reads them
when a connector stages an item is `twin.ingest.bound_namespace`.

A binding applies to what arrives from then on, and a files binding also to what its folder taught before: binding
or unbinding a folder moves every file already learned under it whose scope the change alters
(`twin.connectors.file_moves`): it is learned again where the rule now puts it and its memories where it was are
forgotten, staged in the transaction that changes the binding, so the learn worker carries the move out when the
daemon runs (at once when it runs now). A chat message or an email thread learned before stays where it was learned
until the thread changes (then `twin.ingest.stage` forgets its older memories there: `moved_from`): no copy of a
chat's messages is kept to learn again, and a thread is read again only from Gmail. The sources are the twin
owner's (their folders, their chats, their mailbox), so only the twin's owner binds and unbinds, and only into a
project they are a member of.

Errors: `Forbidden` (403) for anyone but the twin's owner or a project out of their reach, `NotFound` (404) for a
project that does not resolve or a source not bound to it, `InvalidInput` (422, naming the field; 409 `conflict`
for a source bound to another project) for bad input.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import unicodedata

from twin import ingest
from twin.exceptions import InvalidInput, NotFound
from twin.memory import utc_now
from twin.operations.context import Context
from twin.operations.project_view import project_out
from twin.operations.scopes import caller, project_for, require_owner
from twin.operations.shapes import SourceBoundOut
from twin.outside_text import UNSAFE
from twin.store.project_sources import KINDS, LABEL_MAX_CHARS, SourceBinding, add_binding, all_bindings, remove_binding

log = logging.getLogger(__name__)

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
        raise InvalidInput(f"value must be the {_kind_words(kind)} to bind", field="value")
    value = value.strip()
    if kind == "telegram_chat":
        if CHAT_ID.fullmatch(value) is None:
            raise InvalidInput("a Telegram chat is its id: an integer such as -1001234567890", field="value")
        return kind, str(int(value))
    if kind == "gmail_label":
        if len(value) > LABEL_MAX_CHARS or UNSAFE.search(value) or _invisible(value):
            raise InvalidInput(f"a Gmail label is its name as Gmail shows it (School, Household/Bills) or its id "
                               f"(Label_12), at most {LABEL_MAX_CHARS} characters, no control or invisible "
                               "characters (tab, zero-width)",
                               field="value")
        return kind, value
    path = os.path.expanduser(value)
    if len(path) > PATH_MAX or "\x00" in path or not os.path.isabs(path):
        raise InvalidInput("a files source is a folder's absolute path", field="value")
    if exists and not os.path.isdir(path):
        raise InvalidInput(f"no folder at {path[:200]!r}", field="value")
    return kind, os.path.normpath(path)


def _invisible(value: str) -> bool:
    """True when `value` holds a tab or a character that shows as nothing (Unicode's format characters: a
    zero-width space or joiner, a soft hyphen): a label bound so would read as another one. Pure."""
    return any(c == "\t" or unicodedata.category(c) == "Cf" for c in value)


def unfed(settings, kind: str, value: str) -> str | None:
    """Why a source bound as `(kind, value)` (checked) may never feed its project, or None: a folder under none of
    `files_roots` or a symlink (the files connector reads neither), a label of `gmail_skip_labels` (spam,
    promotions), a group chat missing from `telegram_allowed_chats` (the bot answers and learns only there and in
    private chats). Reads the file system (is it a symlink)."""
    if kind == "files":
        if os.path.islink(value):
            return "it is a symlink, which the files connector never follows: bind the folder it points to"
        roots = [os.path.normpath(str(r)) for r in settings.files_roots]
        if not any(value == r or value.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
            return ("it is under no files root (TWIN_FILES_ROOTS): nothing there is read until a root holds it")
    if kind == "gmail_label" and value.upper() in {label.upper() for label in settings.gmail_skip_labels}:
        return "twin never reads that label (TWIN_GMAIL_SKIP_LABELS)"
    if kind == "telegram_chat" and int(value) < 0 and int(value) not in settings.telegram_allowed_chats:
        return "the bot reads that group only once TWIN_TELEGRAM_ALLOWED_CHATS lists it"
    return None


def bind_source(ctx: Context, project: str, kind: str, value: str) -> SourceBoundOut:
    """Bind the twin owner's source `(kind, value)` (`checked_source`) to `project` (an id or a name): what
    arrives there from now on is learned into the project, and the files already learned under a bound folder
    move into it (`files_moving` counts them: `_moves`). Binding it again to the same project changes nothing
    (a Gmail label named in another case is the same label: `project_sources.label_key`).
    Raises `Forbidden` (not the twin's owner; no member), `NotFound` (no such project), `InvalidInput` (bad input;
    code `conflict` when the source is bound to another project: unbind it there first). Reads the files that move."""
    require_owner("binding a source to a project")
    kind, value = checked_source(kind, value)
    found = project_for(ctx.store, caller(), project)
    binding = SourceBinding(kind, value, found.id, utc_now())
    before = all_bindings(ctx.store)
    moves = _moves(ctx, binding, before, [*before, binding])
    try:
        with ctx.store.atomic():
            added = add_binding(ctx.store, binding)
            ids = _hand_over(ctx, moves) if added else []
    except sqlite3.IntegrityError as exc:
        raise InvalidInput(f"that {_kind_words(kind)} is bound to another project; unbind it there first",
                           field="value", code="conflict") from exc
    moving = len(moves) if added else 0
    if added:
        ctx.activity.record("system", f"Bound a {kind.replace('_', ' ')} source to project {found.id}"
                            + (f"; the {_files(moving)} learned from it before move into it." if moving else "."))
    _queue(ctx, ids)
    return SourceBoundOut(**project_out(ctx, found, caller()).model_dump(), files_moving=moving,
                          warning=unfed(ctx.settings, kind, value))


def unbind_source(ctx: Context, project: str, kind: str, value: str) -> SourceBoundOut:
    """Unbind source `(kind, value)` from `project`: what arrives there from now on is learned into the owner's
    user-global memories again (or into the project of a folder bound above it), and the files the project learned
    under an unbound folder move there (`files_moving` counts them: `_moves`). Raises `Forbidden`, `NotFound` (no
    such project, or the source is not bound to it), `InvalidInput` (bad kind or value; a files folder need not
    exist any more). Reads the files that move."""
    require_owner("unbinding a source from a project")
    kind, value = checked_source(kind, value, exists=False)  # a folder gone since it was bound can be unbound
    found = project_for(ctx.store, caller(), project)
    moves = _unbind(ctx, kind, value, found.id)
    if moves is None:
        raise NotFound(f"that {_kind_words(kind)} is not bound to project {found.name!r}")
    ctx.activity.record("system", f"Unbound a {kind.replace('_', ' ')} source from project {found.id}"
                        + (f"; the {_files(len(moves))} it learned move out of it." if moves else "."))
    return SourceBoundOut(**project_out(ctx, found, caller()).model_dump(), files_moving=len(moves))


def _unbind(ctx: Context, kind: str, value: str, project_id: str) -> list | None:
    """Remove the binding `(kind, value)` of `project_id` and stage (queue, when the daemon runs) the moves of the
    files learned under it (`_moves`, read before the transaction) in the transaction that removes it: the moves,
    or None when it was not bound there."""
    before = all_bindings(ctx.store)
    gone = [b for b in before if (b.kind, b.value, b.project_id) == (kind, value, project_id)]
    moves = _moves(ctx, gone[0], before, [b for b in before if b not in gone]) if gone else []
    with ctx.store.atomic():
        removed = remove_binding(ctx.store, kind, value, project_id)
        ids = _hand_over(ctx, moves) if removed else []
    _queue(ctx, ids)
    return moves if removed else None


def release_files(ctx: Context, project_id: str) -> list[str]:
    """Before project `project_id` is erased (`twin.operations.projects.erase_project`): unbind each of its `files`
    bindings as `unbind_source` does, so the files learned under them move, read again now, to the scope the rules
    give them without it (the owner's own memories, or the project of a folder bound above): the owner's files are
    still in the owner's files roots, and a deleted project must not take what the twin learned of them before the
    binding (found by a breaker run: bound and deleted while the daemon was down, they were never learned again).
    Returns the paths that move (staged, queued when the daemon runs)."""
    moved: list[str] = []
    for binding in [b for b in all_bindings(ctx.store) if b.project_id == project_id and b.kind == "files"]:
        moved += [m.path for m in _unbind(ctx, binding.kind, binding.value, project_id) or ()]
    return moved


def _moves(ctx: Context, binding: SourceBinding, before: list[SourceBinding], after: list[SourceBinding]) -> list:
    """The moves (`twin.connectors.file_moves.FileMove`) of the files learned under `binding`'s folder whose scope
    the change of the bindings from `before` to `after` alters, each file read again now (before the transaction
    that changes the binding, so no write lock waits on the disk); none for a chat or a label (see the module)."""
    if binding.kind != "files":
        return []
    from twin.connectors.file_moves import moving_files

    return moving_files(ctx.settings, ctx.store, binding.value, before, after)


def _hand_over(ctx: Context, moves: list) -> list[int]:
    """Stage `moves` with their manifest rows (`twin.connectors.file_moves.hand_over`) in the caller's transaction,
    the one that changes the binding, so a binding never changes without its move. Returns the staged ids."""
    if not moves:
        return []
    from twin.connectors.file_moves import hand_over

    return hand_over(ctx.store, moves, ctx.being)


def _queue(ctx: Context, ids: list[int]) -> None:
    """Queue the staged `ids` on the running daemon's bus, one push per mode (`Bus.push`), so the move is learned
    now; without a daemon, or when Redis refuses, they wait in SQLite and the supervisor queues them when it runs
    (`Bus.queue_ready`, every `STAGED_EVERY_S`). Never raises for Redis: the move is staged already."""
    bus = ctx.bus() if ids else None
    if bus is None:
        return
    by_mode: dict[str, list[int]] = {}
    for staged in ingest.fetch(ctx.store, ids):
        by_mode.setdefault(staged.item.mode, []).append(staged.id)
    try:
        for mode, chunk in by_mode.items():
            bus.push(ctx.store, chunk, ctx.being, mode)
    except Exception as exc:  # noqa: BLE001 - staged already: the supervisor queues what waits
        log.warning("operations: the moved files were not queued now (%s: %s); they wait in SQLite",
                    type(exc).__name__, exc)


def _kind_words(kind: str) -> str:
    """A source kind as a sentence names it: "folder", "Telegram chat", "Gmail label"."""
    return {"files": "folder", "telegram_chat": "Telegram chat", "gmail_label": "Gmail label"}.get(kind, kind)


def _files(n: int) -> str:
    """"1 file", "3 files"."""
    return f"{n} file" if n == 1 else f"{n} files"
