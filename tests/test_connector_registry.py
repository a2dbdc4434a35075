"""The connector registry: which connectors the settings turn on, and none imported before it runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pydantic import SecretStr

import connectors

ROOT = Path(__file__).resolve().parent.parent


def test_the_settings_say_which_connectors_run(twin_env, tmp_path):
    assert [c.name for c in connectors.enabled(twin_env)] == ["gmail", "browser"]  # gmail waits for a token
    every = twin_env.model_copy(update={"files_roots": [tmp_path], "telegram_bot_token": SecretStr("1:x"),
                                        "browser_enabled": False})
    assert [c.name for c in connectors.enabled(every)] == ["files", "gmail", "telegram"]


def test_the_files_connector_records_its_roots_before_it_starts(twin_env, store, tmp_path):
    settings = twin_env.model_copy(update={"files_roots": [tmp_path / "notes", tmp_path / "papers"]})
    connectors.REGISTRY["files"].prepare(settings, store)
    assert store.get_cursor("files", "owner", "roots") == f'["{tmp_path / "notes"}", "{tmp_path / "papers"}"]'


def test_the_registry_imports_a_connector_only_when_it_runs():
    """Reading the registry (the supervisor, `twin status`) loads neither the connectors nor their clients
    (python-telegram-bot, the Google API client); `load` imports the one asked for."""
    code = ("import sys, connectors; connectors.enabled; print(sorted(m for m in sys.modules if m.startswith("
            "('connectors.', 'telegram', 'googleapiclient')))); connectors.REGISTRY['browser'].load(); "
            "print('connectors.browser' in sys.modules, 'connectors.telegram' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "True False"]
