"""The two recall dev sets loaded into twin stores, for `eval_recall.py` and `touch_bar.py`.

- the personal set (`../shared/eval`): one being, the eval memories through `twin.learn.capture.capture` (the path
  `learn()` uses: worthiness gate, dedup, updates in place, supersession, inferred sensitivity), each created at
  its own `created_at`; the ground-truth fields `dup_of`, `supersedes` and `sensitive` are removed first.
- LoCoMo's dev half (`../shared/eval-locomo`; Maharana et al., "Evaluating Very Long-Term Conversational Memory
  of LLM Agents", ACL 2024, snap-research/locomo, CC BY-NC 4.0): each conversation (`haystack`) is its own store
  with one being named after it; its turns ("Caroline: …", chat turns, not third-person memories) go in through
  `Store.insert_memory` with an edge marker, as a learned memory would.

Every store is embedded with `twin.vectors.embedding_flush.flush_pending` into an `IndexWriter` and linked to its 3 nearest by
`twin.lifecycle.cycle.write_all_pending_edges` (what the embedding worker does after a flush). Vectors are cached on
disk by model and text (`VectorCache`, under `bench/out/cache/`), so a second run embeds nothing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from _common import CACHE_DIR, import_moved

HIDDEN_FIELDS = ("dup_of", "supersedes", "sensitive")
"""Ground-truth fields of the eval that the system under test must not read (eval README)."""
PERSONAL_ZONE = "Europe/Berlin"
"""The personal set's owner's time zone (Lisbon, then Berlin), for time words in queries."""
PERSONAL_BEING = "owner"


def read_jsonl(path: Path) -> list[dict]:
    """The JSON objects of a JSON-lines file, blank lines skipped."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class VectorCache:
    """An embedder wrapper that keeps every vector it computed in a SQLite file, keyed by model id and text
    (sha-256), so repeated eval runs embed nothing. Same interface as `twin.vectors.embedder.Embedder` (opened)."""

    def __init__(self, inner, path: Path | None = None):
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        path = path or CACHE_DIR / "eval-vectors.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB)")
        self._memory: dict[str, np.ndarray] = {}
        self.computed = 0

    def _key(self, text: str, role: str) -> str:
        return hashlib.sha256(f"{self.model_id}\0{role}\0{text}".encode("utf-8", "replace")).hexdigest()

    def open(self) -> None:
        """Nothing to load: the wrapped embedder is open already."""

    def embed(self, texts) -> np.ndarray:
        """`(len(texts), dim)` float32 rows of memories, from the cache or the wrapped embedder (then cached)."""
        return self._cached(texts, "passage", self.inner.embed)

    def embed_queries(self, texts) -> np.ndarray:
        """The same for questions (`Embedder.embed_queries`)."""
        return self._cached(texts, "query", getattr(self.inner, "embed_queries", self.inner.embed))

    def _cached(self, texts, role: str, compute) -> np.ndarray:
        keys = [self._key(t, role) for t in texts]
        missing = [k for k in dict.fromkeys(keys) if k not in self._memory]
        for chunk in (missing[i:i + 500] for i in range(0, len(missing), 500)):
            marks = ",".join("?" * len(chunk))
            for key, blob in self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk):
                self._memory[key] = np.frombuffer(blob, dtype=np.float32)
        todo = [(k, t) for k, t in dict(zip(keys, texts, strict=True)).items() if k not in self._memory]
        if todo:
            vectors = compute([t for _, t in todo])
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                     [(k, v.astype(np.float32).tobytes()) for (k, _), v in zip(todo, vectors,
                                                                                                strict=True)])
            for (k, _), v in zip(todo, vectors, strict=True):
                self._memory[k] = v.astype(np.float32)
            self.computed += len(todo)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._memory[k] for k in keys])

    def close(self) -> None:
        self._db.close()


@dataclass
class Haystack:
    """One twin store holding one haystack's memories: `being`, the store, its index reader, and `to_eval`
    (stored id -> the eval ids it became, newest first)."""

    being: str
    store: object
    reader: object
    to_eval: dict[int, list[str]] = field(default_factory=dict)


def _index_and_link(workdir: Path, store, embedder) -> tuple[object, int]:
    """Embed every memory of `store` (flush_pending), checkpoint the index, link the graph edges; returns a
    fresh `IndexReader` and how many memories were embedded."""
    from twin.activity import Activity
    from twin.settings import Settings

    VectorLookup = import_moved("twin.lifecycle.cycle").VectorLookup
    write_all_pending_edges = import_moved("twin.lifecycle.cycle").write_all_pending_edges
    flush_pending = import_moved("twin.vectors.embedding_flush").flush_pending
    VectorIndex = import_moved("twin.vectors.index").VectorIndex
    IndexReader = import_moved("twin.vectors.sidecar").IndexReader
    IndexWriter = import_moved("twin.vectors.sidecar").IndexWriter

    f = Settings.model_fields

    def new_index():
        return VectorIndex(workdir / "index" / "memories.hnsw", embedder.dim, embedder.model_id,
                           m=f["index_m"].default, ef_construction=f["index_ef_construction"].default,
                           ef_search=f["index_ef_search"].default)

    writer = IndexWriter(store, new_index(), Activity(store, "eval"))
    writer.open()
    embedded = flush_pending(store, embedder, writer, f["embed_batch_max"].default, 0.0)
    writer.checkpoint(force=True)
    reader = IndexReader(store, new_index())
    reader.open()
    write_all_pending_edges(store, VectorLookup(store, reader.search, embedder.model_id))
    reader.open()
    return reader, embedded


