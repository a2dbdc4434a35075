"""`twin status` and `twin doctor` (seed 004: "a self-check that proves the loop is closed").

Both are read-only except that `doctor` loads the model and searches.
"""

from __future__ import annotations

import json
import random
import time

import numpy as np

from twin.exceptions import EmbedderError
from twin.settings import Settings, exposed_secret_files
from twin.store import Store, signals, state
from twin.vectors.embedder import model_id_of
from twin.vectors.index import meta_path_of, saved_file_problem

PROBE_MEMORY = "Owner is allergic to penicillin."
PROBE_QUERY = "which antibiotic must doctors never give me?"
PROBE_NOISE = ("Owner's bike has a flat tyre.", "The meeting moved to Thursday afternoon.",
               "Owner bought a new pair of hiking boots.", "Berlin has many public libraries.")
DOCTOR_SAMPLE = 20
"""Stored memories the doctor recalls by their own text to check that each comes back first."""


def index_state(settings: Settings) -> dict:
    """What the checkpoint metadata says: `{state, watermark, count, deleted, age_s}`; state is `missing`
    or `unreadable` when there is no usable metadata, `missing` or `corrupt` when the saved file does not match
    it (size and checksum, `saved_file_problem`: a truncated file is not "checkpointed"); the embedding worker
    rebuilds it."""
    meta_path = meta_path_of(settings.index_path)
    try:
        meta = json.loads(meta_path.read_text())
    except FileNotFoundError:
        return {"state": "missing"}
    except (OSError, ValueError):
        return {"state": "unreadable"}
    if (problem := saved_file_problem(settings.index_path, meta)) is not None:
        return {"state": "missing" if problem == "missing" else "corrupt", "model": meta.get("model_id")}
    return {"state": "checkpointed", "model": meta.get("model_id"), "watermark": meta.get("watermark"),
            "vectors": meta.get("count", 0) - len(meta.get("deleted", [])), "deleted": len(meta.get("deleted", [])),
            "age_s": round(time.time() - meta_path.stat().st_mtime)}


