"""The connector registry: which connectors the settings turn on, and none imported before it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pydantic import SecretStr

from twin import connectors
from twin.store import state

ROOT = Path(__file__).resolve().parent.parent


def test_the_settings_say_which_connectors_run(twin_env, tmp_path):
    assert [c.name for c in connectors.enabled(twin_env)] == ["gmail", "browser"]  # gmail waits for a token
    every = twin_env.model_copy(update={"files_roots": [tmp_path], "telegram_bot_token": SecretStr("1:x"),
                                        "browser_enabled": False})
    assert [c.name for c in connectors.enabled(every)] == ["files", "gmail", "telegram"]


def test_the_files_connector_records_its_roots_before_it_starts(twin_env, store, tmp_path):
    settings = twin_env.model_copy(update={"files_roots": [tmp_path / "notes", tmp_path / "papers"]})
    connectors.REGISTRY["files"].run_prepare(settings, store)
    assert state.get_json(store, "files", "owner", "roots") == [str(tmp_path / "notes"), str(tmp_path / "papers")]


def test_the_registry_imports_a_connector_only_when_it_runs():
    """Reading the registry (the supervisor, `twin status`) loads neither the connectors nor their clients
    (python-telegram-bot, the Google API client); `load` imports the one asked for."""
    code = ("import sys; from twin import connectors; connectors.enabled; print(sorted(m for m in sys.modules if "
            "m.startswith(('twin.connectors.', 'telegram', 'googleapiclient')))); "
            "connectors.REGISTRY['browser'].load(); "
            "print('twin.connectors.browser' in sys.modules, 'twin.connectors.telegram' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "True False"]


def test_constructors_only_store_and_each_class_reads_its_state_as_the_registry_does(twin_env, store, tmp_path):
    """The one lifecycle: building a connector opens nothing (no store connection, no client; a data dir that
    does not exist yet is not touched), `open()`/`run()` opens; and `state(store)` of each class is what the
    registry's `read_state` gives `twin status`."""
    every = twin_env.model_copy(update={"files_roots": [tmp_path], "telegram_bot_token": SecretStr("1:x"),
                                        "browser_enabled": True})
    missing = every.model_copy(update={"data_dir": tmp_path / "not-yet"})
    for entry in connectors.REGISTRY.values():
        built = entry.load()(missing, None, None, None)
        assert getattr(built, "store", None) is None or entry.name == "files"  # files is handed the store
        assert not (tmp_path / "not-yet").exists()
        assert entry.load()(every, store, None, None).state(store) == entry.read_state(every, store)
    gmail = connectors.REGISTRY["gmail"].load()(every, store, None, None).open()
    try:
        assert gmail.store is not None and gmail.store is not store  # its own connection (threads)
    finally:
        gmail.close()
    assert gmail.store is None


def test_status_shows_every_registered_connector_and_its_degraded_lines(twin_env, store, monkeypatch):
    """`twin status` names no source: a connector added to the registry shows up with its state and degraded
    lines, in registry order, and a disabled one still says so."""
    from twin.health import status

    fake = connectors.Connector("radio", "nowhere:Nothing", lambda s: False, "tests_registry_state:radio_state",
                                "tests_registry_state:radio_degraded")
    monkeypatch.setitem(sys.modules, "tests_registry_state", type(sys)("tests_registry_state"))
    sys.modules["tests_registry_state"].radio_state = lambda settings, st: {"enabled": False, "being": settings.being}
    sys.modules["tests_registry_state"].radio_degraded = lambda state: ["radio: off the air"]
    monkeypatch.setitem(connectors.REGISTRY, "radio", fake)
    report = status(twin_env, store, None)
    assert [k for k in report if k in connectors.REGISTRY] == ["files", "gmail", "browser", "telegram", "radio"]
    assert report["radio"] == {"enabled": False, "being": "owner"}
    assert "radio: off the air" in report["degraded"]
    assert report["telegram"] == {"enabled": False}


def test_gmail_without_a_token_loads_no_google_library_until_twin_connect_gmail_writes_one(tmp_path):
    """The registry's Gmail entry runs in every daemon (`GmailOnceConnected`): while no token file exists it only
    looks for one and Google's libraries stay out of the supervisor (~22 MiB); once the file appears it runs the
    real connector (which then reads the token: here a bad one, said in the diary as a sign-in to do again)."""
    code = f"""
import asyncio, os, sys
os.environ.update(TWIN_DATA_DIR={str(tmp_path / 'data')!r}, TWIN_CONFIG_DIR={str(tmp_path / 'config')!r},
                  TWIN_RUNTIME_DIR={str(tmp_path / 'run')!r}, TWIN_ENV_FILE={str(tmp_path / 'env')!r})
from twin import connectors
from twin.connectors import gmail_start
from twin.settings import load_settings
from twin.store import Store
settings = load_settings()
settings.data_dir.mkdir(parents=True)
Store(settings.db_path).open().close()
gmail_start.TOKEN_RECHECK_S = 0.05
async def main():
    stop = asyncio.Event()
    task = asyncio.create_task(connectors.REGISTRY["gmail"].load()(settings, None, None, None).run(stop))
    await asyncio.sleep(0.5)
    print("waiting", "googleapiclient" in sys.modules, "twin.connectors.gmail" in sys.modules)
    settings.gmail_token_path.parent.mkdir(parents=True, exist_ok=True)
    settings.gmail_token_path.write_text("not a token")
    for _ in range(200):
        await asyncio.sleep(0.05)
        if "twin.connectors.gmail" in sys.modules:
            break
    await asyncio.sleep(0.5)
    print("token", "googleapiclient" in sys.modules, "twin.connectors.gmail" in sys.modules)
    stop.set()
    await asyncio.wait_for(task, 30)
asyncio.run(main())
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["waiting False False", "token True True"], out.stdout + out.stderr
