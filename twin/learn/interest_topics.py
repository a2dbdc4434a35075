"""Offline interest clustering: which topics the owner read several pages about, by rules (seed 001: the browser
import learns "clustered interests"; with no model, "their own heuristic fallbacks").

Pages are clustered by what they are about, never by site (`topic_clusters`: shared title terms, the rarer first,
the site's kind from `twin.text.page_kinds` as a guard), and utility pages (sign-ins, tokens, invitations, carts,
calendars, redirects, search results: `twin.text.page_kinds.utility_page`) never form or join an interest. Measured on
a labelled week of browsing (tests/interest_history.py) by bench/interests_purity.py. Pure: no I/O. Times are
UTC ISO-8601 strings (`twin.memory.format_time`).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from twin.memory import format_time, parse_time
from twin.text.page_kinds import site_kind, utility_page

MIN_PAGES = 3
"""A cluster needs this many distinct pages to be an interest (ours)."""
MAX_TOPIC_TERMS = 4

STOPWORDS = frozenset("""
a about after all also an and any are as at be been but by can do does for from get has have how i if in into is
it its just more my new no not of on one or our out over so than that the their then there these this to up us
use using vs was we what when where which who why will with without you your
home page official site website welcome index blog docs documentation guide tutorial introduction overview
getting started learn read latest free online best top com org net www http https html
der die das und ist mit für von zu den im ein eine auf des le la les et du en el los las y
dem einem einen einer oder nicht auch aus bei nach über um vom zum zur wie was wir ich sie es
de pour par avec sur dans un une au aux ce ces cette qui que est sont pas plus
del al por para con una lo su sus es son como mas da do dos em um uma os ao na no il di per che
""".split())
"""Words that name no topic (ours): English function words, web boilerplate, common German, French, Spanish,
Portuguese and Italian function words."""
_WORD = re.compile(r"[^\W_]+")
GENRE_WORDS = frozenset("""news world live latest breaking today daily weekly magazine politics opinion analysis
explained explainer video videos watch review reviews update updates report story stories article articles podcast
episode nachrichten welt actualites noticias""".split())
"""Words that name a kind of page, not what it is about (ours): they may name an interest ("portugal election
world news") but never link two pages, so "World news | The Guardian" does not join a treaty explainer to an
election (issue 13: "one merged with an unrelated article")."""

@dataclass(frozen=True)
class PageVisit:
    """One visit as the interest job receives it: cleaned URL, title (may be empty), UTC ISO-8601 time."""

    url: str
    title: str
    visited_at: str

    def to_list(self) -> list[str]:
        """`[url, title, visited_at]`, the JSON-friendly form queued for the worker."""
        return [self.url, self.title, self.visited_at]

    @classmethod
    def from_list(cls, value: Any) -> PageVisit:
        """The inverse of `to_list`. Raises `ValueError` unless `value` is a list or tuple of three strings."""
        if not isinstance(value, list | tuple) or len(value) != 3 or not all(isinstance(v, str) for v in value):
            raise ValueError("a page visit is [url, title, visited_at], three strings")
        return cls(*value)


@dataclass
class Interest:
    """A topic the owner read several pages about: `topic` a short lower-case phrase, `pages` distinct pages,
    `sites` hosts without `www.`/`m.` (most pages first), `first_at`/`last_at` UTC ISO-8601."""

    topic: str
    pages: int
    sites: list[str]
    first_at: str
    last_at: str


@dataclass
class _Site:
    """What the visits of one site add up to: distinct pages, title-term counts (once per page) with their mean
    relative position in titles, and the first and last visit."""

    pages: set[str] = field(default_factory=set)
    terms: Counter = field(default_factory=Counter)
    positions: dict[str, float] = field(default_factory=dict)
    times: list[datetime] = field(default_factory=list)


@functools.lru_cache(maxsize=65_536)
def site_of(url: str) -> str | None:
    """The site of `url`: its host, lower-cased, without a leading `www.` or `m.`; None without a host."""
    try:
        host = (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return None
    return re.sub(r"^(?:www|m)\.", "", host) or None


_TITLE_PARTS = re.compile(r"\s+[-|–—·:]{1,2}\s+")
"""How titles separate the page's own title from the site's name ("Spawning | Tokio - …")."""


def _terms(title: str, site: str) -> list[str]:
    """Title words in order: lower-cased, no stopwords, no numbers, no single letters, not the site's own name:
    neither a label of its host but the last (`tokio` on tokio.rs) nor a title part after the first that
    spells a host label ("Baking sourdough - King Arthur Baking" on kingarthurbaking.com). A site's tagline
    stays ("… | Tokio - An asynchronous Rust runtime"): it says what the site is about and links sites."""
    own = set(site.split(".")[:-1])
    head, *rest = _TITLE_PARTS.split(title.casefold())
    kept = [head] + [part for part in rest if "".join(_WORD.findall(part)) not in own]
    return [w for w in _WORD.findall(" ".join(kept))
            if len(w) > 1 and not w.isdigit() and w not in STOPWORDS and w not in own]


def _dated(visits: Iterable[PageVisit]) -> Iterator[tuple[PageVisit, str, datetime]]:
    """`(visit, its site, its time)` for each visit with a host (`site_of`) and a `visited_at` that parses
    (`parse_time`: an aware datetime); the others are left out."""
    for visit in visits:
        site = site_of(visit.url)
        try:
            when = parse_time(visit.visited_at)
        except ValueError:
            continue
        if site is not None:
            yield visit, site, when


def sites_of(visits: Iterable[PageVisit]) -> dict[str, _Site]:
    """The visits grouped by site, each page's title terms counted once (what the model's answer is checked
    against)."""
    sites: dict[str, _Site] = {}
    titles: dict[str, dict[str, str]] = {}  # site -> page -> title (each page counted once)
    for visit, site, when in _dated(visits):
        entry = sites.setdefault(site, _Site())
        entry.times.append(when)
        entry.pages.add(visit.url)
        titles.setdefault(site, {}).setdefault(visit.url, visit.title)
    for site, pages in titles.items():
        for title in pages.values():
            _count_terms(sites[site], _terms(title, site))
    return sites


def _count_terms(entry: _Site, terms: list[str]) -> None:
    """Add one page's title terms to its site: each term once, with its running mean relative position."""
    words = list(dict.fromkeys(terms))
    for index, word in enumerate(words):
        n = entry.terms[word]
        entry.positions[word] = (entry.positions.get(word, 0.0) * n + index / len(words)) / (n + 1)
        entry.terms[word] += 1


