"""A week of one person's browsing, every page labelled with what it is about: the history the offline interest
clustering is measured on (tests/test_interest_topics.py, bench/interests_purity.py). Five topics read on several
sites each (a Lisbon trip on seven sites, sourdough baking, async Rust, election news, marathon training), an
unrelated article that shares a word with one of them, one-off pages, and the utility pages a week leaves
behind (tokens, invitations, unsubscribes, carts, calendars, redirects, search results, e-mail confirmations).

`HISTORY` rows are `(url, title, label, day, hour)`: `label` a topic, `ONE_OFF` or `UTILITY`; `day` 0..6 of the
week starting `WEEK_START` (UTC). `write_profiles(home)` puts the first half in a Chrome profile and the rest in
a Firefox profile, as real browser databases (tests/browser_fixtures.py).
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from browser_fixtures import FF_LINK, LINK, make_chromium_profile, make_firefox_profile

from twin.connectors.browser_history import BrowserProfile, read_visits
from twin.learn.interests import PageVisit

ONE_OFF, UTILITY = "one-off", "utility"
WEEK_START = datetime(2026, 11, 23, tzinfo=UTC)
TOPICS = ("lisbon trip", "sourdough", "async rust", "election news", "marathon training")

HISTORY: list[tuple[str, str, str, int, int]] = [
    # a trip to Lisbon, read on seven sites
    ("https://www.lonelyplanet.com/portugal/lisbon", "Lisbon travel guide - Lonely Planet", "lisbon trip", 0, 20),
    ("https://www.booking.com/hotel/pt/alfama-suites.html", "Alfama Suites, Lisbon – Updated 2026 Prices",
     "lisbon trip", 0, 21),
    ("https://www.tripadvisor.com/Attraction-Tram28", "Tram 28 Lisbon: tips before you ride", "lisbon trip", 1, 19),
    ("https://www.reddit.com/r/lisbon/comments/abc/pastel_de_nata", "Where to eat the best pastel de nata in Lisbon?"
     " : r/lisbon", "lisbon trip", 1, 20),
    ("https://www.getyourguide.com/lisbon-l42/sintra-day-trip", "From Lisbon: Sintra and Cascais day trip",
     "lisbon trip", 2, 18),
    ("https://www.timeout.com/lisbon/things-to-do", "The 30 best things to do in Lisbon right now", "lisbon trip", 2,
     19),
    ("https://www.visitlisboa.com/en/places/belem-tower", "Belém Tower | Visit Lisboa", "lisbon trip", 3, 21),
    ("https://www.youtube.com/watch/lisbon-food-tour", "Lisbon food tour: 10 things to eat - YouTube", "lisbon trip",
     4, 22),
    # sourdough
    ("https://www.kingarthurbaking.com/recipes/sourdough-starter", "Sourdough starter recipe | King Arthur Baking",
     "sourdough", 0, 9),
    ("https://www.theperfectloaf.com/beginners-sourdough-bread", "My best sourdough bread recipe for beginners",
     "sourdough", 1, 9),
    ("https://www.reddit.com/r/Sourdough/comments/def/dense_crumb", "Why is my sourdough crumb so dense? : r/Sourdough",
     "sourdough", 2, 8),
    ("https://www.youtube.com/watch/shaping-sourdough", "Shaping a sourdough boule - YouTube", "sourdough", 3, 8),
    ("https://www.seriouseats.com/sourdough-hydration", "Sourdough hydration explained", "sourdough", 4, 9),
    ("https://en.wikipedia.org/wiki/Sourdough", "Sourdough - Wikipedia", "sourdough", 5, 10),
    # async Rust at work
    ("https://docs.rs/tokio/latest/tokio/task/fn.spawn.html", "spawn in tokio::task - Rust", "async rust", 0, 14),
    ("https://docs.rs/tokio/latest/tokio/sync/struct.Mutex.html", "Mutex in tokio::sync - Rust", "async rust", 1, 15),
    ("https://docs.rs/futures/latest/futures/", "futures - Rust", "async rust", 2, 14),
    ("https://tokio.rs/tokio/tutorial/spawning", "Spawning | Tokio - An asynchronous Rust runtime", "async rust", 2,
     15),
    ("https://tokio.rs/tokio/tutorial/channels", "Channels | Tokio - An asynchronous Rust runtime", "async rust", 3,
     14),
    ("https://stackoverflow.com/questions/1/tokio-mutex-vs-std-mutex", "rust - When should I use tokio Mutex instead"
     " of std Mutex? - Stack Overflow", "async rust", 3, 16),
    ("https://www.reddit.com/r/rust/comments/ghi/async_cancellation", "Async cancellation in tokio is hard : r/rust",
     "async rust", 4, 15),
    # election news
    ("https://www.bbc.com/news/world-europe-1", "Portugal election: polls close in tight race - BBC News",
     "election news", 1, 7),
    ("https://www.bbc.com/news/world-europe-2", "Portugal election results: who won? - BBC News", "election news", 2,
     7),
    ("https://www.theguardian.com/world/2026/nov/portugal-election", "Portugal election: what we know so far | World"
     " news | The Guardian", "election news", 2, 8),
    ("https://www.theguardian.com/world/2026/nov/portugal-coalition", "Portugal coalition talks after the election |"
     " World news | The Guardian", "election news", 3, 7),
    # marathon training
    ("https://www.runnersworld.com/training/marathon-plan", "16-week marathon training plan | Runner's World",
     "marathon training", 0, 6),
    ("https://www.reddit.com/r/running/comments/jkl/long_run_pace", "Long run pace for a first marathon? : r/running",
     "marathon training", 2, 6),
    ("https://www.amazon.de/Nike-Pegasus-Running-Shoes/dp/B0X", "Nike Pegasus 41 marathon running shoes : Amazon.de",
     "marathon training", 3, 6),
    ("https://www.youtube.com/watch/marathon-taper", "How to taper before your marathon - YouTube",
     "marathon training", 4, 6),
    ("https://www.strava.com/blog/marathon-fueling", "Marathon fueling: gels, carbs and timing | Strava Blog",
     "marathon training", 5, 6),
    # an unrelated article that says "Lisbon", and one-offs
    ("https://www.theguardian.com/world/lisbon-treaty-explained", "The Lisbon Treaty explained | World news | The"
     " Guardian", ONE_OFF, 3, 22),
    ("https://www.youtube.com/watch/cat-piano", "Cat plays piano - YouTube", ONE_OFF, 1, 23),
    ("https://www.wikihow.com/Fix-a-Leaky-Faucet", "How to fix a leaky faucet - wikiHow", ONE_OFF, 5, 12),
    ("https://www.ticketmaster.de/event/coldplay", "Coldplay tickets Berlin 2027 | Ticketmaster", ONE_OFF, 5, 13),
    ("https://news.ycombinator.com/item?id=1", "Show HN: a tiny database in 500 lines", ONE_OFF, 6, 9),
    # what a week of chores leaves behind
    ("https://github.com/settings/tokens", "Personal access tokens", UTILITY, 0, 15),
    ("https://github.com/settings/tokens/new", "New personal access token (classic)", UTILITY, 0, 15),
    ("https://calendar.google.com/calendar/r/week", "Google Calendar - Week of 23 November 2026", UTILITY, 1, 8),
    ("https://calendar.google.com/calendar/event/1", "Invitation: Team sync @ Tue 24 Nov 2026 10:00", UTILITY, 1, 9),
    ("https://calendar.google.com/calendar/event/2", "Invitation: Lunch with Ana @ Fri 27 Nov 2026", UTILITY, 3, 11),
    ("https://acme.slack.com/join/invite/xyz", "Join Acme on Slack | Slack", UTILITY, 2, 10),
    ("https://app.notion.so/invite/abc", "You're invited to the Lisbon trip page | Notion", UTILITY, 2, 22),
    ("https://www.runnersworld.com/newsletter/unsubscribe", "Unsubscribe | Runner's World", UTILITY, 4, 7),
    ("https://www.amazon.de/gp/cart/view.html", "Amazon.de Einkaufswagen", UTILITY, 3, 7),
    ("https://www.booking.com/confirmation/abc", "Booking.com: Confirm your email address", UTILITY, 0, 22),
    ("https://www.strava.com/verify", "Verify your email | Strava", UTILITY, 5, 7),
    ("https://www.google.com/search", "lisbon hotels alfama - Google Search", UTILITY, 0, 20),
    ("https://www.google.com/search", "sourdough starter smells like acetone - Google Search", UTILITY, 1, 9),
    ("https://duckduckgo.com/", "tokio mutex vs std mutex at DuckDuckGo", UTILITY, 3, 16),
    ("https://l.facebook.com/l.php", "Redirecting…", UTILITY, 4, 21),
    ("https://www.reddit.com/search", "reddit.com: search results - marathon", UTILITY, 2, 6),
]
REVISITS = 8
"""The first pages of each topic are visited again later in the week (one page read twice is still one page)."""


def visits() -> list[tuple[str, str, datetime, str]]:
    """Every visit, `(url, title, when, label)`, oldest first; pages of topics read twice are listed twice."""
    out = [(url, title, WEEK_START + timedelta(days=day, hours=hour), label)
           for url, title, label, day, hour in HISTORY]
    firsts = [row for row in out if row[3] in TOPICS][:REVISITS]
    out += [(url, title, when + timedelta(days=1, minutes=17), label) for url, title, when, label in firsts]
    return sorted(out, key=lambda row: row[2])


def labels() -> dict[str, str]:
    """`{url: label}` for every page (the search result URLs, which share a URL, are utility)."""
    return {url: label for url, _, label, _, _ in HISTORY}


def topic_sizes() -> Counter:
    """Distinct pages per topic."""
    return Counter(label for url, label in labels().items() if label in TOPICS)


def write_profiles(home: Path) -> tuple[Path, Path]:
    """A Chrome profile with the first half of `visits()` and a Firefox profile with the rest, under `home`;
    returns `(History, places.sqlite)`."""
    rows = visits()
    half = len(rows) // 2
    history = make_chromium_profile(home, visits=[(u, t, w, LINK, False) for u, t, w, _ in rows[:half]])
    places = make_firefox_profile(home, visits=[(u, t, w, FF_LINK, False) for u, t, w, _ in rows[half:]])
    return history, places


def read_week(home: Path) -> list[PageVisit]:
    """The fixture week written as a Chrome and a Firefox profile under `home` (`write_profiles`), read back by
    the browser connector's `read_visits` as `twin.learn.interests.PageVisit`s."""
    history, places = write_profiles(home)
    visits = []
    for profile in (BrowserProfile("chrome", "Default", history), BrowserProfile("firefox", "default", places)):
        found, _ = read_visits(profile, 0, WEEK_START, 5000, home / "work")
        visits += [PageVisit(v.url, v.title, v.visited_at) for v in found]
    return visits


