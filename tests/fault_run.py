"""One fault run on a real daemon (`twin up`: its private redis-server, the real RQ workers, SQLite): distinct
texts handed over as a connector does (staged in SQLite, then a learn job per chunk on Redis) while the run kills
what it can, and a count of what came out. Used by tests/test_faults.py (hundreds of texts, in CI) and
bench/faults.py (thousands, figures printed).

What is expected comes from the same texts learned in this process, one `learn()` each, on a store of its own:
the daemon, faults and all, must end with exactly those memories (each once, each embedded), no staged item left
and none failed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from redis import Redis

from twin import ingest
from twin.ingest import Ingest
from twin.settings import Settings
from twin.store import Store
from twin.workers.bus import Bus

ROOT = Path(__file__).resolve().parent.parent
BEING = "owner"
SOURCE = "muse"
PLACES = ("Porto", "Leipzig", "Gdańsk", "Tromsø", "Valparaíso", "Hanoi", "Kraków", "Accra", "Lyon", "Osaka",
          "Cork", "Tbilisi", "Bergen", "Quito", "Nantes", "Dakar", "Graz", "Perth", "Ghent", "Utrecht")
DOINGS = ("learned to sail a dinghy", "bought a second-hand cello", "ran a half marathon", "fixed a leaking tap",
          "planted three tomato plants", "read a novel about whalers", "baked rye bread", "repaired a bicycle wheel",
          "joined a choir", "adopted a rescue cat", "painted a watercolour of the harbour", "sold an old camera",
          "hiked to a glacier", "built a bookshelf", "tried ice swimming", "visited a salt mine",
          "took a pottery class", "lost a wallet on a tram", "won a chess game against a stranger",
          "tasted fermented shark")
COMPANIONS = ("my sister", "an old schoolfriend", "two colleagues", "my neighbour", "a tour group", "my cousin",
              "nobody at all", "my climbing partner", "a retired teacher", "my landlord", "the choir director",
              "a stranger from the hostel", "my grandmother", "the team from work", "a beekeeper", "my godson",
              "a ferry captain", "my flatmate", "a fisherman", "my piano teacher")


def texts(n: int) -> list[str]:
    """`n` distinct one-sentence statements the offline extractor turns into one memory each, far enough apart
    in meaning that capture keeps every one (a place, a deed and a companion: 8,000 combinations, and a number)."""
    out = []
    for i in range(n):
        place, doing = PLACES[i % len(PLACES)], DOINGS[(i // len(PLACES)) % len(DOINGS)]
        who = COMPANIONS[(i // (len(PLACES) * len(DOINGS))) % len(COMPANIONS)]
        out.append(f"In {place} in {1990 + i % 37} I {doing} with {who}, trip number {i}.")
    return out


def expected_contents(lines: list[str], workdir: Path) -> Counter:
    """The active memories the same `lines` give when learned here, in order (the reference)."""
    from twin.learn.learning import learn

    with Store(workdir / "reference.db") as store:
        for line in lines:
            learn(store, None, BEING, line, SOURCE)
        return Counter(r[0] for r in store.conn.execute("SELECT content FROM memories WHERE status = 'active'"))


class FaultRun:
    """A daemon over the environment `env` (tests/conftest.py `daemon_env`), logging to `log`."""

    def __init__(self, env: dict, log: Path):
        self.env, self.log = env, log
        self.db = Path(env["TWIN_DATA_DIR"]) / "twin.db"
        self.proc: subprocess.Popen | None = None
        self.faults: list[str] = []

    # -- the daemon ---------------------------------------------------------------------------------------------
    def start(self, timeout_s: float = 120) -> None:
        """`twin up`, waiting until it says it is up (its log gains one more "twin is up")."""
        ups = self._log().count("twin is up")
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "twin", "up"], cwd=ROOT, env=self.env, stdout=out,
                                         stderr=subprocess.STDOUT)
        self._wait(lambda: self._log().count("twin is up") > ups, timeout_s, "the daemon to be up")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 60) -> int:
        """Send `sig` to the supervisor and wait for it; its exit code."""
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout_s)
        if sig == signal.SIGKILL:  # its children die with it (PR_SET_PDEATHSIG); wait until they have
            self._wait(lambda: not self.children(), 30, "the children of a killed supervisor to die")
        self.faults.append(f"supervisor {signal.Signals(sig).name}")
        return code

    def children(self) -> dict[int, str]:
        """`{pid: command line}` of the supervisor's live children."""
        if self.proc is None:
            return {}
        out = subprocess.run(["ps", "-o", "pid=,stat=,args=", "--ppid", str(self.proc.pid)], capture_output=True,
                             text=True).stdout
        rows = [line.split(None, 2) for line in out.strip().splitlines()]
        return {int(pid): args for pid, stat, args in rows if not stat.startswith("Z")}

    def kill_child(self, marker: str, timeout_s: float = 60) -> None:
        """SIGKILL the child whose command line holds `marker` ("workers learn", "redis-server") and wait until
        the supervisor has started a new one."""
        pid = self._wait(lambda: next((p for p, a in self.children().items() if marker in a), None), timeout_s,
                         f"a child running {marker!r}")
        os.kill(pid, signal.SIGKILL)
        self._wait(lambda: any(marker in a for p, a in self.children().items() if p != pid), timeout_s,
                   f"a new {marker!r}")
        self.faults.append(f"{marker} SIGKILL")

    @property
    def settings(self) -> Settings:
        """The daemon's settings as its `TWIN_*` environment names them (data, config and runtime dirs; no env
        file)."""
        return settings_of(self.env)

    # -- what goes in and comes out -------------------------------------------------------------------------------
    def feed(self, lines: list[str], per_push: int = 25) -> int:
        """Stage `lines` in SQLite and queue learn jobs for them, `per_push` at a time, as a connector does; a
        push Redis refuses (down, restarting) leaves its items staged for the supervisor to queue. Returns how
        many pushes Redis refused."""
        settings = self.settings
        redis = Redis.from_url(settings.effective_redis_url, socket_timeout=5)
        bus, refused = Bus(redis), 0
        try:
            with Store(self.db) as store:
                for start in range(0, len(lines), per_push):
                    with store.atomic():
                        ids = ingest.stage(store, [Ingest(BEING, SOURCE, t) for t in lines[start:start + per_push]])
                    refused += not bus.push(store, ids, BEING, "text")
        finally:
            redis.close()
        return refused

    def contents(self) -> Counter:
        """The active memories of the daemon's store, by content."""
        with Store(self.db) as store:
            return Counter(r[0] for r in store.conn.execute("SELECT content FROM memories WHERE status = 'active'"))

    def settled(self, expected: int) -> dict | None:
        """The store's counts once nothing is staged, `expected` memories exist and every one has a vector; None
        before."""
        with Store(self.db) as store:
            staged = ingest.counts(store)
            counts = store.counts(BEING)
        done = not any(staged.values()) and counts["memories"] >= expected and counts["embedded"] == counts["memories"]
        return {**counts, **{f"staged_{k}": v for k, v in staged.items()}} if done else None

    def wait_settled(self, expected: int, timeout_s: float) -> dict:
        return self._wait(lambda: self.settled(expected), timeout_s, f"{expected} memories learned and embedded")

    # -- plumbing -----------------------------------------------------------------------------------------------
    def _log(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def _wait(self, predicate, timeout_s: float, what: str):
        try:
            return wait_for(predicate, timeout_s, what)
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}; log tail:\n{self._log()[-3000:]}") from None


