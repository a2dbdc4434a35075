"""The supervisor for real: `twin up` as a subprocess with its own private redis-server, real workers and
the files connector; SIGTERM under load, kill -9 of the embedding worker, sd_notify, bad settings."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fault_run import wait_for  # other daemon tests import it from here

from twin.daemon import process_states
from twin.remote import DaemonTwin
from twin.store import Store

ROOT = Path(__file__).resolve().parent.parent
TOPICS = ["sailing", "pottery", "chess openings", "sourdough baking", "birdwatching", "rust programming",
          "jazz piano", "alpine hiking", "bookbinding", "home roasting coffee"]


def write_docs(folder: Path, n: int) -> list[Path]:
    paths = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        path = folder / f"note-{i:03d}.md"
        path.write_text(f"# Notes on {topic} {i}\n\nThis note number {i} collects what was learned about {topic}. "
                        f"The practice of {topic} needs patience and steady hands, said the teacher in week {i}. "
                        f"A good guide to {topic} explains the basics before the advanced material.\n")
        paths.append(path)
    return paths


def start(env: dict, log: Path, cwd: Path = ROOT) -> subprocess.Popen:
    """`twin up` as the console script runs it (`-P`: the working directory is not on `sys.path`), in `cwd`."""
    with open(log, "ab") as out:
        return subprocess.Popen([sys.executable, "-P", "-m", "twin", "up"], cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT)


def memory_count(env: dict) -> int:
    db = Path(env["TWIN_DATA_DIR"]) / "twin.db"
    if not db.exists():
        return 0
    with Store(db) as store:
        return store.counts("owner")["memories"]




def settled(env: dict, files: int):
    """True once every file is in the manifest and every memory has a vector."""
    db = Path(env["TWIN_DATA_DIR"]) / "twin.db"
    if not db.exists():
        return False
    with Store(db) as store:
        indexed = store.conn.execute("SELECT COUNT(*) FROM files_manifest WHERE state = 'indexed'").fetchone()[0]
        counts = store.counts("owner")
        sources = store.conn.execute("SELECT COUNT(DISTINCT source) FROM memories").fetchone()[0]
    return indexed == files and sources == files and counts["memories"] == counts["embedded"] > 0 and counts


def stop(proc: subprocess.Popen, timeout_s: float = 60) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout_s)


def test_sigterm_under_load_loses_nothing_and_restart_relearns_nothing(daemon_env, tmp_path):
    paths = write_docs(tmp_path / "docs", 60)
    log = tmp_path / "daemon.log"
    proc = start(daemon_env, log)
    db = Path(daemon_env["TWIN_DATA_DIR"]) / "twin.db"
    wait_for(lambda: memory_count(daemon_env) > 0, 60, "the first memories")
    assert stop(proc) == 0, log.read_text()  # SIGTERM while files are still being learned and embedded
    text = log.read_text()
    assert "twin stopped cleanly." in text and "Traceback" not in text
    for name in ("learn", "embed", "redis"):  # a warm stop's seconds are never silent in the journal
        assert re.search(rf"supervisor: {name}( worker)? stopped in \d+\.\d s", text), (name, text[-3000:])

    proc = start(daemon_env, log)
    try:
        counts = wait_for(lambda: settled(daemon_env, len(paths)), 180, "all files learned and embedded")
        with Store(db) as store:
            per_file = dict(store.conn.execute("SELECT source, COUNT(*) FROM memories GROUP BY source").fetchall())
            learned_lines = store.conn.execute("SELECT COUNT(*) FROM activity WHERE text LIKE 'Files:%'").fetchone()[0]
        # what the first run left staged is followed too: the restart says once when it is all searchable
        wait_for(lambda: "Backlog searchable:" in log.read_text(), 90, "the backlog line")
        assert set(per_file) == {f"file:{p}" for p in paths}
        assert all(n >= 2 for n in per_file.values())
    finally:
        assert stop(proc) == 0
    assert not (Path(daemon_env["TWIN_RUNTIME_DIR"]) / process_states.FILE_NAME).exists()  # stopped: nothing down

    # a third start re-learns nothing unchanged
    before = len(log.read_text())  # the second run may have logged the same line: read only the third's
    proc = start(daemon_env, log)
    try:
        wait_for(lambda: "0 to learn (0 new, 0 changed), " in log.read_text()[before:].split("twin is up")[-1], 60,
                 "the rescan line")
        time.sleep(2)
        with Store(db) as store:
            assert store.counts("owner") == counts
    finally:
        assert stop(proc) == 0
    assert learned_lines >= 1


def _down_lines(runtime: Path) -> list[str]:
    """What `twin status` says of the daemon's processes that are down (`process_states.degraded_lines`)."""
    from twin.settings import Settings

    return process_states.degraded_lines(Settings(runtime_dir=runtime))


