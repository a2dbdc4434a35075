"""What twin's model path costs on top of the model itself: `learn()` with a model provider that answers at once
(the fake OpenAI-protocol server of tests/fake_llm.py on loopback) beside `learn()` offline, same texts, same run.

    .venv/bin/python bench/model_overhead.py            # 300 texts each way
    .venv/bin/python bench/model_overhead.py --n 1000

The provider path = prompt building, one HTTP round trip through the `openai` client, JSON parsing, pydantic
validation, kind coercion, the budget's SQLite transaction, and the store writes. A real model adds its own
latency (typically 0.5-3 s per call); this bench isolates everything twin adds around it, which should stay a
small fraction of that: target p50 overhead <= 20 ms per text. Also reports a reflection pass (one call with 60
fresh memories, Hush gate included).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO_ROOT, load_note, percentile, table, write_json

sys.path.insert(0, str(REPO_ROOT / "tests"))

from fake_llm import FakeLLM

from twin.activity import Activity
from twin.learn.learning import learn
from twin.llm.provider import provider_for
from twin.reflection.hush import HushGate, HushRules
from twin.reflection.second_pass import reflect
from twin.settings import Settings
from twin.store import Store

SENTENCES = ("I moved to Leipzig in May and I love the parks there.", "My sister Ana works as a nurse in Porto.",
             "I prefer dark roast coffee over espresso, always black.", "We adopted a cat called Miso last winter.",
             "The roof of the garden shed needs fixing before the rain season.")


def texts(n: int) -> list[str]:
    """`n` distinct two-sentence texts."""
    return [f"{SENTENCES[i % len(SENTENCES)]} Note number {i} is about week {i % 52}." for i in range(n)]


def run_learn(store: Store, provider, items: list[str]) -> list[float]:
    """Seconds per `learn()` call."""
    activity = Activity(store, "owner")
    times = []
    for text in items:
        started = time.perf_counter()
        learn(store, activity, "owner", text, "muse", provider=provider)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    """Run both paths and print per-text latency and the overhead."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args()
    fake = FakeLLM().start()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp) / "model", llm_base_url=fake.url, llm_daily_calls=0,
                            hush_quiet_start="00:00", hush_quiet_end="00:00")
        offline_settings = Settings(data_dir=Path(tmp) / "offline")
        with Store(offline_settings.db_path) as offline_store, Store(settings.db_path) as model_store:
            provider = provider_for(settings, model_store)
            run_learn(offline_store, None, texts(20))  # warm-up both paths
            run_learn(model_store, provider, texts(20))
            items = texts(args.n)
            offline = run_learn(offline_store, None, items)
            model = run_learn(model_store, provider, items)
            gate = HushGate(model_store, "owner", HushRules.from_settings(settings))
            started = time.perf_counter()
            result = reflect(model_store, Activity(model_store, "owner"), "owner", provider, gate, force=True)
            reflect_s = time.perf_counter() - started
            provider.close()
    fake.stop()
    rows = []
    figures = {"n": args.n, "load": load_note()}
    for name, series in (("offline learn()", offline), ("learn() with provider", model)):
        p50, p99 = percentile(series, 50) * 1000, percentile(series, 99) * 1000
        rows.append((name, p50, p99, len(series) / sum(series)))
        figures[name] = {"p50_ms": p50, "p99_ms": p99, "per_s": len(series) / sum(series)}
    overhead = percentile(model, 50) * 1000 - percentile(offline, 50) * 1000
    figures["overhead_p50_ms"] = overhead
    figures["reflect_ms"] = reflect_s * 1000
    print(table(("path", "p50 ms", "p99 ms", "texts/s"), rows, title=f"learn() of {args.n} texts, same run"))
    print(f"model-path overhead at p50: {overhead:.2f} ms per text (target <= 20 ms): "
          f"{'PASS' if overhead <= 20 else 'FAIL'}")
    print(f"one reflection (≤ 60 fresh memories shown, Hush gate, {len(result.signals)} signal(s)): "
          f"{reflect_s * 1000:.1f} ms")
    print(load_note())
    print(f"written to {write_json('model_overhead', figures)}")


if __name__ == "__main__":
    main()
