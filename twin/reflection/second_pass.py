"""Reflection: the quiet second pass of the learning loop (seed 001).

`reflect()` looks at the memories that arrived since the last reflection of a being and, when there are at
least 3 (seed 001's `MIN_NEW_FOR_REFLECTION`) or it is forced, makes ONE structured call to the `cheap` model
with the profile summary and those memories. The model may propose up to 2 signals and 2 widget
suggestions, a profile delta and a one-line thought. Every proposed signal then has to clear the Hush gate
(`twin.reflection.hush`): a blocked one is stored and written to the diary as held back, never dropped and never raised
anyway. Without a provider reflection makes no call and says so once in the diary (degrade, never fail).
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass, field

from pydantic import BaseModel, ConfigDict, Field, field_validator

from twin.activity import Activity
from twin.llm.provider import (
    DATA_RULE,
    BudgetExhausted,
    ModelProvider,
    ProviderError,
    ProviderResting,
    UnitInterval,
    quote_data,
)
from twin.memory import Memory, strip_controls, utc_now
from twin.profile import ProfileDelta, load_profile, merge_into_profile
from twin.reflection.hush import HushGate
from twin.store import Store, state
from twin.store.signals import WIDGET_TYPES, ProposedSignal, record_widget_suggestion

log = logging.getLogger("twin.reflection")

MIN_NEW_FOR_REFLECTION = 3
"""Seed 001: the model is called only when at least this many memories arrived since the last reflection."""
MAX_FRESH_IN_PROMPT = 60
"""Newest fresh memories shown to the model (ours: bounds the prompt; the cursor still passes all of them)."""
MAX_SIGNALS = MAX_WIDGETS = 2  # seed 001
CURSOR = "reflection"

SYSTEM_PROMPT = f"""Task: reflection.
You are the quiet inner voice of one person's memory twin; the person is called "Owner". You get Owner's
profile and the memories that arrived since you last looked. Decide whether anything deserves Owner's
attention now.
{DATA_RULE}
Stay quiet by default: return NO signals unless something is genuinely useful to Owner now (a reminder of
something Owner committed to, a real pattern worth knowing). Never invent facts. At most {MAX_SIGNALS} signals.
Each signal: kind "insight" or "reminder", a short title, a body of one or two sentences addressed to Owner,
priority 0..1, and evidence: the ids (numbers after #) of the memories below that it rests on. A signal
without evidence will be discarded.
widgets: at most {MAX_WIDGETS} suggestions of a desktop widget ({", ".join(WIDGET_TYPES)}) with a reason,
only when clearly helpful. profile: short items to add to Owner's profile (facts, goals, preferences), or empty.
thought: one short first-person line about what you noticed, e.g. "Noticed you've been reading a lot about
Rust lately." """


_MEMORY_ID = re.compile(r"#?\d{1,18}")


def _clean_text(value: object, limit: int) -> str:
    """Model-written text made safe to store and print: a string, no terminal escapes or control characters,
    whitespace collapsed, at most `limit` characters."""
    return " ".join(strip_controls(value if isinstance(value, str) else "").split())[:limit]


class SignalProposal(BaseModel):
    """One signal as the model proposes it (lenient: odd kinds become "insight", priority is clamped,
    evidence accepts "#12" or "12")."""

    model_config = ConfigDict(extra="ignore")
    kind: str = "insight"
    title: str = Field(min_length=1)
    body: str = ""
    priority: UnitInterval = 0.5
    evidence: list[int] = Field(default_factory=list)

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: object) -> str:
        return "reminder" if str(value).strip().lower() == "reminder" else "insight"

    @field_validator("title", "body", mode="before")
    @classmethod
    def _text(cls, value: object) -> str:
        return _clean_text(value, 1000)

    @field_validator("evidence", mode="before")
    @classmethod
    def _ids(cls, value: object) -> list[int]:
        """Memory ids: integers, or strings like "12" or "#12"; anything else (negative, huge, "1e5") is not an
        id and is dropped, so it can never cite a memory by accident."""
        values = value if isinstance(value, list) else [value]
        ids = []
        for v in values:
            text = str(v).strip() if isinstance(v, int | str) and not isinstance(v, bool) else ""
            if _MEMORY_ID.fullmatch(text):
                ids.append(int(text.lstrip("#")))
        return ids[:20]


