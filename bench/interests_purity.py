"""How well offline interest clustering finds topics: the heuristic before interests became topics (by site,
git revision `--before`, default a7bedfd) and now, on a labelled week of browsing (tests/interest_history.py)
written as real Chrome and Firefox databases and read back by the real reader.

    .venv/bin/python bench/interests_purity.py              # both, with the learned limit (5) and with no limit
    .venv/bin/python bench/interests_purity.py --before HEAD~3

Purity (`interest_history.measure`): an interest is pure when all its pages are about one topic; foreign pages
are pages of another topic, one-offs or utility pages inside an interest; a topic is split when its pages land
in two interests or more, missed when no interest holds half of them. Prints the interests each version learns
and a table; writes bench/out/interests_purity.json.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from _common import REPO_ROOT, module_at, table, write_json

sys.path.insert(0, str(REPO_ROOT / "tests"))

from interest_history import labels, measure, read_week

from twin.learn.interests import PageVisit, interest_text, interests_with_pages, site_of

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def before(module, visits: list[PageVisit], limit: int) -> list[tuple[object, list[str]]]:
    """The old interests with their pages: every page of the sites each one names (it grouped by site)."""
    pages = sorted({v.url for v in visits})
    return [(i, [u for u in pages if site_of(u) in i.sites]) for i in module.cluster_visits(visits, limit)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="a7bedfd", help="git revision of the old heuristic")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        visits = read_week(Path(tmp))
    page_labels = labels()
    old = module_at(args.before, "twin.learn.interests")
    rows, out = [], {"visits": len(visits), "pages": len({v.url for v in visits})}
    runs = (("before", lambda n: before(old, visits, n)), ("after", lambda n: interests_with_pages(visits, n)))
    for name, run in runs:
        for limit in (5, 50):
            found = run(limit)
            figures = measure([urls for _, urls in found], page_labels)
            out[f"{name}_limit_{limit}"] = {**figures, "sentences": [interest_text(i, NOW) for i, _ in found]}
            rows.append([name, limit, figures["interests"], figures["pure"], figures["mixed"], figures["foreign_pages"],
                         figures["utility_pages"], figures["utility_interests"], len(figures["topics_split"]),
                         len(figures["topics_missed"])])
            if limit == 5:
                print(f"{name}:")
                for interest, urls in found:
                    kinds = sorted({page_labels.get(u, '?') for u in urls})
                    print(f"  {interest_text(interest, NOW)}  [{', '.join(kinds)}]")
    print(f"{out['visits']} visits, {out['pages']} pages read from the two profiles")
    print(table(["version", "limit", "interests", "pure", "mixed", "foreign pages", "utility pages",
                 "utility interests", "topics split", "topics missed"], rows))
    write_json("interests_purity", out)


if __name__ == "__main__":
    main()
