"""Which of the daemon's processes are down, for `twin status`: the supervisor writes its children's states to one
private file in the runtime dir whenever a child exits, waits to restart or runs again; `twin status` (in any
process) reads it while that supervisor lives. A file, not a row: the supervisor's store connection is shared by
its threads, and a state that only matters while it runs belongs beside its other runtime files (the Redis and
API sockets).

Shape: `{"supervisor": pid, "children": {name: {"status", "restarts", "last_code", "restart_at"}}}`, `status` one
of `ChildStatus`' values, `restart_at` UTC ISO-8601 while it waits to restart, else None.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from twin.settings import Settings
from twin.store import secure_dir

log = logging.getLogger(__name__)

FILE_NAME = "processes.json"
"""The file's name in `Settings.runtime_dir` (0700, as the supervisor's other runtime files)."""


def path_of(settings: Settings) -> Path:
    """Where the states of `settings`' daemon are kept."""
    return settings.runtime_dir / FILE_NAME


def write(settings: Settings, states: dict) -> None:
    """Replace the file with `states` (the module's shape), written whole (a temporary file renamed over it, mode
    0600; the runtime dir made 0700 when missing). A runtime dir that cannot be written is logged once per call, never raised: it only costs `twin
    status` a line."""
    path = path_of(settings)
    part = path.with_name(f".{FILE_NAME}.{os.getpid()}")
    try:
        secure_dir(settings.runtime_dir)
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(states, out)
        os.replace(part, path)
    except OSError as exc:
        log.warning("supervisor: could not write %s (%s); twin status will not show a process that is down",
                    path, exc)


def clear(settings: Settings) -> None:
    """Remove the file (the supervisor stops: nothing of its is down any more)."""
    try:
        path_of(settings).unlink(missing_ok=True)
    except OSError as exc:
        log.warning("supervisor: could not remove %s (%s)", path_of(settings), exc)


def down(settings: Settings) -> dict[str, dict]:
    """`{name: state}` of each child that is not running (waiting to restart, or stopped for its settings) of the
    supervisor that wrote the file, while that supervisor still runs; {} when none is down, no file or an
    unreadable one, or its supervisor is gone (a file a killed supervisor left says nothing of now)."""
    try:
        states = json.loads(path_of(settings).read_text(encoding="utf-8"))
        pid = int(states["supervisor"])
        children = dict(states["children"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return {}
    except PermissionError:  # alive, another user's: not ours to read, but alive
        pass
    return {name: s for name, s in children.items() if isinstance(s, dict) and s.get("status") in ("backoff",
                                                                                               "stopped")}


def degraded_lines(settings: Settings) -> list[str]:
    """`twin status`'s lines for the processes that are `down`: "the learn worker process is down (exit code -9,
    3 restarts); twin restarts it at 2026-12-03T18:40:12Z"."""
    lines = []
    for name, s in down(settings).items():
        if s.get("status") == "stopped":
            lines.append(f"the {name} process stopped: its settings are refused (exit code {s.get('last_code')}; "
                         "the journal says why); it starts again with twin")
        else:
            lines.append(f"the {name} process is down (exit code {s.get('last_code')}, {s.get('restarts')} "
                         f"restart(s) so far); twin restarts it at {s.get('restart_at')}")
    return lines
