"""The API's bearer token (DESIGN.md invariant 8): made at the API's first start in a 0600 file in the config
dir, printed by `twin token`, replaced by `twin token --rotate`; a running API reads the file again when it
changes, so a rotation takes effect at the next request."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from twin.store import private_dir

TOKEN_BYTES = 32
"""Random bytes in a token (`secrets.token_urlsafe`: 43 characters)."""


def read_token(path: Path) -> str | None:
    """The token stored at `path`, or None when the file is missing or blank."""
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def ensure_token(path: Path) -> str:
    """The token at `path`, made (0600, its directory 0700 if new) when there is none yet. Two processes
    starting at once agree: the file is created exclusively, the loser reads the winner's."""
    if (token := read_token(path)) is not None:
        return token
    private_dir(path.parent)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_token(path) or rotate_token(path)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    return token


def rotate_token(path: Path) -> str:
    """Replace the token at `path` with a new one (a 0600 temporary file renamed over it: no moment without a
    token, never a readable one) and return it; the old token stops working at once."""
    private_dir(path.parent)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(token + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    return token


class TokenFile:
    """The current token of a file, read again whenever its mtime or size changes (a rotation)."""

    def __init__(self, path: Path):
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._token: bytes | None = None

    def current(self) -> bytes | None:
        """The token as bytes, or None when the file is gone (then every request is refused)."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            token = read_token(self.path)
            self._token, self._stamp = (token.encode() if token else None), stamp
        return self._token

    def matches(self, given: str | None) -> bool:
        """True when `given` is the current token, compared in constant time (`secrets.compare_digest`)."""
        token = self.current()
        if token is None or given is None:
            return False
        return secrets.compare_digest(given.encode("utf-8", "surrogateescape"), token)
