"""Which recall results the touch bar records as used (`twin.recall.hybrid.TouchBar`), measured on the shared eval set.

    .venv/bin/python bench/touch_bar.py                    # the shipped bar beside "touch every result"
    .venv/bin/python bench/touch_bar.py --sweep            # + a sweep of share x cosine x keyword bars
    .venv/bin/python bench/touch_bar.py --eval-dir PATH    # default: ../shared/eval from the repo root

The eval memories go into a fresh store through capture and are embedded and linked as in `eval_recall.py`
(`eval_sets.PersonalSet`). Every dev query, and 30 off-topic questions written here (nothing in the store answers them
and no distractor was written for them), runs `Recall.recall(being, query, limit=10, as_of=..., touch=True)`
with the shipped settings: the memories whose `hits` went up are the ones recall touched (the real write
path, `Store.touch`), checked against `TOUCH_BAR.used(results)`. A result is an answer when one of the eval
memories it became is in the query's `gold`. Reported per bar: the share of the answers in the top 10 that are
touched (and of those ranked first), non-answers touched per answerable query, results touched per abstention
query (the eval's unanswerable questions, whose distractors share words by design) and per off-topic question,
and the same with keyword-only recall (no embedder). The sweep replays each bar on the same results
(`TouchBar.used` is pure; touching changes no score: hits are not ranked, and every eval memory is warm).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path

from _common import DEFAULT_EVAL_DIR, OUT_DIR, load_note, percentile, table, write_json
from eval_recall import make_recall, shipped_config
from eval_sets import PERSONAL_BEING as BEING
from eval_sets import PERSONAL_ZONE as ZONE
from eval_sets import Haystack, PersonalSet, VectorCache

NAME = "touch_bar"
OFF_TOPIC_AS_OF = "2026-11-20T12:00:00Z"
"""The off-topic questions are asked at the eval's last day (every memory exists)."""
OFF_TOPIC = (
    "what is the capital of Mongolia?", "how do volcanoes form?", "who won the 1966 football world cup?",
    "explain quantum chromodynamics", "what is the boiling point of tungsten?", "how many moons does Neptune have?",
    "translate 'good morning' into Swahili", "what year did the Byzantine empire fall?",
    "how do I fix a flat bicycle tyre tube valve", "what's the airspeed velocity of an unladen swallow?",
    "best strategy for chess endgames with rooks", "how tall is mount kilimanjaro", "what is photosynthesis",
    "who wrote the iliad", "how does a jet engine work", "when was the printing press invented", "what do koalas eat",
    "what is the speed of light in glass", "rules of cricket lbw", "population of tokyo",
    "what's a good name for a goldfish?", "how deep is the mariana trench", "what did Napoleon eat for breakfast",
    "is a tomato a fruit", "how do submarines dive", "what are the lyrics of bohemian rhapsody",
    "how many bones in a shark", "what is the GDP of Chile", "who painted the sistine chapel ceiling",
    "how to knit a scarf")
"""Questions about the world, not the owner: nothing in the eval store answers them (written for this bench)."""
SWEEP = {"share": [0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9], "vector": [0.3, 0.35, 0.4, 0.45, 0.5, 2.0],
         "keyword": [0.3, 0.4, 0.5, 0.6, 0.7, 2.0]}
"""`--sweep` grid (2.0 = that signal never clears the bar)."""


def _hits(store) -> dict[int, int]:
    return dict(store.conn.execute("SELECT id, hits FROM memories"))


def run_queries(es: PersonalSet, recall, queries: list[dict]) -> tuple[list[dict], int]:
    """`(one row per query: {qid, category, results, gold: [bool per result], touched: set of ids}, number of
    queries where the touched ids differ from `recall.touch_bar.used`)`, with `touch=True`."""
    from zoneinfo import ZoneInfo

    from twin.chat import asks_for_sensitive

    rows, mismatches = [], 0
    for q in queries:
        before = _hits(es.haystacks[BEING].store)
        results = recall.recall(BEING, q["query"], limit=10, as_of=q["as_of"], touch=True,
                                include_sensitive=asks_for_sensitive(q["query"]), zone=ZoneInfo(ZONE))
        after = _hits(es.haystacks[BEING].store)
        touched = {mid for mid, n in after.items() if n != before.get(mid)}
        mismatches += touched != {r.memory.id for r in recall.touch_bar.used(results)}
        gold = set(q.get("gold") or ())
        rows.append({"qid": q["qid"], "category": q["category"], "results": results, "touched": touched,
                     "gold": [bool(gold & {e for e in es.haystacks[BEING].to_eval[r.memory.id] if es.created[e] < q["as_of"]})
                              for r in results]})
    return rows, mismatches


def figures_for(rows: list[dict], bar) -> dict:
    """What `bar` touches over `rows` (see the module docstring); `bar` None = the touches recorded by recall."""
    answerable = [r for r in rows if r["category"] not in ("abstention", "off_topic")]
    answers = answers_touched = first = first_touched = noise_touched = 0
    per_group: dict[str, list[int]] = {"abstention": [], "off_topic": []}
    for row in rows:
        used = row["touched"] if bar is None else {r.memory.id for r in bar.used(row["results"])}
        flags = [r.memory.id in used for r in row["results"]]
        if row["category"] in per_group:
            per_group[row["category"]].append(sum(flags))
            continue
        for rank, (is_gold, touched) in enumerate(zip(row["gold"], flags, strict=True)):
            answers += is_gold
            answers_touched += is_gold and touched
            noise_touched += touched and not is_gold
            if rank == 0 and is_gold:
                first += 1
                first_touched += touched
    out = {"answers_touched": answers_touched / answers if answers else None,
           "first_answers_touched": first_touched / first if first else None,
           "noise_per_answerable": noise_touched / len(answerable) if answerable else None}
    for group, counts in per_group.items():
        out[f"{group}_per_query"] = sum(counts) / len(counts) if counts else None
        out[f"{group}_queries_touched"] = sum(1 for c in counts if c)
        out[f"{group}_queries"] = len(counts)
    return out


