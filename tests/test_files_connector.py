"""The files connector with real parts: real files in temp dirs, the private Redis, real RQ burst workers,
real SQLite and the real model. Nothing is mocked."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import pwd
import shutil
import sqlite3
import subprocess
import tempfile
import time
import traceback
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from conftest import drain
from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq import Queue

from twin import ingest
from twin.activity import Activity
from twin.connectors import REGISTRY
from twin.connectors.file_text import Document, Skip, to_text
from twin.connectors.files import FilesConnector, PathFilter, is_watch_limit
from twin.settings import Settings
from twin.store import Store, manifest
from twin.store.manifest import ManifestEntry
from twin.workers.bus import LEARN_QUEUE, Bus

T = TypeVar("T")

NOTES = ("# Garden notes\n\nThe garden shed holds the blue bicycle and two red kayaks.\n"
         "Tomatoes go into the north bed every April after the last frost.\n")
NOTES_V2 = ("# Garden notes\n\nThe garden shed now stores a green canoe and the lawnmower.\n"
            "Tomatoes go into the north bed every April after the last frost.\n")
README = b"rsync copies files between machines over ssh quickly.\nIt sends only the differences between files.\n"
PAGE = (b"<html><head><title>Trip to Lisbon</title><style>p {color: red}</style></head><body>"
        b"<h1>Lisbon</h1><p>The hotel near Alfama had a rooftop terrace with a view of the river.</p>"
        b"<script>var secret = 'quokka';</script></body></html>")


# -- helpers ---------------------------------------------------------------------------------------------------
def make(settings, store, redis, activity, root: Path, **update) -> FilesConnector:
    """A connector over `root` with `update` applied to the test settings."""
    return FilesConnector(settings.model_copy(update={"files_roots": [root], **update}), store, Bus(redis), activity)


def lines(activity) -> list[str]:
    return [line.text for line in activity.recent(1000)]


def memories(store, being: str, path: Path) -> list[int]:
    return store.ids_by_source(being, f"file:{path}")


def fts_hits(store, word: str) -> list[int]:
    return [r[0] for r in store.conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (word,))]


def learn_jobs(redis) -> int:
    return Queue(LEARN_QUEUE, connection=redis).count


@pytest.fixture
def root(tmp_path) -> Path:
    path = (tmp_path / "notes").resolve()
    path.mkdir()
    return path


async def wait_for(predicate, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail("condition not met before the deadline")
        await asyncio.sleep(0.05)


def start_redis(directory: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    """A private redis-server of its own on a unix socket in `directory`, with `extra` arguments (for the tests that
    stop it or change its configuration)."""
    sock = directory / "r.sock"
    proc = subprocess.Popen([shutil.which("redis-server"), "--port", "0", "--unixsocket", str(sock), "--save", "",
                             "--appendonly", "no", "--dir", str(directory), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"unix://{sock}?db=0"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if sock.exists() and Redis.from_url(url).ping():
                return proc, url
        except Exception:
            pass
        time.sleep(0.02)
    proc.kill()
    pytest.fail("redis-server did not start")


# -- to_text: pure -----------------------------------------------------------------------------------------------
def test_registry():
    assert REGISTRY["files"].load() is FilesConnector
    with pytest.raises(KeyError):
        REGISTRY["fax"]


def test_markdown_title_and_fallback():
    doc = to_text(Path("n.md"), NOTES.encode())
    assert doc == Document(NOTES.strip(), "n.md (Garden notes)")
    assert to_text(Path("n.md"), b"Intro\n=====\n\nSome text.").title == "n.md (Intro)"
    assert to_text(Path("n.md"), b"---\ntitle: From front matter\n---\n# H\nbody").title == "n.md (From front matter)"
    assert to_text(Path("x.rst"), b"=====\nRst T\n=====\n\nbody").title == "x.rst (Rst T)"
    assert to_text(Path("x.org"), b"#+TITLE: Org T\n* Head\nbody").title == "x.org (Org T)"
    assert to_text(Path("log.txt"), b"plain text line", fallback_title="logs/log.txt").title == "logs/log.txt"
    # the heading follows the path, once
    assert to_text(Path("g.md"), b"# Garden\nbody", fallback_title="notes/garden.md").title == "notes/garden.md"
    assert to_text(Path("g.md"), b"# Plan\nbody", fallback_title="notes/g.md").title == "notes/g.md (Plan)"


def test_gzip_text_title_is_the_relative_path():
    doc = to_text(Path("README.gz"), gzip.compress(README), fallback_title="rsync/README")
    assert doc == Document(README.decode().strip(), "rsync/README")
    changes = to_text(Path("changelog.md.gz"), gzip.compress(b"# Changes\n\nv2 fixed it."))
    assert changes.title == "changelog.md (Changes)"
    assert to_text(Path("a.txt.gz"), b"not gzip at all") == Skip("corrupt gzip")


def test_html_to_text():
    doc = to_text(Path("trip.html"), PAGE)
    assert doc.title == "trip.html (Trip to Lisbon)"
    assert "rooftop terrace" in doc.text and "Lisbon" in doc.text
    assert "quokka" not in doc.text and "color" not in doc.text


def test_encodings():
    assert to_text(Path("u.txt"), "Grüße aus Köln, sagte sie.".encode("utf-16")).text == "Grüße aus Köln, sagte sie."
    assert to_text(Path("u.txt"), b"\xef\xbb\xbfBOM text here").text == "BOM text here"
    assert to_text(Path("bin.txt"), b"PK\x03\x04\x00\x00binary") == Skip("binary")
    assert to_text(Path("latin.txt"), "café crème".encode("latin-1")) == Skip("undecodable")
    assert to_text(Path("big.txt"), b"x" * 101, max_bytes=100) == Skip("too large")
    assert to_text(Path("empty.md"), b" \n\t") == Skip("empty", report=False)
    # extensionless files are read only when they sniff as text; otherwise ignored silently
    assert to_text(Path("NEWS"), b"Version 2 adds a dark theme.").title == "NEWS"
    assert to_text(Path("prog"), b"\x7fELF\x02\x01\x00\x00") == Skip("binary", report=False)
    assert to_text(Path("photo.jpg"), b"anything").report is False


def test_gzip_bomb_is_bounded():
    bomb = gzip.compress(b"\0" * 64_000_000, compresslevel=9)
    assert len(bomb) < 200_000
    tracemalloc.start()
    try:
        result = to_text(Path("bomb.txt.gz"), bomb, max_bytes=1_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result == Skip("too large")
    assert peak < 8_000_000, peak


def test_manifest_paths_and_counts(store):
    for path, state in (("/a/b", "indexed"), ("/a/b/c.md", "indexed"), ("/a/bc.md", "skipped"), ("/x.md", "indexed")):
        manifest.upsert(store, "owner", ManifestEntry(path, 1, 2, "s", state, None if state == "indexed" else "binary"))
    assert set(manifest.paths(store, "owner", Path("/a/b"))) == {"/a/b", "/a/b/c.md"}
    assert manifest.counts(store, "owner") == {"indexed": 3, "skipped": 1}
    assert manifest.delete(store, "owner", "/a/b") and not manifest.delete(store, "owner", "/a/b")
    assert manifest.get(store, "owner", "/a/bc.md").reason == "binary"
    with pytest.raises(ValueError):
        manifest.upsert(store, "owner", ManifestEntry("/y", 1, 2, "s", "maybe"))


def test_watch_limit_is_recognised():
    assert is_watch_limit(OSError("OS file watch limit reached. about [Errno 28] No space left on device"))
    assert not is_watch_limit(FileNotFoundError(2, "No such file or directory"))


def test_filter_ignores_hidden_and_twin_dirs(root):
    f = PathFilter([root], [root / "twin-data"])
    assert f.accepts(str(root / "a" / "b.md")) and f.accepts(str(root))
    for bad in (".git/HEAD", "x/.env", "twin-data/twin.db", "node_modules/x.md", "n.md~", "/elsewhere/a.md"):
        assert not f.accepts(str(root / bad)), bad


def test_filter_ignores_file_name_globs(root):
    f = PathFilter([root], [], ["LICENSE*", "changelog*", "copyright"])
    for name in ("LICENSE", "LICENSE.md", "changelog.gz", "changelog.Debian.gz", "copyright"):
        assert not f.learns(root / "pkg" / name), name
    for name in ("README", "notes.md", "license.md", "my-changelog.txt", "copyright.md", "photo.jpg"):
        assert f.learns(root / name) == (name != "photo.jpg"), name  # case-sensitive, whole name
    assert f.accepts(str(root / "changelog")) and f(None, str(root / "LICENSE"))  # directories are not matched
    assert PathFilter([root], []).learns(root / "LICENSE")


# -- the scan against the real queue and workers -----------------------------------------------------------------
def test_new_changed_gone_end_to_end(twin_env, store, activity, redis, root):
    being = twin_env.being
    notes, readme, page = root / "notes.md", root / "rsync" / "README.gz", root / "trip.html"
    readme.parent.mkdir()
    notes.write_text(NOTES)
    readme.write_bytes(gzip.compress(README))
    page.write_bytes(PAGE)

    tally = asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    assert (tally.new, tally.changed, tally.gone, tally.skipped) == (3, 0, 0, 0)
    assert lines(activity)[-1] == ("Files: found 3 files: 3 to learn (3 new, 0 changed), 0 already learned, 0 skipped,"
                                   " 0 failed; 0 gone.")
    drain()
    for path in (notes, readme, page):
        ids = memories(store, being, path)
        assert ids, path
        assert store.live_embedding_ids(ids) == set(ids), path  # embedded
    readme_memories = [store.get(i).content for i in memories(store, being, readme)]
    assert all(m.startswith("rsync/README: ") for m in readme_memories), readme_memories
    assert fts_hits(store, "kayaks") and fts_hits(store, "terrace") and not fts_hits(store, "quokka")

    notes.write_text(NOTES_V2)  # changed: the file's memories are replaced
    page.unlink()  # gone: its memories are forgotten
    tally = asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    assert (tally.new, tally.changed, tally.gone) == (0, 1, 1)
    assert lines(activity)[-1] == ("Files: found 2 files: 1 to learn (0 new, 1 changed), 1 already learned, 0 skipped,"
                                   " 0 failed; 1 gone.")
    drain()
    assert not fts_hits(store, "kayaks") and fts_hits(store, "canoe")
    ids = memories(store, being, notes)
    assert ids and store.live_embedding_ids(ids) == set(ids)
    assert memories(store, being, page) == [] and not fts_hits(store, "terrace")
    assert manifest.get(store, being, page) is None
    assert manifest.counts(store, being) == {"indexed": 2, "skipped": 0}


def test_restart_relearns_nothing_unchanged(twin_env, store, activity, redis, root):
    for i in range(5):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nThe number {i} is written on the kitchen door.\n")
    asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    assert learn_jobs(redis) == 5
    before = manifest.paths(store, twin_env.being, root)

    tally = asyncio.run(make(twin_env, store, redis, activity, root).scan_once())  # a restart
    assert (tally.new, tally.changed, tally.skipped) == (0, 0, 0)
    assert learn_jobs(redis) == 5
    assert manifest.paths(store, twin_env.being, root) == before
    assert lines(activity)[-1] == ("Files: found 5 files: 0 to learn (0 new, 0 changed), 5 already learned, 0 skipped,"
                                   " 0 failed; 0 gone.")

    touched = root / "n0.md"  # new mtime, same bytes: only the row moves
    os.utime(touched, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    tally = asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    assert (tally.new, tally.changed) == (0, 0) and learn_jobs(redis) == 5
    assert manifest.get(store, twin_env.being, touched).mtime_ns == touched.stat().st_mtime_ns


def test_a_forgotten_file_touched_with_the_same_bytes_stays_forgotten(twin_env, store, activity, redis, root):
    """The owner forgot a file that is still in a watched folder: an editor's save, a backup's restore or a
    checkout that only moves its mtime leaves it forgotten (README: learned again only when it changes); a change
    of its bytes learns it again. Found by a breaker run (`touch` brought the memories back)."""
    kept = root / "kept.md"
    kept.write_text(NOTES)
    asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    assert learn_jobs(redis) == 1
    manifest.mark_forgotten(store, twin_env.being, str(kept))  # what `twin forget --source file:…` leaves
    os.utime(kept, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    tally = asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    assert (tally.new, tally.changed) == (0, 0) and learn_jobs(redis) == 1
    entry = manifest.get(store, twin_env.being, kept)
    assert entry.state == "skipped" and entry.mtime_ns == kept.stat().st_mtime_ns  # the row follows the file
    kept.write_text(NOTES_V2)  # changed: learned again
    tally = asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    assert learn_jobs(redis) == 2 and manifest.get(store, twin_env.being, kept).state == "indexed"


def test_emptied_or_now_binary_file_forgets_its_memories(twin_env, store, activity, redis, root):
    emptied, binary = root / "emptied.md", root / "binary.txt"
    emptied.write_text("The ladder is kept in the garage behind the door.")
    binary.write_text("The fuse box is in the hallway cupboard.")
    asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    emptied.write_text("")
    binary.write_bytes(b"\x00\x01binary now")
    tally = asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    assert (tally.gone, tally.skipped) == (1, 1)
    staged = ingest.fetch(store, [i for job in Queue(LEARN_QUEUE, connection=redis).jobs for i in job.kwargs["ids"]])
    assert [(s.item.mode, s.item.source) for s in staged][2:] == [("forget", f"file:{binary}"),
                                                                  ("forget", f"file:{emptied}")]
    assert manifest.get(store, twin_env.being, emptied) is None
    assert manifest.get(store, twin_env.being, binary).state == "skipped"
    assert lines(activity)[-1] == ("Files: found 2 files: 0 to learn (0 new, 0 changed), 0 already learned, 2 skipped"
                                   " (1 binary, 1 empty), 0 failed; 1 gone.")


def test_bad_files_are_skipped_once_and_the_rest_indexed(twin_env, store, activity, redis, root, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("A note that lives outside the roots.")
    (root / "ok.md").write_text("# Fine\n\nThe spare key hangs behind the calendar.\n")
    (root / "NEWS").write_text("Version 2 of the recipe uses less sugar.\n")
    (root / "binary.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (root / "big.txt").write_text("long line of words. " * 200)
    (root / "latin.txt").write_bytes("café crème brûlée".encode("latin-1"))
    os.mkfifo(root / "pipe.txt")
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    (root / "a").symlink_to(".")  # a symlink loop
    (root / "link.md").symlink_to(outside)
    (root / "inside.md").symlink_to(root / "ok.md")  # read once, as ok.md
    (root / "empty.txt").write_text("")  # silent
    (root / "photo.jpg").write_bytes(b"\xff\xd8\xff")  # ignored
    (root / "prog").write_bytes(b"\x7fELF\x02\x01\x00")  # extensionless binary: ignored
    (root / "twin-data").mkdir()
    (root / "twin-data" / "secret.txt").write_text("the data dir is never read")
    conn = make(twin_env, store, redis, activity, root, files_max_bytes=1000, data_dir=root / "twin-data")

    tally = asyncio.run(conn.scan_once())
    expected = {"binary.txt": "binary", "big.txt": "too large", "latin.txt": "undecodable",
                "pipe.txt": "unreadable: not a regular file", "dangling.md": "unreadable: broken symlink",
                "a": "symlink to a directory, not followed", "link.md": "symlink to a file outside the roots"}
    skips = [t for t in lines(activity) if t.startswith("Files: skipped")]
    assert sorted(skips) == sorted(f"Files: skipped {root / name} ({why})." for name, why in expected.items())
    assert (tally.new, tally.skipped) == (2, len(expected))
    assert lines(activity)[-1] == (  # every file is accounted for, the quiet ones (empty, photo, prog) too
        "Files: found 12 files: 2 to learn (2 new, 0 changed), 0 already learned, 10 skipped (2 binary, 1 empty, 1 not a"
        " text file, 1 symlink to a directory, not followed, 1 symlink to a file outside the roots, 1 too large,"
        " 1 undecodable, 1 unreadable: broken symlink, 1 unreadable: not a regular file), 0 failed; 0 gone;"
        " 1 symlink to a file in the folders, read under its own path.")  # inside.md: counted, read as ok.md
    indexed = {p for p, e in manifest.paths(store, twin_env.being, root).items() if e.state == "indexed"}
    assert indexed == {str(root / "ok.md"), str(root / "NEWS")}
    assert manifest.get(store, twin_env.being, root / "big.txt").reason == "too large"

    count = len(lines(activity))
    tally = asyncio.run(make(twin_env, store, redis, activity, root, files_max_bytes=1000).scan_once())
    assert tally.skipped == 0 and len(lines(activity)) == count + 1  # a restart reports nothing again
    (root / "binary.txt").write_bytes(b"\x00changed binary")  # changed, still binary: not reported again
    count = len(lines(activity))
    asyncio.run(make(twin_env, store, redis, activity, root, files_max_bytes=1000).scan_once())
    assert len(lines(activity)) == count + 1 and lines(activity)[-1].startswith("Files: found")
    (root / "binary.txt").write_bytes(b"x" * 2000)  # a new reason is reported
    asyncio.run(make(twin_env, store, redis, activity, root, files_max_bytes=1000).scan_once())
    assert lines(activity)[-2] == f"Files: skipped {root / 'binary.txt'} (too large)."


def test_files_ignore_leaves_licence_and_changelog_out(twin_env, store, activity, redis, root):
    being = twin_env.being
    readme, licence, changelog = root / "README", root / "LICENSE", root / "debian" / "changelog.gz"
    changelog.parent.mkdir()
    readme.write_bytes(README)
    licence.write_text("Permission is hereby granted, free of charge, to any person obtaining a copy.\n")
    changelog.write_bytes(gzip.compress(b"rsync (3.2.7-1) unstable; urgency=medium\n\n  * New upstream release.\n"))

    tally = asyncio.run(make(twin_env, store, redis, activity, root).scan_once())  # the default globs
    assert (tally.new, tally.skipped) == (1, 0) and learn_jobs(redis) == 1
    assert set(manifest.paths(store, being, root)) == {str(readme)}  # no row, no activity line for the others
    assert lines(activity) == ["Files: found 3 files: 1 to learn (1 new, 0 changed), 0 already learned, 2 skipped"
                               " (2 ignored name), 0 failed; 0 gone."]

    tally = asyncio.run(make(twin_env, store, redis, activity, root, files_ignore=[]).scan_once())
    assert (tally.new, tally.changed, tally.skipped) == (2, 0, 0) and learn_jobs(redis) == 3
    assert set(manifest.paths(store, being, root)) == {str(readme), str(licence), str(changelog)}


@pytest.mark.slow
def test_file_matching_a_new_ignore_glob_is_forgotten(twin_env, store, activity, redis, root):
    being = twin_env.being
    notes, keep = root / "notes.md", root / "keep.md"
    notes.write_text(NOTES)
    keep.write_text("The spare key hangs behind the calendar.\n")
    asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    drain()
    assert memories(store, being, notes) and fts_hits(store, "kayaks")

    tally = asyncio.run(make(twin_env, store, redis, activity, root, files_ignore=["notes*"]).scan_once())
    assert (tally.new, tally.changed, tally.gone, tally.skipped) == (0, 0, 1, 0)
    assert lines(activity)[-1] == ("Files: found 2 files: 0 to learn (0 new, 0 changed), 1 already learned, 1 skipped"
                                   " (1 ignored name), 0 failed; 1 gone.")
    assert manifest.get(store, being, notes) is None and manifest.get(store, being, keep).state == "indexed"
    drain()
    assert memories(store, being, notes) == [] and not fts_hits(store, "kayaks")
    assert memories(store, being, keep)


def _scan_as(uid: int, gid: int, root: Path, data: Path) -> list[str]:
    """Run one scan in a forked child with the given ids (no exec: the interpreter may live in a private
    directory); return the child's activity lines."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read_fd)
            for key in [k for k in os.environ if k.startswith("TWIN_")]:
                del os.environ[key]
            os.environ.update(TWIN_CONFIG=str(data / "twin.toml"), XDG_CONFIG_HOME=str(data), HOME=str(data))
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
            settings = Settings(data_dir=data, config_dir=data / "c", runtime_dir=data / "r", files_roots=[root],
                                redis_url="unix:///nonexistent.sock")
            child_store = Store(settings.db_path).open()
            child_activity = Activity(child_store, settings.being)
            connector = FilesConnector(settings, child_store, Bus(Redis.from_url(settings.redis_url)), child_activity)
            asyncio.run(connector.scan_once())
            os.write(write_fd, json.dumps([line.text for line in child_activity.recent()]).encode())
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        out = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return json.loads(out)


