"""Interests from browser visits: which topics the owner read several pages about (seed 001: the browser import
learns "clustered interests"; with no model, "their own heuristic fallbacks").

- `cluster_visits()` (`twin.learn.interest_topics`) is the heuristic: pages grouped by what they are about, never by
  site; utility pages (`twin.text.page_kinds`) never form or join an interest.
- `cluster_with_model()` asks the `cheap` model once, then checks its answer against the visits.
- `interest_text()` turns an interest into the one third-person sentence that is learned.
- `learn_interests()` puts them together for one browser import: cluster (model, else heuristic), `learn()`
  each sentence with source `browser`, one diary line.

The clustering is pure (no I/O apart from the provider call). Times are UTC ISO-8601 strings
(`twin.memory.format_time`).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from twin import ingest
from twin.activity import Activity
from twin.learn.interest_topics import (
    MIN_PAGES,
    Interest,
    PageVisit,
    cluster_visits,
    interests_with_pages,
    site_of,
    sites_of,
)
from twin.learn.learning import learn
from twin.llm.provider import (
    BULK_SHARE,
    DATA_RULE,
    BudgetExhausted,
    ModelProvider,
    ProviderError,
    ProviderResting,
    dropping_invalid,
    quote_data,
)
from twin.memory import format_time, parse_time, strip_controls
from twin.store import Store
from twin.text.page_kinds import utility_page
from twin.text.private_sites import private_site

MAX_MODEL_VISITS = 300
"""Newest visits shown to the model (ours: bounds the prompt to a few thousand tokens)."""
MAX_TOPIC_CHARS = 80
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
"""English month names, whatever the process locale."""
__all__ = ["MIN_PAGES", "Interest", "PageVisit", "cluster_visits", "cluster_with_model", "interest_text",
           "interests_with_pages", "learn_interests", "site_of"]
log = logging.getLogger(__name__)


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
    interests: Annotated[list[InterestItem], dropping_invalid(InterestItem)]


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
    sites = sites_of(shown)
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
    """One third-person sentence for `interest`, e.g. "Owner read a lot about rust async runtimes between 24 and 28
    November 2026 (14 pages on docs.rs and tokio.rs)." Always the dates, never "this week": the sentence must stand
    alone whenever it is recalled (seed 000); `now` is kept for callers and unused. Dates read "on 3 November
    2026", "between 3 and 9 November 2026", "between 28 October and 3 November 2026". At most 3 sites are named
    ("…, c and 2 other sites"). An interest named after its site reads "Owner read a lot on news.ycombinator.com
    between 27 and 29 November 2026 (5 pages)." Raises `ValueError` when `first_at`/`last_at` are not ISO-8601."""
    first, last = parse_time(interest.first_at), parse_time(interest.last_at)
    when = _date_span(first, last)
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
    and title, `twin.text.private_sites`; the reader already dropped them, this also covers visits queued before)
    are left out first, and so are utility pages (`twin.text.page_kinds.utility_page`): neither clustered nor shown to
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
    with store.atomic():  # the sentences need no model: learned together, with the staged import consumed
        for text in texts:
            learn(store, activity, being, text, "browser", quiet=True)
        if ingest_id is not None:
            ingest.consume(store, [ingest_id])
    line = (f"Browser: {read} visit{'s' if read != 1 else ''} read from {profiles} "
            f"profile{'s' if profiles != 1 else ''}; learned {len(texts)} interest{'s' if len(texts) != 1 else ''}.")
    activity.record("browsed", line)
    return texts, line