def measure(groups: list[list[str]], page_labels: dict[str, str]) -> dict:
    """The purity of a clustering: `groups` are the page URLs of each interest, `page_labels` what each page is
    about (`labels()`). Returns `{interests, pure, mixed, foreign_pages, utility_pages, utility_interests,
    topics_split, topics_missed, coverage}`: an interest is pure when every page of it carries one topic's label;
    `foreign_pages` are pages in an interest that are not of its main topic (other topics, one-offs, utility
    pages); a topic is split when its pages are in two interests or more, missed when no interest holds half of
    them; `coverage` is, per topic, the share of its pages in the interest holding most of them."""
    sizes = Counter(label for label in page_labels.values() if label in TOPICS)
    held: dict[str, Counter] = {topic: Counter() for topic in sizes}
    pure = foreign = utility = utility_interests = 0
    for n, urls in enumerate(groups):
        found = Counter(page_labels.get(url, ONE_OFF) for url in urls)
        main, count = found.most_common(1)[0] if found else (ONE_OFF, 0)
        pure += len(found) == 1 and main in TOPICS
        foreign += len(urls) - count if main in TOPICS else len(urls)
        utility += found[UTILITY]
        utility_interests += main == UTILITY
        for topic in sizes:
            if found[topic]:
                held[topic][n] = found[topic]
    split = sorted(t for t, where in held.items() if len(where) > 1)
    coverage = {t: round(max(held[t].values(), default=0) / sizes[t], 2) for t in sorted(sizes)}
    return {"interests": len(groups), "pure": pure, "mixed": len(groups) - pure, "foreign_pages": foreign,
            "utility_pages": utility, "utility_interests": utility_interests, "topics_split": split,
            "topics_missed": sorted(t for t, share in coverage.items() if share < 0.5), "coverage": coverage}
