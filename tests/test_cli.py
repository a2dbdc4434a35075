"""The `twin` command line against a real store, real workers and the real model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import drain, run_worker
from in_process import twin_cli

from twin.store import Store

ROOT = Path(__file__).resolve().parent.parent


def twin(*args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess:
    """`twin ARGS` in this process (tests/in_process.py); `check`: exit 0 is asserted."""
    proc = twin_cli(*args, stdin=stdin)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_learn_recall_memories_forget_activity(twin_env):
    out = twin("learn", "I'm allergic to penicillin. My brother Rui lives in Faro.", "--json").stdout
    created = json.loads(out)["created"]
    assert [m["kind"] for m in created] == ["fact", "relationship"]
    assert "2 memories have no vector yet" in twin("recall", "penicillin").stderr
    run_worker("embed")  # `twin learn` asked the daemon (here: a burst worker) to embed
    assert "no vector" not in twin("recall", "penicillin").stderr

    hits = json.loads(twin("recall", "which antibiotic must doctors avoid?", "--json").stdout)
    assert hits[0]["content"] == "Owner is allergic to penicillin." and hits[0]["vector"] > 0.3
    listed = json.loads(twin("memories", "--json").stdout)
    assert [m["id"] for m in listed] == sorted((m["id"] for m in created), reverse=True)
    assert json.loads(twin("memories", "--kind", "relationship", "--json").stdout)[0]["content"].startswith(
        "Owner's brother Rui")

    today = {m["id"] for m in json.loads(twin("today", "--json").stdout)}
    assert today >= {m["id"] for m in created}  # learned just now: today on the owner's calendar
    many = twin("learn", " ".join(f"My friend number {n} lives in town {n} near the river." for n in range(15)))
    assert many.stdout.count("learned ") == 12 and "at most 12 memories" in many.stderr
    twin("learn", "I live in Lisbon.")
    twin("learn", "I live in Berlin.")
    shown = twin("memories", "--all").stdout
    assert "Owner lives in Berlin." in shown and "Owner lives in Lisbon." not in twin("memories").stdout
    lisbon = next(line for line in shown.splitlines() if "Owner lives in Lisbon." in line)
    assert lisbon.endswith(")") and "(superseded by #" in lisbon

    assert "forgot #" in twin("forget", str(created[0]["id"])).stdout
    assert twin("forget", "999999", check=False).returncode == 1
    assert all(h["id"] != created[0]["id"] for h in json.loads(twin("recall", "penicillin", "--json").stdout))
    diary = twin("activity", "-n", "10").stdout
    assert "Learned 2 thing(s) from muse." in diary and f"#{created[0]['id']}" in diary
    assert "penicillin" not in diary  # forgotten text never repeated


def test_status_and_doctor(twin_env):
    for text in ["I bake sourdough bread every Sunday morning.", "My cat Pixel is afraid of the vacuum cleaner.",
                 "I prefer trains over planes for trips under six hours."]:
        twin("learn", text)
    drain()
    status = json.loads(twin("status", "--json").stdout)
    assert status["memories"] == 3 and status["embedded"] == 3 and status["pending_embedding"] == 0
    assert status["index"]["state"] == "checkpointed" and status["index"]["vectors"] == 3
    # Redis reachable, index checkpointed, embedder local; no model provider is a degraded mode (invariant 6)
    assert status["degraded"] == ["no model provider (TWIN_LLM_BASE_URL unset): offline extraction, no reflection"]
    assert status["model"] == {"provider": None}
    doctor = json.loads(twin("doctor", "--json").stdout)
    assert doctor["ok"], doctor
    assert {c["check"] for c in doctor["checks"]} == {"full-text index", "embeddings exist", "paraphrase ranks first",
                                                      "recall finds stored memories", "index matches SQLite"}
    index_file = Path(os.environ["TWIN_DATA_DIR"]) / "index" / "memories.hnsw"
    saved = index_file.read_bytes()
    index_file.write_bytes(saved[:1000])  # truncated while the daemon is stopped: status must not say "checkpointed"
    broken = json.loads(twin("status", "--json").stdout)
    assert broken["index"]["state"] == "corrupt" and any(d.startswith("index corrupt") for d in broken["degraded"])
    index_file.unlink()
    assert json.loads(twin("status", "--json").stdout)["index"]["state"] == "missing"
    index_file.write_bytes(saved)
    assert json.loads(twin("status", "--json").stdout)["index"]["state"] == "checkpointed"


def test_doctor_recalls_each_sampled_memory_in_its_own_scope(twin_env):
    """`twin doctor` samples memories of every scope (a namespace, a project): each is recalled in its own, so a
    twin with projects passes (it failed: 0 of 20 found, recall looked in `default` alone)."""
    twin("learn", "I bake sourdough bread every Sunday morning.")
    twin("learn", "My standup with the platform team is at 9:15.", "--namespace", "work")
    twin("project", "create", "garden")
    twin("project", "activate", "garden")
    twin("learn", "The garden shed's padlock hangs by the apple trees.", "--force")
    twin("learn", "The compost bin is emptied every second Saturday.", "--force")
    drain()
    doctor = json.loads(twin("doctor", "--json").stdout)
    found = next(c for c in doctor["checks"] if c["check"] == "recall finds stored memories")
    assert doctor["ok"] and found["detail"].startswith("4 of 4"), doctor


def test_doctor_fails_when_vectors_are_missing(twin_env):
    twin("learn", "I keep the spare house key under the blue flower pot.")  # no worker runs: never embedded
    proc = twin("doctor", check=False)
    assert proc.returncode == 1 and "FAIL  embeddings exist" in proc.stdout
    twin("backfill")  # the CLI alone, no daemon: vectors but no index yet, which is not a failure
    proc = twin("doctor", "--json", check=False)
    index = next(c for c in json.loads(proc.stdout)["checks"] if c["check"] == "index matches SQLite")
    assert proc.returncode == 0 and index["ok"] and index["detail"].startswith("no saved index (none built yet")


def test_doctor_counts_the_vectors_stored_since_the_checkpoint(twin_env):
    twin("learn", "The garden shed's padlock hangs by the apple trees.", "--force")
    drain()  # the embedding worker writes a checkpoint
    twin("learn", "The compost bin is emptied every second Saturday.", "--force")
    twin("backfill")  # a vector the checkpoint does not hold yet
    index = next(c for c in json.loads(twin("doctor", "--json").stdout)["checks"]
                 if c["check"] == "index matches SQLite")
    assert index["ok"] and index["detail"].startswith("1 vectors in the checkpoint; 0 missing"), index
    assert "1 stored since it" in index["detail"], index


def test_keyword_only_without_embedder(twin_env, monkeypatch):
    monkeypatch.setenv("TWIN_EMBED_BACKEND", "none")
    twin("learn", "I keep the spare house key under the blue flower pot.")
    run_worker("embed")  # drains the flush job without a model
    proc = twin("recall", "where is the spare key?")
    assert "keyword-only" in proc.stderr and "flower pot" in proc.stdout
    status = json.loads(twin("status", "--json").stdout)
    assert any("keyword-only" in line for line in status["degraded"])


@pytest.mark.slow
def test_export_import_is_lossless_and_deduplicates(twin_env, tmp_path):
    twin("learn", "I moved to Berlin in September 2025. My manager is called Jonas.")
    with Store(twin_env.db_path) as store:
        store.touch([1], "2026-01-02T03:04:05Z")
    dump = tmp_path / "memories.jsonl"
    twin("export", "-o", str(dump))
    assert oct(dump.stat().st_mode & 0o777) == "0o600"
    piped = tmp_path / "piped.jsonl"  # `twin export > FILE`: the shell makes FILE 0644; the export makes it private
    with open(piped, "w") as out:
        os.chmod(piped, 0o644)
        done = subprocess.run([sys.executable, "-m", "twin", "export"], cwd=ROOT, stdout=out, stderr=subprocess.PIPE,
                              text=True, timeout=60, check=False)
    assert done.returncode == 0 and "made the export file on stdout private" in done.stderr, done.stderr
    assert oct(piped.stat().st_mode & 0o777) == "0o600" and piped.read_text() == dump.read_text()
    victim = tmp_path / "victim.txt"  # -o through a symbolic link: refused, its target untouched (a breaker run)
    victim.write_text("not an export\n")
    os.chmod(victim, 0o644)
    (tmp_path / "link.jsonl").symlink_to(victim)
    refused = twin("export", "-o", str(tmp_path / "link.jsonl"), check=False)
    assert refused.returncode == 2 and "symbolic link" in refused.stderr, refused.stderr
    assert victim.read_text() == "not an export\n" and oct(victim.stat().st_mode & 0o777) == "0o644"
    exported = [json.loads(line) for line in dump.read_text().splitlines()]

    fresh = tmp_path / "fresh"
    env_fresh = {"TWIN_DATA_DIR": str(fresh)}
    proc = subprocess.run([sys.executable, "-m", "twin", "import", str(dump)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={**os.environ, **env_fresh}, check=False)
    assert proc.returncode == 0 and "imported 2 new" in proc.stdout, proc.stderr
    with Store(fresh / "twin.db") as store:
        imported = [m.to_dict() for m in reversed(store.list_memories("owner"))]
    keep = ("kind", "content", "source", "importance", "tags", "created_at", "last_accessed", "hits", "sensitivity",
            "provenance", "status", "content_sha256")
    assert [{k: m[k] for k in keep} for m in imported] == [{k: m[k] for k in keep} for m in exported]
    again = twin("import", str(dump)).stdout
    assert "imported 0 new, 2 already known" in again
    with Store(fresh / "twin.db") as store:  # a second restore does not inflate importance or hits
        assert [m.to_dict() for m in reversed(store.list_memories("owner"))] == imported


def test_import_reports_bad_lines_and_keeps_the_rest(twin_env, tmp_path):
    lines = "\n".join([
        json.dumps({"content": "Owner owns a green canoe.", "kind": "fact", "created_at": "2025-05-01T10:00:00Z"}),
        "{not json",
        json.dumps({"content": "", "kind": "fact"}),
        json.dumps({"content": "Owner hates cilantro.", "kind": "feeling"}),
        json.dumps({"content": "Owner hates cilantro.", "kind": "preference", "importance": 7}),
        json.dumps(["a list"]),
        json.dumps({"content": "Owner will be born.", "kind": "fact", "created_at": "2999-01-01T00:00:00Z"}),
        json.dumps({"content": "Owner owns a very old canoe.", "hits": 10**30}),
        json.dumps({"content": "Owner owns a very new canoe.", "hits": -5}),
        json.dumps({"content": "Owner " + "x" * 30_000}),
    ])
    dump = tmp_path / "mixed.jsonl"
    dump.write_bytes(lines.encode() + b'\n{"content": "Owner likes caf\xe9.", "kind": "fact"}\n')  # not UTF-8
    proc = twin("import", str(dump), check=False)
    assert proc.returncode == 1  # lines were skipped; the good one is imported all the same
    assert "imported 1 new, 0 already known, skipped 10" in proc.stdout and "Traceback" not in proc.stderr
    assert "line 2" in proc.stderr and "kind 'feeling'" in proc.stderr and "in the future" in proc.stderr
    assert "line 8: hits must be" in proc.stderr and "line 9: hits must be" in proc.stderr
    assert "line 10: content is longer than" in proc.stderr
    assert "line 11" in proc.stderr and "utf-8" in proc.stderr


def test_recall_as_of_replays_a_moment(twin_env, tmp_path):
    rows = [{"content": "Owner lives in Lisbon.", "kind": "fact", "created_at": "2025-03-01T10:00:00Z"},
            {"content": "Owner moved to Berlin.", "kind": "fact", "created_at": "2025-09-01T10:00:00Z"}]
    twin("import", "-", stdin="\n".join(json.dumps(r) for r in rows))
    drain()
    early = json.loads(twin("recall", "where does the owner live?", "--as-of", "2025-06-01T00:00:00Z",
                            "--json").stdout)
    assert [h["content"] for h in early] == ["Owner lives in Lisbon."]
    late = json.loads(twin("recall", "where does the owner live?", "--as-of", "2025-09-02T00:00:00Z",
                           "--json").stdout)
    assert {h["content"] for h in late} == {"Owner lives in Lisbon.", "Owner moved to Berlin."}
    berlin = next(h for h in late if "Berlin" in h["content"])
    assert berlin["recency"] > 0.95  # a day old at the as-of time: recency is measured from then, not today
    assert twin("recall", "x", "--as-of", "last tuesday", check=False).returncode == 2
    assert json.loads(twin("recall", "where does the owner live?", "--as-of", "0999-05-05", "--json").stdout) == []
    assert len(json.loads(twin("recent", "--since", "0999-05-05", "--json").stdout)) == 2  # a year < 1000 is padded


def test_status_flags_a_world_readable_env_file(twin_env, tmp_path):
    env_file = Path(os.environ["TWIN_ENV_FILE"])
    env_file.parent.mkdir(parents=True, exist_ok=True)
    env_file.write_text("TWIN_LOG_LEVEL=INFO\n")
    os.chmod(env_file, 0o644)
    status = json.loads(twin("status", "--json").stdout)
    assert any("readable by other users" in line and "mode 644" in line for line in status["degraded"])
    os.chmod(env_file, 0o600)
    status = json.loads(twin("status", "--json").stdout)
    assert not any("readable by other users" in line for line in status["degraded"])


def test_every_setting_is_documented_in_the_example_config():
    from twin.settings import Settings

    example = (ROOT / "config" / "twin.example.toml").read_text()
    secrets = {"llm_api_key", "telegram_bot_token", "redis_password"}  # TWIN_ variables for the env file only
    assert [name for name in Settings.model_fields if f"#{name} =" not in example and name not in secrets] == []
    assert all(f"TWIN_{name.upper()}" in example for name in secrets)


def test_export_import_keeps_supersession_tiers_and_edges_and_infers_secrets(tmp_path):
    import io

    from twin.learn.transfer import export_memories, import_memories

    with Store(tmp_path / "a.db") as a:
        lisbon = a.insert_memory("owner", "fact", "Owner lives in Lisbon.", "muse", 0.5,
                                 created_at="2025-03-01T10:00:00Z")
        berlin = a.insert_memory("owner", "fact", "Owner lives in Berlin.", "muse", 0.5,
                                 created_at="2025-09-01T10:00:00Z")
        a.conn.execute("UPDATE memories SET status = 'superseded', superseded_by = ?, supersede_reason = 'moved' "
                       "WHERE id = ?", (berlin, lisbon))
        a.conn.execute("UPDATE memories SET tier = 'cold' WHERE id = ?", (lisbon,))
        a.conn.execute("INSERT INTO memory_edges (src, dst, kind, strength, created_at) VALUES (?, ?, 'co_occurs', "
                       "0.8, '2025-09-01T10:00:00Z')", (berlin, lisbon))
        out = io.StringIO()
        assert export_memories(a, "owner", out) == 2
    lines = out.getvalue().splitlines()
    lines.append(json.dumps({"content": "Owner's garage opener code is 0451.", "sensitivity": "public"}))
    lines.append(json.dumps({"content": "Owner sold the Renault Clio.", "status": "superseded",
                             "superseded_by": [1, 2]}))
    with Store(tmp_path / "b.db") as b:
        report = import_memories(b, None, "owner", lines)
        assert report["created"] == 4
        assert report["problems"] == ["line 4: superseded by [1, 2], which is not in the import; imported as active"]
        new = {m.content: m for m in b.list_memories("owner", include_superseded=True)}
        old_new = new["Owner lives in Lisbon."]
        assert (old_new.status, old_new.superseded_by, old_new.supersede_reason, old_new.tier) == (
            "superseded", new["Owner lives in Berlin."].id, "moved", "cold")
        assert b.conn.execute("SELECT src, dst, kind, strength FROM memory_edges").fetchall() == [
            (new["Owner lives in Berlin."].id, old_new.id, "co_occurs", 0.8)]
        assert new["Owner's garage opener code is 0451."].sensitivity == "sensitive"  # a file never lowers it
        assert new["Owner sold the Renault Clio."].status == "active"
        assert b.conn.execute("SELECT COUNT(*) FROM edge_markers").fetchone() == (4,)


def test_limit_counts_the_memories_shown_and_json_forget_by_id_forgets(twin_env):
    """`--limit N` lists N memories a person may see (hidden sensitive ones are left out in the query, not after
    it) and says when older ones exist; `forget ID --json` forgets at once, as without --json, and says what went."""
    twin("learn", "My brother Rui lives in Faro. I'm allergic to penicillin. I play the cello on Sundays.")
    twin("learn", "My bank PIN is 4821.")
    twin("learn", "My locker code at the gym is 3391.")
    listed = twin("memories", "--limit", "2")
    assert len(listed.stdout.splitlines()) == 2 and "4821" not in listed.stdout and "3391" not in listed.stdout
    assert "the newest 2" in listed.stderr
    assert len(twin("memories", "--limit", "2", "--sensitive").stdout.splitlines()) == 2
    every = json.loads(twin("memories", "--json").stdout)
    assert len(every) == 3 and "newest" not in twin("memories").stderr
    first = every[-1]["id"]
    gone = twin("forget", str(first), "--json")
    assert gone.returncode == 0 and json.loads(gone.stdout)["dry_run"] is False
    assert first not in {m["id"] for m in json.loads(twin("memories", "--json").stdout)}
