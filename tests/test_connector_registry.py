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
