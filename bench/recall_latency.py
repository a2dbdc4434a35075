"""Recall latency at N memories: query embedding, end-to-end hybrid recall, hnsw alone, FTS alone, and a numpy
brute-force cosine baseline, all in the same process over the same vectors.

    .venv/bin/python bench/recall_latency.py                 # N = 10,000 and 100,000
    .venv/bin/python bench/recall_latency.py --n 10000 --queries 300 --profile 20

Each N runs in its own child process (so peak RSS is per N). The store, its vectors (real model) and the
index (built by `IndexWriter`) are cached under `bench/out/cache/` by N and reused; the run works on a copy
of the database because `recall(..., touch=True)` writes. Targets (issue figures, DESIGN.md "Quality bars"):
recall p50 / raw embed p50 <= 1.5 at 100k, and recall p50 < raw embed p50 + brute-force p50.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _corpus
from _common import OUT_DIR, load_note, mib, proc_status_kb, reset_peak_rss, summary_ms, table, write_json

NAME = "recall_latency"
TOP_K = 50
"""Top-k of the brute-force baseline and of hnsw alone (recall's default candidate count)."""
RATIO_TARGET = 1.5


def settings_default(name: str):
    """A setting's shipped default (read from the model, not from any config file or environment)."""
    from twin.settings import Settings

    return Settings.model_fields[name].default


def open_recall(db: Path, index_path: Path):
    """A `Recall` over the copied store with the shipped defaults, a loaded model and a warm index reader."""
    from twin.recall.hybrid import Recall, Weights
    from twin.store import Store
    from twin.vectors.embedder import LocalEmbedder
    from twin.vectors.index import VectorIndex
    from twin.vectors.sidecar import IndexReader

    store = Store(db).open()
    embedder = LocalEmbedder(settings_default("embed_threads"))
    embedder.open()
    index = VectorIndex(index_path, embedder.dim, embedder.model_id, m=settings_default("index_m"),
                        ef_construction=settings_default("index_ef_construction"),
                        ef_search=settings_default("index_ef_search"))
    started = time.perf_counter()
    reader = IndexReader(store, index)
    reader.open()
    load_s = time.perf_counter() - started
    weights = Weights(keyword=settings_default("recall_keyword_weight"),
                      importance=settings_default("recall_importance_weight"),
                      recency=settings_default("recall_recency_weight"),
                      half_life_days=settings_default("recall_half_life_days"))
    return Recall(store, embedder, reader, weights, settings_default("recall_candidates")), load_s


def keyword_only(recall):
    """The same store and weights without embedder or reader: keyword-only recall (FTS5 + blending), public API."""
    from twin.recall.hybrid import Recall

    return Recall(recall.store, None, None, recall.weights, recall.candidates)


def measure_recall_path(recall, questions: list[str]) -> dict:
    """Per query, interleaved: raw embed, end-to-end recall (touch=True), hnsw alone, and keyword-only recall
    (the same `Recall` without embedder and reader, touch=False: its FTS5 half plus the blending)."""
    embedder, index, keyword = recall.embedder, recall.reader.index, keyword_only(recall)
    t_embed, t_recall, t_hnsw, t_fts, vectors, hits = [], [], [], [], [], []
    for q in questions:
        start = time.perf_counter()
        vec = embedder.embed([q])[0]
        t_embed.append(time.perf_counter() - start)
        vectors.append(vec)
        start = time.perf_counter()
        results = recall.recall(_corpus.BEING, q, limit=10, touch=True)
        t_recall.append(time.perf_counter() - start)
        hits.append(len(results))
        start = time.perf_counter()
        index.search(vec, TOP_K)
        t_hnsw.append(time.perf_counter() - start)
        start = time.perf_counter()
        keyword.recall(_corpus.BEING, q, limit=10, touch=False)
        t_fts.append(time.perf_counter() - start)
    keyword.close()
    return {"embed": summary_ms(t_embed), "recall": summary_ms(t_recall), "hnsw": summary_ms(t_hnsw),
            "fts": summary_ms(t_fts), "mean_results": sum(hits) / len(hits), "_vectors": vectors}


def measure_brute_force(store, model_id: str, index, vectors: list) -> dict:
    """Numpy baseline: one `(N, 384) @ (384,)` matmul + `argpartition` top-50 per query; and hnsw's
    recall@50 against that exact top-50."""
    import numpy as np

    rows = store.conn.execute("SELECT memory_id, vector FROM memory_embeddings WHERE model_id = ? ORDER BY memory_id",
                              (model_id,)).fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1).copy()
    del rows
    times, overlap = [], []
    for vec in vectors:
        start = time.perf_counter()
        sims = matrix @ vec
        top = np.argpartition(-sims, TOP_K - 1)[:TOP_K]
        times.append(time.perf_counter() - start)
        exact = set(ids[top].tolist())
        overlap.append(len(exact & {i for i, _ in index.search(vec, TOP_K)}) / TOP_K)
    return {"brute": summary_ms(times), "hnsw_recall_at_50": sum(overlap) / len(overlap),
            "matrix_mib": matrix.nbytes / 2**20}


