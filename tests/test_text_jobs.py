"""Single text pushes share the being's waiting `learn_texts` job (`Bus.push_texts`): real Redis, real RQ workers
(in this process and as processes), real SQLite. Each text is learned exactly once, what a killed or lost job held
comes back, and held chat messages stay held."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, drain, run_worker_process
from rq import Queue, Worker

from twin import ingest
from twin.ingest import Ingest
from twin.learn.learning import learn
from twin.store import Store
from twin.workers.bus import LEARN_QUEUE, TEXTS_FLAG, Bus

SOURCE = "telegram:41"
PEOPLE = ["Ines", "Tomasz", "Yuki", "Olu", "Marit", "Dario", "Keziah", "Anselm", "Priya", "Lorcan", "Wen", "Farah"]
THINGS = ["camping stove", "bread knife", "tripod", "ukulele", "sewing machine", "tent", "drill", "kayak paddle",
          "slow cooker", "chess clock", "ladder", "telescope", "label printer", "waffle iron", "easel"]
PLACES = ["garage", "attic", "cellar", "office", "balcony", "car boot", "shed"]


def texts(n: int, start: int = 0) -> list[str]:
    """`n` owner statements, the `start`-th on, each naming another person, thing and place together (the three
    lists cycle at 12, 15 and 7: 420 distinct statements)."""
    return [f"{PEOPLE[i % 12]} left a {THINGS[i % 15]} in my {PLACES[i % 7]} for safekeeping."
            for i in range(start, start + n)]


def learned(store: Store) -> list[tuple[str, int]]:
    """`(content, hits)` of every memory of the owner, sorted."""
    return sorted((m.content, m.hits) for m in store.list_memories("owner", limit=100_000))


def learned_alone(tmp_path: Path, batch: list[str]) -> list[tuple[str, int]]:
    """What `learn()` makes of `batch`, one text after the other, in a store of its own: exactly once each."""
    store = Store(tmp_path / "alone.db").open()
    try:
        for text in batch:
            learn(store, None, "owner", text, SOURCE)
        return learned(store)
    finally:
        store.close()


def push_each(store: Store, bus: Bus, batch: list[str], held: bool = False) -> list[int]:
    """Stage each text and push it alone, as the Telegram connector hands over a message."""
    ids = []
    for text in batch:
        [item_id] = ingest.stage(store, [Ingest("owner", SOURCE, text)], held=held)
        if not held:
            assert bus.push(store, [item_id], "owner", "text")
        ids.append(item_id)
    return ids


def staged_left(store: Store) -> int:
    return store.conn.execute("SELECT COUNT(*) FROM ingest_items").fetchone()[0]


class LearnWorker:
    """A long-running `python -m twin.workers learn` process (not burst), with its RQ job counts."""

    def __init__(self, redis):
        self.redis = redis
        self.proc = subprocess.Popen([sys.executable, "-m", "twin.workers", "learn"], cwd=ROOT, env=os.environ.copy(),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not Worker.all(connection=redis):
            assert self.proc.poll() is None and time.monotonic() < deadline, "the learn worker did not start"
            time.sleep(0.05)

    def jobs_done(self) -> int:
        return sum(w.successful_job_count for w in Worker.all(connection=self.redis))

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(30)


def wait_until(check, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_single_pushes_share_one_job_and_each_text_is_learned_once(twin_env, store, redis, tmp_path):
    batch = texts(90)
    push_each(store, Bus(redis), batch)
    queue = Queue(LEARN_QUEUE, connection=redis)
    assert queue.count == 1  # 90 pushes, one job waiting for them all
    [item_job] = {r[0] for r in store.conn.execute("SELECT job_id FROM ingest_items")}
    assert queue.job_ids == [item_job]
    drain()
    assert learned(store) == learned_alone(tmp_path, batch)
    assert len(learned(store)) == 90 and staged_left(store) == 0
    assert store.counts("owner")["embedded"] == 90
    assert redis.get(TEXTS_FLAG + "owner") is None and queue.count == 0 and not queue.failed_job_registry.count


@pytest.mark.slow
def test_pushes_beside_a_running_worker_take_few_jobs_and_strand_nothing(twin_env, store, redis, tmp_path):
    """Texts arrive while the job learns and lets go of the flag: each is learned once, none waits for a lost
    job (nothing here requeues), never more than one job waits for the worker (the rule: a text joins the waiting
    job), and the worker runs far fewer jobs than texts (how few depends on how fast it runs dry: a bound, not a
    share)."""
    batch = texts(240)
    worker = LearnWorker(redis)
    waiting = []
    try:
        bus = Bus(redis)
        queue = Queue(LEARN_QUEUE, connection=redis)
        for n, text in enumerate(batch):
            push_each(store, bus, [text])
            waiting.append(queue.count)
            if n % 40 == 39:  # let the job run dry now and then: it lets go and a new one starts
                wait_until(lambda: staged_left(store) == 0, 60)
            elif n % 3 == 0:
                time.sleep(0.004)
        wait_until(lambda: staged_left(store) == 0)
        wait_until(lambda: Queue(LEARN_QUEUE, connection=redis).count == 0)
        jobs = worker.jobs_done()
    finally:
        worker.stop()
    assert learned(store) == learned_alone(tmp_path, batch)
    assert max(waiting) <= 1, waiting
    assert 6 <= jobs <= 240 // 2, jobs  # at least one per dry spell, far fewer than one per text


@pytest.mark.slow
def test_a_worker_killed_mid_job_loses_nothing(twin_env, store, redis, tmp_path):
    batch = texts(380)
    bus = Bus(redis)
    push_each(store, bus, batch)
    worker = LearnWorker(redis)
    try:
        wait_until(lambda: staged_left(store) < 360, 60)
    finally:
        worker.stop(signal.SIGKILL)  # mid-job: the flag still names the job, which RQ has as started
    left = staged_left(store)
    assert 0 < left < 360
    late = texts(30, start=380)
    push_each(store, bus, late)  # they join the killed job: its rerun takes them
    assert Queue(LEARN_QUEUE, connection=redis).count == 0
    proc = run_worker_process("learn")  # a new worker puts the orphaned job back and runs it
    assert "left unfinished" in proc.stdout + proc.stderr
    assert staged_left(store) == 0
    assert learned(store) == learned_alone(tmp_path, batch + late)


def test_held_messages_are_not_claimed(twin_env, store, redis):
    bus = Bus(redis)
    held = push_each(store, bus, texts(3, start=50), held=True)
    push_each(store, bus, texts(5))
    drain()
    assert store.conn.execute("SELECT COUNT(*) FROM ingest_items WHERE state = 'held'").fetchone()[0] == 3
    assert store.counts("owner")["memories"] == 5
    ingest.release(store, held)  # the reply was sent
    assert bus.push(store, held, "owner", "text")
    drain()
    assert staged_left(store) == 0 and store.counts("owner")["memories"] == 8


def test_a_lost_job_gives_its_texts_back_and_frees_the_flag(twin_env, store, redis):
    """Redis lost the waiting job but not the flag naming it: `requeue_lost` gives the texts back and clears the
    flag, so the supervisor's `queue_ready` queues them for a new job instead of the lost one."""
    bus = Bus(redis)
    push_each(store, bus, texts(12))
    lost = redis.get(TEXTS_FLAG + "owner").decode()
    queue = Queue(LEARN_QUEUE, connection=redis)
    queue.remove(lost)
    redis.delete(f"rq:job:{lost}")
    assert bus.requeue_lost(store, "9999-01-01T00:00:00Z") == (12, 0)
    assert redis.get(TEXTS_FLAG + "owner") is None
    assert bus.queue_ready(store) == 12 and queue.count == 1
    drain()
    assert staged_left(store) == 0 and store.counts("owner")["memories"] == 12


