"""The health of the FTS5 index `memories_fts`: its structure record, the level bound, the repair.

FTS5 keeps the shape of its index (levels of segments) in one "structure record", row `id = 10` of
`memories_fts_data`: a 4-byte cookie, on SQLite ≥ 3.44 possibly the 4-byte marker `ff 00 00 01` of the V2
format, then the varints nLevel, nSegment, nWriteCounter and the levels themselves (`fts5StructureDecode` in
SQLite's fts5_index.c). FTS5 refuses a record with more than `FTS5_MAX_LEVELS` levels: the table then reads as
"database disk image is malformed" on every query, while `PRAGMA integrity_check` still says ok.

Measured here (bench/forget_fts.py): with SQLite 3.40.1 every `'optimize'` after a delete adds two empty levels
that are never compacted (203 after 100 forgets, broken at the 1,077th); SQLite 3.51.1 caps the count at 65.
`'rebuild'` resets the structure to one level and works on a table that already reads as corrupt. So the
scrub optimizes (which erases deleted words from the segments) and rebuilds once the count passes
`REBUILD_ABOVE_LEVELS`; a store opened in that state is rebuilt at once (`Store.open`).
"""

from __future__ import annotations

import sqlite3

FTS5_MAX_LEVELS = 2000
"""FTS5's own bound on nLevel (FTS5_MAX_SEGMENT in fts5Int.h): a structure record with more reads as corrupt."""
REBUILD_ABOVE_LEVELS = 500
"""Rebuild the index when its structure has more levels than this (ours: a quarter of FTS5's bound; at two
levels per forget on SQLite 3.40 that is one rebuild, ~0.65 s at 100k memories, per ~250 forgets; newer SQLite
stays at ≤ 65 levels and never needs one)."""
NEAR_LIMIT_LEVELS = 1000
"""`twin doctor` fails above this many levels (half of FTS5's bound): twin itself never lets it get there."""
STRUCTURE_ROWID = 10
"""The rowid of the structure record in `<table>_data` (FTS5_STRUCTURE_ROWID)."""
V2_MARKER = b"\xff\x00\x00\x01"
EMPTY_STRUCTURE = b"\x00" * 7
"""A structure record with no levels (cookie 0, nLevel 0, nSegment 0, nWriteCounter 0), as a new table has."""
"""What follows the cookie in a V2 structure record (FTS5_STRUCTURE_V2, SQLite ≥ 3.44)."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """SQLite's varint (big-endian 7-bit groups, the 9th byte whole) at `pos`: `(value, next position)`."""
    value = 0
    for n in range(9):
        if pos >= len(data):
            raise ValueError("structure record ends inside a varint")
        byte = data[pos]
        pos += 1
        if n == 8:
            return (value << 8) | byte, pos
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, pos
    raise AssertionError("unreachable")  # pragma: no cover


def structure_levels(record: bytes) -> int:
    """The level count (nLevel) of an FTS5 structure record, in either format (pure).

    Raises `ValueError` when the record is too short or its varints are cut off."""
    if len(record) < 5:
        raise ValueError(f"structure record of {len(record)} bytes is too short")
    pos = 8 if record[4:8] == V2_MARKER else 4
    levels, _ = _varint(record, pos)
    return levels


def read_levels(conn: sqlite3.Connection, table: str = "memories_fts") -> int | None:
    """The level count of `table`'s index, read straight from `<table>_data` (so it works on a table that FTS5
    itself refuses to open); None when there is no structure record yet. Read-only. Raises `ValueError` for a
    record that cannot be parsed."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = ?", (STRUCTURE_ROWID,)).fetchone()
    if row is None or row[0] is None:
        return None
    return structure_levels(bytes(row[0]))


def needs_rebuild(conn: sqlite3.Connection, bound: int = REBUILD_ABOVE_LEVELS) -> bool:
    """True when the index has more than `bound` levels or its structure record cannot be parsed. Read-only."""
    try:
        levels = read_levels(conn)
    except ValueError:
        return True
    return levels is not None and levels > bound


def rebuild(conn: sqlite3.Connection) -> None:
    """FTS5's `'rebuild'`: drop the index and build it again from `memories` (one level; ~0.65 s at 100k
    memories). The caller holds the transaction; freed pages are zeroed (`secure_delete`).

    A structure record FTS5 refuses (past `FTS5_MAX_LEVELS`, or unreadable) keeps a fresh connection from even
    opening the table ("vtable constructor failed"), so it is first replaced by an empty one; the rebuild then
    deletes every old segment and writes the index anew."""
    try:
        levels = read_levels(conn)
        refused = levels is not None and levels > FTS5_MAX_LEVELS
    except ValueError:
        refused = True
    if refused:
        conn.execute("UPDATE memories_fts_data SET block = ? WHERE id = ?", (EMPTY_STRUCTURE, STRUCTURE_ROWID))
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")


def integrity_problem(conn: sqlite3.Connection) -> str | None:
    """FTS5's own `'integrity-check'` (rank 1: the index is also compared with the `memories` rows): None when
    it passes, else the error SQLite gives. Reads the whole index (about a second at 100k memories)."""
    try:
        conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None
