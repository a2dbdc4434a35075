"""A backlog (a first index, a big import) is said to be searchable once, when every staged item is learned and
every memory has its vector (`twin.ingest.BacklogWatch`, issue 18); the counts it and `twin status` read stay cheap
and exact; and under `twin up` for real, with a few hundred files, `twin status` answers while the backlog is
there, the workers run niced below it, and the diary's searchable line comes once, after the last vector."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from fault_run import wait_for

from twin import ingest
from twin.ingest import BACKLOG_MIN, BacklogWatch, Ingest
from twin.store import Store

ROOT = Path(__file__).resolve().parent.parent
MODEL = "test-model"
SEARCHABLE = "Backlog searchable:"


def stage(store: Store, n: int) -> list[int]:
    with store.atomic():
        return ingest.stage(store, [Ingest("owner", "muse", f"Fact number {i} about the garden.") for i in range(n)])


def learn_all(store: Store, ids: list[int]) -> list[int]:
    """What a learn job does to each item, in short: a memory stored and the item consumed."""
    made = []
    with store.atomic():
        for i in ids:
            made.append(store.insert_memory("owner", "fact", f"Owner noted fact {i} about the garden.", "muse", 0.5))
        ingest.consume(store, ids)
    return made


def embed(store: Store, memory_ids: list[int]) -> None:
    store.save_embeddings(memory_ids, np.ones((len(memory_ids), 4), dtype=np.float32), MODEL)


def test_one_line_once_every_item_is_learned_and_every_memory_has_its_vector(store):
    watch = BacklogWatch.starting(store, MODEL, 0.0)
    ids = stage(store, BACKLOG_MIN + 10)
    made = learn_all(store, ids[:5])  # learned before the first check: still this backlog's
    assert watch.check(store, 100.0) is None  # the backlog starts: the items wait
    made += learn_all(store, ids[5:-1])
    assert watch.check(store, 101.0) is None  # one item still waits
    made += learn_all(store, ids[-1:])
    embed(store, made[:-5])
    assert watch.check(store, 102.0) is None  # learned, but five memories have no vector yet
    embed(store, made[-5:])
    line = watch.check(store, 160.0)
    assert line == f"Backlog searchable: {BACKLOG_MIN + 10} staged items learned, {BACKLOG_MIN + 10} memories given " \
                   "their vectors (took 60 s)."
    assert watch.check(store, 170.0) is None  # said once


def test_a_few_items_are_no_backlog_and_a_big_import_is_one(store):
    watch = BacklogWatch.starting(store, MODEL, 0.0)
    ids = stage(store, 3)
    assert watch.check(store, 1.0) is None
    embed(store, learn_all(store, ids))
    assert watch.check(store, 2.0) is None  # three items learned and searchable: their own "Learned" line says so
    # an import writes memories without staging anything: the vectors it waits for are the backlog
    with store.atomic():
        imported = [store.insert_memory("owner", "fact", f"Owner imported fact {i}.", "muse", 0.5)
                    for i in range(BACKLOG_MIN)]
    assert watch.check(store, 10.0) is None
    embed(store, imported)
    assert watch.check(store, 20.0) == f"Backlog searchable: {BACKLOG_MIN} memories given their vectors (took 10 s)."


def test_work_a_stopped_run_left_is_a_backlog_of_any_size_said_even_if_done_before_the_first_check(store):
    left = stage(store, 3)  # fewer than BACKLOG_MIN: a backlog only because a restart found it waiting
    watch = BacklogWatch.starting(store, MODEL, 50.0)
    embed(store, learn_all(store, left))  # the workers finish it before the supervisor's first check
    assert watch.check(store, 53.0) == "Backlog searchable: 3 staged items learned, 3 memories given their vectors " \
                                       "(took 3 s)."
    assert watch.check(store, 58.0) is None
    quiet = BacklogWatch.starting(store, MODEL, 60.0)  # nothing left in flight: no backlog, no line
    assert quiet.check(store, 65.0) is None


def test_a_backlog_that_gave_no_vector_is_not_said_to_be_searchable(store):
    """Files deleted by the hundred: their forget items are a backlog handled, but nothing was learned."""
    watch = BacklogWatch.starting(store, MODEL, 0.0)
    assert watch.check(store, 5.0) is None
    gone = stage(store, BACKLOG_MIN + 5)
    assert watch.check(store, 7.0) is None  # in flight
    with store.atomic():
        ingest.consume(store, gone)  # each a forget: consumed, no memory and no vector made
    assert watch.check(store, 10.0) is None and watch.check(store, 15.0) is None
    embed(store, learn_all(store, stage(store, BACKLOG_MIN)))  # the next backlog is said as before
    assert watch.check(store, 20.0).startswith(f"Backlog searchable: {BACKLOG_MIN} staged items learned")


def test_a_backlog_learned_and_embedded_between_two_checks_is_said_too(store):
    """Workers that outrun the supervisor's check (every 5 s): the whole backlog staged, learned and embedded
    between two checks is still one line, timed from the last quiet check; a few items so done are not."""
    watch = BacklogWatch.starting(store, MODEL, 0.0)
    assert watch.check(store, 5.0) is None  # quiet
    embed(store, learn_all(store, stage(store, BACKLOG_MIN + 5)))
    assert watch.check(store, 10.0) == (f"Backlog searchable: {BACKLOG_MIN + 5} staged items learned, "
                                        f"{BACKLOG_MIN + 5} memories given their vectors (took 5 s).")
    assert watch.check(store, 15.0) is None  # said once
    embed(store, learn_all(store, stage(store, 3)))
    assert watch.check(store, 20.0) is None  # three items: their own "Learned" line is enough


def test_keyword_only_needs_no_vector_and_failed_items_are_said(store):
    watch = BacklogWatch.starting(store, None, 0.0)
    ids = stage(store, BACKLOG_MIN)
    assert watch.check(store, 0.0) is None
    learn_all(store, ids[:-2])
    store.conn.execute("UPDATE ingest_items SET state = 'failed' WHERE id IN (?, ?)", tuple(ids[-2:]))
    assert watch.check(store, 5.0) == (f"Backlog searchable: {BACKLOG_MIN - 2} staged items learned (keyword-only "
                                       "recall; took 5 s); 2 items could not be learned (see twin status).")


def test_the_cheap_counts_match_the_joins_they_replace(store):
    ids = stage(store, 4)
    made = learn_all(store, ids)
    with store.atomic():
        other = store.insert_memory("someone", "fact", "Someone else noted a fact.", "muse", 0.5)
        store.insert_memory("owner", "episode", "Owner walked along the canal.", "muse", 0.5, namespace="work")
    embed(store, [*made[:2], other])
    store.save_embeddings([made[2]], np.ones((1, 4), dtype=np.float32), "older-model")
    joined = store.conn.execute("SELECT COUNT(*) FROM memories m LEFT JOIN memory_embeddings e ON e.memory_id = m.id"
                                " AND e.model_id = ? WHERE e.memory_id IS NULL", (MODEL,)).fetchone()[0]
    assert store.count_pending_embeddings(MODEL) == joined == 3
    counts = store.counts("owner")
    assert counts == {"memories": 5, "active": 5, "embedded": 3, "kind_episode": 1, "kind_fact": 4}
    assert store.counts("someone")["embedded"] == 1
    assert store.namespace_counts("owner") == {"default": {"memories": 4, "active": 4},
                                                "work": {"memories": 1, "active": 1}}
    assert [mid for mid, _ in store.pending_embeddings(MODEL, 10, after_id=made[2])] == [made[3], other + 1]


def _nice_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[16])


def _children(pid: int) -> dict[int, str]:
    out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return {int(p): a for p, a in (line.split(None, 1) for line in out.strip().splitlines())}


@pytest.mark.slow
def test_a_first_index_under_the_daemon(daemon_env, tmp_path):
    docs = Path(daemon_env["TWIN_FILES_ROOTS"])
    for i in range(300):
        (docs / f"note-{i:03d}.md").write_text(f"# Trip {i}\n\nIn town {i} I repaired bicycle wheel number {i}.\n")
    db = Path(daemon_env["TWIN_DATA_DIR"]) / "twin.db"
    log = tmp_path / "daemon.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "twin", "up"], cwd=ROOT, env=daemon_env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        def status() -> dict:
            done = subprocess.run([sys.executable, "-m", "twin", "status", "--json"], cwd=ROOT, env=daemon_env,
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            return json.loads(done.stdout)

        # status answers while the backlog is there: items wait to be learned, or memories for their vectors
        during = wait_for(lambda: (r := status()) and (r["staged"]["queued"] + r["staged"]["ready"]
                                                       + r.get("pending_embedding", 0)) and r, 120, "the backlog")
        assert during["embedded"] < 300
        workers = {pid: args for pid, args in _children(proc.pid).items() if "twin.workers" in args}
        assert len(workers) == 2 and all(_nice_of(pid) == min(19, _nice_of(proc.pid) + 10) for pid in workers), workers
        assert [_nice_of(p) for p, a in _children(proc.pid).items() if "twin.api" in a] == [_nice_of(proc.pid)]

        def lines() -> list[tuple[str, str]]:
            with Store(db) as store:
                return store.conn.execute("SELECT at, text FROM activity ORDER BY id").fetchall()

        wait_for(lambda: any(SEARCHABLE in text for _, text in lines()), 240, "the searchable line")
        with Store(db) as store:
            counts = store.counts("owner")
            last_vector = store.conn.execute("SELECT MAX(created_at) FROM memory_embeddings").fetchone()[0]
            staged = ingest.counts(store)
        assert counts["memories"] >= 300 and counts["embedded"] == counts["memories"]
        assert not any(staged.values())
        time.sleep(11)  # two more of the daemon's backlog checks (every 5 s) write no second line
        [(at, line)] = [(at, text) for at, text in lines() if SEARCHABLE in text]
        assert at >= last_vector, (at, last_vector)
        assert line.startswith("Backlog searchable: 300 staged items learned, ") and "given their vectors" in line
        assert "Traceback" not in log.read_text()
    finally:
        proc.terminate()
        proc.wait(60)
