"""The supervisor's reaction to what a connector raises (in-process, real store and diary): an auth failure stops
the connector and tells the owner, a transient failure restarts it with backoff and says so once, any other
exception is a crash that is restarted and written down each time (Home Assistant's update coordinator)."""

from __future__ import annotations

import asyncio

import pytest
from conftest import diary_lines

from twin import connectors
from twin.activity import Activity
from twin.connectors.gmail import GmailAuthError, GmailAuthRevoked
from twin.daemon import supervisor as supervisor_module
from twin.exceptions import ConnectorAuthFailed, ConnectorTransient, TwinError
from twin.store import Store

RUNS: list[str] = []
"""Each fake connector's name, once per `run` the supervisor started."""


class _Failing:
    """A connector that raises `errors[i]` on its i-th run, then waits for the stop like a healthy one."""

    errors: tuple[BaseException, ...] = ()

    def __init__(self, settings, store, bus, activity):
        self.settings = settings

    async def run(self, stop: asyncio.Event) -> None:
        RUNS.append(type(self).__name__)
        done = RUNS.count(type(self).__name__) - 1
        if done < len(self.errors):
            raise self.errors[done]
        await stop.wait()


class RefusedToken(_Failing):
    errors = (ConnectorAuthFailed("the radio refused the token; run `twin connect radio`"),)


class RevokedGmail(_Failing):
    errors = (GmailAuthRevoked("invalid_grant"),)


class FlakyNetwork(_Failing):
    errors = (ConnectorTransient("connection reset"),) * 3


class Buggy(_Failing):
    errors = (RuntimeError("a bug"), KeyError("another"))


def keep(twin_paths, cls: type, *, run_s: float) -> tuple[bool, list[tuple[str, str]]]:
    """Run `cls` under the supervisor's connector loop for `run_s` seconds (backoff capped at 0.05 s), then stop;
    returns whether the loop returned before the stop, and the diary's `(kind, line)` of kinds error, degraded."""
    RUNS.clear()
    sup = supervisor_module.Supervisor(twin_paths.model_copy(update={"restart_backoff_max_s": 0.05}))
    sup.store = Store(sup.settings.db_path).open()
    sup.activity = Activity(sup.store, sup.settings.being)
    entry = connectors.Connector("radio", f"{__name__}:{cls.__name__}", lambda s: True, "unused:state")

    async def scenario() -> bool:
        task = asyncio.create_task(sup._keep_connector(entry, None))
        await asyncio.sleep(run_s)
        returned_early = task.done()
        sup.stop.set()
        await asyncio.wait_for(task, 5)
        return returned_early

    try:
        returned_early = asyncio.run(scenario())
        return returned_early, [(k, line) for k in ("error", "degraded") for line in diary_lines(sup.activity, k)]
    finally:
        sup.store.close()


def test_the_error_types_say_what_happens_next():
    assert issubclass(ConnectorAuthFailed, TwinError) and issubclass(ConnectorTransient, TwinError)
    assert issubclass(GmailAuthError, ConnectorAuthFailed) and issubclass(GmailAuthRevoked, ConnectorAuthFailed)
    assert not issubclass(ConnectorTransient, ConnectorAuthFailed)


@pytest.mark.parametrize("cls", [RefusedToken, RevokedGmail])
def test_an_auth_failure_stops_the_connector_and_tells_the_owner(twin_paths, cls):
    returned_early, lines = keep(twin_paths, cls, run_s=0.5)
    assert [cls.__name__] == RUNS  # never retried
    assert returned_early  # stopped without waiting for the daemon's stop
    assert [k for k, _ in lines] == ["degraded"]
    assert str(cls.errors[0]) in lines[0][1] and "radio connector stopped" in lines[0][1]


def test_a_transient_failure_is_retried_with_backoff_and_said_once(twin_paths):
    returned_early, lines = keep(twin_paths, FlakyNetwork, run_s=1.0)
    assert RUNS == ["FlakyNetwork"] * 4  # three failures, then the run that works
    assert not returned_early
    assert lines == [("error", "The radio connector failed (ConnectorTransient: connection reset); retrying with "
                               "backoff until it works.")]


def test_any_other_exception_is_a_crash_restarted_and_written_down_each_time(twin_paths):
    returned_early, lines = keep(twin_paths, Buggy, run_s=1.0)
    assert RUNS == ["Buggy"] * 3 and not returned_early
    assert [k for k, _ in lines] == ["error", "error"]
    assert "RuntimeError: a bug" in lines[0][1] and "restarting it in" in lines[0][1]