@dataclass
class _Page:
    """One distinct page: its site, the site's kind (`twin.text.page_kinds.site_kind`), its title terms in title order
    (plurals folded over the whole history), the terms that may link it to other pages (`links`: the terms less
    `GENRE_WORDS`) and its visit times."""

    url: str
    site: str
    kind: str
    terms: list[str]
    times: list[datetime] = field(default_factory=list)
    links: frozenset[str] = frozenset()


def _pages(visits: Iterable[PageVisit]) -> list[_Page]:
    """The distinct pages of `visits` (by URL, in URL order) that are reading: utility pages
    (`twin.text.page_kinds.utility_page`), visits without a host and visits with an unparsable time are left out."""
    pages: dict[str, _Page] = {}
    for visit, site, when in _dated(visits):
        if utility_page(visit.url, visit.title) is not None:
            continue
        page = pages.get(visit.url)
        if page is None:
            page = pages[visit.url] = _Page(visit.url, site, site_kind(site),
                                            list(dict.fromkeys(_terms(visit.title, site))))
        page.times.append(when)
    vocabulary = {t for page in pages.values() for t in page.terms}
    for page in pages.values():  # "runtimes" and "runtime" are one term
        page.terms = list(dict.fromkeys(t[:-1] if t.endswith("s") and t[:-1] in vocabulary else t
                                        for t in page.terms))
        page.links = frozenset(page.terms) - GENRE_WORDS
    return [pages[url] for url in sorted(pages)]


def _foreign(page: _Page, kinds: Counter, among: bool) -> bool:
    """True when `page` is on a site of a specific kind (`twin.text.page_kinds.site_kind`: news, travel, code, …) that
    no other page of a group shares (`kinds`: the group's pages by kind; `among`: `page` is one of them): a news
    article among travel pages and forums, a sports report among flat listings."""
    return page.kind != "general" and kinds[page.kind] - among <= 0


def _anchored(anchor: str, free: list[_Page]) -> list[_Page]:
    """The free pages about `anchor`: those holding the term, less each page of a foreign kind (`_foreign`) that
    shares nothing else with them (a treaty article on a news site among travel pages that all say "Lisbon")."""
    members = [p for p in free if anchor in p.links]
    kinds = Counter(p.kind for p in members)
    held = Counter(t for p in members for t in p.links if t != anchor)
    return [p for p in members if not _foreign(p, kinds, True) or any(held[t] >= 2 for t in p.links if t != anchor)]


def _grow(cluster: list[_Page], free: list[_Page], df: Counter) -> list[_Page]:
    """`cluster` with the free pages that belong to it: a page joins when it shares a term the cluster owns (at
    least two of its pages and half of all pages holding it are in the cluster) and its site's kind is not
    foreign to the cluster (`_foreign`), or when it shares two terms of which the cluster holds half. Repeats
    until nothing joins. Linear in the free pages' terms per round."""
    inside = {p.url for p in cluster}
    held = Counter(t for p in cluster for t in p.links)
    kinds = Counter(p.kind for p in cluster)
    while True:
        joined = [p for p in free if p.url not in inside and (
            len([t for t in p.links if held[t] * 2 >= df[t] >= 2]) >= 2
            or (not _foreign(p, kinds, False) and any(held[t] >= 2 and held[t] * 2 >= df[t] for t in p.links)))]
        if not joined:
            return cluster
        cluster = cluster + joined
        for page in joined:
            inside.add(page.url)
            held.update(page.links)
            kinds[page.kind] += 1


