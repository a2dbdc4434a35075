"""Shared fixtures: a private redis-server on a temp unix socket, an isolated twin environment (with or without
Redis), the real model, and real RQ workers run in burst mode (in this process, or as a process where that is what
is tested; nothing mocked). Test tiers and markers: see `pytest_collection_modifyitems` and the README."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis import Redis

from twin.activity import Activity
from twin.settings import Settings, load_settings
from twin.store import Store

ROOT = Path(__file__).resolve().parent.parent
EVAL_DIR = ROOT.parent / "shared" / "eval"
"""Where the shared eval set is looked for unless `--eval-dir` says (as bench/_common.py's DEFAULT_EVAL_DIR)."""
EVAL_FILES = ("memories.jsonl", "queries.jsonl")

DAEMON_MODULES = {"test_daemon", "test_sources_daemon", "test_erasure_daemon", "test_telegram", "test_network",
                  "test_network_observers"}
"""Test modules that start `twin up` (the supervisor, its Redis and its workers as real processes): marked
`daemon`, the real-process tier. A test elsewhere that uses `daemon_env` is marked so too, and one that starts
the daemon another way carries `@pytest.mark.daemon` itself."""


def pytest_addoption(parser) -> None:
    parser.addoption("--eval-dir", type=Path, default=None,
                     help=f"the shared eval set ({', '.join(EVAL_FILES)}) for the tests marked eval; default "
                          "../shared/eval beside the repo. Given, or with -m eval, a missing set fails those tests")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    """The tiers: tests of the modules in `DAEMON_MODULES` or using `daemon_env` get the `daemon` marker (before
    `-m` selects, so `-m "not daemon"` leaves them out). `slow` and `eval` are set by hand on the tests."""
    for item in items:
        if item.module.__name__ in DAEMON_MODULES or "daemon_env" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.daemon)


def eval_asked(config) -> bool:
    """Whether this run asks for the eval set: `--eval-dir` is given, or `-m` names `eval` other than as
    `not eval` (`-m eval`, `-m "eval or slow"`)."""
    if config.getoption("--eval-dir") is not None:
        return True
    words = re.findall(r"\w+", config.getoption("markexpr") or "")
    return any(word == "eval" and (i == 0 or words[i - 1] != "not") for i, word in enumerate(words))


