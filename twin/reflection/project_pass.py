"""Reflection per project (issue 19: "Reflection and signals run per person and per project; a signal drawn from a
shared project can reach its members, still through the Hush gate of each recipient").

`reflect_project` is seed 001's second pass over one project's namespace: the memories that arrived in it since
its own cursor, at least `MIN_NEW_FOR_REFLECTION` of them unless forced, ONE model call. What the model proposes is
checked, for each member, by that member's own Hush gate (`HushGate(recipient=…)`: quiet hours, their daily
ceiling, cited evidence among the project's fresh memories, their 7-day dedup), and stored once per member as
raised or held back, with the project's id. The twin owner's raised signals go on the outbox (their Telegram); a
member reads theirs at `/v1/signals` with their own token.

What stays apart: the prompt holds the project's memories alone, never the owner's profile or private memories
(the signal's text is read by every member); the answer's profile delta and widget suggestions are ignored (the
profile and the desktop are the owner's). The Hush rules are the owner's settings for every member: people have
no settings of their own yet.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from twin.activity import Activity
from twin.llm.provider import DATA_RULE, BudgetExhausted, ModelProvider, ProviderError, ProviderResting
from twin.namespaces import project_namespace
from twin.reflection.hush import HushGate, HushRules
from twin.reflection.second_pass import (
    CURSOR,
    MAX_FRESH_IN_PROMPT,
    MAX_SIGNALS,
    MIN_NEW_FOR_REFLECTION,
    ReflectionAnswer,
    ReflectionResult,
    memories_block,
)
from twin.store import Store
from twin.store.projects import Project, all_projects, members
from twin.store.signals import OWNER_RECIPIENT, ProposedSignal

log = logging.getLogger("twin.reflection")

PROJECT_PROMPT = f"""Task: reflection of a shared project.
You are the quiet inner voice of a memory twin. You get the memories that arrived in one shared project (a
household, a family, a small team) since you last looked; every member of the project reads what you raise.
{DATA_RULE}
Stay quiet by default: return NO signals unless something is genuinely useful to the project's members now (a
reminder of something due, a real pattern worth knowing). Never invent facts. At most {MAX_SIGNALS} signals.
Each signal: kind "insight" or "reminder", a short title, a body of one or two sentences about the project,
priority 0..1, and evidence: the ids (numbers after #) of the memories below that it rests on. A signal
without evidence will be discarded. widgets: none. profile: empty. thought: one short line about what you
noticed."""


def cursor_name(project_id: str) -> str:
    """The reflection cursor's name of one project (`last_memory_id:<id>`, beside the owner's `last_memory_id`)."""
    return f"last_memory_id:{project_id}"


def reflect_project(store: Store, activity: Activity, being: str, project: Project, provider: ModelProvider | None,
                    rules: HushRules, *, force: bool = False, min_new: int = MIN_NEW_FOR_REFLECTION,
                    outbox: Callable[[int], None] | None = None, clock=None) -> ReflectionResult:
    """One project's reflection (see the module): at most ONE model call; each proposed signal through each
    member's Hush gate, stored per member (`signals` lists every stored row with its `recipient`). Without a
    provider, or with fewer than `min_new` fresh memories and not `force`: no call (`ran` False, `note` says
    why). A model failure is one `model` diary line and leaves the cursor where it was. `outbox(signal_id)` is
    called for the twin owner's raised signals. `clock` (an aware-datetime callable) is the gates' clock.
    Raises only `sqlite3.Error` when the store fails."""
    if provider is None:
        return ReflectionResult(ran=False, note="no model provider is configured")
    after = int(store.get_cursor(CURSOR, being, cursor_name(project.id)) or 0)
    ids = store.project_ids_after(being, project_namespace(project.id), after)
    found = store.get_many(ids)
    fresh = [found[i] for i in ids if i in found]
    if len(fresh) < min_new and not force:
        return ReflectionResult(ran=False, new_memories=len(fresh),
                                note=f"{len(fresh)} new memories; reflection waits for {min_new}")
    shown = fresh[-MAX_FRESH_IN_PROMPT:]
    try:
        answer = provider.chat_json(PROJECT_PROMPT, memories_block(shown, len(fresh)), ReflectionAnswer,
                                    purpose="reflection", attempts=1)
    except (BudgetExhausted, ProviderResting) as exc:
        return ReflectionResult(ran=False, new_memories=len(fresh), note=str(exc))
    except ProviderError as exc:
        activity.record("model", f"Reflection of project {project.id} failed ({exc}); it will try again at the "
                                 "next tick.")
        return ReflectionResult(ran=False, new_memories=len(fresh), note=str(exc))
    result = ReflectionResult(ran=True, new_memories=len(fresh), thought=answer.thought)
    shown_ids = {m.id for m in shown}
    recipients = members(store, project.id)
    for proposal in answer.signals:
        proposed = ProposedSignal(kind=proposal.kind, title=proposal.title, body=proposal.body,
                                  priority=proposal.priority, evidence=proposal.evidence)
        for person in recipients:
            gate = HushGate(store, being, rules, recipient=person, project_id=project.id,
                            **({"clock": clock} if clock is not None else {}))
            signal = gate.raise_or_hold(proposed, shown_ids, activity,
                                        outbox if person == OWNER_RECIPIENT else None)
            result.signals.append({"id": signal.id, "status": signal.status, "kind": signal.kind,
                                   "title": signal.title, "body": signal.body, "reason": signal.reason,
                                   "evidence": signal.evidence, "recipient": person, "project_id": project.id})
    if fresh:
        store.set_cursor(CURSOR, being, cursor_name(project.id), str(fresh[-1].id))
    raised = sum(s["status"] == "raised" for s in result.signals)
    held = len(result.signals) - raised
    activity.record("reflected", f"Reflected on {len(fresh)} new memories of project {project.id} and raised "
                                 f"{raised} signal(s) for its {len(recipients)} member(s)"
                                 + (f", held back {held}." if held else "."))
    return result


def reflect_projects(store: Store, activity: Activity, being: str, provider: ModelProvider | None, rules: HushRules,
                     *, force: bool = False, min_new: int = MIN_NEW_FOR_REFLECTION,
                     outbox: Callable[[int], None] | None = None) -> list[ReflectionResult]:
    """`reflect_project` for every project in the store, by name (at most one model call each, only for a project
    with `min_new` fresh memories unless `force`: a project with nothing new costs nothing). Returns their
    results, in that order."""
    if provider is None:
        return []
    return [reflect_project(store, activity, being, p, provider, rules, force=force, min_new=min_new, outbox=outbox)
            for p in all_projects(store)]
