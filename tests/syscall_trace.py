"""What a process tree did on the network and on disk, read from an `strace -f` log (used by tests only).

`strace_prefix(log)` is the command prefix that traces a command and all its children into `log`;
`read_trace(text, cwd)` turns that log into the `Contact`s (every socket address a process connected to, bound,
or sent to) and the `Write`s (every file or directory a process created, opened for writing, or renamed into
place). A socket that sends without an address (`sendto(fd, ..., NULL, 0)`) goes where its `connect` said, so
the socket addresses in these calls are every destination the tree reached; a DNS query's name is decoded from
the payload sent on a socket connected to port 53.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

NETWORK_CALLS = ("connect", "bind", "sendto", "sendmsg", "sendmmsg")
"""Every syscall that names a socket address a process talks to or listens on."""
PROCESS_CALLS = ("execve", "clone", "clone3", "fork", "vfork", "chdir")
"""Traced to name each pid by its program and resolve relative paths."""
WRITE_CALLS = ("open", "openat", "creat", "mkdir", "mkdirat", "rename", "renameat", "renameat2", "link", "linkat",
               "symlink", "symlinkat")
"""Every syscall that creates a file or directory or opens one for writing."""
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")
DNS_PORT = 53

_LINE = re.compile(r"^(?P<pid>\d+) +(?P<call>\w+)\((?P<args>.*)\) += (?P<result>.*)$")
_UNFINISHED = re.compile(r"^(?P<pid>\d+) +(?P<head>.*) <unfinished \.\.\.>$")
_RESUMED = re.compile(r"^(?P<pid>\d+) +<\.\.\. (?P<call>\w+) resumed>(?P<tail>.*)$")
_SOCKADDR = re.compile(r"\{sa_family=(?P<family>AF_\w+)(?P<fields>[^{}]*)\}")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_FD = re.compile(r"^(?P<fd>AT_FDCWD|-?\d+)(?:<(?P<path>[^>]*)>)?")
_RESULT_PATH = re.compile(r"^(?P<fd>\d+)<(?P<path>[^>]*)>")
_ESCAPE = re.compile(rb"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)", re.DOTALL)
_SIMPLE_ESCAPES = {b"n": b"\n", b"t": b"\t", b"r": b"\r", b"v": b"\v", b"f": b"\f", b'"': b'"', b"\\": b"\\"}


def strace_prefix(strace: str, log: Path) -> list[str]:
    """The argv prefix that runs a command under `strace` (its path) with every child followed and these calls
    written to `log`: `-f` children, `-qq` no attach/exit lines, `-s 256` payloads long enough for a DNS name,
    `-y` the path behind each fd, `--seccomp-bpf` stops only at traced calls (the daemon runs at near speed)."""
    calls = ",".join(NETWORK_CALLS + PROCESS_CALLS + WRITE_CALLS)
    return [strace, "-f", "-qq", "-s", "256", "-y", "--seccomp-bpf", "-e", "signal=none", "-e", f"trace={calls}",
            "-o", str(log), "--"]


@dataclass(frozen=True)
class Contact:
    """One socket address used by one call. `family` is strace's (`AF_INET`, `AF_INET6`, `AF_UNIX`,
    `AF_NETLINK`, …); `address` an IP, a unix path (`@name` for an abstract socket) or "" for families without
    one; `port` None outside AF_INET/AF_INET6; `result` strace's (`0`, `-1 ENOENT (…)`); `dns_name` the query
    names sent on a socket connected to port 53, comma-separated ("" when none was decoded)."""

    pid: int
    program: str
    call: str
    family: str
    address: str
    port: int | None
    result: str
    dns_name: str = ""

    @property
    def is_loopback(self) -> bool:
        """True for 127.0.0.0/8 and ::1 (and IPv4-mapped loopback)."""
        return self.address.startswith(("127.", "::ffff:127.")) or self.address == "::1"

    def describe(self) -> str:
        """One line, e.g. `pid 12 (python -m twin.workers embed) connect AF_INET 10.0.0.53:53 -> 0 [DNS query: x]`."""
        where = f"{self.address}:{self.port}" if self.port is not None else self.address or "(no address)"
        dns = f" [DNS query: {self.dns_name}]" if self.dns_name else ""
        return f"pid {self.pid} ({self.program}) {self.call} {self.family} {where} -> {self.result}{dns}"


@dataclass(frozen=True)
class Write:
    """A file or directory created, opened for writing or renamed into place: absolute `path`, by `call`."""

    pid: int
    program: str
    call: str
    path: str

    def describe(self) -> str:
        return f"pid {self.pid} ({self.program}) {self.call} {self.path}"


@dataclass
class Trace:
    """Everything `read_trace` found; `lines` counts the complete syscall lines read."""

    contacts: list[Contact]
    writes: list[Write]
    lines: int


def read_trace(text: str, cwd: str, program: str = "?") -> Trace:
    """Parse an `strace_prefix` log. `cwd` is the traced command's working directory and `program` its name
    until its first `execve` (children inherit both; `chdir` and `execve` update them). Lines split by
    `<unfinished ...>` / `<... resumed>` are joined first; lines of other shapes are ignored."""
    state = _State(cwd, program)
    lines = 0
    for line in _joined(text.splitlines()):
        match = _LINE.match(line)
        if match is None:
            continue
        lines += 1
        state.take(int(match["pid"]), match["call"], match["args"], match["result"].strip())
    return Trace(state.contacts, state.writes, lines)


def _joined(lines: list[str]):
    """Complete syscall lines: each `<unfinished ...>` head joined with its pid's `<... call resumed>` tail."""
    pending: dict[int, str] = {}
    for line in lines:
        if (head := _UNFINISHED.match(line)) is not None:
            pending[int(head["pid"])] = f"{head['pid']} {head['head']}"
        elif (tail := _RESUMED.match(line)) is not None:
            start = pending.pop(int(tail["pid"]), None)
            if start is not None:
                yield start + tail["tail"]
        else:
            yield line


