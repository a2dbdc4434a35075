"""A redis-server whose disk really fills up, without root: its directory is a small tmpfs mounted in a user and
mount namespace of its own (`unshare --user --map-root-user --mount`). A shell in that namespace keeps Redis running
and, on request, fills the tmpfs with a ballast file (Redis then refuses writes: `MISCONF Errors writing to the
AOF file: No space left on device`) or deletes it again (Redis takes writes again by itself). Requests go through
marker files in a control folder outside the namespace, since only processes inside it see the tmpfs."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from pathlib import Path

from redis import Redis
from redis.exceptions import ResponseError

from twin.workers.refusal import is_write_refusal

SIZE = "4m"
"""The tmpfs's size: Redis's append-only file and a few hundred small jobs fit; the ballast takes the rest."""


class FullDiskRedis:
    """Context manager: a redis-server (append-only file on, `everysec`) on a `SIZE` tmpfs under `directory`;
    `url` is its unix socket's URL. `fill()` and `free()` fill and free its disk and wait until done. Raises
    `RuntimeError` when it does not come up within 10 s."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.control = directory / "control"
        self.mount = directory / "tmpfs"
        self.socket = directory / "redis.sock"
        self.url = f"unix://{self.socket}?db=0"
        self.proc: subprocess.Popen | None = None

    def _script(self) -> str:
        ctl, mnt, sock = (shlex.quote(str(p)) for p in (self.control, self.mount, self.socket))
        return f"""
mount -t tmpfs -o size={SIZE} tmpfs {mnt} || exit 3
{shlex.quote(shutil.which("redis-server"))} --port 0 --unixsocket {sock} --unixsocketperm 700 --save '' \\
    --appendonly yes --appendfsync everysec --dir {mnt} >{ctl}/redis.log 2>&1 &
redis=$!
while :; do
  if [ -e {ctl}/fill ]; then dd if=/dev/zero of={mnt}/ballast bs=64k 2>/dev/null; rm {ctl}/fill; touch {ctl}/filled; fi
  if [ -e {ctl}/free ]; then rm -f {mnt}/ballast; rm {ctl}/free; touch {ctl}/freed; fi
  if [ -e {ctl}/quit ]; then kill $redis; wait $redis; exit 0; fi
  sleep 0.05
done
"""

    def __enter__(self) -> FullDiskRedis:
        self.control.mkdir(parents=True)
        self.mount.mkdir()
        self.proc = subprocess.Popen(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", self._script()])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.socket.exists() and Redis.from_url(self.url).ping():
                    return self
            except Exception:  # not up yet
                pass
            time.sleep(0.05)
        self.__exit__(None, None, None)
        raise RuntimeError(f"the full-disk redis-server did not start ({self.control / 'redis.log'})")

    def _ask(self, what: str, done: str) -> None:
        (self.control / what).touch()
        deadline = time.monotonic() + 20
        while not (self.control / done).exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the namespace's shell did not {what} the disk")
            time.sleep(0.05)
        (self.control / done).unlink()

    def fill(self) -> None:
        """Fill the tmpfs to the last byte."""
        self._ask("fill", "filled")

    def free(self) -> None:
        """Delete the ballast: the disk has room again."""
        self._ask("free", "freed")

    @staticmethod
    def refuses(client: Redis) -> bool:
        """True once a write to `client` is refused (the first write after the disk filled may still be taken)."""
        try:
            client.set("twin-test:probe", "x")
        except ResponseError as exc:
            return is_write_refusal(exc)
        return False

    def __exit__(self, *exc_info) -> None:
        if self.proc is None:
            return
        (self.control / "quit").touch()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
