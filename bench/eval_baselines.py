"""The plain baselines twin's recall is compared with, on the raw eval memories (no capture, no dedup):

- **bm25**: each set's own `baseline_bm25.py` (SQLite FTS5 bm25, the OR of the query's non-stopword terms, one
  index per haystack), run as a subprocess;
- **fusion**: a 50/50 convex combination of min-max-normalised bm25 and cosine (the same all-MiniLM vectors twin
  stores) over every memory of the haystack made before `as_of`: bm25 from the same FTS5 index and MATCH as the
  baseline (a memory that matches no term has bm25 0), cosine by brute force; each normalised over the
  haystack's visible memories, so the best of each scores 1 and the worst 0 (the fusion the LoCoMo README
  measured: R@5 0.569, R@10 0.664 on the dev half).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np

TOP_K = 10


def bm25_run(eval_dir: Path, out: Path) -> Path:
    """Run the set's `baseline_bm25.py` into `out` (a run file) and return `out`."""
    subprocess.run([sys.executable, str(eval_dir / "baseline_bm25.py"), "--memories", str(eval_dir / "memories.jsonl"),
                    "--queries", str(eval_dir / "queries.jsonl"), "--out", str(out)], check=True, capture_output=True)
    return out


def _personal_baseline(eval_dir: Path):
    """The personal set's `baseline_bm25` module (its tokenising and index, shared by both sets' baselines)."""
    path = eval_dir / "baseline_bm25.py"
    if not (eval_dir / "score.py").exists():  # LoCoMo's baseline imports the personal one from ../eval
        path = eval_dir.parent / "eval" / "baseline_bm25.py"
    spec = importlib.util.spec_from_file_location("twin_eval_bm25", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _minmax(values: np.ndarray) -> np.ndarray:
    lo, hi = float(values.min()), float(values.max())
    return (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values)


def fusion_rows(eval_dir: Path, memories: list[dict], queries: list[dict], embedder, keyword_weight: float = 0.5
                ) -> list[dict]:
    """Run-file rows of the min-max fusion (module docstring) with `embedder` (cached vectors)."""
    bm25 = _personal_baseline(eval_dir)
    by_hay: dict[str, list[dict]] = {}
    for m in memories:
        by_hay.setdefault(m.get("haystack") or "", []).append(m)
    dbs = {h: bm25.build_index(ms) for h, ms in by_hay.items()}
    vectors = {h: embedder.embed([m["content"] for m in ms]) for h, ms in by_hay.items()}
    qvecs = embedder.embed_queries([q["query"] for q in queries])
    out = []
    for q, qvec in zip(queries, qvecs, strict=True):
        hay = q.get("haystack") or ""
        ms = by_hay[hay]
        visible = np.array([m["created_at"] < q["as_of"] for m in ms])
        ids, scores = bm25.rank(dbs[hay], q["query"], q["as_of"], len(ms))
        index = {m["id"]: i for i, m in enumerate(ms)}
        kw = np.zeros(len(ms))
        for mid, s in zip(ids, scores, strict=True):
            kw[index[mid]] = s
        cos = vectors[hay] @ qvec
        rows = np.flatnonzero(visible)
        if not len(rows):
            out.append({"qid": q["qid"], "ranked": [], "scores": []})
            continue
        fused = keyword_weight * _minmax(kw[rows]) + (1 - keyword_weight) * _minmax(cos[rows])
        order = np.argsort(-fused, kind="stable")[:TOP_K]
        out.append({"qid": q["qid"], "ranked": [ms[i]["id"] for i in rows[order]],
                    "scores": [round(float(f), 6) for f in fused[order]]})
    return out
