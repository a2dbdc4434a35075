"""Recall latency with 10 projects x 10k memories beside a single 100k store (issue 19): the same 100k memories
(bench/_corpus.py's generator, the real model's vectors, the index built by `IndexWriter`, from the cache), once
all in the owner's `default` namespace and once spread over 10 projects of 10k each (the owner a member of all),
searched interleaved in one process with one model: a plain recall over the single store, and a recall scoped the
way an active project scopes it (`twin.operations.scopes.reach`: the project's namespace with the owner's own,
then `Recall.recall` over that union; the index holds every project's vectors, so the scope filters its top-k).

    .venv/bin/python bench/project_latency.py                  # 300 queries
    .venv/bin/python bench/project_latency.py --queries 500

Both stores are copies of the cached one (the cache is never opened: a store opened by this branch would be
migrated). Reported: p50/p90/p99 of both, the ratio of the p50s (scoped / single), the mean results per recall,
and that every scoped result was of the project asked or the owner's own.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

import _corpus
from _common import OUT_DIR, load_note, summary_ms, table, write_json

NAME = "project_latency"
PROJECTS = 10


def settings_default(name: str):
    """A setting's shipped default (read from the model, not from any config file or environment)."""
    from twin.settings import Settings

    return Settings.model_fields[name].default


def spread_over_projects(db: Path, projects: int) -> list[str]:
    """Move every memory of the store at `db` into one of `projects` new projects (by id modulo), each owned by
    the owner; returns the project ids. Through the store's own migrations and `twin.store.projects`."""
    from twin.memory import utc_now
    from twin.namespaces import project_namespace
    from twin.operations.projects import new_project_id
    from twin.operations.scopes import OWNER_ID
    from twin.store import Store
    from twin.store.projects import Project, add_project

    store = Store(db).open()
    try:
        ids = [new_project_id() for _ in range(projects)]
        with store.atomic() as conn:
            for n, pid in enumerate(ids):
                add_project(store, Project(pid, f"project-{n}", OWNER_ID, utc_now()))
                conn.execute("UPDATE memories SET namespace = ? WHERE id % ? = ?",
                             (project_namespace(pid), projects, n))
        counts = store.namespace_counts(_corpus.BEING)
    finally:
        store.close()
    assert len(counts) == projects and all(c["memories"] for c in counts.values()), counts
    return ids


def open_recall(db: Path, index_path: Path, embedder):
    """A `Recall` over the store at `db` with the shipped defaults, `embedder` and a warm index reader of its own."""
    from twin.recall.hybrid import Recall, Weights
    from twin.store import Store
    from twin.vectors.index import VectorIndex
    from twin.vectors.sidecar import IndexReader

    store = Store(db).open()
    index = VectorIndex(index_path, embedder.dim, embedder.model_id, m=settings_default("index_m"),
                        ef_construction=settings_default("index_ef_construction"),
                        ef_search=settings_default("index_ef_search"))
    reader = IndexReader(store, index)
    reader.open()
    weights = Weights(keyword=settings_default("recall_keyword_weight"),
                      importance=settings_default("recall_importance_weight"),
                      recency=settings_default("recall_recency_weight"),
                      half_life_days=settings_default("recall_half_life_days"))
    return Recall(store, embedder, reader, weights, settings_default("recall_candidates"))


def scoped_recall(recall, question: str, project_id: str):
    """What `twin.operations.reads.search` does for the owner with `project_id` in scope: `reach`, then recall
    over its namespaces."""
    from twin.operations.scopes import reach

    names = reach(recall.store, project=project_id).reads
    return recall.recall(_corpus.BEING, question, limit=10, touch=True, namespace=names[0],
                         include_namespaces=names[1:]), names


def run(n_queries: int) -> dict:
    """The whole measurement; the figures."""
    from twin.vectors.embedder import LocalEmbedder

    data, build = _corpus.ensure_store(100_000, log=lambda m: print(m, flush=True))
    questions = _corpus.queries(n_queries + 30)
    warm, measured = questions[:30], questions[30:]
    load_before = load_note()
    with tempfile.TemporaryDirectory(dir=OUT_DIR, prefix="work-") as tmp:
        single_db, projects_db = Path(tmp) / "single.db", Path(tmp) / "projects.db"
        for db in (single_db, projects_db):
            shutil.copy2(data / "twin.db", db)
        project_ids = spread_over_projects(projects_db, PROJECTS)
        embedder = LocalEmbedder(settings_default("embed_threads"))
        embedder.open()
        index_path = data / "index" / "memories.hnsw"
        single, scoped = open_recall(single_db, index_path, embedder), open_recall(projects_db, index_path, embedder)
        for n, q in enumerate(warm):
            single.recall(_corpus.BEING, q, limit=10, touch=True)
            scoped_recall(scoped, q, project_ids[n % PROJECTS])
        t_single, t_scoped, n_single, n_scoped, outside = [], [], [], [], 0
        for n, q in enumerate(measured):
            started = time.perf_counter()
            hits = single.recall(_corpus.BEING, q, limit=10, touch=True)
            t_single.append(time.perf_counter() - started)
            n_single.append(len(hits))
            started = time.perf_counter()
            hits, names = scoped_recall(scoped, q, project_ids[n % PROJECTS])
            t_scoped.append(time.perf_counter() - started)
            n_scoped.append(len(hits))
            outside += sum(h.memory.namespace not in names for h in hits)
        for recall in (single, scoped):
            recall.close()
            recall.store.close()
    single_ms, scoped_ms = summary_ms(t_single), summary_ms(t_scoped)
    return {"queries": n_queries, "projects": PROJECTS, "memories": 100_000, "build": build,
            "single_100k": single_ms, "project_10k_of_100k": scoped_ms,
            "ratio_scoped_over_single_p50": scoped_ms["p50_ms"] / single_ms["p50_ms"],
            "ratio_scoped_over_single_p99": scoped_ms["p99_ms"] / single_ms["p99_ms"],
            "mean_results_single": sum(n_single) / len(n_single), "mean_results_scoped": sum(n_scoped) / len(n_scoped),
            "results_outside_scope": outside, "load_before": load_before, "load_after": load_note()}


def report(r: dict) -> None:
    """Print the table."""
    rows = [[f"recall {p}", r["single_100k"][f"{p}_ms"], r["project_10k_of_100k"][f"{p}_ms"]]
            for p in ("p50", "p90", "p99")]
    rows.append(["mean results per recall", r["mean_results_single"], r["mean_results_scoped"]])
    print(table(["figure (ms)", "single store, 100k", f"1 of {r['projects']} projects x 10k"], rows,
                title=f"Recall latency, {r['queries']} queries interleaved"))
    print(f"scoped / single: p50 {r['ratio_scoped_over_single_p50']:.2f}, p99 {r['ratio_scoped_over_single_p99']:.2f}"
          f"; results outside the scope asked: {r['results_outside_scope']}")
    print(f"{r['load_before']} before, {r['load_after']} after")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=300, help="distinct measured queries (default 300)")
    args = parser.parse_args(argv)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    try:
        figures = run(args.queries)
    except sqlite3.Error as exc:
        print(f"project_latency: the store copy failed: {exc}")
        return 1
    report(figures)
    print(f"wrote {write_json(NAME, figures)}")
    return 0 if figures["results_outside_scope"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
