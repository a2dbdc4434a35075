"""`twin import --capture` on a real store: every fact captured at its own `created_at`, oldest first, so a later
fact supersedes or reinforces an earlier one whatever the file's order; the shapes of a twin export, dated facts,
mem0's memories and ChatGPT's saved memories; bad lines counted by number, nothing else lost."""

from __future__ import annotations

import json

from conftest import diary_lines
from in_process import twin_cli

from twin.learn.capture_import import capture_import

BEING = "owner"


def jl(*rows) -> list[bytes]:
    return [(r if isinstance(r, str) else json.dumps(r)).encode() + b"\n" for r in rows]


def test_facts_are_captured_oldest_first_so_the_later_one_supersedes(store, activity):
    lines = jl({"content": "Owner lives in Porto.", "created_at": "2025-09-01T08:00:00Z"},  # newest, first line
               {"text": "Owner lives in Lisbon.", "created_at": "2024-02-01T08:00:00+01:00"},
               {"content": "Owner has 2 cats.", "created_at": 1700000000},
               {"content": "Owner has 3 cats.", "created_at": "2025-01-01"},
               {"content": "Owner lives in Lisbon.", "created_at": "2024-06-01T00:00:00Z"})  # said again, later
    report = capture_import(store, activity, BEING, lines)
    assert (report.created, report.deduplicated, report.superseded, report.skipped) == (4, 1, 2, 0)
    current = {m.content: m.created_at for m in store.list_memories(BEING)}
    assert current == {"Owner lives in Porto.": "2025-09-01T08:00:00Z", "Owner has 3 cats.": "2025-01-01T00:00:00Z"}
    lisbon = store.get(report.ids[2])
    assert lisbon.status == "superseded" and lisbon.superseded_by == report.ids[1]
    assert report.ids[5] == report.ids[2] and lisbon.hits == 1  # the repeat reinforced it
    assert store.get(report.ids[3]).superseded_by == report.ids[4]
    line = diary_lines(activity, "learned")[-1]
    assert line.startswith("Captured an import: 4 new, 1 already known") and "Lisbon" not in line


def test_a_newer_memory_already_known_stays_current(store, activity):
    store.insert_memory(BEING, "fact", "Owner lives in Berlin.", "muse", 0.4, created_at="2026-01-01T00:00:00Z")
    report = capture_import(store, activity, BEING, jl({"memory": "Owner lives in Madrid.",
                                                        "created_at": "2023-05-05T00:00:00Z"}))
    assert report.created == 1
    assert [m.content for m in store.list_memories(BEING)] == ["Owner lives in Berlin."]
    madrid = store.get(report.ids[1])
    assert madrid.status == "superseded" and "newer" in madrid.supersede_reason


def test_mem0_and_chatgpt_shapes_and_bad_lines(store, activity):
    mem0 = {"results": [
        {"id": "3c90c3cc-0d44-4b50-8888-8dd25736052a", "memory": "Owner is allergic to peanuts.", "user_id": "u",
         "hash": "h", "metadata": {}, "created_at": "2024-07-20T01:23:45.123456-07:00", "updated_at": None},
        {"id": "x", "memory": "", "created_at": "2024-07-21T00:00:00Z"}]}
    report = capture_import(store, activity, BEING, [json.dumps(mem0, indent=2).encode()], namespace="health")
    assert (report.created, report.skipped) == (1, 1) and report.problems[0].startswith("item 2: no text")
    allergy = store.get(report.ids[1])
    assert (allergy.namespace, allergy.created_at) == ("health", "2024-07-20T08:23:45Z")

    chatgpt = [{"content": "Owner prefers answers in British English.", "enabled": True,
                "create_time": 1710000000.5},
               {"content": "Owner is planning a trip to Japan.", "enabled": False, "create_time": 1710000001}]
    report = capture_import(store, activity, BEING, [json.dumps(chatgpt).encode()])
    assert report.created == 1 and any("enabled: false" in n for n in report.notes)

    lines = jl({"content": "Owner runs on Tuesdays."}, "not json at all", {"content": "Owner swims.", "kind": "x"},
               {"content": "Owner rows on Thursdays.", "created_at": "2999-01-01T00:00:00Z"},
               ["an", "array"], {"content": "Owner cycles to work daily.", "namespace": "bad name"}, "",
               {"content": "Owner climbs on Saturdays.", "created_at": "2025-03-03T00:00:00Z", "source": "notes"})
    report = capture_import(store, activity, BEING, lines)
    assert report.skipped == 5 and [p.split(":")[0] for p in report.problems] == [
        "line 2", "line 3", "line 4", "line 5", "line 6"]
    assert report.created == 2 and any("line 1: no created_at" in n for n in report.notes)
    assert all("Owner" not in p for p in report.problems)  # problems never quote a memory
    assert store.get(report.ids[8]).source == "notes"


def test_the_cli_capture_flag_and_plain_import_unchanged(twin_paths, tmp_path):
    facts = tmp_path / "facts.jsonl"
    facts.write_bytes(b"".join(jl({"content": "Owner works at Acme.", "created_at": "2025-05-01T00:00:00Z"},
                                  {"content": "Owner works at Initech.", "created_at": "2024-01-01T00:00:00Z"},
                                  "{broken")))
    proc = twin_cli("import", "--capture", str(facts), "--namespace", "jobs")
    assert proc.returncode == 1 and proc.stdout.startswith("captured 2 new, 0 already known, 0 updated, 1 superseded")
    assert "line 3: not JSON" in proc.stderr
    assert "Acme" in twin_cli("memories", "--namespace", "jobs").stdout
    assert "Initech" not in twin_cli("memories", "--namespace", "jobs").stdout
    plain = twin_cli("import", str(facts))  # the plain import restores lines as they are: both active
    assert plain.returncode == 1 and plain.stdout.startswith("imported 2 new")
    shown = twin_cli("memories").stdout
    assert "Acme" in shown and "Initech" in shown
