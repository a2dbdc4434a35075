"""Reflection and signals per project (issue 19): a project's new memories are reflected on by themselves (one model
call, the project's memories alone in the prompt: never the owner's profile or private memories), and a signal drawn
from them reaches each member through that member's own Hush gate (their daily ceiling, their dedup), stored per
member; a member reads theirs at `/v1/signals` until unshared; deleting the project or removing the person erases
them. On the fake model server (tests/fake_llm.py: it proposes one signal citing the first fresh memories when it
is shown at least three) and a real store."""

from __future__ import annotations

import json
from datetime import UTC, datetime, time

import pytest
from fake_llm import Reply

from twin.activity import Activity
from twin.operations import (
    Context,
    capture_memory,
    create_project,
    delete_project,
    reflect,
    share_project,
    signals,
    unshare_project,
)
from twin.operations.people import add_person, remove_person
from twin.operations.scopes import CALLER, Caller
from twin.reflection.hush import HushRules
from twin.reflection.project_pass import reflect_project
from twin.settings import load_settings
from twin.store.projects import project_by_id
from twin.store.signals import ProposedSignal, list_signals, record_signal

BEING = "owner"
NOON = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
FLAT = ("The flat's boiler service with Calor Heating is due on 14 December.",
        "The flat's smoke alarm in the hallway needs a new battery.",
        "The flat's rent of 1,450 euros is paid on the first of each month.")
PRIVATE = "Owner is quietly interviewing for a job at Halvorsen Shipping."
RULES = HushRules(quiet_start=time(0), quiet_end=time(0), zone=UTC, daily_ceiling=3, dedup_days=7)


@pytest.fixture
def ctx(provider_env, monkeypatch):
    monkeypatch.setenv("TWIN_HUSH_QUIET_START", "00:00")  # no quiet hours, whatever the hour the suite runs at
    monkeypatch.setenv("TWIN_HUSH_QUIET_END", "00:00")
    context = Context.open(load_settings())
    yield context
    context.close()


def as_caller(person) -> Caller:
    return Caller(person.id, person.name)


def shared_flat(ctx: Context):
    """Project `flat`, shared with alice, holding `FLAT`; the owner's private memory beside it. Returns
    `(project, alice)`."""
    alice = add_person(ctx, "alice")
    flat = create_project(ctx, "flat")
    share_project(ctx, "flat", "alice")
    capture_memory(ctx, PRIVATE)
    for line in FLAT:
        capture_memory(ctx, line, project="flat")
    return project_by_id(ctx.store, flat.id), alice


def test_a_projects_signal_reaches_each_member_and_its_prompt_holds_the_project_alone(ctx, fake_llm):
    project, alice = shared_flat(ctx)
    out = reflect(ctx)
    drawn = [s for s in out.signals if s.get("project_id") == project.id]
    assert {(s["recipient"], s["status"]) for s in drawn} == {("owner", "raised"), (alice.id, "raised")}
    prompts = [r["messages"] for r in fake_llm.chat_requests() if "shared project" in r["messages"][0]["content"]]
    assert len(prompts) == 1
    asked = prompts[0][1]["content"]
    assert all(line in asked for line in FLAT)
    assert "Halvorsen" not in asked and "PROFILE" not in asked  # the owner's own stays out of what members read
    token = CALLER.set(as_caller(alice))
    try:
        hers = signals(ctx)
    finally:
        CALLER.reset(token)
    assert [(s.recipient, s.project_id) for s in hers] == [(alice.id, project.id)]
    assert all(s.recipient == "owner" for s in signals(ctx))  # the owner sees theirs, never alice's copy
    again = reflect(ctx)  # nothing new in the project: no second call for it, no second signal
    assert not [s for s in again.signals if s.get("project_id")]
    assert len([r for r in fake_llm.chat_requests() if "shared project" in r["messages"][0]["content"]]) == 1


def test_each_member_has_their_own_hush_gate(ctx, fake_llm, provider):
    project, alice = shared_flat(ctx)
    for n in range(3):  # alice's ceiling for today is spent; the owner's is not
        record_signal(ctx.store, BEING, ProposedSignal("insight", f"Earlier {n}", f"Something else {n}.", 0.5, [1]),
                      "raised", None, "2026-12-03T09:00:00Z", recipient=alice.id, project_id=project.id)
    result = reflect_project(ctx.store, Activity(ctx.store, BEING), BEING, project, provider, RULES,
                             clock=lambda: NOON)
    by_recipient = {s["recipient"]: s for s in result.signals}
    assert by_recipient["owner"]["status"] == "raised"
    assert by_recipient[alice.id]["status"] == "held_back"
    assert "daily ceiling" in by_recipient[alice.id]["reason"]
    fake_llm.script(Reply(json.dumps({"signals": [{
        "kind": "reminder", "title": "Boiler service soon", "body": "Calor Heating comes on 14 December.",
        "priority": 0.6, "evidence": [by_recipient["owner"]["evidence"][0]]}], "widgets": [], "profile": {},
        "thought": ""})))
    capture_memory(ctx, "The flat's boiler pressure dropped to 0.8 bar.", project="flat")
    forced = reflect_project(ctx.store, Activity(ctx.store, BEING), BEING, project, provider, RULES, force=True,
                             clock=lambda: NOON)
    owner_copy = next(s for s in forced.signals if s["recipient"] == "owner")
    assert owner_copy["status"] == "held_back" and "cites no memory this reflection read" in owner_copy["reason"]


def test_an_unshared_member_sees_no_signal_and_deleting_the_project_erases_them(ctx, fake_llm):
    project, alice = shared_flat(ctx)
    reflect(ctx)
    title = next(s.title for s in list_signals(ctx.store, BEING, recipient=alice.id))
    unshare_project(ctx, "flat", "alice")
    token = CALLER.set(as_caller(alice))
    try:
        assert signals(ctx) == []  # from that moment
    finally:
        CALLER.reset(token)
    removed = delete_project(ctx, project.id).removed
    assert removed["signals"] == 2  # the owner's copy and alice's
    assert list_signals(ctx.store, BEING, recipient=alice.id) == []
    assert not [s for s in signals(ctx) if s.project_id == project.id]
    assert title and title.encode() not in ctx.settings.db_path.read_bytes()  # nor the diary lines repeating it


def test_removing_a_person_erases_the_signals_drawn_for_them(ctx, fake_llm):
    _, alice = shared_flat(ctx)
    reflect(ctx)
    assert list_signals(ctx.store, BEING, recipient=alice.id)
    assert remove_person(ctx, "alice").removed["signals"] == 1
    assert list_signals(ctx.store, BEING, recipient=alice.id) == []
    assert [s.recipient for s in signals(ctx) if s.project_id] == ["owner"]  # the owner's copy stays


def test_the_reflection_job_reflects_each_project_and_hands_the_owners_copy_to_the_outbox(ctx, fake_llm, redis):
    from conftest import run_worker

    from twin.workers.bus import OUTBOX, Bus

    project, alice = shared_flat(ctx)  # the owner's own: one fresh memory, too few for a call of their own
    Bus(redis).enqueue("reflect_being", being=BEING)
    run_worker("learn")
    assert len(fake_llm.chat_requests()) == 1  # the project's call alone
    [hers] = list_signals(ctx.store, BEING, recipient=alice.id)
    [mine] = [s for s in list_signals(ctx.store, BEING) if s.project_id == project.id]
    assert (hers.status, mine.status, hers.title) == ("raised", "raised", mine.title)
    assert [json.loads(m)["signal_id"] for m in redis.lrange(OUTBOX, 0, -1)] == [mine.id]  # alice's waits at the API
