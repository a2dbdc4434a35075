"""The fetch part of the files connector (STYLE.md 3): which paths it looks at (`PathFilter`), listing a tree
(`walk`), reading and hashing one file (`read_file`) and turning watchfiles' event paths into real paths
(`canonical`). Blocking I/O, run in threads by `twin.connectors.files`; every name a listing leaves out is counted by
reason, so the connector can account for every file (`twin.connectors.files_tally`).
"""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
import re
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import watchfiles

from twin.connectors.file_text import SNIFF_BYTES, Document, Skip, sniffs_as_text, text_kind, to_text

IGNORED_DIRS = frozenset(watchfiles.DefaultFilter.ignore_dirs)
IGNORED_NAMES = tuple(re.compile(p) for p in watchfiles.DefaultFilter.ignore_entity_patterns)
"""Directory names and file-name patterns never read (watchfiles' defaults); hidden names are ignored too."""


class PathFilter:
    """Which paths the connector looks at: inside a root, with no hidden (`.x`) or ignored directory (.git,
    node_modules, … as watchfiles' DefaultFilter) between the root and the name, no ignored name pattern
    (editor backups), and not inside twin's own directories (data, config: secrets, runtime). Also serves as
    the watchfiles `watch_filter`. Paths are absolute strings; no I/O.

    `ignore_files` (the `files_ignore` setting) are case-sensitive `fnmatch` globs on a file's name; `walk()`
    leaves such files out like an unknown suffix (see `learns`). They do not apply to directories, so
    `accepts` and the watch filter let those names through; an event for one finds nothing to learn."""

    def __init__(self, roots: Iterable[Path], ignore_paths: Iterable[Path], ignore_files: Iterable[str] = ()):
        self.roots = sorted({str(r) for r in roots}, key=len, reverse=True)
        self.ignore_paths = tuple(str(p).rstrip(os.sep) for p in ignore_paths)
        self.ignore_files = tuple(ignore_files)

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        """The watchfiles `watch_filter` hook: `accepts(path)`, whatever the change."""
        return self.accepts(path)

    def root_of(self, path: str) -> str | None:
        """The innermost root that holds `path` (or is `path`), or None."""
        return next((r for r in self.roots if path == r or path.startswith(r.rstrip(os.sep) + os.sep)), None)

    def accepts(self, path: str) -> bool:
        """True when the connector should look at `path` (see the class docstring)."""
        if any(path == p or path.startswith(p + os.sep) for p in self.ignore_paths):
            return False
        root = self.root_of(path)
        if root is None:
            return False
        parts = [p for p in path[len(root):].split(os.sep) if p]
        if any(p.startswith(".") or p in IGNORED_DIRS for p in parts):
            return False
        return not parts or not any(r.search(parts[-1]) for r in IGNORED_NAMES)

    def left_out(self, name: str) -> str | None:
        """Why a file called `name` is not read, or None when it may be: "hidden name" (a dotfile: configs,
        caches and secrets such as `.netrc`, on purpose), "editor or temporary file" (watchfiles' patterns),
        "ignored name" (a `files_ignore` glob: licence texts, changelogs, build files), "not a text file" (a
        suffix `text_kind` does not know: photos, code, office files). No I/O."""
        if name.startswith("."):
            return "hidden name"
        if any(r.search(name) for r in IGNORED_NAMES):
            return "editor or temporary file"
        if any(fnmatch.fnmatchcase(name, g) for g in self.ignore_files):
            return "ignored name"
        return "not a text file" if text_kind(Path(name)) is None else None

    def learns(self, path: Path) -> bool:
        """True when a file named like `path` may be learned: `text_kind` knows its suffix and its name
        matches none of the `ignore_files` globs (`debian/changelog.gz` matches `changelog*`)."""
        return text_kind(path) is not None and not any(fnmatch.fnmatchcase(path.name, g) for g in self.ignore_files)


@dataclass
class Listing:
    """What `walk()` found: candidate files with their `lstat`, paths skipped as a whole with a reason, files
    left out by their name (`PathFilter.left_out`: reason -> count) and folders not entered (hidden or a
    tool's, such as .git and node_modules)."""

    files: list[tuple[Path, os.stat_result]] = field(default_factory=list)
    skipped: list[tuple[Path, os.stat_result | None, str]] = field(default_factory=list)
    left_out: Counter = field(default_factory=Counter)
    hidden_dirs: int = 0
    links: int = 0
    """Symlinks to files inside a root: not read through the link (each file is read once, under its own path)."""


