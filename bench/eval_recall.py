"""Recall quality on the shared eval set: twin's hybrid recall beside the eval's own bm25 baseline, and an
optional grid over the recall settings.

    .venv/bin/python bench/eval_recall.py                    # our run + bm25 baseline, scored by score.py
    .venv/bin/python bench/eval_recall.py --grid             # + sweep weights, half-life and candidates
    .venv/bin/python bench/eval_recall.py --eval-dir PATH    # default: ../shared/eval from the repo root

A fresh store in a temp dir gets the eval memories in `created_at` order through `twin.capture.capture`, the
path `learn()` uses (the worthiness gate, dedup, updates in place, supersession, inferred sensitivity), each
created at its own `created_at`; every memory is embedded with `workers.jobs.flush_pending` into an
`IndexWriter` and linked to its 3 nearest by `twin.lifecycle.write_all_pending_edges` (as the embedding worker
does after a flush), and each query runs `Recall.recall(being, query, limit=10, as_of=q["as_of"], touch=False,
include_sensitive=asks_for_sensitive(query), zone=Europe/Berlin)`. The system never sees `dup_of`,
`supersedes` or `sensitive` (they are removed before capture). A stored memory that several eval memories
became (a duplicate reinforced, a refinement updated in place) is reported as all of their ids, newest
first. Scoring is the eval's own `score.py` (with `--memories`).
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import subprocess
import sys
import tempfile
import time
import types
from dataclasses import asdict
from pathlib import Path

from _common import DEFAULT_EVAL_DIR, OUT_DIR, load_note, table, write_json

from twin.weights import SEED_WEIGHTS

NAME = "eval_recall"
BEING = "owner"
HIDDEN_FIELDS = ("dup_of", "supersedes", "sensitive")
"""Ground-truth fields of the eval that the system under test must not read (eval README): twin finds
restatements, supersessions and secrets itself (`twin.capture`)."""
ZONE = "Europe/Berlin"
"""The eval owner's time zone (Lisbon, then Berlin), for time words in queries."""
GRID = {"keyword": [0.2, 0.3, 0.4, 0.5, 0.6], "importance": [0.0, 0.05, 0.1, 0.15, 0.2],
        "recency": [0.0, 0.05, 0.1, 0.15], "half_life_days": [30.0, 45.0, 90.0, 180.0], "candidates": [30, 50, 100]}
"""The default sweep (--grid); each list can be overridden on the command line."""


def shipped_defaults() -> dict:
    """The recall settings twin ships (read from `Settings`' field defaults, not from any config file)."""
    from twin.settings import Settings

    f = Settings.model_fields
    return {"keyword": f["recall_keyword_weight"].default, "importance": f["recall_importance_weight"].default,
            "recency": f["recall_recency_weight"].default, "half_life_days": f["recall_half_life_days"].default,
            "candidates": f["recall_candidates"].default}


class CachedEmbedder:
    """Wraps an embedder and remembers query vectors, so a grid re-runs recall without re-embedding queries."""

    def __init__(self, inner):
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self._cache: dict[str, object] = {}

    def embed(self, texts):
        import numpy as np

        missing = [t for t in texts if t not in self._cache]
        if missing:
            for text, vec in zip(missing, self.inner.embed(missing), strict=True):
                self._cache[text] = vec
        return np.stack([self._cache[t] for t in texts]) if texts else self.inner.embed([])


