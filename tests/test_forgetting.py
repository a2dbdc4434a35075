"""Forgetting keeps the store healthy and reaches every copy (DESIGN.md invariant 5), on real parts: real SQLite
files, the private Redis, real RQ workers and the real model. Every erasure is checked by scanning every file
under the data dir (zlib/gzip streams decompressed) with `tests/erasure.py`."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from types import SimpleNamespace

import in_process
import numpy as np
import pytest
from conftest import drain, push_items, run_worker
from erasure import traces
from rq import Queue, SimpleWorker

from twin.chat import REDACTED, ChatReply, Conversation, mentions
from twin.health import fts_check, repair_fts
from twin.ingest import Ingest
from twin.learn.learning import learn
from twin.lifecycle.cycle import VectorLookup, dream
from twin.lifecycle.forgetting import FORGOTTEN_FILE_REASON, carry_out, forget, plan
from twin.store import Store, fts_structure, manifest
from twin.store.manifest import ManifestEntry
from twin.workers.bus import LEARN_QUEUE, Bus
from twin.workers.context import WorkerContext, install

ROOT = Path(__file__).resolve().parent.parent

# structure records as SQLite wrote them: 3.40.1 after 1 and 100 optimize-after-delete runs, 3.51.1 (V2 format,
# a contentless_delete table), and a 2001-level record (varint 0x8f 0x51) past FTS5's bound
RECORD_340_6 = bytes.fromhex("000000000601973900000000")
RECORD_340_204 = bytes.fromhex("00000000814c01981c000000")
RECORD_351_V2 = bytes.fromhex("00000000ff0000010202220002030101012000001f01010121210000010000")
RECORD_2001 = bytes.fromhex("000000008f5101990000")


def twin_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """`twin ARGS` in this process (tests/in_process.py)."""
    return in_process.twin_cli(*args, stdin=stdin)


def blobs(store: Store, ids: list[int]) -> list[bytes]:
    """The float32 embedding blobs of `ids` (each must have one)."""
    rows = dict(store.conn.execute(f"SELECT memory_id, vector FROM memory_embeddings WHERE memory_id IN "
                                   f"({','.join('?' * len(ids))})", ids).fetchall())
    assert set(rows) == set(ids), "every memory of the test has a vector before it is forgotten"
    return list(rows.values())


def pile_up_levels(conn: sqlite3.Connection, above: int, most: int = 3000) -> int:
    """What twin did before: memories deleted one at a time with `'optimize'` after each (about two empty levels
    each on SQLite 3.40), until the index has more than `above` levels, FTS5 refuses it, or `most` deletes.
    Returns the level count reached."""
    conn.executemany("INSERT INTO memories (being_id, kind, content, source, created_at, content_sha256) VALUES "
                     "('owner', 'fact', ?, 'muse', '2026-01-01T00:00:00Z', ?)",
                     [(f"Owner noted item {n}.", f"x{n}") for n in range(most)])
    for n in range(most):
        try:
            conn.execute("DELETE FROM memories WHERE content_sha256 = ?", (f"x{n}",))
            conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
        except sqlite3.DatabaseError:
            break
        if fts_structure.read_levels(conn) > above:
            break
    return fts_structure.read_levels(conn)


# -- the FTS structure -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("record", "levels"), [(RECORD_340_6, 6), (RECORD_340_204, 204), (RECORD_351_V2, 2),
                                                (RECORD_2001, 2001), (bytes.fromhex("0000000000"), 0)])
def test_structure_levels_reads_both_record_formats(record, levels):
    assert fts_structure.structure_levels(record) == levels


@pytest.mark.parametrize("record", [b"", b"\x00\x00\x00", bytes.fromhex("0000000081"),
                                    bytes.fromhex("00000000ff00000181")])
def test_a_cut_structure_record_is_an_error(record):
    with pytest.raises(ValueError):
        fts_structure.structure_levels(record)


def test_the_level_count_is_read_from_a_live_store(store):
    assert fts_structure.read_levels(store.conn) in (None, 0, 1)
    assert pile_up_levels(store.conn, 3, most=20) >= 2


def test_many_forgets_keep_the_full_text_index_readable(store, activity, twin_env):
    ids = [store.insert_memory("owner", "fact", f"Owner's locker number {n} is at gate {n * 7}.", "muse", 0.4)
           for n in range(700)]
    top = 0
    for mid in ids[:650]:
        assert [m.id for m in forget(store, None, "owner", [mid]).memories] == [mid]
        top = max(top, fts_structure.read_levels(store.conn))
    assert top <= fts_structure.REBUILD_ABOVE_LEVELS + 2  # the scrub rebuilt before the count ran away
    assert len(store.fts_search("owner", '"locker"', 100)) == 50  # and the index still answers, correctly
    assert fts_check(store)["ok"]


def test_a_store_past_fts5s_limit_is_repaired_when_opened(twin_env):
    with Store(twin_env.db_path) as store:
        store.insert_memory("owner", "fact", "Owner keeps the canoe paddles in the cellar.", "muse", 0.4)
        levels = pile_up_levels(store.conn, fts_structure.FTS5_MAX_LEVELS)
    if levels <= fts_structure.FTS5_MAX_LEVELS:
        pytest.skip(f"this SQLite keeps {levels} levels after 3000 optimizes: it cannot break this way")
    raw = sqlite3.connect(twin_env.db_path)
    with pytest.raises(sqlite3.DatabaseError, match=r"malformed|vtable constructor failed"):  # as seen
        raw.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'canoe'").fetchall()
    raw.close()
    with Store(twin_env.db_path) as store:  # the next start repairs it by itself
        assert fts_structure.read_levels(store.conn) == 1
        assert [r[2] for r in store.fts_search("owner", '"canoe"', 5)] == ["Owner keeps the canoe paddles in the "
                                                                           "cellar."]
    proc = twin_cli("learn", "I keep the spare bike pump behind the cellar door.")
    assert proc.returncode == 0, proc.stderr


def test_an_unreadable_structure_record_is_repaired_when_opened(twin_env):
    with Store(twin_env.db_path) as store:
        store.insert_memory("owner", "fact", "Owner stores the kayak at the Wannsee boathouse.", "muse", 0.4)
        store.conn.execute("UPDATE memories_fts_data SET block = x'0000' WHERE id = 10")
    with Store(twin_env.db_path) as store:
        assert fts_structure.read_levels(store.conn) == 1
        assert store.fts_search("owner", '"boathouse"', 5)


@pytest.mark.parametrize(("text", "content", "said"), [
    ("my bike lock code is 4512, the blue one", "Owner's bike lock code is 4512.", True),
    ("Here is what I remember: • Owner's bike lock code is 4512.", "Owner's bike lock code is 4512.", True),
    ("my bike needs a new lock", "Owner's bike lock code is 4512.", False),
    ("I like green tea", "Owner likes green tea.", True),
    ("Tea time!", "Owner likes tea.", False),
    ("Owner is vegan.", "Owner is vegan.", True),  # one distinctive word: the whole content must be there
    ("Owner is not vegan at all", "Owner is vegan.", False),
])
def test_a_transcript_row_mentions_a_memory_by_its_words(text, content, said):
    assert mentions(text, content) is said


def test_doctor_fails_near_the_limit_with_the_repair_to_run(store):
    store.insert_memory("owner", "fact", "Owner keeps the canoe paddles in the cellar.", "muse", 0.4)
    # after twin opened the store: what an older twin left
    if pile_up_levels(store.conn, fts_structure.NEAR_LIMIT_LEVELS) <= fts_structure.NEAR_LIMIT_LEVELS:
        pytest.skip("this SQLite does not pile up levels")
    check = fts_check(store)
    assert not check["ok"] and "near FTS5's limit" in check["detail"] and "twin doctor --repair" in check["detail"]
    assert repair_fts(store)["levels_after"] == 1
    assert fts_check(store)["ok"] and store.fts_search("owner", '"canoe"', 5)


def test_twin_doctor_fails_on_a_damaged_full_text_index_and_repair_fixes_it(twin_env):
    for text in ("I keep the canoe paddles in the cellar.", "My neighbour Ilse waters the tomatoes in July."):
        assert twin_cli("learn", text).returncode == 0
    with sqlite3.connect(twin_env.db_path) as raw:  # a segment of the index lost
        raw.execute("DELETE FROM memories_fts_data WHERE id > 10")
    proc = twin_cli("doctor", "--json")
    first = json.loads(proc.stdout)["checks"][0]
    assert proc.returncode == 1 and first["check"] == "full-text index" and not first["ok"]
    assert "integrity check fails" in first["detail"] and "twin doctor --repair" in first["detail"]
    proc = twin_cli("doctor", "--repair", "--json")
    assert "full-text index rebuilt" in proc.stderr
    assert json.loads(proc.stdout)["checks"][0]["ok"]
    assert "canoe" in twin_cli("recall", "canoe paddles").stdout


# -- every path that removes memories leaves no readable text -------------------------------------------------------
DOC_OLD = ("# Boat notes\n\nThe quokkaboat sails from Kerrisdale pier every Tuesday at dawn.\n"
           "The zanzibarine anchor weighs forty kilos.\n")
DOC_NEW = "# Boat notes\n\nThe boat now stays in the marina all winter.\n"


def _learned_document(twin_env, store, redis, source: str, text: str) -> list[int]:
    push_items(store, redis, [Ingest("owner", source, text, "document",
                                     extra={"title": "Boat notes", "max_memories": 20})])
    drain()
    return store.ids_by_source("owner", source)


def test_a_deleted_watched_file_leaves_no_text_or_vector(twin_env, store, redis):
    source = f"file:{twin_env.data_dir.parent / 'docs' / 'boat.md'}"
    ids = _learned_document(twin_env, store, redis, source, DOC_OLD)
    vectors = blobs(store, ids)
    assert traces(twin_env.data_dir, ["quokkaboat", "zanzibarine"], vectors)  # the scan can fail: they are there
    push_items(store, redis, [Ingest("owner", source, mode="forget")])  # what the files connector hands over
    drain()
    assert store.ids_by_source("owner", source) == [] and not store.scrub_due()
    assert traces(twin_env.data_dir, ["quokkaboat", "zanzibarine", "kerrisdale"], vectors) == []


@pytest.mark.parametrize("kind", ["file", "email"])
def test_a_relearned_document_or_thread_leaves_no_text_of_its_old_memories(twin_env, store, redis, kind):
    source = "file:/home/owner/boat.md" if kind == "file" else "email:thread-q1"
    old = _learned_document(twin_env, store, redis, source, DOC_OLD)
    vectors = blobs(store, old)
    assert traces(twin_env.data_dir, ["zanzibarine"], vectors)
    if kind == "file":
        push_items(store, redis, [Ingest("owner", source, DOC_NEW, "document",
                                         extra={"title": "Boat notes", "max_memories": 20})])
    else:
        push_items(store, redis, [Ingest("owner", source, DOC_NEW, "email", extra={"summary": DOC_NEW})])
    drain()
    assert not set(store.ids_by_source("owner", source)) & set(old)
    assert traces(twin_env.data_dir, ["quokkaboat", "zanzibarine", "kerrisdale"], vectors) == []


def test_the_dream_merge_leaves_no_text_of_the_merged_away_memory(twin_env, store, activity, redis, embedder):
    keep = store.insert_memory("owner", "fact", "Owner keeps a sourdough starter called Gertrude in the fridge.",
                               "muse", 0.5, created_at="2026-01-01T00:00:00Z")
    # the pair differs by an intensifier only: a near-duplicate the dream may merge ("called" / "named" would be a
    # content word that differs, which the dream leaves apart: twin.text.content_words)
    lose = store.insert_memory("owner", "fact", "Owner really keeps a sourdough starter called Gertrude in the "
                               "fridge.", "muse", 0.5, created_at="2026-02-01T00:00:00Z")
    Bus(redis).notify_embed()
    run_worker("embed")
    vectors = blobs(store, [lose])

    def search(vector, k):  # exact top-k over the stored vectors (what `twin dream` gets from its reader's tail)
        rows = store.conn.execute("SELECT memory_id, vector FROM memory_embeddings").fetchall()
        return sorted(((mid, float(np.frombuffer(b, dtype=np.float32) @ vector)) for mid, b in rows),
                      key=lambda p: -p[1])[:k]
    result = dream(store, "owner", VectorLookup(store, search, "all-MiniLM-L6-v2-int8"))
    assert result["merged"] == 1 and store.get(lose) is None and store.get(keep) is not None
    Bus(redis).request_checkpoint()
    run_worker("embed")
    assert traces(twin_env.data_dir, ["really keeps"], vectors) == []


def test_an_update_in_place_leaves_no_text_of_the_old_content(twin_env, store, activity, redis):
    first = learn(store, activity, "owner", "I play cello and piano on Thursdays.", "muse")
    again = learn(store, activity, "owner", "I play piano and cello on Thursdays in the Wedding orchestra.", "muse")
    assert again.updated == first.created  # same id, new content
    assert store.scrub_due() and traces(twin_env.data_dir, ["cello and piano"])
    Bus(redis).request_scrub()  # what the learn jobs ask for; the CLI scrubs at once
    run_worker("learn")
    assert traces(twin_env.data_dir, ["cello and piano"]) == []


def test_a_burst_of_removals_is_scrubbed_once(twin_env, store, redis):
    """30 files gone, handed over one at a time: 30 learn jobs, then one `scrub_store` for all of them."""
    sources = [f"file:/home/owner/notes/day{n}.md" for n in range(30)]
    for n, source in enumerate(sources):
        store.insert_memory("owner", "fact", f"Owner wrote the yellowpenguin note number {n}.", source, 0.4)
    assert traces(twin_env.data_dir, ["yellowpenguin"])
    scrubs = []

    class CountingStore(Store):
        def scrub_deleted_text(self) -> dict:
            scrubs.append(1)
            return super().scrub_deleted_text()

    worker_store = CountingStore(twin_env.db_path).open()
    try:
        for source in sources:
            push_items(store, redis, [Ingest("owner", source, mode="forget")])
        install(WorkerContext(settings=twin_env, redis=redis, store=worker_store))
        SimpleWorker([Queue(LEARN_QUEUE, connection=redis)], connection=redis).work(burst=True)
    finally:
        worker_store.close()
    assert len(scrubs) == 1
    assert traces(twin_env.data_dir, ["yellowpenguin"]) == []


# -- forgetting a chat-learned memory scrubs the chat ---------------------------------------------------------------
CHAT_SETTINGS = SimpleNamespace(chat_working_messages=20, chat_compact_after=8, chat_keep_recent=2,
                                chat_recall_limit=5)


def _chat_with_a_fact(store) -> tuple[Conversation, int, dict[str, int]]:
    """A chat of 42 where the owner told where the bike is chained (learned with its row as `ref`), the twin showed
    the memory back, the owner mentioned the place again in passing, and a compaction folded it all into the
    summary. (A secret value never reaches the transcript: rows are stored redacted; see the last test here.)"""
    chat = Conversation(store, "owner", "42", CHAT_SETTINGS, None, None, source="telegram:42")
    rows = {}
    told, _ = chat.receive("My bike is chained at the Zwinglistrasse rack behind the bakery.", 1, learn=False)
    rows["told"] = told
    result = learn(store, None, "owner", "My bike is chained at the Zwinglistrasse rack behind the bakery.",
                   "telegram:42", ref=f"telegram:42/message/{told}")
    memory_id = result.created[0]
    chat.answered(told, ChatReply("Noted, I'll remember that.", []))
    asked, _ = chat.receive("Where is my bike chained?", 2, learn=False)
    chat.answered(asked, ChatReply(f"Here is what I remember:\n• {store.get(memory_id).content}", [memory_id]))
    rows["shown"] = store.conn.execute("SELECT MAX(id) FROM chat_messages").fetchone()[0]
    rows["again"], _ = chat.receive("Note to self: the bike stays chained at the Zwinglistrasse rack behind the "
                                    "bakery all winter.", 3,
                                    learn=False)
    chat.answered(rows["again"], ChatReply("Noted, I'll remember that.", []))
    for n, text in enumerate(["My sister Marta moved to Ghent in March.", "I bake rye bread on Sundays.",
                              "The dentist appointment is on Friday."], start=4):
        row, _ = chat.receive(text, n, learn=False)
        chat.answered(row, ChatReply("Noted, I'll remember that.", []))
    rows["kept"] = store.conn.execute("SELECT id FROM chat_messages WHERE text LIKE '%Marta%'").fetchone()[0]
    assert chat.compact_if_due() and "Zwinglistrasse" in chat.summary() and "Marta" in chat.summary()
    return chat, memory_id, rows


def test_forgetting_a_chat_learned_memory_redacts_the_transcript_and_rebuilds_the_summary(twin_env, store, activity):
    chat, memory_id, rows = _chat_with_a_fact(store)
    assert traces(twin_env.data_dir, ["Zwinglistrasse"])
    done = forget(store, activity, "owner", [memory_id])
    assert [m.id for m in done.memories] == [memory_id]
    assert set(done.transcript_rows) >= {rows["told"], rows["shown"], rows["again"]}
    assert rows["kept"] not in done.transcript_rows and done.summaries == ["42"]
    texts = dict(store.conn.execute("SELECT id, text FROM chat_messages").fetchall())
    assert all(texts[r] == REDACTED for r in (rows["told"], rows["shown"], rows["again"]))
    assert "Marta" in texts[rows["kept"]]
    assert "Zwinglistrasse" not in chat.summary() and "Marta" in chat.summary()  # rebuilt offline from what is left
    shown = store.conn.execute("SELECT shown_memories, state FROM chat_messages WHERE id = ?", (rows["shown"],))
    assert shown.fetchone() == ("[]", "answered")
    states = dict(store.conn.execute("SELECT id, state FROM chat_messages WHERE role = 'owner'").fetchall())
    assert states[rows["told"]] == "learned"  # redacted rows are never pushed to learn() again
    assert "transcript row" in done.line() and "Zwinglistrasse" not in " ".join(a.text for a in activity.recent(20))
    assert traces(twin_env.data_dir, ["Zwinglistrasse", "zwinglistrasse"]) == []


def test_a_secret_told_in_chat_never_reaches_the_transcript_and_its_staged_copy_goes_with_its_source(
        twin_env, store, activity):
    chat = Conversation(store, "owner", "43", CHAT_SETTINGS, None, None, source="telegram:43")
    row, _ = chat.receive("My bike lock code is 7319, the blue lock at the station.", 1)
    assert "7319" not in store.conn.execute("SELECT text FROM chat_messages WHERE id = ?", (row,)).fetchone()[0]
    chat.answered(row, ChatReply("Noted, I'll remember that.", []))  # staged whole, waiting to be learned
    todo = plan(store, "owner", source="telegram:43")
    assert len(todo.staged) == 1 and "item waiting to be learned" in todo.line()
    carry_out(store, activity, todo)
    assert store.conn.execute("SELECT COUNT(*) FROM ingest_items").fetchone()[0] == 0
    assert traces(twin_env.data_dir, ["7319"]) == []


# -- a whole source, or a subject, with a dry run -------------------------------------------------------------------
BOAT_FILE = ("# Boat\n\nThe quokkaboat sails from Kerrisdale pier every Tuesday at dawn.\n"
             "The zanzibarine anchor weighs forty kilos.\nThe mooring fee is paid to Halvorsen Marine.\n")


def _file_and_chat(twin_env, store, redis, docs: Path) -> tuple[Path, list[int], list[int]]:
    path = docs / "boat.md"
    path.write_text(BOAT_FILE)
    push_items(store, redis, [Ingest("owner", f"file:{path}", BOAT_FILE, "document",
                                     extra={"title": "Boat", "max_memories": 20})])
    stat = path.stat()
    manifest.upsert(store, "owner", ManifestEntry(str(path), stat.st_size, stat.st_mtime_ns, "ab" * 32, "indexed"))
    chat = Conversation(store, "owner", "77", CHAT_SETTINGS, None, None, source="telegram:77")
    for n, text in enumerate(["My godson Ferdinando turns nine in October.",
                              "Ferdinando wants a telescope for his birthday."], start=1):
        row, _ = chat.receive(text, n)  # staged, held until answered (what the Telegram connector does)
        released = chat.answered(row, ChatReply("Noted, I'll remember that.", []))
        assert Bus(redis).push(store, released, "owner", "text")
    drain()
    file_ids = store.ids_by_source("owner", f"file:{path}")
    chat_ids = store.ids_by_source("owner", "telegram:77")
    assert len(file_ids) >= 2 and len(chat_ids) == 2
    return path, file_ids, chat_ids


def test_forget_a_whole_source_with_a_dry_run_first(twin_env, store, redis, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    path, file_ids, chat_ids = _file_and_chat(twin_env, store, redis, docs)
    vectors = blobs(store, file_ids + chat_ids)
    words = ["quokkaboat", "zanzibarine", "halvorsen", "ferdinando", "telescope"]
    assert traces(twin_env.data_dir, words, vectors)  # all there before, index file included

    dry = twin_cli("forget", "--source", f"file:{path}", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert all(f"#{i}" in dry.stdout for i in file_ids) and "quokkaboat" in dry.stdout.lower()
    assert f"memory_embeddings: {len(file_ids)} vector(s)" in dry.stdout and "files_manifest: 1 entry" in dry.stdout
    assert "nothing was changed" in dry.stdout
    refused = twin_cli("forget", "--source", f"file:{path}")  # no terminal, no --yes: asks nothing, does nothing
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert store.ids_by_source("owner", f"file:{path}") == file_ids

    done = twin_cli("forget", "--source", f"file:{path}", "--yes")
    assert done.returncode == 0 and f"forgot {len(file_ids)} memories" in done.stdout, done.stderr
    entry = manifest.get(store, "owner", path)  # the file still exists: learned again only when it changes
    assert entry.state == "skipped" and entry.reason == FORGOTTEN_FILE_REASON
    json_plan = json.loads(twin_cli("forget", "--source", "telegram:77", "--json").stdout)
    assert json_plan["dry_run"] and json_plan["counts"]["memories"] == 2 and json_plan["counts"]["transcript_rows"] == 4
    assert len(store.ids_by_source("owner", "telegram:77")) == 2  # a JSON plan changes nothing
    gone_chat = twin_cli("forget", "--source", "telegram:77", "--yes", "--json")  # --yes: forgotten, said as JSON
    assert gone_chat.returncode == 0, gone_chat.stderr
    gone = json.loads(gone_chat.stdout)
    assert not gone["dry_run"] and gone["counts"]["memories"] == 2 and gone["counts"]["transcript_rows"] == 4
    run_worker("embed")  # the CLI asked the index writer to scrub and checkpoint
    assert store.ids_by_source("owner", "telegram:77") == [] and store.counts("owner")["memories"] == 0
    assert traces(twin_env.data_dir, words, vectors) == []


def test_forget_about_a_person_reaches_memories_and_transcript_rows(twin_env, store, redis, tmp_path):
    chat = Conversation(store, "owner", "5", CHAT_SETTINGS, None, None)
    row, _ = chat.receive("Had lunch with Ottilie Brandauer today, she is moving to Graz.", 1)
    chat.answered(row, ChatReply("Noted, I'll remember that.", []))
    learn(store, None, "owner", "Ottilie Brandauer is moving to Graz.", "muse")
    learn(store, None, "owner", "Owner's dentist is in Kreuzberg.", "muse")
    assert traces(twin_env.data_dir, ["brandauer"])
    todo = plan(store, "owner", about="ottilie brandauer")
    assert [m.content for m in todo.memories] == ["Ottilie Brandauer is moving to Graz."]
    assert list(todo.transcript_rows) == [row]
    assert store.counts("owner")["memories"] == 2  # the plan changed nothing
    carry_out(store, None, todo)
    assert [m.content for m in store.list_memories("owner")] == ["Owner's dentist is in Kreuzberg."]
    assert traces(twin_env.data_dir, ["brandauer", "ottilie"]) == []
    with pytest.raises(ValueError):
        plan(store, "owner", about=" ?! ")


def test_forgetting_a_gone_file_drops_its_manifest_entry(store):
    store.insert_memory("owner", "fact", "Owner noted the yellowpenguin dates.", "file:/nowhere/gone.md", 0.4)
    manifest.upsert(store, "owner", ManifestEntry("/nowhere/gone.md", 10, 1, "cd" * 32, "indexed"))
    done = carry_out(store, None, plan(store, "owner", source="file:/nowhere/*"))
    assert len(done.memories) == 1 and done.manifest_entries == ["/nowhere/gone.md"]
    assert manifest.get(store, "owner", "/nowhere/gone.md") is None


def test_a_plan_reads_chat_summaries_that_hold_nothing_forgotten(store, activity):
    """An unrelated chat's summary is read and left alone, whether the forget is by id or about a subject (the
    summary check must not break on a summary that matches nothing)."""
    from twin.store import chat as transcript

    with store.atomic():
        transcript.save_summary(store, "owner", "41", "Owner talked about the allotment and the tomato seedlings.", 3)
    learn(store, activity, "owner", "My sister Ines lives in Braga.", "muse")
    [memory] = store.list_memories("owner")
    by_id = plan(store, "owner", ids=[memory.id])
    assert [m.id for m in by_id.memories] == [memory.id] and by_id.summaries == []
    about = plan(store, "owner", about="Ines")
    assert [m.id for m in about.memories] == [memory.id] and about.summaries == []
    with store.atomic():
        transcript.save_summary(store, "owner", "42", "Owner said that the sister Ines lives in Braga now.", 2)
    assert plan(store, "owner", about="Ines").summaries == ["42"]
    assert plan(store, "owner", ids=[memory.id]).summaries == ["42"]


def test_forgetting_a_file_whose_name_holds_controls_marks_that_file_forgotten(twin_env, store, tmp_path):
    from twin.outside_text import clean_name
    from twin.store import manifest

    (tmp_path / "notes").mkdir()
    real = tmp_path / "notes" / "new\nline \x1b[2J.md"  # a name with a line break and an escape sequence
    real.write_text("The owner stores the canoe paddles behind the shed.\n")
    path = str(real)
    source = f"file:{clean_name(path)}"  # as the files connector names its memories' source
    with store.atomic():
        store.insert_memory("owner", "document", "new line: Owner stores the canoe paddles behind the shed.", source,
                            0.3)
        manifest.upsert(store, "owner", manifest.ManifestEntry(path, 60, 1, "ab" * 32, "indexed", None))
    for asked in (source, f"file:{clean_name(str(tmp_path / 'notes'))}/*"):  # as listings show it, or a pattern
        todo = plan(store, "owner", source=asked)
        assert len(todo.memories) == 1 and todo.counts()["manifest_entries"] == 1, asked
    carry_out(store, None, plan(store, "owner", source=source))
    entry = manifest.get(store, "owner", path)
    assert (entry.state, entry.reason) == ("skipped", FORGOTTEN_FILE_REASON)  # learned again when it changes