def status(settings: Settings, store: Store, bus, redis_error: BaseException | None = None,
           answer_s: float = 2.0) -> dict:
    """Counts (per namespace too, `by_namespace`, once there is another than `default`), embedding backlog, how Redis
    is reached (`redis_state`), queue depths, whether the embedding worker rests (`embedding_worker`: `{state,
    since, note}`, only while it rests: `twin.workers.resting`), index state, whether learning is paused
    (`learning`: `{paused, at, reason}`, a Redis that refuses writes; `twin.workers.refusal.LearningPause`), each
    registered connector's state
    (`connector_states`), seed 003's lifecycle (tiers, edges, last decay and dream) and degraded modes (read-only).

    `bus` is a `twin.workers.bus.Bus` or None when Redis is not reachable; then `redis_error` (what the ping raised)
    and `answer_s` (how long it waited, seconds) say why (`redis_line`). A bus whose Redis stops answering while
    the report is made is said the same way (a `GET /v1/status` was a 500 with Redis frozen: a breaker run).
    """
    census = store.census(settings.being)  # every count below from one pass over a narrow index (issue 18)
    counts = store.counts(settings.being, census)
    report: dict = {"being": settings.being, "memories": counts["memories"], "active": counts["active"],
                    "embedded": counts["embedded"]}
    report["by_kind"] = {k[5:]: v for k, v in counts.items() if k.startswith("kind_")}
    spaces = store.namespace_counts(settings.being, census)
    if set(spaces) - {"default"}:  # seed 003's per-namespace counts; a store with one namespace reads as it did
        report["by_namespace"] = spaces
    degraded = []
    if settings.embed_backend == "none":
        degraded.append("keyword-only recall: TWIN_EMBED_BACKEND=none (set it to 'local' for recall by meaning)")
    else:
        report["pending_embedding"] = store.count_pending_embeddings(model_id_of(settings))
    report["index"] = index_state(settings)
    if report["index"]["state"] != "checkpointed" and settings.embed_backend != "none":
        degraded.append(f"index {report['index']['state']}: recall searches stored vectors exactly until the "
                        "embedding worker rebuilds it")
    report["redis"] = redis_state(settings)
    if bus is not None:
        from redis.exceptions import RedisError

        try:
            report["queues"] = bus.depths()
            if settings.embed_backend != "none" and (since := bus.resting_since()):
                report["embedding_worker"] = {"state": "resting", "since": since,
                                              "note": f"model and index let go after {settings.embed_rest_s:g} s "
                                                      "without work; the next text opens them again (about a second)"}
        except RedisError as exc:  # it answered a moment ago and not now (frozen, restarting): said, not raised
            report.pop("queues", None)
            bus, redis_error = None, exc
    if bus is None:
        degraded.append(redis_line(settings, redis_error, answer_s))
    from twin import ingest

    report["staged"] = ingest.counts(store)
    from twin.workers.refusal import paused_since

    paused = paused_since(store, settings.being)
    report["learning"] = {"paused": paused is not None, **(paused or {})}
    if paused is not None:
        degraded.append(f"learning paused since {paused['at']}: {paused['reason']}; what changes waits in the "
                        "database and is learned when Redis takes writes again")
    if report["staged"]["failed"]:
        degraded.append(f"{report['staged']['failed']} staged item(s) could not be learned (their job failed; the "
                        "journal says why)")

    report["model"] = model_state(settings, store)
    if not settings.has_provider:
        degraded.append("no model provider (TWIN_LLM_BASE_URL unset): offline extraction, no reflection")
    elif report["model"]["budget"] and report["model"]["calls_today"] >= report["model"]["budget"]:
        degraded.append(f"today's model call budget ({settings.llm_daily_calls}) is used up: offline extraction "
                        "until midnight UTC")
    report["signals"] = signal_counts(store, settings.being)
    report.update(connector_states(settings, store, degraded))
    from twin.lifecycle.cycle import stats

    life = stats(store, settings.being, census)
    report["lifecycle"] = {k: life[k] for k in ("total_warm", "total_cold", "superseded", "edges", "last_decay",
                                                "last_dream")}
    report["api"] = {"enabled": settings.api_enabled, "listen": f"{settings.api_host}:{settings.api_port}",
                     "socket": str(settings.api_socket_path) if settings.api_socket else None,
                     "exposed": settings.api_enabled and not settings.api_is_loopback}
    if report["api"]["exposed"]:
        degraded.append(f"the HTTP API listens on {report['api']['listen']}, beyond this machine "
                        "(TWIN_API_ALLOW_REMOTE): only its token guards it")
    report["data_dir"] = str(settings.data_dir)
    from twin.daemon import process_states

    degraded.extend(process_states.degraded_lines(settings))
    for exposed in exposed_secret_files(settings.redis_tls_key_file):
        degraded.append(f"{exposed} is readable by other users: chmod 600 it")
    report["degraded"] = degraded
    return report


def redis_state(settings: Settings) -> dict:
    """How twin reaches Redis, never a secret: `url` without its password (`Settings.redis_shown_url`), whether it is
    the `private` server, `tls` (a `rediss://` URL) and the ACL `user` (None: the default user)."""
    from urllib.parse import urlsplit

    url = settings.effective_redis_url
    return {"url": settings.redis_shown_url, "private": settings.redis_url is None, "tls": url.startswith("rediss://"),
            "user": settings.redis_username or urlsplit(url).username}


