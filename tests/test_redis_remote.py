"""Redis over TCP, as workers on another machine reach it: an ACL user with a password (the password in the 0600 env
file), TLS with a CA and a client certificate, and the settings' refusals. Real processes: a redis-server on a
loopback TCP port and `python -m twin.workers` run as separate processes against it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, diary_lines, free_port, push_text, run_worker_process
from redis import Redis

from twin.activity import Activity
from twin.exceptions import SettingsError
from twin.redis_client import open_redis
from twin.settings import load_settings, shown_url
from twin.store import Store

PASSWORD = "Tc9-redis-SECRET-7781"
"""The ACL user's password in these tests: recognisable, so a test can look for it where it must never be."""
USER = "twinwork"
ADMIN = ("admin", "admin-pw-for-acl-log")
"""A second user of the test servers, allowed everything, for reading `ACL LOG` (what the ACL user was refused)."""
ACL_RULES = ["~rq:*", "~twin:*", "&rq:*", "+@all", "-@dangerous", "+info", "+client|list"]
"""The README's ACL example ("Workers on another machine"): twin's keys (`rq:*`, `twin:*`) and RQ's pubsub channels
only, every command but the dangerous ones, and the two of those RQ uses (INFO for the server's version, CLIENT LIST
for a worker's own address)."""


def start_redis(tmp: Path, *args: str) -> tuple[subprocess.Popen, int]:
    """A redis-server on a free loopback TCP port (no unix socket, no persistence) with `args` added; returns it and
    its port once it takes connections. The default user is off: only the ACL user gets in."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server)")
    tmp.mkdir(parents=True, exist_ok=True)
    port = free_port()
    tls = "--tls-port" in args
    argv = [binary, "--port", "0" if tls else str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(tmp), "--user", "default", "off", "--user", USER, "on", f">{PASSWORD}", *ACL_RULES,
            "--user", ADMIN[0], "on", f">{ADMIN[1]}", "~*", "&*", "+@all", *args]
    if tls:
        argv[argv.index("--tls-port") + 1] = str(port)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import socket

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"redis-server exited {proc.returncode} (run it with {argv} to see why)")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        time.sleep(0.05)
    proc.kill()
    pytest.fail("redis-server did not listen")


def stop_redis(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(10)


@pytest.fixture
def acl_redis(tmp_path):
    """A loopback TCP redis-server whose only user is `USER` with `PASSWORD` and `ACL_RULES`; yields its port."""
    proc, port = start_redis(tmp_path / "redis")
    yield port
    stop_redis(proc)


def write_env_file(settings, lines: dict[str, str]) -> Path:
    """The env file of the isolated twin (`TWIN_ENV_FILE`), mode 0600, with `lines` as KEY=value."""
    path = Path(settings.config_dir) / "env"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
    path.chmod(0o600)
    return path


@pytest.fixture
def tcp_twin(twin_paths, acl_redis, monkeypatch):
    """The isolated twin pointed at `acl_redis`: URL and user in the environment, the password in the env file."""
    monkeypatch.setenv("TWIN_REDIS_URL", f"redis://127.0.0.1:{acl_redis}/0")
    monkeypatch.setenv("TWIN_REDIS_USERNAME", USER)
    write_env_file(twin_paths, {"TWIN_REDIS_PASSWORD": PASSWORD})
    return load_settings()


def learn_and_embed_through(settings, text: str) -> list[str]:
    """Stage `text` and queue its learn job through `settings`' Redis, run the learn worker and then the embedding
    worker as processes (`python -m twin.workers ROLE --burst`); returns the workers' output (stdout + stderr)."""
    client = open_redis(settings, connect_timeout_s=2, answer_timeout_s=5)
    with Store(settings.db_path) as store:
        push_text(store, client, settings.being, text, "muse")
    client.close()
    return [(p.stdout + p.stderr) for p in (run_worker_process("learn"), run_worker_process("embed"))]


def assert_learned_and_embedded(settings, words: str) -> None:
    with Store(settings.db_path) as store:
        contents = [m.content for m in store.list_memories(settings.being)]
        counts = store.counts(settings.being)
    assert any(words in c for c in contents), contents
    assert counts["memories"] == counts["embedded"] >= 1


# -- round trips with real worker processes ---------------------------------------------------------------------------

