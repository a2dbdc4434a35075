"""`twin export` / `twin import` keep the whole twin (issue 19): the people (names, never a token), the projects with
their members, active pointers and bound sources, and every memory in the scope it was in, through the real CLI
into a fresh data dir; a person brought in reaches their project once the owner gives them a new token. Older
exports (memory lines alone) import as before, and hostile records are problem lines that keep the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from in_process import twin_cli

from twin.namespaces import person_namespace, project_namespace
from twin.operations import (
    Context,
    activate_project,
    bind_source,
    capture_memory,
    create_project,
    list_memories,
    share_project,
)
from twin.operations.people import add_person, person_of_token
from twin.operations.scopes import CALLER, Caller, reach
from twin.operations.transfer import import_twin
from twin.settings import load_settings
from twin.store import people, project_sources, projects

OWN = "Owner's allotment is plot 14 on Juniper Lane."
WORK = "Owner's standup is at 9:15 on weekdays."
SHARED = "The flat's boiler is serviced every March by Calor Heating."
HERS = "Alice runs the Tuesday pottery class at the Kiln Works."
HERS_SHARED = "The flat's recycling goes out on Thursday evenings."


def open_ctx() -> Context:
    return Context.open(load_settings())


def as_caller(person) -> Caller:
    return Caller(person.id, person.name)


def by_namespace(ctx: Context) -> dict[str, str]:
    return {m.content: m.namespace for m in ctx.store.list_memories(ctx.being, limit=1000, namespaces=None)}


@pytest.fixture
def world(twin_paths, tmp_path):
    """A twin with the owner's memories (two namespaces), alice with her own memory, project `flat` of the owner's
    shared with alice (active for both) holding a memory of each, a folder and a chat bound to it. Yields what it
    made: `{"alice": id, "flat": id, "folder": path, "scopes": {content: namespace}}`."""
    folder = tmp_path / "Household"
    folder.mkdir()
    ctx = open_ctx()
    try:
        alice = add_person(ctx, "alice")
        capture_memory(ctx, OWN)
        capture_memory(ctx, WORK, namespace="work")
        flat = create_project(ctx, "flat").id
        share_project(ctx, flat, "alice")
        capture_memory(ctx, SHARED, project=flat)
        bind_source(ctx, flat, "files", str(folder))
        bind_source(ctx, flat, "telegram_chat", "-1001234567890")
        activate_project(ctx, flat)
        token = CALLER.set(as_caller(alice))
        try:
            capture_memory(ctx, HERS)
            capture_memory(ctx, HERS_SHARED, project=flat)
            activate_project(ctx, flat)
        finally:
            CALLER.reset(token)
        yield {"alice": alice.id, "flat": flat, "folder": str(folder), "scopes": by_namespace(ctx),
               "created_at": projects.project_by_id(ctx.store, flat).created_at}
    finally:
        ctx.close()


def export_to(path: Path) -> str:
    done = twin_cli("export", "-o", str(path))
    assert done.returncode == 0, done.stderr
    return done.stderr


def move_to_fresh_data_dir(monkeypatch, tmp_path: Path, name: str = "fresh") -> None:
    monkeypatch.setenv("TWIN_DATA_DIR", str(tmp_path / name))


def test_a_whole_twin_export_brings_back_people_projects_bindings_and_every_scope(world, tmp_path, monkeypatch):
    path = tmp_path / "twin.jsonl"
    assert "exported 5 memories, 1 people, 1 projects, 2 bound sources" in export_to(path)
    exported = {m["content"]: m["id"] for m in map(json.loads, path.read_text().splitlines()) if "record" not in m}
    text = path.read_text()
    assert "token" not in text and "pair" not in text  # no token, no digest, no Telegram pairing
    move_to_fresh_data_dir(monkeypatch, tmp_path)
    done = twin_cli("import", str(path))
    assert done.returncode == 0, done.stderr
    assert "imported 5 new" in done.stdout and "1 people, 1 projects, 2 bound sources new" in done.stdout
    assert "twin people token alice" in done.stdout  # she needs a token here: the summary says how

    assert "under new ids" not in done.stdout
    ctx = open_ctx()
    try:
        assert ctx.settings.db_path.parent == tmp_path / "fresh"
        kept = {m.content: m.id for m in ctx.store.list_memories(ctx.being, limit=50, namespaces=None)}
        assert {c: i for c, i in kept.items() if c in exported} == exported  # every memory under its own id
        alice = people.find_person(ctx.store, "alice")
        assert alice.id == world["alice"]  # her id was free here: kept
        assert by_namespace(ctx) == world["scopes"] == {
            OWN: "default", WORK: "work", SHARED: project_namespace(world["flat"]),
            HERS: person_namespace(alice.id, "default"), HERS_SHARED: project_namespace(world["flat"])}
        flat = projects.project_by_id(ctx.store, world["flat"])
        assert (flat.name, flat.owner_id, flat.created_at) == ("flat", "owner", world["created_at"])
        assert projects.members(ctx.store, flat.id) == ["owner", alice.id]
        assert projects.active_pointers(ctx.store) == {"owner": flat.id, alice.id: flat.id}
        assert [(b.kind, b.value) for b in project_sources.bindings_of(ctx.store, flat.id)] == [
            ("files", world["folder"]), ("telegram_chat", "-1001234567890")]
    finally:
        ctx.close()

    issued = twin_cli("people", "token", "alice", "--json")
    assert issued.returncode == 0, issued.stderr
    token = json.loads(issued.stdout)["token"]
    ctx = open_ctx()
    try:
        caller = person_of_token(ctx.store, token)
        assert caller is not None and caller.id == alice.id
        scope = CALLER.set(as_caller(caller))
        try:
            reached = reach(ctx.store)  # her active project came back with her
            assert reached.project.id == world["flat"]
            assert reached.reads == (person_namespace(alice.id, "default"), project_namespace(world["flat"]))
            assert {m.content for m in list_memories(ctx, project="flat")} == {HERS, SHARED, HERS_SHARED}
        finally:
            CALLER.reset(scope)
    finally:
        ctx.close()
    again = json.loads(twin_cli("people", "token", "alice", "--json").stdout)["token"]
    ctx = open_ctx()
    try:
        assert person_of_token(ctx.store, token) is None and person_of_token(ctx.store, again).id == alice.id
    finally:
        ctx.close()


def test_importing_into_a_twin_that_has_some_of_it_matches_people_by_name_and_projects_by_id(
        world, tmp_path, monkeypatch):
    path = tmp_path / "twin.jsonl"
    export_to(path)
    move_to_fresh_data_dir(monkeypatch, tmp_path)
    ctx = open_ctx()
    try:
        here = add_person(ctx, "Alice")  # the same person (names are matched without regard to case), another id
        token = here.token
        done = import_twin(ctx, path.read_bytes().splitlines(keepends=True))
        assert done["skipped"] == 0 and done["tokens_needed"] == []  # she has her token here already
        assert done["records"]["person"] == {"created": 0, "known": 1}
        assert by_namespace(ctx)[HERS] == person_namespace(here.id, "default")  # her old id mapped to this one
        assert projects.members(ctx.store, world["flat"]) == ["owner", here.id]
        assert person_of_token(ctx.store, token).id == here.id
        again = import_twin(ctx, path.read_bytes().splitlines(keepends=True))  # twice: nothing new, nothing bad
        assert (again["created"], again["known"], again["skipped"]) == (0, 5, 0)
        assert again["records"] == {"person": {"created": 0, "known": 1}, "project": {"created": 0, "known": 1},
                                    "binding": {"created": 0, "known": 2}}
    finally:
        ctx.close()


def test_an_export_of_memories_alone_imports_as_before(twin_paths, tmp_path):
    old = [json.dumps({"content": "Owner sings bass in the choir.", "namespace": "choir", "kind": "fact"}),
           json.dumps({"content": "Owner sings alto on Sundays.", "kind": "fact"})]  # before namespaces
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join(old) + "\n")
    done = twin_cli("import", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "imported 2 new, 0 already known, skipped 0\n"
    ctx = open_ctx()
    try:
        assert by_namespace(ctx) == {"Owner sings bass in the choir.": "choir",
                                     "Owner sings alto on Sundays.": "default"}
        assert people.list_people(ctx.store) == [] and projects.all_projects(ctx.store) == []
    finally:
        ctx.close()
    assert twin_cli("export", "--namespace", "choir").stdout.count("\n") == 1  # one namespace: its memories alone


def test_hostile_records_are_problem_lines_and_keep_the_rest(world, tmp_path, monkeypatch):
    path = tmp_path / "twin.jsonl"
    export_to(path)
    lines = path.read_text().splitlines()
    taken = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    ghost = "01BX5ZZKBKACTAV9WEVGEMMVRZ"
    owned = "01BX5ZZKBKACTAV9WEVGEMMVS0"
    hostile = [
        {"record": "group", "id": "x"},  # 1: an unknown record
        {"record": "project", "id": taken, "name": "other", "owner_id": "owner", "created_at": "2026-01-01"},
        {"content": "The garden shed key hangs by the door.", "namespace": project_namespace(taken)},
        {"content": "Someone's note about the harbour.", "namespace": person_namespace("deadbeef", "default")},
        {"record": "project", "id": ghost, "name": "ghosts", "owner_id": "owner",
         "members": [{"person_id": "deadbeef"}]},  # 5: a member nobody knows: nothing of it kept
        {"record": "binding", "kind": "gmail_label", "value": "Label_9", "project_id": ghost},
        {"record": "person", "id": "cafe01", "name": "owner"},
        {"content": "Owner's bike is a green Brompton."},  # 8: a good line among them
    ]
    move_to_fresh_data_dir(monkeypatch, tmp_path)
    ctx = open_ctx()
    try:
        projects.add_project(ctx.store, projects.Project(taken, "garden", "owner", "2026-01-01T00:00:00Z"))
        projects.add_project(ctx.store, projects.Project(owned, "shed", "owner", "2026-01-01T00:00:00Z"))
    finally:
        ctx.close()
    hers = {"record": "project", "id": owned, "name": "shed", "owner_id": world["alice"]}  # the owner's here
    path.write_text("\n".join([*(json.dumps(h) for h in hostile), *lines, json.dumps(hers)]) + "\n")
    done = twin_cli("import", str(path))
    assert done.returncode == 1  # bad lines were skipped; the rest is imported all the same
    problems = [line.strip() for line in done.stderr.splitlines()]
    assert problems == [
        "line 1: record 'group' is not one of person, project, binding",
        f"line 2: project {taken} is here already with another name ('garden')",
        f"line 3: namespace 'project:{taken}': project '{taken}' is refused: its record on line 2 was a bad line",
        "line 4: namespace 'person:deadbeef:default': person 'deadbeef' is in no person record before this line, "
        "nor here",
        "line 5: person 'deadbeef' is in no person record before this line, nor here",
        f"line 6: project '{ghost}' is refused: its record on line 5 was a bad line",
        "line 7: 'owner' is the twin's owner (not 'owner')",
        f"line {len(hostile) + len(lines) + 1}: project {owned} is here already with another owner (the twin's owner)",
    ]
    assert "imported 6 new, 0 already known, skipped 8" in done.stdout
    ctx = open_ctx()
    try:
        scopes = by_namespace(ctx)
        assert "Owner's bike is a green Brompton." in scopes and HERS in scopes and SHARED in scopes
        assert not {"The garden shed key hangs by the door.", "Someone's note about the harbour."} & set(scopes)
        assert projects.project_by_id(ctx.store, ghost) is None
        assert not projects.named_among(ctx.store, "owner", "ghosts")
        assert ctx.store.conn.execute("SELECT COUNT(*) FROM project_members WHERE project_id = ?",
                                      (ghost,)).fetchone() == (0,)
        assert projects.project_by_id(ctx.store, taken).name == "garden"
        assert [p.name for p in people.list_people(ctx.store)] == ["alice"]
    finally:
        ctx.close()


def test_import_capture_leaves_an_exports_records_out_with_a_note(twin_paths, tmp_path):
    path = tmp_path / "twin.jsonl"
    path.write_text(json.dumps({"record": "person", "id": "a1b2c3", "name": "alice"}) + "\n"
                    + json.dumps({"content": "Owner's bike is a green Brompton.", "created_at": "2026-01-02"}) + "\n")
    done = twin_cli("import", "--capture", str(path))
    assert done.returncode == 0, done.stderr  # a record is no bad line, and no memory either
    assert "captured 1 new" in done.stdout and "line 1: a record of a whole-twin export" in done.stderr
    ctx = open_ctx()
    try:
        assert people.list_people(ctx.store) == []
    finally:
        ctx.close()


ALICE_X = "Alice keeps the x project's notes in the red binder."
BOBS = "Bob parks his van on Quarry Road."
BOBS_PIN = "Bob's garage door code is 4471."
BOB_GARAGE = "The garage roof leaks above the workbench."
BOB_CHAT = "-1009876543210"


@pytest.fixture
def rivals(twin_paths):
    """A twin with two people: alice (a memory of her own; her project `x`, active, holding a memory) and bob (a
    memory of his own and a sensitive one; his project `garage`, active, holding a memory, a Telegram chat bound to
    it). Yields `{"alice": id, "bob": id, "x": id, "garage": id}`."""
    ctx = open_ctx()
    try:
        alice, bob = add_person(ctx, "alice"), add_person(ctx, "bob")
        made = {"alice": alice.id, "bob": bob.id}
        for person, name, own, shared in ((alice, "x", [HERS], ALICE_X), (bob, "garage", [BOBS, BOBS_PIN],
                                                                         BOB_GARAGE)):
            token = CALLER.set(as_caller(person))
            try:
                for content in own:
                    capture_memory(ctx, content, sensitivity="sensitive" if content == BOBS_PIN else None)
                made[name] = create_project(ctx, name).id
                capture_memory(ctx, shared, project=made[name])
                activate_project(ctx, made[name])
            finally:
                CALLER.reset(token)
        project_sources.add_binding(ctx.store, project_sources.SourceBinding(
            "telegram_chat", BOB_CHAT, made["garage"], "2026-01-01T00:00:00Z"))
        assert by_namespace(ctx)[BOBS_PIN] == person_namespace(bob.id, "default")
        yield made
    finally:
        ctx.close()


def exported_lines(tmp_path: Path) -> list[dict]:
    """The lines of a whole-twin export of the twin as it is, as JSON objects (to be edited as a tester would)."""
    path = tmp_path / "twin.jsonl"
    export_to(path)
    return [json.loads(line) for line in path.read_text().splitlines()]


def number_of(lines: list[dict], **fields) -> int:
    """The line number (1-based) of the first of `lines` holding every item of `fields`."""
    return next(n for n, line in enumerate(lines, 1) if fields.items() <= line.items())


def import_edited(lines: list[dict], tmp_path: Path, monkeypatch, prefill=None) -> tuple[list[str], str]:
    """Write `lines` as a file and `twin import` it into a fresh data dir (after `prefill(ctx)` there, when given).
    Returns `(problem lines, stdout)`."""
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    move_to_fresh_data_dir(monkeypatch, tmp_path)
    if prefill is not None:
        ctx = open_ctx()
        try:
            prefill(ctx)
        finally:
            ctx.close()
    done = twin_cli("import", str(path))
    assert done.returncode == 1, done.stderr
    return [line.strip() for line in done.stderr.splitlines()], done.stdout


def test_a_second_record_of_one_project_id_puts_nothing_into_either(rivals, tmp_path, monkeypatch):
    """Issue 19: alice's `x` record given bob's project id and put above bob's: bob's record is a bad line, and none
    of the garage's memories, bindings or members land anywhere (the first record's project stays, empty)."""
    lines = exported_lines(tmp_path)
    garage = number_of(lines, record="project", id=rivals["garage"])
    x_record = lines.pop(number_of(lines, record="project", id=rivals["x"]) - 1)
    lines.insert(garage - 1, {**x_record, "id": rivals["garage"]})
    first, second = garage, garage + 1
    problems, out = import_edited(lines, tmp_path, monkeypatch)
    contradiction = (f"project {rivals['garage']!r} is refused: two records of the file claim it (lines {first} and "
                     f"{second}), which contradict each other")
    assert problems == [
        f"line {second}: project {rivals['garage']!r} has another record on line {first}: the file contradicts "
        f"itself, so nothing more of project {rivals['garage']!r} is imported",
        f"line {number_of(lines, record='binding')}: {contradiction}",
        f"line {number_of(lines, content=ALICE_X)}: namespace 'project:{rivals['x']}': project {rivals['x']!r} is in "
        "no project record before this line, nor here",
        f"line {number_of(lines, content=BOB_GARAGE)}: namespace 'project:{rivals['garage']}': {contradiction}",
    ]
    assert "skipped 4" in out
    ctx = open_ctx()
    try:
        assert by_namespace(ctx) == {HERS: person_namespace(rivals["alice"], "default"),
                                     BOBS: person_namespace(rivals["bob"], "default"),
                                     BOBS_PIN: person_namespace(rivals["bob"], "default")}
        assert projects.members(ctx.store, rivals["garage"]) == [rivals["alice"]]  # bob is given nothing of it
        assert projects.active_project(ctx.store, rivals["bob"]) is None
        assert project_sources.bindings_of(ctx.store, rivals["garage"]) == []
    finally:
        ctx.close()


def test_a_second_record_of_one_project_grants_no_membership_and_a_repeat_is_a_bad_line(
        rivals, tmp_path, monkeypatch):
    """A duplicate of bob's project record that adds alice as a member is a bad line (the garage is refused from
    then on: none of its memories go in); a word-for-word repeat of alice's record is a bad line too, her project
    otherwise imported."""
    lines = exported_lines(tmp_path)
    garage = number_of(lines, record="project", id=rivals["garage"])
    x = number_of(lines, record="project", id=rivals["x"])
    record = lines[garage - 1]
    widened = {**record, "members": [*record["members"], {"person_id": rivals["alice"]}]}
    at = max(garage, x)
    lines[at:at] = [widened, dict(lines[x - 1])]
    problems, out = import_edited(lines, tmp_path, monkeypatch)
    contradiction = (f"project {rivals['garage']!r} is refused: two records of the file claim it (lines {garage} "
                     f"and {at + 1}), which contradict each other")
    assert problems == [
        f"line {at + 1}: project {rivals['garage']!r} has another record on line {garage}: the file contradicts "
        f"itself, so nothing more of project {rivals['garage']!r} is imported",
        f"line {at + 2}: project {rivals['x']!r} has the same record on line {x} already",
        f"line {number_of(lines, record='binding')}: {contradiction}",
        f"line {number_of(lines, content=BOB_GARAGE)}: namespace 'project:{rivals['garage']}': {contradiction}",
    ]
    assert "skipped 4" in out
    ctx = open_ctx()
    try:
        assert projects.members(ctx.store, rivals["garage"]) == [rivals["bob"]]
        assert not projects.is_member(ctx.store, rivals["garage"], rivals["alice"])
        scopes = by_namespace(ctx)
        assert BOB_GARAGE not in scopes and scopes[ALICE_X] == project_namespace(rivals["x"])
        assert projects.members(ctx.store, rivals["x"]) == [rivals["alice"]]
    finally:
        ctx.close()


@pytest.mark.parametrize("here", [None, "ALICE"], ids=["fresh", "alice-here"])
def test_two_people_of_one_file_never_merge_by_a_name_in_another_case(rivals, tmp_path, monkeypatch, here):
    """Bob's record renamed `ALICE` is a bad line, and so is every line that needs bob: his project, its binding and
    memories, his own memories (the sensitive one too): none lands in alice's scope. Into a twin that has `ALICE`
    already, the file's alice is she (matched by name, as documented); bob still is not."""
    lines = exported_lines(tmp_path)
    alice, bob = sorted(number_of(lines, record="person", id=rivals[p]) for p in ("alice", "bob"))
    lines[alice - 1], lines[bob - 1] = (next(line for line in lines if line.get("id") == rivals[p])
                                        for p in ("alice", "bob"))  # bob's record after hers (ids order people)
    lines[bob - 1] = {**lines[bob - 1], "name": "ALICE"}
    garage = number_of(lines, record="project", id=rivals["garage"])
    cut = json.dumps(lines[-1])[:60]  # and a line cut short
    problems, out = import_edited(lines, tmp_path, monkeypatch,
                                  None if here is None else lambda ctx: add_person(ctx, here))
    path = tmp_path / "edited.jsonl"
    path.write_text(path.read_text() + cut + "\n")
    bob_refused = f"person {rivals['bob']!r} is refused: its record on line {bob} was a bad line"
    garage_refused = f"project {rivals['garage']!r} is refused: its record on line {garage} was a bad line"
    assert problems == [
        f"line {bob}: name 'ALICE' is taken (any case) by person {rivals['alice']!r} of line {alice}",
        f"line {garage}: {bob_refused}",
        f"line {number_of(lines, record='binding')}: {garage_refused}",
        f"line {number_of(lines, content=BOBS)}: namespace 'person:{rivals['bob']}:default': {bob_refused}",
        f"line {number_of(lines, content=BOBS_PIN)}: namespace 'person:{rivals['bob']}:default': {bob_refused}",
        f"line {number_of(lines, content=BOB_GARAGE)}: namespace 'project:{rivals['garage']}': {garage_refused}",
    ]
    assert "skipped 6" in out
    ctx = open_ctx()
    try:
        her = people.find_person(ctx.store, "alice")
        assert [p.name for p in people.list_people(ctx.store)] == [here or "alice"]
        assert by_namespace(ctx) == {HERS: person_namespace(her.id, "default"), ALICE_X: project_namespace(rivals["x"])}
        assert projects.project_by_id(ctx.store, rivals["garage"]) is None
        assert [p.id for p in projects.projects_of(ctx.store, her.id)] == [rivals["x"]]
    finally:
        ctx.close()
    done = twin_cli("import", str(path))  # again: nothing new; the line cut short says so, with where it ends
    assert done.stderr.splitlines()[-1].strip() == (
        f"line {len(lines) + 1}: not one whole JSON object: the line is cut short (it ends at column 61, the object "
        "still open)")