def _profile(calls, top: int) -> dict:
    profiler = cProfile.Profile()
    profiler.enable()
    for call in calls:
        call()
    profiler.disable()
    out = {}
    for key in ("cumulative", "tottime"):
        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).strip_dirs().sort_stats(key).print_stats(top)
        out[key] = buf.getvalue()
    return out


def profile_recalls(recall, questions: list[str], top: int = 25) -> dict:
    """cProfile over `questions` recalls (main thread only: recall's keyword SQL runs in its own thread and shows
    as a wait on a future), then over keyword-only recall of the same questions; top entries as text."""
    recall_prof = _profile([lambda q=q: recall.recall(_corpus.BEING, q, limit=10, touch=True) for q in questions], top)
    keyword = keyword_only(recall)
    keyword_prof = _profile([lambda q=q: keyword.recall(_corpus.BEING, q, limit=10, touch=False) for q in questions],
                            top)
    keyword.close()
    return {**recall_prof, "keyword_cumulative": keyword_prof["cumulative"]}


def run_one(n: int, n_queries: int, profile: int, rebuild_index: bool) -> dict:
    """Everything for one N, in this process. Returns the figures."""
    data, build = _corpus.ensure_store(n, log=lambda m: print(m, flush=True), rebuild_index=rebuild_index)
    rss_after_build = proc_status_kb()
    load_before = load_note()
    reset_peak_rss()
    questions = _corpus.queries(n_queries + 30 + profile)
    warm, measured, profiled = questions[:30], questions[30:30 + n_queries], questions[30 + n_queries:]
    with tempfile.TemporaryDirectory(dir=OUT_DIR, prefix="work-") as tmp:
        db = Path(tmp) / "twin.db"
        shutil.copy2(data / "twin.db", db)
        rss_start = proc_status_kb()
        recall, load_s = open_recall(db, data / "index" / "memories.hnsw")
        print(f"recall_latency: N={n}: index loaded in {load_s:.2f} s "
              f"({recall.reader.index.live_count} vectors, tail {recall.reader.size - recall.reader.index.live_count})",
              flush=True)
        for q in warm:
            recall.embedder.embed([q])
            recall.recall(_corpus.BEING, q, limit=10, touch=True)
        path = measure_recall_path(recall, measured)
        rss_recall = proc_status_kb()
        prof = profile_recalls(recall, profiled) if profile else {}
        vectors = path.pop("_vectors")
        brute = measure_brute_force(recall.store, recall.embedder.model_id, recall.reader.index, vectors)
        recall.close()
        recall.store.close()
    embed_p50, recall_p50, brute_p50 = path["embed"]["p50_ms"], path["recall"]["p50_ms"], brute["brute"]["p50_ms"]
    return {"n": n, "queries": n_queries, "build": build, "index_load_s": load_s, **path, **brute,
            "load_before": load_before, "load_after": load_note(),
            "ratio_recall_over_embed_p50": recall_p50 / embed_p50,
            "embed_plus_brute_p50_ms": embed_p50 + brute_p50,
            "ratio_recall_over_embed_plus_brute_p50": recall_p50 / (embed_p50 + brute_p50),
            "rss_mib": {"after_build": mib(rss_after_build.get("VmRSS")),
                        "build_peak": mib(rss_after_build.get("VmHWM")) if build["built_now"] else None,
                        "before_recall_open": mib(rss_start.get("VmRSS")),
                        "recall_phase_peak": mib(rss_recall.get("VmHWM")),
                        "recall_phase_rss": mib(rss_recall.get("VmRSS")),
                        "process_peak_incl_brute_matrix": mib(proc_status_kb().get("VmHWM"))},
            "profile": prof}