class EvalStore:
    """The eval memories imported into a fresh store in `workdir`, embedded and indexed."""

    def __init__(self, workdir: Path, memories_path: Path):
        self.workdir, self.memories_path = workdir, memories_path
        self.to_eval: dict[int, list[str]] = {}
        self.created: dict[str, str] = {}
        self.figures: dict = {}

    def open(self) -> EvalStore:
        from collections import Counter

        from twin.activity import Activity
        from twin.capture import capture
        from twin.embedder import LocalEmbedder
        from twin.extractor import Candidate
        from twin.index import VectorIndex
        from twin.lifecycle import VectorLookup, write_all_pending_edges
        from twin.settings import Settings
        from twin.store import Store
        from twin.vectors import IndexReader, IndexWriter
        from workers.jobs import flush_pending

        f = Settings.model_fields
        rows = [json.loads(line) for line in self.memories_path.read_text(encoding="utf-8").splitlines() if line]
        rows = sorted(({k: v for k, v in row.items() if k not in HIDDEN_FIELDS} for row in rows),
                      key=lambda r: (r["created_at"], r["id"]))
        self.store = Store(self.workdir / "twin.db").open()
        activity = Activity(self.store, BEING)
        outcomes: Counter = Counter()
        for row in rows:
            candidate = Candidate(content=row["content"], kind=row["kind"], importance=row["importance"],
                                  tags=row.get("tags") or [])
            provenance = {"source_type": row["source"].split(":")[0], "captured_from": row["id"], "confidence": 1.0}
            with self.store.transaction():
                result = capture(self.store, BEING, candidate, row["source"], row["created_at"], provenance)
            outcomes["rejected" if result.rejected else "deduplicated" if result.deduplicated else
                     "updated" if result.updated else "created"] += 1
            outcomes["superseded"] += len(result.superseded)
            self.created[row["id"]] = row["created_at"]
            if result.id is not None:
                self.to_eval.setdefault(result.id, []).insert(0, row["id"])  # newest eval id first
        self.embedder = LocalEmbedder(f["embed_threads"].default)
        self.embedder.open()

        def new_index():
            return VectorIndex(self.workdir / "index" / "memories.hnsw", self.embedder.dim, self.embedder.model_id,
                               m=f["index_m"].default, ef_construction=f["index_ef_construction"].default,
                               ef_search=f["index_ef_search"].default)

        writer = IndexWriter(self.store, new_index(), activity)
        writer.open()
        started = time.perf_counter()
        embedded = flush_pending(self.store, self.embedder, writer, f["embed_batch_max"].default, 0.0)
        embed_s = time.perf_counter() - started
        writer.checkpoint(force=True)
        self.reader = IndexReader(self.store, new_index())
        self.reader.open()
        lookup = VectorLookup(self.store, self.reader.search, self.embedder.model_id)
        write_all_pending_edges(self.store, lookup)  # the graph edges the embedding worker writes after a flush
        self.figures = {"captured": dict(outcomes), "embedded": embedded, "embed_s": embed_s,
                        "sensitive": self.store.conn.execute("SELECT COUNT(*) FROM memories WHERE sensitivity = "
                                                             "'sensitive'").fetchone()[0]}
        return self

    def close(self) -> None:
        self.store.close()


def _materialise(value):
    """A one-shot iterable argument (generator, map...) as a tuple, so it can be both keyed and passed on."""
    if isinstance(value, (str, bytes, list, tuple, set, frozenset, dict)) or not hasattr(value, "__next__"):
        return value
    return tuple(value)


def _key(value):
    """A hashable stand-in for an argument: sets -> frozenset, sequences -> tuples, arrays -> their bytes."""
    if isinstance(value, (set, frozenset)):
        return frozenset(_key(v) for v in value)
    if isinstance(value, (list, tuple)):
        return tuple(_key(v) for v in value)
    if hasattr(value, "tobytes") and hasattr(value, "shape"):
        return ("array", value.tobytes(), value.shape)
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


class Memo:
    """Wraps the store or the index reader a grid `Recall` uses and memoises every method call by its arguments.

    With `touch=False` recall only reads, and the memories do not change during the sweep, so the same call
    gives the same answer; only the blending of the candidates differs per config. Uses no private API:
    `run_grid` first checks, on a few configs, that memoised recall ranks exactly like plain recall.
    """

    def __init__(self, target):
        self._target = target
        self._cache: dict = {}

    def __getattr__(self, name):
        attr = getattr(self._target, name)
        if not isinstance(attr, types.MethodType):
            return attr

        def call(*args, **kwargs):
            args = tuple(_materialise(a) for a in args)
            kwargs = {k: _materialise(v) for k, v in kwargs.items()}
            key = (name, _key(args), _key(tuple(sorted(kwargs.items()))))
            if key not in self._cache:
                self._cache[key] = attr(*args, **kwargs)
            return self._cache[key]

        return call


