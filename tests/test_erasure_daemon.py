"""Forgetting a file-learned memory on a running daemon leaves no copy on disk: every file under the data dir
(SQLite's files, the vector index, the private Redis's append-only files) scanned raw and with its zlib/gzip
streams decompressed, while the daemon runs and after a clean stop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from erasure import read_apart, traces, vector_in
from test_daemon import start, stop, wait_for

from twin.store import Store

ROOT = Path(__file__).resolve().parent.parent
SENTENCE = "The marigold seeds are kept in the Quetzalcoatl tin on the pantry shelf."
WORDS = ["Quetzalcoatl", "marigold"]


def _embedded(db: Path) -> tuple[int, bytes] | None:
    if not db.exists():
        return None
    with Store(db) as store:
        row = store.conn.execute("SELECT m.id, e.vector FROM memories m JOIN memory_embeddings e ON e.memory_id = m.id"
                                 " WHERE m.content LIKE '%Quetzalcoatl%'").fetchone()
    return (row[0], row[1]) if row else None


def test_a_forgotten_file_memory_leaves_no_copy_in_any_file(daemon_env, tmp_path):
    (tmp_path / "docs" / "pantry.md").write_text(SENTENCE + "\n")
    daemon_env["TWIN_INDEX_CHECKPOINT_S"] = "2"  # the supervisor asks for a checkpoint every 2 s
    data = Path(daemon_env["TWIN_DATA_DIR"])
    log = tmp_path / "daemon.log"
    proc = start(daemon_env, log)
    try:
        memory_id, blob = wait_for(lambda: _embedded(data / "twin.db"), 120, "the file to be learned and embedded")
        index = data / "index" / "memories.hnsw"
        wait_for(lambda: index.exists() and vector_in(read_apart(index), blob), 60, "the index checkpoint")
        assert traces(data, WORDS[:1])  # the scan can fail: the text is on disk before
        assert any((data / "redis").rglob("*.aof")), "the private Redis keeps an append-only file"

        subprocess.run([sys.executable, "-m", "twin", "forget", str(memory_id)], cwd=ROOT, env=daemon_env,
                       check=True, capture_output=True, timeout=60)
        wait_for(lambda: not vector_in(read_apart(index), blob), 60, "the index to be checkpointed without it")
        assert traces(data, WORDS, [blob]) == []
    finally:
        assert stop(proc) == 0, log.read_text()
    assert traces(data, WORDS, [blob]) == []  # nor after a clean stop (Redis writes its files on the way out)
    assert b"Quetzalcoatl" not in log.read_bytes()  # the journal never had it either
