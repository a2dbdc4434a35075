"""A Redis that answers but refuses writes (`OOM`, `NOREPLICAS`, `READONLY`, `MISCONF`), made to refuse for real on a
private redis-server: a push waits and lands once Redis takes writes, the owner is told once that learning paused
and once that it resumed, and under `twin up` the files changed meanwhile are all learned, once each, without a
restart and without a crash loop (twin.workers.refusal)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import daemon_environment
from redis import Redis
from redis.exceptions import ResponseError
from rq import Queue
from test_files_connector import start_redis

from twin.health import status
from twin.store import Store
from twin.workers.bus import EMBED_QUEUE, Bus
from twin.workers.refusal import LearningPause, RefusalRetry, is_write_refusal, paused_since, refusal_code

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def own_redis(tmp_path):
    """`(client, url)` of a private redis-server this test may make refuse writes."""
    directory = tmp_path / "redis"
    directory.mkdir()
    proc, url = start_redis(directory)
    client = Redis.from_url(url)
    yield client, url
    client.close()
    proc.terminate()
    proc.wait(10)


def refuse(client: Redis, how: str) -> None:
    """Make the server refuse writes for real: `oom` (maxmemory of 1 byte, noeviction), `noreplicas`
    (min-replicas-to-write 1 with no replica), `readonly` (a replica of a master that is not there)."""
    if how == "oom":
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", 1)
    elif how == "noreplicas":
        client.config_set("min-replicas-to-write", 1)
    elif how == "readonly":
        client.replicaof("127.0.0.1", "1")


def lift(client: Redis) -> None:
    """Take writes again, whichever refusal `refuse` set."""
    client.config_set("maxmemory", 0)
    client.config_set("min-replicas-to-write", 0)
    client.replicaof("NO", "ONE")


@pytest.mark.parametrize("how, code", [("oom", "OOM"), ("noreplicas", "NOREPLICAS"), ("readonly", "READONLY")])
def test_each_refusal_is_recognised_and_a_bug_is_not(own_redis, how, code):
    client, _ = own_redis
    refuse(client, how)
    try:
        with pytest.raises(ResponseError) as raised:
            client.set("k", "v")
        assert refusal_code(raised.value) == code
        with pytest.raises(ResponseError) as raised:  # inside a pipeline (RQ's enqueue) too
            Bus(client).enqueue("embed_flush")
        assert is_write_refusal(raised.value)
        assert client.get("k") is None  # reads still work
    finally:
        lift(client)
    client.set("k", "not a list")
    with pytest.raises(ResponseError) as raised:
        client.lpush("k", "x")  # WRONGTYPE: a bug, never waited out
    assert not is_write_refusal(raised.value)


def namespaces_allowed() -> None:
    """Skip, with the reason, where this machine allows no user+mount namespace (so no tmpfs of our own)."""
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True,
                           text=True)
    if probe.returncode != 0:
        pytest.skip(f"no user+mount namespace here for a small tmpfs ({probe.stderr.strip()})")


def test_misconf_on_a_full_disk_is_recognised_and_ends_when_space_is_freed(tmp_path):
    namespaces_allowed()
    from full_disk import FullDiskRedis

    with FullDiskRedis(tmp_path / "disk") as disk:
        client = Redis.from_url(disk.url)
        client.set("before", "1")
        disk.fill()
        deadline = time.monotonic() + 30
        while not disk.refuses(client) and time.monotonic() < deadline:
            time.sleep(0.1)
        with pytest.raises(ResponseError) as raised:
            client.set("k", "v")
        assert refusal_code(raised.value) == "MISCONF"
        disk.free()
        deadline = time.monotonic() + 10
        while disk.refuses(client) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.set("k", "v") and client.get("before") == b"1"
        client.close()


def pause_lines(store: Store) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT text FROM activity WHERE text LIKE 'Learning %' ORDER BY id")]


def test_a_refused_push_waits_lands_and_the_pause_is_said_once(twin_paths, own_redis):
    client, _ = own_redis
    halt = threading.Event()
    bus = Bus(client, RefusalRetry(halt, LearningPause(twin_paths.db_path, twin_paths.being), max_wait_s=0.5))
    landed: list[str] = []
    refuse(client, "oom")
    pushes = threading.Thread(target=lambda: landed.extend(bus.enqueue("embed_flush") for _ in range(3)))
    pushes.start()
    time.sleep(1.5)
    with Store(twin_paths.db_path) as store:
        during = (len(landed), pause_lines(store), paused_since(store, twin_paths.being),
                  status(twin_paths, store, bus))
    assert during[0] == 0 and pushes.is_alive()
    assert len(during[1]) == 1 and during[1][0].startswith("Learning paused: Redis is out of memory (OOM")
    assert during[2]["reason"].startswith("Redis is out of memory")
    report = during[3]
    assert report["learning"]["paused"] is True
    assert [line for line in report["degraded"] if line.startswith("learning paused since")]
    lift(client)
    pushes.join(10)
    assert not pushes.is_alive() and len(landed) == 3
    assert Queue(EMBED_QUEUE, connection=client).count == 3  # each push landed once
    with Store(twin_paths.db_path) as store:
        lines = pause_lines(store)
        assert len(lines) == 2 and lines[1].startswith("Learning resumed: Redis takes writes again after")
        assert paused_since(store, twin_paths.being) is None
        assert status(twin_paths, store, bus)["learning"] == {"paused": False}

    refuse(client, "noreplicas")  # a second pause is said again, and a stop ends the wait with the refusal
    stopper = threading.Timer(1.0, halt.set)
    stopper.start()
    started = time.monotonic()
    with pytest.raises(ResponseError):
        bus.enqueue("embed_flush")
    assert time.monotonic() - started < 3
    lift(client)
    with Store(twin_paths.db_path) as store:
        lines = pause_lines(store)
        assert len(lines) == 3 and "too few replicas" in lines[2]


def test_a_bus_without_patience_raises_at_once(twin_paths, own_redis):
    client, _ = own_redis
    refuse(client, "oom")
    try:
        started = time.monotonic()
        with pytest.raises(ResponseError):
            Bus(client, RefusalRetry(threading.Event())).impatient().enqueue("embed_flush")
        assert time.monotonic() - started < 1
    finally:
        lift(client)


# -- the daemon ----------------------------------------------------------------------------------------------
def write_note(folder: Path, i: int) -> Path:
    """A note with two sentences of its own (its number in words no other note has)."""
    path = folder / f"refused-{i:02d}.md"
    path.write_text(f"# Trip number {i}\n\nOn trip {i} the owner hiked to lake number {i} with a friend. "
                    f"The owner camped at site {i} near the lake for two nights.\n")
    return path


def per_source(db: Path) -> dict[str, int]:
    with Store(db) as store:
        return dict(store.conn.execute("SELECT source, COUNT(*) FROM memories GROUP BY source").fetchall())


def staged_total(db: Path) -> int:
    """How many items were ever staged (ingest_items' AUTOINCREMENT): one per hand-over of a file."""
    with Store(db) as store:
        row = store.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'ingest_items'").fetchone()
    return row[0] if row else 0


def diary(db: Path) -> list[str]:
    with Store(db) as store:
        return [r[0] for r in store.conn.execute("SELECT text FROM activity ORDER BY id")]


def wait_for(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.25)
    pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}")


