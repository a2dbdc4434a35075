"""Scan files for forgotten text and vectors, the way someone with the disk would: raw bytes, and every zlib or
gzip stream inside a file decompressed (RQ compresses job payloads with zlib; `.gz` files are read as text)."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

_ZLIB_SECOND = (0x01, 0x5E, 0x9C, 0xDA)


def inflated(blob: bytes) -> bytes:
    """Every zlib or gzip stream found inside `blob`, decompressed and joined (bytes that only look like a header
    are skipped)."""
    out = []
    for start in range(len(blob) - 1):
        first, second = blob[start], blob[start + 1]
        if first == 0x78 and second in _ZLIB_SECOND:
            wbits = zlib.MAX_WBITS
        elif first == 0x1F and second == 0x8B:
            wbits = zlib.MAX_WBITS | 16
        else:
            continue
        try:
            out.append(zlib.decompressobj(wbits).decompress(blob[start:start + 64 * 1024 * 1024]))
        except zlib.error:
            continue
    return b"".join(out)


def files_holding(root: Path, needles: list[bytes], extra: list[Path] = ()) -> list[str]:
    """`"<file>: <needle>"` for every file under `root` (and each of `extra`) whose bytes, or whose decompressed
    streams, contain one of `needles` (case-sensitive). Empty when nothing is found."""
    found = []
    for path in [*sorted(p for p in root.rglob("*") if p.is_file()), *extra]:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        unpacked = inflated(data)
        found += [f"{path}: {needle!r}" for needle in needles if needle in data or needle in unpacked]
    return found


def vector_in(data: bytes, blob: bytes) -> bool:
    """True when `data` holds the float32 vector `blob` (normalised, within 1e-5 per component: hnswlib re-normalises
    cosine vectors, so the last bits may differ), at any 4-byte alignment."""
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
