"""Recall quality on both dev sets in one run: twin's recall beside bm25 and a plain min-max fusion, per category,
with the deltas, and an optional grid over the recall settings scored on both sets together.

    .venv/bin/python bench/eval_recall.py                     # both sets: twin, bm25, fusion (~1 min, cached vectors)
    .venv/bin/python bench/eval_recall.py --before 913199c    # + twin as it was at that commit, same run
    .venv/bin/python bench/eval_recall.py --grid              # + sweep the recall settings on both sets
    .venv/bin/python bench/eval_recall.py --ablate            # + each ranking rule off in turn, per set and haystack
    .venv/bin/python bench/eval_recall.py --sets personal     # one set only

The sets (`eval_sets.py`): the personal set (`../shared/eval`, memories through capture, one being) and LoCoMo's
dev half (`../shared/eval-locomo`, Maharana et al., ACL 2024, snap-research/locomo, CC BY-NC 4.0: each
conversation its own store and being, turns through `Store.insert_memory`). Each query runs
`Recall.recall(being, query, limit=10, as_of=q["as_of"], touch=False, include_sensitive=asks_for_sensitive(query),
zone=...)` against its own haystack's store; a stored memory several eval memories became (a duplicate
reinforced, a refinement updated) is reported as all of their ids, newest first, those made before `as_of`
only. The baselines (`eval_baselines.py`) see the raw memories. Scoring is the personal set's `score.py`
(imported; the same figures as its CLI). Run files and figures go to `bench/out/`.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    DEFAULT_EVAL_DIR,
    DEFAULT_LOCOMO_DIR,
    OUT_DIR,
    REPO_ROOT,
    drop_editable_finders,
    export_at,
    import_moved,
    load_note,
    table,
    write_json,
)
from eval_baselines import bm25_run, fusion_rows
from eval_sets import SETS, VectorCache, read_jsonl

NAME = "eval_recall"
LIMIT = 10
GRID = {"keyword": [0.2, 0.3, 0.5], "importance": [0.0, 0.1], "recency": [0.0, 0.05], "candidates": [50]}
"""The default sweep (--grid): each key is a field of `recall_config`; each list can be overridden with
`--set key=v1,v2`."""
OVERALL = ("R@1", "R@5", "R@10", "MRR")


def shipped_config() -> dict:
    """The recall settings twin ships (the field defaults of `Settings` whose names start with `recall_`, without
    the prefix), read from the code, not from any config file."""
    from twin.settings import Settings

    return {name.removeprefix("recall_").replace("_weight", ""): f.default
            for name, f in Settings.model_fields.items() if name.startswith("recall_")}


def make_recall(hay, embedder, cfg: dict):
    """A `Recall` over one haystack's store with the settings `cfg` (`shipped_config()` keys, or any field of
    `twin.weights.RecallConfig`)."""
    recall_module = import_moved("twin.recall.hybrid")

    store, reader = hay.store, hay.reader
    builder = getattr(recall_module, "recall_with", None)
    if builder is not None:
        return builder(store, embedder, reader, cfg)
    from twin.weights import Weights  # an older twin (--before): weights and candidates only

    weights = Weights(keyword=cfg["keyword"], importance=cfg["importance"], recency=cfg["recency"],
                      half_life_days=cfg["half_life_days"])
    return recall_module.Recall(store, embedder, reader, weights, int(cfg["candidates"]))


def twin_rows(es, embedder, cfg: dict) -> list[dict]:
    """One run file's rows for `es` (an opened `EvalSet`) with the settings `cfg`."""
    from zoneinfo import ZoneInfo

    recalls = {name: make_recall(hay, embedder, cfg) for name, hay in es.haystacks.items()}
    zone = ZoneInfo(es.zone)
    try:
        out = []
        for q in es.queries:
            name = es.haystack_of(q)
            results = recalls[name].recall(name, q["query"], limit=LIMIT, as_of=q["as_of"], touch=False,
                                           include_sensitive=es.include_sensitive(q), zone=zone)
            to_eval = es.haystacks[name].to_eval
            ranked = [(eval_id, r.score) for r in results for eval_id in to_eval[r.memory.id]
                      if es.created[eval_id] < q["as_of"]]  # an update that came later did not exist yet
            out.append({"qid": q["qid"], "ranked": [e for e, _ in ranked], "scores": [round(s, 6) for _, s in ranked]})
        return out
    finally:
        for r in recalls.values():
            r.close()


