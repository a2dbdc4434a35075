"""A file that keeps changing is learned once it settles, and a file that only grew learns its new part alone
(twin.connectors.file_settle, FilesConnector): real files, a real watcher, a real Redis and a real learn worker."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from conftest import run_worker_process
from rq import Queue

from twin import ingest
from twin.connectors.file_settle import Settling
from twin.connectors.file_walk import appendable
from twin.connectors.files import FilesConnector, file_source
from twin.workers.bus import LEARN_QUEUE, Bus


class Clock:
    """Monotonic seconds the test moves by hand."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_settling_waits_for_a_still_file_and_gives_up_waiting_at_the_maximum(tmp_path):
    clock = Clock()
    settling = Settling(2.0, 10.0, clock)
    log, gone, folder = tmp_path / "run.log", tmp_path / "gone.md", tmp_path / "moved-in"
    log.write_text("one\n")
    folder.mkdir()
    assert settling.hold([(log, tmp_path), (gone, tmp_path), (folder, tmp_path)]) == [(gone, tmp_path),
                                                                                     (folder, tmp_path)]
    clock.now += 1.5
    assert settling.due() == ([], pytest.approx(0.5))
    with log.open("a") as fh:  # it changes: it waits 2 s from now
        fh.write("two\n")
    clock.now += 1.0
    assert settling.due()[0] == []
    clock.now += 1.9
    assert settling.due()[0] == []
    clock.now += 0.2
    assert settling.due()[0] == [(log, tmp_path)] and len(settling) == 0

    settling.hold([(log, tmp_path)])  # one that never stays still is due at the maximum all the same
    for _ in range(9):
        clock.now += 1.0
        with log.open("a") as fh:
            fh.write("more\n")
        assert settling.due()[0] == []
    clock.now += 1.0
    assert settling.due()[0] == [(log, tmp_path)]

    settling.hold([(log, tmp_path)])  # deleted while held: due at once
    log.unlink()
    assert settling.due()[0] == [(log, tmp_path)]
    assert Settling(0, 10.0, clock).hold([(folder, tmp_path)]) == [(folder, tmp_path)]


def test_only_line_oriented_text_is_learned_by_its_appended_part():
    assert all(appendable(Path(p)) for p in ("a.log", "notes.md", "todo.txt", "data.csv", "README"))
    assert not any(appendable(Path(p)) for p in ("page.html", "dump.json", "old.log.gz", "paper.tex"))


def staged_items(redis, store) -> list[ingest.Staged]:
    """The staged items every queued learn job carries (jobs not run yet), in job order."""
    ids = [i for job in Queue(LEARN_QUEUE, connection=redis).jobs for i in job.kwargs["ids"]]
    return ingest.fetch(store, ids)


def line(i: int) -> str:
    return f"On day {i} the owner planted {i} tomato seedlings in greenhouse number {i}.\n"


async def until(predicate, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.05)


def files_lines(store) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT text FROM activity WHERE text LIKE 'Files:%' ORDER BY id")]


def test_a_growing_file_is_learned_once_it_settles_and_then_by_its_new_part(twin_env, store, activity, redis,
                                                                            tmp_path):
    root = tmp_path / "watched"
    root.mkdir()
    settings = twin_env.model_copy(update={"files_roots": [root], "files_settle_s": 1.5, "files_max_memories": 200})
    conn = FilesConnector(settings, store, Bus(redis), activity)
    journal = root / "journal.txt"
    seen: dict[str, object] = {}

    async def append(first: int, last: int, every_s: float) -> None:
        for i in range(first, last):
            with journal.open("a") as fh:
                fh.write(line(i))
            await asyncio.sleep(every_s)

    async def scenario() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(conn.run(stop))
        await until(lambda: any(t.startswith("Files: found") for t in files_lines(store)))
        await append(0, 50, 0.2)  # 10 s of a line every 0.2 s
        seen["jobs while growing"] = Queue(LEARN_QUEUE, connection=redis).count
        await until(lambda: Queue(LEARN_QUEUE, connection=redis).count >= 1)
        await asyncio.sleep(2.5)  # a second job for the same settle would be queued by now
        seen["first"] = staged_items(redis, store)
        seen["first lines"] = files_lines(store)
        await asyncio.to_thread(run_worker_process, "learn")
        seen["memories"] = set(store.ids_by_source(settings.being, file_source(journal)))
        await append(50, 60, 0.2)  # then it grows again, and settles again
        await until(lambda: Queue(LEARN_QUEUE, connection=redis).count >= 1)
        await asyncio.sleep(2.5)
        seen["second"] = staged_items(redis, store)
        seen["second lines"] = files_lines(store)
        stop.set()
        await asyncio.wait_for(task, 10)

    asyncio.run(scenario())
    assert seen["jobs while growing"] == 0  # nothing learned while it grew
    first, second = seen["first"], seen["second"]
    assert len(first) == 1 and len(second) == 1  # one job per settle
    assert first[0].item.extra.get("appended") is None and second[0].item.extra["appended"] is True
    texts = first[0].item.text + second[0].item.text
    for i in range(60):  # every line in exactly one job
        assert texts.count(f"On day {i} the owner") == 1, i
    assert [i for i in range(60) if f"On day {i} the owner" in second[0].item.text] == list(range(50, 60))
    assert second[0].item.extra["title"] == first[0].item.extra["title"]
    # one diary line per settle (after the scan's): the new file, then the changed one
    assert seen["first lines"][1:] == ["Files: 1 new, 0 changed, 0 gone, 0 skipped, 0 failed."]
    assert seen["second lines"][1:] == ["Files: 1 new, 0 changed, 0 gone, 0 skipped, 0 failed.",
                                        "Files: 0 new, 1 changed, 0 gone, 0 skipped, 0 failed."]
    before = seen["memories"]
    assert before
    run_worker_process("learn")
    after = set(store.ids_by_source(settings.being, file_source(journal)))
    assert before < after  # the appended part added memories and removed none of the earlier ones