def distributions(rows: list[dict]) -> dict:
    """Percentiles (10/50/90) of the cosine and keyword score of answers, of non-answers to answerable queries,
    and of the best cosine of each off-topic and abstention question: where the bar's cosine comes from."""
    def pct(xs):
        return [round(percentile(xs, p), 3) for p in (10, 50, 90)] if xs else None

    answerable = [r for r in rows if r["category"] not in ("abstention", "off_topic")]
    gold = [res for r in answerable for res, g in zip(r["results"], r["gold"], strict=True) if g]
    noise = [res for r in answerable for res, g in zip(r["results"], r["gold"], strict=True) if not g]
    out = {"answer_vector": pct([r.vector for r in gold]), "answer_keyword": pct([r.keyword for r in gold]),
           "noise_vector": pct([r.vector for r in noise]), "noise_keyword": pct([r.keyword for r in noise])}
    for group in ("off_topic", "abstention"):
        best = [max(res.vector for res in r["results"]) for r in rows if r["category"] == group and r["results"]]
        out[f"{group}_best_vector"] = pct(best)
    return out


COLUMNS = ("answers_touched", "first_answers_touched", "noise_per_answerable", "abstention_per_query",
           "off_topic_per_query")


def bar_row(label: str, f: dict) -> list:
    return [label, *(f[c] for c in COLUMNS), f"{f['abstention_queries_touched']}/{f['abstention_queries']}",
            f"{f['off_topic_queries_touched']}/{f['off_topic_queries']}"]


HEAD = ["bar", "answers touched", "rank-1 answers touched", "non-answers / answerable q", "touched / abstention q",
        "touched / off-topic q", "abstention q touched", "off-topic q touched"]


def sweep(rows: list[dict]) -> list[dict]:
    """Every bar of `SWEEP` replayed on `rows`: `[{share, vector, keyword, **figures_for}]`."""
    from twin.recall.hybrid import TouchBar

    out = []
    for share, vector, keyword in itertools.product(SWEEP["share"], SWEEP["vector"], SWEEP["keyword"]):
        out.append({"share": share, "vector": vector, "keyword": keyword,
                    **figures_for(rows, TouchBar(share=share, vector=vector, keyword=keyword))})
    return out


def open_recall(es: PersonalSet, keyword_only: bool):
    hay = es.haystacks[BEING]
    if keyword_only:
        return make_recall(Haystack(hay.being, hay.store, None, hay.to_eval), None, shipped_config())
    return make_recall(hay, es.embedder, shipped_config())


def main(argv: list[str] | None = None) -> int:
    from twin.recall.hybrid import TOUCH_BAR, TouchBar

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=DEFAULT_EVAL_DIR, help="default: ../shared/eval")
    parser.add_argument("--sweep", action="store_true", help="replay a grid of bars on the same results")
    args = parser.parse_args(argv)
    eval_dir = args.eval_dir.resolve()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    print(f"touch_bar: {load_note()}", flush=True)
    queries = [json.loads(x) for x in (eval_dir / "queries.jsonl").read_text(encoding="utf-8").splitlines() if x]
    queries += [{"qid": f"off{n:02d}", "query": text, "category": "off_topic", "gold": [], "as_of": OFF_TOPIC_AS_OF}
                for n, text in enumerate(OFF_TOPIC, 1)]
    figures: dict = {"eval_dir": str(eval_dir), "shipped_bar": vars(TOUCH_BAR), "queries": len(queries)}
    everything = TouchBar(share=0.0, vector=0.0, keyword=0.0)
    with tempfile.TemporaryDirectory(prefix="twin-touch-") as tmp:
        from twin.vectors.embedder import LocalEmbedder

        model = LocalEmbedder(0)
        model.open()
        es = PersonalSet(eval_dir, Path(tmp), VectorCache(model)).open()
        table_rows = []
        for mode in ("hybrid", "keyword-only"):
            recall = open_recall(es, keyword_only=mode == "keyword-only")
            try:
                rows, mismatches = run_queries(es, recall, queries)
            finally:
                recall.close()
            recorded = figures_for(rows, None)
            figures[mode] = {"recorded": recorded, "touch_everything": figures_for(rows, everything),
                             "mismatches": mismatches, "distributions": distributions(rows)}
            table_rows += [bar_row(f"{mode}: every result", figures[mode]["touch_everything"]),
                           bar_row(f"{mode}: shipped {TOUCH_BAR}", recorded)]
            print(f"touch_bar: {mode}: touched ids differ from TOUCH_BAR.used on {mismatches} of {len(rows)} queries")
            if mode == "hybrid":
                print(f"touch_bar: hybrid score percentiles (10/50/90): {figures[mode]['distributions']}")
                if args.sweep:
                    figures["sweep"] = sweep(rows)
        es.close()
    print(table(HEAD, table_rows, digits=3, title="what recall touches (top 10 of each query, eval dev split)"))
    if args.sweep:
        for floor in (0.9, 0.85, 0.8, 0.75):
            best = sorted((r for r in figures["sweep"] if (r["answers_touched"] or 0) >= floor),
                          key=lambda r: r["noise_per_answerable"] + r["abstention_per_query"]
                          + r["off_topic_per_query"])[:3]
            print(table(HEAD, [bar_row(f"share {r['share']} cos {r['vector']} kw {r['keyword']}", r) for r in best],
                        digits=3, title=f"least touched noise with >= {floor:.0%} of the answers touched"))
    path = write_json(NAME, figures)
    print(f"figures written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