def scan_as_nobody(prefix: str, fill: Callable[[Path], T]) -> tuple[Path, T, list[str]]:
    """One scan of a fresh folder as `nobody` (chmod 000 binds only a non-root user), in a forked child
    (`_scan_as`): `fill(folder)` writes and locks the folder's files; returns `(folder, fill's result, the child's
    activity lines)`. The temp base (mode 0755, so `nobody` may enter it) is removed, locked directories too."""
    base = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    folder, data = base / "folder", base / "data"
    try:
        os.chmod(base, 0o755)
        folder.mkdir(mode=0o755)
        made = fill(folder)
        data.mkdir()
        nobody = pwd.getpwnam("nobody")
        if os.geteuid() == 0:
            os.chown(data, nobody.pw_uid, nobody.pw_gid)
        return folder, made, _scan_as(nobody.pw_uid, nobody.pw_gid, folder, data)
    finally:
        for parent, dirs, _ in os.walk(base):  # top-down: a locked directory is opened before it is listed
            for name in dirs:
                os.chmod(os.path.join(parent, name), 0o755)
        shutil.rmtree(base)


def _lock_two(root: Path) -> None:
    (root / "secret.txt").write_text("nobody may read this")
    os.chmod(root / "secret.txt", 0)
    (root / "locked").mkdir()
    (root / "locked" / "inner.md").write_text("inside a locked directory")
    os.chmod(root / "locked", 0)


