"""Every file is accounted for: a real folder of every kind (ordinary, empty, binary, names the connector does not
know or leaves out on purpose, one bad byte, huge, chmod 000, a tool's folder) gives one line that counts each
as to learn, skipped with its reason, or failed (when what the scan handed over is searchable, the daemon says
so: tests/test_backlog.py)."""

from __future__ import annotations

import os
from pathlib import Path

from test_files_connector import scan_as_nobody

from twin.connectors.file_text import to_text
from twin.connectors.files_tally import Tally, batch_line, is_failure, scan_line

BIG = 2_000_001  # one byte over the default files_max_bytes


def fill(folder: Path) -> dict[str, str]:
    """Write one file of each kind into `folder`; returns `{name: what the scan must make of it}`."""
    (folder / "notes.md").write_text("# Garden\n\nThe blue kayak hangs on the north wall of the shed.\n")
    (folder / "todo.txt").write_text("Renew the bicycle insurance before the end of March.\n")
    (folder / "README.Debian").write_text("The package keeps its settings in the etc folder of the system.\n")
    (folder / "bad-byte.md").write_bytes(b"The spare key is under the terracotta pot \xff by the door.\n")
    (folder / "empty.md").write_bytes(b"")
    (folder / "photo.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (folder / "Makefile").write_text("all:\n\tcc -o app main.c\n")
    (folder / "LICENSE").write_text("Permission is hereby granted, free of charge, to any person.\n")
    (folder / ".bashrc").write_text("export EDITOR=vim\n")
    (folder / "song.mp3").write_bytes(b"ID3\x04\x00")
    (folder / "script.py").write_text("print('hello')\n")
    (folder / "huge.txt").write_bytes(b"word " * (BIG // 5 + 1))
    (folder / "secret.txt").write_text("nobody may read this\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return {"notes.md": "learn", "todo.txt": "learn", "README.Debian": "learn", "bad-byte.md": "learn",
            "empty.md": "empty", "photo.txt": "binary", "Makefile": "ignored name", "LICENSE": "ignored name",
            ".bashrc": "hidden name", "song.mp3": "not a text file", "script.py": "not a text file",
            "huge.txt": "too large", "secret.txt": "unreadable: permission denied"}


def fill_and_lock(folder: Path) -> dict[str, str]:
    """`fill(folder)`, then secret.txt made unreadable (chmod 000)."""
    expected = fill(folder)
    os.chmod(folder / "secret.txt", 0)
    return expected


def test_a_folder_of_every_kind_is_accounted_for():
    """As `nobody` (chmod 000 binds only a non-root user), in a forked child like the permission test."""
    folder, expected, texts = scan_as_nobody("twin-accounting-", fill_and_lock)
    learned = sum(v == "learn" for v in expected.values())
    assert learned == 4 and len(expected) == 13
    assert texts[-1] == ("Files: found 13 files: 4 to learn (4 new, 0 changed), 0 already learned, 8 skipped (2 ignored"
                         " name, 2 not a text file, 1 binary, 1 empty, 1 hidden name, 1 too large), 1 failed"
                         " (1 unreadable: permission denied); 0 gone; 1 hidden or tool folder not read.")
    # a line of its own only for what the owner may want to fix: the binary .txt, the huge file, the locked one
    assert sorted(t for t in texts if t.startswith("Files: skipped")) == [
        f"Files: skipped {folder / 'huge.txt'} (too large).", f"Files: skipped {folder / 'photo.txt'} (binary).",
        f"Files: skipped {folder / 'secret.txt'} (unreadable: permission denied)."]


def test_one_bad_byte_is_replaced_and_a_file_in_another_encoding_is_still_refused():
    doc = to_text(Path("key.md"), b"The spare key is under the terracotta pot \xff by the door.\n")
    assert doc.text == "The spare key is under the terracotta pot \ufffd by the door."
    damaged = ("Grüße aus Köln. " * 40).encode() + b"\xc3" + ("Der Dom ist schön. " * 40).encode()
    assert "\ufffd" in to_text(Path("köln.txt"), damaged).text and "Grüße" in to_text(Path("köln.txt"), damaged).text
    latin = ("Grüße aus Köln, schöne Größe, süße Äpfel. " * 20).encode("latin-1")  # a bad byte every few words
    assert to_text(Path("latin.txt"), latin).reason == "undecodable"
    assert to_text(Path("README.source"), b"Build it with the usual tools, then install it.\n").title == "README.source"


def test_the_lines_count_every_outcome():
    tally = Tally(new=2, changed=1, unchanged=7, gone=1, hidden_dirs=2)
    for reason in ("empty", "not a text file", "not a text file", "unreadable: permission denied",
                   "unreadable: broken symlink"):
        tally.count_skip(reason)
    assert is_failure("unreadable directory: permission denied") and not is_failure("unreadable: symlink loop")
    assert scan_line(tally) == ("Files: found 15 files: 3 to learn (2 new, 1 changed), 7 already learned, 4 skipped"
                                " (2 not a text file, 1 empty, 1 unreadable: broken symlink), 1 failed (1 unreadable:"
                                " permission denied); 1 gone; 2 hidden or tool folders not read.")
    assert batch_line(Tally(new=1)) == "Files: 1 new, 0 changed, 0 gone, 0 skipped, 0 failed."


def test_a_file_cut_at_its_memory_bound_says_so_once_per_learning(store, activity):
    """A file that gives more memories than `files_max_memories` keeps the first ones and the diary says the
    rest was not read (never a silent cut); a file under the bound writes no such line."""
    from twin.learn.learning import learn_document

    long_text = "\n\n".join(f"On day {n} Owner repaired bicycle number {n} for a neighbour in the courtyard."
                            for n in range(1, 41))
    result = learn_document(store, "owner", long_text, "file:/home/o/notes/bikes.md", "bikes.md", 5,
                            activity=activity)
    assert len(result.created) == 5
    said = [line.text for line in activity.recent() if "was not read" in line.text]
    assert said == ["Files: /home/o/notes/bikes.md gave its first 5 memories (files_max_memories); the rest of it "
                    "was not read."]
    learn_document(store, "owner", "Owner repaired the kitchen tap.", "file:/home/o/notes/tap.md", "tap.md", 5,
                   activity=activity)
    assert len([line for line in activity.recent() if "was not read" in line.text]) == 1