def _unreadable(exc: OSError, what: str = "unreadable") -> str:
    reasons = {errno.ENOENT: "broken symlink", errno.ELOOP: "symlink loop", errno.EACCES: "permission denied",
               errno.EPERM: "permission denied"}
    return f"{what}: {reasons.get(exc.errno) or (exc.strerror or str(exc)).lower()}"


def _link(path: Path, st: os.stat_result, listing: Listing, accept: PathFilter) -> None:
    try:
        target = os.stat(path)
    except OSError as exc:
        if accept.learns(path):
            listing.skipped.append((path, st, _unreadable(exc)))
        return
    if stat.S_ISDIR(target.st_mode):
        listing.skipped.append((path, st, "symlink to a directory, not followed"))
    elif accept.learns(path) and accept.root_of(os.path.realpath(path)) is None:
        listing.skipped.append((path, st, "symlink to a file outside the roots"))
    elif accept.learns(path):  # that file is read once, under its own path: counted, not read twice
        listing.links += 1


def walk(top: Path, accept: PathFilter) -> Listing:
    """List `top` (one file, or a directory tree) without following directory symlinks; blocking.

    A missing `top`, or one reached through a symlinked directory, gives an empty listing. Unreadable
    directories, symlinks to directories (never followed, so no loops), broken or looping symlinks and
    symlinks to files outside the roots are listed as skipped; a symlink to a file inside a root is left
    out (that file is read under its own path); file names `accept.learns` refuses (an unknown suffix, a
    `files_ignore` glob, a hidden name) are left out and counted by reason in `left_out`, so a row for one
    counts as gone; hidden and tool folders are not entered and are counted in `hidden_dirs`.
    """
    listing = Listing()
    try:
        st = os.lstat(top)
    except (FileNotFoundError, NotADirectoryError):
        return listing
    except OSError as exc:
        listing.skipped.append((top, None, _unreadable(exc)))
        return listing
    if accept.root_of(str(top)) != str(top) and os.path.realpath(top.parent) != str(top.parent):
        return listing
    pending: list[tuple[Path, os.stat_result]] = [(top, st)]
    while pending:
        path, st = pending.pop()
        if stat.S_ISLNK(st.st_mode):
            _link(path, st, listing, accept)
        elif not stat.S_ISDIR(st.st_mode):
            if accept.learns(path):
                listing.files.append((path, st))
        else:
            try:
                found = _entries(path, accept, listing)
            except OSError as exc:
                listing.skipped.append((path, st, _unreadable(exc, "unreadable directory")))
                continue
            for entry in sorted(found, key=lambda e: e.name, reverse=True):
                try:
                    pending.append((Path(entry.path), entry.stat(follow_symlinks=False)))
                except (FileNotFoundError, NotADirectoryError):
                    continue  # vanished meanwhile: its row, if any, is gone
                except OSError as exc:  # a path longer than PATH_MAX, an I/O error: skipped with its reason
                    listing.skipped.append((Path(entry.path), None, _unreadable(exc)))
    return listing


def _entries(path: Path, accept: PathFilter, listing: Listing) -> list[os.DirEntry]:
    """The entries of directory `path` to look at; names left out are counted in `listing` (d_type only: no stat
    for names never read, such as photos). Raises `OSError` when the directory cannot be listed."""
    found = []
    with os.scandir(path) as entries:
        for entry in entries:
            if any(entry.path == p or entry.path.startswith(p + os.sep) for p in accept.ignore_paths):
                continue  # twin's own directories: not the owner's files
            if entry.is_symlink():
                if accept.accepts(entry.path):
                    found.append(entry)
                else:
                    listing.left_out["hidden name"] += 1
            elif entry.is_dir(follow_symlinks=False):
                if entry.name.startswith(".") or entry.name in IGNORED_DIRS:
                    listing.hidden_dirs += 1
                else:
                    found.append(entry)
            elif (why := accept.left_out(entry.name)) is not None:
                listing.left_out[why] += 1
            else:
                found.append(entry)
    return found


