"""sd_notify without dependencies (LIBRARY_NOTES §7): READY, STATUS, WATCHDOG and STOPPING messages."""

from __future__ import annotations

import os
import socket


def notify(*lines: str) -> bool:
    """Send `lines` (e.g. `"READY=1"`, `"STATUS=…"`) to `$NOTIFY_SOCKET` (path or abstract `@` socket).

    Returns False when not run by systemd with `Type=notify`; never raises on a gone socket.
    """
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address[0] == "@":
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.sendto("\n".join(lines).encode(), address)
    except OSError:
        return False
    return True


def watchdog_interval_s() -> float | None:
    """Half of `$WATCHDOG_USEC` in seconds (how often to send `WATCHDOG=1`), or None when no watchdog is set."""
    usec = os.environ.get("WATCHDOG_USEC")
    if not usec or not usec.isdigit():
        return None
    return int(usec) / 2_000_000