def make_run(es: EvalStore, embedder, queries: list[dict], cfg: dict, memo: tuple[Memo, Memo] | None = None
             ) -> list[dict]:
    """One run file's rows for the settings `cfg` (weights, half-life, candidates); `memo` = (store, reader)
    wrappers to use instead of the real ones."""
    from zoneinfo import ZoneInfo

    from twin.chat import asks_for_sensitive
    from twin.recall import Recall, Weights

    weights = Weights(keyword=cfg["keyword"], importance=cfg["importance"], recency=cfg["recency"],
                      half_life_days=cfg["half_life_days"])
    store, reader = memo or (es.store, es.reader)
    recall = Recall(store, embedder, reader, weights, int(cfg["candidates"]), score_floor=cfg.get("floor", 0.0))
    try:
        out = []
        for q in queries:
            results = recall.recall(BEING, q["query"], limit=10, as_of=q["as_of"], touch=False,
                                    include_sensitive=asks_for_sensitive(q["query"]), zone=ZoneInfo(ZONE))
            ranked = [(eval_id, r.score) for r in results for eval_id in es.to_eval[r.memory.id]
                      if es.created[eval_id] < q["as_of"]]  # an update that came later did not exist yet
            out.append({"qid": q["qid"], "ranked": [e for e, _ in ranked], "scores": [round(s, 6) for _, s in ranked]})
        return out
    finally:
        recall.close()