class WidgetProposal(BaseModel):
    """One widget suggestion (seed 001's types only)."""

    model_config = ConfigDict(extra="ignore")
    type: str
    reason: str = ""

    @field_validator("reason", mode="before")
    @classmethod
    def _reason(cls, value: object) -> str:
        return _clean_text(value, 300)


class ReflectionAnswer(BaseModel):
    """Seed 001's reflection contract: `{signals ≤ 2, widgets ≤ 2, profile, thought}`; extra items are cut."""

    model_config = ConfigDict(extra="ignore")
    signals: list[SignalProposal] = Field(default_factory=list)
    widgets: list[WidgetProposal] = Field(default_factory=list)
    profile: ProfileDelta = Field(default_factory=ProfileDelta)
    thought: str | None = None

    @field_validator("signals", mode="before")
    @classmethod
    def _signals(cls, value: object) -> list:
        """At most 2; a signal without a title is dropped, not the whole answer."""
        items = value if isinstance(value, list) else []
        return [v for v in items if isinstance(v, dict) and isinstance(v.get("title"), str)
                and v["title"].strip()][:MAX_SIGNALS]

    @field_validator("widgets", mode="before")
    @classmethod
    def _widgets(cls, value: object) -> list:
        """At most 2 of seed 001's widget types; others are dropped."""
        items = value if isinstance(value, list) else []
        return [v for v in items if isinstance(v, dict) and v.get("type") in WIDGET_TYPES][:MAX_WIDGETS]

    @field_validator("profile", mode="before")
    @classmethod
    def _profile(cls, value: object) -> object:
        return value if isinstance(value, dict) else {}

    @field_validator("thought", mode="before")
    @classmethod
    def _thought(cls, value: object) -> str | None:
        return (_clean_text(value, 280) or None) if isinstance(value, str) else None


@dataclass
class ReflectionResult:
    """What one `reflect()` did (seed 001's `{ran, signals, widgets, thought}`): `ran` is True when the model
    was called and answered; `signals` lists every proposed signal with its `status` (raised or held_back),
    `reason` and `evidence`; `note` says why nothing ran."""

    ran: bool
    new_memories: int = 0
    signals: list[dict] = field(default_factory=list)
    widgets: list[dict] = field(default_factory=list)
    thought: str | None = None
    profile_updated: bool = False
    note: str = ""

    def to_dict(self) -> dict:
        """The JSON form printed by `twin reflect --json`."""
        return asdict(self)


def fresh_memories(store: Store, being: str) -> list[Memory]:
    """Active, non-sensitive memories of `being` that arrived after the last reflection, oldest first: the owner's
    own, of every namespace of theirs; never a project's (`twin.reflection.project_pass` reflects on those) or
    another person's."""
    after = int(store.get_cursor(CURSOR, being, "last_memory_id") or 0)
    ids = store.shareable_ids_after(being, after)
    found = store.get_many(ids)
    return [found[i] for i in ids if i in found]


def memories_block(memories: list[Memory], total: int) -> str:
    """The fresh memories as the reflection prompts quote them (`#id kind: content`, as data), with a note of how
    many older fresh ones of `total` are not shown. Pure."""
    lines = "\n".join(f"#{m.id} {m.kind}: {m.content}" for m in memories)
    more = f"\n({total - len(memories)} older fresh memories not shown.)" if total > len(memories) else ""
    return f"Memories since you last looked (#id kind: content):\n{quote_data('MEMORIES', lines)}{more}"


def _prompt(profile_summary: str, memories: list[Memory], total: int) -> str:
    return f"Owner's profile:\n{quote_data('PROFILE', profile_summary)}\n\n{memories_block(memories, total)}"


