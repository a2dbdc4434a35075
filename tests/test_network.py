"""Nothing leaves the machine: the real daemon (`twin up` on its embedded defaults, its own Redis, real workers,
the local model) with a provider, Gmail and Telegram pointed at the local fake servers, plus `twin learn`,
`recall`, `sync browser` and `backfill`, every process observed, and the assertion that nothing connected,
bound, or asked DNS for anything but the configured endpoints: twin's own Redis socket and the fake servers'
127.0.0.1 ports. Nothing may be written outside the data, config and runtime dirs either (~/.cache included).

The observer is strace (`strace -f` on each command: every socket address a process used, and every file it
created), or where strace is missing a private network namespace whose loopback receives every destination and
is read packet by packet (tests/netns_capture.py; writes are then watched under HOME and TMPDIR). The test
skips only when neither exists, and never in CI (CI=true). TWIN_TEST_NETWORK_OBSERVER=namespace runs the
namespace observer even where strace exists.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import netns_capture
import pytest
from browser_fixtures import LINK, make_chromium_profile
from fake_gmail import FakeGmail, token_file_json
from fake_llm import FakeLLM
from fake_telegram import FakeTelegram
from syscall_trace import Contact, Write, read_trace, strace_prefix
from test_daemon import wait_for
from test_gmail import MAILBOX
from test_gmail import OWNER as GMAIL_OWNER

from twin.activity import Activity
from twin.connectors.browser import CONNECTOR as BROWSER
from twin.store import Store, state

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "4242:NETWORK-bot-token_x"
OWNER_ID = 42
TELEMETRY_DWELL_S = 15
"""The embedding worker lives at least this long after loading the model: onnxruntime's telemetry asked DNS
every 5-10 s (LIBRARY_NOTES §10), so a regression shows inside the run."""
LIBRARY_SWITCHES = ("ORT_DISABLE_TELEMETRY", "HF_HUB_OFFLINE", "HF_HUB_DISABLE_TELEMETRY", "DO_NOT_TRACK",
                    "XDG_CACHE_HOME")
"""Never inherited from the test's environment: twin's own code must turn the libraries off."""
KERNEL_FAMILIES = ("AF_NETLINK", "AF_UNSPEC")
"""Socket families that reach only the kernel (route and address queries; AF_UNSPEC dissolves a connection)."""
OBSERVER_ENV = "TWIN_TEST_NETWORK_OBSERVER"
CHROME_PROFILES = ".config/google-chrome"
"""Where `make_chromium_profile(home, "chrome")` writes, under HOME."""


# -- what is allowed ---------------------------------------------------------------------------------------------
def outside_contacts(contacts: list[Contact], ports: set[int], unix_dirs: list[Path],
                     listens: set[int] = frozenset()) -> list[Contact]:
    """The contacts that are not to a configured endpoint: a unix socket under `unix_dirs`, a loopback address
    on one of `ports`, a kernel family, or a bind that cannot listen outside (an unnamed unix socket, a
    loopback address on port 0: urllib3's IPv6 probe at import; on one of `listens`: the HTTP API's port)."""
    def allowed(c: Contact) -> bool:
        if c.family in KERNEL_FAMILIES:
            return True
        if c.family == "AF_UNIX":
            return (c.call == "bind" and not c.address) or any(_under(c.address, d) for d in unix_dirs)
        if c.family in ("AF_INET", "AF_INET6") and c.is_loopback:
            return c.port in {0, *listens} if c.call == "bind" else c.port in ports | listens
        return False
    return [c for c in contacts if not allowed(c)]


def outside_writes(writes: list[Write], dirs: list[Path]) -> list[Write]:
    """The writes not under `dirs`, `/dev/null`, or a `__pycache__` (the interpreter caching the bytecode of
    twin's own code beside it, as in any editable install)."""
    return [w for w in writes if w.path != "/dev/null" and "/__pycache__/" not in w.path
            and not any(_under(w.path, d) for d in dirs)]


def _under(path: str, folder: Path) -> bool:
    return bool(path) and (path == str(folder) or path.startswith(str(folder).rstrip("/") + "/"))


# -- observers ---------------------------------------------------------------------------------------------------
class StraceObserver:
    """Runs each command under `strace -f` into `<folder>/<name>.trace`; `report()` reads them all."""

    kind = "strace"

    def __init__(self, strace: str, folder: Path):
        self.strace, self.folder = strace, folder
        folder.mkdir()

    def command(self, name: str, argv: list[str]) -> list[str]:
        return strace_prefix(self.strace, self.folder / f"{name}.trace") + argv

    def start(self) -> None:
        pass

    def report(self) -> tuple[list[Contact], list[Write], str]:
        contacts, writes, lines = [], [], 0
        for log in sorted(self.folder.glob("*.trace")):
            trace = read_trace(log.read_text(errors="replace"), str(ROOT), program=log.stem)
            contacts += trace.contacts
            writes += trace.writes
            lines += trace.lines
        return contacts, writes, f"{lines} syscalls traced in {len(list(self.folder.glob('*.trace')))} commands"


class NamespaceObserver:
    """Inside the private namespace: commands run as they are; every packet on lo is captured, and the `watched`
    folders (HOME, TMPDIR) for anything created, changed or deleted, except under `own` (what the test itself
    writes there: the browser profile)."""

    kind = "namespace"

    def __init__(self, watched: list[Path], own: list[Path]):
        self.capture = netns_capture.PacketCapture()
        self.watched, self.own = watched, own
        self.changes: list[Write] = []
        self._stop = threading.Event()

    def command(self, name: str, argv: list[str]) -> list[str]:
        return argv

    def start(self) -> None:
        from watchfiles import watch

        netns_capture.prepare()
        self.capture.start()
        ready = threading.Event()

        def run() -> None:
            ready.set()
            for batch in watch(*self.watched, stop_event=self._stop, debounce=200, rust_timeout=500,
                               yield_on_timeout=True):
                self.changes += [Write(0, "namespace", change.name, path) for change, path in batch
                                 if not any(_under(path, folder) for folder in self.own)]
        threading.Thread(target=run, daemon=True).start()
        ready.wait(5)
        time.sleep(1)  # the watch is set up

    def report(self) -> tuple[list[Contact], list[Write], str]:
        time.sleep(1)
        self._stop.set()
        contacts = self.capture.stop()
        return contacts, self.changes, f"{len(contacts)} packets started on lo (TCP SYN or UDP)"


def choose_observer() -> tuple[str, list[str]]:
    """`("strace", [strace path])`, `("namespace", [unshare prefix])` or `("", [why neither])`."""
    problems = []
    strace = shutil.which("strace")
    if os.environ.get(OBSERVER_ENV) != "namespace":
        if strace is None:
            problems.append("strace is not installed (scripts/test.sh installs it: install.sh --test)")
        else:
            probe = subprocess.run([*strace_prefix(strace, Path(os.devnull)), "true"], capture_output=True,
                                   text=True, timeout=30)
            if probe.returncode == 0:
                return "strace", [strace]
            problems.append(f"strace cannot trace here: {probe.stderr.strip()[:200]}")
    prefix, problem = netns_capture.unshare_prefix()
    if prefix:
        return "namespace", prefix
    problems.append(f"no network namespace: {problem}")
    return "", ["; ".join(problems)]


# -- the run -----------------------------------------------------------------------------------------------------
@dataclass
class Endpoints:
    llm: FakeLLM
    gmail: FakeGmail
    telegram: FakeTelegram

    @property
    def ports(self) -> set[int]:
        return {self.llm.server.server_address[1], self.gmail.server.server_address[1],
                self.telegram.server.server_address[1]}


@pytest.fixture
def endpoints():
    servers = Endpoints(FakeLLM().start(), FakeGmail(GMAIL_OWNER).start(), FakeTelegram(token=TOKEN).start())
    for thread in MAILBOX:
        servers.gmail.add_thread(thread)
    yield servers
    servers.llm.stop()
    servers.gmail.stop()
    servers.telegram.stop()


def network_env(daemon_env: dict, tmp_path: Path, servers: Endpoints) -> dict:
    """`daemon_env` with the provider, Gmail and Telegram on the fake servers, a file to learn, a browser
    profile and a private TMPDIR; the library switches of the test's own environment removed."""
    env = {k: v for k, v in daemon_env.items() if k not in LIBRARY_SWITCHES}
    env.update({"TWIN_LLM_BASE_URL": servers.llm.url, "TWIN_LLM_API_KEY": "sk-test-NETWORK-4242",
                "TWIN_LLM_TIMEOUT_S": "5", "TWIN_LLM_MAX_RETRIES": "1",
                "TWIN_GMAIL_API_URL": servers.gmail.url, "TWIN_GMAIL_TOKEN_URL": servers.gmail.token_uri,
                "TWIN_GMAIL_POLL_S": "10", "TWIN_TELEGRAM_BASE_URL": servers.telegram.url,
                "TWIN_TELEGRAM_ALLOWED_USERS": str(OWNER_ID), "TWIN_TELEGRAM_POLL_TIMEOUT_S": "1",
                "TMPDIR": str(tmp_path / "tmp")})
    (tmp_path / "tmp").mkdir()
    (tmp_path / "config" / "env").write_text(f"TWIN_TELEGRAM_BOT_TOKEN={TOKEN}\n")
    (tmp_path / "config" / "env").chmod(0o600)
    data = Path(env["TWIN_DATA_DIR"])
    data.mkdir(mode=0o700)
    (data / "gmail-token.json").write_text(token_file_json(servers.gmail))  # expired: refreshed at the fake
    (data / "gmail-token.json").chmod(0o600)
    (tmp_path / "docs" / "sailing.md").write_text(
        "# Sailing\n\nThe owner learned to sail on Lake Geneva in 2019 with a friend named Paul. "
        "The owner keeps a small dinghy at the harbour of Nyon and sails it on summer weekends.\n")
    make_chromium_profile(Path(env["HOME"]), "chrome", "Default")  # visits come after the daemon's own import
    assert (Path(env["HOME"]) / CHROME_PROFILES / "Default" / "History").exists()
    return env


def add_reading(home: Path) -> None:
    """Twelve visits of Rust async pages, hours ago, to the Chrome profile: one interest for `twin sync browser`."""
    now = datetime.now(UTC).replace(microsecond=0)
    pages = [("https://docs.rs/tokio/latest/tokio/runtime/index.html", "tokio::runtime - Rust"),
             ("https://tokio.rs/tokio/tutorial/async", "Async in depth | Tokio - An asynchronous Rust runtime"),
             ("https://docs.rs/tokio/latest/tokio/task/fn.spawn.html", "spawn in tokio::task - Rust async runtime")]
    visits = [(f"{url}?page={i}", title, now - timedelta(hours=20 - i), LINK, 0)
              for i, (url, title) in enumerate(pages * 4)]
    make_chromium_profile(home, "chrome", "Default", visits)


class Run:
    """The commands of one observed run; `twin(...)` runs a CLI command to its end, `up()` starts the daemon."""

    def __init__(self, observer, env: dict, tmp_path: Path):
        self.observer, self.env, self.log = observer, env, tmp_path / "daemon.log"
        self.steps = 0

    def twin(self, *args: str, timeout_s: float = 180) -> subprocess.CompletedProcess:
        self.steps += 1
        argv = self.observer.command(f"{self.steps:02d}-{args[0]}", [sys.executable, "-m", "twin", *args])
        done = subprocess.run(argv, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout_s)
        assert done.returncode == 0, f"twin {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        return done

    def up(self) -> subprocess.Popen:
        argv = self.observer.command("00-up", [sys.executable, "-m", "twin", "up"])
        with open(self.log, "ab") as out:
            return subprocess.Popen(argv, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT)

    def daemon_says(self, text: str) -> bool:
        return text in self.log.read_text(errors="replace")

    def diary(self) -> list[str]:
        with Store(Path(self.env["TWIN_DATA_DIR"]) / "twin.db") as store:
            return [line.text for line in Activity(store, "owner").recent(500)]

    def browser_imported(self) -> bool:
        with Store(Path(self.env["TWIN_DATA_DIR"]) / "twin.db") as store:
            return state.get_time(store, BROWSER, "owner", "last_import") is not None

    def all_embedded(self) -> bool:
        with Store(Path(self.env["TWIN_DATA_DIR"]) / "twin.db") as store:
            counts = store.counts("owner")
        return counts["memories"] == counts["embedded"] > 0


def stop_daemon(proc: subprocess.Popen, observer) -> int:
    """SIGTERM to `twin up` itself (under strace: strace's child; strace leaves with its exit code)."""
    pid = proc.pid
    if observer.kind == "strace":
        children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(proc.pid)], capture_output=True, text=True)
        pid = int(children.stdout.split()[0])
    os.kill(pid, signal.SIGTERM)
    return proc.wait(90)


