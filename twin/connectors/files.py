"""The files connector: learns from the text files under the owner's roots (DESIGN.md "Shape"; STYLE.md 3).

Three parts:
- fetch (`twin.connectors.file_walk`): `walk()` lists a tree (the start-up scan) and `FilesConnector.run()` follows
  watchfiles events (live, `twin.connectors.file_watch`: a watcher that fails on one file is replaced and the roots
  rescanned); each event path is `lstat`-ed for its final state (LIBRARY_NOTES §3: events are unordered), and a
  changed file waits until it settles (`twin.connectors.file_settle`: `files_settle_s` unchanged) so a file being
  written is learned once; a file that only grew hands over its appended part alone (its earlier memories kept);
- `to_text(path, raw)`: pure, bytes of one file -> `Document` (text, title) or `Skip` (reason); it lives in
  `twin.connectors.file_text`;
- hand-over: a staged `document` item (the learn job replaces that file's memories) or `forget` item (a gone
  file), written in one transaction with the manifest row, the connector's cursor (invariant 3), then queued on
  Redis by id (`twin.ingest`). A crash or a Redis that is away loses nothing: the item waits in SQLite and is
  queued later; a Redis that refuses writes is waited out (the daemon's bus retries until the push lands,
  `twin.workers.refusal`), the connector holding its place meanwhile; a store that refuses the write (a full
  disk) leaves the file for a retry.

A file is identified by (path, size, mtime_ns, sha256): at start-up a file whose size and mtime match
its row is not read again; same bytes under a new mtime only update the row. Every file found is accounted
for (`twin.connectors.files_tally`): to learn, skipped with its reason, or failed. A file skipped for what it holds
(binary, too large, unreadable, a symlink out of the roots) leaves one activity line and a `skipped` row, so a
restart does not report it again; a learned file that cannot be read now keeps its memories and its `indexed` row
(`KEPT_WHEN`, `FilesConnector._keep`), and so do the files of a folder that cannot be listed now; files left out
by their name (a suffix the connector does not know, a hidden name, a `files_ignore` glob such as LICENSE* or
Makefile) and empty files are only counted, by reason, in the scan's line. When what the scan handed over is learned
and embedded, the daemon says so in one line (`twin.ingest.BacklogWatch`: one rule for every backlog).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import watchfiles
from redis.exceptions import RedisError

from twin import ingest
from twin.activity import named as activity_named
from twin.connectors import stopped_within
from twin.connectors.file_settle import Settling
from twin.connectors.file_text import Document, Skip
from twin.connectors.file_walk import PathFilter, Seen, appendable, canonical, read_file, walk
from twin.connectors.file_watch import WatchLoop, is_watch_limit  # noqa: F401 - is_watch_limit: this module's API too
from twin.connectors.files_tally import Tally, batch_line, scan_line
from twin.exceptions import StoreError
from twin.ingest import Ingest
from twin.outside_text import clean_name, escape_controls
from twin.settings import Settings
from twin.store import manifest
from twin.store.manifest import FORGOTTEN_FILE_REASON, ManifestEntry

if TYPE_CHECKING:
    from twin.activity import Activity
    from twin.store import Store
    from twin.workers.bus import Bus

log = logging.getLogger(__name__)

RETRY_MIN_S = 1.0
RETRY_MAX_S = 60.0
"""Backoff between retries while the store refuses writes (a full disk): doubles from 1 s, capped at 60 s."""
NOT_UTF8 = "file name is not valid UTF-8"
"""The skip reason of a file whose name is not UTF-8."""


def file_source(path: Path) -> str:
    """The memory source of the file at `path`: `file:` and the path as `twin.outside_text.clean_name` writes it
    (a name with an escape sequence, a line break or a bidi override stays one harmless line, and two paths
    never share a source). Computed from the real path each time, so the manifest keeps the path itself."""
    return f"file:{clean_name(str(path))}"


APPENDED_MAX_MEMORIES = 1000
"""The memories the part a file gained by growing gives at most (a log the owner appends to): every added line is
learned, not the first `files_max_memories` of it (that cap, a bound on a document's first read, cut each settle's
added lines after the 36th, for good: the next read starts where the file ended). The same bound as the setting's."""