def write_run(rows: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def read_run(path: Path) -> dict:
    return {r["qid"]: (r["ranked"], r.get("scores")) for r in read_jsonl(path)}


def load_scorer(eval_dir: Path):
    """The personal set's score.py as a module (`score(queries, run, threshold, memories)`)."""
    spec = importlib.util.spec_from_file_location("twin_eval_score", eval_dir / "score.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def as_run(rows: list[dict]) -> dict:
    return {r["qid"]: (r["ranked"], r["scores"]) for r in rows}


# -- tables ----------------------------------------------------------------------------------------------------
def category_table(name: str, figures: dict[str, dict], reference: str = "twin") -> str:
    """Per category: R@5 and R@10 of every system in `figures` ({label: score() result}), MRR of `reference`,
    and `reference`'s R@5 and R@10 minus bm25's and the fusion's."""
    labels = list(figures)
    first = figures[reference]
    cats = [c for c in first["categories"] if first["categories"][c].get("R@5") is not None] + ["all"]
    head = (["category", "n"] + [f"R@5 {x}" for x in labels] + [f"R@10 {x}" for x in labels] + [f"MRR {reference}"]
            + [f"ΔR@5 {reference}-{x}" for x in ("bm25", "fusion") if x in figures]
            + [f"ΔR@10 {reference}-{x}" for x in ("bm25", "fusion") if x in figures])

    def cell(label: str, cat: str, col: str):
        res = figures[label]
        row = res["overall"] if cat == "all" else res["categories"].get(cat, {})
        return row.get(col)

    rows = []
    for cat in cats:
        n = first["overall"]["n_answerable"] if cat == "all" else first["categories"][cat]["n"]
        row = [cat, n] + [cell(x, cat, "R@5") for x in labels] + [cell(x, cat, "R@10") for x in labels]
        row.append(cell(reference, cat, "MRR"))
        for col in ("R@5", "R@10"):
            for x in ("bm25", "fusion"):
                if x in figures:
                    a, b = cell(reference, cat, col), cell(x, cat, col)
                    row.append(None if a is None or b is None else f"{a - b:+.3f}")
        rows.append(row)
    return table(head, rows, digits=3, title=f"{name}: recall per category (top {LIMIT})")


def extras_table(figures: dict[str, dict]) -> str:
    """The personal set's other figures: stale above newest, sensitive shown unasked, abstention."""
    head = ["system", "R@1", "MRR", "stale>new", "sens@10", "abstain (abstention q)", "false abstain"]
    rows = [[label, f["overall"]["R@1"], f["overall"]["MRR"], f["overall"]["stale>new"], f["overall"].get("sens@10"),
             f["overall"]["abstain_on_abstention"], f["overall"]["abstain_answerable"]] for label, f in figures.items()]
    return table(head, rows, digits=3, title="personal: current facts, secrets, abstention")


# -- --before REF: twin as it was, in the same run -------------------------------------------------------------
def before_runs(ref: str, sets: list[str], dirs: dict[str, Path], embedder: str = "local") -> dict[str, Path]:
    """Run files of twin at git `ref` (its packages exported to a temp dir, `_common.export_at`, put first on the
    path of a child running this script with `--emit-twin`), with that version's default settings and the same
    `--embedder` as this run."""
    out_dir = OUT_DIR / f"before-{ref}-{embedder}"
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(export_at(ref))}
    argv = [sys.executable, str(Path(__file__)), "--emit-twin", str(out_dir), "--sets", *sets,
            "--eval-dir", str(dirs["personal"]), "--locomo-dir", str(dirs["locomo"]), "--embedder", embedder]
    subprocess.run(argv, env=env, check=True, cwd=REPO_ROOT)
    return {name: out_dir / f"{name}.run.jsonl" for name in sets}


# -- --grid -----------------------------------------------------------------------------------------------------
def run_grid(opened: dict, embedder, scorer, grid: dict, base: dict) -> list[dict]:
    """Every combination of `grid` over `base`, run on every opened set; per config the overall figures of each
    set and their mean R@5 (~10 s a config on 2 cores)."""
    keys = list(grid)
    configs = [{**base, **dict(zip(keys, values, strict=True))} for values in itertools.product(*grid.values())]
    started, results = time.perf_counter(), []
    for i, cfg in enumerate(configs, 1):
        row = {k: cfg[k] for k in keys}
        for name, es in opened.items():
            o = scorer.score(es.queries, as_run(twin_rows(es, embedder, cfg)), None, es.memories)["overall"]
            row.update({f"{name} {k}": o.get(k) for k in ("R@5", "R@10", "MRR")})
            if name == "personal":
                row["personal stale>new"] = o["stale>new"]
        row["mean R@5"] = sum(row[f"{n} R@5"] for n in opened) / len(opened)
        results.append(row)
        if i % 10 == 0:
            print(f"grid: {i}/{len(configs)} configs, {time.perf_counter() - started:.0f} s", flush=True)
    return results


ABLATIONS = {
    "keyword share off": {"share": False},
    "completion off": {"complete": False},
    "strict windows not lifted": {"strict_lift": 1.0},
    "strict windows as filters": {"time_filter": "strict"},
    "typed dates not kept": {"keep_dates": False},
    "slots off": {"slots": False},
    "event anchors off": {"event_anchors": False},
    "turn neighbours off": {"turn_share": 0.0},
    "successors inherit off": {"inherit": False},
    "importance off": {"importance": 0.0},
    "recency off": {"recency": 0.0},
    "newer-first on": {"newer_first": True},
    "first-person forms on": {"first_person": True},
    "min-max fusion": {"keyword_norm": "minmax", "vector_norm": "minmax"},
    "z-score fusion": {"keyword_norm": "zscore", "vector_norm": "zscore"},
    "reciprocal-rank fusion": {"keyword_norm": "rank", "vector_norm": "rank"},
}
"""--ablate: each entry changes the shipped config by these `RecallConfig` fields (one rule off, or another fusion)."""


def by_haystack(es, run: dict, scorer) -> dict[str, float]:
    """R@5 of `run` on each haystack of `es` alone ({haystack: R@5}): the personal set has one, LoCoMo one per
    conversation, so a rule can be seen to help (or not) on each conversation apart."""
    groups: dict[str, list[dict]] = {}
    for q in es.queries:
        groups.setdefault(es.haystack_of(q), []).append(q)
    return {name: scorer.score(qs, {q["qid"]: run[q["qid"]] for q in qs}, None, es.memories)["overall"]["R@5"]
            for name, qs in sorted(groups.items())}


def run_ablations(opened: dict, embedder, scorer, base: dict) -> list[list]:
    """One row per `ABLATIONS` entry: per set its ΔR@5 and ΔR@10 against the shipped config (and the stale above
    newest of a set that scores it, the personal one), and for a set of
    several haystacks on how many the rule's own change moved R@5 down / up ("2↓ 3↑": switching the rule off
    cost R@5 on 2 conversations and helped on 3). A rule worth keeping costs something when it is off on both sets
    and on most haystacks; one that only the personal set misses was fitted to it."""
    def figures(cfg: dict) -> dict:
        out = {}
        for name, es in opened.items():
            run = as_run(twin_rows(es, embedder, cfg))
            overall = scorer.score(es.queries, run, None, es.memories)["overall"]
            out[name] = (overall["R@5"], overall["R@10"], by_haystack(es, run, scorer), overall.get("stale>new"))
        return out

    def stale(f: tuple) -> str:
        return "" if f[3] is None else f", stale {f[3]:.3f}"

    shipped = figures(base)
    rows = [["shipped", *[f"{shipped[n][0]:.3f} / {shipped[n][1]:.3f}{stale(shipped[n])}" for n in opened],
             *["" for n in opened if len(shipped[n][2]) > 1]]]
    for label, change in ABLATIONS.items():
        got = figures({**base, **change})
        row = [label]
        for n in opened:
            row.append(f"{got[n][0] - shipped[n][0]:+.3f} / {got[n][1] - shipped[n][1]:+.3f}{stale(got[n])}")
        for n in opened:
            if len(shipped[n][2]) > 1:
                deltas = [got[n][2][h] - shipped[n][2][h] for h in shipped[n][2]]
                row.append(f"{sum(d < -1e-9 for d in deltas)}↓ {sum(d > 1e-9 for d in deltas)}↑")
        rows.append(row)
        print(f"ablate: {label} done", flush=True)
    return rows


def grid_report(results: list[dict], keys: list[str], top: int) -> str:
    cols = [c for c in results[0] if c not in keys]
    ranked = sorted(results, key=lambda r: -r["mean R@5"])[:top]
    return table(keys + cols, [[r[k] for k in keys] + [r[c] for c in cols] for r in ranked], digits=3,
                 title=f"grid: top {top} of {len(results)} by the mean R@5 of the sets")


def parse_grid(pairs: list[str]) -> dict:
    grid = dict(GRID)
    for pair in pairs:
        key, _, values = pair.partition("=")
        grid[key] = [json.loads(v) if v[:1].isdigit() or v[:1] in "-[{" or v in ("true", "false") else v
                     for v in values.split(",")]
    return grid


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=DEFAULT_EVAL_DIR, help="the personal set (../shared/eval)")
    parser.add_argument("--locomo-dir", type=Path, default=DEFAULT_LOCOMO_DIR, help="LoCoMo (../shared/eval-locomo)")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--before", metavar="REF", help="also run twin as it was at this git commit")
    parser.add_argument("--grid", action="store_true", help="sweep the recall settings on the sets")
    parser.add_argument("--set", dest="grid_set", action="append", default=[], metavar="KEY=V1,V2",
                        help="grid values of one setting (repeatable)")
    parser.add_argument("--top", type=int, default=10, help="configs shown (--grid)")
    parser.add_argument("--ablate", action="store_true",
                        help="each ranking rule off in turn (ABLATIONS): ΔR@5 / ΔR@10 per set, moves per haystack")
    parser.add_argument("--embedder", default="local", choices=["local", "multilingual"],
                        help="the embedding backend (TWIN_EMBED_BACKEND) for twin and the fusion")
    parser.add_argument("--emit-twin", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    dirs = {"personal": args.eval_dir.resolve(), "locomo": args.locomo_dir.resolve()}
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    print(f"eval_recall: {load_note()}", flush=True)
    if args.emit_twin:  # a --before child: only the exported revision's twin may load
        drop_editable_finders()
    before = before_runs(args.before, args.sets, dirs, args.embedder) if args.before and not args.emit_twin else {}
    make_embedder = import_moved("twin.vectors.embedder").make_embedder

    inner = make_embedder(args.embedder, 0)
    inner.open()
    embedder = VectorCache(inner)
    scorer = load_scorer(dirs["personal"])
    config = shipped_config()
    figures: dict = {"shipped": config, "sets": {}}
    with tempfile.TemporaryDirectory(prefix="twin-eval-") as tmp:
        opened = {}
        for name in args.sets:
            started = time.perf_counter()
            es = SETS[name](dirs[name], Path(tmp) / name, embedder).open()
            opened[name] = es
            print(f"eval_recall: {name}: {es.figures} in {time.perf_counter() - started:.1f} s", flush=True)
            if args.emit_twin:
                write_run(twin_rows(es, embedder, config), args.emit_twin / f"{name}.run.jsonl")
                continue
            started = time.perf_counter()
            ours = twin_rows(es, embedder, config)
            per_query_ms = 1000 * (time.perf_counter() - started) / len(es.queries)
            write_run(ours, OUT_DIR / f"eval_recall.{name}.twin.run.jsonl")
            runs = {"twin": as_run(ours)}
            if name in before:
                runs[f"twin@{args.before}"] = read_run(before[name])
            runs["bm25"] = read_run(bm25_run(dirs[name], OUT_DIR / f"eval_recall.{name}.bm25.run.jsonl"))
            fusion = fusion_rows(dirs[name], es.memories, es.queries, embedder)
            write_run(fusion, OUT_DIR / f"eval_recall.{name}.fusion.run.jsonl")
            runs["fusion"] = as_run(fusion)
            scored = {label: scorer.score(es.queries, run, None, es.memories) for label, run in runs.items()}
            figures["sets"][name] = {"store": es.figures, "twin_ms_per_query": per_query_ms, **scored}
            print()
            print(category_table(name, scored))
            if name == "personal":
                print()
                print(extras_table(scored))
            print(f"\n{name}: twin recall {per_query_ms:.1f} ms per query (with the run's other work)", flush=True)
        if args.grid and not args.emit_twin:
            grid = parse_grid(args.grid_set)
            results = run_grid(opened, embedder, scorer, grid, config)
            figures["grid"] = results
            print()
            print(grid_report(results, list(grid), args.top))
        if args.ablate and not args.emit_twin:
            rows = run_ablations(opened, embedder, scorer, config)
            figures["ablate"] = rows
            multi = [n for n in opened if len(opened[n].haystacks) > 1]
            print()
            print(table(["change", *[f"{n} ΔR@5 / ΔR@10" for n in opened], *[f"{n} R@5 per haystack" for n in multi]],
                        rows, title="ablate: each change against the shipped config (same run)"))
        for es in opened.values():
            es.close()
    embedder.close()
    if not args.emit_twin:
        print(f"figures written to {write_json(NAME, figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
