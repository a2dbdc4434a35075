"""`twin status` tells a process that is down: the supervisor's file of its children's states, read only while that
supervisor lives (`twin.daemon.process_states`); real files, a real dead process."""

from __future__ import annotations

import os
import subprocess
import sys

from twin.daemon import process_states
from twin.health import status
from twin.store import Store


def _states(pid: int) -> dict:
    return {"supervisor": pid, "children": {
        "learn worker": {"status": "backoff", "restarts": 3, "last_code": -9, "restart_at": "2026-12-03T18:40:12Z"},
        "embed worker": {"status": "running", "restarts": 1, "last_code": -9, "restart_at": None},
        "scheduler": {"status": "stopped", "restarts": 0, "last_code": 2, "restart_at": None}}}


def test_a_process_waiting_to_restart_is_said_while_its_supervisor_lives(twin_paths):
    process_states.write(twin_paths, _states(os.getpid()))
    assert oct(process_states.path_of(twin_paths).stat().st_mode & 0o777) == "0o600"
    assert set(process_states.down(twin_paths)) == {"learn worker", "scheduler"}  # the running one is not down
    lines = process_states.degraded_lines(twin_paths)
    assert "the learn worker process is down (exit code -9, 3 restart(s) so far); twin restarts it at " \
           "2026-12-03T18:40:12Z" in lines
    assert any(line.startswith("the scheduler process stopped: its settings are refused") for line in lines)
    with Store(twin_paths.db_path) as store:
        said = status(twin_paths, store, None)["degraded"]
    assert any("learn worker process is down" in line for line in said)
    process_states.clear(twin_paths)
    assert process_states.down(twin_paths) == {} and not process_states.path_of(twin_paths).exists()


def test_a_file_left_by_a_supervisor_that_is_gone_or_a_broken_file_says_nothing(twin_paths):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    process_states.write(twin_paths, _states(gone.pid))
    assert process_states.down(twin_paths) == {}  # killed with its children: nothing of its is "down" now
    process_states.path_of(twin_paths).write_text("{not json")
    assert process_states.degraded_lines(twin_paths) == []