APPENDED_PART_BYTES = 32 * 1024
"""What a file gained by growing is handed over in parts of at most this many bytes of UTF-8, cut at line ends: each
part is one `document` item under `APPENDED_MAX_MEMORIES`, so an append of 25,000 log lines is learned whole (one
item of it stopped at its first 1,000 memories and the rest was never read: a breaker run). 1,000 memories of 32
bytes or more fit in one part."""


def appended_parts(text: str) -> list[str]:
    """`text` cut at line ends into parts of at most `APPENDED_PART_BYTES` UTF-8 bytes each (a longer line is a part
    of its own), in order, none blank. Pure."""
    parts: list[str] = []
    lines: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        n = len(line.encode("utf-8", "surrogatepass"))
        if lines and size + n > APPENDED_PART_BYTES:
            parts.append("".join(lines))
            lines, size = [], 0
        lines.append(line)
        size += n
    if lines:
        parts.append("".join(lines))
    return [p for p in parts if p.strip()]


def document_item(settings: Settings, path: Path, doc: Document, appended: bool = False) -> Ingest:
    """The `document` item of the file at `path` read as `doc`, for `settings.being`: its title and its cap in
    `extra` (`files_max_memories`; `APPENDED_MAX_MEMORIES` for the part a file that only grew gained, `appended`:
    its earlier memories kept). Pure."""
    extra = {"title": doc.title,
             "max_memories": max(APPENDED_MAX_MEMORIES, settings.files_max_memories) if appended
             else settings.files_max_memories}
    return Ingest(settings.being, file_source(path), doc.text, "document",
                  extra={**extra, "appended": True} if appended else extra)


def fallback_title(path: Path, root: Path) -> str:
    """The path relative to its root without `.gz` (`rsync/README.gz` -> "rsync/README"): the title of a
    document with no heading, so each sentence keeps its context."""
    rel = path.name if path == root else path.relative_to(root).as_posix()
    return rel[:-3] if rel.lower().endswith(".gz") else rel


KEPT_WHEN = ("unreadable", "too large", "corrupt gzip", "undecodable")
"""Skip reasons (their starts) that say the bytes cannot be read now, not that the text is gone: a learned file
skipped for one keeps its memories (`FilesConnector._keep`)."""


def _unchanged(entry: ManifestEntry, st: os.stat_result) -> bool:
    """Same size and mtime as the row: not read again. Unreadable files are retried (a chmod keeps the mtime), a
    learned one that could not be read since (`FilesConnector._keep`) too."""
    retry = (entry.reason or "").startswith("unreadable")
    return not retry and entry.size == st.st_size and entry.mtime_ns == st.st_mtime_ns