def test_permission_denied_file_and_directory():
    """chmod 000 binds only a non-root user: as root, the scan runs in a forked child as `nobody`."""
    root, _, texts = scan_as_nobody("twin-perm-", _lock_two)
    assert sorted(texts[:2]) == [f"Files: skipped {root / 'locked'} (unreadable directory: permission denied).",
                                 f"Files: skipped {root / 'secret.txt'} (unreadable: permission denied)."]
    assert texts[2:] == ["Files: found 2 files: 0 to learn (0 new, 0 changed), 0 already learned, 0 skipped, 2 failed"
                         " (1 unreadable directory: permission denied, 1 unreadable: permission denied); 0 gone."]


def test_a_learned_file_or_folder_that_cannot_be_read_now_keeps_its_memories():
    """A chmod 000 of a learned file or of a folder of learned files forgot their memories, with no line saying so
    (a breaker run): now nothing is forgotten, the diary says why the file cannot be learned and that its memories
    are kept, and the rows stay as learned. Two scans as `nobody` over one data dir (Redis away: the hand-overs
    wait in SQLite, which is what is read here)."""
    base = Path(tempfile.mkdtemp(prefix="twin-keep-")).resolve()
    folder, data = base / "folder", base / "data"
    try:
        os.chmod(base, 0o755)
        (folder / "sub").mkdir(parents=True, mode=0o755)
        os.chmod(folder, 0o755)
        (folder / "note.md").write_text("The spare bike key is in the blue tin on the shelf.")
        (folder / "sub" / "inner.md").write_text("The boiler was serviced by Kessler Heating in March.")
        data.mkdir()
        nobody = pwd.getpwnam("nobody")
        if os.geteuid() == 0:
            os.chown(data, nobody.pw_uid, nobody.pw_gid)
        _scan_as(nobody.pw_uid, nobody.pw_gid, folder, data)
        with (folder / "note.md").open("a") as out:  # changed, then locked: it must be read, and cannot be
            out.write("The tin also holds the garage remote.\n")
        os.chmod(folder / "note.md", 0)
        os.chmod(folder / "sub", 0)
        texts = _scan_as(nobody.pw_uid, nobody.pw_gid, folder, data)
        with Store(data / "twin.db") as db:
            modes = [row[0] for row in db.conn.execute("SELECT mode FROM ingest_items ORDER BY id")]
            states = {row[0]: row[1] for row in db.conn.execute("SELECT path, state FROM files_manifest")}
        assert modes == ["document", "document"], modes  # no forget was staged
        assert states[str(folder / "note.md")] == states[str(folder / "sub" / "inner.md")] == "indexed", states
        assert (f"Files: cannot learn {folder / 'note.md'} now (unreadable: permission denied); the memories it gave"
                " are kept until it can be read again or is gone.") in texts, texts
    finally:
        for parent, dirs, files in os.walk(base):
            for name in dirs + files:
                os.chmod(os.path.join(parent, name), 0o755)
        shutil.rmtree(base)


