"""`twin forget --about NAME` reaches every mention of a person (the whole name, and each part of it alone, but
not someone else's name) and every output of a forget plan hides a sensitive memory's text unless asked, on a real
store, a real transcript and the real CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import in_process
import pytest
from erasure import traces

from twin.chat import REDACTED, ChatReply, Conversation
from twin.learn.learning import learn
from twin.lifecycle.forgetting import carry_out, plan
from twin.memory import SENSITIVE_HIDDEN
from twin.text.about import Subject

ROOT = Path(__file__).resolve().parent.parent
CHAT_SETTINGS = SimpleNamespace(chat_working_messages=20, chat_compact_after=50, chat_keep_recent=10,
                                chat_recall_limit=5)


def twin_cli(*args: str) -> subprocess.CompletedProcess:
    """`twin ARGS` in this process (tests/in_process.py)."""
    return in_process.twin_cli(*args)


@pytest.mark.parametrize(("name", "text", "parts"), [
    ("Ana Souza", "Ana Souza's clinic is on the corner.", "whole"),
    ("Ana Souza", "ANA  SOUZA rang twice.", "whole"),
    ("Ana Souza", "Ána Sóuza rang.", "whole"),  # accents folded, as the full-text index does
    ("Ana Souza", "Dr. Souza said my teeth are fine.", ["Souza"]),
    ("Ana Souza", "Dr Souza said so.", ["Souza"]),  # a title without its dot
    ("Ana Souza", "Ana sent me the invoice for the cleaning.", ["Ana"]),
    ("Ana Souza", "Yesterday Souza called.", ["Souza"]),  # a sentence-initial word is no first name
    ("Ana Souza", "On Monday Souza called.", ["Souza"]),
    ("Ana Souza", "Souza, Ana wrote back.", ["Souza", "Ana"]),
    ("Ana Souza", "Ana Lima sent a postcard.", None),  # someone else's name
    ("Ana Souza", "Owner met Ana and Carlos Souza.", ["Ana"]),
    ("Ana Souza", "the ana bus leaves at nine", None),  # not written as a name
    ("Ana Souza", "Anabel came by.", None),
    ("Hendrik van der Berg", "Hendrik fixed the boiler.", ["Hendrik"]),
    ("Hendrik van der Berg", "Mr Berg fixed the boiler.", ["Berg"]),
    ("Hendrik van der Berg", "The berg of ice melted.", None),
    ("Jonas Quandt-Ebel", "Frau Quandt called about Jonas.", ["Quandt", "Jonas"]),
    ("the blue boat", "Owner painted the Blue boat.", "whole"),
    ("the blue boat", "Owner's boat is green.", None),  # a thing: no parts
    ("Souza", "Dr. Souza said so.", "whole"),  # one word: the word itself
])
def test_what_counts_as_a_mention(name, text, parts):
    found = Subject(name).match(text)
    if parts is None:
        assert found is None
    elif parts == "whole":
        assert found is not None and found.whole
    else:
        assert found is not None and not found.whole and list(found.parts) == parts
    whole_only = Subject(name, parts=False).match(text)
    assert (whole_only is not None) == (parts == "whole")


def test_a_subject_needs_a_word():
    for text in ("", " ?! ", "—"):
        with pytest.raises(ValueError):
            Subject(text)


def test_a_subject_of_words_every_memory_holds_is_refused_before_anything_is_planned(twin_env, store):
    for n in range(5):
        learn(store, None, "owner", f"Owner keeps the {n + 2} old maps in the attic.", "muse")
    for text in ("the", "Owner", "my", "THE and"):
        with pytest.raises(ValueError, match="names no person or thing"):
            plan(store, "owner", about=text)
    done = in_process.twin_cli("forget", "--about", "the", "--dry-run")
    assert done.returncode == 2 and "names no person or thing" in done.stderr
    assert len(plan(store, "owner", about="the attic").memories) == 5  # a thing named with "the" still is one


def _people(store) -> dict[str, int]:
    ids = {}
    for key, text in (("whole", "Mirela Kovač's physiotherapy starts in June."),
                      ("surname", "Dr. Kovač moved the appointment to Thursday."),
                      ("first", "Mirela lent Owner the camping stove."),
                      ("other", "Mirela Horvat lives in Split."),
                      ("none", "Owner's dentist is in Kreuzberg.")):
        ids[key] = learn(store, None, "owner", text, "muse").created[0]
    return ids


def test_forget_about_a_name_takes_its_parts_listed_apart_and_not_someone_elses(twin_env, store):
    ids = _people(store)
    chat = Conversation(store, "owner", "9", CHAT_SETTINGS, None, None, source="telegram:9")
    row, _ = chat.receive("Mirela says the stove needs a new valve.", 1, learn=False)
    chat.answered(row, ChatReply("Noted.", []))
    other_row, _ = chat.receive("Mirela Horvat sends her love.", 2, learn=False)
    chat.answered(other_row, ChatReply("Noted.", []))
    staged_row, _ = chat.receive("Kovač is back from Zagreb on the 3rd.", 3)  # staged, not learned yet

    whole = plan(store, "owner", about="Mirela Kovač", whole=True)
    assert [m.id for m in whole.memories] == [ids["whole"]] and whole.by_part == {}
    todo = plan(store, "owner", about="Mirela Kovač")
    assert [m.id for m in todo.memories] == [ids["whole"], ids["surname"], ids["first"]]
    assert todo.by_part == {ids["surname"]: ("Kovač",), ids["first"]: ("Mirela",)}
    assert set(todo.transcript_rows) == {row, staged_row} and len(todo.staged) == 1
    matched = {m["id"]: m["matched"] for m in todo.to_dict()["memories"]}
    assert matched == {ids["whole"]: "whole", ids["surname"]: ["Kovač"], ids["first"]: ["Mirela"]}

    carry_out(store, None, todo)
    left = {m.id for m in store.list_memories("owner")}
    assert left == {ids["other"], ids["none"]}
    texts = dict(store.conn.execute("SELECT id, text FROM chat_messages WHERE role = 'owner'").fetchall())
    assert texts[row] == REDACTED and texts[staged_row] == REDACTED and "Horvat" in texts[other_row]
    assert traces(twin_env.data_dir, ["physiotherapy", "camping stove", "Zagreb"]) == []


def test_the_cli_dry_run_lists_part_matches_apart(twin_env, store):
    ids = _people(store)
    dry = twin_cli("forget", "--about", "Mirela Kovač", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    head, _, parts = dry.stdout.partition('mentioning only a part of "Mirela Kovač"')
    assert f"#{ids['whole']}" in head and f"#{ids['surname']}" not in head and f"#{ids['first']}" not in head
    assert f"#{ids['surname']}" in parts and "(Kovač)" in parts and "(Mirela)" in parts
    assert "Horvat" not in dry.stdout and "Kreuzberg" not in dry.stdout
    whole = json.loads(twin_cli("forget", "--about", "Mirela Kovač", "--whole", "--json").stdout)
    assert [m["id"] for m in whole["memories"]] == [ids["whole"]]
    done = twin_cli("forget", "--about", "Mirela Kovač", "--yes")
    assert done.returncode == 0 and "forgot 3 memories" in done.stdout, done.stderr


SECRETS = ("Owner's gym locker code is 4-8-1-5#.", "The Tallinn office alarm PIN is 930417.")


def test_a_forget_plan_hides_sensitive_text_in_every_output_unless_asked(twin_env, store):
    ids = [learn(store, None, "owner", text, "muse").created[0] for text in SECRETS]
    learn(store, None, "owner", "Owner's gym is on Tallinn street.", "muse")
    assert all(store.get(i).sensitivity == "sensitive" for i in ids)
    hashes = [store.get(i).content_sha256 for i in ids]
    values = ["4-8-1-5", "930417"]
    for about in ("gym", "Tallinn"):
        for extra in ([], ["--json"]):
            out = twin_cli("forget", "--about", about, "--dry-run", *extra)
            assert out.returncode == 0, out.stderr
            assert not any(v in out.stdout for v in values) and not any(h in out.stdout for h in hashes)
            assert SENSITIVE_HIDDEN in out.stdout
            shown = twin_cli("forget", "--about", about, "--dry-run", "--sensitive", *extra)
            assert any(v in shown.stdout for v in values)
    refused = twin_cli("forget", "--about", "gym")  # no terminal: the refusal names counts only
    assert refused.returncode == 2 and not any(v in refused.stderr + refused.stdout for v in values)
    plain = json.loads(twin_cli("forget", *map(str, ids), "--dry-run", "--json").stdout)
    assert {m["content"] for m in plain["memories"]} == {SENSITIVE_HIDDEN}
    assert all(m["content_sha256"] == "" for m in plain["memories"])


def test_a_forget_about_a_subject_reaches_a_waiting_thread_by_its_words_never_by_a_label_it_carries(store):
    """A staged email thread waits for its learn job; a forget by subject drops it when its text or summary names
    the subject, never because the owner's Gmail label (its id or name) does (`twin.ingest.NOT_TEXT_KEYS`)."""
    from twin import ingest
    from twin.ingest import Ingest

    with store.atomic():
        labelled, named = ingest.stage(store, [
            Ingest("owner", "email:t1", "The plumber comes on Friday.", "email",
                   extra={"summary": ["The plumber comes on Friday."], "labels": ["Label_7"],
                          "label_names": ["Kovač family"]}),
            Ingest("owner", "email:t2", "Dinner at the Kovač house.", "email",
                   extra={"summary": ["Dinner at the Kovač house."], "labels": ["Label_7"],
                          "label_names": ["Kovač family"]})])
    subject = Subject("Kovač")
    assert ingest.matching(store, "owner", mentions=subject.mentions) == [named]
    assert labelled != named
