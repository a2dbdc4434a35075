"""What `learn()` costs as the store grows: CPU milliseconds a text, per segment of store size, in this process (no
RQ, no Redis, no embedding), beside the raw embedder's CPU a text in the same run, and beside twin at another
revision on the same texts (`--before REF`, run in a child process on that revision's exported packages).

    .venv/bin/python bench/learn_cpu.py                    # 6,000 texts in 4 segments (~1 min)
    .venv/bin/python bench/learn_cpu.py --before 33d7095   # + the same at that commit, same texts, same run

Capture compares each new memory with the older ones sharing its words (`twin.learn.capture.related_memories`),
so its cost grows with the store; the ingest target (bench/ingest.py: searchable rate >= 0.8 x the raw embedder)
needs learn's CPU a text well below the embedder's. The texts are ingest.py's (one memory each, `make_texts`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO_ROOT, drop_editable_finders, export_at, load_note, table, write_json

NAME = "learn_cpu"


def segments(texts: list[str], parts: int) -> list[dict]:
    """`learn()` of `texts` into one fresh store, `parts` equal segments: per segment the store size before it and
    the CPU ms a text (process time: what the learn worker would spend, whatever the load)."""
    from ingest import BEING, SOURCE

    from twin.learn.learning import learn
    from twin.store import Store

    size = len(texts) // parts
    out = []
    with tempfile.TemporaryDirectory(prefix="twin-learn-cpu-") as tmp:
        store = Store(Path(tmp) / "twin.db").open()
        try:
            for k in range(parts):
                chunk = texts[k * size:(k + 1) * size]
                started = time.process_time()
                for text in chunk:
                    learn(store, None, BEING, text, SOURCE)
                out.append({"from": k * size, "to": (k + 1) * size,
                            "cpu_ms_per_text": 1000 * (time.process_time() - started) / len(chunk)})
            out[-1]["memories"] = store.conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        finally:
            store.close()
    return out


def raw_embed_cpu_ms(texts: list[str]) -> float:
    """The raw embedder's CPU ms a text (batches of 96, the worker's thread count), after a warm-up batch."""
    from ingest import raw_throughput

    return raw_throughput(texts)["cpu_ms_per_text"]


def before_segments(ref: str, n: int, parts: int, seed: int) -> list[dict]:
    """`segments` of twin at `ref` on the same texts (the texts are made by today's generator and passed on)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        out = Path(f.name)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(export_at(ref)), str(Path(__file__).parent)])}
    subprocess.run([sys.executable, str(Path(__file__)), "--n", str(n), "--parts", str(parts), "--seed", str(seed),
                    "--emit", str(out)], env=env, check=True, cwd=REPO_ROOT)
    figures = json.loads(out.read_text())
    out.unlink()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6000, help="texts learned")
    parser.add_argument("--parts", type=int, default=4, help="segments of store size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--before", metavar="REF", help="also run twin as it was at this git commit")
    parser.add_argument("--emit", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.emit:
        drop_editable_finders()
    from ingest import make_texts

    made = make_texts(args.n, args.seed, set())
    texts = [text for text, _, _ in made]
    if args.emit:
        args.emit.write_text(json.dumps(segments(texts, args.parts)))
        return 0
    print(f"{NAME}: {load_note()}", flush=True)
    figures = {"n": args.n, "raw_embed_cpu_ms": raw_embed_cpu_ms([c for _, c, _ in made[:1000]]),
               "twin": segments(texts, args.parts)}
    if args.before:
        figures[f"twin@{args.before}"] = before_segments(args.before, args.n, args.parts, args.seed)
    labels = [k for k in figures if k.startswith("twin")]
    raw = figures["raw_embed_cpu_ms"]
    rows = []
    for i, seg in enumerate(figures["twin"]):
        row = [f"{seg['from']:,}-{seg['to']:,}"]
        for label in labels:
            ms = figures[label][i]["cpu_ms_per_text"]
            row += [ms, ms / raw]
        rows.append(row)
    head = ["store size"] + [h for label in labels for h in (f"{label} CPU ms/text", f"{label} / raw embed")]
    print(table(head, rows, title=f"learn() CPU a text by store size; raw embedder {raw:.2f} CPU ms a text"))
    print(f"figures written to {write_json(NAME, figures)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