def test_a_learned_file_grown_too_large_keeps_its_memories_and_the_same_bytes_are_not_learned_again(
        twin_env, store, activity, redis, root):
    log = root / "notes.txt"
    text = "The allotment plot number is 14 on the east side.\n"
    log.write_text(text)
    asyncio.run(make(twin_env, store, redis, activity, root, files_max_bytes=1000).scan_once())
    learned = manifest.get(store, twin_env.being, log)
    log.write_text(text + "x" * 2000)
    tally = asyncio.run(make(twin_env, store, redis, activity, root, files_max_bytes=1000).scan_once())
    assert (tally.gone, tally.skipped) == (0, 1)
    assert lines(activity)[-2] == (f"Files: cannot learn {log} now (too large); the memories it gave are kept until"
                                   " it can be read again or is gone.")
    kept = manifest.get(store, twin_env.being, log)
    assert (kept.state, kept.sha256, kept.reason) == ("indexed", learned.sha256, "too large")
    with log.open("a") as out:
        out.write("y" * 100)  # still too large: not said again
    count = len(lines(activity))
    asyncio.run(make(twin_env, store, redis, activity, root, files_max_bytes=1000).scan_once())
    assert not any("cannot learn" in t for t in lines(activity)[count:])
    log.write_text(text)  # the same bytes as learned: nothing to learn again, the reason cleared
    tally = asyncio.run(make(twin_env, store, redis, activity, root, files_max_bytes=1000).scan_once())
    assert tally.unchanged == 1 and manifest.get(store, twin_env.being, log).reason is None
    staged = ingest.fetch(store, [i for job in Queue(LEARN_QUEUE, connection=redis).jobs for i in job.kwargs["ids"]])
    assert [s.item.mode for s in staged] == ["document"]  # learned once, never forgotten


