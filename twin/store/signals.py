"""The signals store: what reflection proposed, whether the Hush gate raised or held it back, and whether the
outbox has delivered it; plus reflection's widget suggestions (seed 001; tables of migration 0003).

Times are UTC ISO-8601 strings (`YYYY-MM-DDTHH:MM:SSZ`, as `twin.memory.format_time` writes them), so they
compare correctly as text. The functions here are single statements: a caller that needs several writes to land
together (the Hush gate: a signal and its diary line) wraps them in `store.atomic()`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from twin.memory import format_time, parse_time
from twin.store.core import Store
from twin.store.people import OWNER_ID
from twin.store.projects import is_member

SIGNAL_KINDS = ("insight", "reminder")
"""What reflection may propose (seed 001: `kind: 'insight' | 'reminder'`)."""

SIGNAL_STATUSES = ("raised", "held_back")
"""`raised`: cleared the Hush gate and waits on the outbox until `delivered_at`; `held_back`: blocked, `reason`
says why (seed 001: "logged as a held-back Twin activity line, never silently dropped and never raised anyway")."""

WIDGET_TYPES = ("files", "inbox", "calendar", "memory", "notes", "projects", "wallet")
"""The widgets reflection may suggest (seed 001's reflection output contract)."""

OWNER_RECIPIENT = OWNER_ID
"""The recipient of the twin owner's signals (`twin.store.people.OWNER_ID`); every function here defaults to it, so
the owner's outbox, Hush ceiling and dedup see the owner's signals alone."""

_SIGNAL_COLUMNS = ("id, being_id, kind, title, body, priority, status, reason, evidence, created_at, delivered_at, "
                   "recipient, project_id")


@dataclass
class ProposedSignal:
    """A signal as reflection's model proposed it, before the Hush gate: `kind` is one of `SIGNAL_KINDS`,
    `priority` 0..1, `evidence` the ids of the memories it rests on (seed 001)."""

    kind: str
    title: str
    body: str
    priority: float
    evidence: list[int] = field(default_factory=list)


@dataclass
class Signal:
    """One row of `signals`: `status` is one of `SIGNAL_STATUSES`, `reason` the Hush gate's reasons for a
    held-back signal (None when raised), times UTC ISO-8601 (`delivered_at` None until the outbox sent it);
    `recipient` the person it is for (`OWNER_RECIPIENT`, or a project member's person id), `project_id` the project
    it was drawn from (None: the owner's own memories)."""

    id: int
    being_id: str
    kind: str
    title: str
    body: str
    priority: float
    status: str
    reason: str | None
    evidence: list[int]
    created_at: str
    delivered_at: str | None
    recipient: str = OWNER_RECIPIENT
    project_id: str | None = None


@dataclass
class WidgetSuggestion:
    """One row of `widget_suggestions`: reflection offering a widget (`type` one of `WIDGET_TYPES`), never forcing
    it (seed 001); `created_at` UTC ISO-8601."""

    id: int
    being_id: str
    type: str
    reason: str
    created_at: str


def _row_to_signal(row: tuple) -> Signal:
    (sid, being, kind, title, body, priority, status, reason, evidence, created, delivered, recipient, project) = row
    return Signal(id=sid, being_id=being, kind=kind, title=title, body=body, priority=priority, status=status,
                  reason=reason, evidence=[int(i) for i in json.loads(evidence)], created_at=created,
                  delivered_at=delivered, recipient=recipient, project_id=project)


def _utc_iso(value: str) -> str:
    """`value` (any ISO-8601) in the stored form, so text comparison is time comparison. Raises `ValueError`."""
    return format_time(parse_time(value))


def record_signal(store: Store, being: str, proposed: ProposedSignal, status: str, reason: str | None,
                  now: str, recipient: str = OWNER_RECIPIENT, project_id: str | None = None) -> int:
    """Store one signal of `being` for `recipient`, drawn from `project_id` (None: the owner's own memories), with
    `status` ('raised' or 'held_back') and `reason` (why it was held back; None when raised), created at `now`
    (UTC ISO-8601); return its id.

    Raises `ValueError` for an unknown status or kind, or a `now` that is not ISO-8601.
    """
    if status not in SIGNAL_STATUSES:
        raise ValueError(f"unknown signal status {status!r}; expected one of {SIGNAL_STATUSES}")
    if proposed.kind not in SIGNAL_KINDS:
        raise ValueError(f"unknown signal kind {proposed.kind!r}; expected one of {SIGNAL_KINDS}")
    cur = store.conn.execute(
        "INSERT INTO signals (being_id, kind, title, body, priority, status, reason, evidence, created_at, recipient,"
        " project_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (being, proposed.kind, proposed.title, proposed.body, float(proposed.priority), status, reason,
         json.dumps([int(i) for i in proposed.evidence]), _utc_iso(now), recipient, project_id))
    return int(cur.lastrowid)


def list_signals(store: Store, being: str, status: str | None = None, limit: int = 50,
                 recipient: str = OWNER_RECIPIENT) -> list[Signal]:
    """Up to `limit` signals of `being` for `recipient` (only those with `status` when given), newest first
    (read-only)."""
    where, args = "being_id = ? AND recipient = ?", [being, recipient]
    if status is not None:
        where += " AND status = ?"
        args.append(status)
    rows = store.conn.execute(f"SELECT {_SIGNAL_COLUMNS} FROM signals WHERE {where}"
                              " ORDER BY created_at DESC, id DESC LIMIT ?", (*args, int(limit)))
    return [_row_to_signal(r) for r in rows]