class _State:
    """Per-pid program names and working directories, open DNS sockets, and what was found so far."""

    def __init__(self, cwd: str, program: str):
        self.programs: dict[int, str] = {}
        self.cwds: dict[int, str] = {}
        self.first = (program, cwd)
        self.dns_sockets: dict[tuple[int, str], int] = {}  # (pid, fd) -> index in contacts
        self.contacts: list[Contact] = []
        self.writes: list[Write] = []

    def _program(self, pid: int) -> str:
        return self.programs.setdefault(pid, self.first[0])

    def _cwd(self, pid: int) -> str:
        return self.cwds.setdefault(pid, self.first[1])

    def take(self, pid: int, call: str, args: str, result: str) -> None:
        ok = result[:1].isdigit()
        if call in ("clone", "clone3", "fork", "vfork") and ok:
            child = int(result.split()[0])
            self.programs[child], self.cwds[child] = self._program(pid), self._cwd(pid)
        elif call == "execve" and ok:
            argv = _STRING.findall(args.split("[", 1)[1]) if "[" in args else []
            words = [_decode(a).decode("utf-8", "replace") for a in argv[:4]]
            self.programs[pid] = " ".join([os.path.basename(words[0]), *words[1:]]) if words else "?"
        elif call == "chdir" and ok:
            self.cwds[pid] = os.path.normpath(os.path.join(self._cwd(pid), _first_string(args)))
        elif call in NETWORK_CALLS:
            self._network(pid, call, args, result)
        elif call in WRITE_CALLS and ok:
            self._write(pid, call, args, result)

    def _network(self, pid: int, call: str, args: str, result: str) -> None:
        fd = _FD.match(args)
        key = (pid, fd["fd"] if fd else "?")
        if call != "connect" and key in self.dns_sockets:  # a payload on a socket connected to port 53
            self._name_query(key, args)
        for match in _SOCKADDR.finditer(args):
            contact = _contact(pid, self._program(pid), call, match["family"], match["fields"], result)
            self.contacts.append(contact)
            if contact.port == DNS_PORT:
                self.dns_sockets[key] = len(self.contacts) - 1
                if call != "connect":
                    self._name_query(key, args)
            elif call == "connect":
                self.dns_sockets.pop(key, None)  # the fd was reused for something else

    def _name_query(self, key: tuple[int, str], args: str) -> None:
        names = [n for s in _STRING.findall(args) if (n := dns_query_name(_decode(s)))]
        if names:
            index = self.dns_sockets[key]
            known = [n for n in self.contacts[index].dns_name.split(",") if n]
            merged = ",".join(dict.fromkeys(known + names))
            self.contacts[index] = replace(self.contacts[index], dns_name=merged)

    def _write(self, pid: int, call: str, args: str, result: str) -> None:
        if call in ("open", "openat", "creat"):
            flags = args.split(", ")
            if call != "creat" and not any(f in part for part in flags[1:] for f in WRITE_FLAGS):
                return
            opened = _RESULT_PATH.match(result)
            path = opened["path"] if opened else self._resolve(pid, call, args, 0)
        else:
            path = self._resolve(pid, call, args, 0 if call in ("mkdir", "mkdirat") else -1)
        self.writes.append(Write(pid, self._program(pid), call, path))

    def _resolve(self, pid: int, call: str, args: str, which: int) -> str:
        """The absolute form of the `which`-th path argument (relative to its dirfd or the pid's cwd)."""
        strings = _STRING.findall(args)
        path = _decode(strings[which]).decode("utf-8", "replace") if strings else "?"
        base = self._cwd(pid)
        if call.endswith("at") or call in ("openat", "renameat2"):
            fds = re.findall(r"(?:^|, )(?:AT_FDCWD|-?\d+)<([^>]*)>", args)
            if fds:
                base = fds[which if which >= 0 and which < len(fds) else -1]
        return os.path.normpath(os.path.join(base, path))