def topic_clusters(visits: list[PageVisit]) -> tuple[list[list[_Page]], list[_Page]]:
    """The pages of `visits` grouped by what they are about, and the pages left over (read-only, deterministic).

    Over the distinct reading pages (`_pages`; utility pages never take part), a term's `df` is how many pages
    hold it. The free term held by the most free pages (ties: the rarer overall, then alphabetical) anchors a
    cluster (`_anchored`) when it gathers `MIN_PAGES`, which then grows by the rare terms it owns (`_grow`); its
    pages are taken, and the next anchor is sought among the rest. Sites play no part but through their kind.
    Clusters come in the order they were found (most pages first, roughly)."""
    pages = _pages(visits)
    df = Counter(t for p in pages for t in p.links)
    free = list(pages)
    clusters: list[list[_Page]] = []
    counts = Counter(t for p in free for t in p.links if df[t] >= MIN_PAGES)  # free pages per untried anchor
    while True:
        counts = +counts  # drops anchors no free page holds any more
        if not counts:
            return clusters, free
        anchor = min(counts, key=lambda t: (-counts[t], df[t], t))
        del counts[anchor]
        members = _anchored(anchor, free)
        if len(members) < MIN_PAGES:
            continue
        cluster = _grow(members, free, df)
        clusters.append(cluster)
        taken = {p.url for p in cluster}
        free = [p for p in free if p.url not in taken]
        for page in cluster:
            counts.subtract(t for t in page.links if t in counts)


def cluster_visits(visits: list[PageVisit], limit: int = 5) -> list[Interest]:
    """The heuristic: up to `limit` interests from `visits`, most pages first (then latest, then topic).

    Pages are clustered by topic (`topic_clusters`: shared title terms, rarer ones first, the site's kind as a
    guard), never by site, and utility pages (`twin.text.page_kinds.utility_page`: sign-ins, tokens, invitations,
    carts, calendars, redirects, search results) never form or join one. The topic is made of the most frequent
    terms that occur on at least 2 of its pages: the first two, and up to `MAX_TOPIC_TERMS` of those at least half
    as frequent as the first, in the order they tend to appear in titles. Pages about no shared topic that make
    `MIN_PAGES` on one site are an interest named after the site ("Owner read a lot on news.ycombinator.com").
    Deterministic; visits without a host or with an unparsable time are ignored.
    """
    return [interest for interest, _ in interests_with_pages(visits, limit)]


def interests_with_pages(visits: list[PageVisit], limit: int = 5) -> list[tuple[Interest, list[str]]]:
    """`cluster_visits` with the URLs of each interest's pages (URL order): what a measure of the clustering
    reads (bench/interests_purity.py)."""
    clusters, left = topic_clusters(visits)
    by_site: dict[str, list[_Page]] = {}
    for page in left:
        by_site.setdefault(page.site, []).append(page)
    groups = clusters + [pages for _, pages in sorted(by_site.items()) if len(pages) >= MIN_PAGES]
    found = [(_interest(group, named_by_site=n >= len(clusters)), sorted(p.url for p in group))
             for n, group in enumerate(groups)]
    found.sort(key=lambda pair: (-pair[0].pages, _neg_time(pair[0].last_at), pair[0].topic))
    return found[:limit]


def _neg_time(value: str) -> float:
    return -parse_time(value).timestamp()


def _interest(pages: list[_Page], named_by_site: bool = False) -> Interest:
    """One interest of `pages` (see `cluster_visits` for its topic); sites with most pages first."""
    entry = _Site()
    for page in pages:
        _count_terms(entry, page.terms)
    terms, mean = entry.terms, entry.positions
    per_site = Counter(p.site for p in pages)
    ordered = sorted(per_site, key=lambda s: (-per_site[s], s))
    # most frequent first; among equals the earlier in titles (a title leads with what the page is about)
    ranked = sorted((t for t in terms if terms[t] >= 2), key=lambda t: (-terms[t], mean[t], t))[:MAX_TOPIC_TERMS]
    chosen = [t for t in ranked if terms[t] * 2 >= terms[ranked[0]]]
    topic = ordered[0] if named_by_site or not chosen else " ".join(sorted(chosen, key=lambda t: (mean[t], t)))
    times = [t for p in pages for t in p.times]
    return Interest(topic, len(pages), ordered, format_time(min(times)), format_time(max(times)))