def exercise(run: Run, servers: Endpoints) -> dict:
    """The daemon with every source, then learn, sync, recall while it runs, and learn, backfill, recall after
    it stopped. Asserts each did its work; returns what the report prints."""
    started = time.monotonic()
    daemon = run.up()
    try:
        wait_for(lambda: run.daemon_says("twin is up"), 90, "the daemon")
        opened = wait_for(lambda: run.daemon_says("embedder: opened") and time.monotonic(), 90, "the model loaded")
        wait_for(lambda: any(line.startswith("Read 3 new email") for line in run.diary()), 90, "the Gmail sync")
        before = len(servers.telegram.sent)
        servers.telegram.send_user_message("Where did I learn to sail?", user_id=OWNER_ID)
        reply = servers.telegram.wait_for_sent(before + 1, 60)[before][1]
        run.twin("learn", "My sister Ana lives in Porto and teaches chemistry.")
        wait_for(run.browser_imported, 90, "the daemon's own browser import")
        add_reading(Path(run.env["HOME"]))
        synced = run.twin("sync", "browser").stdout
        assert synced.startswith("Browser: 12 visits read from 1 profile; learned") and "rust" in synced, synced
        wait_for(run.all_embedded, 120, "every memory embedded")
        recalled = run.twin("recall", "where does my sister live").stdout
        assert "Porto" in recalled, recalled
        time.sleep(max(0.0, opened + TELEMETRY_DWELL_S - time.monotonic()))
    finally:
        code = stop_daemon(daemon, run.observer)
    assert code == 0, run.log.read_text(errors="replace")[-3000:]
    run.twin("learn", "The owner's bicycle is a green Gazelle bought in Utrecht.")  # no daemon: no vector yet
    backfilled = run.twin("backfill").stdout
    assert "backfill: 1 of" in backfilled, backfilled
    found = run.twin("recall", "which bike do I ride").stdout
    assert "Gazelle" in found, found
    return {"seconds": round(time.monotonic() - started, 1), "reply": reply, "recall": recalled.splitlines()[0]}