@pytest.mark.slow
def test_workers_learn_and_embed_over_tcp_with_an_acl_user(tcp_twin):
    outputs = learn_and_embed_through(tcp_twin, "I keep the spare bicycle tyres in the cellar behind the boiler.")
    assert_learned_and_embedded(tcp_twin, "spare bicycle tyres")
    assert all(PASSWORD not in out and "Traceback" not in out for out in outputs)
    client = open_redis(tcp_twin, connect_timeout_s=2, answer_timeout_s=5)
    assert client.llen("rq:queue:twin-learn") == 0 and client.llen("rq:queue:twin-embed") == 0
    client.close()
    admin = Redis(host="127.0.0.1", port=int(tcp_twin.redis_url.rsplit(":", 1)[1].split("/")[0]), username=ADMIN[0],
                  password=ADMIN[1])
    assert admin.acl_log() == []  # the README's ACL gives the workers every command and key they used
    admin.close()


def test_a_wrong_password_stops_the_worker_at_once_with_one_line(tcp_twin, monkeypatch):
    write_env_file(tcp_twin, {"TWIN_REDIS_PASSWORD": "not-the-password"})
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "twin.workers", "learn", "--burst"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    took_s = time.monotonic() - started
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out  # a setting to fix: the supervisor and systemd do not restart it
    assert took_s < 15, took_s  # not half a minute of retried logins
    assert "refused the login" in out and "TWIN_REDIS_PASSWORD" in out
    assert "Traceback" not in out and "not-the-password" not in out and PASSWORD not in out
    assert len([line for line in out.splitlines() if "refused the login" in line]) == 1
    again = subprocess.run([sys.executable, "-m", "twin.workers", "learn", "--burst"], cwd=ROOT, capture_output=True,
                           text=True, timeout=60)
    assert again.returncode == 2 and len([line for line in (again.stdout + again.stderr).splitlines()
                                          if "refused the login" in line]) == 1
    with Store(tcp_twin.db_path) as store:
        degraded = diary_lines(Activity(store, tcp_twin.being), "degraded")
    assert len([line for line in degraded if "refused the login" in line]) == 1  # said once, not per restart


