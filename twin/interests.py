"""Interests from browser visits: which topics the owner read several pages about (seed 001: the browser import
learns "clustered interests"; with no model, "their own heuristic fallbacks").

- `cluster_visits()` is the heuristic: pages grouped by what they are about (`topic_clusters`: shared title terms,
  the site's kind as a guard), never by site; utility pages (`twin.page_kinds`) never form or join an interest.
- `cluster_with_model()` asks the `cheap` model once, then checks its answer against the visits.
- `interest_text()` turns an interest into the one third-person sentence that is learned.
- `learn_interests()` puts them together for one browser import: cluster (model, else heuristic), `learn()`
  each sentence with source `browser`, one diary line.

The clustering is pure (no I/O apart from the provider call). Times are UTC ISO-8601 strings
(`twin.memory.format_time`).
"""

from __future__ import annotations

import functools
import logging
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from twin import ingest
from twin.activity import Activity
from twin.learn import learn
from twin.memory import format_time, parse_time, strip_controls
from twin.page_kinds import site_kind, utility_page
from twin.private_sites import private_site
from twin.provider import (
    BULK_SHARE,
    DATA_RULE,
    BudgetExhausted,
    ModelProvider,
    ProviderError,
    ProviderResting,
    quote_data,
    valid_items,
)
from twin.store import Store

MIN_PAGES = 3
"""A cluster needs this many distinct pages to be an interest (ours)."""
MAX_TOPIC_TERMS = 4
MAX_MODEL_VISITS = 300
"""Newest visits shown to the model (ours: bounds the prompt to a few thousand tokens)."""
MAX_TOPIC_CHARS = 80
THIS_WEEK = timedelta(days=7)
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
"""English month names, whatever the process locale."""

STOPWORDS = frozenset("""
a about after all also an and any are as at be been but by can do does for from get has have how i if in into is
it its just more my new no not of on one or our out over so than that the their then there these this to up us
use using vs was we what when where which who why will with without you your
home page official site website welcome index blog docs documentation guide tutorial introduction overview
getting started learn read latest free online best top com org net www http https html
der die das und ist mit für von zu den im ein eine auf des le la les et du en el los las y
""".split())
"""Words that name no topic (ours): English function words, web boilerplate, a few German, French and Spanish
function words."""
_WORD = re.compile(r"[^\W_]+")
log = logging.getLogger(__name__)


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


def _sites(visits: Iterable[PageVisit]) -> dict[str, _Site]:
    """The visits grouped by site, each page's title terms counted once (what the model's answer is checked
    against)."""
    sites: dict[str, _Site] = {}
    titles: dict[str, dict[str, str]] = {}  # site -> page -> title (each page counted once)
    for visit in visits:
        site = site_of(visit.url)
        try:
            when = parse_time(visit.visited_at)
        except ValueError:
            continue
        if site is None:
            continue
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


def _fold_plurals(terms: Counter, positions: dict[str, float]) -> None:
    """Count `runtime` and `runtimes` as one term, under the more frequent spelling (in place)."""
    for word in sorted(terms):
        plural = f"{word}s"
        if plural in terms and word in terms:
            keep, drop = (word, plural) if terms[word] >= terms[plural] else (plural, word)
            terms[keep] += terms.pop(drop)
            positions[keep] = min(positions.get(keep, 1.0), positions.pop(drop, 1.0))


@dataclass
class _Page:
    """One distinct page: its site, the site's kind (`twin.page_kinds.site_kind`), its title terms in title order
    (plurals folded over the whole history) and its visit times."""

    url: str
    site: str
    kind: str
    terms: list[str]
    times: list[datetime] = field(default_factory=list)


def _pages(visits: Iterable[PageVisit]) -> list[_Page]:
    """The distinct pages of `visits` (by URL, in URL order) that are reading: utility pages
    (`twin.page_kinds.utility_page`), visits without a host and visits with an unparsable time are left out."""
    pages: dict[str, _Page] = {}
    for visit in visits:
        site = site_of(visit.url)
        try:
            when = parse_time(visit.visited_at)
        except ValueError:
            continue
        if site is None or utility_page(visit.url, visit.title) is not None:
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
    return [pages[url] for url in sorted(pages)]


def _compatible(a: str, b: str) -> bool:
    """Two site kinds may hold the same topic: equal, or either is "general" (forums, video, encyclopedias)."""
    return a == b or "general" in (a, b)