@contextmanager
def running_daemon(env: dict, log: Path):
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "twin", "up"], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        proc.terminate()
        assert proc.wait(60) == 0, log.read_text()[-3000:]


@pytest.mark.parametrize("how", ["oom", "noreplicas"])
def test_files_changed_while_redis_refuses_are_all_learned_once_without_a_restart(daemon_env, own_redis, tmp_path,
                                                                                   how):
    client, url = own_redis
    docs = Path(daemon_env["TWIN_FILES_ROOTS"])
    env = {**daemon_env, "TWIN_REDIS_URL": url, "TWIN_EMBED_BACKEND": "none"}
    db = Path(env["TWIN_DATA_DIR"]) / "twin.db"
    first = [write_note(docs, i) for i in range(3)]
    log = tmp_path / "daemon.log"
    with running_daemon(env, log) as proc:
        before = wait_for(lambda: len(per_source(db)) == 3 and per_source(db), 90, "the first 3 notes learned")
        staged_before = staged_total(db)
        refuse(client, how)
        later = [write_note(docs, i) for i in range(3, 23)]
        time.sleep(8)  # longer than a watch batch, a staged tick and several retries
        during = per_source(db)
        shown = json.loads(subprocess.run([sys.executable, "-m", "twin", "status", "--json"], cwd=ROOT, env=env,
                                          capture_output=True, text=True, timeout=60).stdout)
        lift(client)
        after = wait_for(lambda: len(per_source(db)) == 23 and per_source(db), 90, "the 20 notes learned")
        time.sleep(3)  # a duplicate push would be learned by now
        assert proc.poll() is None  # never restarted
        final, lines = per_source(db), diary(db)
    assert during == before  # nothing of the 20 learned while refused, nothing of the first 3 lost
    assert shown["learning"]["paused"] is True and any(d.startswith("learning paused") for d in shown["degraded"])
    assert {s for s in after} == {f"file:{p}" for p in first + later}
    assert final == after and {s: after[s] for s in before} == before
    assert all(after[f"file:{p}"] == 2 for p in later)  # each note's two sentences, once each
    assert staged_total(db) - staged_before == 20  # one hand-over per note: none dropped, none doubled
    paused = [line for line in lines if line.startswith("Learning paused")]
    resumed = [line for line in lines if line.startswith("Learning resumed")]
    assert len(paused) == 1 and len(resumed) == 1
    assert not [line for line in lines if "exited (code" in line or "connector failed" in line]  # no crash loop
    journal = log.read_text()
    assert "Traceback" not in journal, journal[journal.index("Traceback") - 300:][:4000]


