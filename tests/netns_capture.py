"""A private network namespace in which every packet is seen (used by tests only, where strace is missing).

Inside `unshare -n` (or `-rn` without root) only loopback exists. `prepare()` brings it up and routes every
IPv4 and IPv6 destination to it (`ip route add local default dev lo`): a connection to any outside address or
a query to the resolver of /etc/resolv.conf then becomes a packet on `lo` (answered by a reset or an ICMP
error) instead of failing before it is sent. `PacketCapture` reads `lo` with an AF_PACKET socket and records
each TCP SYN and UDP datagram as a `syscall_trace.Contact`, so one policy judges both observers.
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import threading

from syscall_trace import DNS_PORT, Contact, dns_query_name

PARENT_NAMESPACE_ENV = "TWIN_TEST_PARENT_NETNS"
"""Set by the outer run to its own network namespace (`/proc/self/ns/net`); the inner run refuses to touch
routes when it finds itself in that same namespace (it must never change the host's)."""
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4  # each packet on lo is seen leaving and arriving: keep one copy
ETHERTYPES = {0x0800: socket.AF_INET, 0x86DD: socket.AF_INET6}
TCP, UDP = 6, 17
TCP_SYN, TCP_ACK = 0x02, 0x10


def current_namespace() -> str:
    """The id of this process's network namespace, e.g. `net:[4026531840]`."""
    return os.readlink("/proc/self/ns/net")


def unshare_prefix() -> tuple[list[str], str]:
    """`(argv prefix that runs a command in a new network namespace, "")`, or `([], why not)` when `unshare`
    or `ip` is missing or the kernel refuses a namespace (tried: `unshare -n` as root, then `unshare -rn`)."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if unshare is None or ip is None:
        return [], f"{'unshare (util-linux)' if unshare is None else 'ip (iproute2)'} is not installed"
    candidates = ([[unshare, "-n"]] if os.geteuid() == 0 else []) + [[unshare, "-rn"]]
    problem = ""
    for prefix in candidates:
        probe = subprocess.run([*prefix, ip, "link", "set", "lo", "up"], capture_output=True, text=True, timeout=30)
        if probe.returncode == 0:
            return [*prefix, "--"], ""
        problem = f"`{' '.join(prefix)} ip link set lo up` failed: {probe.stderr.strip()[:200]}"
    return [], problem


def prepare() -> None:
    """Bring `lo` up and make every destination local (IPv6 too when the kernel has it). Raises RuntimeError
    when this process is still in the namespace its parent ran in, or `ip` fails."""
    if os.environ.get(PARENT_NAMESPACE_ENV) in (None, current_namespace()):
        raise RuntimeError("not inside a private network namespace: refusing to change routes")
    commands = [["ip", "link", "set", "lo", "up"], ["ip", "route", "add", "local", "default", "dev", "lo"]]
    if os.path.exists("/proc/net/if_inet6"):
        commands.append(["ip", "-6", "route", "add", "local", "default", "dev", "lo"])
    for command in commands:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()}")


class PacketCapture:
    """Records every TCP SYN and UDP datagram on `lo` from `start()` to `stop()` (a daemon thread).

    `contacts` holds them as `Contact(pid=0, program="namespace", call="tcp-syn"|"udp", family, destination
    address, destination port, "sent", DNS query name for port 53)`. Needs CAP_NET_RAW in the namespace (its
    root has it)."""

    def __init__(self) -> None:
        self.contacts: list[Contact] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    def start(self) -> PacketCapture:
        self._socket = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self._socket.bind(("lo", 0))
        self._socket.settimeout(0.2)
        self._thread = threading.Thread(target=self._run, name="packet-capture", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> list[Contact]:
        """Stop reading and return `contacts`."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._socket is not None:
            self._socket.close()
        return self.contacts

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                frame, address = self._socket.recvfrom(65535)
            except TimeoutError:
                continue
            except OSError:
                return
            if address[2] == PACKET_OUTGOING:
                continue
            contact = contact_of_frame(frame)
            if contact is not None:
                self.contacts.append(contact)


def contact_of_frame(frame: bytes) -> Contact | None:
    """The `Contact` a loopback Ethernet frame starts (a TCP SYN without ACK, or any UDP datagram), else None."""
    family = ETHERTYPES.get(struct.unpack("!H", frame[12:14])[0]) if len(frame) >= 14 else None
    packet = frame[14:]
    if family == socket.AF_INET and len(packet) >= 20:
        protocol, header = packet[9], (packet[0] & 0x0F) * 4
        destination = socket.inet_ntop(family, packet[16:20])
    elif family == socket.AF_INET6 and len(packet) >= 40:
        protocol, header = packet[6], 40
        destination = socket.inet_ntop(family, packet[24:40])
    else:
        return None
    segment = packet[header:]
    if len(segment) < 8 or protocol not in (TCP, UDP):
        return None
    port = struct.unpack("!H", segment[2:4])[0]
    name = "AF_INET" if family == socket.AF_INET else "AF_INET6"
    if protocol == TCP:
        flags = segment[13] if len(segment) > 13 else 0
        if not flags & TCP_SYN or flags & TCP_ACK:
            return None
        return Contact(0, "namespace", "tcp-syn", name, destination, port, "sent")
    query = dns_query_name(segment[8:]) if port == DNS_PORT else ""
    return Contact(0, "namespace", "udp", name, destination, port, "sent", query)