APPENDABLE_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".log", ".csv", ""})
"""Files whose bytes read as text line after line (not `.gz`, HTML, JSON): when one only grew, its new bytes
alone are its new text (`read_file`'s `grown_from`)."""


def appendable(path: Path) -> bool:
    """Whether a file at `path` that only grew can be learned by its appended bytes alone (`APPENDABLE_SUFFIXES`)."""
    name = path.name.lower()
    return not name.endswith(".gz") and os.path.splitext(name)[1] in APPENDABLE_SUFFIXES


@dataclass(frozen=True)
class Seen:
    """One file as read: size (bytes on disk), mtime_ns, hex SHA-256 of its bytes (`""` when not read)
    and what `to_text` made of it. `prefix_sha256` is the hex SHA-256 of its first `grown_from` bytes and
    `appended` what `to_text` made of the bytes after them, titled as the whole file, when `read_file` was asked
    (`""` and None otherwise)."""

    size: int
    mtime_ns: int
    sha256: str
    result: Document | Skip
    prefix_sha256: str = ""
    appended: Document | Skip | None = None


def read_file(path: Path, st: os.stat_result, max_bytes: int, fallback_title: str, grown_from: int = 0
              ) -> Seen | None:
    """Read and hash one file (at most `max_bytes` + 1 bytes, never following a symlink, never blocking on a
    FIFO) and run `to_text`; blocking. Never raises for the file's sake: unreadable, not a regular file or
    too large (`st_size` > `max_bytes`) come back as a `Skip`; a file that vanished since it was listed (deleted
    or renamed away meanwhile) as None, so the caller treats it as gone. `grown_from` (bytes, the size the file
    had when it was last learned; 0: not asked) also hashes that prefix and reads the bytes after it
    (`Seen.prefix_sha256`, `Seen.appended`), so the caller can tell a file that only grew."""
    def skip(reason: str, size: int = st.st_size, mtime_ns: int = st.st_mtime_ns) -> Seen:
        return Seen(size, mtime_ns, "", Skip(reason))

    if not stat.S_ISREG(st.st_mode):
        return skip("unreadable: not a regular file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return skip(_unreadable(exc))
    with open(fd, "rb") as fh:
        fst = os.fstat(fh.fileno())
        if not stat.S_ISREG(fst.st_mode):
            return skip("unreadable: not a regular file")
        try:
            if fst.st_size > max_bytes:
                silent = text_kind(path) == "sniff" and not path.name.lower().endswith(".gz") \
                    and not sniffs_as_text(fh.read(SNIFF_BYTES))
                return Seen(fst.st_size, fst.st_mtime_ns, "", Skip("binary", False) if silent else Skip("too large"))
            raw = fh.read(max_bytes + 1)
        except OSError as exc:
            return skip(_unreadable(exc), fst.st_size, fst.st_mtime_ns)
    digest = hashlib.sha256(raw).hexdigest()
    result = to_text(path, raw, max_bytes=max_bytes, fallback_title=fallback_title)
    if not (0 < grown_from < len(raw) and isinstance(result, Document)):
        return Seen(fst.st_size, fst.st_mtime_ns, digest, result)
    appended = to_text(path, raw[grown_from:], max_bytes=max_bytes, fallback_title=fallback_title)
    return Seen(fst.st_size, fst.st_mtime_ns, digest, result, hashlib.sha256(raw[:grown_from]).hexdigest(),
                Document(appended.text, result.title) if isinstance(appended, Document) else appended)


def canonical(paths: Iterable[str], accept: PathFilter) -> list[tuple[Path, Path]]:
    """Event paths as sorted `(path, root)` pairs, each under its real parent directory, keeping those `accept`
    takes; blocking. watchfiles follows directory symlinks and may report a file only through the link
    (`root/up/root/x.md` for `root/x.md`, seen with watchfiles 1.3), so the real path is what is synced."""
    found: dict[str, str] = {}
    for raw in paths:
        real = os.path.join(os.path.realpath(os.path.dirname(raw)), os.path.basename(raw))
        root = accept.root_of(real)
        if root is not None and accept.accepts(real):
            found[real] = root
    return sorted((Path(p), Path(r)) for p, r in found.items())