def report(results: list[dict]) -> None:
    """Print the tables for all N side by side."""
    ns = [r["n"] for r in results]
    head = ["figure"] + [f"N={n:,}" for n in ns]

    def row(label, fn):
        return [label] + [fn(r) for r in results]

    rows = []
    for key, label in (("embed", "raw embed([q])"), ("recall", "recall(touch=True)"), ("hnsw", "hnsw search k=50"),
                       ("fts", "keyword-only recall (FTS5)"), ("brute", "numpy brute force k=50")):
        for p in ("p50", "p99"):
            rows.append(row(f"{label} {p} ms", lambda r, k=key, p=p: r[k][f"{p}_ms"]))
    rows += [row("raw embed + brute p50 ms", lambda r: r["embed_plus_brute_p50_ms"]),
             row("recall p50 / embed p50 (<= 1.5)", lambda r: r["ratio_recall_over_embed_p50"]),
             row("recall p50 / (embed+brute) p50 (< 1)", lambda r: r["ratio_recall_over_embed_plus_brute_p50"]),
             row("hnsw recall@50 vs exact", lambda r: r["hnsw_recall_at_50"]),
             row("mean results per recall", lambda r: r["mean_results"]),
             row("index load s (reader)", lambda r: r["index_load_s"]),
             row("peak RSS MiB, recall phase", lambda r: r["rss_mib"]["recall_phase_peak"]),
             row("peak RSS MiB, + brute matrix", lambda r: r["rss_mib"]["process_peak_incl_brute_matrix"]),
             row("peak RSS MiB, cache build (if built now)", lambda r: r["rss_mib"]["build_peak"]),
             row("cache: embed rate /s", lambda r: r["build"].get("embed_rate_per_s")),
             row("cache: embed s", lambda r: r["build"].get("embed_s")),
             row("cache: IndexWriter build s", lambda r: r["build"].get("index_build_s")),
             row("cache: index MiB", lambda r: r["build"].get("index_bytes", 0) / 2**20),
             row("cache: db MiB", lambda r: r["build"].get("db_bytes", 0) / 2**20)]
    print()
    print(table(head, rows, title=f"Recall latency ({results[0]['queries']} distinct queries per N)"))
    for r in results:
        print(f"N={r['n']:,}: {r['load_before']} before, {r['load_after']} after")
    last = results[-1]
    verdict = "PASS" if last["ratio_recall_over_embed_p50"] <= RATIO_TARGET else "FAIL"
    print(f"\ntarget recall p50 / raw embed p50 <= {RATIO_TARGET} at N={last['n']:,}: "
          f"{last['ratio_recall_over_embed_p50']:.2f} -> {verdict}")
    verdict = "PASS" if last["ratio_recall_over_embed_plus_brute_p50"] < 1 else "FAIL"
    print(f"target recall p50 < raw embed p50 + brute force p50 at N={last['n']:,}: {last['recall']['p50_ms']:.2f} ms "
          f"vs {last['embed_plus_brute_p50_ms']:.2f} ms -> {verdict}")
    for r in results:
        if r["profile"]:
            print(f"\ncProfile of recall at N={r['n']:,} (top by cumulative time):")
            print(r["profile"]["cumulative"])
            print(f"cProfile of recall at N={r['n']:,} (top by own time):")
            print(r["profile"]["tottime"])
            print(f"cProfile of keyword-only recall (no embedder) at N={r['n']:,} (top by cumulative time):")
            print(r["profile"]["keyword_cumulative"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000], help="store sizes (default 10k 100k)")
    parser.add_argument("--queries", type=int, default=300, help="distinct measured queries per N (>= 200)")
    parser.add_argument("--profile", type=int, default=20,
                        help="recalls profiled with cProfile at the largest N (0 = none; default 20)")
    parser.add_argument("--rebuild-index", action="store_true", help="rebuild the cached index (times IndexWriter)")
    parser.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_out:
        result = run_one(args.n[0], args.queries, args.profile, args.rebuild_index)
        args.child_out.write_text(json.dumps(result, default=str))
        return 0
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    results = []
    for n in args.n:
        with tempfile.NamedTemporaryFile(dir=OUT_DIR, suffix=".json") as tmp:
            argv_child = [sys.executable, __file__, "--n", str(n), "--queries", str(args.queries),
                          "--profile", str(args.profile if n == max(args.n) else 0), "--child-out", tmp.name]
            if args.rebuild_index:
                argv_child.append("--rebuild-index")
            subprocess.run(argv_child, check=True)
            results.append(json.loads(Path(tmp.name).read_text()))
    report(results)
    path = write_json(NAME, {"results": results})
    print(f"\nfigures written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