def redis_line(settings: Settings, error: BaseException | None, answer_s: float) -> str:
    """What is known when Redis did not answer: whether it took the connection but gave no answer in `answer_s`
    seconds (a frozen or overloaded server) or refused it, and whether the daemon's lock is held (by which pid),
    so the line never guesses "is `twin up` running?" when it is; a refused login or command says so and what to
    check (`twin.redis_client.refusal`). One line, no secret (the URL without its password)."""
    from redis.exceptions import AuthenticationError, NoPermissionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    from twin.daemon.lifetime import InstanceLock
    from twin.redis_client import refusal, untrusted_certificate

    if isinstance(error, (AuthenticationError, NoPermissionError)) or untrusted_certificate(error):
        return str(refusal(settings, error))
    url = settings.redis_shown_url
    holder = InstanceLock.holder(settings.data_dir / "twin.lock")
    if isinstance(error, (RedisTimeoutError, TimeoutError)):
        what = f"Redis at {url} takes connections but does not answer in {answer_s:g} s"
    else:
        what = f"Redis not reachable at {url}"
    if holder is not None:
        return f"{what}; the daemon is running (pid {holder} holds its lock): Redis may be stopped or overloaded"
    if settings.redis_url:
        return f"{what}; the daemon is not running (its lock is free): is that Redis server running?"
    return f"{what}; the daemon is not running (its lock is free): is `twin up` running?"


def model_state(settings: Settings, store: Store) -> dict:
    """The model provider as configured (base URL and cheap-tier model, never the key), today's calls against
    the budget (UTC day, all tiers), and reflection's last model call (UTC ISO-8601) and tick (seconds)."""
    if not settings.has_provider:
        return {"provider": None}
    from twin.llm.provider import CallBudget

    calls = CallBudget(store, settings.llm_daily_calls).used(None)
    return {"provider": settings.llm_base_url, "cheap": settings.llm_model_cheap, "calls_today": calls,
            "budget": settings.llm_daily_calls, "tick_s": settings.tick_s,
            "last_reflection": state.get_time(store, "reflection", settings.being, "last_call_at")}


def connector_states(settings: Settings, store: Store, degraded: list[str]) -> dict[str, dict]:
    """Every registered connector's state by name, in registry order (`twin.connectors.Connector.read_state`; the
    connectors themselves are not imported), appending the degraded lines each implies to `degraded`."""
    from twin import connectors

    states = {}
    for connector in connectors.REGISTRY.values():
        states[connector.name] = shown = connector.read_state(settings, store)
        degraded.extend(connector.degraded_lines(shown))
    return states


def signal_counts(store: Store, being: str) -> dict:
    """Signals of `being`: raised, held back, and raised but not yet delivered."""
    return signals.counts(store, being)


def _check(name: str, ok: bool, detail: str) -> dict:
    return {"check": name, "ok": bool(ok), "detail": detail}


def fts_check(store: Store) -> dict:
    """The full-text index's health: its structure's level count against FTS5's bound (`twin.store.fts_structure`) and
    FTS5's own integrity check. Fails (with the repair to run) above `NEAR_LIMIT_LEVELS` levels, on a structure
    record that cannot be read, or when the check reports corruption. Reads the whole index."""
    from twin.store import fts_structure

    hint = "; run `twin doctor --repair` (rebuilds the full-text index from the memories)"
    try:
        levels = fts_structure.read_levels(store.conn)
    except ValueError as exc:
        return _check("full-text index", False, f"its structure record cannot be read ({exc}){hint}")
    levels = levels or 0
    problem = fts_structure.integrity_problem(store.conn) if levels <= fts_structure.FTS5_MAX_LEVELS else \
        f"more than FTS5's {fts_structure.FTS5_MAX_LEVELS} levels"
    if problem is not None:
        return _check("full-text index", False, f"{levels} levels; FTS5's integrity check fails: {problem}{hint}")
    if levels > fts_structure.NEAR_LIMIT_LEVELS:
        return _check("full-text index", False, f"{levels} levels, near FTS5's limit of "
                                                f"{fts_structure.FTS5_MAX_LEVELS}{hint}")
    return _check("full-text index", True, f"{levels} level(s) (FTS5 fails past {fts_structure.FTS5_MAX_LEVELS}); "
                                           "FTS5's integrity check passes")


def repair_fts(store: Store) -> dict:
    """`twin doctor --repair`: rebuild the full-text index from the memories in one transaction (FTS5 `'rebuild'`:
    one level, every memory indexed again; ~0.65 s at 100k memories), then truncate the WAL. Returns
    `{"levels_before", "levels_after", "seconds"}` (levels None when the record could not be read)."""
    from twin.store import fts_structure

    started = time.monotonic()
    try:
        before = fts_structure.read_levels(store.conn)
    except ValueError:
        before = None
    with store.atomic() as conn:
        fts_structure.rebuild(conn)
    store.truncate_wal()
    return {"levels_before": before, "levels_after": fts_structure.read_levels(store.conn),
            "seconds": round(time.monotonic() - started, 3)}