def _contact(pid: int, program: str, call: str, family: str, fields: str, result: str) -> Contact:
    port = re.search(r"sin6?_port=htons\((\d+)\)", fields)
    if family == "AF_INET":
        address = re.search(r'inet_addr\("([^"]*)"\)', fields)
    elif family == "AF_INET6":
        address = re.search(r'inet_pton\(AF_INET6, "([^"]*)"', fields)
    elif family == "AF_UNIX":
        address = re.search(r'sun_path=(@?"(?:[^"\\]|\\.)*")', fields)
    else:
        address = None
    text = address.group(1) if address else ""
    if family == "AF_UNIX" and text:
        text = ("@" if text.startswith("@") else "") + _decode(text.lstrip("@")[1:-1]).decode("utf-8", "replace")
    return Contact(pid, program, call, family, text, int(port.group(1)) if port else None, result)


def _first_string(args: str) -> str:
    strings = _STRING.findall(args)
    return _decode(strings[0]).decode("utf-8", "replace") if strings else ""


def _decode(escaped: str) -> bytes:
    """The bytes of a C-escaped strace string body (`\\t`, `\\"`, octal `\\123`, hex `\\x41`)."""
    def one(match: re.Match) -> bytes:
        code = match.group(1)
        if code[:1] == b"x" and len(code) == 3:
            return bytes([int(code[1:], 16)])
        if code[:1].isdigit():
            return bytes([int(code, 8) & 0xFF])
        return _SIMPLE_ESCAPES.get(code, code)
    return _ESCAPE.sub(one, escaped.encode("utf-8", "surrogateescape"))


def dns_query_name(payload: bytes) -> str:
    """The question name of a DNS query message (UDP, or TCP with its 2-byte length prefix), "" when `payload`
    is not one. Only as much of the name as the payload holds is read (strace cuts payloads at `-s`)."""
    for start in (12, 14):
        if payload[start - 8:start - 6] != b"\x00\x01":  # QDCOUNT 1: one question
            continue
        labels, at = [], start
        while at < len(payload):
            size = payload[at]
            if size == 0:
                break
            label = payload[at + 1:at + 1 + size]
            if size > 63 or not label or not all(32 < c < 127 for c in label):
                labels = []
                break
            labels.append(label.decode("ascii"))
            at += 1 + size
        if labels:
            return ".".join(labels)
    return ""