def get_signal(store: Store, signal_id: int) -> Signal | None:
    """One signal by id, or None (read-only)."""
    row = store.conn.execute(f"SELECT {_SIGNAL_COLUMNS} FROM signals WHERE id = ?", (int(signal_id),)).fetchone()
    return _row_to_signal(row) if row else None


def raised_since(store: Store, being: str, since_iso: str, recipient: str = OWNER_RECIPIENT) -> list[Signal]:
    """Signals of `being` for `recipient` with status 'raised' created at or after `since_iso` (UTC ISO-8601),
    newest first (read-only). Held-back signals are never included: they count for neither the Hush ceiling nor
    its dedup. Raises `ValueError` for a `since_iso` that is not ISO-8601."""
    rows = store.conn.execute(f"SELECT {_SIGNAL_COLUMNS} FROM signals WHERE being_id = ? AND recipient = ? AND "
                              "status = 'raised' AND created_at >= ? ORDER BY created_at DESC, id DESC",
                              (being, recipient, _utc_iso(since_iso)))
    return [_row_to_signal(r) for r in rows]


def mark_delivered(store: Store, signal_id: int, now: str) -> bool:
    """Set `delivered_at` = `now` (UTC ISO-8601) on a raised, undelivered signal. Returns False when there is no
    such signal (unknown id, held back, or already delivered: a retried delivery keeps the first time)."""
    cur = store.conn.execute("UPDATE signals SET delivered_at = ? WHERE id = ? AND status = 'raised'"
                             " AND delivered_at IS NULL", (_utc_iso(now), int(signal_id)))
    return cur.rowcount > 0


def undelivered(store: Store, being: str, recipient: str = OWNER_RECIPIENT) -> list[Signal]:
    """Raised signals of `being` for `recipient` not yet delivered, oldest first: the outbox's backlog (read-only;
    the Telegram outbox asks for the owner's)."""
    rows = store.conn.execute(f"SELECT {_SIGNAL_COLUMNS} FROM signals WHERE being_id = ? AND recipient = ? AND "
                              "status = 'raised' AND delivered_at IS NULL ORDER BY created_at, id", (being, recipient))
    return [_row_to_signal(r) for r in rows]


def record_widget_suggestion(store: Store, being: str, type: str, reason: str, now: str) -> int:
    """Store reflection's suggestion of widget `type` for `being` at `now` (UTC ISO-8601); return its id.

    Raises `ValueError` for a type not in `WIDGET_TYPES` (seed 001's list); an empty reason is stored as it is.
    """
    if type not in WIDGET_TYPES:
        raise ValueError(f"unknown widget type {type!r}; expected one of {WIDGET_TYPES}")
    cur = store.conn.execute("INSERT INTO widget_suggestions (being_id, type, reason, created_at) VALUES (?, ?, ?, ?)",
                             (being, type, reason.strip(), _utc_iso(now)))
    return int(cur.lastrowid)


def list_widget_suggestions(store: Store, being: str, limit: int = 20) -> list[WidgetSuggestion]:
    """Up to `limit` widget suggestions of `being`, newest first (read-only)."""
    rows = store.conn.execute("SELECT id, being_id, type, reason, created_at FROM widget_suggestions"
                              " WHERE being_id = ? ORDER BY created_at DESC, id DESC LIMIT ?", (being, int(limit)))
    return [WidgetSuggestion(*r) for r in rows]


def counts(store: Store, being: str) -> dict[str, int]:
    """`{raised, held_back, undelivered}`: the owner's signals of `being` raised, held back, and raised but not yet
    delivered (read-only)."""
    raised, held, waiting = store.conn.execute(
        "SELECT COALESCE(SUM(status = 'raised'), 0), COALESCE(SUM(status = 'held_back'), 0),"
        " COALESCE(SUM(status = 'raised' AND delivered_at IS NULL), 0) FROM signals"
        " WHERE being_id = ? AND recipient = ?",
        (being, OWNER_RECIPIENT)).fetchone()
    return {"raised": raised, "held_back": held, "undelivered": waiting}


def still_theirs(store: Store, signals: list[Signal], recipient: str) -> list[Signal]:
    """Those of `signals` (all for `recipient`) that `recipient` may still read (read-only): the owner's all; a
    project member's only those drawn from a project they are still a member of (issue 19: unshared, a member reads
    and is sent nothing more of it)."""
    if recipient == OWNER_RECIPIENT:
        return signals
    return [s for s in signals if s.project_id is not None and is_member(store, s.project_id, recipient)]


def forget_project_signals(store: Store, project_id: str) -> int:
    """Delete every signal drawn from `project_id` (for every recipient): their titles and bodies were written from
    the project's memories, so erasing the project erases them. Returns how many went. Joins the caller's
    transaction."""
    with store.atomic() as conn:
        return conn.execute("DELETE FROM signals WHERE project_id = ?", (project_id,)).rowcount


def forget_recipient_signals(store: Store, recipient: str) -> int:
    """Delete every signal for `recipient` (a person the owner removed). Returns how many went. Joins the
    caller's transaction."""
    with store.atomic() as conn:
        return conn.execute("DELETE FROM signals WHERE recipient = ?", (recipient,)).rowcount