def test_a_text_marked_for_a_job_that_let_go_meanwhile_is_handed_on(twin_env, store, redis, monkeypatch):
    """The race `push_texts` closes: the pusher read the waiting job's id, and the job let go of the flag (its
    last look done) before the pusher recorded the text for it. The pusher sees the flag changed and hands the text
    to a new job."""
    bus = Bus(redis)
    redis.set(TEXTS_FLAG + "owner", "finished-job")
    mark_queued = ingest.mark_queued

    def job_lets_go_meanwhile(store_, ids, job_id):
        mark_queued(store_, ids, job_id)
        bus.release_texts("owner", "finished-job")

    monkeypatch.setattr(ingest, "mark_queued", job_lets_go_meanwhile)
    [item_id] = ingest.stage(store, [Ingest("owner", SOURCE, texts(1)[0])])
    job_id = bus.push_texts(store, [item_id], "owner")
    assert job_id != "finished-job"
    assert Queue(LEARN_QUEUE, connection=redis).job_ids == [job_id]
    assert store.conn.execute("SELECT job_id FROM ingest_items").fetchone()[0] == job_id
    monkeypatch.setattr(ingest, "mark_queued", mark_queued)
    drain()
    assert staged_left(store) == 0 and store.counts("owner")["memories"] == 1


def test_a_batch_gets_whole_jobs_and_its_rest_joins_the_waiting_one(twin_env, store, redis, tmp_path):
    bus = Bus(redis)
    push_each(store, bus, texts(3))
    batch = texts(57, start=3)
    assert bus.push(store, ingest.stage(store, [Ingest("owner", SOURCE, t) for t in batch]), "owner", "text")
    queue = Queue(LEARN_QUEUE, connection=redis)
    waiting = redis.get(TEXTS_FLAG + "owner").decode()
    carried = dict(store.conn.execute("SELECT job_id, COUNT(*) FROM ingest_items GROUP BY job_id").fetchall())
    assert queue.count == 2 and carried[waiting] == 3 + 7 and sorted(carried.values()) == [10, 50]
    drain()
    assert learned(store) == learned_alone(tmp_path, texts(60))
    assert staged_left(store) == 0


def test_a_sources_items_are_learned_in_the_order_they_were_staged_whichever_job_runs_first(twin_env, store, redis):
    """A file's text staged while no daemon ran (a binding's move: queued later by the supervisor's sweep) and its
    newer text staged by the start-up scan (queued at once): the newer job learns the older item first, the older
    job then finds it learned, so the file's memories are its newest text, never the older one over it."""
    from twin.workers.bus import Bus

    source = "file:/notes/key.md"
    with store.atomic():
        older = ingest.stage(store, [Ingest("owner", source, "I keep the spare key under the blue flowerpot.",
                                            "document", extra={"title": "key"})])
    newer = ingest.stage(store, [Ingest("owner", source, "I keep the spare key with Mrs Okonkwo now.",
                                                     "document", extra={"title": "key"})])
    bus = Bus(redis)
    for chunk, job_id in bus.enqueue_items("owner", newer, "document"):  # the scan's job: first
        ingest.mark_queued(store, chunk, job_id)
    drain()
    for chunk, job_id in bus.enqueue_items("owner", older, "document"):  # the sweep queues the move's item after
        ingest.mark_queued(store, chunk, job_id)
    drain()
    kept = [m.content for m in store.list_memories("owner") if m.source == source]
    assert kept and all("Okonkwo" in c for c in kept) and not any("flowerpot" in c for c in kept), kept
    assert ingest.counts(store)["queued"] == 0 and ingest.counts(store)["ready"] == 0
