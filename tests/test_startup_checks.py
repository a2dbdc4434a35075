"""Every entry point makes twin's own dirs private and says what it cannot fix: the real CLI and a real worker as
subprocesses, real directories and env files. Nothing is mocked."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from twin.settings import config_file_path, load_settings
from twin.startup_checks import secure_own_dirs, unknown_variables


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def open_dirs(settings, modes=(0o755, 0o750, 0o777)) -> list[Path]:
    """twin's data, config and runtime dirs, created (or re-made) with modes other users can enter."""
    dirs = [settings.data_dir, settings.config_dir, settings.runtime_dir]
    for path, m in zip(dirs, modes, strict=True):
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, m)
    return dirs


def run(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=180,
                          env=env, check=False)


@pytest.mark.parametrize("command", [("activity",), ("memories",), ("forget", "--source", "file:/nowhere.md",
                                                                    "--dry-run")])
def test_any_cli_command_makes_the_dirs_private(twin_env, command):
    dirs = open_dirs(twin_env)
    proc = run("-m", "twin", *command)
    assert proc.returncode == 0, proc.stderr
    assert [mode(d) for d in dirs] == [0o700] * 3
    assert "warning" not in proc.stderr  # fixed, so nothing to say


def test_a_worker_makes_the_dirs_private(twin_env):
    dirs = open_dirs(twin_env, (0o711, 0o755, 0o705))
    proc = run("-m", "twin.workers", "learn", "--burst")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [mode(d) for d in dirs] == [0o700] * 3


def test_a_world_readable_secret_file_is_said_once_per_command_and_left_to_the_owner(twin_env):
    env_file = Path(os.environ["TWIN_ENV_FILE"])
    env_file.parent.mkdir(parents=True, exist_ok=True)
    env_file.write_text("TWIN_LOG_LEVEL=INFO\n")
    os.chmod(env_file, 0o640)
    toml = config_file_path()
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text("tick_s = 900\n")
    os.chmod(toml, 0o604)
    proc = run("-m", "twin", "activity")
    assert proc.returncode == 0, proc.stderr
    warned = [line for line in proc.stderr.splitlines() if "readable by other users" in line]
    assert warned == [f"twin: warning: {env_file} (mode 640) is readable by other users; run chmod 600 on it.",
                      f"twin: warning: {toml} (mode 604) is readable by other users; run chmod 600 on it."]
    assert mode(env_file) == 0o640  # a file the owner wrote is not changed behind their back
    os.chmod(env_file, 0o600)
    os.chmod(toml, 0o600)
    assert "warning" not in run("-m", "twin", "activity").stderr


def test_a_dir_that_cannot_be_made_private_is_said(twin_env):
    foreign = Path("/proc/sys")  # mode 555 and no chmod allowed, not even for root
    settings = twin_env.model_copy(update={"runtime_dir": foreign})
    problems = secure_own_dirs(settings)
    assert len(problems) == 1 and problems[0].startswith(f"{foreign} is open to other users (mode 555)")
    assert "could not be made private" in problems[0] and "chmod 700" in problems[0]
    assert mode(foreign) == 0o555


def test_unknown_twin_variables_are_named_with_the_closest_setting(twin_env, tmp_path):
    env_file = tmp_path / "env"
    env_file.write_text("TWIN_EMBED_THREAD=2\nTWIN_TELEGRAM_BOT_TOKEN=abc\nOTHER=1\n")
    environ = {"TWIN_FILES_ROOT": "/home/me/notes", "TWIN_QQZZ_XX": "1", "TWIN_CONFIG": "/x.toml",
               "TWIN_ENV_FILE": str(env_file), "twin_log_level": "INFO", "PATH": "/bin", "TWINKLE": "1"}
    lines = unknown_variables(environ, env_file)
    assert lines == [
        "TWIN_FILES_ROOT is not a setting of twin and is ignored (did you mean TWIN_FILES_ROOTS?).",
        "TWIN_QQZZ_XX is not a setting of twin and is ignored (see config/twin.example.toml).",
        f"TWIN_EMBED_THREAD in {env_file} is not a setting of twin and is ignored (did you mean TWIN_EMBED_THREADS?).",
    ]


def test_the_cli_warns_about_a_typo_in_a_variable_and_still_runs(twin_env, tmp_path):
    env = dict(os.environ, TWIN_RECALL_LIMT="3")
    proc = run("-m", "twin", "activity", env=env)
    assert proc.returncode == 0, proc.stderr
    typo = [line for line in proc.stderr.splitlines() if "TWIN_RECALL_LIMT" in line]
    assert len(typo) == 1 and "did you mean TWIN_" in typo[0], proc.stderr
    assert load_settings()  # the typo is not a setting error


def test_status_says_what_is_known_when_redis_is_frozen_or_gone(twin_env, tmp_path):
    import shutil
    import signal
    import time

    from twin.daemon.lifetime import InstanceLock

    sock = tmp_path / "frozen.sock"
    server = subprocess.Popen([shutil.which("redis-server"), "--port", "0", "--unixsocket", str(sock), "--save", "",
                               "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    twin_env.data_dir.mkdir(parents=True, exist_ok=True)
    lock = InstanceLock(twin_env.data_dir / "twin.lock")
    try:
        deadline = time.monotonic() + 10
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        from twin.health import status
        from twin.redis_client import open_redis
        from twin.store import Store
        from twin.workers.bus import Bus

        settings = twin_env.model_copy(update={"redis_url": f"unix://{sock}?db=0"})
        client = open_redis(settings, connect_timeout_s=1, answer_timeout_s=1)
        client.ping()  # a bus that answered (the API keeps one), then Redis freezes: said, never raised (a 500)
        server.send_signal(signal.SIGSTOP)
        with Store(twin_env.db_path) as store:
            report = status(settings, store, Bus(client))
        assert "queues" not in report and any("does not answer" in line for line in report["degraded"]), report
        client.close()
        env = dict(os.environ, TWIN_REDIS_URL=f"unix://{sock}?db=0")

        def degraded() -> list[str]:
            proc = run("-m", "twin", "status", "--json", env=env)
            assert proc.returncode == 0, proc.stderr
            return [line for line in json.loads(proc.stdout)["degraded"] if "Redis" in line]

        lock.acquire()
        [line] = degraded()
        assert "does not answer in 2 s" in line and f"pid {os.getpid()} holds its lock" in line
        assert "is that Redis server running" not in line and "twin up" not in line
        lock.release()
        [line] = degraded()
        assert "does not answer in 2 s" in line and "the daemon is not running (its lock is free)" in line
    finally:
        lock.release()
        server.send_signal(signal.SIGCONT)
        server.kill()
        server.wait(10)
    gone = dict(os.environ, TWIN_REDIS_URL=f"unix://{tmp_path / 'none.sock'}?db=0")
    proc = run("-m", "twin", "status", "--json", env=gone)
    [line] = [x for x in json.loads(proc.stdout)["degraded"] if "Redis" in x]
    assert line.startswith("Redis not reachable at") and "its lock is free" in line