def doctor(settings: Settings, store: Store) -> list[dict]:
    """Run the self-checks and return `[{check, ok, detail}]`:

    1. every memory has a vector of the current model;
    2. the model ranks a paraphrase (no shared words) above unrelated sentences;
    3. recall by a stored memory's own text returns that memory first, for a sample of memories (the chat
       → index → SQLite loop is closed);
    4. the checkpoint's labels match the stored vectors up to its watermark (no ghosts, none missing);
    0. first of all, the full-text index is healthy (`fts_check`): a broken one fails every learn and recall.
    """
    from twin.wiring import open_embedder, open_recall

    checks = [fts_check(store)]
    if not checks[0]["ok"]:
        return checks  # recall cannot run on a broken full-text index; the hint says how to repair it
    try:
        embedder = open_embedder(settings, store)
    except EmbedderError as exc:
        return [*checks, _check("embedder", False, str(exc))]
    if embedder is None:
        return [*checks, _check("embedder", False, "TWIN_EMBED_BACKEND=none: recall is keyword-only")]
    pending = store.count_pending_embeddings(embedder.model_id)
    total = store.counts(settings.being)["memories"]
    checks.append(_check("embeddings exist", pending == 0,
                         f"{total - pending} of {total} memories have a vector"
                         + ("" if pending == 0 else f"; {pending} pending (is the daemon running?)")))
    vectors = embedder.embed([PROBE_QUERY, PROBE_MEMORY, *PROBE_NOISE])
    sims = vectors[1:] @ vectors[0]
    checks.append(_check("paraphrase ranks first", int(np.argmax(sims)) == 0,
                         f"similarity {sims[0]:.2f} vs unrelated ≤ {sims[1:].max():.2f}"))
    ids = store.embedded_active_ids(settings.being)
    sample = random.Random(0).sample(ids, min(DOCTOR_SAMPLE, len(ids)))
    recall = open_recall(settings, store, embedder=embedder)  # the model loaded once for every check
    try:
        hits = 0
        for mid in sample:
            memory = store.get(mid)
            found = recall.recall(settings.being, memory.content, limit=5, touch=False, include_sensitive=True,
                                  namespace=memory.namespace)  # in its own scope: a project's, a person's too
            hits += any(r.memory.content_sha256 == memory.content_sha256 for r in found[:1])
        checks.append(_check("recall finds stored memories", not sample or hits >= 0.9 * len(sample),
                             f"{hits} of {len(sample)} sampled memories recalled first by their own text"))
        checks.append(_index_check(store, recall))
    finally:
        recall.close()
    return checks


def _index_check(store: Store, recall) -> dict:
    reader = recall.reader
    if reader is not None and not reader.loaded and not reader.index.meta_path.exists():
        return _check("index matches SQLite", True, f"no saved index (none built yet, or its file is gone): recall "
                      f"searches the {reader.size} stored vectors exactly until the embedding worker (twin up) "
                      "writes one")
    if reader is None or not reader.loaded:
        return _check("index matches SQLite", False, "no usable checkpoint (the embedding worker rebuilds it)")
    index = reader.index
    labels = index.live_labels()
    stored = store.embedding_ids(up_to_seq=index.watermark)
    every = store.embedding_ids()
    pending_scrub = {r[1] for r in store.tombstones()}
    ghosts = labels - every - pending_scrub
    missing = stored - labels
    newer = len(every - stored)  # stored after the checkpoint: recall searches them exactly (the reader's tail)
    ok = not ghosts and not missing
    return _check("index matches SQLite", ok, f"{len(labels)} vectors in the checkpoint; {len(missing)} missing, "
                                              f"{len(ghosts)} not in SQLite, {len(pending_scrub)} awaiting scrub; "
                                              f"{newer} stored since it (searched exactly until the next checkpoint)")
