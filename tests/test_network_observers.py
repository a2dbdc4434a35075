"""The two observers of tests/test_network.py, on inputs written here: the strace log reader (syscall_trace), the
loopback packet reader (netns_capture), the policy that judges what they saw, and each observer live on a process
that tries to reach outside (strace fails those calls before they run; in the namespace nothing can leave)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
from pathlib import Path

import netns_capture
import pytest
from syscall_trace import Contact, Write, dns_query_name, read_trace, strace_prefix
from test_network import outside_contacts, outside_writes

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent


def dns_query(name: str, ident: int = 0x1234) -> bytes:
    """A one-question A query for `name`, as a resolver sends it."""
    labels = b"".join(bytes([len(part)]) + part.encode() for part in name.split("."))
    return struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack("!HH", 1, 1)


def escaped(data: bytes) -> str:
    """`data` as strace prints a string body: printable ASCII as is, the rest as octal escapes (three digits
    when a digit follows, so the escape ends where it should)."""
    out = []
    for at, byte in enumerate(data):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif 32 <= byte < 127:
            out.append(char)
        else:
            digit_next = at + 1 < len(data) and chr(data[at + 1]).isdigit()
            out.append(f"\\{byte:03o}" if digit_next else f"\\{byte:o}")
    return "".join(out)


# -- the strace log reader ------------------------------------------------------------------------------------
def test_a_dns_query_on_a_connected_socket_is_named_with_its_program() -> None:
    query = escaped(dns_query("telemetry.vendor.example"))
    log = "\n".join([
        '100 execve("/opt/venv/bin/python", ["/opt/venv/bin/python", "-m", "twin.workers", "embed"], '
        "0x7ffd /* 40 vars */) = 0",
        "100 clone3({flags=CLONE_VM|CLONE_THREAD, child_tid=0x7f} => {parent_tid=[101]}, 88) = 101",
        '101 connect(7<socket:[55]>, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such'
        " file or directory)",
        '101 connect(7<socket:[56]>, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.53")}, 16 '
        "<unfinished ...>",
        '100 sendto(3<socket:[40]>, "*1\\r\\n$4\\r\\nPING\\r\\n", 14, 0, NULL, 0) = 14',
        "101 <... connect resumed>)            = 0",
        f'101 sendmmsg(7<socket:[56]>, [{{msg_hdr={{msg_name=NULL, msg_namelen=0, msg_iov=[{{iov_base="{query}", '
        "iov_len=42}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, msg_len=42}], 1, MSG_NOSIGNAL) = 1",
    ])
    trace = read_trace(log, "/srv")
    assert trace.lines == 6
    assert [(c.pid, c.program, c.family, c.address, c.port, c.dns_name) for c in trace.contacts] == [
        (101, "python -m twin.workers embed", "AF_UNIX", "/var/run/nscd/socket", None, ""),
        (101, "python -m twin.workers embed", "AF_INET", "10.0.0.53", 53, "telemetry.vendor.example"),
    ]
    assert "DNS query: telemetry.vendor.example" in trace.contacts[1].describe()


def test_unconnected_sends_binds_ipv6_and_abstract_sockets_are_all_seen() -> None:
    query = escaped(dns_query("a.b.example"))
    log = "\n".join([
        f'7 sendto(5<socket:[1]>, "{query}", 29, MSG_NOSIGNAL, {{sa_family=AF_INET6, sin6_port=htons(53), '
        'sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:db8::53", &sin6_addr), sin6_scope_id=0}, 28) = 29',
        '7 connect(6<socket:[2]>, {sa_family=AF_UNIX, sun_path=@"/tmp/.X11-unix/X0"}, 20) = 0',
        '7 bind(8<socket:[3]>, {sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("0.0.0.0")}, 16) = 0',
        "7 sendmsg(9<socket:[4]>, {msg_name={sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, msg_namelen=12, "
        'msg_iov=[{iov_base="\\24\\0", iov_len=2}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 20',
        "not a syscall line at all",
    ])
    contacts = read_trace(log, "/", program="tool").contacts
    assert [(c.call, c.family, c.address, c.port, c.dns_name, c.program) for c in contacts] == [
        ("sendto", "AF_INET6", "2001:db8::53", 53, "a.b.example", "tool"),
        ("connect", "AF_UNIX", "@/tmp/.X11-unix/X0", None, "", "tool"),
        ("bind", "AF_INET", "0.0.0.0", 8080, "", "tool"),
        ("sendmsg", "AF_NETLINK", "", None, "", "tool"),
    ]


def test_writes_are_resolved_against_each_process_cwd_and_reads_are_not_writes() -> None:
    log = "\n".join([
        '50 chdir("/data/redis") = 0',
        "50 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD, child_tidptr=0x7f) = 51",
        '51 mkdir("appendonlydir", 0755) = 0',
        '51 rename("temp-1.aof", "appendonlydir/base.rdb") = 0',
        '50 openat(AT_FDCWD</data/redis>, "/etc/hosts", O_RDONLY|O_CLOEXEC) = 3</etc/hosts>',
        '50 openat(AT_FDCWD</data/redis>, "log", O_WRONLY|O_CREAT|O_APPEND, 0644) = 4</data/redis/log>',
        '50 openat(AT_FDCWD</data/redis>, "/root/.cache/x/deviceid", O_RDWR|O_CREAT, 0600 <unfinished ...>',
        "50 <... openat resumed>) = 5</root/.cache/x/deviceid>",
        '50 openat(AT_FDCWD</data/redis>, "/nope/file", O_WRONLY|O_CREAT, 0600) = -1 ENOENT (No such file)',
        '50 mkdirat(AT_FDCWD</home/o>, ".cache", 0700) = 0',
        '50 symlinkat("target", 6</home/o/.cache>, "link") = 0',
    ])
    writes = read_trace(log, "/").writes
    assert [(w.pid, w.call, w.path) for w in writes] == [
        (51, "mkdir", "/data/redis/appendonlydir"),
        (51, "rename", "/data/redis/appendonlydir/base.rdb"),
        (50, "openat", "/data/redis/log"),
        (50, "openat", "/root/.cache/x/deviceid"),
        (50, "mkdirat", "/home/o/.cache"),
        (50, "symlinkat", "/home/o/.cache/link"),
    ]


@pytest.mark.parametrize("payload, name", [
    (dns_query("mobile.events.data.microsoft.com"), "mobile.events.data.microsoft.com"),
    (struct.pack("!H", 30) + dns_query("x.example"), "x.example"),  # DNS over TCP: a length prefix
    (dns_query("cut.off.example")[:16], "cut"),  # strace cut the payload: what is there
    (b"*1\r\n$4\r\nPING\r\n", ""),
    (b"\0" * 40, ""),
])
def test_dns_query_name(payload: bytes, name: str) -> None:
    assert dns_query_name(payload) == name


# -- the packet reader ----------------------------------------------------------------------------------------
def _frame(ethertype: int, packet: bytes) -> bytes:
    return b"\0" * 12 + struct.pack("!H", ethertype) + packet


def _ipv4(protocol: int, destination: str, segment: bytes) -> bytes:
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(segment), 0, 0, 64, protocol, 0,
                         socket.inet_aton("127.0.0.1"), socket.inet_aton(destination))
    return _frame(0x0800, header + segment)


def _tcp(port: int, flags: int) -> bytes:
    return struct.pack("!HHIIBBHHH", 40000, port, 0, 0, 0x50, flags, 65535, 0, 0)


def _udp(port: int, data: bytes) -> bytes:
    return struct.pack("!HHHH", 40000, port, 8 + len(data), 0) + data


def test_contact_of_frame() -> None:
    syn = netns_capture.contact_of_frame(_ipv4(6, "93.184.216.34", _tcp(443, 0x02)))
    assert (syn.call, syn.family, syn.address, syn.port) == ("tcp-syn", "AF_INET", "93.184.216.34", 443)
    assert netns_capture.contact_of_frame(_ipv4(6, "127.0.0.1", _tcp(443, 0x12))) is None  # SYN-ACK: an answer
    assert netns_capture.contact_of_frame(_ipv4(6, "127.0.0.1", _tcp(443, 0x10))) is None  # data on a connection
    dns = netns_capture.contact_of_frame(_ipv4(17, "10.255.255.53", _udp(53, dns_query("x.example"))))
    assert (dns.call, dns.address, dns.port, dns.dns_name) == ("udp", "10.255.255.53", 53, "x.example")
    ipv6 = (struct.pack("!IHBB", 0x60000000, 8 + 4, 17, 64) + socket.inet_pton(socket.AF_INET6, "::1")
            + socket.inet_pton(socket.AF_INET6, "2001:db8::1") + _udp(123, b"ntp?"))
    v6 = netns_capture.contact_of_frame(_frame(0x86DD, ipv6))
    assert (v6.family, v6.address, v6.port) == ("AF_INET6", "2001:db8::1", 123)
    assert netns_capture.contact_of_frame(_frame(0x0806, b"\0" * 28)) is None  # ARP
    assert netns_capture.contact_of_frame(b"short") is None


# -- the policy -----------------------------------------------------------------------------------------------
def _contact(call: str, family: str, address: str, port: int | None) -> Contact:
    return Contact(1, "p", call, family, address, port, "0")


def test_only_twins_redis_socket_and_the_configured_ports_are_allowed() -> None:
    run_dir = Path("/run/user/1000/twin")
    allowed = [_contact("connect", "AF_UNIX", "/run/user/1000/twin/redis.sock", None),
               _contact("bind", "AF_UNIX", "/run/user/1000/twin/redis.sock", None),
               _contact("bind", "AF_UNIX", "", None),
               _contact("connect", "AF_INET", "127.0.0.1", 8001),
               _contact("tcp-syn", "AF_INET", "127.0.0.1", 8001),
               _contact("bind", "AF_INET6", "::1", 0),
               _contact("sendmsg", "AF_NETLINK", "", None),
               _contact("connect", "AF_UNSPEC", "", None)]
    refused = [_contact("connect", "AF_UNIX", "/var/run/nscd/socket", None),
               _contact("connect", "AF_UNIX", "/run/user/1000/twin-other/redis.sock", None),
               _contact("connect", "AF_UNIX", "@/tmp/.X11-unix/X0", None),
               _contact("connect", "AF_INET", "127.0.0.1", 6379),
               _contact("connect", "AF_INET", "10.255.255.53", 53),
               _contact("udp", "AF_INET", "8.8.8.8", 53),
               _contact("connect", "AF_INET6", "2001:db8::1", 443),
               _contact("bind", "AF_INET", "0.0.0.0", 0),
               _contact("bind", "AF_INET", "127.0.0.1", 8765)]  # a listening port, even on loopback
    assert outside_contacts(allowed + refused, {8001}, [run_dir]) == refused


def test_writes_outside_the_twin_dirs_are_found() -> None:
    dirs = [Path("/d/data"), Path("/d/config"), Path("/d/run")]
    writes = [Write(1, "p", "openat", path) for path in (
        "/d/data/twin.db", "/d/run/redis.sock", "/dev/null", "/srv/twin/twin/__pycache__/cli.cpython-311.pyc",
        "/d/home/.cache/Microsoft/deviceid", "/d/data2/x", "/tmp/history-1/History")]
    assert [w.path for w in outside_writes(writes, dirs)] == [
        "/d/home/.cache/Microsoft/deviceid", "/d/data2/x", "/tmp/history-1/History"]


# -- the observers, live ----------------------------------------------------------------------------------------
def reach_out(cache: Path) -> str:
    """Code of a process that tries to reach 192.0.2.1:443 and to ask 192.0.2.53 for `phone.home.example`
    (RFC 5737 documentation addresses), then writes the file `cache`."""
    return ("import socket\n"
            "tcp = socket.socket(); tcp.settimeout(1)\n"
            "try: tcp.connect(('192.0.2.1', 443))\n"
            "except OSError: pass\n"
            "udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp.settimeout(1)\n"
            f"try: udp.sendto({dns_query('phone.home.example')!r}, ('192.0.2.53', 53))\n"
            "except OSError: pass\n"
            f"open({str(cache)!r}, 'w').write('device id')\n")


def test_strace_sees_a_process_reach_out_and_write(tmp_path: Path) -> None:
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed (scripts/test.sh installs it)")
    log, cache = tmp_path / "reach.trace", tmp_path / ".cache" / "deviceid"
    cache.parent.mkdir()
    # the calls are traced but fail before they run: nothing leaves even on a machine with a network
    prefix = [*strace_prefix(strace, log)[:-1], "-e", "inject=connect,sendto:error=ENETUNREACH", "--"]
    done = subprocess.run([*prefix, sys.executable, "-c", reach_out(cache)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    trace = read_trace(log.read_text(), str(ROOT))
    outside = {(c.address, c.port, c.dns_name) for c in outside_contacts(trace.contacts, set(), [])}
    assert {("192.0.2.1", 443, ""), ("192.0.2.53", 53, "phone.home.example")} <= outside
    assert str(cache) in [w.path for w in outside_writes(trace.writes, [tmp_path / "data"])]


def test_the_namespace_sees_a_process_reach_out(tmp_path: Path) -> None:
    prefix, problem = netns_capture.unshare_prefix()
    if not prefix:
        pytest.skip(f"no network namespace: {problem}")
    code = ("import json, sys, time\n"
            f"sys.path.insert(0, {str(TESTS)!r})\n"
            "import netns_capture\n"
            "netns_capture.prepare()\n"
            "capture = netns_capture.PacketCapture().start()\n"
            f"exec({reach_out(tmp_path / 'deviceid')!r})\n"
            "time.sleep(0.5)\n"
            "print(json.dumps([[c.call, c.address, c.port, c.dns_name] for c in capture.stop()]))\n")
    env = dict(os.environ, **{netns_capture.PARENT_NAMESPACE_ENV: netns_capture.current_namespace()})
    done = subprocess.run([*prefix, sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = {tuple(c) for c in json.loads(done.stdout.strip().splitlines()[-1])}
    assert {("tcp-syn", "192.0.2.1", 443, ""), ("udp", "192.0.2.53", 53, "phone.home.example")} <= seen


def test_the_namespace_refuses_to_change_routes_outside_one() -> None:
    env = dict(os.environ, **{netns_capture.PARENT_NAMESPACE_ENV: netns_capture.current_namespace()})
    done = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(TESTS)!r}); "
                           "import netns_capture; netns_capture.prepare()"], env=env, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode != 0 and "refusing to change routes" in done.stderr
