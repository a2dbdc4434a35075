"""What an embedding backend costs, all-MiniLM beside multilingual-e5-small in the same run: the raw query embedding
(one question, as recall embeds it), memories embedded per second (batches of 96, as the embedding worker sends
them), and end-to-end recall over the same small store with each model's vectors, interleaved query by query.

    .venv/bin/python bench/embedder_speed.py                  # 500 memories, 200 questions
    .venv/bin/python bench/embedder_speed.py --n 1000 --queries 300

The memories and questions are bench/_corpus.py's (the recall_latency corpus generator). Recall's own latency bar
(p50 <= 1.5 x the raw query embedding at 100k memories) is measured on all-MiniLM by bench/recall_latency.py.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import _corpus
from _common import load_note, summary_ms, table, write_json

NAME = "embedder_speed"
BACKENDS = ("local", "multilingual")


def build(tmp: Path, n: int, embedder) -> tuple[object, object, float]:
    """A store of `n` corpus memories with `embedder`'s vectors (one vector per memory: one store per model), its
    index reader, and the memories embedded per second."""
    from twin.store import Store
    from twin.vectors.index import VectorIndex
    from twin.vectors.sidecar import IndexReader

    tmp.mkdir()
    store = Store(tmp / "twin.db").open()
    rows = _corpus.memories(n)
    with store.atomic():
        ids = [store.insert_memory(_corpus.BEING, r["kind"], r["content"], r["source"], r["importance"],
                                   created_at=r["created_at"]) for r in rows]
    texts = [r["content"] for r in rows]
    started = time.perf_counter()
    for start in range(0, n, 96):
        store.save_embeddings(ids[start:start + 96], embedder.embed(texts[start:start + 96]), embedder.model_id)
    rate = n / (time.perf_counter() - started)
    reader = IndexReader(store, VectorIndex(tmp / "memories.hnsw", embedder.dim, embedder.model_id))
    reader.open()
    return store, reader, rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=500, help="memories in the store")
    parser.add_argument("--queries", type=int, default=200, help="measured questions")
    args = parser.parse_args(argv)
    from twin.recall.hybrid import Recall
    from twin.vectors.embedder import make_embedder

    embedders = {b: make_embedder(b) for b in BACKENDS}
    for embedder in embedders.values():
        embedder.open()
    load_before = load_note()
    with tempfile.TemporaryDirectory() as tmp:
        built = {b: build(Path(tmp) / b, args.n, embedders[b]) for b in BACKENDS}
        recalls = {b: Recall(built[b][0], embedders[b], built[b][1]) for b in BACKENDS}
        questions = _corpus.queries(args.queries + 20)
        for q in questions[:20]:  # warm
            for b in BACKENDS:
                recalls[b].recall(_corpus.BEING, q, touch=False)
        times = {(b, what): [] for b in BACKENDS for what in ("embed", "recall")}
        for i, q in enumerate(questions[20:]):
            for b in (BACKENDS if i % 2 else BACKENDS[::-1]):
                started = time.perf_counter()
                embedders[b].embed_queries([q])
                times[(b, "embed")].append(time.perf_counter() - started)
                started = time.perf_counter()
                recalls[b].recall(_corpus.BEING, q, touch=False)
                times[(b, "recall")].append(time.perf_counter() - started)
        for b, r in recalls.items():
            r.close()
            built[b][0].close()
    figures = {b: {"model_id": embedders[b].model_id, "ingest_per_s": built[b][2],
                   "embed_query": summary_ms(times[(b, "embed")]), "recall": summary_ms(times[(b, "recall")])}
               for b in BACKENDS}
    rows = [[figures[b]["model_id"], figures[b]["embed_query"]["p50_ms"], figures[b]["recall"]["p50_ms"],
             figures[b]["recall"]["p99_ms"], figures[b]["ingest_per_s"]] for b in BACKENDS]
    print(table(["model", "query embed p50 ms", "recall p50 ms", "recall p99 ms", "memories embedded /s"], rows,
                title=f"Embedding backends ({args.n} memories, {args.queries} questions, interleaved)"))
    print(f"{load_before} before, {load_note()} after")
    print(f"\nfigures written to {write_json(NAME, {'n': args.n, 'queries': args.queries, 'backends': figures})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