# -- live ----------------------------------------------------------------------------------------------------------
def test_live_watch_pushes_new_and_gone_files(twin_env, store, activity, redis, root):
    being = twin_env.being
    (root / "old.md").write_text("The bread maker lives in the top cupboard.")
    (root / "a").symlink_to(".")  # watchfiles follows it: events may name root/a/... for root/...
    conn = FilesConnector(twin_env.model_copy(update={"files_roots": [root, root.parent / "no-such-root"]}), store,
                          Bus(redis), activity)

    async def scenario() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(conn.run(stop))
        await wait_for(lambda: any(t.startswith("Files: found") for t in lines(activity)))
        # no pause: the watcher was set up before the scan, so a file written right now is seen
        fresh = root / "sub" / "fresh.md"
        fresh.parent.mkdir()
        fresh.write_text("The plumber comes on Friday at nine.")
        await wait_for(lambda: manifest.get(store, being, fresh) is not None)
        (root / "old.md").unlink()
        await wait_for(lambda: manifest.get(store, being, root / "old.md") is None)
        stop.set()
        await asyncio.wait_for(task, 10)

    asyncio.run(scenario())
    texts = lines(activity)
    assert f"Files: root {root.parent / 'no-such-root'} is missing; left as it was." in texts
    assert ("Files: found 2 files: 1 to learn (1 new, 0 changed), 0 already learned, 1 skipped (1 symlink to a directory,"
            " not followed), 0 failed; 0 gone.") in texts
    assert "Files: 1 new, 0 changed, 0 gone, 0 skipped, 0 failed." in texts
    assert texts[-1] == "Files: 0 new, 0 changed, 1 gone, 0 skipped, 0 failed."
    assert learn_jobs(redis) == 3  # old.md, fresh.md, forget old.md