def write_run(rows: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def score_cli(eval_dir: Path, run: Path, threshold: float | None) -> tuple[str, dict]:
    """Run the eval's own score.py (with --memories): its printed table and its JSON figures."""
    argv = [sys.executable, str(eval_dir / "score.py"), "--queries", str(eval_dir / "queries.jsonl"),
            "--run", str(run), "--memories", str(eval_dir / "memories.jsonl")]
    if threshold is not None:
        argv += ["--threshold", str(threshold)]
    text = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    figures = json.loads(subprocess.run([*argv, "--json"], capture_output=True, text=True, check=True).stdout)
    return text, figures


def load_scorer(eval_dir: Path):
    """The eval's score.py as a module (for the grid: `score(queries, run, threshold, memories)` in process)."""
    spec = importlib.util.spec_from_file_location("twin_eval_score", eval_dir / "score.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def side_by_side(ours: dict, bm25: dict) -> str:
    cols = ("R@1", "R@5", "R@10", "MRR")
    rows = []
    for cat in [*ours["categories"], "all"]:
        a = ours["overall"] if cat == "all" else ours["categories"][cat]
        b = bm25["overall"] if cat == "all" else bm25["categories"].get(cat, {})
        if cat == "abstention":
            continue
        rows.append([cat] + [x for c in cols for x in (a.get(c), b.get(c))])
    rows.append(["current_fact stale>new", ours["overall"]["stale>new"], bm25["overall"]["stale>new"]]
                + [None] * 6)
    rows.append(["sens@10 (lower is better)", ours["overall"].get("sens@10"), bm25["overall"].get("sens@10")]
                + [None] * 6)
    head = ["category"] + [f"{c} {who}" for c in cols for who in ("twin", "bm25")]
    return table(head, rows, digits=3, title="twin recall vs bm25 baseline (dev split)")


def run_grid(es: EvalStore, scorer, queries, memories, grid: dict) -> dict:
    """Every combination (half-life only varies when recency > 0); overall figures per config.

    Store and reader calls are memoised (`Memo`); before the sweep, a few configs are run both ways and must give
    identical rankings and scores, else the sweep runs plain `Recall.recall` (slower, same answer).
    """
    embedder = CachedEmbedder(es.embedder)
    memo = (Memo(es.store), Memo(es.reader))
    configs = []
    for kw, imp, rec, cand in itertools.product(grid["keyword"], grid["importance"], grid["recency"],
                                                grid["candidates"]):
        for hl in (grid["half_life_days"] if rec > 0 else [grid["half_life_days"][0]]):
            configs.append({"keyword": kw, "importance": imp, "recency": rec, "half_life_days": hl,
                            "candidates": cand})
    probe = configs[:: max(1, len(configs) // 4)]
    exact = all(make_run(es, embedder, queries, c) == make_run(es, embedder, queries, c, memo) for c in probe)
    print(f"grid: memoised retrieval {'matches' if exact else 'DIFFERS from'} plain recall on {len(probe)} configs",
          flush=True)
    started, results = time.perf_counter(), []
    for i, cfg in enumerate(configs, 1):
        rows = make_run(es, embedder, queries, cfg, memo if exact else None)
        run = {r["qid"]: (r["ranked"], r["scores"]) for r in rows}
        o = scorer.score(queries, run, None, memories)["overall"]
        results.append({**cfg, **{k: o.get(k) for k in ("R@1", "R@5", "R@10", "nDCG@10", "MRR", "stale>new",
                                                         "sens@10")}})
        if i % 200 == 0:
            print(f"grid: {i}/{len(configs)} configs, {time.perf_counter() - started:.0f} s", flush=True)
    _add_neighbour_means(results, grid)
    return {"configs": len(configs), "seconds": time.perf_counter() - started, "memoised": exact,
            "results": results}


def _objective(r: dict) -> float:
    return (r["R@5"] + r["MRR"]) / 2


def _add_neighbour_means(results: list[dict], grid: dict) -> None:
    """`nbr`: mean objective ((R@5+MRR)/2) of the configs one grid step away in one setting (robustness)."""
    keys = tuple(GRID)
    by_key = {tuple(r[k] for k in keys): r for r in results}
    for r in results:
        vals = []
        for j, k in enumerate(keys):
            pos = grid[k].index(r[k])
            for step in (-1, 1):
                if 0 <= pos + step < len(grid[k]):
                    other = [r[x] for x in keys]
                    other[j] = grid[k][pos + step]
                    neighbour = by_key.get(tuple(other))
                    if neighbour is not None:
                        vals.append(_objective(neighbour))
        r["nbr"] = sum(vals) / len(vals) if vals else None


def grid_table(rows: list[dict], title: str) -> str:
    head = ["kw", "imp", "rec", "half-life", "cand", "R@1", "R@5", "R@10", "nDCG@10", "MRR", "stale>new", "sens@10",
            "nbr (R@5+MRR)/2"]
    cells = [[f"{r['keyword']:.2f}", r["importance"], r["recency"], r["half_life_days"], r["candidates"], r["R@1"],
              r["R@5"], r["R@10"], r["nDCG@10"], r["MRR"], r["stale>new"], r["sens@10"], r["nbr"]] for r in rows]
    return table(head, cells, digits=3, title=title)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=DEFAULT_EVAL_DIR, help="default: ../shared/eval")
    parser.add_argument("--threshold", type=float, default=None, help="passed to score.py (abstention)")
    parser.add_argument("--grid", action="store_true", help="sweep the recall settings")
    parser.add_argument("--top", type=int, default=5, help="configs shown per ranking (--grid)")
    for key, values in GRID.items():
        parser.add_argument(f"--{key.replace('_', '-')}", type=float, nargs="+", default=values,
                            help=f"grid values (default {values})")
    args = parser.parse_args(argv)
    eval_dir = args.eval_dir.resolve()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    print(f"eval_recall: {load_note()}", flush=True)
    queries = [json.loads(x) for x in (eval_dir / "queries.jsonl").read_text(encoding="utf-8").splitlines() if x]
    memories = [json.loads(x) for x in (eval_dir / "memories.jsonl").read_text(encoding="utf-8").splitlines() if x]
    defaults = shipped_defaults()
    figures: dict = {"eval_dir": str(eval_dir), "shipped_defaults": defaults}
    with tempfile.TemporaryDirectory(prefix="twin-eval-") as tmp:
        es = EvalStore(Path(tmp), eval_dir / "memories.jsonl").open()
        figures["store"] = es.figures
        print(f"eval_recall: captured {es.figures['captured']} ({es.figures['sensitive']} inferred sensitive), "
          f"embedded {es.figures['embedded']} in "
              f"{es.figures['embed_s']:.1f} s", flush=True)
        started = time.perf_counter()
        ours_run = write_run(make_run(es, es.embedder, queries, defaults), OUT_DIR / "eval_recall.run.jsonl")
        figures["recall_s_per_query"] = (time.perf_counter() - started) / len(queries)
        bm25_run = OUT_DIR / "eval_bm25.run.jsonl"
        subprocess.run([sys.executable, str(eval_dir / "baseline_bm25.py"), "--memories",
                        str(eval_dir / "memories.jsonl"), "--queries", str(eval_dir / "queries.jsonl"), "--out",
                        str(bm25_run)], check=True, capture_output=True)
        ours_text, figures["twin"] = score_cli(eval_dir, ours_run, args.threshold)
        seed = {**asdict(SEED_WEIGHTS), "candidates": defaults["candidates"]}
        seed_run = write_run(make_run(es, es.embedder, queries, seed), OUT_DIR / "eval_recall.seed.run.jsonl")
        seed_text, figures["twin_seed_weights"] = score_cli(eval_dir, seed_run, args.threshold)
        bm25_text, figures["bm25"] = score_cli(eval_dir, bm25_run, args.threshold)
        print(f"\ntwin recall, shipped defaults {defaults} (score.py):\n{ours_text}")
        print(f"twin recall with seed 000's weights {seed} (score.py):\n{seed_text}")
        print(f"bm25 baseline (baseline_bm25.py, score.py):\n{bm25_text}")
        print(side_by_side(figures["twin"], figures["bm25"]))
        if args.grid:
            grid = {k: [float(v) if k != "candidates" else int(v) for v in getattr(args, k)] for k in GRID}
            grid_out = run_grid(es, load_scorer(eval_dir), queries, memories, grid)
            figures["grid"] = grid_out
            report_grid(grid_out, defaults, args.top, figures["twin"]["overall"])
            best = max(grid_out["results"], key=lambda r: (r["R@5"], r["MRR"]))
            best_run = write_run(make_run(es, CachedEmbedder(es.embedder), queries, best),
                                 OUT_DIR / "eval_recall.best.run.jsonl")
            best_text, figures["best_by_r5"] = score_cli(eval_dir, best_run, args.threshold)
            print(f"\nbest config by R@5 {({k: best[k] for k in GRID})} (score.py):\n{best_text}")
        es.close()
    path = write_json(NAME, figures)
    print(f"figures written to {path}")
    return 0


def report_grid(grid_out: dict, defaults: dict, top: int, shipped_overall: dict) -> None:
    results = grid_out["results"]
    print(f"\ngrid: {grid_out['configs']} configs in {grid_out['seconds']:.0f} s")
    by_r5 = sorted(results, key=lambda r: (-r["R@5"], -r["MRR"]))
    by_mrr = sorted(results, key=lambda r: (-r["MRR"], -r["R@5"]))
    by_nbr = sorted(results, key=lambda r: -(r["nbr"] or 0))
    print(grid_table(by_r5[:top], f"top {top} by overall R@5 (then MRR)"))
    print()
    print(grid_table(by_mrr[:top], f"top {top} by overall MRR (then R@5)"))
    print()
    print(grid_table(by_nbr[:top], f"top {top} by neighbourhood mean of (R@5+MRR)/2 (robust to one grid step)"))
    shipped = {**defaults, **{k: shipped_overall.get(k) for k in ("R@1", "R@5", "R@10", "nDCG@10", "MRR", "stale>new",
                                                                 "sens@10")}, "nbr": None}
    rank = 1 + sum(1 for r in results if (r["R@5"], r["MRR"]) > (shipped["R@5"], shipped["MRR"]))
    print()
    print(grid_table([shipped], f"shipped defaults (would rank {rank} of {len(results)} by R@5, then MRR)"))
    print("note: 139 answerable queries; one query moves R@5 by up to 0.007, so differences below ~0.01 are noise.")


if __name__ == "__main__":
    sys.exit(main())