def _anchored(anchor: str, free: list[_Page], df: Counter) -> list[_Page]:
    """The free pages about `anchor`: those holding the term, less those on a site of a kind foreign to the
    pages' main kind that share nothing else with them (a treaty article on a news site among travel pages that
    all say "Lisbon")."""
    members = [p for p in free if anchor in p.terms]
    kinds = Counter(p.kind for p in members if p.kind != "general")
    if not kinds:
        return members
    main, count = min(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
    if count * 2 < sum(kinds.values()):
        return members
    held = Counter(t for p in members for t in set(p.terms) if df[t] >= 2 and t != anchor)
    return [p for p in members if _compatible(p.kind, main) or any(held[t] >= 2 for t in p.terms if t != anchor)]


def _grow(cluster: list[_Page], free: list[_Page], df: Counter) -> list[_Page]:
    """`cluster` with the free pages that belong to it: a page joins when it shares a term the cluster owns (at
    least two of its pages and half of all pages holding it are in the cluster) and comes from a site of a
    compatible kind, or when it shares two terms of which the cluster holds half. Repeats until nothing joins."""
    kinds = Counter(p.kind for p in cluster)
    main = min(kinds.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    while True:
        held = Counter(t for p in cluster for t in set(p.terms))
        joined = [p for p in free if p not in cluster and (
            len([t for t in p.terms if held[t] * 2 >= df[t] >= 2]) >= 2
            or (_compatible(p.kind, main) and any(held[t] >= 2 and held[t] * 2 >= df[t] for t in p.terms)))]
        if not joined:
            return cluster
        cluster = cluster + joined


def topic_clusters(visits: list[PageVisit]) -> tuple[list[list[_Page]], list[_Page]]:
    """The pages of `visits` grouped by what they are about, and the pages left over (read-only, deterministic).

    Over the distinct reading pages (`_pages`; utility pages never take part), a term's `df` is how many pages
    hold it. The free term held by the most free pages (ties: the rarer overall, then alphabetical) anchors a
    cluster (`_anchored`) when it gathers `MIN_PAGES`, which then grows by the rare terms it owns (`_grow`); its
    pages are taken, and the next anchor is sought among the rest. Sites play no part but through their kind.
    Clusters come in the order they were found (most pages first, roughly)."""
    pages = _pages(visits)
    df = Counter(t for p in pages for t in p.terms)
    free = list(pages)
    clusters: list[list[_Page]] = []
    tried: set[str] = set()
    while True:
        counts = Counter(t for p in free for t in p.terms if df[t] >= MIN_PAGES and t not in tried)
        if not counts:
            return clusters, free
        anchor = min(counts, key=lambda t: (-counts[t], df[t], t))
        tried.add(anchor)
        members = _anchored(anchor, free, df)
        if len(members) < MIN_PAGES:
            continue
        cluster = _grow(members, free, df)
        clusters.append(cluster)
        free = [p for p in free if p not in cluster]


def cluster_visits(visits: list[PageVisit], limit: int = 5) -> list[Interest]:
    """The heuristic: up to `limit` interests from `visits`, most pages first (then latest, then topic).

    Pages are clustered by topic (`topic_clusters`: shared title terms, rarer ones first, the site's kind as a
    guard), never by site, and utility pages (`twin.page_kinds.utility_page`: sign-ins, tokens, invitations,
    carts, calendars, redirects, search results) never form or join one. The topic is made of the most frequent
    terms that occur on at least 2 of its pages: the first two, and up to `MAX_TOPIC_TERMS` of those at least half
    as frequent as the first, in the order they tend to appear in titles. Pages about no shared topic that make
    `MIN_PAGES` on one site are an interest named after the site ("Owner read a lot on news.ycombinator.com").
    Deterministic; visits without a host or with an unparsable time are ignored.
    """
    clusters, left = topic_clusters(visits)
    by_site: dict[str, list[_Page]] = {}
    for page in left:
        by_site.setdefault(page.site, []).append(page)
    groups = clusters + [pages for _, pages in sorted(by_site.items()) if len(pages) >= MIN_PAGES]
    interests = [_interest(group, named_by_site=n >= len(clusters)) for n, group in enumerate(groups)]
    interests.sort(key=lambda i: (-i.pages, _neg_time(i.last_at), i.topic))
    return interests[:limit]


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


# -- the model --------------------------------------------------------------------------------------------------
class InterestItem(BaseModel):
    """One interest as the model proposes it (lenient: a numeric string counts, one site may be a string)."""

    model_config = ConfigDict(extra="ignore")
    topic: str
    pages: int = 0
    sites: list[str] = Field(default_factory=list)

    @field_validator("pages", mode="before")
    @classmethod
    def _number(cls, value: object) -> int:
        try:
            return int(float(value))  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError):
            return 0

    @field_validator("sites", mode="before")
    @classmethod
    def _site_list(cls, value: object) -> list[str]:
        value = [value] if isinstance(value, str) else value
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class InterestAnswer(BaseModel):
    """The model's answer: `{"interests": [...]}`; items that do not fit `InterestItem` are dropped."""

    model_config = ConfigDict(extra="ignore")
    interests: list[InterestItem]

    @field_validator("interests", mode="before")
    @classmethod
    def _drop_bad_items(cls, value: object) -> list[InterestItem]:
        return valid_items(value, InterestItem, "interests")


def system_prompt(limit: int) -> str:
    """The system prompt of the interest call (starts with `Task: interests.`, which tests/fake_llm.py keys on)."""
    return f"""Task: interests.
You get web pages one person ("Owner") visited, one per line as "site — page title", oldest first.
{DATA_RULE}
Name at most {limit} interests: topics Owner read several pages about. For each give: topic, a short lower-case
phrase of 2 to 6 words saying what the pages are about (e.g. "rust async runtimes"); pages, how many of the lines
belong to it; sites, the sites (exactly as written before the dash) those pages are on. Leave out one-off pages,
logins and search pages. Answer {{"interests": []}} when nothing recurs."""


def cluster_with_model(provider: ModelProvider, visits: list[PageVisit], limit: int = 5) -> list[Interest]:
    """Up to `limit` interests named by the model in ONE `provider.chat_json` call (purpose "interests", the bulk
    share of the budget) over the newest `MAX_MODEL_VISITS` visits, given as quoted `site — title` lines.

    The answer is checked against those visits: sites the visits do not contain are dropped (an item left with
    none is dropped), `pages` is clamped to 1..the distinct pages really visited on its sites (the real count
    when the model gave none), `first_at`/`last_at` come from the visits, the topic is stripped of control
    characters, whitespace-collapsed and cut to `MAX_TOPIC_CHARS` (an empty one drops the item), repeated
    topics are dropped. Returns [] without calling when there are no usable visits.

    Raises whatever `provider.chat_json` raises (`ProviderError`, `BadAnswer`, `BudgetExhausted`, …); the
    caller then falls back to `cluster_visits`.
    """
    dated = []
    for visit in visits:
        try:
            dated.append((parse_time(visit.visited_at), visit))
        except ValueError:
            continue
    dated.sort(key=lambda pair: pair[0])
    shown = [v for _, v in dated[-MAX_MODEL_VISITS:] if site_of(v.url)]
    if not shown:
        return []
    lines = "\n".join(f"{site_of(v.url)} — {_one_line(v.title)[:150] or '(no title)'}" for v in shown)
    answer = provider.chat_json(system_prompt(limit), quote_data("VISITS", lines), InterestAnswer,
                                purpose="interests", max_tokens=800, budget_share=BULK_SHARE)
    sites = _sites(shown)
    interests: list[Interest] = []
    topics: set[str] = set()
    for item in answer.interests:
        named = list(dict.fromkeys(s for s in map(_as_site, item.sites) if s in sites))
        topic = _one_line(item.topic)[:MAX_TOPIC_CHARS].strip()
        if not named or not topic or topic.casefold() in topics:
            continue
        topics.add(topic.casefold())
        real = sum(len(sites[s].pages) for s in named)
        times = [t for s in named for t in sites[s].times]
        pages = real if item.pages < 1 else min(item.pages, real)
        interests.append(Interest(topic, pages, named, format_time(min(times)), format_time(max(times))))
    return interests[:limit]


def _one_line(text: str) -> str:
    return " ".join(strip_controls(text).split())


def _as_site(value: str) -> str | None:
    """A site the model wrote (maybe with a scheme, `www.` or a path) in `site_of` form."""
    value = value.strip().lower()
    return site_of(value if "://" in value else f"http://{value}")


# -- the sentence -----------------------------------------------------------------------------------------------
def interest_text(interest: Interest, now: datetime) -> str:
    """One third-person sentence for `interest`, e.g. "Owner read a lot about rust async runtimes this week (14
    pages on docs.rs and tokio.rs)." "this week" when `last_at` is within 7 days before `now` (an aware
    datetime) or after it, else the dates: "on 3 November 2026", "between 3 and 9 November 2026", "between 28
    October and 3 November 2026". At most 3 sites are named ("…, c and 2 other sites"). An interest named after
    its site reads "Owner read a lot on news.ycombinator.com this week (5 pages)." Raises `ValueError` when
    `first_at`/`last_at` are not ISO-8601."""
    first, last = parse_time(interest.first_at), parse_time(interest.last_at)
    when = "this week" if now - last <= THIS_WEEK else _date_span(first, last)
    named = interest.sites[:3]
    others = len(interest.sites) - len(named)
    names = named + ([f"{others} other site{'s' if others > 1 else ''}"] if others else [])
    where = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    pages = f"{interest.pages} page{'s' if interest.pages != 1 else ''}"
    if interest.topic in interest.sites:
        return f"Owner read a lot on {where} {when} ({pages})."
    return f"Owner read a lot about {interest.topic} {when} ({pages} on {where})."


def _date_span(first: datetime, last: datetime) -> str:
    def day(moment: datetime, month: bool = True, year: bool = True) -> str:
        return " ".join([str(moment.day)] + ([MONTHS[moment.month - 1]] if month else []) +
                        ([str(moment.year)] if year else []))

    if first.date() == last.date():
        return f"on {day(last)}"
    same_year = first.year == last.year
    same_month = same_year and first.month == last.month
    return f"between {day(first, not same_month, not same_year)} and {day(last)}"


# -- learning them ----------------------------------------------------------------------------------------------
def learn_interests(store: Store, activity: Activity, being: str, visits: list[PageVisit], profiles: int,
                    provider: ModelProvider | None, now: datetime | None = None,
                    ingest_id: int | None = None) -> tuple[list[str], str]:
    """Learn one browser import: the visits clustered by the model when `provider` is set (seed 001), by
    `cluster_visits` otherwise and whenever the model fails or finds nothing (a failure other than a used-up
    budget or a resting provider writes one `model` diary line); each interest's sentence is learned with
    source `browser` (offline: the sentence already is the memory). Visits of a private kind of site (by host
    and title, `twin.private_sites`; the reader already dropped them, this also covers visits queued before)
    are left out first, and so are utility pages (`twin.page_kinds.utility_page`): neither clustered nor shown to
    the model. Writes the diary line "Browser: 212
    visits read from 2 profiles; learned 4 interests." (counting every visit read) and returns `(sentences, that
    line)`. `now` (aware, default the current time) dates "this week". `ingest_id`: the staged import
    (`twin.ingest`), deleted in the transaction that learns its interests. Raises only `sqlite3.Error` from the
    store."""
    now = now or datetime.now(UTC)
    read = len(visits)
    visits = [v for v in visits if private_site(urlsplit(v.url).hostname or "", "", v.title) is None
              and utility_page(v.url, v.title) is None]
    interests: list[Interest] = []
    if provider is not None and visits:
        try:
            interests = cluster_with_model(provider, visits)
        except (BudgetExhausted, ProviderResting):
            pass
        except ProviderError as exc:
            activity.record("model", f"Model clustering of browser history failed ({exc}); used the heuristic.")
        except Exception as exc:  # the answer is untrusted input: whatever it breaks, the heuristic still runs
            log.exception("interests: model clustering failed unexpectedly")
            activity.record("model", f"Model clustering of browser history failed (unexpected "
                                     f"{type(exc).__name__}); used the heuristic.")
    texts = [interest_text(i, now) for i in interests or cluster_visits(visits)]
    with store.transaction():  # the sentences need no model: learned together, with the staged import consumed
        for text in texts:
            learn(store, activity, being, text, "browser", quiet=True)
        if ingest_id is not None:
            ingest.consume(store, [ingest_id])
    line = (f"Browser: {read} visit{'s' if read != 1 else ''} read from {profiles} "
            f"profile{'s' if profiles != 1 else ''}; learned {len(texts)} interest{'s' if len(texts) != 1 else ''}.")
    activity.record("browsed", line)
    return texts, line