def inotify_inodes() -> set[int]:
    """The inode of every path this process's inotify instances watch (/proc/self/fdinfo: `inotify wd:… ino:<hex>`)."""
    found = set()
    for info in Path("/proc/self/fdinfo").iterdir():
        try:
            text = info.read_text()
        except OSError:
            continue
        found |= {int(m, 16) for m in re.findall(r"^inotify wd:\S+ ino:([0-9a-f]+)", text, re.M)}
    return found


def test_a_symlink_to_a_big_folder_is_not_watched_and_every_real_folder_is(twin_env, store, activity, redis, root,
                                                                           tmp_path):
    """A link to `/` in a watched folder put inotify watches on the whole system (watchfiles' recursive watch follows
    symlinks) and used up the budget before the folder's own subfolders: their changes were never seen (a breaker
    run). Each real folder is watched on its own now, the link's target never; a folder made later is watched too."""
    outside = tmp_path / "outside"
    for name in ("a", "b", "c"):
        (outside / name).mkdir(parents=True)
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "link").symlink_to(outside)
    conn = FilesConnector(twin_env.model_copy(update={"files_roots": [root]}), store, Bus(redis), activity)
    seen = {}

    async def scenario() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(conn.run(stop))
        await wait_for(lambda: any(t.startswith("Files: found") for t in lines(activity)))
        seen["watched"] = inotify_inodes()
        deep = root / "sub" / "deeper" / "boiler.md"
        deep.write_text("The boiler was serviced by Kessler Heating in March.")
        await wait_for(lambda: manifest.get(store, twin_env.being, deep) is not None)
        made = root / "sub" / "made-later" / "bees.md"  # a folder that appears, and a file in it at once
        made.parent.mkdir()
        made.write_text("The owner keeps two bee hives behind the shed.")
        await wait_for(lambda: manifest.get(store, twin_env.being, made) is not None)
        later = root / "sub" / "made-later" / "honey.md"  # … whose later changes are seen too
        later.write_text("The owner sold twelve jars of honey at the market.")
        await wait_for(lambda: manifest.get(store, twin_env.being, later) is not None)
        stop.set()
        await asyncio.wait_for(task, 10)

    asyncio.run(scenario())
    ours = {os.stat(p).st_ino for p in (root, root / "sub", root / "sub" / "deeper")}
    theirs = {os.stat(p).st_ino for p in (outside, outside / "a", outside / "b", outside / "c")}
    assert ours <= seen["watched"] and not theirs & seen["watched"], (ours, theirs, seen["watched"])


