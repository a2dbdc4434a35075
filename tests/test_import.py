"""`twin import` never loses a good line: a hostile file (dozens of kinds of bad lines interleaved with good ones)
through the real CLI and `import_memories` on a real store; every good line lands, every bad one is reported
with its line number and why, and no report line carries a memory's text or a terminal control."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from twin.learn.import_lines import MAX_LINE_BYTES, bounded_lines
from twin.learn.transfer import import_memories
from twin.outside_text import UNSAFE
from twin.store import Store

ROOT = Path(__file__).resolve().parent.parent
MARK = "ZEBRAQUILL"
"""In every bad line's content: no problem message may quote it."""


def good(n: int, **fields) -> bytes:
    """A good line: a distinct memory (`Owner keeps good item N …`) with `fields` on top."""
    row = {"content": f"Owner keeps good item {n} in the blue box.", "kind": "fact", **fields}
    return json.dumps(row, ensure_ascii=False).encode()


def bad(**fields) -> bytes:
    return json.dumps({"content": f"Owner hides {MARK} here.", **fields}).encode()


def hostile_lines() -> tuple[list[bytes], dict[int, str], dict[str, dict]]:
    """`(lines, {line number: a word its problem must hold}, {content of a good line: fields it must land with})`.
    Good and bad lines alternate; blank lines (also CRLF and whitespace) are neither."""
    digits = "9" * 5000
    bad_lines: list[tuple[bytes, str]] = [
        (b"{oops", "not JSON"), (b"[1, 2]", "not a JSON object"), (b'"just text"', "not a JSON object"),
        (b"42", "not a JSON object"), (b"null", "not a JSON object"), (b"{}", "content"),
        (json.dumps({"content": 7}).encode(), "content"), (json.dumps({"content": ["a"]}).encode(), "content"),
        (json.dumps({"content": ""}).encode(), "content"), (json.dumps({"content": "   "}).encode(), "content"),
        (json.dumps({"content": "\x1b[2J\x00\u202e"}).encode(), "control characters"),
        (json.dumps({"content": "\u202e\u200b\ufeff"}).encode(), "invisible"),
        (bad(kind="feeling"), "kind"), (bad(kind=3), "kind"), (bad(kind=["fact"]), "kind"),
        (bad(sensitivity="secret"), "sensitivity"), (bad(status="deleted"), "status"), (bad(tier="hot"), "tier"),
        (bad(importance="0.5"), "importance"), (bad(importance=True), "importance"),
        (bad(importance=1.5), "importance"),
        (bad(importance=-0.1), "importance"), (bad()[:-1] + b', "importance": NaN}', "NaN"),
        (bad()[:-1] + b', "importance": -Infinity}', "Infinity"),
        (bad()[:-1] + b', "importance": 1e400}', "importance"),
        (bad(hits=-1), "hits"), (bad(hits=2.5), "hits"), (bad(hits="3"), "hits"), (bad(hits=10**30), "hits"),
        (bad(hits=True), "hits"), (bad()[:-1] + b', "hits": ' + digits.encode() + b"}", "digits"),
        (bad(created_at="yesterday"), "created_at"), (bad(created_at="03/01/2026"), "created_at"),
        (bad(created_at="Sun, 01 Mar 2026 10:00:00 +0000"), "created_at"),
        (bad(created_at="2999-01-01T00:00:00Z"), "future"), (bad(created_at=1767225600000), "future"),
        (bad(created_at=-1), "before 1970"), (bad(created_at="1969-12-31T23:59:59Z"), "before 1970"),
        (bad(created_at=True), "created_at"), (bad(created_at={"t": 1}), "created_at"),
        (bad(created_at=1e300), "created_at"),
        (bad(created_at=""), "created_at"), (bad(last_accessed="not a time"), "last_accessed"),
        (bad(updated_at=[1]), "updated_at"), (bad(source=123), "source"), (bad(source={"a": 1}), "source"),
        (bad(tags="a,b"), "tags"), (bad(tags=[1, 2]), "tags"),
        (b'{"content": "Owner hides ' + MARK.encode() + b' here.", "content": "Owner keeps B."}', "duplicate key"),
        (b'{"content": "Owner hides ' + MARK.encode() + b'.", "deep": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
         "nested"),
        (b'{"content": "Owner likes caf\xe9 ' + MARK.encode() + b'."}', "utf-8"),
        (b'{"content": "' + b"x" * (10 * 1024 * 1024) + b'"}', "longer than"),
        (b'{"content": "Owner hides \x00 ' + MARK.encode() + b'."}', "not JSON"),
        (bad() + b" trailing", "not JSON"), (b'{"content": "Owner hides ' + MARK.encode(), "cut short"),
        ("\ufeff".encode() + bad(), "not JSON"),  # a BOM is skipped before the first line only
        (bad(extra=float("nan")), "NaN"),  # NaN even in a field import ignores: it is not JSON
    ]
    good_lines: list[tuple[bytes, dict]] = [
        (good(0), {"kind": "fact"}),
        (good(1, created_at=1767225600), {"created_at": "2026-01-01T00:00:00Z"}),  # seconds since 1970, UTC
        (good(2, created_at=1767225600.75), {"created_at": "2026-01-01T00:00:00Z"}),
        (good(3, created_at="2026-03-01"), {"created_at": "2026-03-01T00:00:00Z"}),
        (good(4, created_at="2026-03-01T10:00:00+02:00"), {"created_at": "2026-03-01T08:00:00Z"}),
        (good(5, created_at="2026-03-01 10:00:00"), {"created_at": "2026-03-01T10:00:00Z"}),
        (good(6, created_at="2026-03-01T10:00:00.123456Z"), {"created_at": "2026-03-01T10:00:00Z"}),
        (good(7, created_at="20260301T100000Z"), {"created_at": "2026-03-01T10:00:00Z"}),
        (good(8, created_at=None, last_accessed=None, updated_at=None), {"last_accessed": None}),
        (good(9, kind="preference", importance=1, hits=0, sensitivity="public", status="active", tier="cold"),
         {"kind": "preference", "importance": 1.0, "tier": "cold", "sensitivity": "public"}),
        (good(10, importance=0), {"importance": 0.0}),
        (good(11, sensitive=True), {"sensitivity": "sensitive"}),
        (good(12, unknown_field={"a": [1, 2]})[:-1] + b', "x": 1e999}', {"kind": "fact"}),  # unknown: left, noted
        (good(13, tags=["home\x1b[31m", "  ", "box\u202e"]), {"tags": ["home", "box"]}),
        (good(14, source="file:/notes/a\x1b[2J\nb.md"), {"source": "file:/notes/a\\x1b[2J\\x0ab.md"}),
        (good(15, provenance={"source_type": "muse", "nested": {"deep": 1}, "confidence": 0.5}),
         {"provenance": {"source_type": "muse", "confidence": 0.5}}),
        (good(16, hits=2**62), {"hits": 2**62}),
        (json.dumps({"content": "Owner keeps good item 17 \x1b]52;c;SGk=\x07in\x00 the \ud800box."}).encode(),
         {"content": "Owner keeps good item 17 in the box."}),  # controls, NUL and a lone surrogate dropped
        (good(18, superseded_by=None, id=True), {"status": "active"}),
    ]
    lines = ["\ufeff".encode() + good_lines[0][0]]  # a BOM before the first line costs nothing
    problems: dict[int, str] = {}
    expected = {json.loads(good_lines[0][0])["content"]: good_lines[0][1]}
    fillers = [b"", b"\r", b"   \t"]
    for n, (line, word) in enumerate(bad_lines):
        lines.append(line + (b"\r" if n % 3 == 0 else b""))  # some lines end in CRLF
        problems[len(lines)] = word
        if n % 5 == 0:
            lines.append(fillers[n % 3])  # blank lines are neither good nor bad
        if n + 1 < len(good_lines):
            text, fields = good_lines[n + 1]
            lines.append(text + (b"\r" if n % 2 else b""))
            expected[fields.get("content") or json.loads(text.decode("utf-8", "surrogatepass"))["content"]] = fields
    return lines, problems, expected