@pytest.fixture
def eval_dir(request) -> Path:
    """The shared eval set's folder (`--eval-dir`, default `EVAL_DIR`). Missing, the test fails when the run asks
    for the eval set (`eval_asked`), and is skipped with the reason otherwise (the default run, on a checkout
    without the set): a CI job that wants the eval runs `-m eval` and cannot pass without it."""
    path = request.config.getoption("--eval-dir") or EVAL_DIR
    missing = [name for name in EVAL_FILES if not (path / name).is_file()]
    if missing:
        why = f"no eval set at {path} ({', '.join(missing)} missing; --eval-dir PATH names it)"
        if eval_asked(request.config):
            pytest.fail(why, pytrace=False)
        pytest.skip(why + "; -m eval fails instead")
    return path


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> str:
    """Start a private `redis-server` (no TCP port) for the session; yield its `unix://` URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    tmp = tmp_path_factory.mktemp("redis")
    sock = tmp / "redis.sock"
    proc = subprocess.Popen([binary, "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
                             "--save", "", "--appendonly", "no", "--dir", str(tmp)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    url = f"unix://{sock}?db=0"
    while time.monotonic() < deadline:
        try:
            if sock.exists() and Redis.from_url(url).ping():
                break
        except Exception:
            pass
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("redis-server did not start")
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def redis(twin_env, redis_server) -> Redis:
    """A client of the private server, emptied before each test; the isolated twin (`twin_env`) uses it too, so
    workers and the CLI find the queues the test fills."""
    client = Redis.from_url(redis_server)
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory) -> Path:
    """One `TWIN_CACHE_DIR` for the session: the optimised local model (~90 MB, twin.vectors.optimized_model) is
    made by the first twin that loads the model, not by every test's."""
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture
def twin_paths(tmp_path, monkeypatch, model_cache) -> Settings:
    """An isolated twin without Redis: data, config and runtime dirs and HOME under tmp_path, zero flush delay;
    no `TWIN_REDIS_URL`, so nothing finds a queue (the CLI says the daemon is not running). What a test of
    SQLite alone needs (the `store` fixture): it runs where `redis-server` is not installed. Set through
    `TWIN_…` variables so the CLI and workers see the same settings."""
    env = {
        "TWIN_DATA_DIR": str(tmp_path / "data"),
        "TWIN_CONFIG_DIR": str(tmp_path / "config"),
        "TWIN_RUNTIME_DIR": str(tmp_path / "run"),
        "TWIN_ENV_FILE": str(tmp_path / "config" / "env"),
        "TWIN_EMBED_FLUSH_DELAY_S": "0",
        "TWIN_EMBED_RESCHEDULE_S": "0",
        "TWIN_EMBED_THREADS": "1",
        "TWIN_CACHE_DIR": str(model_cache),
    }
    for key in [k for k in os.environ if k.startswith("TWIN_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    # the browser connector reads profiles under HOME: never the developer's own browsers
    (tmp_path / "home").mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return load_settings()


@pytest.fixture
def twin_env(twin_paths, monkeypatch, redis_server) -> Settings:
    """The isolated twin (`twin_paths`) with the private Redis, emptied: what workers, the bus and the daemon's
    queues need."""
    monkeypatch.setenv("TWIN_REDIS_URL", redis_server)
    Redis.from_url(redis_server).flushall()
    return load_settings()


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now (the kernel's pick)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def isolated_home(mp: pytest.MonkeyPatch, home: Path) -> None:
    """Point twin at `home` alone for a module-scoped fixture (which cannot use `twin_paths`): every `TWIN_`
    variable dropped but the tests' own (`TWIN_TEST_*`, `TWIN_PAGE*`), data/config/runtime dirs, env file and an empty
    0600 `twin.toml` under `home`, keyword-only recall (no model), a free API port, `HOME` there too."""
    for key in [k for k in os.environ if k.startswith("TWIN_") and not k.startswith(("TWIN_TEST_", "TWIN_PAGE"))]:
        mp.delenv(key)
    for key, value in {"TWIN_DATA_DIR": home / "data", "TWIN_CONFIG_DIR": home / "config",
                       "TWIN_RUNTIME_DIR": home / "run", "TWIN_ENV_FILE": home / "config" / "env",
                       "TWIN_CONFIG": home / "twin.toml", "TWIN_EMBED_BACKEND": "none",
                       "TWIN_API_PORT": free_port(), "HOME": home}.items():
        mp.setenv(key, str(value))
    (home / "twin.toml").write_text("")
    (home / "twin.toml").chmod(0o600)


@pytest.fixture
def keyword_api(twin_paths, monkeypatch):
    """A running API (tests/api_server.py) over an empty store, keyword-only (no model load), no daemon; yields
    its `Api` (url, token, settings, client)."""
    from api_server import running_api

    monkeypatch.setenv("TWIN_EMBED_BACKEND", "none")
    monkeypatch.setenv("TWIN_API_PORT", str(free_port()))
    with running_api(load_settings()) as running:
        yield running


@pytest.fixture
def daemon_env(tmp_path, monkeypatch, model_cache) -> dict:
    """Environment for a `twin up` on its embedded defaults (no TWIN_REDIS_URL: it starts its own Redis)."""
    return daemon_environment(tmp_path, model_cache)


def daemon_environment(tmp_path: Path, cache_dir: Path) -> dict:
    """What `daemon_env` gives, under the folder `tmp_path` (which it fills: docs, home, config with an empty
    `twin.toml`), with `cache_dir` as `TWIN_CACHE_DIR` (the session's `model_cache`): for a module-scoped fixture,
    which cannot use `daemon_env`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TWIN_") and k != "NOTIFY_SOCKET"}
    env.update({
        "TWIN_DATA_DIR": str(tmp_path / "data"),
        "TWIN_CONFIG_DIR": str(tmp_path / "config"),
        "TWIN_RUNTIME_DIR": str(tmp_path / "run"),
        "TWIN_CONFIG": str(tmp_path / "config" / "twin.toml"),
        "TWIN_ENV_FILE": str(tmp_path / "config" / "env"),
        "TWIN_FILES_ROOTS": str(tmp_path / "docs"),
        "TWIN_EMBED_THREADS": "1",
        "TWIN_CACHE_DIR": str(cache_dir),
        "TWIN_STOP_GRACE_S": "15",
        "TWIN_API_PORT": str(free_port()),  # each daemon its own API port: tests run side by side
        "PYTHONUNBUFFERED": "1",
        "HOME": str(tmp_path / "home"),  # the browser connector reads profiles under HOME: not the developer's
    })
    (tmp_path / "docs").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "twin.toml").write_text("# empty: every setting at its default\n")
    return env


@pytest.fixture
def store(twin_paths) -> Store:
    """The isolated twin's store, opened (no Redis: add `twin_env` or `redis` for queues)."""
    s = Store(twin_paths.db_path).open()
    yield s
    s.close()


@pytest.fixture
def activity(store, twin_paths) -> Activity:
    """The diary of the isolated twin's being."""
    return Activity(store, twin_paths.being)


@pytest.fixture(scope="session")
def embedder():
    """The real local model, loaded once per session."""
    from twin.vectors.embedder import LocalEmbedder

    model = LocalEmbedder(threads=1)
    model.open()
    return model


def run_worker(role: str) -> None:
    """Run a real twin worker (`twin.workers.main`'s learn, embed or scheduler loop, RQ's `SimpleWorker`) in burst mode
    in this process until its queue is empty (tests/in_process.py), or as a process when called off the main thread
    (`run_worker_process`); fail the test on a non-zero exit."""
    import threading

    from in_process import burst_worker

    if threading.current_thread() is not threading.main_thread():  # RQ's worker sets signal handlers: main only
        run_worker_process(role)
        return
    code = burst_worker(role)
    if code != 0:
        pytest.fail(f"worker {role} exited {code}")


def run_worker_process(role: str, timeout_s: float = 120) -> subprocess.CompletedProcess:
    """Run a real worker process (`python -m twin.workers ROLE --burst`) with the current environment until its queue
    is empty; fail the test on a non-zero exit. For what only the process shows: its logging, its start-up."""
    proc = subprocess.run([sys.executable, "-m", "twin.workers", role, "--burst"], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout_s)
    if proc.returncode != 0:
        pytest.fail(f"worker {role} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def push_items(store: Store, redis: Redis, items: list) -> list[str]:
    """A connector's hand-over of `items` (`twin.ingest.Ingest`, all of one being and mode): staged in `store`, then
    queued as `learn_items` jobs; returns their ids."""
    from twin import ingest
    from twin.workers.bus import Bus

    ids = ingest.stage(store, items)
    jobs = Bus(redis).enqueue_items(items[0].being, ids, items[0].mode)
    for chunk, job_id in jobs:
        ingest.mark_queued(store, chunk, job_id)
    return [job_id for _, job_id in jobs]


def push_text(store: Store, redis: Redis, being: str, text: str, source: str, ref: str | None = None) -> str:
    """A connector's hand-over of one text (see `push_items`); returns the job id."""
    from twin.ingest import Ingest

    return push_items(store, redis, [Ingest(being, source, text, "text", ref)])[0]


def drain() -> None:
    """Run the learn worker, then the embedding worker, each in burst mode (learn jobs enqueue flushes)."""
    run_worker("learn")
    run_worker("embed")


@pytest.fixture
def fake_llm():
    """A local server speaking the OpenAI chat-completions and embeddings protocol (tests/fake_llm.py)."""
    from fake_llm import FakeLLM

    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture
def provider_env(twin_env, fake_llm, monkeypatch) -> Settings:
    """The isolated twin with `fake_llm` as its model provider (short timeout, one transport retry), set through
    `TWIN_…` variables so workers and the CLI see it too; the API key is a recognisable secret."""
    for key, value in {"TWIN_LLM_BASE_URL": fake_llm.url, "TWIN_LLM_API_KEY": "sk-test-SECRET-4242",
                       "TWIN_LLM_TIMEOUT_S": "2", "TWIN_LLM_MAX_RETRIES": "1"}.items():
        monkeypatch.setenv(key, value)
    return load_settings()


@pytest.fixture
def provider(provider_env, store):
    """A `ModelProvider` on `fake_llm`, counting its calls in the isolated store's budget."""
    from twin.llm.provider import provider_for

    model = provider_for(provider_env, store)
    yield model
    model.close()


def diary_lines(activity: Activity, kind: str) -> list[str]:
    """The texts of the newest 200 diary lines of `kind`, oldest first."""
    return [line.text for line in activity.recent(200) if line.kind == kind]


@pytest.fixture
def recall(twin_paths, store, embedder, activity):
    """Recall over the isolated store with the real model and index; `recall.embed()` embeds what a test inserted
    (the embedding worker's flush, in-process) and makes the reader see it at once."""
    from twin.recall.hybrid import Recall
    from twin.vectors.embedding_flush import flush_pending
    from twin.vectors.index import VectorIndex
    from twin.vectors.sidecar import IndexReader, IndexWriter

    index = VectorIndex.for_settings(twin_paths, embedder.model_id, embedder.dim)
    writer = IndexWriter(store, index, activity)
    writer.open()
    reader = IndexReader(store, index)
    reader.open()
    engine = Recall(store, embedder, reader)

    def embed():
        flush_pending(store, embedder, writer, 96, 0)
        reader._refreshed_at = float("-inf")  # see the new vectors at once

    engine.embed = embed
    yield engine
    engine.close()


@pytest.fixture
def bot_api():
    """A fake Telegram Bot API (tests/fake_telegram.py) for the bot token `TEST_BOT_TOKEN`, stopped after the test."""
    from fake_telegram import TEST_BOT_TOKEN, FakeTelegram

    server = FakeTelegram(token=TEST_BOT_TOKEN).start()
    yield server
    server.stop()