def test_redis_down_loses_nothing_the_file_waits_in_sqlite(twin_env, store, activity, tmp_path, root):
    """Redis away when a file changes: the file is staged with its manifest row (the store is the truth), and
    queued once Redis takes writes again, by the supervisor's `Bus.queue_ready`; nothing is read twice."""
    server, url = start_redis(tmp_path)
    client = Redis.from_url(url, retry=Retry(NoBackoff(), 0), socket_connect_timeout=1, socket_timeout=2)
    note = root / "later.md"
    note.write_text("The boiler service is due in March.")
    conn = FilesConnector(twin_env.model_copy(update={"files_roots": [root]}), store, Bus(client), activity)
    try:
        server.terminate()
        server.wait(10)
        tally = asyncio.run(conn.scan_once())
        assert (tally.new, tally.deferred) == (1, 0) and conn.unreachable
        assert manifest.get(store, twin_env.being, note) is not None  # staged with its row in one transaction
        assert ingest.counts(store)["ready"] == 1
        server, _ = start_redis(tmp_path)  # Redis is back
        assert Bus(client).queue_ready(store) == 1
        assert ingest.counts(store) == {"held": 0, "ready": 0, "queued": 1, "failed": 0}
        assert Queue(LEARN_QUEUE, connection=Redis.from_url(url)).count == 1
        tally = asyncio.run(conn.scan_once())  # a rescan does not hand it over again
        assert tally.new == 0 and Queue(LEARN_QUEUE, connection=Redis.from_url(url)).count == 1
    finally:
        server.terminate()
        server.wait(10)


def test_a_store_that_refuses_the_write_leaves_the_file_for_a_retry(twin_env, store, activity, redis, root,
                                                                       monkeypatch):
    note = root / "full.md"
    note.write_text("The gutter cleaner comes in October.")
    conn = FilesConnector(twin_env.model_copy(update={"files_roots": [root]}), store, Bus(redis), activity)
    real_stage = ingest.stage

    def disk_full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(ingest, "stage", disk_full)
    tally = asyncio.run(conn.scan_once())
    assert (tally.new, tally.deferred) == (0, 1) and conn.unwritable and conn.waiting == 1
    assert manifest.get(store, twin_env.being, note) is None  # nothing half-saved
    monkeypatch.setattr(ingest, "stage", real_stage)
    tally = asyncio.run(conn.scan_once())
    assert tally.new == 1 and not conn.unwritable and learn_jobs(redis) == 1


def test_html_in_a_legacy_charset_is_read():
    declared = ('<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
                '<title>Café</title></head><body>Une crème brûlée pour Zoë.</body></html>').encode("latin-1")
    doc = to_text(Path("menu.html"), declared)
    assert doc.text == "Une crème brûlée pour Zoë." and doc.title == "menu.html (Café)"
    undeclared = "<html><body><p>Fix typos (Jan Pokorný).</p></body></html>".encode("cp1252")
    assert to_text(Path("news.html"), undeclared).text == "Fix typos (Jan Pokorný)."
    # plain text is never guessed: not UTF-8 means skipped, unless it is UTF-8 with a stray bad byte (replaced)
    assert to_text(Path("menu.txt"), "crème brûlée".encode("latin-1")) == Skip("undecodable")
    assert to_text(Path("menu.txt"), "crème".encode("latin-1")).text == "cr\ufffdme"