WORKER_ROLES = ("learn", "embed", "scheduler")
WAITING = "waiting until it takes writes again"
"""What a worker logs when it meets a refusal (twin.workers.main `patiently`)."""


def registered(client: Redis, role: str) -> bool:
    """Whether the worker process of `role` has registered with RQ: its `rq:worker:twin-ROLE-PID…` key, or for the
    scheduler its `rq:scheduler-lock:*` keys (twin.workers.main `serve`, `run_scheduler`)."""
    if role == "scheduler":
        return bool(client.keys("rq:scheduler-lock:*"))
    return bool(client.keys(f"rq:worker:twin-{role}-*"))


@pytest.fixture(scope="module")
def workers_started_while_refused(tmp_path_factory, model_cache):
    """Every worker role started as its own process over one twin (as the supervisor starts them), all at once
    while one private Redis refuses every write, watched until each has met the refusal and tried
    three more times, so the refused start-up is waited out once for the three: `{role: what it showed}` with `alive_refused`, `none_registered` (no worker and no scheduler key
    after the wait), `registered`, `alive_after` and `journal`; and of a second process of each role, started with
    it and stopped (SIGTERM) while refused, `stopped_exit`, `stopped_after_s` and `stopped_journal`."""
    root = tmp_path_factory.mktemp("refused-workers")
    (root / "redis").mkdir()
    (root / "twin").mkdir()
    redis_proc, url = start_redis(root / "redis")
    client = Redis.from_url(url)
    procs: dict[str, tuple[subprocess.Popen, Path]] = {}
    shown: dict[str, dict] = {role: {} for role in WORKER_ROLES}
    try:
        refuse(client, "oom")
        env = {**daemon_environment(root / "twin", model_cache), "TWIN_REDIS_URL": url, "TWIN_EMBED_BACKEND": "none"}
        for role in WORKER_ROLES:
            for key in (role, f"{role}-stopped"):  # the second of each is stopped while it waits
                log = root / f"{key}.log"
                with open(log, "ab") as out:
                    procs[key] = (subprocess.Popen([sys.executable, "-m", "twin.workers", role], cwd=ROOT, env=env,
                                                   stdout=out, stderr=subprocess.STDOUT), log)
        wait_for(lambda: all(WAITING in log.read_text() for _, log in procs.values()), 90,
                 "every worker to meet the refusal")
        time.sleep(3.5)  # three more refused tries each (backoff 0.5 + 1 + 2 s: REFUSAL_BACKOFF_MIN_S doubling)
        none_registered = not client.keys("rq:worker:*") and not client.keys("rq:scheduler-lock:*")
        for role in WORKER_ROLES:
            shown[role].update(alive_refused=procs[role][0].poll() is None, none_registered=none_registered)
            proc, log = procs.pop(f"{role}-stopped")
            started = time.monotonic()
            proc.terminate()  # what the supervisor's stop sends
            try:
                shown[role]["stopped_exit"] = proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                shown[role]["stopped_exit"] = proc.wait(10)
            shown[role].update(stopped_after_s=time.monotonic() - started, stopped_journal=log.read_text())
        lift(client)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(registered(client, role) for role in WORKER_ROLES):
            time.sleep(0.25)
        for role, (proc, _) in procs.items():
            shown[role].update(registered=registered(client, role), alive_after=proc.poll() is None)
    finally:
        for proc, _ in procs.values():
            proc.terminate()
        for role, (proc, log) in procs.items():
            try:
                shown[role]["exit"] = proc.wait(60)
            except subprocess.TimeoutExpired:  # a stop not acted on: the test says so with the journal
                proc.kill()
                shown[role]["exit"] = f"killed after 60 s (exit {proc.wait(10)})"
            shown[role]["journal"] = log.read_text()
        client.close()
        redis_proc.terminate()
        redis_proc.wait(10)
    yield shown