def test_the_daemon_reaches_only_its_configured_endpoints(daemon_env, tmp_path, endpoints):
    inside = os.environ.get(netns_capture.PARENT_NAMESPACE_ENV)
    if inside:
        observer = NamespaceObserver([tmp_path / "home", tmp_path / "tmp"], [tmp_path / "home" / CHROME_PROFILES])
    else:
        kind, detail = choose_observer()
        if kind == "namespace":
            return _run_inside_a_namespace(detail, tmp_path)
        if not kind:
            reason = f"neither strace nor a network namespace is available: {detail[0]}"
            if os.environ.get("CI") == "true":
                pytest.fail(reason)
            pytest.skip(reason)
        observer = StraceObserver(detail[0], tmp_path / "traces")
    env = network_env(daemon_env, tmp_path, endpoints)
    observer.start()
    run = Run(observer, env, tmp_path)
    figures = exercise(run, endpoints)
    contacts, writes, summary = observer.report()

    outside = outside_contacts(contacts, endpoints.ports, [Path(env["TWIN_RUNTIME_DIR"])],
                               listens={int(env["TWIN_API_PORT"])})
    stray = outside_writes(writes, [Path(env[k]) for k in ("TWIN_DATA_DIR", "TWIN_CONFIG_DIR", "TWIN_RUNTIME_DIR")])
    cache = sorted(str(p) for p in (tmp_path / "home" / ".cache").glob("**/*"))
    assert not (outside or stray or cache), (
        "contacts outside the configured endpoints:\n" + _listing(c.describe() for c in outside)
        + "\nwritten outside the data/config/runtime dirs:\n" + _listing(w.describe() for w in stray)
        + "\nunder ~/.cache:\n" + _listing(cache))
    reached = {c.port for c in contacts if c.port in endpoints.ports}
    assert reached == endpoints.ports, f"the run did not reach every fake server: {reached} of {endpoints.ports}"
    print(f"\nnetwork: {observer.kind}: {summary}; {len(contacts)} socket addresses, all local; "
          f"{len(writes)} writes, all inside; {figures}")


def _listing(lines, most: int = 30) -> str:
    """Distinct `lines`, at most `most` of them, then how many more."""
    unique = list(dict.fromkeys(lines))
    more = f"\n  … and {len(unique) - most} more" if len(unique) > most else ""
    return "\n".join(f"  {line}" for line in unique[:most]) + more


def _run_inside_a_namespace(prefix: list[str], tmp_path: Path) -> None:
    """Run this test again in a private network namespace (fixtures and all) and pass or fail with it."""
    env = dict(os.environ, **{netns_capture.PARENT_NAMESPACE_ENV: netns_capture.current_namespace()})
    env.pop(OBSERVER_ENV, None)
    node = f"{Path(__file__).relative_to(ROOT)}::test_the_daemon_reaches_only_its_configured_endpoints"
    inner = subprocess.run([*prefix, sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                            "--basetemp", str(tmp_path / "inner"), node], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=900)
    output = inner.stdout + inner.stderr
    assert inner.returncode == 0, f"the run in the network namespace failed:\n{output[-12000:]}"
    print(next((line for line in output.splitlines() if line.startswith("network: ")), output[-500:]))