def test_file_name_that_is_not_utf8_is_skipped_and_watching_goes_on(twin_env, store, activity, redis, root):
    being = twin_env.being
    (root / "good.md").write_text("The spare bike lights are in the hallway drawer.")
    bad = os.path.join(os.fsencode(root), b"latin1-\xe9.txt")
    with open(bad, "wb") as f:
        f.write(b"I like latin1 names.")
    conn = make(twin_env, store, redis, activity, root)

    async def scenario() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(conn.run(stop))
        await wait_for(lambda: any(t.startswith("Files: found") for t in lines(activity)))
        later = root / "later.md"
        later.write_text("The window cleaner comes every second Tuesday.")
        await wait_for(lambda: manifest.get(store, being, later) is not None, timeout_s=20)
        stop.set()
        await asyncio.wait_for(task, 10)
        assert not task.cancelled() and task.exception() is None

    asyncio.run(scenario())
    texts = lines(activity)
    assert f"Files: skipped {root}/latin1-\\xe9.txt (file name is not valid UTF-8)." in texts
    assert ("Files: found 2 files: 1 to learn (1 new, 0 changed), 0 already learned, 1 skipped (1 file name is not valid"
            " UTF-8), 0 failed; 0 gone.") in texts
    drain()
    assert memories(store, being, root / "good.md") and memories(store, being, root / "later.md")


def test_json_files_give_their_prose():
    raw = (b'{"name": "Ana", "trips": [{"city": "Porto", "note": "Ana prefers tea over coffee in the evening."}],'
           b' "n": 3}')
    doc = to_text(Path("contacts.json"), raw)
    assert doc.text == "Ana prefers tea over coffee in the evening."
    assert to_text(Path("broken.json"), b"not json, just a sentence about the garden.").text.startswith("not json")


@pytest.mark.slow
def test_a_file_name_that_is_not_utf8_touched_again_and_again_never_stops_the_watcher(twin_env, store, activity,
                                                                                      redis, root):
    """watchfiles' watcher dies on such a name each time it changes; the connector keeps following every other
    file, says which file and why once, and never reports itself failed."""
    being = twin_env.being
    names = [b"k\xf6ln-\xff\xfe.md", b"sub/\xe0\xe8\xec.txt"]  # latin-1 bytes and bytes no text encoding has
    (root / "sub").mkdir()
    conn = make(twin_env, store, redis, activity, root)

    async def scenario() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(conn.run(stop))
        await wait_for(lambda: any(t.startswith("Files: found") for t in lines(activity)))
        for n in range(4):
            for name in names:
                with open(os.path.join(os.fsencode(root), name), "ab") as fh:  # a new bad name, then touched
                    fh.write(b"The ferry to Sylt leaves at seven.\n")
            good = root / f"tide-{n}.md"
            good.write_text(f"The tide table for week {n} hangs in the hallway.")
            await wait_for(lambda good=good: manifest.get(store, being, good) is not None, timeout_s=20)
        assert not task.done()
        stop.set()
        await asyncio.wait_for(task, 10)
        assert task.exception() is None

    asyncio.run(scenario())
    assert conn.watcher.restarts >= 1  # it did break watchfiles' watcher, and a new one took over
    texts = lines(activity)
    shown = [f"{root}/k\\xf6ln-\\xff\\xfe.md", f"{root}/sub/\\xe0\\xe8\\xec.txt"]
    for name in shown:
        assert texts.count(f"Files: skipped {name} (file name is not valid UTF-8).") == 1, texts
    assert not [t for t in texts if "stopped" in t or "failed" in t.lower().replace(" 0 failed", "")], texts
    tally = asyncio.run(make(twin_env, store, redis, activity, root).scan_once())  # a restart repeats nothing
    assert tally.reasons["file name is not valid UTF-8"] == 2 and tally.skipped == 0


def test_a_file_that_vanishes_while_it_is_read_counts_as_gone(twin_env, store, activity, redis, root):
    from twin.connectors.file_walk import read_file

    path = root / "brief.md"
    path.write_text("The skylight leaks when the wind is from the west.")
    st = os.lstat(path)
    path.unlink()  # listed, then gone before it was opened
    assert read_file(path, st, 10_000, "brief.md") is None
    (root / "stays.md").write_text("The skylight was fixed in June.")
    tally = asyncio.run(make(twin_env, store, redis, activity, root).scan_once())
    assert tally.new == 1 and manifest.get(store, twin_env.being, path) is None


def test_a_path_longer_than_path_max_is_skipped_once_with_its_reason(twin_env, store, activity, redis, root):
    deep = os.open(root, os.O_RDONLY)
    try:
        for _ in range(17):  # 17 levels of 250-byte names: past PATH_MAX (4096), reachable only step by step
            os.mkdir("d" * 250, dir_fd=deep)
            inner = os.open("d" * 250, os.O_RDONLY, dir_fd=deep)
            os.close(deep)
            deep = inner
        fd = os.open("far.md", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=deep)
        os.write(fd, b"The far shelf holds the winter tyres.")
        os.close(fd)
    finally:
        os.close(deep)
    (root / "near.md").write_text("The near shelf holds the paint.")
    conn = make(twin_env, store, redis, activity, root)
    tally = asyncio.run(conn.scan_once())
    assert tally.new == 1
    long_lines = [t for t in lines(activity) if t.startswith("Files: skipped") and "too long" in t]
    assert len(long_lines) == 1, lines(activity)
    asyncio.run(conn.scan_once())
    assert [t for t in lines(activity) if t.startswith("Files: skipped") and "too long" in t] == long_lines
