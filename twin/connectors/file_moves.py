"""The files a change of a `files` binding moves (issue 19 gap: "a user who binds ~/household expects the household
notes already learned to be in the project now"): the files the connector learned at or under the folder (its
manifest's `indexed` rows; a `skipped` row has no memories) whose namespace the change gives another value
(`twin.ingest.bound_namespace` under the bindings before and after it), each read again as the connector reads it
(`twin.connectors.file_walk.read_file`, `document_item`) and handed over with its manifest row, as the connector
hands a changed file over: staged by `twin.ingest.restage` (a `forget` of its source where it was, the whole text
where the bindings now put it) in the transaction that changes the binding. So the move waits in SQLite, not on the
daemon: the learn worker carries it out when it runs (the supervisor queues what is staged, `Bus.queue_ready`).

`twin.operations.project_sources` calls it. Only what the connector learned moves (the manifest holds nothing else),
titled against the innermost files root that holds it, as the scan titles it; a file under a root that is missing
now (an unmounted disk) stays where it is, as the scan leaves its rows ("an unmounted disk is not a deletion").
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from twin import ingest
from twin.connectors.file_text import Document
from twin.connectors.file_walk import read_file
from twin.connectors.files import document_item, fallback_title, file_source
from twin.ingest import Ingest, bound_namespace
from twin.settings import Settings
from twin.store import Store, manifest
from twin.store.manifest import ManifestEntry
from twin.store.project_sources import SourceBinding


class FileMove(NamedTuple):
    """One learned file a binding change moves: `path` (absolute, as the manifest keys it); `item` its whole text
    as a `document` (the `twin.ingest.Ingest` the connector would stage), or a `forget` of it when it is gone or
    no longer learnable (empty, binary, too large, unreadable: as the connector's scan would forget it); `left` the
    namespace its memories are in now (the bindings before the change); `row` its manifest row to save with it
    (None: the row is deleted, the file being gone or nothing the connector reports)."""

    path: str
    item: Ingest
    left: str
    row: ManifestEntry | None


def moving_files(settings: Settings, store: Store, folder: str, before: Iterable[SourceBinding],
                 after: Iterable[SourceBinding]) -> list[FileMove]:
    """The files `settings.being` learned at or under `folder` (an absolute path) whose namespace differs under the
    bindings `after` the change from under those `before` it, by path; each read again now (blocking: it reads
    every moving file, at most `files_max_bytes` each). Writes nothing."""
    before, after = list(before), list(after)
    out = []
    for key, entry in sorted(manifest.paths(store, settings.being, folder).items()):
        probe = Ingest(settings.being, file_source(Path(key)), mode="document")
        left = bound_namespace(probe, before)
        if entry.state == "indexed" and left != bound_namespace(probe, after):
            move = _read_again(settings, Path(key), left)
            out += [move] if move is not None else []
    return out


def hand_over(store: Store, moves: Iterable[FileMove], being: str) -> list[int]:
    """Stage `moves` (`twin.ingest.restage`, after the binding changed: it reads the bindings now) and save their
    manifest rows, in one transaction (the caller's, the one that changed the binding, when open). Returns the
    staged ids in order. Raises `sqlite3.Error` when the store cannot write (then nothing of it is kept)."""
    moves = list(moves)
    with store.atomic():
        ids = ingest.restage(store, [(m.item, m.left) for m in moves])
        for m in moves:
            if m.row is None:
                manifest.delete(store, being, m.path)
            else:
                manifest.upsert(store, being, m.row)
    return ids


def _read_again(settings: Settings, path: Path, left: str) -> FileMove | None:
    """The move of the learned file at `path`, read now as the connector's scan reads it (`FilesConnector._handle`:
    a text is a `document`; a skip the connector reports keeps a `skipped` row, a silent one or a gone file none,
    their memories forgotten); None when its files root is missing (nothing is read, nothing moves)."""
    roots = sorted((str(r) for r in settings.files_roots), key=len, reverse=True)
    root = next((Path(r) for r in roots if str(path).startswith(r.rstrip(os.sep) + os.sep)), None)
    if root is not None and not root.is_dir():
        return None
    root = root or path.parent  # no root holds it any more: titled by its name
    try:
        found = read_file(path, os.lstat(path), settings.files_max_bytes, fallback_title(path, root))
    except OSError:  # gone, or its folder unreadable: as the scan, which lists it no more
        found = None
    forget = Ingest(settings.being, file_source(path), mode="forget")
    if found is None:
        return FileMove(str(path), forget, left, None)
    if isinstance(found.result, Document):
        row = ManifestEntry(str(path), found.size, found.mtime_ns, found.sha256, "indexed")
        return FileMove(str(path), document_item(settings, path, found.result), left, row)
    row = ManifestEntry(str(path), found.size, found.mtime_ns, found.sha256, "skipped", found.result.reason)
    return FileMove(str(path), forget, left, row if found.result.report else None)
