"""The SQLite store: the single source of truth (DESIGN.md invariant 1).

One database file in WAL mode with a busy timeout. Every process opens its own `Store`; writes are
short transactions. Memories, their FTS5 mirror (kept by triggers), embeddings as float32 blobs,
index tombstones, activity, connector cursors and the files manifest all live here.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from twin.exceptions import StoreError
from twin.memory import Memory, content_sha256, format_time, parse_time, utc_now
from twin.namespaces import DEFAULT_NAMESPACE
from twin.store import fts_structure
from twin.store.ids import DEFAULT_SCOPE, INTEGER_MAX, Namespaces, id_chunks, in_namespaces
from twin.store.memories import MemoryStates
from twin.store.schema import SCRUB_DUE, migrate

if TYPE_CHECKING:  # numpy (~20 MB of RSS) loads in the two methods that take or give vectors: the supervisor and
    import numpy as np  # the scheduler open a store but never touch a vector (bench/daemon_rss.py)

log = logging.getLogger(__name__)

REINFORCE_GAP_S = 3600
"""A duplicate raises a memory's importance only when the memory was not used (said again, or recalled) within this
long before (ours; seed 000's "saying the same true thing twice reinforces it", not a retried request)."""
BUSY_TIMEOUT_MS = 15_000
"""How long a writer waits for another process's transaction (milliseconds)."""

_COLUMNS = ("id, being_id, kind, content, source, importance, tags, created_at, last_accessed, hits, "
            "sensitivity, provenance, status, superseded_by, content_sha256, tier, supersede_reason, updated_at, "
            "namespace")


_RANKING = ("m.being_id, m.kind, m.status, m.importance, m.created_at, m.sensitivity, m.tier, s.created_at, m.content,"
            " m.namespace, m.source")
"""`RankingFields`' columns, in its order (`memories m` joined to the memory `s` that superseded it)."""


class RankingFields(NamedTuple):
    """What recall ranks a memory by (`Store.ranking_fields`): `importance` 0..1, `created_at` UTC ISO-8601,
    `superseded_at` the creation time of the memory that superseded it (None while active), so a replay `as_of`
    an earlier moment still sees it as current; `content` last, so recall reads a candidate's words in the same
    query; `namespace` (`twin.namespaces`) and `source` (whose conversation it is a turn of: `twin.store.turns`) after
    it. Still a tuple: `fields[0]` is `being_id`."""
    being_id: str
    kind: str
    status: str
    importance: float
    created_at: str
    sensitivity: str
    tier: str
    superseded_at: str | None
    content: str
    namespace: str
    source: str


class RankingRow(NamedTuple):
    """One candidate as `Store.ranking_rows` reads it: its `fields`, its stored `vector` (float32 bytes; None when
    not asked or it has none of that model) and its `bm25` for a match (None when not asked or not matched)."""
    fields: RankingFields
    vector: bytes | None
    bm25: float | None


def _row_to_memory(row: sqlite3.Row | tuple) -> Memory:
    (mid, being, kind, content, source, importance, tags, created, accessed, hits,
     sensitivity, provenance, status, superseded_by, sha, tier, reason, updated, namespace) = row
    return Memory(id=mid, being_id=being, kind=kind, content=content, source=source, importance=importance,
                  tags=json.loads(tags), created_at=created, last_accessed=accessed, hits=hits,
                  sensitivity=sensitivity, provenance=json.loads(provenance), status=status,
                  superseded_by=superseded_by, content_sha256=sha, tier=tier, supersede_reason=reason,
                  updated_at=updated, namespace=namespace)


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL. Converting a new database needs a moment alone with it and SQLite does not wait for
    that on its own, so two processes opening a fresh store at once retry for up to `BUSY_TIMEOUT_MS`."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def secure_dir(path: Path) -> Path:
    """Create `path` (and parents) and make it 0700: twin's own data and runtime dirs are never
    world-readable (invariant 8). Only for directories twin owns: it changes the mode of an existing one."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def private_dir(path: Path) -> Path:
    """Create `path` 0700 if it is missing; an existing directory is left as it is (it may be shared)."""
    if not path.is_dir():
        old = os.umask(0o077)
        try:
            path.mkdir(parents=True, exist_ok=True)
        finally:
            os.umask(old)
    return path


def _repair_fts_if_needed(conn: sqlite3.Connection) -> None:
    """Rebuild `memories_fts` when `fts_structure.needs_rebuild` says so, re-checked under the write lock (two
    processes opening the store at once repair it once). One log line with the level count and the time."""
    if not fts_structure.needs_rebuild(conn):
        return
    started = time.monotonic()
    conn.execute("BEGIN IMMEDIATE")
    try:
        try:
            levels: int | str | None = fts_structure.read_levels(conn)
        except ValueError as exc:
            levels = f"an unreadable structure ({exc})"
        if fts_structure.needs_rebuild(conn):
            fts_structure.rebuild(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    log.warning("store: the full-text index had %s levels (FTS5 fails past %d); rebuilt it in %.2f s", levels,
                fts_structure.FTS5_MAX_LEVELS, time.monotonic() - started)


class Store(MemoryStates):
    """A connection to the store at `path`. `open()` connects and migrates; `close()` releases.

    Not thread-safe across threads writing at once; each process or thread opens its own `Store`
    (the recall reader uses one connection from one thread at a time).
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def open(self) -> Store:
        """Open (creating the file 0600 and its directory 0700), apply migrations, and rebuild the full-text index
        when its structure has passed `fts_structure.REBUILD_ABOVE_LEVELS` levels or cannot be read (a store left
        near FTS5's limit, or past it, by an older twin: the first process to open it repairs it, under the write
        lock, once; the check itself is one primary-key read).

        Raises `StoreError` when the file cannot be opened, is not a database, or fails to migrate.
        """
        try:
            private_dir(self.path.parent)
            # create it 0600, but never open and close an existing file ourselves: closing any descriptor of
            # the file drops every POSIX lock this process holds on it, so another Store of this process would
            # lose the lock that tells other processes it is still in use, and the last of those to close would
            # then checkpoint and reset the WAL under it (memories seen, then gone)
            with contextlib.suppress(FileExistsError):
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600))
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _enable_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed: forgotten text leaves the file
            migrate(conn)
            _repair_fts_if_needed(conn)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the store {self.path}: {exc}") from exc
        self._conn = conn
        return self

    def close(self) -> None:
        """Close the connection; safe to call twice."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Store:
        return self.open() if self._conn is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        """The open connection. Raises `StoreError` before `open()`."""
        if self._conn is None:
            raise StoreError("store used before open()")
        return self._conn

    @contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """`BEGIN IMMEDIATE` … `COMMIT`, rolled back on any exception (which is re-raised). Inside an open
        transaction it is a savepoint instead: an exception rolls back only what the inner block wrote, and the
        outer transaction decides whether everything is committed (sqlite-utils' `atomic`). A COMMIT that fails
        (a deferred constraint, disk full, I/O) is rolled back before its error is re-raised, so the connection
        is never left inside a half-done transaction. Yields the connection (for this package's statements)."""
        conn = self.conn
        if conn.in_transaction:
            conn.execute("SAVEPOINT twin_nested")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK TO twin_nested")
                conn.execute("RELEASE twin_nested")
                raise
            conn.execute("RELEASE twin_nested")
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # a COMMIT that failed (disk full, I/O) leaves the transaction open
                conn.execute("ROLLBACK")
            raise

    transaction = atomic
    """The older name of `atomic` (every caller in the tree uses `atomic`)."""

    # -- memories -------------------------------------------------------------------------------
    def find_by_sha(self, being: str, sha: str, namespace: str = DEFAULT_NAMESPACE) -> Memory | None:
        """The memory of `being` in `namespace` whose `content_sha256` is `sha`, or None (identity is per being and
        namespace: DESIGN.md invariant 2, seed 003)."""
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE being_id = ? AND namespace = ?"
                                " AND content_sha256 = ?", (being, namespace, sha)).fetchone()
        return _row_to_memory(row) if row else None

    def insert_memory(self, being: str, kind: str, content: str, source: str, importance: float,
                      tags: Iterable[str] = (), created_at: str | None = None, sensitivity: str = "private",
                      provenance: dict | None = None, last_accessed: str | None = None, hits: int = 0,
                      status: str = "active", superseded_by: int | None = None, tier: str = "warm",
                      updated_at: str | None = None, namespace: str = DEFAULT_NAMESPACE,
                      memory_id: int | None = None) -> int:
        """Insert one memory of `being` in `namespace` (a name `twin.namespaces.checked` passed; its FTS row follows
        by trigger) and return its id.

        `memory_id` (an import keeping an export's ids) is the id it gets; only one above every id this store
        ever gave (`fresh_memory_id`) may be asked for: a forgotten memory's id is never given again.

        Raises `sqlite3.IntegrityError` if the same normalised content exists for `being` in `namespace` (callers
        check `find_by_sha` first, inside the same transaction), a field is out of range or `memory_id` is taken.
        """
        cur = self.conn.execute(
            "INSERT INTO memories (id, being_id, kind, content, source, importance, tags, created_at, last_accessed,"
            " hits, sensitivity, provenance, status, superseded_by, content_sha256, tier, updated_at, namespace)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (memory_id, being, kind, content, source, float(importance), json.dumps(list(tags), ensure_ascii=False),
             created_at or utc_now(), last_accessed, hits, sensitivity, json.dumps(provenance or {}),
             status, superseded_by, content_sha256(content), tier, updated_at, namespace))
        return int(cur.lastrowid)

    def fresh_memory_id(self, memory_id: object) -> bool:
        """True when `memory_id` (an export's id) may be given to a new memory here: a whole number above every id
        this store ever gave (`sqlite_sequence`: AUTOINCREMENT never gives a forgotten memory's id again, whose
        vector may still wait in the index for its scrub) and within SQLite's INTEGER."""
        if not isinstance(memory_id, int) or isinstance(memory_id, bool) or not 0 < memory_id <= INTEGER_MAX:
            return False
        row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memories'").fetchone()
        return memory_id > (row[0] if row else 0)

    def reinforce(self, memory_id: int, now: str, step: float = 0.1) -> None:
        """Duplicate reinforcement (seed 000): importance + `step` capped at 1, `last_accessed` = now (UTC ISO-8601),
        hits + 1; the importance only when the memory was not used in the `REINFORCE_GAP_S` before `now` (a request
        retried or a message sent again is one saying: forty retries had made a throwaway fact outrank every other)."""
        since = format_time(parse_time(now) - timedelta(seconds=REINFORCE_GAP_S))
        self.conn.execute("UPDATE memories SET importance = CASE WHEN last_accessed IS NULL OR last_accessed <= ?"
                          " THEN MIN(1.0, importance + ?) ELSE importance END, last_accessed = ?, hits = hits + 1"
                          " WHERE id = ?", (since, step, now, memory_id))

    def touch(self, memory_ids: Iterable[int], now: str) -> None:
        """Recall touch (seed 000): `last_accessed` = now and hits + 1 for each id, and a cold memory back to warm
        (seed 003: "a subsequent search that hits the cold entry re-promotes it"), in one transaction. The tier is
        set only where it changes: a `SET tier` rewrites the two indexes holding it for every row, which made a
        touch of 4 warm memories ~3 times slower at 100k memories."""
        ids = list(dict.fromkeys(int(i) for i in memory_ids))
        if ids:
            with self.atomic() as conn:
                for chunk, marks in id_chunks(ids):  # one statement per chunk, not one per id
                    conn.execute(f"UPDATE memories SET last_accessed = ?, hits = hits + 1 WHERE id IN ({marks})",
                                 (now, *chunk))
                    conn.execute(f"UPDATE memories SET tier = 'warm' WHERE tier = 'cold' AND id IN ({marks})", chunk)

    def get(self, memory_id: int) -> Memory | None:
        """One memory by id (any status), or None."""
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return _row_to_memory(row) if row else None

    def get_many(self, memory_ids: Iterable[int]) -> dict[int, Memory]:
        """Memories by id; ids that no longer exist are simply absent from the result."""
        out: dict[int, Memory] = {}
        for chunk, marks in id_chunks(memory_ids):
            for row in self.conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE id IN ({marks})", chunk):
                out[row[0]] = _row_to_memory(row)
        return out

    def ranking_fields(self, memory_ids: Iterable[int]) -> dict[int, RankingFields]:
        """`{id: RankingFields}`: the few fields recall ranks by, without decoding whole rows (read-only; missing
        ids are absent)."""
        out = {}
        for chunk, marks in id_chunks(memory_ids):
            for row in self.conn.execute(
                    f"SELECT m.id, {_RANKING} FROM memories m LEFT JOIN memories s ON s.id = m.superseded_by"
                    f" WHERE m.id IN ({marks})", chunk):
                out[row[0]] = RankingFields(*row[1:])
        return out

    def ranking_rows(self, memory_ids: Iterable[int], model_id: str | None = None,
                     match: str | None = None) -> dict[int, RankingRow]:
        """`{id: RankingRow}`: `ranking_fields` with, in the same read, the stored vector of `model_id` (None: not
        read) and the bm25 of FTS5 `match` (None: not read; bm25 negative, lower is better, the scale of
        `fts_search`) of each id (read-only; missing ids are absent). Recall's one read per candidate: reading the
        three apart cost about twice as much at 100k memories (bench/recall_latency.py). Raises
        `sqlite3.OperationalError` on a malformed `match`."""
        out = {}
        columns = _RANKING + (", e.vector" if model_id else ", NULL") + (", f.rank" if match else ", NULL")
        for chunk, marks in id_chunks(memory_ids):
            # the matches' bm25 once, for these ids alone (`fts_ranks`), materialised before the join
            sql = ((f"WITH f AS MATERIALIZED (SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ?"
                    f" AND +rowid IN ({marks})) " if match else "")
                   + f"SELECT m.id, {columns} FROM memories m LEFT JOIN memories s ON s.id = m.superseded_by"
                   + (" LEFT JOIN memory_embeddings e ON e.memory_id = m.id AND e.model_id = ?" if model_id else "")
                   + (" LEFT JOIN f ON f.rowid = m.id" if match else "")
                   + f" WHERE m.id IN ({marks})")
            args = [*([match, *chunk] if match else []), *([model_id] if model_id else []), *chunk]
            for row in self.conn.execute(sql, args):
                out[row[0]] = RankingRow(RankingFields(*row[1:12]), row[12], row[13])
        return out

    def list_memories(self, being: str, kind: str | None = None, limit: int = 50, since: str | None = None,
                      before: str | None = None, include_superseded: bool = False,
                      include_sensitive: bool = True, levels: tuple[str, ...] | None = None,
                      namespaces: Namespaces = DEFAULT_SCOPE, tier: str | None = None,
                      source_type: str | None = None, after: tuple[str, int] | None = None) -> list[Memory]:
        """Memories of `being` in `namespaces` (None: every one), newest first, at most `limit`; `since`/`before`
        bound `created_at` (UTC ISO-8601); `include_sensitive=False` leaves sensitive ones out in the query itself,
        so `limit` counts what is shown; `levels` (`twin.memory.levels_up_to`) keeps only memories of those
        sensitivities, in the query too. `tier` (`warm`/`cold`) and `source_type` (the part of the source before
        `:`, `browser` for `browser`) narrow it; `after` is the `(created_at, id)` of the last memory of the page
        before, for the next page (a keyset: a memory made meanwhile never shifts an older one out of sight)."""
        scoped, names = in_namespaces(namespaces)
        where, args = ["being_id = ?" + scoped], [being, *names]
        if tier:
            where.append("tier = ?")
            args.append(tier)
        if source_type:
            where.append("(source = ? OR substr(source, 1, ?) = ?)")
            args.extend((source_type, len(source_type) + 1, source_type + ":"))
        if after is not None:
            where.append("(created_at < ? OR (created_at = ? AND id < ?))")
            args.extend((after[0], after[0], int(after[1])))
        if not include_sensitive:
            where.append("sensitivity != 'sensitive'")
        if levels is not None:
            where.append(f"sensitivity IN ({','.join('?' * len(levels))})")
            args.extend(levels)
        if kind:
            where.append("kind = ?")
            args.append(kind)
        if since:
            where.append("created_at >= ?")
            args.append(since)
        if before:
            where.append("created_at <= ?")
            args.append(before)
        if not include_superseded:
            where.append("status = 'active'")
        sql = f"SELECT {_COLUMNS} FROM memories WHERE {' AND '.join(where)} ORDER BY created_at DESC, id DESC LIMIT ?"
        return [_row_to_memory(r) for r in self.conn.execute(sql, (*args, int(limit)))]

    def ids_by_source(self, being: str, source: str, namespaces: Namespaces = DEFAULT_SCOPE) -> list[int]:
        """Ids of the memories of `being` in `namespaces` (None: every one) whose source is exactly `source`."""
        scoped, names = in_namespaces(namespaces)
        return [r[0] for r in self.conn.execute(f"SELECT id FROM memories WHERE being_id = ? AND source = ?{scoped}",
                                                (being, source, *names))]

    def delete_memories(self, memory_ids: Iterable[int]) -> int:
        """Hard-delete memories: row, FTS entry (trigger) and embedding (cascade; a tombstone tells the
        index writer to scrub the vector), edges and markers (cascade), in one transaction. Sets the scrub marker
        (trigger): the words stay in the FTS segments and the WAL until `scrub_deleted_text`, which
        `twin.lifecycle.forgetting` runs. Returns how many existed. DESIGN.md invariant 5."""
        ids = [(int(i),) for i in memory_ids]
        if not ids:
            return 0
        with self.atomic() as conn:
            return conn.executemany("DELETE FROM memories WHERE id = ?", ids).rowcount

    def scrub_due(self) -> bool:
        """True when memory text was deleted or rewritten since the last complete `scrub_deleted_text` (the
        `memories_scrub_due_*` triggers set the marker in the same transaction; read-only)."""
        return self.conn.execute("SELECT 1 FROM state WHERE scope = ? AND being_id = ? AND key = ?",
                                 SCRUB_DUE).fetchone() is not None

    def mark_scrub_due(self) -> None:
        """Set the scrub marker by hand (text deleted outside `memories`, e.g. a redacted transcript row)."""
        self.conn.execute("INSERT OR REPLACE INTO state (scope, being_id, key, kind, value, updated_at)"
                          " VALUES (?, ?, ?, 'time', ?, ?)", (*SCRUB_DUE, utc_now(), utc_now()))

    def scrub_deleted_text(self) -> dict:
        """Make deleted text unrecoverable from the database files (DESIGN.md invariant 5), keeping the full-text
        index readable (`twin.store.fts_structure`): merge the FTS5 index (`'optimize'`) so no segment still lists a
        forgotten word (SQLite < 3.42 has no FTS5 secure-delete), or rebuild it when its structure has more than
        `REBUILD_ABOVE_LEVELS` levels (before or after the merge); then checkpoint and truncate the WAL, which may
        hold old copies of the pages. Clears the scrub marker; sets it again when a reader kept the WAL from being
        truncated (the next scrub retries). Costs ~0.1 s at 100k memories (a rebuild ~0.65 s): run once after a
        burst of removals, not per memory. Call outside a transaction.

        Returns `{"levels": n, "rebuilt": bool, "wal_truncated": bool, "seconds": s}`."""
        started = time.monotonic()
        with self.atomic() as conn:
            rebuilt = fts_structure.needs_rebuild(conn)
            if not rebuilt:
                conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
                rebuilt = fts_structure.needs_rebuild(conn)
            if rebuilt:
                fts_structure.rebuild(conn)
            levels = fts_structure.read_levels(conn) or 0
            conn.execute("DELETE FROM state WHERE scope = ? AND being_id = ? AND key = ?", SCRUB_DUE)
        busy = not self.truncate_wal()
        if busy:
            log.warning("store: a reader kept the WAL from being truncated; the next scrub retries")
            self.mark_scrub_due()
        return {"levels": levels, "rebuilt": rebuilt, "wal_truncated": not busy,
                "seconds": round(time.monotonic() - started, 3)}

    def truncate_wal(self) -> bool:
        """Checkpoint the WAL into the database file and truncate it to zero bytes (it may hold old copies of
        pages). Returns False when a reader kept it from being truncated. Call outside a transaction."""
        return not self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]

    def fts_search(self, being: str, match: str, limit: int, before: str | None = None,
                   namespaces: Namespaces = DEFAULT_SCOPE) -> list[tuple[int, float, str]]:
        """FTS5 candidates as `(id, bm25, content)` (bm25 is negative; lower is better), active memories of `being`
        in `namespaces` (None: every one) only.

        The best `2 × limit` matches (8 × with `before`, which filters more) are ranked inside FTS5 first and
        only then joined and filtered (being, status, `created_at < before`), so a common word over 100k
        memories does not join every match. When the namespace filter left out some of them and fewer than `limit`
        are left (a small namespace beside a big one), the search runs again with the namespace inside the join,
        so a namespace's own matches are not crowded out by another's. `match` is an
        FTS5 query string (see `recall.fts_query`). Raises `sqlite3.OperationalError` on a malformed query.
        """
        rows = self._fts_search(being, match, limit, before, None, (8 if before else 2) * int(limit))
        if namespaces is None:
            return [r[:3] for r in rows[:limit]]
        wanted = set(namespaces)
        kept = [r[:3] for r in rows if r[3] in wanted]
        if len(kept) >= limit or len(kept) == len(rows):
            return kept[:limit]
        return [r[:3] for r in self._fts_search(being, match, limit, before, namespaces, None)]

    def _fts_search(self, being: str, match: str, limit: int, before: str | None, namespaces: Namespaces,
                    inner: int | None) -> list[tuple[int, float, str, str]]:
        """`fts_search`'s query: `(id, bm25, content, namespace)`; the best `inner` matches ranked first (None: every
        match joined, filtered by `namespaces` too)."""
        scoped, names = in_namespaces(namespaces, "m.namespace")
        inner_limit = "" if inner is None else " ORDER BY rank LIMIT ?"
        sql = ("SELECT m.id, f.rank, m.content, m.namespace FROM (SELECT rowid, rank FROM memories_fts WHERE"
               f" memories_fts MATCH ?{inner_limit}) AS f JOIN memories m ON m.id = f.rowid WHERE m.being_id = ?"
               + scoped)
        args: list = [match, *([] if inner is None else [inner]), being, *names]
        if before:  # a replay: what was current then (superseded later counts as active)
            sql += (" AND m.created_at < ? AND (m.status = 'active' OR"
                    " (SELECT s.created_at FROM memories s WHERE s.id = m.superseded_by) >= ?)")
            args += [before, before]
        else:
            sql += " AND m.status = 'active'"
        sql += " ORDER BY f.rank, m.id LIMIT ?"
        return self.conn.execute(sql, (*args, int(limit))).fetchall()

    def fts_ranks(self, match: str, memory_ids: Iterable[int]) -> list[tuple[int, float, str]]:
        """`(id, bm25, content)` of those of `memory_ids` that FTS5 `match` finds (bm25 negative, lower is better,
        on the same scale as `fts_search`'s: the whole table's statistics), in no order; read-only. Lets recall
        give a keyword score to a candidate the vector index found beyond the keyword top-k. Raises
        `sqlite3.OperationalError` on a malformed query. `+rowid`: the ids filter one pass over the matches, and
        bm25 is computed for them alone (a rowid lookup per id re-ran the match: ~20 times slower at 100k)."""
        out: list[tuple[int, float, str]] = []
        for chunk, marks in id_chunks(memory_ids):
            out += self.conn.execute(
                "SELECT m.id, f.rank, m.content FROM (SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ?"
                f" AND +rowid IN ({marks})) AS f JOIN memories m ON m.id = f.rowid", (match, *chunk)).fetchall()
        return out

    def term_document_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """`(documents, {term: documents containing it})` from the FTS5 vocabulary (all beings, read-only);
        terms must already be in FTS form (case-folded, diacritics removed)."""
        total = self.conn.execute("SELECT MAX(id) FROM memories").fetchone()[0] or 0  # O(1); close enough for IDF
        counts = {t: 0 for t in terms}
        for term in terms:
            row = self.conn.execute("SELECT doc FROM memories_vocab WHERE term = ?", (term,)).fetchone()
            if row:
                counts[term] = row[0]
        return total, counts

    def namespace_counts(self, being: str, census: list | None = None) -> dict[str, dict[str, int]]:
        """`{namespace: {"memories": n, "active": n}}` of `being`, sorted by name (read-only; seed 003's
        per-namespace counts in `twin status`), from `census` (`MemoryStates.census`, read now when None)."""
        out: dict[str, dict[str, int]] = {}
        for namespace, status, _kind, _tier, n in sorted(self.census(being) if census is None else census):
            counts = out.setdefault(namespace, {"memories": 0, "active": 0})
            counts["memories"] += n
            counts["active"] += n if status == "active" else 0
        return out

    def in_scope(self, memory_ids: Iterable[int], being: str, namespaces: Namespaces) -> set[int]:
        """Those of `memory_ids` that are `being`'s memories in `namespaces` (None: every one) (read-only)."""
        scoped, names = in_namespaces(namespaces)
        found: set[int] = set()
        for chunk, marks in id_chunks(memory_ids):
            found.update(r[0] for r in self.conn.execute(
                f"SELECT id FROM memories WHERE id IN ({marks}) AND being_id = ?{scoped}", (*chunk, being, *names)))
        return found

    def scope_ids(self, being: str, namespaces: Namespaces) -> set[int]:
        """Ids of every memory of `being` in `namespaces` (read-only): the filter of a vector search that must
        not be crowded out by other namespaces (`twin.recall.hybrid`)."""
        scoped, names = in_namespaces(namespaces)
        return {r[0] for r in self.conn.execute(f"SELECT id FROM memories WHERE being_id = ?{scoped}",
                                                (being, *names))}

    def scope_stamp(self, being: str, namespaces: Namespaces) -> tuple[int, int, int]:
        """`(count, max id, sum of ids)` of `being`'s memories in `namespaces` (read-only; one pass over the
        namespace index): it changes whenever the set `scope_ids` returns does (a memory added, forgotten or
        moved; an id is only ever reused for the largest one, which leaves the set as it was), so that set can be
        kept between recalls (`twin.recall.hybrid.Recall`)."""
        scoped, names = in_namespaces(namespaces)
        count, top, total = self.conn.execute(f"SELECT count(*), max(id), total(id) FROM memories WHERE being_id = ?"
                                              f"{scoped}", (being, *names)).fetchone()
        return count, top or 0, int(total)

    def counts(self, being: str, census: list | None = None) -> dict[str, int]:
        """`{memories, active, embedded, kind_<kind>…}` for `being` (read-only), from `census`
        (`MemoryStates.census`, read now when None) and `embedded_count`: one pass over a narrow index, no join
        (`twin status` during a first index, issue 18)."""
        out = {"memories": 0, "active": 0, "embedded": self.embedded_count(being)}
        kinds: dict[str, int] = {}
        for _namespace, status, kind, _tier, n in self.census(being) if census is None else census:
            out["memories"] += n
            out["active"] += n if status == "active" else 0
            kinds[kind] = kinds.get(kind, 0) + n
        out.update({f"kind_{kind}": n for kind, n in sorted(kinds.items())})
        return out

    def embedded_count(self, being: str) -> int:
        """How many memories of `being` have a vector (of any model; read-only). When `being` is the store's only
        being (two index seeks tell) that is the count of vector rows, read from their small unique index in about
        a millisecond at 100k; otherwise a join over `being`'s memories (~90 ms at 100k)."""
        other = self.conn.execute("SELECT 1 FROM memories WHERE being_id < ?1 OR being_id > ?1 LIMIT 1",
                                  (being,)).fetchone()
        if other is None:
            return self.conn.execute("SELECT COUNT(*) FROM memory_embeddings").fetchone()[0]
        return self.conn.execute("SELECT COUNT(*) FROM memory_embeddings e JOIN memories m ON m.id = e.memory_id"
                                 " WHERE m.being_id = ?", (being,)).fetchone()[0]

    # -- embeddings -----------------------------------------------------------------------------
    def pending_embeddings(self, model_id: str, limit: int, after_id: int = 0) -> list[tuple[int, str]]:
        """Up to `limit` `(id, content)` of memories with id > `after_id` and no vector of `model_id`, oldest first
        (all beings). The scan starts at `after_id`: a flush going through a backlog batch by batch passes the last
        id of its previous batch, so it reads the memories once, not once a batch."""
        return self.conn.execute(
            "SELECT m.id, m.content FROM memories m LEFT JOIN memory_embeddings e"
            " ON e.memory_id = m.id AND e.model_id = ? WHERE m.id > ? AND e.memory_id IS NULL ORDER BY m.id LIMIT ?",
            (model_id, int(after_id), int(limit))).fetchall()

    def count_pending_embeddings(self, model_id: str) -> int:
        """How many memories (all beings) have no vector of `model_id` yet (read-only): every memory less the vectors
        of `model_id`, two counts over small indexes (~1 ms at 100k memories, where the join was ~190 ms). Exact
        because a memory has at most one vector (`memory_id` is unique) and a vector's memory exists (its foreign
        key cascades a delete; `save_embeddings` skips an id deleted meanwhile)."""
        return self.conn.execute("SELECT (SELECT COUNT(*) FROM memories) - (SELECT COUNT(*) FROM memory_embeddings"
                                 " WHERE model_id = ?)", (model_id,)).fetchone()[0]

    def save_embeddings(self, memory_ids: list[int], vectors: np.ndarray, model_id: str) -> None:
        """Store `(n, dim) float32` vectors for `memory_ids` in one transaction, replacing older vectors
        (a replaced vector gets a new `seq`, so readers catch up). Ids deleted meanwhile are skipped."""
        import numpy as np

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        now = utc_now()
        with self.atomic() as conn:
            for mid, vec in zip(memory_ids, vectors, strict=True):
                conn.execute("DELETE FROM memory_embeddings WHERE memory_id = ?", (mid,))
                conn.execute("INSERT INTO memory_embeddings (memory_id, model_id, dim, vector, created_at)"
                             " SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)",
                             (mid, model_id, vec.shape[0], vec.tobytes(), now, mid))

    def embeddings_after(self, seq: int, model_id: str, limit: int = 10_000) -> list[tuple[int, int, bytes]]:
        """`(seq, memory_id, float32 bytes)` of vectors of `model_id` with `seq` > `seq`, in seq order."""
        return self.conn.execute("SELECT seq, memory_id, vector FROM memory_embeddings WHERE seq > ? AND model_id = ?"
                                 " ORDER BY seq LIMIT ?", (seq, model_id, int(limit))).fetchall()

    def embedding_count(self, model_id: str) -> int:
        """How many vectors of `model_id` are stored."""
        return self.conn.execute("SELECT COUNT(*) FROM memory_embeddings WHERE model_id = ?",
                                 (model_id,)).fetchone()[0]

    def embedding_dim(self, model_id: str) -> int | None:
        """The dimension of the stored vectors of `model_id`, or None when none is stored."""
        row = self.conn.execute("SELECT dim FROM memory_embeddings WHERE model_id = ? LIMIT 1", (model_id,)).fetchone()
        return int(row[0]) if row else None

    def max_embedding_seq(self) -> int:
        """The highest `seq` ever written (0 for none); the watermark a fresh index is complete to."""
        row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'memory_embeddings'").fetchone()
        return int(row[0]) if row else 0

    def tombstones(self, limit: int = 100_000) -> list[tuple[int, int]]:
        """`(seq, memory_id)` of deleted vectors the index writer has not scrubbed yet."""
        return self.conn.execute("SELECT seq, memory_id FROM index_tombstones ORDER BY seq LIMIT ?",
                                 (limit,)).fetchall()

    def max_tombstone_seq(self) -> int:
        """The highest tombstone seq (0 for none): what a fresh index built now has already left out."""
        return self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM index_tombstones").fetchone()[0]

    def clear_tombstones(self, up_to_seq: int) -> None:
        """Drop tombstones with seq ≤ `up_to_seq` (after the checkpoint that scrubbed them is on disk)."""
        self.conn.execute("DELETE FROM index_tombstones WHERE seq <= ?", (up_to_seq,))

    def edges_among(self, memory_ids: Iterable[int], kind: str, min_strength: float) -> list[tuple[int, int]]:
        """`(src, dst)` of the `kind` edges with strength ≥ `min_strength` whose both ends are in `memory_ids`
        (read-only; the primary key (src, dst, kind) finds them)."""
        ids = list({int(i) for i in memory_ids})
        if len(ids) < 2 or len(ids) > 500:
            return []
        marks = ",".join("?" * len(ids))
        return self.conn.execute(
            f"SELECT src, dst FROM memory_edges WHERE src IN ({marks}) AND dst IN ({marks}) AND kind = ?"
            " AND strength >= ?", (*ids, *ids, kind, float(min_strength))).fetchall()

    def contents(self, memory_ids: Iterable[int]) -> list[tuple[int, str]]:
        """`[(id, content)]` of the ids that exist (any status, no order; read-only): the text alone, cheaper
        than `get_many` when only the words matter."""
        out: list[tuple[int, str]] = []
        for chunk, marks in id_chunks(memory_ids):
            out.extend(self.conn.execute(f"SELECT id, content FROM memories WHERE id IN ({marks})", chunk).fetchall())
        return out

    def stored_vectors(self, memory_ids: Iterable[int], model_id: str) -> dict[int, np.ndarray]:
        """`{id: (dim,) float32}` (L2-normalised, as embedded) of the ids that have a vector of `model_id`; the
        others are absent (read-only)."""
        import numpy as np

        out: dict[int, np.ndarray] = {}
        for chunk, marks in id_chunks(memory_ids):
            for mid, blob in self.conn.execute(
                    f"SELECT memory_id, vector FROM memory_embeddings WHERE model_id = ? AND memory_id IN ({marks})",
                    (model_id, *chunk)):
                out[mid] = np.frombuffer(blob, dtype=np.float32)
        return out

    def live_embedding_ids(self, memory_ids: Iterable[int]) -> set[int]:
        """The subset of `memory_ids` that still have a stored vector."""
        found: set[int] = set()
        for chunk, marks in id_chunks(memory_ids):
            found.update(r[0] for r in self.conn.execute(
                f"SELECT memory_id FROM memory_embeddings WHERE memory_id IN ({marks})", chunk))
        return found

    # -- cursors --------------------------------------------------------------------------------
    def beings(self) -> list[str]:
        """Every being with memories, sorted (seed 001's tick walks each one)."""
        return [row[0] for row in self.conn.execute("SELECT DISTINCT being_id FROM memories ORDER BY being_id")]

    def get_cursor(self, connector: str, being: str, key: str) -> str | None:
        """A connector's saved cursor value, or None."""
        row = self.conn.execute("SELECT value FROM cursors WHERE connector = ? AND being_id = ? AND key = ?",
                                (connector, being, key)).fetchone()
        return row[0] if row else None

    def set_cursor(self, connector: str, being: str, key: str, value: str) -> None:
        """Save a connector's cursor; call only after its items are on the queue (invariant 3)."""
        self.conn.execute("INSERT INTO cursors (connector, being_id, key, value, updated_at) VALUES (?, ?, ?, ?, ?)"
                          " ON CONFLICT (connector, being_id, key) DO UPDATE SET value = excluded.value,"
                          " updated_at = excluded.updated_at", (connector, being, key, value, utc_now()))

    def count_cursors(self, connector: str, being: str, key_prefix: str) -> int:
        """How many cursors of `connector` and `being` have a key that starts with `key_prefix` (read-only)."""
        return self.conn.execute("SELECT COUNT(*) FROM cursors WHERE connector = ? AND being_id = ?"
                                 " AND substr(key, 1, ?) = ?", (connector, being, len(key_prefix), key_prefix)
                                 ).fetchone()[0]

    # -- memory lifecycle (seed 003; twin.lifecycle.cycle) ----------------------------------------------------------
    def add_edge_markers(self, memory_ids: Iterable[int], now: str | None = None) -> None:
        """Mark memories whose `co_occurs` edges are still to be written (seed 003's durable marker); the embedding
        worker writes them once each has a vector (`lifecycle.write_pending_edges`). Already marked: unchanged.
        Runs in the caller's transaction when there is one (learn inserts the marker with its memory)."""
        at = now or utc_now()
        self.conn.executemany("INSERT OR IGNORE INTO edge_markers (memory_id, created_at) VALUES (?, ?)",
                              [(int(i), at) for i in memory_ids])
