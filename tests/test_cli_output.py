"""The CLI's output layer (twin/cli/output.py): reports for people without a Python repr, `--json` from one place,
colour only on a terminal and never towards journald."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from conftest import ROOT
from in_process import twin_cli

from twin.cli import build_parser
from twin.cli.output import aligned, colour_on, entry, label, report_lines, show
from twin.cli.status import print_status


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def texts(lines) -> list[str]:
    return [text for text, _ in lines]


def test_report_lines_are_sections_aligned_pairs_and_one_item_per_line():
    report = {"count": 12, "queues": {"a-queue": 3, "the-longest-queue": 0}, "ratio": 0.125,
              "roots": ["/home/ana/notes", "/srv/docs"], "nothing": [], "ok": False, "when": None,
              "deep": {"top": 1, "inner": {"x_y": True}}, "items": [{"name": "Zoë", "age_s": 5}]}
    lines = texts(report_lines(report))
    assert lines[:5] == ["count:   12", "ratio:   0.125", "nothing: none", "ok:      no", "when:    none"]
    assert lines[5:8] == ["queues", "  a-queue:           3", "  the-longest-queue: 0"]
    assert lines[8:11] == ["roots", "  /home/ana/notes", "  /srv/docs"]
    assert lines[11:15] == ["deep", "  top: 1", "  inner", "    x y: yes"]
    assert lines[15:] == ["items", "  name Zoë, age 5 s"]
    assert not any(ch in line for line in lines for ch in "{}[]'")


def test_headings_are_bold_and_own_parts_are_written_by_their_function():
    lines = report_lines({"n": 1, "mail": {"x": 1}, "index": {"state": "ok"}},
                         own={"mail": lambda value: [f"mail: {value['x']} thread"]})
    assert lines == [("n: 1", None), ("mail: 1 thread", None), ("index", "bold"), ("  state: ok", None)]


@pytest.mark.parametrize(("key", "value", "shown"), [
    ("age_s", 4, "4 s"), ("every_s", 86400.0, "86400 s"), ("took_ms", 12, "12 ms"), ("last_dream", None, "never"),
    ("last_sync", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z"), ("age_s", None, "none"), ("s", 3, "3"),
    ("enabled", True, "yes"), ("score", 0.5, "0.5"), ("score", 2.0, "2"),
])
def test_entry_and_label(key, value, shown):
    assert entry(key, value) == shown
    assert " " not in label("pending_embedding").replace("pending embedding", "")


def test_a_label_is_the_key_in_words():
    assert label("pending_embedding") == "pending embedding" and label("age_s") == "age"


def test_aligned_pads_to_the_longest_key():
    assert aligned([("a", "1"), ("abc", "2")], "  ") == ["  a:   1", "  abc: 2"]
    assert aligned([]) == []


def test_status_for_people_ends_with_ok_or_the_degraded_modes_one_per_line(capsys):
    report = {"being": "owner", "memories": 2, "index": {"state": "checkpointed", "age_s": 3},
              "gmail": {"connected": False}, "degraded": []}
    print_status(report)
    out = capsys.readouterr().out.splitlines()
    assert out == ["being:    owner", "memories: 2", "index", "  state: checkpointed", "  age:   3 s",
                   "gmail: not connected (run `twin connect gmail`)", "degraded: ok"]
    print_status({**report, "degraded": ["index missing: recall searches exactly", "Redis not reachable"]})
    out = capsys.readouterr().out.splitlines()
    assert out[-3:] == ["degraded", "  index missing: recall searches exactly", "  Redis not reachable"]


def test_colour_only_on_a_terminal_and_never_towards_journald(monkeypatch):
    for key in ("NO_COLOR", "JOURNAL_STREAM", "TERM"):
        monkeypatch.delenv(key, raising=False)
    pipe, tty = io.StringIO(), Terminal()
    assert not colour_on(pipe) and colour_on(tty)
    show("title \x1b[2J", file=tty, style="bold")
    assert tty.getvalue() == "\x1b[1mtitle \\x1b[2J\x1b[0m\n"  # the outside text escaped, our codes kept
    show("title", file=pipe, style="bold")
    assert pipe.getvalue() == "title\n"
    for key, value in (("JOURNAL_STREAM", "8:12345"), ("NO_COLOR", "1"), ("TERM", "dumb")):
        monkeypatch.setenv(key, value)
        assert not colour_on(tty), key
        monkeypatch.delenv(key)


def test_every_command_that_prints_a_result_takes_json_and_the_rest_do_not():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    with_json = {name for name, p in sub.choices.items() if any("--json" in a.option_strings for a in p._actions)}
    assert with_json == {"learn", "recall", "memories", "recent", "today", "forget", "activity", "status", "doctor",
                         "profile", "reflect", "signals", "dream", "stats", "neighbors", "telegram", "sync", "email",
                         "people", "project"}


def test_plain_status_of_a_real_store_has_no_repr_and_json_keeps_its_shape(twin_env):
    twin_cli("learn", "My sister Ana lives in Porto and I play the cello.", "--json")
    plain = twin_cli("status")
    assert plain.returncode == 0, plain.stderr
    assert not any(ch in plain.stdout for ch in "{}'") and "\x1b" not in plain.stdout  # not a terminal: no colour
    lines = plain.stdout.splitlines()
    assert "by kind" in lines and "index" in lines
    degraded = lines[lines.index("degraded") + 1:]
    assert "  no model provider (TWIN_LLM_BASE_URL unset): offline extraction, no reflection" in degraded
    assert all(line.startswith("  ") for line in degraded)
    report = json.loads(twin_cli("status", "--json").stdout)
    assert {"being", "memories", "by_kind", "index", "queues", "staged", "files", "model", "signals", "telegram",
            "gmail", "browser", "lifecycle", "data_dir", "degraded"} <= set(report)
    assert f"memories:          {report['memories']}" in lines
    kinds = lines[lines.index("by kind") + 1:lines.index("by kind") + 1 + len(report["by_kind"])]
    assert [line.split() for line in kinds] == [[f"{k}:", str(n)] for k, n in report["by_kind"].items()]


def test_telegram_owners_as_json(twin_env, monkeypatch):
    monkeypatch.setenv("TWIN_TELEGRAM_ALLOWED_USERS", "42")
    assert json.loads(twin_cli("telegram", "owners", "--json").stdout) == [{"user_id": 42, "paired": False}]
    assert twin_cli("telegram", "owners").stdout == "42 (TWIN_TELEGRAM_ALLOWED_USERS)\n"


def test_a_source_that_is_not_set_up_says_so_instead_of_an_empty_answer(twin_env, monkeypatch):
    monkeypatch.delenv("TWIN_TELEGRAM_ALLOWED_USERS", raising=False)
    monkeypatch.delenv("TWIN_TELEGRAM_BOT_TOKEN", raising=False)
    owners = twin_cli("telegram", "owners")
    assert owners.returncode == 0 and "no Telegram owner yet: TWIN_TELEGRAM_BOT_TOKEN is not set" in owners.stdout
    assert json.loads(twin_cli("telegram", "owners", "--json").stdout) == []
    waiting = twin_cli("email", "waiting")
    assert waiting.returncode == 0 and waiting.stdout == "Gmail is not connected, so no thread is read (twin connect " \
        "gmail)\n"


@pytest.mark.slow
def test_python_m_twin_cli_is_the_twin_command():
    proc = subprocess.run([sys.executable, "-m", "twin.cli", "--version"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("twin ")