def wait_for(predicate, timeout_s: float, what: str, every_s: float = 0.2):
    """`predicate()`'s first truthy value, asked every `every_s` seconds; `TimeoutError` naming `what` after
    `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every_s)
    raise TimeoutError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def settings_of(env: dict) -> Settings:
    """The `Settings` a daemon run with the `TWIN_*` environment `env` has (its data, config and runtime dirs; no env
    file)."""
    return Settings(_env_file=None, data_dir=env["TWIN_DATA_DIR"], config_dir=env["TWIN_CONFIG_DIR"],
                    runtime_dir=env["TWIN_RUNTIME_DIR"])


def run_faults(run: FaultRun, lines: list[str]) -> list[int]:
    """The fault sequence over `lines` in five parts, each handed over while the daemon is up, each followed by
    one fault: the learn worker SIGKILLed mid-job, Redis SIGKILLed, the supervisor SIGTERMed under load (then
    started again), the supervisor SIGKILLed (then started again), the embedding worker SIGKILLed. Returns the
    refused pushes per part."""
    parts = [lines[i::5] for i in range(5)]
    refused = []
    run.start()
    refused.append(run.feed(parts[0]))
    run.kill_child("workers learn")
    refused.append(run.feed(parts[1]))
    run.kill_child("redis-server")
    refused.append(run.feed(parts[2]))
    assert run.stop(signal.SIGTERM) == 0
    run.start()
    refused.append(run.feed(parts[3]))
    run.stop(signal.SIGKILL)
    run.start()
    refused.append(run.feed(parts[4]))
    run.kill_child("workers embed")
    return refused
