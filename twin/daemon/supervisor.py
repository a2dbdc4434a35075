"""`twin up`: the supervisor (DESIGN.md "Shape"; STYLE.md: rq's worker_pool).

Starts the private Redis (unless `TWIN_REDIS_URL` is set), the two workers as child processes and the
connectors as asyncio tasks; restarts a crashed child with capped exponential backoff; talks to
systemd (READY, STATUS, WATCHDOG, STOPPING). Signal handlers only record the request (rq's warm and cold stop):
the first SIGTERM/SIGINT sets the stop event, a second one while stopping the force event. The teardown in
`finally` stops the connectors and the periodic tasks all at once (each stage within `stop_grace_s`), lets the
workers finish the job in hand (SIGTERM = RQ warm stop; the embedding worker checkpoints the index on its way
out), then stops Redis (which writes its AOF): three stages, 3 × 20 s at most by default, under the unit's
`TimeoutStopSec=90`. A forced stop cuts every wait short: what still runs is cancelled or killed (jobs are
idempotent and recovered at the next start; staged items wait in SQLite).
"""

from __future__ import annotations

import asyncio
import enum
import logging
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from redis import Redis
from redis.exceptions import RedisError

from twin import connectors
from twin.activity import Activity
from twin.daemon import process_states, systemd
from twin.daemon.due_retries import EVERY_S as DUE_RETRIES_EVERY_S
from twin.daemon.due_retries import DueRetries
from twin.daemon.lifetime import InstanceLock, NicedChild, die_with_parent_sigkill, die_with_parent_sigterm
from twin.daemon.redis_server import redis_argv
from twin.exceptions import CANNOT_LISTEN, ConnectorAuthFailed, ConnectorTransient, RedisRefused, RedisUnavailable
from twin.ingest import BacklogWatch
from twin.lifecycle.cycle import CURSOR as LIFECYCLE_CURSOR
from twin.memory import format_time, parse_time
from twin.redis_client import check_access, open_redis
from twin.settings import Settings
from twin.startup_checks import startup_warnings
from twin.store import Store, secure_dir, state
from twin.store.state import store_identity
from twin.vectors.embedder import model_id_of
from twin.workers.bus import Bus
from twin.workers.refusal import LearningPause, RefusalRetry

log = logging.getLogger("twin.supervisor")

CHILD_PYTHON = (sys.executable, "-P", "-m")
"""How a child is started: `-P` keeps the working directory off `sys.path`, so a folder named `twin` where `twin up`
runs (the checkout, cloned into ~/twin and run from ~) cannot shadow the package (a breaker saw the API die of
`cannot import name '__version__' from 'twin' (unknown location)`, said as a port in use)."""

SETTINGS_EXIT_CODE = 2
"""A child that exits with this code found a setting to fix (an invalid one, or Redis refused its login): it is not
restarted, as the systemd unit's `RestartPreventExitStatus=2` does not restart `twin up`."""
STABLE_AFTER_S = 60.0
"""A child that ran this long before exiting restarts with the backoff reset to 1 s."""
FIRST_BACKOFF_S = 1.0
"""The first restart of a child or a connector that failed waits this long; each quick failure after doubles it
(README: "1 s doubling")."""
REDIS_START_TIMEOUT_S = 20.0
REDIS_START_EXITS = 3
"""`twin up` stops waiting for its private Redis after this many exits of it (a corrupt AOF, a bad config: each
restart fails the same way), or after `REDIS_START_TIMEOUT_S` seconds, and stops with the reason (exit code 1)."""
STATUS_EVERY_S = 30.0
STAGED_EVERY_S = 5.0
"""How often staged items that no learn job carries yet (Redis refused them) are queued again."""
LOST_JOB_AFTER_S = 60.0
"""A learn job queued this long ago that Redis no longer knows is lost; its staged items are queued again."""
LIFECYCLE_FIRST_AFTER_S = 60.0
"""The earliest a decay or dream pass runs after boot (one that is overdue runs then, not at once)."""
SHUTDOWN_STAGES = 3
"""The shutdown's stages, each within `stop_grace_s`: connectors and periodic tasks, workers, Redis. The systemd
unit's `TimeoutStopSec` is above `SHUTDOWN_STAGES * stop_grace_s` with margin (tests/test_shutdown.py)."""
CANCELLED_WAIT_S = 1.0
"""How long a task cancelled at the end of its grace gets to unwind before the shutdown goes on without it."""
API_READY_WAIT_S = 60.0
"""READY=1 waits at most this long for the API to answer with its recall open (`_api_answers`); after that it is
sent anyway, with a diary line saying the API is still starting (systemd's start timeout is 90 s by default)."""
API_POLL_S = 0.5
"""How often that wait looks whether the stop came or the API process exited (the API's READY=1 is read at once)."""
FORCED_WAIT_S = 1.0
"""On a forced stop a child still gets this long after its SIGTERM before it is killed: Redis writes its AOF, a
worker between two jobs exits by itself."""