@pytest.mark.daemon
@pytest.mark.parametrize("role", WORKER_ROLES)
def test_a_worker_started_while_redis_refuses_waits_then_serves(workers_started_while_refused, role):
    """Started while Redis refuses every write (the supervisor restarts a worker at any time), a worker neither
    exits nor is restarted: it waits in its own process and registers with RQ once writes are taken again."""
    shown = workers_started_while_refused[role]
    journal = shown["journal"]
    assert shown["alive_refused"], journal[-3000:]
    assert shown["none_registered"]
    assert shown["registered"], f"the {role} did not register within 30 s of the lift:\n{journal[-3000:]}"
    assert shown["alive_after"] and shown["exit"] == 0, journal[-3000:]
    assert "Traceback" not in journal and WAITING in journal, journal[-3000:]


@pytest.mark.daemon
@pytest.mark.parametrize("role", WORKER_ROLES)
def test_a_worker_stopped_while_it_waits_out_a_refusal_stops_at_once_and_cleanly(workers_started_while_refused,
                                                                                 role):
    """SIGTERM (the supervisor's stop) to a worker that is waiting for Redis to take writes again: it exits 0 within
    a few seconds, with no traceback (before: a StopRequested traceback out of the wait, and a scheduler that never
    stopped until it was killed 15 s later)."""
    shown = workers_started_while_refused[role]
    journal = shown["stopped_journal"]
    assert WAITING in journal, journal[-3000:]
    assert shown["stopped_exit"] == 0 and shown["stopped_after_s"] < 5, (shown["stopped_after_s"], journal[-3000:])
    assert "Traceback" not in journal, journal[-3000:]
    assert "stopped while Redis refused writes" in journal, journal[-3000:]


def test_files_changed_on_a_full_disk_are_learned_once_space_is_freed(daemon_env, tmp_path):
    """A real full disk: Redis's append-only file on a 4 MB tmpfs of a user+mount namespace (no root needed), filled
    with a ballast file, then freed. Skipped, with the reason, where the machine allows no user namespace."""
    namespaces_allowed()
    from full_disk import FullDiskRedis

    with FullDiskRedis(tmp_path / "disk") as disk:
        client = Redis.from_url(disk.url)
        docs = Path(daemon_env["TWIN_FILES_ROOTS"])
        env = {**daemon_env, "TWIN_REDIS_URL": disk.url, "TWIN_EMBED_BACKEND": "none"}
        db = Path(env["TWIN_DATA_DIR"]) / "twin.db"
        write_note(docs, 0)
        log = tmp_path / "daemon.log"
        with running_daemon(env, log) as proc:
            before = wait_for(lambda: len(per_source(db)) == 1 and per_source(db), 90, "the first note learned")
            disk.fill()
            wait_for(lambda: disk.refuses(client), 30, "Redis to refuse writes on the full disk")
            later = [write_note(docs, i) for i in range(1, 21)]
            time.sleep(8)
            during = per_source(db)
            disk.free()
            after = wait_for(lambda: len(per_source(db)) == 21 and per_source(db), 90, "the 20 notes learned")
            assert proc.poll() is None
            lines = diary(db)
        client.close()
    assert during == before
    assert all(after[f"file:{p}"] == 2 for p in later)
    assert len([line for line in lines if line.startswith("Learning paused: Redis cannot save to its disk")]) == 1
    assert len([line for line in lines if line.startswith("Learning resumed")]) == 1
    assert os.path.exists(db)


