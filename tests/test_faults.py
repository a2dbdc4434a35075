"""The fault suite at a small scale, with real processes (tests/fault_run.py): distinct texts handed over while the
learn worker, Redis, the supervisor (SIGTERM and SIGKILL) and the embedding worker are killed, then exact counts
out; and an index file corrupted while the daemon is stopped, rebuilt on start with the same answers. The
5,000-text version is bench/faults.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fault_run import ROOT, FaultRun, expected_contents, run_faults, settings_of, texts

from twin.recall.hybrid import Recall
from twin.store import Store
from twin.vectors.index import VectorIndex
from twin.vectors.sidecar import IndexReader

pytestmark = [pytest.mark.daemon, pytest.mark.slow]
N = 300


def test_kills_of_every_process_lose_nothing_and_double_nothing(daemon_env, tmp_path):
    lines = texts(N)
    expected = expected_contents(lines, tmp_path)
    assert len(expected) == N and set(expected.values()) == {1}  # the reference keeps every text as one memory
    run = FaultRun(daemon_env, tmp_path / "daemon.log")
    try:
        run_faults(run, lines)  # a push that met Redis restarting is refused: its items wait in SQLite
        counts = run.wait_settled(N, 300)
    finally:
        if run.proc and run.proc.poll() is None:
            run.stop()
    assert run.contents() == expected  # each text's memory exactly once: none lost, none doubled
    assert counts["memories"] == counts["active"] == counts["embedded"] == N
    assert counts["staged_failed"] == counts["staged_ready"] == counts["staged_queued"] == 0
    doctor = subprocess.run([sys.executable, "-m", "twin", "doctor"], cwd=ROOT, env=daemon_env, capture_output=True,
                            text=True, timeout=120)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


QUESTIONS = ("where did I learn to sail?", "who adopted a cat?", "what did I do in Hanoi?", "ice swimming",
             "trip number 17")


def _top5(env: dict, embedder) -> dict[str, list[int]]:
    settings = settings_of(env)
    with Store(settings.db_path) as store:
        reader = IndexReader(store, VectorIndex.for_settings(settings, embedder.model_id, embedder.dim))
        reader.open()
        recall = Recall(store, embedder, reader)
        try:
            return {q: [r.memory.id for r in recall.recall("owner", q, limit=5, touch=False)] for q in QUESTIONS}
        finally:
            recall.close()


@pytest.mark.parametrize("damage", ["truncate", "zero", "delete"])
def test_a_corrupt_index_is_rebuilt_with_the_same_answers(daemon_env, tmp_path, embedder, damage):
    lines = texts(120)
    run = FaultRun(daemon_env, tmp_path / "daemon.log")
    run.start()
    try:
        run.feed(lines)
        run.wait_settled(len(lines), 240)
    finally:
        assert run.stop() == 0
    before = _top5(daemon_env, embedder)
    index = Path(daemon_env["TWIN_DATA_DIR"]) / "index" / "memories.hnsw"
    assert index.exists() and all(before.values())
    if damage == "truncate":
        index.write_bytes(index.read_bytes()[: index.stat().st_size // 3])
    elif damage == "zero":
        index.write_bytes(b"\0" * index.stat().st_size)
    else:
        index.unlink()
    run.start()
    try:
        counts = run.wait_settled(len(lines), 120)
        run._wait(lambda: "Index rebuilt from" in run._log(), 60, "the index rebuild")
    finally:
        assert run.stop() == 0
    assert counts["embedded"] == len(lines)
    assert _top5(daemon_env, embedder) == before