class EvalSet:
    """A dev set loaded into twin stores: `queries`, raw `memories`, `haystacks` by name, `created` (eval id ->
    created_at) and load `figures`. `haystack_of(query)` names the haystack a query ranks."""

    name = ""
    zone = "UTC"

    def __init__(self, eval_dir: Path, workdir: Path, embedder):
        self.eval_dir, self.workdir, self.embedder = eval_dir, workdir, embedder
        self.queries = read_jsonl(eval_dir / "queries.jsonl")
        self.memories = read_jsonl(eval_dir / "memories.jsonl")
        self.haystacks: dict[str, Haystack] = {}
        self.created = {m["id"]: m["created_at"] for m in self.memories}
        self.figures: dict = {}

    def haystack_of(self, query: dict) -> str:
        return query.get("haystack") or PERSONAL_BEING

    def include_sensitive(self, query: dict) -> bool:
        """Whether the query asks for a secret (chat's rule, `twin.chat.asks_for_sensitive`)."""
        from twin.chat import asks_for_sensitive

        return asks_for_sensitive(query["query"])

    def close(self) -> None:
        for hay in self.haystacks.values():
            hay.store.close()


class PersonalSet(EvalSet):
    """`../shared/eval` through the capture path (module docstring)."""

    name = "personal"
    zone = PERSONAL_ZONE

    def open(self) -> PersonalSet:
        from twin.store import Store

        capture = import_moved("twin.learn.capture").capture
        Candidate = import_moved("twin.text.extractor").Candidate

        rows = sorted(({k: v for k, v in row.items() if k not in HIDDEN_FIELDS} for row in self.memories),
                      key=lambda r: (r["created_at"], r["id"]))
        store = Store(self.workdir / "personal" / "twin.db").open()
        hay = Haystack(PERSONAL_BEING, store, None)
        outcomes: Counter = Counter()
        for row in rows:
            candidate = Candidate(content=row["content"], kind=row["kind"], importance=row["importance"],
                                  tags=row.get("tags") or [])
            provenance = {"source_type": row["source"].split(":")[0], "captured_from": row["id"], "confidence": 1.0}
            with store.atomic():
                result = capture(store, PERSONAL_BEING, candidate, row["source"], row["created_at"], provenance)
            outcomes["rejected" if result.rejected else "deduplicated" if result.deduplicated else
                     "updated" if result.updated else "created"] += 1
            outcomes["superseded"] += len(result.superseded)
            if result.id is not None:
                hay.to_eval.setdefault(result.id, []).insert(0, row["id"])  # newest eval id first
        started = time.perf_counter()
        hay.reader, embedded = _index_and_link(self.workdir / "personal", store, self.embedder)
        self.haystacks[PERSONAL_BEING] = hay
        self.figures = {"captured": dict(outcomes), "embedded": embedded,
                        "index_s": round(time.perf_counter() - started, 1),
                        "sensitive": store.conn.execute("SELECT COUNT(*) FROM memories WHERE sensitivity = "
                                                        "'sensitive'").fetchone()[0]}
        return self


class LocomoSet(EvalSet):
    """`../shared/eval-locomo`: one store and being per conversation, turns through `Store.insert_memory`."""

    name = "locomo"

    def include_sensitive(self, query: dict) -> bool:
        return False

    def open(self) -> LocomoSet:
        from twin.store import Store

        by_hay: dict[str, list[dict]] = {}
        for m in sorted(self.memories, key=lambda r: (r["created_at"], r["id"])):
            by_hay.setdefault(m["haystack"], []).append(m)
        started, embedded, duplicates = time.perf_counter(), 0, 0
        for name, rows in by_hay.items():
            store = Store(self.workdir / name / "twin.db").open()
            hay = Haystack(name, store, None)
            from twin.memory import content_sha256

            for row in rows:
                with store.atomic():
                    same = store.find_by_sha(name, content_sha256(row["content"]))
                    if same is not None:  # a turn said twice ("Bye!"): one memory, both eval ids
                        hay.to_eval[same.id].insert(0, row["id"])
                        duplicates += 1
                        continue
                    mid = store.insert_memory(name, row["kind"], row["content"], row["source"], row["importance"],
                                              row.get("tags") or [], row["created_at"],
                                              provenance={"source_type": "chat", "captured_from": row["id"]})
                    store.add_edge_markers([mid], row["created_at"])
                hay.to_eval[mid] = [row["id"]]
            hay.reader, n = _index_and_link(self.workdir / name, store, self.embedder)
            embedded += n
            self.haystacks[name] = hay
        self.figures = {"haystacks": len(by_hay), "turns": len(self.memories), "duplicate_turns": duplicates,
                        "embedded": embedded, "index_s": round(time.perf_counter() - started, 1)}
        return self


SETS = {"personal": PersonalSet, "locomo": LocomoSet}
