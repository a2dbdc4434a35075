"""The owner's clock: the time zone the owner lives in, for quiet hours (`twin.reflection.hush`) and for time words in recall
queries (`twin.recall.hybrid`). Foundation: it reads settings and the machine, nothing of twin's own."""

from __future__ import annotations

import os
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

if TYPE_CHECKING:
    from twin.settings import Settings


def system_zone() -> tzinfo:
    """The machine's local time zone, as an IANA zone when it can be named (so DST is followed): `$TZ`, then the
    `/etc/localtime` link, then the file itself, and last the current fixed UTC offset. Never raises."""
    candidates = [os.environ.get("TZ", "").removeprefix(":")]
    link = os.path.realpath("/etc/localtime")
    if "/zoneinfo/" in link:
        candidates.append(link.split("/zoneinfo/", 1)[1])
    for name in candidates:
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError, OSError):
                continue
    try:
        with open("/etc/localtime", "rb") as f:
            return ZoneInfo.from_file(f, key="localtime")
    except (OSError, ValueError):
        return datetime.now().astimezone().tzinfo or UTC


def owner_zone(settings: Settings) -> tzinfo:
    """The owner's time zone: `hush_timezone`, else the system's (`system_zone()`); for quiet hours and for
    time words in recall queries. Raises `ZoneInfoNotFoundError` for an unknown name (`Settings` checks it)."""
    return ZoneInfo(settings.hush_timezone) if settings.hush_timezone else system_zone()