# -- the connector: compare with the manifest, push, then save the row ------------------------------------------
class FilesConnector:
    """Learns from the text files under `settings.files_roots` for `settings.being`.

    `run(stop)` scans every root against the manifest (`scan_once`), then follows changes with watchfiles
    until `stop` is set. Items are staged in the store and queued through `bus` (a sync Redis client, called in
    a thread); while the store refuses writes the affected files wait in memory and are retried with capped
    backoff, their rows untouched.
    The store and the activity diary are used from the event loop's thread only.
    """

    name = "files"

    def __init__(self, settings: Settings, store: Store, bus: Bus, activity: Activity):
        self.settings = settings
        self.store = store
        self.bus = bus
        self.activity = activity
        self.being = settings.being
        self.roots = list(dict.fromkeys(settings.files_roots))
        own = (settings.data_dir, settings.config_dir, settings.runtime_dir)  # real paths: ~/.config may be a link
        self.filter = PathFilter(self.roots, [Path(os.path.realpath(p)) for p in own], settings.files_ignore)
        self.unreachable = False
        """True while Redis refuses learn jobs (logged once when it flips each way)."""
        self.unwritable = False
        """True while the store refuses writes (logged once when it flips each way)."""
        self._retry: dict[Path, Path] = {}
        self._retry_wanted = asyncio.Event()
        self.settling = Settling(settings.files_settle_s, settings.files_settle_max_s)
        """Files changed while running, held until they settle (`twin.connectors.file_settle`)."""
        self._settle_wanted = asyncio.Event()
        self._lock = asyncio.Lock()
        self._stop: asyncio.Event | None = None

    def state(self, store: Store) -> dict:
        """What `twin status` shows of the watched folders (`twin.connectors.source_state.files_state`; read-only)."""
        from twin.connectors.source_state import files_state

        return files_state(self.settings, store)

    @property
    def waiting(self) -> int:
        """How many files wait for the store to take their hand-over."""
        return len(self._retry)

    async def run(self, stop: asyncio.Event) -> None:
        """Watch, scan, then follow changes until `stop` is set; a retry task hands over what waited.

        The watcher is set up before the scan starts (its events wait for the scan), so nothing changed
        during the scan is missed. Raises only on a bug: file and Redis errors are logged and the loop goes on.
        """
        self._stop = stop
        self.watcher = WatchLoop(self.roots, self.filter, self.settings.files_poll_delay_ms, self._on_changes,
                                 lambda: self.scan_once(quiet=True), self.activity, enters=self.filter.accepts)
        watch = asyncio.create_task(self.watcher.run(stop), name="files-watch")
        retry = settle = None
        try:
            await asyncio.sleep(0)  # the watch task creates its inotify watches up to its first await
            await self.scan_once()
            retry = asyncio.create_task(self._retry_loop(stop), name="files-retry")
            settle = asyncio.create_task(self._settle_loop(stop), name="files-settle")
            await watch
        finally:
            tasks = [t for t in (watch, retry, settle) if t is not None]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def scan_once(self, quiet: bool = False) -> Tally:
        """Compare every root with the manifest: push new and changed files, forget gone ones, record skips,
        then write the line that accounts for every file found (`files_tally.scan_line`: "Files: found 9 files:
        2 to learn (2 new, 0 changed), 0 already learned, 6 skipped (…), 1 failed (…); 0 gone."). A missing root gets
        one activity line and its rows are kept (an unmounted disk is not a deletion). `quiet` (the rescan after
        a watcher restart) writes only a batch line, and only when a file was handed over, gone or newly skipped."""
        tally = Tally()
        async with self._lock:
            for root in self.roots:
                if not await asyncio.to_thread(root.is_dir):
                    if not quiet:
                        self.activity.record("degraded", f"Files: root {clean_name(str(root))} is missing; left as "
                                                         "it was.", subject=file_source(root))
                    continue
                await self._sync(root, root, tally)
        if not quiet:
            self._summary(tally, always=True)
        elif tally.new or tally.changed or tally.gone or tally.skipped:
            self.activity.record("indexed_file", batch_line(tally))
        return tally

    # -- one pass over a path ------------------------------------------------------------------------------------
    async def _sync(self, top: Path, root: Path, tally: Tally) -> None:
        """Bring the rows of `top` (a file or a tree under `root`) in line with the disk."""
        listing = await asyncio.to_thread(walk, top, self.filter)
        tally.reasons.update(listing.left_out)
        tally.hidden_dirs += listing.hidden_dirs
        tally.links += listing.links
        rows = manifest.paths(self.store, self.being, top)
        seen: set[str] = set()
        # a folder that cannot be listed now (chmod 000, an I/O error): the files under it are not gone, they
        # keep their memories and rows until it can be listed again (a breaker run saw them forgotten)
        closed = tuple(f"{path}{os.sep}" for path, _, reason in listing.skipped if reason.startswith("unreadable"))
        for path, st, reason in listing.skipped:
            seen.add(str(path))
            if not self._utf8_name(path, tally):
                continue
            size, mtime_ns = (st.st_size, st.st_mtime_ns) if st else (0, 0)
            await self._handle(path, root, rows.get(str(path)), Seen(size, mtime_ns, "", Skip(reason)), tally)
        for path, st in listing.files:
            if self._stop is not None and self._stop.is_set():
                return
            seen.add(str(path))
            if not self._utf8_name(path, tally):
                continue
            entry = rows.get(str(path))
            if entry is not None and _unchanged(entry, st) and path not in self._retry:
                if entry.state == "indexed":
                    tally.unchanged += 1
                else:
                    tally.count_skip(entry.reason or "skipped")
                continue
            grown_from = entry.size if entry is not None and entry.state == "indexed" and st.st_size > entry.size \
                and appendable(path) else 0
            try:
                found = await asyncio.to_thread(read_file, path, st, self.settings.files_max_bytes,
                                                fallback_title(path, root), grown_from)
            except Exception:  # a bug for one file must not stop the scan (STYLE.md 9: loop boundary)
                log.exception("files: reading %s failed; going on", path)
                tally.failures["error while reading (see the journal)"] += 1
                continue
            if found is None:  # vanished since it was listed: gone, if it was known
                if entry is not None:
                    await self._handle(path, root, entry, None, tally)
                continue
            await self._handle(path, root, entry, found, tally)
        for key, entry in rows.items():
            if key not in seen and not (closed and key.startswith(closed)):
                await self._handle(Path(key), root, entry, None, tally)

    def _utf8_name(self, path: Path, tally: Tally) -> bool:
        """False for a path that is not valid UTF-8 (SQLite, Redis and watchfiles all need text paths): counted in
        `tally`, with one diary line naming it the first time (no manifest row could hold the name, so the line's
        subject is what says it was reported: a rescan or a restart does not repeat it)."""
        try:
            str(path).encode("utf-8")
        except UnicodeEncodeError:
            tally.count_skip(NOT_UTF8)
            shown = escape_controls(os.fsencode(path).decode("utf-8", "backslashreplace"))  # bytes as \xe9
            if activity_named(self.store, self.being, f"file:{shown}"):
                return False
            self.activity.record("indexed_file", f"Files: skipped {shown} ({NOT_UTF8}).", subject=f"file:{shown}")
            tally.skipped += 1
            return False
        return True

    async def _handle(self, path: Path, root: Path, entry: ManifestEntry | None, found: Seen | None,
                      tally: Tally) -> None:
        """Apply one file's final state (`found` None: gone); a failure is logged and the pass goes on."""
        self._retry.pop(path, None)
        try:
            result = found.result if found is not None else None
            if isinstance(result, Skip) and not result.report:
                tally.count_skip(result.reason)  # empty, binary, not a text file: counted, no line of its own
            if result is None or (isinstance(result, Skip) and not result.report):
                if entry is not None:
                    await self._gone(path, root, entry, tally)
            elif isinstance(result, Skip):
                await self._skip(path, root, entry, found, result.reason, tally)
            else:
                await self._index(path, root, entry, found, result, tally)
        except Exception:  # loop boundary (STYLE.md 9)
            log.exception("files: handling %s failed; going on", path)
            tally.failures["error while handling (see the journal)"] += 1

    async def _index(self, path: Path, root: Path, entry: ManifestEntry | None, found: Seen, doc: Document,
                     tally: Tally) -> None:
        if (entry is not None and entry.state == "skipped" and entry.reason == FORGOTTEN_FILE_REASON
                and entry.sha256 and entry.sha256 == found.sha256):
            # forgotten, then touched (an editor's save, a restore, a checkout) with the same bytes: it has not
            # changed, so it stays forgotten (README: "learned again only when it changes")
            manifest.upsert(self.store, self.being, ManifestEntry(str(path), found.size, found.mtime_ns, found.sha256,
                                                                  "skipped", FORGOTTEN_FILE_REASON))
            tally.count_skip(FORGOTTEN_FILE_REASON)
            return
        row = ManifestEntry(str(path), found.size, found.mtime_ns, found.sha256, "indexed")
        if entry is not None and entry.state == "indexed" and entry.sha256 == found.sha256:
            manifest.upsert(self.store, self.being, row)  # touched, same bytes: nothing to learn
            tally.unchanged += 1
            return
        grew = entry is not None and entry.state == "indexed" and found.prefix_sha256 == entry.sha256 != ""
        appended = grew and isinstance(found.appended, Document)  # only grew: its new part alone, its memories kept
        items = ([document_item(self.settings, path, Document(part, found.appended.title), True)
                  for part in appended_parts(found.appended.text)] if appended
                 else [document_item(self.settings, path, doc)])
        if not await self._hand_over(path, root, tally, items, row):
            return
        if entry is not None and entry.state == "indexed":
            tally.changed += 1
        else:
            tally.new += 1

    async def _skip(self, path: Path, root: Path, entry: ManifestEntry | None, found: Seen, reason: str,
                    tally: Tally) -> None:
        """Record a file skipped for what it holds: its row `skipped` with `reason` and one diary line, written once
        until the reason changes. A learned file whose bytes cannot be read now (`KEPT_WHEN`) keeps its memories
        (`_keep`); one whose text is gone (now binary, now a link) has them forgotten, and its line says so. A file
        the owner forgot stays quiet until it can be learned again."""
        tally.count_skip(reason)
        learned = entry is not None and entry.state == "indexed"
        if learned and reason.startswith(KEPT_WHEN):
            self._keep(path, entry, reason, tally)
            return
        forgotten = entry is not None and entry.state == "skipped" and entry.reason == FORGOTTEN_FILE_REASON
        row = ManifestEntry(str(path), found.size, found.mtime_ns, found.sha256, "skipped",
                            FORGOTTEN_FILE_REASON if forgotten else reason)
        if learned and not await self._hand_over(path, root, tally, [Ingest(self.being, file_source(path),
                                                                            mode="forget")], row):
            return  # a skipped row never keeps memories: its text is gone (now binary, now a link)
        if not (forgotten or (entry is not None and entry.state == "skipped" and entry.reason == reason)):
            gone = "; the memories it gave are forgotten" if learned else ""
            self.activity.record("indexed_file", f"Files: skipped {clean_name(str(path))} ({reason}){gone}.",
                                 subject=file_source(path))
            tally.skipped += 1
        if not learned:
            manifest.upsert(self.store, self.being, row)

    def _keep(self, path: Path, entry: ManifestEntry, reason: str, tally: Tally) -> None:
        """A learned file that cannot be learned now (unreadable, grown too large, no longer text) keeps its memories:
        the bytes they came from may well still be there (a chmod, a log past `files_max_bytes`, an editor's
        half-written save), and only a file that is gone or emptied is forgotten (a breaker run saw a chmod 000
        forget a file's memories, a sensitive one among them, with no line saying so). Its row stays `indexed`
        with the old size, mtime and hash and `reason` beside them, so the same bytes readable again are not
        learned again (ids, hits and edges kept) and changed ones are learned as a change. One diary line per
        reason."""
        manifest.upsert(self.store, self.being, ManifestEntry(entry.path, entry.size, entry.mtime_ns, entry.sha256,
                                                              "indexed", reason))
        if entry.reason != reason:
            self.activity.record("indexed_file", f"Files: cannot learn {clean_name(str(path))} now ({reason}); the "
                                                 "memories it gave are kept until it can be read again or is gone.",
                                 subject=file_source(path))
            tally.skipped += 1

    async def _gone(self, path: Path, root: Path, entry: ManifestEntry, tally: Tally) -> None:
        if entry.state == "indexed":
            if not await self._hand_over(path, root, tally, [Ingest(self.being, file_source(path), mode="forget")],
                                         None):
                return
            tally.gone += 1
        else:
            manifest.delete(self.store, self.being, path)

    async def _hand_over(self, path: Path, root: Path, tally: Tally, items: list[Ingest],
                         row: ManifestEntry | None) -> bool:
        """Stage `items` (one file's, of one mode) for the learn worker and save the file's manifest `row` (None:
        delete it) in one transaction (invariant 3: the cursor moves with what it hands over), then queue the job in
        a thread. When the store refuses the write (a full disk, a long lock) the file waits for a retry with
        backoff and False is returned; when Redis refuses the job the item simply waits in SQLite (the supervisor
        queues it once Redis takes writes again), so True."""
        if not tally.blocked:
            try:
                with self.store.atomic():
                    ids = ingest.stage(self.store, items)
                    if row is not None:
                        manifest.upsert(self.store, self.being, row)
                    else:
                        manifest.delete(self.store, self.being, path)
            except (sqlite3.Error, StoreError) as exc:
                tally.blocked = True
                if not self.unwritable:
                    self.unwritable = True
                    log.warning("files: the store refused a write (%s); changes wait and are retried", exc)
            else:
                if self.unwritable:
                    self.unwritable = False
                    log.info("files: the store takes writes again; handing over what waited")
                await self._queue(ids, items[0].mode)
                return True
        self._retry[path] = root
        self._retry_wanted.set()
        tally.deferred += 1
        return False

    async def _queue(self, ids: list[int], mode: str) -> None:
        """Put staged `ids` on a learn job (Redis in a thread, the record of it on the loop's thread)."""
        try:
            jobs = await asyncio.to_thread(self.bus.enqueue_items, self.being, ids, mode)
        except RedisError as exc:
            if not self.unreachable:
                self.unreachable = True
                log.warning("files: Redis refused a learn job (%s); staged files wait in SQLite", exc)
            return
        if self.unreachable:
            self.unreachable = False
            log.info("files: Redis takes learn jobs again")
        for chunk, job_id in jobs:
            ingest.mark_queued(self.store, chunk, job_id)

    def _summary(self, tally: Tally, always: bool) -> None:
        """The scan's line (`always`: every file found, `scan_line`) or, when a batch changed something, its
        `batch_line`."""
        if always:
            self.activity.record("indexed_file", scan_line(tally))
        elif tally.any:
            self.activity.record("indexed_file", batch_line(tally))
        if tally.deferred:
            log.info("files: %d file(s) wait for the store", len(self._retry))

    # -- live ----------------------------------------------------------------------------------------------------
    async def _on_changes(self, changes: set[tuple[watchfiles.Change, str]]) -> None:
        """One watchfiles batch: each path's final state is what `lstat` says now (events are unordered). Files
        wait in `settling` until they settle (`_settle_loop` learns them); the rest (gone, a directory) at once."""
        tally = Tally(blocked=self.unwritable)  # while the store refuses, only the retry task tries it
        paths = await asyncio.to_thread(canonical, {path for _, path in changes}, self.filter)
        now = await asyncio.to_thread(self.settling.hold, paths)
        if len(now) < len(paths):
            self._settle_wanted.set()
        async with self._lock:
            for path, root in now:
                await self._sync(path, root, tally)
        self._summary(tally, always=False)

    async def _settle_loop(self, stop: asyncio.Event) -> None:
        """Learn the held files once they settle (`Settling.due`), all that settled together in one pass (one
        diary line), checking again when the next one may have settled."""
        while not stop.is_set():
            if not len(self.settling):
                self._settle_wanted.clear()
                if await _first_of(stop, self._settle_wanted):
                    return
                continue
            due, wait_s = await asyncio.to_thread(self.settling.due)
            if due:
                tally = Tally(blocked=self.unwritable)
                async with self._lock:
                    for path, root in due:
                        await self._sync(path, root, tally)
                self._summary(tally, always=False)
            if await stopped_within(stop, wait_s):
                return

    async def _retry_loop(self, stop: asyncio.Event) -> None:
        """Hand over the files that waited for the store: after 1 s, doubling to at most 60 s while it refuses."""
        delay_s = RETRY_MIN_S
        while not stop.is_set():
            if not self._retry:
                delay_s = RETRY_MIN_S
                self._retry_wanted.clear()
                await _first_of(stop, self._retry_wanted)
                continue
            if await stopped_within(stop, delay_s):
                return
            tally = Tally()
            async with self._lock:
                for path, root in sorted(self._retry.items()):
                    await self._sync(path, root, tally)
            self._summary(tally, always=False)
            delay_s = RETRY_MIN_S if not self._retry else min(delay_s * 2, RETRY_MAX_S)


async def _first_of(stop: asyncio.Event, wanted: asyncio.Event) -> bool:
    """Wait until `stop` or `wanted` is set; True when `stop` is."""
    waits = [asyncio.create_task(stop.wait()), asyncio.create_task(wanted.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()
    return stop.is_set()
