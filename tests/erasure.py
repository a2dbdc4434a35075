"""The erasure scan (DESIGN.md invariant 5): is any trace of forgotten text or vectors left in twin's files?

`traces(data_dir, words, vectors, extra_files)` reads every file under the data dir (the `.db`, `-wal`, `-shm`,
the index and its metadata, Redis's files when they live there) plus any `extra_files` (e.g. a Redis AOF kept
elsewhere), and every zlib or gzip stream found inside them, decompressed; it returns where a word (bytes,
case-insensitive) or a vector (float32, at any 4-byte alignment, within 1e-5 per component: hnswlib
re-normalises cosine vectors, so the last bit may differ) still is. An empty list means gone.
"""

from __future__ import annotations

import re
import subprocess
import zlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np

_STREAM_START = re.compile(rb"\x78[\x01\x5e\x9c\xda]|\x1f\x8b\x08")
MAX_STREAMS = 2000
"""Candidate stream starts tried per file (a random byte pair looks like a zlib header now and then)."""


def decompressed_streams(data: bytes) -> list[bytes]:
    """Every zlib or gzip stream that starts somewhere in `data` and decompresses to something, decompressed
    (up to 64 MB each)."""
    out = []
    for n, match in enumerate(_STREAM_START.finditer(data)):
        if n >= MAX_STREAMS:
            break
        wbits = 31 if match.group().startswith(b"\x1f") else 15
        try:
            plain = zlib.decompressobj(wbits).decompress(data[match.start():], 64 << 20)
        except zlib.error:
            continue
        if plain:
            out.append(plain)
    return out


def vector_in(data: bytes, blob: bytes) -> bool:
    """True when `data` holds the float32 vector `blob` (normalised, ±1e-5 per component, any 4-byte alignment)."""
    vec = np.frombuffer(blob, dtype=np.float32)
    vec = vec / np.linalg.norm(vec)
    with np.errstate(invalid="ignore", over="ignore"):
        for offset in range(4):
            usable = (len(data) - offset) // 4
            if usable < len(vec):
                continue
            floats = np.frombuffer(data, dtype=np.float32, count=usable, offset=offset)
            for pos in np.flatnonzero(np.abs(floats[: usable - len(vec) + 1] - vec[0]) < 1e-5):
                if np.allclose(floats[pos: pos + len(vec)], vec, atol=1e-5):
                    return True
    return False


def read_apart(path: Path) -> bytes:
    """The bytes of `path`, read by a child process (`cat`): closing a descriptor of a SQLite file in this process
    would drop the POSIX locks of every `Store` this process has open on it, and another process could then reset
    the WAL under them (see `Store.open`). A file gone before it could be read (Redis's temporary files of an
    append-only rewrite come and go) holds nothing any more: b"". Raises `CalledProcessError` for a file that is
    there and cannot be read."""
    done = subprocess.run(["cat", str(path)], capture_output=True)
    if done.returncode != 0 and not path.exists():
        return b""
    done.check_returncode()
    return done.stdout


def files_under(folder: Path) -> list[Path]:
    """Every regular file under `folder` (sockets, pipes and links left out)."""
    return sorted(p for p in Path(folder).rglob("*") if p.is_file() and not p.is_symlink())


def traces(data_dir: Path, words: Iterable[str | bytes] = (), vectors: Iterable[bytes] = (),
           extra_files: Iterable[Path] = ()) -> list[str]:
    """`["<file>: <word or 'vector #n'> (raw|in a compressed stream)", ...]` for every trace found; [] when
    none is left."""
    needles = [w.encode() if isinstance(w, str) else w for w in words]
    needles = [n.lower() for n in needles if n]
    blobs = list(vectors)
    found = []
    for path in [*files_under(data_dir), *extra_files]:
        raw = read_apart(path)
        for where, data in [("raw", raw), *(("in a compressed stream", s) for s in decompressed_streams(raw))]:
            lowered = data.lower()
            found += [f"{path.name}: {n.decode(errors='replace')} ({where})" for n in needles if n in lowered]
            found += [f"{path.name}: vector #{i} ({where})" for i, b in enumerate(blobs) if vector_in(data, b)]
    return found
