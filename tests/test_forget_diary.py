"""Diary lines that name a source: written once per file and reason, and rewritten when the source is forgotten.

Real files, the real files connector (scans only), a real SQLite store and the real CLI. Nothing is mocked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from erasure import traces
from in_process import twin_cli

from twin.activity import naming
from twin.connectors.files import FilesConnector
from twin.lifecycle.forgetting import FORGOTTEN_FILE_REASON, carry_out, plan
from twin.store import manifest
from twin.workers.bus import Bus

MAX_BYTES = 500


def scan(settings, store, redis, activity, root: Path) -> None:
    conn = FilesConnector(settings.model_copy(update={"files_roots": [root], "files_max_bytes": MAX_BYTES}), store,
                          Bus(redis), activity)
    asyncio.run(conn.scan_once())


def texts(activity) -> list[str]:
    return [line.text for line in activity.recent(1000)]


def grow(path: Path, times: int, step: int = 300) -> None:
    """Append `step` bytes `times` times (a log that keeps growing past the size limit)."""
    with path.open("a") as fh:
        for _ in range(times):
            fh.write("w" * step)


@pytest.fixture
def root(tmp_path) -> Path:
    path = (tmp_path / "papers").resolve()
    path.mkdir()
    return path


def test_a_growing_file_is_reported_once_per_reason(twin_env, store, activity, redis, root):
    log_file = root / "rotor-trace.txt"
    log_file.write_text("r" * (MAX_BYTES + 10))
    for _ in range(5):  # a scan after every write, as the watcher does for a growing file
        scan(twin_env, store, redis, activity, root)
        grow(log_file, 1)
    skipped = [t for t in texts(activity) if t.startswith("Files: skipped")]
    assert skipped == [f"Files: skipped {log_file} (too large)."]
    log_file.write_text("The rotor was balanced on the second of March.\n")  # learnable again
    scan(twin_env, store, redis, activity, root)
    assert manifest.get(store, twin_env.being, log_file).state == "indexed"
    grow(log_file, 3)  # too large again, now learned: its memories are kept, and that is said once
    scan(twin_env, store, redis, activity, root)
    scan(twin_env, store, redis, activity, root)
    assert [t for t in texts(activity) if t.startswith("Files: skipped")] == skipped
    assert [t for t in texts(activity) if t.startswith("Files: cannot learn")] == [
        f"Files: cannot learn {log_file} now (too large); the memories it gave are kept until it can be read again"
        " or is gone."]
    assert manifest.get(store, twin_env.being, log_file).state == "indexed"


def test_forgetting_a_source_rewrites_every_diary_line_that_names_it(twin_env, store, activity, redis, root):
    odd = root / "quarry\\back\nslash.txt"  # a backslash and a line break: the line shows it escaped
    plain = root / "quarry-dump.txt"
    kept = root / "harbour-dump.txt"
    for path in (odd, plain, kept):
        path.write_text("q" * (MAX_BYTES + 1))
    gone = root / "quarry-old.bin"
    scan(twin_env, store, redis, activity, root)
    # a line written before the diary kept subjects: found by its text
    store.conn.execute("INSERT INTO activity (being_id, at, kind, text) VALUES (?, '2026-01-01T00:00:00Z',"
                       " 'indexed_file', ?)", (twin_env.being, f"Files: skipped {gone} (unreadable: gone)."))
    before = texts(activity)
    assert sum("quarry" in t for t in before) == 3 and any("harbour-dump" in t for t in before)

    todo = plan(store, twin_env.being, source=f"file:{root}/quarry*")
    assert len(todo.diary_lines) == 3 and todo.counts()["diary_lines"] == 3
    assert todo.to_dict()["counts"]["diary_lines"] == 3
    assert texts(activity) == before  # the plan changed nothing
    carry_out(store, activity, todo)

    after = texts(activity)
    assert not [t for t in after if "quarry" in t]
    assert f"Files: skipped {kept} (too large)." in after  # another file's line is untouched
    assert after.count("Files: skipped a forgotten file (too large).") == 2
    assert "Files: skipped a forgotten file (unreadable: gone)." in after
    assert "3 diary lines naming it" in after[-1]
    assert naming(store, twin_env.being, f"file:{root}/quarry*") == []
    # a file that still exists keeps its manifest row (that is how it stays forgotten); one that is gone leaves no trace
    assert traces(twin_env.data_dir, ["quarry-old"]) == []

    # the forgotten files keep growing: nothing names them again, and their rows stay forgotten
    grow(plain, 4)
    grow(odd, 2)
    scan(twin_env, store, redis, activity, root)
    assert not [t for t in texts(activity) if "quarry" in t]
    assert manifest.get(store, twin_env.being, plain).reason == FORGOTTEN_FILE_REASON


def test_forget_about_a_name_rewrites_lines_naming_a_file_with_it(twin_env, store, activity, redis, root):
    named = root / "Wilhelmina Okafor invoices.txt"
    named.write_text("x" * (MAX_BYTES + 1))
    other = root / "boiler.txt"
    other.write_text("y" * (MAX_BYTES + 1))
    scan(twin_env, store, redis, activity, root)
    carry_out(store, activity, plan(store, twin_env.being, about="Wilhelmina Okafor"))
    after = texts(activity)
    assert not [t for t in after if "Okafor" in t] and f"Files: skipped {other} (too large)." in after


def test_twin_forget_dry_run_counts_the_diary_lines(twin_env, store, activity, redis, root):
    for name in ("marl-1.txt", "marl-2.txt"):
        (root / name).write_text("m" * (MAX_BYTES + 1))
    scan(twin_env, store, redis, activity, root)
    cli = ["forget", "--source", f"file:{root}/marl*"]
    dry = twin_cli(*cli, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "activity: 2 diary line(s) naming it" in dry.stdout
    as_json = twin_cli(*cli, "--dry-run", "--json")
    assert json.loads(as_json.stdout)["counts"]["diary_lines"] == 2
    done = twin_cli(*cli, "--yes")
    assert done.returncode == 0, done.stderr
    shown = twin_cli("activity")
    assert "marl-" not in shown.stdout and shown.stdout.count("a forgotten file") == 2


def test_a_forgotten_chat_is_no_longer_named_in_the_diary(twin_env, store, activity):
    activity.record("system", "Telegram: ignored your message in chat -100777: the twin answers in private chats.",
                    subject="telegram:-100777")
    activity.record("system", "Telegram: ignored your message in chat -100888: the twin answers in private chats.",
                    subject="telegram:-100888")
    carry_out(store, activity, plan(store, twin_env.being, source="telegram:-100777"))
    after = texts(activity)
    assert "Telegram: ignored your message in a forgotten chat: the twin answers in private chats." in after
    assert not [t for t in after if "-100777" in t] and [t for t in after if "-100888" in t]