def test_status_says_the_login_was_refused_without_the_password(tcp_twin):
    write_env_file(tcp_twin, {"TWIN_REDIS_PASSWORD": "not-the-password"})
    proc = subprocess.run([sys.executable, "-m", "twin", "status", "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "refused the login" in out and "not-the-password" not in out and "Traceback" not in out
    import json

    report = json.loads(proc.stdout)
    assert report["redis"] == {"url": tcp_twin.redis_url, "private": False, "tls": False, "user": USER}


@pytest.mark.daemon
def test_twin_up_with_a_wrong_password_stops_with_exit_code_2(tcp_twin, monkeypatch):
    write_env_file(tcp_twin, {"TWIN_REDIS_PASSWORD": "not-the-password"})
    monkeypatch.setenv("TWIN_API_ENABLED", "false")
    proc = subprocess.run([sys.executable, "-m", "twin", "up"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out  # RestartPreventExitStatus=2: systemd does not loop on it
    assert "refused the login" in out and "Traceback" not in out and "not-the-password" not in out
    with Store(tcp_twin.db_path) as store:
        degraded = diary_lines(Activity(store, tcp_twin.being), "degraded")
    assert any(line.startswith("twin cannot start: Redis at") for line in degraded)


@pytest.mark.slow
def test_workers_learn_and_embed_over_tls_with_a_client_certificate(twin_paths, tmp_path, monkeypatch):
    pytest.importorskip("cryptography", reason="the cryptography package makes the test's CA")
    from tls_certs import make_tls_files

    if not redis_supports_tls(tmp_path / "probe"):
        pytest.skip("this redis-server was built without TLS (no --tls-port)")
    tls = make_tls_files(tmp_path / "tls")
    proc, port = start_redis(tmp_path / "redis", "--tls-port", "0", "--tls-cert-file", str(tls.server_cert),
                             "--tls-key-file", str(tls.server_key), "--tls-ca-cert-file", str(tls.ca),
                             "--tls-auth-clients", "yes")
    try:
        for key, value in {"TWIN_REDIS_URL": f"rediss://localhost:{port}/0", "TWIN_REDIS_USERNAME": USER,
                           "TWIN_REDIS_TLS_CA_FILE": str(tls.ca), "TWIN_REDIS_TLS_CERT_FILE": str(tls.client_cert),
                           "TWIN_REDIS_TLS_KEY_FILE": str(tls.client_key)}.items():
            monkeypatch.setenv(key, value)
        write_env_file(twin_paths, {"TWIN_REDIS_PASSWORD": PASSWORD})
        settings = load_settings()
        outputs = learn_and_embed_through(settings, "Our allotment plot number is 41, next to the blue water tank.")
        assert_learned_and_embedded(settings, "allotment")
        assert all(PASSWORD not in out for out in outputs)
        plain = Redis(host="127.0.0.1", port=port, username=USER, password=PASSWORD, socket_timeout=2)
        with pytest.raises(Exception):  # noqa: B017 - the port speaks TLS only: plain RESP gets nowhere
            plain.ping()
        plain.close()
        other = make_tls_files(tmp_path / "other", ca_name="another CA")  # a server this CA did not sign
        monkeypatch.setenv("TWIN_REDIS_TLS_CA_FILE", str(other.ca))
        started = time.monotonic()
        refused = subprocess.run([sys.executable, "-m", "twin.workers", "learn", "--burst"], cwd=ROOT,
                                 capture_output=True, text=True, timeout=60)
        out = refused.stdout + refused.stderr
        assert refused.returncode == 2 and time.monotonic() - started < 15, out  # not retried: a setting to fix
        assert "does not trust" in out and "TWIN_REDIS_TLS_CA_FILE" in out and "Traceback" not in out
    finally:
        stop_redis(proc)


def redis_supports_tls(tmp: Path) -> bool:
    """Whether this redis-server takes `--tls-port` (Debian's is built with TLS; a build without it refuses the
    option at start)."""
    tmp.mkdir(parents=True, exist_ok=True)
    probe = subprocess.run([shutil.which("redis-server") or "redis-server", "--port", "0", "--tls-port", "0",
                            "--save", "", "--dir", str(tmp)], capture_output=True, text=True, timeout=30)
    return "Bad directive" not in probe.stdout + probe.stderr  # else: "Configured to not listen anywhere, exiting."


# -- settings ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("host", ["10.20.30.40", "redis.home.arpa", "[2001:db8::7]", "192.168.1.9"])
def test_plain_redis_to_another_host_is_refused_unless_allowed(twin_paths, monkeypatch, host):
    monkeypatch.setenv("TWIN_REDIS_URL", f"redis://{USER}:{PASSWORD}@{host}:6379/0")
    with pytest.raises(SettingsError) as refused:
        load_settings()
    message = str(refused.value)
    assert "TWIN_REDIS_ALLOW_PLAINTEXT" in message and "rediss://" in message and host in message
    assert PASSWORD not in message
    monkeypatch.setenv("TWIN_REDIS_ALLOW_PLAINTEXT", "true")
    assert load_settings().redis_url.endswith(f"@{host}:6379/0")


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6390/0", "redis://localhost:6390/2", "redis://[::1]:6390",
                                 "redis://127.3.2.1:7000/0", "rediss://redis.home.arpa:6380/0",
                                 "unix:///run/redis/redis.sock?db=0"])
def test_loopback_tls_and_unix_urls_need_no_opt_in(twin_paths, monkeypatch, url):
    monkeypatch.setenv("TWIN_REDIS_URL", url)
    assert load_settings().redis_url == url


@pytest.mark.parametrize("toml", [f'redis_password = "{PASSWORD}"\n',
                                  f'redis_url = "redis://{USER}:{PASSWORD}@127.0.0.1:6390/0"\n',
                                  f'redis_url = "redis://127.0.0.1:6390/0?password={PASSWORD}"\n'])
def test_a_redis_password_in_twin_toml_is_refused(twin_paths, monkeypatch, tmp_path, toml):
    config = tmp_path / "twin.toml"
    config.write_text(toml)
    config.chmod(0o600)
    monkeypatch.setenv("TWIN_CONFIG", str(config))
    with pytest.raises(SettingsError) as refused:
        load_settings()
    assert "env file" in str(refused.value) and "TWIN_REDIS_PASSWORD" in str(refused.value)
    assert PASSWORD not in str(refused.value)


def test_the_password_from_the_env_file_reaches_no_printed_url(twin_paths, monkeypatch):
    monkeypatch.setenv("TWIN_REDIS_URL", "rediss://redis.home.arpa:6380/0")
    monkeypatch.setenv("TWIN_REDIS_USERNAME", USER)
    write_env_file(twin_paths, {"TWIN_REDIS_PASSWORD": PASSWORD})
    settings = load_settings()
    assert settings.redis_password.get_secret_value() == PASSWORD
    assert PASSWORD not in repr(settings) and PASSWORD not in settings.redis_shown_url
    assert PASSWORD in settings.secret_values  # the log filter scrubs it from every record


def test_a_password_in_the_url_is_redacted_in_logs_and_settings_errors(twin_paths, monkeypatch):
    monkeypatch.setenv("TWIN_REDIS_URL", f"rediss://{USER}:{PASSWORD}@redis.home.arpa:6380/0")
    monkeypatch.setenv("TWIN_REDIS_USERNAME", "someone")
    with pytest.raises(SettingsError) as refused:  # the user given twice
        load_settings()
    assert PASSWORD not in str(refused.value)
    monkeypatch.delenv("TWIN_REDIS_USERNAME")
    settings = load_settings()
    assert settings.redis_shown_url == f"rediss://{USER}:***@redis.home.arpa:6380/0"
    assert PASSWORD in settings.secret_values


@pytest.mark.parametrize(("url", "shown"), [
    ("redis://u:p4ss@h:1/0", "redis://u:***@h:1/0"),
    ("rediss://:p%40ss%2Fw@h/3", "rediss://:***@h/3"),
    ("redis://u:p@ss@h:2/0", "redis://u:***@h:2/0"),
    ("redis://h:6379/0?password=abc&db=1", "redis://h:6379/0?password=***&db=1"),
    ("redis://justuser@h/0", "redis://justuser@h/0"),
    ("unix:///run/r.sock?db=0", "unix:///run/r.sock?db=0"),
])
def test_shown_url_hides_every_form_of_password(url, shown):
    assert shown_url(url) == shown


@pytest.mark.parametrize(("variables", "needle"), [
    ({"TWIN_REDIS_URL": "redis://127.0.0.1:6390/0", "TWIN_REDIS_TLS_CA_FILE": "{ca}"}, "need a rediss://"),
    ({"TWIN_REDIS_URL": "rediss://h:6380/0", "TWIN_REDIS_TLS_CERT_FILE": "{ca}"}, "go together"),
    ({"TWIN_REDIS_URL": "rediss://h:6380/0", "TWIN_REDIS_TLS_CA_FILE": "{missing}"}, "is not a file"),
    ({"TWIN_REDIS_USERNAME": USER}, "set TWIN_REDIS_URL too"),
    ({"TWIN_REDIS_URL": f"redis://:{PASSWORD}@127.0.0.1:6390/0", "TWIN_REDIS_PASSWORD": PASSWORD}, "give it once"),
])
def test_inconsistent_redis_settings_are_refused_with_a_reason(twin_paths, monkeypatch, tmp_path, variables, needle):
    ca = tmp_path / "ca.pem"
    ca.write_text("not checked here\n")
    for key, value in variables.items():
        monkeypatch.setenv(key, value.format(ca=ca, missing=tmp_path / "nope.pem"))
    with pytest.raises(SettingsError, match=needle) as refused:
        load_settings()
    assert PASSWORD not in str(refused.value)


def test_a_worker_on_another_store_leaves_the_work_alone(tcp_twin, tmp_path, monkeypatch):
    from twin.store.state import store_identity
    from twin.workers.bus import LEARN_QUEUE, Bus

    client = open_redis(tcp_twin, connect_timeout_s=2, answer_timeout_s=5)
    with Store(tcp_twin.db_path) as store:
        Bus(client).bind_store(store_identity(store), owner=True)  # what `twin up` does at start
        push_text(store, client, tcp_twin.being, "The boat's winter mooring is at the north pier, berth 12.", "muse")
    monkeypatch.setenv("TWIN_DATA_DIR", str(tmp_path / "another-machine"))  # its own store, the same Redis
    proc = subprocess.run([sys.executable, "-m", "twin.workers", "learn", "--burst"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "belongs to another store" in out and "Traceback" not in out, out
    assert client.llen(f"rq:queue:{LEARN_QUEUE}") == 1  # the job waits for a worker on the owner's store
    monkeypatch.setenv("TWIN_DATA_DIR", str(tcp_twin.data_dir))
    run_worker_process("learn")
    client.close()
    with Store(tcp_twin.db_path) as store:
        assert any("north pier" in m.content for m in store.list_memories(tcp_twin.being))


def test_a_store_keeps_one_id_and_another_store_has_its_own(tmp_path):
    from twin.store.state import store_identity

    with Store(tmp_path / "a.db") as a, Store(tmp_path / "a.db") as same, Store(tmp_path / "b.db") as b:
        first = store_identity(a)
        assert store_identity(same) == first == store_identity(a)  # another connection, a second ask: the same
        assert store_identity(b) != first
