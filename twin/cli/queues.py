"""How the CLI reaches a running daemon: Redis, asked with a short timeout (the daemon picks the work up later when
it does not answer)."""

from __future__ import annotations

from twin.settings import Settings

REDIS_ANSWER_S = 2.0
"""How long the CLI waits for Redis to answer a ping (connecting: 1 s)."""


def probe_redis(settings: Settings):
    """`(Bus, None)` when Redis answers a ping within `REDIS_ANSWER_S`, else `(None, the error)`."""
    from twin.redis_client import open_redis
    from twin.workers.bus import Bus

    client = open_redis(settings, connect_timeout_s=1, answer_timeout_s=REDIS_ANSWER_S)
    try:
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        return None, exc
    return Bus(client), None


def reachable_bus(settings: Settings):
    """A `twin.workers.bus.Bus` when Redis answers within `REDIS_ANSWER_S`, else None (the daemon picks the work up when
    it runs)."""
    return probe_redis(settings)[0]