def _children(pid: int) -> dict[int, str]:
    out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return {int(line.split(None, 1)[0]): line.split(None, 1)[1] for line in out.strip().splitlines()}


def test_killed_embedding_worker_is_restarted_and_nothing_is_lost(daemon_env, tmp_path):
    paths = write_docs(tmp_path / "docs", 40)
    log = tmp_path / "daemon.log"
    proc = start(daemon_env, log)
    try:
        embed_pid = wait_for(lambda: next((p for p, a in _children(proc.pid).items() if "workers embed" in a), None),
                             30, "the embedding worker")
        db = Path(daemon_env["TWIN_DATA_DIR"]) / "twin.db"
        wait_for(lambda: memory_count(daemon_env) > 0, 60, "memories")
        os.kill(embed_pid, signal.SIGKILL)
        runtime = Path(daemon_env["TWIN_RUNTIME_DIR"])
        said = wait_for(lambda: next((line for line in _down_lines(runtime) if "embed worker process is down" in line),
                                     None), 5, "twin status saying the embedding worker is down", every_s=0.02)
        assert "exit code -9, 1 restart(s) so far); twin restarts it at 20" in said
        wait_for(lambda: any("workers embed" in a for p, a in _children(proc.pid).items() if p != embed_pid),
                 30, "a new embedding worker")
        wait_for(lambda: not _down_lines(runtime), 10, "twin status no longer saying it is down")
        wait_for(lambda: settled(daemon_env, len(paths)), 180, "everything embedded after the restart")
        with Store(db) as store:
            lines = [r[0] for r in store.conn.execute("SELECT text FROM activity")]
        assert any("embed worker process exited (code -9)" in line for line in lines), lines
    finally:
        assert stop(proc) == 0


def test_the_supervisor_moves_due_retries_back_onto_their_queue(daemon_env, tmp_path):
    """No scheduler process: the supervisor holds RQ's scheduler locks and moves a job whose delay has passed (a
    retry's backoff) onto its queue, where the worker runs it; at the stop it lets go of the locks."""
    from datetime import timedelta

    from redis import Redis
    from rq import Queue
    from rq.job import Job

    from twin.workers.bus import LEARN_QUEUE

    proc = start(daemon_env, tmp_path / "daemon.log")
    try:
        client = Redis.from_url(f"unix://{Path(daemon_env['TWIN_RUNTIME_DIR']) / 'redis.sock'}?db=0")
        wait_for(lambda: "twin is up" in (tmp_path / "daemon.log").read_text(), 60, "twin up")
        assert not [a for a in _children(proc.pid).values() if "workers scheduler" in a]
        owner = wait_for(lambda: client.get(f"rq:scheduler-lock:{LEARN_QUEUE}"), 30, "the learn queue's scheduler lock")
        assert int(client.hget(b"rq:scheduler:" + owner, "pid")) == proc.pid  # the supervisor itself
        job = Queue(LEARN_QUEUE, connection=client).enqueue_in(timedelta(seconds=2), "twin.workers.jobs.scrub_store")
        assert job.get_status() == "scheduled"
        wait_for(lambda: Job.fetch(job.id, connection=client).get_status() == "finished", 30,
                 "the delayed job moved onto its queue and run")
    finally:
        assert stop(proc) == 0
    # the private Redis stopped with it: what the lock release did is seen in the log (no traceback)
    assert "Traceback" not in (tmp_path / "daemon.log").read_text()


