"""What the Gmail and browser-history connectors cost, each beside the bare minimum in the same run.

    .venv/bin/python bench/sources.py                 # 2000 threads; 5k and 100k visits
    .venv/bin/python bench/sources.py --threads 500 --visits 1000 20000

Gmail: `parse_thread` + `thread_text` + `heuristic_summary` (MIME walk, base64url, HTML to text, trimming,
the needs-reply rule) per thread of 3 multipart messages, beside `json.loads` of the same thread (the API
answer has to be decoded anyway). Target: ≤ 5 ms per thread p50, so a 500-thread first sync spends < 3 s
on it (the API round trips take far longer).

Browser: one import of a Chromium `History` of N visits (the real schema, in WAL mode): `read_visits` (copy
with the WAL, `quick_check`, query after the cursor, skip rules, URL cleaning with the deny-list, times and
titles) then `cluster_visits`, beside the baseline of opening the same database in place, running the same
join and splitting each URL once (`urlsplit(url).hostname`: the least any import that looks at URLs does).
Target: the whole import ≤ 5× that baseline (the private copy and `quick_check` of the whole file are a fixed
cost the baseline does not pay; it runs once a day, on at most `browser_max_visits` = 5000 visits per profile
by default; 100k is a heavy profile's first import with the limit raised).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from _common import REPO_ROOT, load_note, percentile, table, write_json

sys.path.insert(0, str(REPO_ROOT / "tests"))

from browser_fixtures import LINK, TYPED, add_chromium_visits, make_chromium_profile
from gmail_fixtures import message_json, thread_json

from twin.connectors.browser_history import find_profiles, read_visits
from twin.connectors.email_summary import heuristic_summary
from twin.connectors.email_text import parse_thread, thread_text
from twin.learn.interests import PageVisit, cluster_visits

OWNER = "owner@example.com"
SITES = [("docs.rs", "tokio runtime spawn task Rust"), ("tokio.rs", "Async in depth Tokio tutorial"),
         ("news.ycombinator.com", "Show HN a new database engine"),
         ("www.theperfectloaf.com", "Sourdough hydration"),
         ("en.wikipedia.org", "History of the Baltic states"), ("github.com", "pull request review hnswlib index"),
         ("www.kingarthurbaking.com", "Baking sourdough in a dutch oven"),
         ("arxiv.org", "approximate nearest neighbour")]


def _threads(n: int) -> list[str]:
    now = datetime.now(UTC)
    out = []
    for i in range(n):
        html = (f"<div><p>Hi,</p><p>The draft for project {i} is ready. Could you review section {i % 7} by "
                f"Friday?</p><p>Thanks,<br>Alice</p><div class='gmail_quote'>On Mon, Bob wrote:<blockquote>"
                f"{'old text ' * 80}</blockquote></div></div>")
        messages = [message_json(f"m{i}-{k}", sender="Alice Smith <alice@example.com>", to=OWNER,
                                 subject=f"Project {i} draft", body_text=f"The draft for project {i} is ready. "
                                 f"Could you review section {k}?\n\n> {'quoted ' * 40}\n-- \nAlice",
                                 body_html=html, sent_at=now - timedelta(hours=3 * k + i % 50),
                                 attachments=[("draft.pdf", 120_000)] if k == 0 else [])
                    for k in range(3)]
        out.append(json.dumps(thread_json(f"t{i}", messages=messages)))
    return out


def bench_gmail(n: int) -> dict:
    raw = _threads(n)
    base, work = [], []
    for text in raw:
        start = time.perf_counter()
        thread = json.loads(text)
        base.append(time.perf_counter() - start)
        start = time.perf_counter()
        parsed = parse_thread(thread, {OWNER})
        thread_text(parsed, 12_000)
        heuristic_summary(parsed)
        work.append(time.perf_counter() - start)
    figures = {"threads": n, "json_p50_ms": percentile(base, 50) * 1000,
               "parse_p50_ms": percentile(work, 50) * 1000, "parse_p99_ms": percentile(work, 99) * 1000}
    figures["ratio_p50"] = figures["parse_p50_ms"] / figures["json_p50_ms"]
    figures["pass"] = figures["parse_p50_ms"] <= 5.0
    return figures


def _history(home: Path, n: int) -> Path:
    now = datetime.now(UTC)
    visits = [(f"https://{host}/page/{i % 5000}?utm_source=x&id={i}", f"{title} {i % 97}",
               now - timedelta(seconds=30 * (n - i)), TYPED if i % 10 == 0 else LINK, 0)
              for i, (host, title) in ((i, SITES[i % len(SITES)]) for i in range(n))]
    path = make_chromium_profile(home, "chrome", "Default", (), wal=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_autocheckpoint=0")  # a running browser: recent rows sit in the -wal
    add_chromium_visits(conn, visits)
    conn.close()
    return path


BARE_QUERY = ("SELECT v.id, u.url, u.title, v.visit_time FROM visits v JOIN urls u ON u.id = v.url "
              "WHERE v.id > 0 ORDER BY v.id")


def bench_browser(n: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        history = _history(home, n)
        size_mb = sum(p.stat().st_size for p in history.parent.glob("History*")) / 1e6
        bare, read, cluster = [], [], []
        profile = find_profiles(home)[0]
        for _ in range(3):
            start = time.perf_counter()
            conn = sqlite3.connect(history)
            rows = [(vid, urlsplit(url).hostname, title, t) for vid, url, title, t in conn.execute(BARE_QUERY)]
            conn.close()
            bare.append(time.perf_counter() - start)
            start = time.perf_counter()
            visits, _ = read_visits(profile, 0, None, n, Path(tmp))
            read.append(time.perf_counter() - start)
            start = time.perf_counter()
            interests = cluster_visits([PageVisit(v.url, v.title, v.visited_at) for v in visits])
            cluster.append(time.perf_counter() - start)
    figures = {"visits": n, "rows": len(rows), "kept": len(visits), "db_mb": size_mb, "bare_s": min(bare),
               "read_s": min(read), "cluster_s": min(cluster), "interests": len(interests)}
    figures["import_s"] = figures["read_s"] + figures["cluster_s"]
    figures["ratio"] = figures["import_s"] / figures["bare_s"]
    figures["pass"] = figures["ratio"] <= 5
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2000)
    parser.add_argument("--visits", type=int, nargs="+", default=[5000, 100_000])
    args = parser.parse_args()
    print(load_note())
    gmail = bench_gmail(args.threads)
    print(table(["threads", "json.loads p50 ms", "parse+text+summary p50 ms", "p99 ms", "ratio", "≤ 5 ms"],
                [[gmail["threads"], gmail["json_p50_ms"], gmail["parse_p50_ms"], gmail["parse_p99_ms"],
                  gmail["ratio_p50"], "PASS" if gmail["pass"] else "FAIL"]], digits=3, title="Gmail thread to text"))
    browser = [bench_browser(n) for n in args.visits]
    print(table(["visits", "db MB", "query+urlsplit s", "read_visits s", "cluster s", "interests", "import / base",
                 "≤ 5"], [[b["visits"], b["db_mb"], b["bare_s"], b["read_s"], b["cluster_s"], b["interests"],
                          b["ratio"], "PASS" if b["pass"] else "FAIL"] for b in browser], digits=3,
                title="Browser import"))
    print(f"wrote {write_json('sources', {'gmail': gmail, 'browser': browser, 'load': load_note()})}")


if __name__ == "__main__":
    main()