def reflect(store: Store, activity: Activity, being: str, provider: ModelProvider | None, gate: HushGate, *,
            force: bool = False, min_new: int = MIN_NEW_FOR_REFLECTION, outbox=None) -> ReflectionResult:
    """Seed 001's `reflect(beingId, {force})`: at most ONE model call; signals through the Hush gate.

    Without `provider`: no call; the diary says once that reflection is off. With fewer than `min_new` fresh
    memories and not `force`: no call. A model failure (transport, budget, an answer that is not the JSON
    asked for) is one `model` diary line and leaves the cursor where it was, so the next tick tries again.
    On success: each proposed signal is raised (stored, `outbox(signal_id)` called) or held back by `gate`;
    widget suggestions are stored, never forced; the profile delta is merged; the thought is a `thought`
    line; one `reflected` line sums it up; the cursor moves past every fresh memory. Raises only
    `sqlite3.Error` when the store itself fails.
    """
    if provider is None:
        if state.get_text(store, CURSOR, being, "provider") != "off":
            state.set_text(store, CURSOR, being, "provider", "off")
            activity.record("reflected", "Reflection is off: no model provider is configured (TWIN_LLM_BASE_URL); "
                                         "learning goes on with the offline extractor.")
        return ReflectionResult(ran=False, note="no model provider is configured")
    state.set_text(store, CURSOR, being, "provider", "on")
    fresh = fresh_memories(store, being)
    if len(fresh) < min_new and not force:
        return ReflectionResult(ran=False, new_memories=len(fresh),
                                note=f"{len(fresh)} new memories; reflection waits for {min_new}")
    shown = fresh[-MAX_FRESH_IN_PROMPT:]
    calls_before = provider.calls
    try:
        answer = provider.chat_json(SYSTEM_PROMPT, _prompt(load_profile(store, being).summary(), shown, len(fresh)),
                                    ReflectionAnswer, purpose="reflection", attempts=1)
        result = _apply(store, activity, being, gate, answer, fresh, {m.id for m in shown}, outbox)
    except (BudgetExhausted, ProviderResting) as exc:  # no call was made: nothing to report each tick
        result = ReflectionResult(ran=False, new_memories=len(fresh), note=str(exc))
    except ProviderError as exc:
        activity.record("model", f"Reflection failed ({exc}); it will try again at the next tick.")
        result = ReflectionResult(ran=False, new_memories=len(fresh), note=str(exc))
    except (ValueError, TypeError, OverflowError) as exc:  # an answer that passed validation but not the store
        log.exception("reflection: the model's answer could not be applied")
        activity.record("model", f"Reflection failed (the model's answer could not be applied: "
                                 f"{type(exc).__name__}); it will try again at the next tick.")
        result = ReflectionResult(ran=False, new_memories=len(fresh), note=f"unusable answer ({type(exc).__name__})")
    if provider.calls > calls_before:
        state.set_time(store, CURSOR, being, "last_call_at", utc_now())
    return result


def _apply(store: Store, activity: Activity, being: str, gate: HushGate, answer: ReflectionAnswer,
           fresh: list[Memory], shown_ids: set[int], outbox) -> ReflectionResult:
    result = ReflectionResult(ran=True, new_memories=len(fresh), thought=answer.thought)
    now = utc_now()
    for proposal in answer.signals:
        proposed = ProposedSignal(kind=proposal.kind, title=proposal.title, body=proposal.body,
                                  priority=proposal.priority, evidence=proposal.evidence)
        signal = gate.raise_or_hold(proposed, shown_ids, activity, outbox)
        result.signals.append({"id": signal.id, "status": signal.status, "kind": signal.kind, "title": signal.title,
                               "body": signal.body, "reason": signal.reason, "evidence": signal.evidence})
    for widget in answer.widgets:
        record_widget_suggestion(store, being, widget.type, widget.reason, now)
        result.widgets.append({"type": widget.type, "reason": widget.reason})
    with store.atomic():
        result.profile_updated = merge_into_profile(store, being, answer.profile, now)
        if fresh:
            store.set_cursor(CURSOR, being, "last_memory_id", str(fresh[-1].id))
    if answer.thought:
        activity.record("thought", answer.thought)
    raised = sum(s["status"] == "raised" for s in result.signals)
    held = len(result.signals) - raised
    line = f"Reflected on {len(fresh)} new memories and raised {raised} signal(s)"
    line += f", held back {held}" if held else ""
    line += " and updated the profile." if result.profile_updated else "."
    activity.record("reflected", line)
    return result