def test_sd_notify_ready_and_stopping(daemon_env, tmp_path):
    sock_path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock.settimeout(60)
    env = dict(daemon_env, NOTIFY_SOCKET=str(sock_path))
    proc = start(env, tmp_path / "daemon.log")
    try:
        first = sock.recv(4096).decode()
        assert "READY=1" in first and "STATUS=" in first
        # READY means the daemon answers: the API is listening and its recall (model, index) is open
        token = (Path(env["TWIN_CONFIG_DIR"]) / "api-token").read_text().strip()
        health = DaemonTwin(f"http://127.0.0.1:{env['TWIN_API_PORT']}", token).health()
        assert health["ok"] is True and health["loading"] is False
        import json  # `twin status` looks at the running API: this twin's answers, so no degraded line of it
        report = json.loads(subprocess.run([sys.executable, "-m", "twin", "status", "--json"], cwd=ROOT, env=env,
                                           capture_output=True, text=True, timeout=60).stdout)
        assert not [line for line in report["degraded"] if "HTTP API" in line], report["degraded"]
    finally:
        proc.send_signal(signal.SIGTERM)
        messages = []
        while "STOPPING=1" not in " ".join(messages):
            messages.append(sock.recv(4096).decode())
        assert proc.wait(60) == 0
        sock.close()