def test_a_file_that_stays_too_large_while_it_grows_is_reported_once(twin_env, store, activity, redis, tmp_path):
    root = tmp_path / "watched"
    root.mkdir()
    settings = twin_env.model_copy(update={"files_roots": [root], "files_settle_s": 1.0, "files_max_bytes": 500})
    conn = FilesConnector(settings, store, Bus(redis), activity)
    download = root / "download.txt"

    async def scenario() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(conn.run(stop))
        await until(lambda: any(t.startswith("Files: found") for t in files_lines(store)))
        for i in range(20):  # 4 s of growth past the limit, settling twice on the way
            with download.open("a") as fh:
                fh.write(line(i) * 3)
            await asyncio.sleep(1.6 if i in (8, 14) else 0.2)
        await asyncio.sleep(2.5)
        stop.set()
        await asyncio.wait_for(task, 10)

    asyncio.run(scenario())
    reports = [t for t in files_lines(store) if "download.txt" in t]
    assert reports == [f"Files: skipped {download} (too large)."]
    assert os.path.getsize(download) > 500 and Queue(LEARN_QUEUE, connection=redis).count == 0


def test_the_part_a_file_gained_is_learned_whole_not_cut_at_the_files_cap(twin_env, store, tmp_path):
    from twin.connectors.file_text import Document
    from twin.connectors.files import APPENDED_MAX_MEMORIES, document_item
    from twin.learn.learning import learn_document

    settings = twin_env.model_copy(update={"files_max_memories": 36})
    path = tmp_path / "grow.log"
    first = document_item(settings, path, Document("".join(line(i) for i in range(40)), "grow.log"))
    added = document_item(settings, path, Document("".join(line(i) for i in range(40, 100)), "grow.log"),
                          appended=True)
    assert first.extra["max_memories"] == 36 and added.extra["max_memories"] == APPENDED_MAX_MEMORIES
    read = learn_document(store, settings.being, first.text, first.source, "grow.log", first.extra["max_memories"])
    assert len(read.created) == 36 and read.unread  # a document's first read keeps its cap, and says so
    grew = learn_document(store, settings.being, added.text, added.source, "grow.log", added.extra["max_memories"],
                          replace=False)
    assert len(grew.created) == 60 and not grew.unread  # each of the 60 added lines: none cut after the 36th


def test_an_append_larger_than_one_items_cap_is_learned_whole_in_parts(twin_env, store, activity, redis,
                                                                        tmp_path):
    """25,000 lines appended to a log were learned up to the item's 1,000 memories and the rest never (a breaker
    run): the part a file gained goes in parts of at most `APPENDED_PART_BYTES`, every line in exactly one, and the
    learn worker learns every line."""
    from twin.connectors.files import APPENDED_MAX_MEMORIES, APPENDED_PART_BYTES, appended_parts

    root = tmp_path / "watched"
    root.mkdir()
    log = root / "grow.log"
    log.write_text("".join(line(i) for i in range(5)))
    conn = FilesConnector(twin_env.model_copy(update={"files_roots": [root]}), store, Bus(redis), activity)
    asyncio.run(conn.scan_once())
    run_worker_process("learn")
    n = APPENDED_MAX_MEMORIES + 700
    with log.open("a") as out:
        out.write("".join(line(i) for i in range(5, 5 + n)))
    asyncio.run(conn.scan_once())
    parts = [s.item for s in staged_items(redis, store)]
    assert len(parts) > 1 and all(p.extra["appended"] is True for p in parts)
    assert all(len(p.text.encode()) <= APPENDED_PART_BYTES for p in parts)
    joined = "".join(p.text for p in parts)
    assert [i for i in range(5 + n) if f"On day {i} the owner" in joined] == list(range(5, 5 + n))
    run_worker_process("learn")
    assert len(store.ids_by_source(twin_env.being, file_source(log))) == 5 + n  # every line, the last included
    assert appended_parts("a\n" + "b" * 40000 + "\nc\n") == ["a\n", "b" * 40000 + "\n", "c\n"]


def test_a_file_that_gives_no_memory_says_so_once_in_the_diary(twin_env, store, activity):
    from twin.learn.learning import learn_document

    source = "file:/home/owner/notes/one \\x1b[2J line.md"  # as `file_source` writes a name with an escape
    done = learn_document(store, twin_env.being, "x" * 5000, source, "one line", 36, activity=activity)
    assert done.created == []
    said = [t for t in (r[0] for r in store.conn.execute("SELECT text FROM activity")) if "gave no memory" in t]
    assert said == ["Files: /home/owner/notes/one \\x1b[2J line.md was read and gave no memory (no sentence of it "
                    "reads as one to keep: code, a table of numbers, one over-long line)."]  # escaped once, not twice