class ChildStatus(enum.Enum):
    """Where a supervised child process is in its life."""

    STARTING = "starting"
    RUNNING = "running"
    BACKOFF = "backoff"
    STOPPED = "stopped"


@dataclass
class Child:
    """One supervised process: its command, its current process and its restart history. `on_parent_death`
    is the child's `preexec_fn` (see `twin.daemon.lifetime`); `env` is added to `child_env()`."""

    name: str
    argv: list[str]
    on_parent_death: object = die_with_parent_sigkill
    env: dict[str, str] = field(default_factory=dict)
    proc: asyncio.subprocess.Process | None = None
    status: ChildStatus = ChildStatus.STOPPED
    restarts: int = 0
    last_code: int | None = None
    started_at: float = 0.0
    backoff_s: float = 0.0  # none yet: the first restart waits `FIRST_BACKOFF_S` (`_restart_delay`)
    restart_at: float = 0.0  # monotonic seconds: when a child waiting in backoff is started again
    task: asyncio.Task | None = field(default=None, repr=False)


def child_env() -> dict[str, str]:
    """The children's environment: ours without `NOTIFY_SOCKET`/`WATCHDOG_*` (only the supervisor may
    notify; LIBRARY_NOTES §7), with unbuffered output for the journal."""
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Supervisor:
    """Runs twin until SIGTERM/SIGINT. Construct with settings and, from the interface that starts it, what a
    connector is handed besides its contract's four arguments (`connector_extras`: connector name -> keyword
    arguments, e.g. the Telegram connector's `people` from `twin up`, which sits above this layer); `run()` does
    everything and returns the exit code."""

    def __init__(self, settings: Settings, connector_extras: dict[str, dict] | None = None):
        self.settings = settings
        self.connector_extras = connector_extras or {}
        self.stop = asyncio.Event()
        self.force = asyncio.Event()
        self.halt = threading.Event()
        """Set with `stop`, for the threads: a push waiting for a Redis that refuses writes gives up (its items wait
        in SQLite for the next start)."""
        self.children: dict[str, Child] = {}
        self.store: Store | None = None
        self.activity: Activity | None = None
        self.redis: Redis | None = None

    # -- children -------------------------------------------------------------------------------
    async def _spawn(self, child: Child) -> None:
        child.status = ChildStatus.STARTING
        # own session: a Ctrl-C in the terminal reaches only the supervisor, which stops children in order
        child.proc = await asyncio.create_subprocess_exec(*child.argv, env={**child_env(), **child.env},
                                                          stdin=asyncio.subprocess.DEVNULL, start_new_session=True,
                                                          preexec_fn=child.on_parent_death)
        child.started_at = time.monotonic()
        child.status = ChildStatus.RUNNING
        log.info("supervisor: started %s (pid %d)", child.name, child.proc.pid)
        if child.restarts:  # up again: `twin status` no longer says it is down
            self._tell_states()

    def _tell_states(self) -> None:
        """Write every child's state for `twin status` (`twin.daemon.process_states`; a small file, written whole)."""
        now = time.monotonic()
        process_states.write(self.settings, {"supervisor": os.getpid(), "children": {
            c.name: {"status": c.status.value, "restarts": c.restarts, "last_code": c.last_code,
                     "restart_at": format_time(datetime.now(UTC) + timedelta(seconds=max(0.0, c.restart_at - now)))
                     if c.status is ChildStatus.BACKOFF else None} for c in self.children.values()}})

    async def _keep_alive(self, child: Child) -> None:
        """Restart `child` whenever it exits until stopping; backoff 1 s doubling to `restart_backoff_max_s`. One that
        exits with `SETTINGS_EXIT_CODE` is not restarted (one diary line says so): no restart can fix a setting."""
        while not self.stop.is_set():
            await self._spawn(child)
            code = await child.proc.wait()
            child.last_code = code
            if self.stop.is_set():
                break
            if code == SETTINGS_EXIT_CODE:  # its reason is in its log and the diary (`twin.workers.main`)
                child.status = ChildStatus.STOPPED
                self._tell_states()
                self.activity.record("degraded", f"The {child.name} process stopped: its settings are refused (exit "
                                                 f"code {code}, the journal says why); it starts again with twin.")
                return
            ran_s = time.monotonic() - child.started_at
            child.backoff_s = self._restart_delay(ran_s, child.backoff_s)
            child.restarts += 1
            child.status = ChildStatus.BACKOFF
            child.restart_at = time.monotonic() + child.backoff_s
            self._tell_states()
            self.activity.record("error", f"The {child.name} process exited ({self._exit_said(child, code)}) "
                                          f"after {ran_s:.0f} s; restarting it in {child.backoff_s:.0f} s.")
            await connectors.stopped_within(self.stop, child.backoff_s)
        child.status = ChildStatus.STOPPED

    def _exit_said(self, child: Child, code: int | None) -> str:
        """How a diary line says `child`'s exit `code`: the API's `CANNOT_LISTEN` is a port it cannot listen on
        (`python -m twin.api`), said with the address; any other code is only said (the journal has the why)."""
        if child.name == "api" and code == CANNOT_LISTEN:
            return (f"code {code}: it cannot listen on {self.settings.api_host}:{self.settings.api_port}; another "
                    "program may hold the port")
        return f"code {code}"

    def _restart_delay(self, ran_s: float, previous_s: float) -> float:
        """Seconds before a restart: `FIRST_BACKOFF_S` for the first one (`previous_s` 0) and after a run longer
        than `STABLE_AFTER_S`, else the previous delay doubled (1, 2, 4 … s), capped at `restart_backoff_max_s`
        (children and connectors alike)."""
        doubled = FIRST_BACKOFF_S if not previous_s or ran_s > STABLE_AFTER_S else previous_s * 2
        return min(doubled, self.settings.restart_backoff_max_s)

    def _start_child(self, name: str, argv: list[str], on_parent_death=die_with_parent_sigkill,
                     env: dict[str, str] | None = None) -> Child:
        child = Child(name=name, argv=argv, on_parent_death=on_parent_death, env=env or {})
        self.children[name] = child
        child.task = asyncio.create_task(self._keep_alive(child), name=f"child-{name}")
        return child

    async def _stop_child(self, child: Child, grace_s: float) -> bool:
        """SIGTERM (a warm stop: the job in hand finishes), SIGKILL after `grace_s`, or `FORCED_WAIT_S` after the
        stop is forced. Returns True if killed."""
        proc = child.proc
        if proc is None or proc.returncode is not None:
            return False
        proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        exited = asyncio.ensure_future(proc.wait())
        if not await self._done_unless_forced([exited], grace_s) and self.force.is_set():
            await asyncio.wait([exited], timeout=FORCED_WAIT_S)
        if not exited.done():
            exited.cancel()
            log.warning("supervisor: %s did not stop %s; killing it", child.name,
                        "before the forced stop" if self.force.is_set() else f"within {grace_s:.0f} s")
            proc.kill()
            await proc.wait()
            return True
        log.info("supervisor: %s stopped in %.1f s", child.name, time.monotonic() - started)
        return False

    async def _done_unless_forced(self, tasks: list[asyncio.Future], timeout_s: float) -> bool:
        """Wait until every one of `tasks` is done, `timeout_s` passed or the stop is forced; True when all are
        done. Cancels none of them."""
        forced = asyncio.ensure_future(self.force.wait())
        try:
            pending = set(tasks)
            deadline = time.monotonic() + timeout_s
            while pending and not forced.done() and (left_s := deadline - time.monotonic()) > 0:
                _, pending = await asyncio.wait({*pending, forced}, timeout=left_s, return_when=asyncio.FIRST_COMPLETED)
                pending.discard(forced)
            return not pending
        finally:
            forced.cancel()

    async def _keep_connector(self, connector: connectors.Connector, bus: Bus) -> None:
        """Run `connector` (imported now, in a thread) until stopping, acting on what it raises (Home Assistant's update
        coordinator, STYLE.md): `ConnectorAuthFailed` stops it and tells the owner (a diary line, kind
        `degraded`, with the error's advice; it starts again with twin); `ConnectorTransient` restarts it with the
        capped backoff of a child process, said in the diary once per run of failures (a run longer than
        `STABLE_AFTER_S` ends it) and logged without a traceback; any other exception is a crash: logged with its
        traceback, written to the diary, restarted with the same backoff."""
        name, backoff_s, failing = connector.name, 0.0, False
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                # imported in a thread: the Gmail client's libraries take ~0.5 s to import, and the loop meanwhile
                # reads the API's READY (issue 18: cold start) and keeps the children
                kind = await asyncio.to_thread(connector.load)
                await kind(self.settings, self.store, bus, self.activity,
                           **self.connector_extras.get(name, {})).run(self.stop)
                return
            except ConnectorAuthFailed as exc:
                log.error("supervisor: connector %s stopped: its source refused the credentials (%s)", name, exc)
                self.activity.record("degraded", f"The {name} connector stopped: {exc}. It starts again when twin "
                                                 "restarts.")
                return
            except ConnectorTransient as exc:
                ran_s = time.monotonic() - started
                backoff_s = self._restart_delay(ran_s, backoff_s)
                log.warning("supervisor: connector %s failed (%s: %s); restarting it in %.0f s", name,
                            type(exc).__name__, exc, backoff_s)
                if not failing or ran_s > STABLE_AFTER_S:
                    self.activity.record("error", f"The {name} connector failed ({type(exc).__name__}: {exc}); "
                                                  "retrying with backoff until it works.")
                failing = True
            except Exception as exc:
                log.exception("supervisor: connector %s crashed", name)
                backoff_s = self._restart_delay(time.monotonic() - started, backoff_s)
                self.activity.record("error", f"The {name} connector failed ({type(exc).__name__}: {exc}); "
                                              f"restarting it in {backoff_s:.0f} s.")
            await connectors.stopped_within(self.stop, backoff_s)

    def _ready_socket(self) -> socket.socket:
        """A datagram socket `api-ready.sock` in the runtime dir (0700), bound, non-blocking: the API's
        `NOTIFY_SOCKET`, on which it says READY=1 (the sd_notify protocol, `twin.daemon.systemd`)."""
        path = self.settings.runtime_dir / "api-ready.sock"
        secure_dir(path.parent)
        path.unlink(missing_ok=True)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        sock.bind(str(path))
        sock.setblocking(False)
        return sock

    # -- redis ----------------------------------------------------------------------------------
    async def _start_redis(self) -> None:
        """Start the private redis-server (none with `redis_url`: an external one) and wait until it answers.
        Raises `RedisUnavailable` when it is not installed, or has not answered within `REDIS_START_TIMEOUT_S`
        or exited `REDIS_START_EXITS` times (naming its last exit code). Returns at once when the stop comes."""
        if self.settings.redis_url:
            return
        self._start_child("redis", redis_argv(self.settings), on_parent_death=die_with_parent_sigterm)
        redis, started = self.children["redis"], time.monotonic()
        while time.monotonic() - started < REDIS_START_TIMEOUT_S and redis.restarts < REDIS_START_EXITS:
            if self.stop.is_set() or await asyncio.to_thread(self._redis_answers):
                return  # stopped while waiting: the caller stops too
            await asyncio.sleep(0.1)
        exited = (f"it exited {redis.restarts} time(s), last with code {redis.last_code}"
                  if redis.restarts else "it is still starting")
        raise RedisUnavailable(f"the private redis-server did not answer on {self.settings.redis_socket} within "
                               f"{time.monotonic() - started:.0f} s ({exited}; the journal "
                               "has its own words)")

    # -- periodic ---------------------------------------------------------------------------------
    def _redis_answers(self, refused_raises: bool = False) -> bool:
        """One quick ping (2 s timeouts, no retries): is Redis there right now? With `refused_raises`, a refused
        login raises `RedisRefused` (`twin.redis_client.check_access`: no waiting fixes that) instead of False."""
        client = open_redis(self.settings, connect_timeout_s=2, answer_timeout_s=2)
        try:
            check_access(client, self.settings)
            return True
        except RedisRefused:
            if refused_raises:
                raise
            return False
        except Exception:  # noqa: BLE001 - any other failure means "not there"
            return False
        finally:
            client.close()

    def _bind_store(self) -> None:
        """Mark the queued work as this store's (`Bus.bind_store`), so a worker on another store refuses to take it;
        a Redis that refuses the write (a full disk) is logged: the workers on this store claim it when they start."""
        try:
            Bus(self.redis).bind_store(store_identity(self.store), owner=True)
        except RedisError as exc:
            log.warning("supervisor: could not mark the queued work as this store's (%s)", exc)

    async def _heartbeat(self) -> None:
        """WATCHDOG=1 every WATCHDOG_USEC/2 while healthy, STATUS every 30 s, and a checkpoint request every
        `index_checkpoint_s` (the embedding worker writes only if something changed). Its own pushes never wait (a
        bus without patience: a Redis that refuses writes must not starve the watchdog); a refused one is tried at
        the next beat."""
        watchdog_s = systemd.watchdog_interval_s()
        step = min(x for x in (watchdog_s, STATUS_EVERY_S, self.settings.index_checkpoint_s) if x)
        last_status = last_checkpoint = time.monotonic()
        bus = Bus(self.redis)
        while not self.stop.is_set():
            if await connectors.stopped_within(self.stop, step):
                break
            healthy = await asyncio.to_thread(self._redis_answers)
            if watchdog_s and healthy:
                systemd.notify("WATCHDOG=1")
            now = time.monotonic()
            if now - last_status >= STATUS_EVERY_S:
                systemd.notify(f"STATUS={await asyncio.to_thread(self.status_line)}")
                last_status = now
            try:
                if healthy and now - last_checkpoint >= self.settings.index_checkpoint_s:
                    await asyncio.to_thread(bus.request_checkpoint)
                    last_checkpoint = now
                if healthy:
                    await asyncio.to_thread(self._nudge_embedding, bus)
                    await asyncio.to_thread(self._nudge_scrub, bus)
            except RedisError as exc:  # Redis answers but refuses writes: the watchdog goes on, the next beat retries
                log.info("supervisor: heartbeat's requests not queued this time (%s)", exc)

    async def _due_retries(self) -> None:
        """Move due retries back onto their queues every second (`twin.daemon.due_retries`: RQ's scheduler steps,
        once a process of its own). A Redis that is down or refuses writes is logged once, when it starts and when
        it ends, and stepped again a second later; the locks are let go at the stop."""
        retries = await asyncio.to_thread(DueRetries, self.redis)
        failing = False
        try:
            while not self.stop.is_set():
                try:
                    await asyncio.to_thread(retries.step)
                    if failing:
                        log.info("supervisor: due retries are moved back onto their queues again")
                    failing = False
                except RedisError as exc:
                    if not failing:
                        log.warning("supervisor: due retries could not be moved (%s); trying every second", exc)
                    failing = True
                if await connectors.stopped_within(self.stop, DUE_RETRIES_EVERY_S):
                    break
        finally:
            try:
                await asyncio.to_thread(retries.stop)
            except RedisError as exc:  # the locks expire by themselves within a minute
                log.info("supervisor: could not let go of the retry locks (%s)", exc)

    async def _reflection_ticks(self, bus: Bus) -> None:
        """Seed 001's tick: one early pass `reflect_first_after_s` (20 s) after boot, then every `tick_s` (600 s),
        a reflection job per being (the job itself keeps to one model call per being per tick). A tick that
        cannot reach Redis is skipped with a log line; the next one tries again."""
        delay_s = self.settings.reflect_first_after_s
        while not self.stop.is_set():
            if await connectors.stopped_within(self.stop, delay_s):
                return
            delay_s = self.settings.tick_s
            try:
                beings = await asyncio.to_thread(self.store.beings)
                for being in dict.fromkeys([self.settings.being, *beings]):
                    await asyncio.to_thread(bus.enqueue, "reflect_being", being=being)
            except Exception as exc:  # noqa: BLE001 - Redis or the store away for a moment: skip this tick
                log.warning("supervisor: reflection tick skipped (%s: %s)", type(exc).__name__, exc)

    async def _lifecycle_ticks(self, name: str, every_s: float, push) -> None:
        """Seed 003's periodic passes (`decay` every `decay_every_s`, `dream` every `dream_every_s`): `push(being)`
        (which queues the `<name>_being` job) for every being. The first pass is due `every_s` after the last one
        recorded in SQLite (cursor `lifecycle`/being/`last_<name>`), at the earliest `LIFECYCLE_FIRST_AFTER_S` after
        boot, so restarts neither skip nor repeat a pass; then every `every_s`. A pass that cannot reach Redis is
        skipped with a log line."""
        last = await asyncio.to_thread(state.get_time, self.store, LIFECYCLE_CURSOR, self.settings.being,
                                       f"last_{name}")
        due_in_s = every_s - (time.time() - parse_time(last).timestamp()) if last else 0.0
        delay_s = max(LIFECYCLE_FIRST_AFTER_S, due_in_s)
        while not self.stop.is_set():
            if await connectors.stopped_within(self.stop, delay_s):
                return
            delay_s = every_s
            try:
                beings = await asyncio.to_thread(self.store.beings)
                for being in dict.fromkeys([self.settings.being, *beings]):
                    await asyncio.to_thread(push, being)
            except Exception as exc:  # noqa: BLE001 - Redis or the store away for a moment: skip this pass
                log.warning("supervisor: %s pass skipped (%s: %s)", name, type(exc).__name__, exc)

    async def _staged_ticks(self, bus: Bus, backlog: BacklogWatch) -> None:
        """Queue what connectors staged but Redis refused (down, a full disk, `MISCONF`), every `STAGED_EVERY_S`,
        and every `LOST_JOB_AFTER_S` give back the items of jobs Redis lost; a job that failed for good leaves its
        items `failed` with one diary line. Then say once in the diary when a backlog is searchable
        (`backlog`, made before the connectors started). SQLite says what waits (invariant 1); runs on its own
        connection in a thread, so a slow Redis never blocks the loop."""
        store = await asyncio.to_thread(Store(self.settings.db_path).open)
        last_lost_check = time.monotonic()
        try:
            while not self.stop.is_set():
                if await connectors.stopped_within(self.stop, STAGED_EVERY_S):
                    return
                check_lost = time.monotonic() - last_lost_check >= LOST_JOB_AFTER_S
                try:
                    await asyncio.to_thread(self._queue_staged, store, bus, check_lost)
                    await asyncio.to_thread(self._watch_backlog, store, backlog)
                except Exception as exc:  # noqa: BLE001 - Redis or the store away for a moment: the next tick
                    log.warning("supervisor: staged items not queued this time (%s: %s)", type(exc).__name__, exc)
                if check_lost:
                    last_lost_check = time.monotonic()
        finally:
            store.close()

    def _queue_staged(self, store: Store, bus: Bus, check_lost: bool) -> None:
        if check_lost:
            cutoff = format_time(datetime.now(UTC) - timedelta(seconds=LOST_JOB_AFTER_S))
            requeued, failed = bus.requeue_lost(store, cutoff)
            if requeued:
                log.warning("supervisor: %d staged item(s) lost their learn job (Redis lost it); queued again",
                            requeued)
            if failed:
                Activity(store, self.settings.being).record(
                    "error", f"{failed} staged item(s) could not be learned: their job failed; `twin status` "
                             "counts them, the journal has the reason.")
        queued = bus.queue_ready(store)
        if queued:
            log.info("supervisor: queued %d staged item(s) that waited for Redis", queued)

    def _watch_backlog(self, store: Store, backlog: BacklogWatch) -> None:
        """Write `backlog`'s line when the backlog it follows has just become searchable."""
        line = backlog.check(store, time.monotonic())
        if line is not None:
            Activity(store, self.settings.being).record("learned", line)

    def _nudge_embedding(self, bus: Bus) -> None:
        """If memories wait for a vector but no flush is queued (its job failed, or Redis lost it), queue one:
        SQLite, not the queue, says what is pending (invariant 1)."""
        model_id = model_id_of(self.settings)
        if model_id is None or bus.embed_queue.count:
            return
        if self.store.count_pending_embeddings(model_id):  # two index counts, not a scan of every memory
            bus.notify_embed()

    def _nudge_scrub(self, bus: Bus) -> None:
        """If deleted memory text still waits for its scrub (the marker in SQLite) and no `scrub_store` job is
        queued (Redis lost it, or the removal came from the CLI or Telegram), queue one (twin.lifecycle.forgetting)."""
        if self.store.scrub_due():
            bus.request_scrub()

    def status_line(self) -> str:
        """A one-line summary for systemd's STATUS (memories, pending embeddings, children)."""
        counts = self.store.counts(self.settings.being)
        children = ", ".join(f"{c.name} {c.status.value}" for c in self.children.values())
        return f"{counts['memories']} memories, {counts['embedded']} embedded; {children}"

    # -- main -------------------------------------------------------------------------------------
    async def run(self) -> int:
        """Start everything, wait for SIGTERM/SIGINT, stop everything. Returns 0 on a clean stop."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.on_signal)
        secure_dir(self.settings.data_dir)
        lock = InstanceLock(self.settings.data_dir / "twin.lock")
        lock.acquire()  # raises AlreadyRunning before anything is started
        self.store = Store(self.settings.db_path).open()
        self.activity = Activity(self.store, self.settings.being)
        for line in startup_warnings(self.settings):  # the config and runtime dirs 0700 too; what stays open
            self.activity.record("degraded", line)
        tasks: list[asyncio.Task] = []  # connectors and periodic tasks: they all stop at the stop event
        try:
            # the API first: its start (imports, model, index) is the longest and needs no Redis (its bus is made on
            # first use), so it loads while Redis starts; READY waits for it (issue 18: cold start to READY)
            if self.settings.api_enabled:  # its own process: its own model and index reader (invariant 4)
                ready = self._ready_socket()
                self._start_child("api", [*CHILD_PYTHON, "twin.api"],
                                  env={"NOTIFY_SOCKET": ready.getsockname()})
                if not self.settings.api_is_loopback:
                    self.activity.record("degraded", f"The HTTP API listens on {self.settings.api_host}:"
                                                     f"{self.settings.api_port}, beyond this machine "
                                                     "(TWIN_API_ALLOW_REMOTE); only its token guards it.")
            try:
                await self._start_redis()
            except RedisUnavailable as exc:  # not installed, or it exits at each start: the reason, exit code 1
                self.activity.record("degraded", f"twin cannot start: {exc}.")
                raise
            if self.stop.is_set():  # stopped while Redis was starting
                return 0
            self.redis = open_redis(self.settings, retry=True)  # what the workers' `connect_redis` opens
            try:
                answers = await asyncio.to_thread(self._redis_answers, True)
            except RedisRefused as exc:  # a setting to fix: `twin up` stops with exit code 2, systemd leaves it
                self.activity.record("degraded", f"twin cannot start: {exc}.")
                raise
            if not answers:
                self.activity.record("degraded", f"Redis at {self.settings.redis_shown_url} does not answer; "
                                                 "the workers and connectors retry until it does.")
            else:
                await asyncio.to_thread(self._bind_store)
            for role in ("learn", "embed"):  # background work: niced below what the owner types
                self._start_child(f"{role} worker", [*CHILD_PYTHON, "twin.workers", role],
                                  on_parent_death=NicedChild(self.settings.workers_nice))
            pause = await asyncio.to_thread(LearningPause, self.settings.db_path, self.settings.being)
            bus = Bus(self.redis, RefusalRetry(self.halt, pause))  # every push waits out a refusal
            # made before anything is staged
            backlog = BacklogWatch.starting(self.store, model_id_of(self.settings), time.monotonic())
            for connector in connectors.enabled(self.settings):
                connector.run_prepare(self.settings, self.store)
                tasks.append(asyncio.create_task(self._keep_connector(connector, bus),
                                                 name=f"connector-{connector.name}"))
            running = len(tasks)
            decay = self._lifecycle_ticks("decay", self.settings.decay_every_s,
                                          lambda being: bus.enqueue("decay_being", being=being))
            dream = self._lifecycle_ticks("dream", self.settings.dream_every_s,
                                          lambda being: bus.enqueue("dream_being", being=being))
            tasks += [asyncio.create_task(self._heartbeat(), name="heartbeat"),
                      asyncio.create_task(self._due_retries(), name="due-retries"),
                      asyncio.create_task(self._staged_ticks(bus, backlog), name="staged-ticks"),
                      asyncio.create_task(self._reflection_ticks(bus), name="reflection-ticks"),
                      asyncio.create_task(decay, name="decay-ticks"), asyncio.create_task(dream, name="dream-ticks")]
            answering = await self._api_answers(ready) if self.settings.api_enabled else "ready"
            if self.stop.is_set():  # stopped while starting: not up, nothing to say but the stop
                return 0
            systemd.notify("READY=1", f"STATUS={self.status_line()}")
            model = (f"model provider {self.settings.llm_base_url} ({self.settings.llm_model_cheap})"
                     if self.settings.has_provider else "no model provider (offline extraction, no reflection)")
            api = ("" if not self.settings.api_enabled else
                   f", the HTTP API on port {self.settings.api_port}" if answering != "exited" else
                   ", the HTTP API not listening")
            redis = "external" if self.settings.redis_url else "private"
            self.activity.record("system", f"twin is up: {running} connector(s), 2 workers{api}, "
                                           f"Redis {redis}, {model}; reflection every "
                                           f"{self.settings.tick_s:.0f} s.")
            if answering == "exited":
                child = self.children["api"]
                self.activity.record("degraded", f"The HTTP API exited while starting "
                                                 f"({self._exit_said(child, child.last_code)}); twin runs on "
                                                 "without it and restarts it with backoff (the journal says why).")
            elif answering == "timeout":
                self.activity.record("degraded", f"The HTTP API did not answer within {API_READY_WAIT_S:.0f} s of "
                                                 "the start (still loading its model and index, or failing: the "
                                                 "journal says which); twin runs on meanwhile.")
            await self.stop.wait()
        finally:
            await self._shutdown(tasks)
            process_states.clear(self.settings)
            lock.release()
        return 0

    async def _api_answers(self, ready: socket.socket) -> str:
        """Wait until the API says READY=1 on `ready` (the `NOTIFY_SOCKET` it was given: it says so once it accepts
        requests with its recall open, `twin.api.server.tell_ready`), at most `API_READY_WAIT_S`, until stopping or
        until the API process exits; "ready" if it did, else "stopping", "exited" or "timeout". Closes and removes
        `ready`. systemd's READY=1 comes after this, so systemd and `twin status` call the daemon up when it can
        answer (issue 18); the workers start meanwhile (jobs wait in Redis until the embedding worker has opened
        its index)."""
        loop, api = asyncio.get_running_loop(), self.children["api"]
        deadline = time.monotonic() + API_READY_WAIT_S
        try:
            while time.monotonic() < deadline and not self.stop.is_set() and api.status is not ChildStatus.BACKOFF:
                try:
                    message = await asyncio.wait_for(loop.sock_recv(ready, 4096), API_POLL_S)
                except TimeoutError:
                    continue
                if "READY=1" in message.decode(errors="replace").split("\n"):
                    return "ready"
            return ("stopping" if self.stop.is_set() else "exited" if api.status is ChildStatus.BACKOFF
                    else "timeout")
        finally:
            path = ready.getsockname()
            ready.close()
            # a restarted API's READY then finds no one and is dropped (`systemd.notify`)
            Path(path).unlink(missing_ok=True)

    def on_signal(self) -> None:
        """SIGTERM/SIGINT: the first asks for a warm stop (the stop event), a second one while stopping forces it
        (the force event; rq's cold stop). Only records the request: `run` and `_shutdown` act on it."""
        if self.stop.is_set():
            self.force.set()
        self.stop.set()
        self.halt.set()

    async def _shutdown(self, tasks: list[asyncio.Task]) -> None:
        """Stop everything in `SHUTDOWN_STAGES` stages of at most `stop_grace_s` each (none when forced): the
        connectors and periodic tasks in parallel (they see the stop event and return after their current push;
        one still running at the end of the grace is cancelled), then the workers in parallel, then Redis."""
        self.stop.set()
        self.halt.set()
        systemd.notify("STOPPING=1")
        log.info("supervisor: stopping")
        grace_s = self.settings.stop_grace_s
        await self._drain(tasks, grace_s)
        workers = [c for name, c in self.children.items() if name != "redis"]
        if workers:  # a warm stop can take seconds: the journal says what it waits for (a breaker saw 9 s of silence)
            log.info("supervisor: connectors stopped; stopping %s (each finishes its job in hand, at most %.0f s)",
                     ", ".join(c.name for c in workers), grace_s)
        killed = await asyncio.gather(*(self._stop_child(c, grace_s) for c in workers))
        forced = [c.name for c, was_killed in zip(workers, killed, strict=True) if was_killed]
        if "redis" in self.children:
            log.info("supervisor: stopping redis (it saves its data first)")
            if await self._stop_child(self.children["redis"], grace_s):
                forced.append("redis")
        for child in self.children.values():
            if child.task is not None:
                await child.task
        if self.force.is_set():
            line = "twin stopped at once (a second stop signal)" + (f"; {', '.join(forced)} killed." if forced else ".")
        else:
            line = ("twin stopped cleanly." if not forced else
                    f"twin stopped; {', '.join(forced)} had to be killed after {grace_s:.0f} s.")
        self.activity.record("system", line)
        self.store.close()

    async def _drain(self, tasks: list[asyncio.Task], grace_s: float) -> None:
        """Let `tasks` (connectors, periodic tasks) return by themselves within `grace_s`, all in parallel, unless
        the stop is forced; cancel the rest. A task that failed is logged with its traceback."""
        if not tasks:
            return
        if not await self._done_unless_forced(tasks, grace_s):
            late = [t for t in tasks if not t.done()]
            log.warning("supervisor: %s still running %s; cancelling", ", ".join(t.get_name() for t in late),
                        "at the forced stop" if self.force.is_set() else f"after {grace_s:.0f} s")
            for task in late:
                task.cancel()
            await asyncio.wait(late, timeout=CANCELLED_WAIT_S)
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                log.error("supervisor: %s failed while stopping", task.get_name(), exc_info=task.exception())
