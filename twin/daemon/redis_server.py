"""The private redis-server the supervisor starts when no `TWIN_REDIS_URL` is set (DESIGN.md "Running it").

Unix socket in the runtime dir (mode 0700, no TCP port), AOF in `<data dir>/redis` so a Redis restart
loses no queued work (invariant 1); its jobs carry ids, never memory text (`twin.ingest`). Its own log goes
to `<data dir>/redis/redis.log`, not the journal.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from twin.exceptions import RedisUnavailable
from twin.settings import Settings
from twin.store import secure_dir

INSTALL_HINT = "install it with `sudo apt-get install redis-server`, or set TWIN_REDIS_URL to a Redis you run"


def redis_argv(settings: Settings) -> list[str]:
    """The command line of the private server. Raises `RedisUnavailable` (one line saying which package to
    install) when `settings.redis_server_bin` is not on PATH."""
    binary = shutil.which(settings.redis_server_bin)
    if binary is None:
        raise RedisUnavailable(f"{settings.redis_server_bin} is not installed; {INSTALL_HINT}")
    data = secure_dir(settings.data_dir / "redis")
    secure_dir(settings.runtime_dir)
    sock: Path = settings.redis_socket
    return [binary, "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
            "--dir", str(data), "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
            # plain RESP after a rewrite, not an RDB preamble (LZF-compressed): what is on disk can be checked
            "--aof-use-rdb-preamble", "no",
            "--daemonize", "no", "--loglevel", "warning", "--logfile", str(data / "redis.log")]
