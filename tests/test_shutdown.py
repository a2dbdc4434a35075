"""The supervisor's shutdown (in-process, with real child processes and real signals): connectors drain in
parallel within one grace, every stage fits the systemd unit's `TimeoutStopSec`, and a second SIGTERM forces the
stop at once (rq's warm and cold stop)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

from twin.activity import Activity
from twin.daemon import supervisor as supervisor_module
from twin.settings import load_settings
from twin.store import Store

ROOT = Path(__file__).resolve().parent.parent
STUBBORN = ("import pathlib, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "pathlib.Path(sys.argv[1]).touch(); time.sleep(120)")
"""A child that ignores SIGTERM (a worker stuck in its job), and says when it is ready to by touching a file."""


def test_the_unit_gives_every_shutdown_stage_its_grace_with_margin(twin_env):
    unit = (ROOT / "systemd" / "twin.service").read_text()
    timeout_s = int(re.search(r"^TimeoutStopSec=(\d+)$", unit, re.M).group(1))
    assert timeout_s >= supervisor_module.SHUTDOWN_STAGES * twin_env.stop_grace_s + 20


def supervisor(monkeypatch, grace_s: float) -> supervisor_module.Supervisor:
    monkeypatch.setenv("TWIN_STOP_GRACE_S", str(grace_s))
    sup = supervisor_module.Supervisor(load_settings())
    sup.store = Store(sup.settings.db_path).open()
    sup.activity = Activity(sup.store, sup.settings.being)
    return sup


def last_system_line(settings) -> str:
    with Store(settings.db_path) as store:
        return [a.text for a in Activity(store, settings.being).recent(20) if a.kind == "system"][-1]


def test_connectors_drain_in_parallel_within_one_grace(twin_env, monkeypatch):
    sup = supervisor(monkeypatch, 2.0)

    async def stuck() -> None:  # a connector that does not see the stop (a push that hangs)
        await asyncio.sleep(60)

    async def prompt() -> None:
        await sup.stop.wait()

    async def run() -> tuple[float, list[asyncio.Task]]:
        tasks = [asyncio.create_task(stuck(), name="connector-a"), asyncio.create_task(stuck(), name="connector-b"),
                 asyncio.create_task(prompt(), name="connector-c")]
        started = time.monotonic()
        await sup._shutdown(tasks)
        return time.monotonic() - started, tasks

    took_s, tasks = asyncio.run(run())
    assert 2.0 <= took_s < 3.5  # one grace for all of them (one after another: 4 s and more)
    assert [t.cancelled() for t in tasks] == [True, True, False]
    assert last_system_line(sup.settings) == "twin stopped cleanly."


def test_a_second_sigterm_forces_the_stop(twin_env, monkeypatch, tmp_path):
    sup = supervisor(monkeypatch, 30.0)
    ready = tmp_path / "ready"

    async def run() -> tuple[float, int]:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, sup.on_signal)
        try:
            child = sup._start_child("learn worker", [sys.executable, "-c", STUBBORN, str(ready)])
            while not ready.exists():
                await asyncio.sleep(0.05)
            stuck = asyncio.create_task(asyncio.sleep(60), name="connector-files")
            os.kill(os.getpid(), signal.SIGTERM)  # the first: a warm stop that would wait 2 x 30 s here
            await asyncio.wait_for(sup.stop.wait(), 5)
            started = time.monotonic()
            shutdown = asyncio.create_task(sup._shutdown([stuck]))
            await asyncio.sleep(0.5)
            assert not shutdown.done() and not sup.force.is_set()
            os.kill(os.getpid(), signal.SIGTERM)  # the second: stop now
            await asyncio.wait_for(shutdown, 10)
            return time.monotonic() - started, child.proc.returncode
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    took_s, returncode = asyncio.run(run())
    assert took_s < 5 and returncode == -signal.SIGKILL
    assert last_system_line(sup.settings) == "twin stopped at once (a second stop signal); learn worker killed."


@pytest.mark.parametrize("forced", [False, True])
def test_a_warm_stop_lets_a_child_finish_its_job(twin_env, monkeypatch, forced):
    """A child that exits on SIGTERM (a worker whose job in hand ends) is not killed, forced or not."""
    sup = supervisor(monkeypatch, 10.0)

    async def run() -> int:
        child = sup._start_child("embed worker", [sys.executable, "-c", "import time; time.sleep(120)"])
        while child.proc is None:
            await asyncio.sleep(0.05)
        sup.on_signal()
        if forced:
            sup.on_signal()
        await sup._shutdown([])
        return child.proc.returncode

    assert asyncio.run(run()) == -signal.SIGTERM
    assert last_system_line(sup.settings).startswith(
        "twin stopped at once (a second stop signal)." if forced else "twin stopped cleanly.")