def _write(path: Path) -> tuple[dict[int, str], dict[str, dict]]:
    lines, problems, expected = hostile_lines()
    path.write_bytes(b"\n".join(lines) + b"\n")
    return problems, expected


def _check_landed(db: Path, expected: dict[str, dict]) -> None:
    with Store(db) as store:
        landed = {m.content: m.to_dict() for m in store.list_memories("owner", limit=1000, include_superseded=True)}
    assert set(landed) == set(expected)  # every good line landed, nothing of a bad one
    for content, fields in expected.items():
        assert {k: landed[content][k] for k in fields} == fields, content
    assert not any(MARK in c for c in landed)


def test_every_good_line_of_a_hostile_file_lands_and_every_bad_one_is_reported(tmp_path):
    problems, expected = _write(tmp_path / "hostile.jsonl")
    assert len(problems) >= 50 and len(expected) >= 19
    with Store(tmp_path / "twin.db") as store, open(tmp_path / "hostile.jsonl", "rb") as source:
        report = import_memories(store, None, "owner", bounded_lines(source))
    assert (report["created"], report["known"], report["skipped"]) == (len(expected), 0, len(problems))
    reported = {int(p.split(":")[0].removeprefix("line ")): p for p in report["problems"]}
    assert set(reported) == set(problems) and len(report["problems"]) == len(problems)
    for number, word in problems.items():
        assert word.lower() in reported[number].lower(), reported[number]
    assert all(MARK not in p and not UNSAFE.search(p) and len(p) < 200 for p in report["problems"])
    _check_landed(tmp_path / "twin.db", expected)