def test_the_owner_is_told_on_telegram_once_when_learning_pauses_and_once_when_it_resumes(daemon_env, own_redis,
                                                                                         tmp_path):
    from fake_telegram import FakeTelegram

    client, url = own_redis
    token, owner = "4242:PAUSE-test-token", 42
    env_file = Path(daemon_env["TWIN_ENV_FILE"])
    env_file.write_text(f"TWIN_TELEGRAM_BOT_TOKEN={token}\n")
    env_file.chmod(0o600)
    docs = Path(daemon_env["TWIN_FILES_ROOTS"])
    db = Path(daemon_env["TWIN_DATA_DIR"]) / "twin.db"
    with FakeTelegram(token=token) as bot_api:
        env = {**daemon_env, "TWIN_REDIS_URL": url, "TWIN_EMBED_BACKEND": "none", "TWIN_TELEGRAM_BASE_URL": bot_api.url,
               "TWIN_TELEGRAM_ALLOWED_USERS": str(owner), "TWIN_TELEGRAM_POLL_TIMEOUT_S": "1"}
        with running_daemon(env, tmp_path / "daemon.log"):
            wait_for(lambda: "getUpdates" in bot_api.methods(), 60, "the bot to poll")
            wait_for(lambda: any(t.startswith("Files: found") for t in diary(db)), 60, "the scan")
            refuse(client, "oom")
            write_note(docs, 1)
            sent = bot_api.wait_for_sent(1, 30)
            bot_api.send_user_message("What did I do on trip one?", user_id=owner)
            replies = bot_api.wait_for_sent(2, 30)  # the chat is answered while learning is paused
            lift(client)
            wait_for(lambda: any(text.startswith("▶ Learning resumed") for _, text in bot_api.sent), 30,
                     "the resumed notice")
            wait_for(lambda: len(per_source(db)) == 1, 60, "the note learned")
            time.sleep(2)
            notices = [(chat, text) for chat, text in bot_api.sent if text[:1] in ("⏸", "▶")]
    assert sent[0] == (owner, sent[0][1]) and sent[0][1].startswith("⏸ Learning is paused since ")
    assert "Redis is out of memory" in sent[0][1]
    assert len(replies) == 2 and replies[1][0] == owner
    assert [text[:1] for _, text in notices] == ["⏸", "▶"] and {chat for chat, _ in notices} == {owner}


def test_a_refusal_rq_logs_with_its_traceback_is_one_line_in_the_journal(own_redis):
    import io
    import logging

    from twin.workers.main import RefusalWithoutTraceback

    client, _ = own_redis
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RefusalWithoutTraceback())
    logger = logging.getLogger("test.refusal.rq")
    logger.addHandler(handler)
    logger.propagate = False
    refuse(client, "oom")
    try:
        try:
            client.set("k", "v")
        except ResponseError:
            logger.error("Worker %s: found an unhandled exception, quitting...", "w1", exc_info=True)
            logger.error("Scheduler [PID %s] raised an exception.\n%s", 7, "Traceback (most recent call last): …")
    finally:
        lift(client)
    client.set("k", "text")
    try:
        client.lpush("k", "x")  # WRONGTYPE: a bug keeps its traceback
    except ResponseError:
        logger.error("Worker %s: found an unhandled exception, quitting...", "w2", exc_info=True)
    lines = out.getvalue().splitlines()
    assert lines[0] == ("Worker w1: found an unhandled exception, quitting... (Redis is out of memory (OOM: maxmemory "
                        "reached with the noeviction policy), so it refuses writes; waiting it out)")
    assert lines[1].startswith("Scheduler [PID 7] raised an exception. (Redis is out of memory")
    assert lines[2] == "Worker w2: found an unhandled exception, quitting..." and lines[3].startswith("Traceback")