@pytest.mark.parametrize("env_extra, expected", [
    ({"TWIN_INDEX_EF_SEARCH": "5"}, "TWIN_INDEX_EF_SEARCH"),
    ({"TWIN_EMBED_BACKEND": "gpt"}, "TWIN_EMBED_BACKEND"),
    ({"TWIN_RECALL_RECENCY_WEIGHT": "lots"}, "TWIN_RECALL_RECENCY_WEIGHT"),
])
def test_invalid_setting_is_one_line_and_exit_2(daemon_env, env_extra, expected):
    for command in (["status"], ["up"]):
        proc = subprocess.run([sys.executable, "-m", "twin", *command], cwd=ROOT, env=dict(daemon_env, **env_extra),
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2
        lines = (proc.stdout + proc.stderr).strip().splitlines()
        assert len(lines) == 1 and expected in lines[0] and "Traceback" not in lines[0], lines


def test_invalid_toml_and_setting_in_toml(daemon_env, tmp_path):
    config = Path(daemon_env["TWIN_CONFIG"])
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("index_ef_search = 3\n")
    proc = subprocess.run([sys.executable, "-m", "twin", "status"], cwd=ROOT, env=daemon_env,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert f"invalid setting index_ef_search in {config}: " in proc.stderr  # named where the owner wrote it
    config.write_text("files_max_bytes = false\n")  # a boolean is no number (it was 0 bytes: every file "too large")
    proc = subprocess.run([sys.executable, "-m", "twin", "status"], cwd=ROOT, env=daemon_env,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "files_max_bytes in" in proc.stderr and "must be a number, not true or false" in \
        proc.stderr
    config.write_text("this is = not [toml\n")
    proc = subprocess.run([sys.executable, "-m", "twin", "status"], cwd=ROOT, env=daemon_env,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "config file" in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_missing_redis_server_says_which_package(daemon_env):
    env = dict(daemon_env, TWIN_REDIS_SERVER_BIN="redis-server-not-here")
    proc = subprocess.run([sys.executable, "-m", "twin", "up"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1
    assert "apt-get install redis-server" in proc.stderr and "Traceback" not in proc.stdout + proc.stderr


def _diary(env: dict) -> list[str]:
    with Store(Path(env["TWIN_DATA_DIR"]) / "twin.db") as store:
        return [text for (text,) in store.conn.execute("SELECT text FROM activity ORDER BY id")]


def test_a_redis_server_that_exits_at_each_start_stops_twin_up_with_its_reason(daemon_env, tmp_path):
    """A private redis-server that exits at once (a corrupt AOF, a bad config): `twin up` stops after its third
    exit, well within the 20 s it would wait for one still starting, with one line naming the exit code and no
    traceback, and the diary says why it could not start. Found by a breaker run (a traceback after 21 s)."""
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\necho 'FATAL CONFIG FILE ERROR' >&2\nexit 1\n")
    fake.chmod(0o755)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "twin", "up"], cwd=ROOT, env=dict(daemon_env,
                          TWIN_REDIS_SERVER_BIN=str(fake)), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and time.monotonic() - started < 18
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out
    said = [line for line in proc.stderr.splitlines() if line.startswith("twin: ") and "warning" not in line]
    assert len(said) == 1 and "did not answer" in said[0] and "exited 3 time(s), last with code 1" in said[0], out
    assert any(line.startswith("twin cannot start: the private redis-server did not answer") for line in
               _diary(daemon_env)), _diary(daemon_env)


def test_a_stop_while_the_private_redis_starts_is_prompt(daemon_env, tmp_path):
    """SIGTERM while `twin up` waits for a private Redis that never answers: the daemon stops within seconds, not
    after the 20 s it would wait, exit 0, and says neither that it is up nor that it cannot start. Found by a
    breaker run (18 s, then "cannot start")."""
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\nexec sleep 1000\n")
    fake.chmod(0o755)
    log = tmp_path / "daemon.log"
    proc = start(dict(daemon_env, TWIN_REDIS_SERVER_BIN=str(fake)), log)
    try:
        wait_for(lambda: "started redis" in log.read_text(), 30, "the redis child started")
        stopped = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert time.monotonic() - stopped < 10
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = _diary(daemon_env)
    assert not [line for line in lines if line.startswith(("twin is up", "twin cannot start"))], lines
    assert lines[-1] == "twin stopped cleanly.", lines


def test_an_external_redis_without_the_urls_database_is_one_line_and_exit_2(daemon_env, redis_server):
    """`TWIN_REDIS_URL` naming a database the server does not have (`?db=99` of 16): a setting to fix, so `twin up`
    stops with one line naming it and exit 2, as for a refused login, and no worker is started to crash-loop.
    Found by a breaker run (workers restarting with tracebacks)."""
    url = redis_server.replace("db=0", "db=99")
    proc = subprocess.run([sys.executable, "-m", "twin", "up"], cwd=ROOT, env=dict(daemon_env, TWIN_REDIS_URL=url),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = [line for line in proc.stderr.splitlines() if line.startswith("twin: ") and "warning" not in line]
    assert len(said) == 1 and "database" in said[0] and "TWIN_REDIS_URL" in said[0], proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr and "started learn worker" not in proc.stdout + proc.stderr


def test_the_apis_port_taken_is_said_in_the_diary(daemon_env, tmp_path):
    """Another program holds the API's port: `twin up` runs on without its API, the diary says the API cannot
    listen on that address (not "did not answer within 60 s") and `twin status` lists it among the degraded modes.
    Found by a breaker run."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", int(daemon_env["TWIN_API_PORT"])))
    holder.listen()
    proc = start(daemon_env, tmp_path / "daemon.log")
    try:
        wait_for(lambda: any("exited while starting" in line for line in _diary(daemon_env)), 60,
                 "the diary line of an API that cannot listen")
        status = subprocess.run([sys.executable, "-m", "twin", "status"], cwd=ROOT, env=daemon_env,
                                capture_output=True, text=True, timeout=60)
        said = f"at http://127.0.0.1:{daemon_env['TWIN_API_PORT']} something takes the connection there but gives"
        assert said in status.stdout, status.stdout  # the holder takes the connection and never answers
    finally:
        assert stop(proc) == 0
        holder.close()
    lines = _diary(daemon_env)
    said = next(line for line in lines if "exited while starting" in line)
    assert f"it cannot listen on 127.0.0.1:{daemon_env['TWIN_API_PORT']}" in said, said
    assert not any("did not answer within" in line for line in lines), lines
    up = next(line for line in lines if line.startswith("twin is up"))
    assert "the HTTP API not listening" in up and "the HTTP API on port" not in up, up


def test_store_never_changes_the_mode_of_an_existing_directory(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    with Store(shared / "twin.db"):
        pass
    assert oct(shared.stat().st_mode & 0o777) == "0o755"
    assert oct((shared / "twin.db").stat().st_mode & 0o777) == "0o600"
    with Store(tmp_path / "new" / "twin.db"):
        pass
    assert oct((tmp_path / "new").stat().st_mode & 0o777) == "0o700"


def test_second_daemon_on_the_same_data_dir_is_refused(daemon_env, tmp_path):
    first = start(daemon_env, tmp_path / "first.log")
    try:
        wait_for(lambda: "twin is up" in (tmp_path / "first.log").read_text(), 60, "the first daemon")
        second = subprocess.run([sys.executable, "-m", "twin", "up"], cwd=ROOT, env=daemon_env, capture_output=True,
                                text=True, timeout=60)
        assert second.returncode == 1 and "already running" in second.stderr and f"pid {first.pid}" in second.stderr
        assert first.poll() is None  # the first one is untouched
    finally:
        assert stop(first) == 0


def test_supervisor_killed_leaves_no_orphans(daemon_env, tmp_path):
    proc = start(daemon_env, tmp_path / "daemon.log")
    children = wait_for(lambda: (c := _children(proc.pid)) and len(c) >= 4 and c, 60, "redis, two workers, the API")
    proc.kill()
    proc.wait(10)

    def gone():
        return not any(os.path.exists(f"/proc/{pid}") and "zombie" not in _state(pid) for pid in children)
    wait_for(gone, 30, "the children to die with their parent")
    ups = (tmp_path / "daemon.log").read_text().count("twin is up")  # 0 or 1: killed before or after its READY
    again = start(daemon_env, tmp_path / "daemon.log")  # the lock died with the supervisor
    try:
        wait_for(lambda: (tmp_path / "daemon.log").read_text().count("twin is up") == ups + 1, 60, "a clean restart")
    finally:
        assert stop(again) == 0


def _state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return "zombie"
    return "zombie" if stat.split(") ")[1].startswith("Z") else "alive"


@pytest.mark.parametrize("env_extra, expected", [
    ({"TWIN_DATA_DIR": ""}, "TWIN_DATA_DIR: must be an absolute path"),
    ({"TWIN_DATA_DIR": "relative/dir"}, "TWIN_DATA_DIR: must be an absolute path"),
    ({"TWIN_LOG_LEVEL": "loud"}, "TWIN_LOG_LEVEL: Input should be 'DEBUG', 'INFO', 'WARNING' or 'ERROR'"),
    ({"TWIN_FILES_ROOTS": "notes/relative"}, "TWIN_FILES_ROOTS: must be absolute paths (notes/relative is not)"),
    ({"TWIN_REDIS_URL": "garbage"}, "TWIN_REDIS_URL"),
    ({"TWIN_CONFIG": "/nonexistent/twin.toml"}, "TWIN_CONFIG: /nonexistent/twin.toml does not exist"),
    ({"TWIN_RECALL_IMPORTANCE_WEIGHT": "0.6", "TWIN_RECALL_RECENCY_WEIGHT": "0.5"},
     "TWIN_RECALL_IMPORTANCE_WEIGHT + TWIN_RECALL_RECENCY_WEIGHT must be below 1"),
])
def test_more_invalid_settings(daemon_env, env_extra, expected):
    proc = subprocess.run([sys.executable, "-m", "twin", "status"], cwd=ROOT, env=dict(daemon_env, **env_extra),
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and expected in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr


def test_unknown_key_in_the_config_file(daemon_env):
    Path(daemon_env["TWIN_CONFIG"]).write_text('file_roots = ["/tmp"]\n')
    proc = subprocess.run([sys.executable, "-m", "twin", "status"], cwd=ROOT, env=daemon_env, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 2 and "unknown setting(s) file_roots" in proc.stderr
