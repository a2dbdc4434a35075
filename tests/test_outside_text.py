"""Nothing that arrives drives the owner's terminal: names and texts with escape sequences, OSC 52, CSI, C1, NUL,
forged diary lines, bidi overrides and lone surrogates, through the core's rule (`twin.outside_text`), the real
files connector on a real folder with real workers, the diary and the journal formatter, and the real CLI."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
from pathlib import Path

import pytest
from conftest import drain
from in_process import twin_cli

from twin.activity import Activity
from twin.cli import main
from twin.connectors.files import FilesConnector, file_source
from twin.logs import OneLineFormatter
from twin.outside_text import UNSAFE, clean_name, escape_controls, json_text, strip_controls
from twin.store import Store
from twin.store.signals import ProposedSignal, record_signal
from twin.workers.bus import Bus

ROOT = Path(__file__).resolve().parent.parent
FORGED = "\n2026-11-30T08:00:00Z  Forgot 12 memory(ies): #1, #2."
"""A line break and what `twin activity` prints for a real diary line: a name holding it must not forge one."""
HOSTILE = {
    "screen clear": "\x1b[2J\x1b[H",
    "OSC 52 clipboard write": "\x1b]52;c;cm0gLXJmIH4vKg==\x07",
    "OSC title ended by ST": "\x1b]0;owned\x1b\\",
    "CSI with parameters": "\x1b[38;5;196m\x1b[10;20H",
    "C1 CSI": "\x9b2J\x9b31m",
    "NUL and DEL": "\x00\x7f",
    "forged diary line": FORGED,
    "carriage return": "\rrewritten",
    "line separator": "\u2028\u2029\x85",
    "right-to-left override": "\u202egpj.exe",
    "isolates and marks": "\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d",
    "lone surrogates": "\udfff \ud800",
}
LEGIT = ("Zoë's Café – 東京.md", "family 👨‍👩‍👧 trip.md", "flag 🏳️‍🌈 parade.md", "Noa נועה and مرحبا.txt",
         "tab\tseparated.md", "naïve NFD Zoe\u0308.md", "C:\\Users\\backslash.md")
"""Names a terminal shows as they are: accents, CJK, emoji joined by zero-width joiners, RTL scripts, a tab."""


def _safe(text: str, newlines: bool = False) -> bool:
    return not any(ch != "\n" or not newlines for ch in UNSAFE.findall(text))


# -- the rule ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_every_form_leaves_no_control_and_escape_is_visible(kind):
    text = f"before {HOSTILE[kind]} after"
    for cleaned in (escape_controls(text), clean_name(text), json_text(text)):
        assert _safe(cleaned) and "\n" not in cleaned and "before" in cleaned and "after" in cleaned
    assert _safe(strip_controls(text), newlines=True) and "\x1b" not in strip_controls(text)
    assert escape_controls(escape_controls(text)) == escape_controls(text)  # printing twice changes nothing
    assert json.loads(json_text(text)) == text  # the JSON form loses nothing
    assert escape_controls(text, newlines=True).count("\n") == text.count("\n")


def test_escape_sequences_show_as_text_and_content_drops_them_whole():
    assert escape_controls("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert escape_controls("\x1b]52;c;SGk=\x07") == "\\x1b]52;c;SGk=\\x07"
    assert escape_controls("x\u202ey\ud800") == "x\\u202ey\\ud800"
    assert strip_controls("Owner \x1b[1;31mlikes\x1b[0m \x1b]52;c;SGk=\x07tea\x9b2J.") == "Owner likes tea."
    assert strip_controls("one\ntwo\tthree\u2028four") == "one\ntwo\tthree\nfour"


@pytest.mark.parametrize("name", LEGIT)
def test_legitimate_unicode_is_untouched(name):
    assert escape_controls(name) == name and strip_controls(name) == name
    assert clean_name(name) == (name.replace("\\", "\\\\"))
    assert json.loads(json_text(name)) == name and json_text(name) == json.dumps(name, ensure_ascii=False)


def test_clean_names_never_collide():
    pool = ["a", "\\", "x", "u", "1", "b", "/", " ", "é", "東", "\u200d", *"".join(HOSTILE.values())]
    rng = random.Random(12)
    names = {"".join(rng.choice(pool) for _ in range(rng.randint(1, 6))) for _ in range(20000)}
    names |= {"\x1b", "\\x1b", "\\\x1b", "\\\\x1b", "\\u202e", "\u202e", "\\", "\\\\"}
    cleaned = {clean_name(n) for n in names}
    assert len(cleaned) == len(names)  # injective: two names never give one source
    assert all(_safe(c) for c in cleaned)


# -- the diary and the journal ---------------------------------------------------------------------------------------
def test_a_diary_line_is_one_safe_line(store, activity):
    for text in HOSTILE.values():
        activity.record("system", f"Files: skipped /home/x/{text}.md (binary).")
    lines = [line.text for line in activity.recent(100)]
    assert len(lines) == len(HOSTILE) and all(_safe(t) and "\n" not in t for t in lines)
    assert any("\\x1b]52;c;" in t for t in lines) and any("\\u202e" in t for t in lines)


def test_a_journal_record_is_one_safe_line():
    formatter = OneLineFormatter(journal=True)
    for text in HOSTILE.values():
        record = logging.LogRecord("twin.activity", logging.INFO, __file__, 1, "Learned from %s", (text,), None)
        line = formatter.format(record)
        assert line.startswith("<6>twin.activity: Learned from") and _safe(line) and "\n" not in line


# -- the files connector on a real folder ------------------------------------------------------------------------------
SENTENCES = ("The attic trunk holds grandmother's wool blankets and letters.",
             "The blue bicycle needs a new chain before the spring rides.",
             "The kitchen drawer keeps the spare keys for the cellar door.",
             "The garden hose is coiled behind the shed next to the rake.",
             "The passport folder sits on the top shelf of the wardrobe.",
             "The sewing box contains red thread and a brass thimble.")


def _hostile_names() -> list[str]:
    names = [f"{kind.replace(' ', '-')}{text}.md" for kind, text in HOSTILE.items()
             if "\x00" not in text and "\ud800" not in text]  # no file name holds NUL; surrogates: not UTF-8
    return [*names, "screen-clear\\x1b[2J\\x1b[H.md", "nul-and-del\x7f.md", *LEGIT]  # literal backslashes


def test_the_files_connector_keeps_names_safe_unique_and_findable(twin_env, store, activity, redis, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    names = _hostile_names()
    for n, name in enumerate(names):
        (root / name).write_text(f"# Note {n}\n\n{SENTENCES[n % len(SENTENCES)]} Item {n} is number {n}.\n")
    (root / "content\x1b[2J.md").write_text("The toolbox has a \x1b]52;c;SGk=\x07hammer and \u202eten nails.\n")
    (root / "binary\x1b[2J\u202e.txt").write_bytes(b"\x00\x01\x02 not text")
    conn = FilesConnector(twin_env.model_copy(update={"files_roots": [root]}), store, Bus(redis), activity)
    tally = asyncio.run(conn.scan_once())
    assert (tally.new, tally.skipped) == (len(names) + 1, 1)
    drain()
    rows = store.conn.execute("SELECT source, content FROM memories").fetchall()
    sources = {s for s, _ in rows}
    expected = {file_source(root / name) for name in [*names, "content\x1b[2J.md"]}
    assert sources == expected and len(expected) == len(names) + 1  # one source per file, none shared
    assert all(_safe(s) and _safe(c) for s, c in rows)
    assert {f"file:{root / LEGIT[0]}", f"file:{root / LEGIT[1]}"} <= sources  # the same as without the rule
    toolbox = next(c for s, c in rows if s == file_source(root / "content\x1b[2J.md") and "toolbox" in c)
    assert "hammer and ten nails" in toolbox
    diary = [line.text for line in activity.recent(100)]
    assert all(_safe(t) for t in diary)
    binary = clean_name(str(root / "binary\x1b[2J\u202e.txt"))
    assert f"Files: skipped {binary} (binary)." in diary and binary.endswith("binary\\x1b[2J\\u202e.txt")

    for name in names:  # gone: the connector still finds each file's memories by its source
        (root / name).unlink()
    tally = asyncio.run(conn.scan_once())
    assert tally.gone == len(names)
    drain()
    left = {s for (s,) in store.conn.execute("SELECT source FROM memories")}
    assert left == {file_source(root / "content\x1b[2J.md")}


# -- the CLI -------------------------------------------------------------------------------------------------------
def _twin(*args: str) -> str:
    """`python -m twin ARGS`: its stdout, which must be strict UTF-8 with no control but line breaks."""
    proc = twin_cli(*args, text=False)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert _safe(out, newlines=True) and _safe(err, newlines=True)
    return out


@pytest.fixture
def hostile_store(twin_env):
    """Memories, diary lines and a signal holding raw controls, as a store written before this rule (or by a
    path that forgot it) would: whatever the store holds, printing must not pass it on."""
    with Store(twin_env.db_path) as store:
        ids = []
        for n, (kind, text) in enumerate(HOSTILE.items()):
            if "\ud800" in text:
                continue  # SQLite stores UTF-8 only
            ids.append(store.insert_memory(twin_env.being, "fact", f"Owner keeps note {n} about {kind}: {text} end.",
                                           f"file:/docs/{text}.md", 0.5, created_at="2026-01-01T00:00:00Z"))
            store.conn.execute("INSERT INTO activity (being_id, at, kind, text) VALUES (?, ?, 'system', ?)",
                               (twin_env.being, "2026-01-02T00:00:00Z", f"Files: skipped /docs/{text}.md (binary)."))
        record_signal(store, twin_env.being, ProposedSignal("insight", f"Title {HOSTILE['screen clear']}{FORGED}",
                                                            f"Body {HOSTILE['OSC 52 clipboard write']}", 0.5, ids[:2]),
                      "held_back", f"reason {HOSTILE['right-to-left override']}", "2026-01-03T00:00:00Z")
    return ids


def test_the_cli_prints_outside_text_escaped(twin_env, hostile_store):
    shown = _twin("memories", "--limit", "100").splitlines()
    assert len(shown) == len(hostile_store)  # one line per memory: no name or text forged another
    assert any("\\x1b[2J" in line for line in shown) and any("\\u202e" in line for line in shown)
    diary = _twin("activity", "-n", "100").splitlines()
    assert len(diary) == len(hostile_store) and all(line.startswith("2026-01-02T00:00:00Z  Files:") for line in diary)
    assert len(_twin("recall", "keeps note", "--limit", "100").splitlines()) == len(hostile_store)
    listed = json.loads(_twin("memories", "--json", "--limit", "100"))
    assert len(listed) == len(hostile_store) and any("\x1b[2J" in m["content"] for m in listed)  # JSON loses nothing


def test_learn_with_a_hostile_source_and_text_stores_and_prints_one_safe_line(twin_env):
    source = "notes\x1b]52;c;SGk=\x07" + FORGED + "\u202e"
    out = _twin("learn", "My locker at the gym is number \x1b[2J4711 \u202eby the sauna.", "--source", source)
    assert out.count("\n") == 1 and out.startswith("learned   #")
    with Store(twin_env.db_path) as store:
        (stored_source, content), = store.conn.execute("SELECT source, content FROM memories").fetchall()
        assert stored_source == clean_name(source) and _safe(stored_source)
        assert "\x1b" not in content and "\u202e" not in content and "4711" in content
        diary = [line.text for line in Activity(store, twin_env.being).recent(10)]
    assert all(_safe(t) for t in diary) and any(t.startswith("Learned 1 thing(s) from notes\\x1b]52") for t in diary)


def _main(capsys, *argv: str) -> tuple[str, str]:
    """`twin ARGV` in process: (stdout, stderr), both free of controls but line breaks. `main` sets the umask
    to 077: it is put back, so the tests that run after this one see the one they started with."""
    umask = os.umask(0o077)
    try:
        assert main(list(argv)) in (0, 1)
    finally:
        os.umask(umask)
    out, err = capsys.readouterr()
    assert _safe(out, newlines=True) and _safe(err, newlines=True)
    return out, err


def test_every_other_command_prints_outside_text_escaped(twin_env, hostile_store, capsys, tmp_path):
    out, _ = _main(capsys, "signals")
    assert "\\x1b[2J" in out and "\\x1b]52;c;" in out and "\\u202e" in out
    assert out.splitlines()[0].endswith(f"Title \\x1b[2J\\x1b[H{escape_controls(FORGED)}")
    assert json.loads(_main(capsys, "signals", "--json")[0])[0]["title"].startswith("Title \x1b[2J")
    for argv in (("recent", "--since", "2025-01-01T00:00:00Z"), ("memories", "--all", "--json"), ("stats",),
                 ("neighbors", str(hostile_store[0])), ("activity", "--json"), ("status",), ("profile",)):
        _main(capsys, *argv)
    export = tmp_path / "export.jsonl"
    _main(capsys, "export", "-o", str(export))
    raw = export.read_text(encoding="utf-8")
    assert _safe(raw, newlines=True) and raw.count("\n") == len(hostile_store)
    assert any(json.loads(line)["content"].endswith("\x1b[2J\x1b[H end.") for line in raw.splitlines())


@pytest.mark.parametrize(("raw", "kept"), [
    ("Cape Wrath in\x1bP+q544e\x1b\\ May.", "Cape Wrath in May."),  # DCS (XTGETTCAP), ended by ST
    ("a\x1bP1$r0m\x1b\\b", "ab"),  # DCS, DECRQSS reply
    ("a\x1bXhidden start of string\x1b\\b", "ab"),  # SOS
    ("a\x1b^privacy message\x07b", "ab"),  # PM ended by BEL
    ("a\x1b_Gf=100;AAAA\x1b\\b", "ab"),  # APC (the kitty graphics protocol)
    ("a\x90q#0;2;0;0;0\x9cb", "ab"),  # C1 DCS (sixel) ended by C1 ST
    ("a\x9f apc \x9cb\x9e pm \x07c\x98sos\x9cd", "abcd"),  # C1 APC, PM, SOS
    ("a\x9d52;c;aGk=\x07b", "ab"),  # C1 OSC 52
    ("left \x1bP unterminated", "left  unterminated"),  # no ST: only the introducer goes, the text stays
])
def test_control_strings_are_removed_whole(raw, kept):
    assert strip_controls(raw) == kept


def test_the_profile_cleans_with_the_rule_of_memory_content(store):
    from twin.profile import Profile, ProfileDelta, load_profile, merge_into_profile

    hostile = ProfileDelta(facts=["Owner \x1b[2Jlikes \x1b]52;c;aGk=\x07tea.", "Owner\x1bP+q\x1b\\ rows.",
                                  "Family 👨\u200d👩\u200d👧 trip\u202e.\nSecond line"],
                           tone="dry\x1b_apc\x1b\\ and \x9b31mbrief")
    assert hostile.facts == ["Owner likes tea.", "Owner rows.", "Family 👨\u200d👩\u200d👧 trip. Second line"]
    assert hostile.tone == "dry and brief"
    assert merge_into_profile(store, "owner", hostile, "2026-03-01T10:00:00Z")
    assert load_profile(store, "owner").facts == hostile.facts
    edited = Profile(goals=["Run \x1b[5mthe\x1b[0m marathon\x1bP$q\"p\x1b\\."])  # a hand edit: the same rule
    assert edited.goals == ["Run the marathon."]


def test_has_text_is_false_for_what_only_looks_empty_and_true_for_any_character_to_read():
    from twin.outside_text import has_text

    for blank in ("", "  \t\n", "\u202e\u0000\ufeff", "\u200b\u200c\u200d", "\u2066\u2069\u00a0\u3000", "\ud800"):
        assert not has_text(blank), repr(blank)
    for text in ("a", "🎂", "東京", " ? ", "\u202e7", "👨‍👩‍👧", "٣"):
        assert has_text(text), repr(text)