@pytest.mark.slow
def test_twin_import_prints_every_problem_and_imports_the_rest(tmp_path):
    problems, expected = _write(tmp_path / "hostile.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_")}
    env.update({"TWIN_DATA_DIR": str(tmp_path / "data"), "TWIN_CONFIG_DIR": str(tmp_path / "config"),
                "TWIN_RUNTIME_DIR": str(tmp_path / "run"), "TWIN_REDIS_URL": "unix:///nonexistent/redis.sock",
                "TWIN_ENV_FILE": str(tmp_path / "config" / "env"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
                "HOME": str(tmp_path)})
    proc = subprocess.run([sys.executable, "-m", "twin", "import", str(tmp_path / "hostile.jsonl")], cwd=ROOT,
                          capture_output=True, timeout=120, env=env, check=False)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert proc.returncode == 1 and "Traceback" not in err, err  # lines were skipped: exit 1, the rest imported
    assert out == f"imported {len(expected)} new, 0 already known, skipped {len(problems)} (2 imported with a note)\n"
    printed = [line for line in err.splitlines() if not line.endswith("(imported)")]
    noted = [line for line in err.splitlines() if line.endswith("(imported)")]
    assert len(noted) == 2 and "field 'unknown_field', 'x' is not one of an export line: left out" in noted[0]
    assert "id True is not a memory id" in noted[1], noted  # good line 18's id
    assert sorted(int(line.split(":")[0].strip().removeprefix("line ")) for line in printed) == sorted(problems)
    assert MARK not in err and not UNSAFE.search(err.replace("\n", ""))
    _check_landed(tmp_path / "data" / "twin.db", expected)
    again = subprocess.run([sys.executable, "-m", "twin", "import", str(tmp_path / "hostile.jsonl")], cwd=ROOT,
                           capture_output=True, timeout=120, env=env, check=False)
    assert again.stdout.decode() == f"imported 0 new, {len(expected)} already known, skipped {len(problems)}\n"


def test_a_line_longer_than_the_bound_is_read_past_with_bounded_memory(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_bytes(good(1) + b"\n" + b"y" * (3 * MAX_LINE_BYTES + 17) + b"\n" + good(2) + b"\n" + b"z" * 5000)
    with open(path, "rb") as source:
        lines = list(bounded_lines(source))
    assert [len(line) for line in lines] == [len(good(1)) + 1, MAX_LINE_BYTES + 1, len(good(2)) + 1, 5000]
    assert lines[2] == good(2) + b"\n"


@pytest.mark.slow
def test_a_line_imported_otherwise_than_it_says_gets_a_note_and_a_clean_file_exits_0(tmp_path):
    from twin.learn.transfer import import_memories

    lines = [json.dumps({"content": "Owner keeps bees on the roof.", "kind": None}),
             json.dumps({"content": "Owner's sister Mirela lives in Cluj.", "being_id": "mirela", "tier": None}),
             json.dumps({"content": "Owner tunes the cello on Sundays.", "being_id": "owner", "kind": "episode"}),
             json.dumps({"content": "Owner bought a kayak.", "sensitivity": None, "status": None})]
    with Store(tmp_path / "twin.db") as store:
        report = import_memories(store, None, "owner", lines)
        kinds = {m.content: (m.kind, m.being_id, m.tier) for m in store.list_memories("owner")}
    assert report["created"] == 4 and report["skipped"] == 0
    assert report["notes"] == ["line 1: kind null: imported as fact",
                               "line 2: tier null: imported as warm",
                               "line 2: being_id 'mirela' is not this twin's (owner): imported as owner's",
                               "line 4: sensitivity null: imported as private",
                               "line 4: status null: imported as active"]
    assert kinds["Owner keeps bees on the roof."] == ("fact", "owner", "warm")
    assert kinds["Owner's sister Mirela lives in Cluj."][1] == "owner"

    dump = tmp_path / "noted.jsonl"
    dump.write_text("\n".join(lines) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_")}
    env.update({"TWIN_DATA_DIR": str(tmp_path / "data"), "TWIN_CONFIG_DIR": str(tmp_path / "config"),
                "TWIN_RUNTIME_DIR": str(tmp_path / "run"), "TWIN_REDIS_URL": "unix:///nonexistent/redis.sock",
                "TWIN_ENV_FILE": str(tmp_path / "config" / "env"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
                "HOME": str(tmp_path)})
    proc = subprocess.run([sys.executable, "-m", "twin", "import", str(dump)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=env, check=False)
    assert proc.returncode == 0, proc.stderr  # nothing skipped: notes are no failure
    assert proc.stdout == "imported 4 new, 0 already known, skipped 0 (5 imported with a note)\n"
    assert "  line 1: kind null: imported as fact (imported)" in proc.stderr.splitlines()
    assert "being_id 'mirela'" in proc.stderr
    helped = subprocess.run([sys.executable, "-m", "twin", "import", "--help"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, env=env, check=False)
    assert "Exit 1 when any line was skipped" in " ".join(helped.stdout.split())


def test_an_export_imported_into_a_fresh_store_keeps_every_id_whatever_the_memories_dates(tmp_path):
    """An export in `created_at` order put a memory imported with an old date before older ids, and an import into
    a fresh data dir gave 13,095 of 13,097 memories new ids (a breaker run): the export goes in id order."""
    import io

    from twin.learn.transfer import export_memories

    with Store(tmp_path / "a.db") as store, store.atomic():
        made = [store.insert_memory("owner", "fact", f"Owner keeps box {n} in the loft.", "test", 0.5,
                                    created_at=f"20{25 - n:02d}-03-01T10:00:00Z") for n in range(6)]  # newest first
        store.delete_memories([made[2]])
        out = io.StringIO()
        export_memories(store, "owner", out)
    with Store(tmp_path / "b.db") as fresh:
        report = import_memories(fresh, None, "owner", out.getvalue().splitlines())
        assert report["renumbered"] == 0 and report["created"] == 5, report
        assert sorted(m.id for m in fresh.list_memories("owner", limit=50)) == [i for i in made if i != made[2]]


def test_a_supersession_cycle_or_a_self_reference_in_an_import_leaves_one_memory_current(tmp_path):
    """Two lines superseded by each other imported as they said, and both were hidden from recall for good (a
    breaker run): the line that would close the cycle is imported active, with a problem line saying why."""
    lines = [json.dumps({"id": 503, "content": "Owner keeps the cycle pump in the shed.", "status": "superseded",
                         "superseded_by": 504}),
             json.dumps({"id": 504, "content": "Owner keeps the cycle pump in the van.", "status": "superseded",
                         "superseded_by": 503}),
             json.dumps({"id": 505, "content": "Owner keeps the tyre levers in the hall.", "status": "superseded",
                         "superseded_by": 505})]
    with Store(tmp_path / "t.db") as store:
        report = import_memories(store, None, "owner", lines)
        active = [m.content for m in store.list_memories("owner", limit=50)]
        assert active == ["Owner keeps the tyre levers in the hall.", "Owner keeps the cycle pump in the van."]
        assert store.get(503).superseded_by == 504
        assert any("line 2: superseded by 503, which is superseded by it in turn" in p for p in report["problems"])
        assert any("line 3: superseded by itself" in p for p in report["problems"]), report["problems"]


def test_what_an_import_leaves_out_of_a_line_is_said(tmp_path):
    """Malformed edges were dropped and ids that are no ids renumbered without a word (a breaker run)."""
    lines = [json.dumps({"id": 500, "content": "Owner keeps the ladder in the barn.",
                         "edges": [[501, "co_occurs", 0.5], [99999, "co_occurs", 0.5], [501, "bogus", 2.5]]}),
             json.dumps({"id": 501, "content": "Owner keeps the rake in the barn."}),
             json.dumps({"id": -3, "content": "Owner keeps the hoe in the barn."}),
             json.dumps({"id": True, "content": "Owner keeps the shears in the barn."})]
    with Store(tmp_path / "t.db") as store:
        report = import_memories(store, None, "owner", lines)
        assert report["created"] == 4 and store.get(500) is not None
        assert "2 exported graph edge(s) not restored" in " ".join(report["notes"]), report["notes"]
        assert any(n.startswith("line 3: id -3 is not a memory id") for n in report["notes"]), report["notes"]
        assert any(n.startswith("line 4: id True is not a memory id") for n in report["notes"]), report["notes"]
