"""Offline interests are topics: pages clustered by what they are about, never by site, and utility pages never
form or join an interest. On the labelled week of tests/interest_history.py written as real Chrome and Firefox
databases and read back by the real reader, and on a second week in German and French written here."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from interest_history import TOPICS, labels, measure, read_week, topic_sizes

from twin.learn.interests import PageVisit, interests_with_pages, learn_interests
from twin.text.page_kinds import site_kind, utility_page

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def test_a_week_read_from_real_browsers_gives_one_pure_interest_per_topic(tmp_path):
    visits = read_week(tmp_path)
    found = interests_with_pages(visits, limit=50)
    figures = measure([urls for _, urls in found], labels())
    assert figures["interests"] == len(TOPICS) and figures["pure"] == len(TOPICS)
    assert (figures["foreign_pages"], figures["utility_pages"], figures["topics_split"]) == (0, 0, [])
    assert all(share >= 0.8 for share in figures["coverage"].values()), figures["coverage"]
    by_topic = {labels()[urls[0]]: interest for interest, urls in found}
    assert len(by_topic["lisbon trip"].sites) >= 5  # one topic read on many sites is one interest
    assert "lisbon" in by_topic["lisbon trip"].topic and "sourdough" in by_topic["sourdough"].topic
    assert sum(i.pages for i in by_topic.values()) <= sum(topic_sizes().values())


def test_learned_offline_the_week_is_five_sentences_and_none_about_a_chore(tmp_path, store, activity):
    texts, line = learn_interests(store, activity, "owner", read_week(tmp_path), 2, None, now=NOW)
    assert len(texts) == 5 and line.endswith("learned 5 interests.")
    assert all(texts) and not any(word in " ".join(texts).lower() for word in
                                  ("invitation", "token", "calendar", "unsubscribe", "search", "redirect", "treaty"))


SECOND_WEEK = [  # (url, title, label): a flat hunt in German, guitar lessons in French, one news site on many things
    ("https://www.immobilienscout24.de/expose/1", "2-Zimmer-Wohnung in Leipzig-Plagwitz mieten - ImmoScout24", "flat"),
    ("https://www.immowelt.de/expose/2", "Wohnung mieten in Leipzig Connewitz | immowelt", "flat"),
    ("https://www.wg-gesucht.de/wohnungen-in-Leipzig.html", "Wohnungen in Leipzig - WG-Gesucht.de", "flat"),
    ("https://www.reddit.com/r/leipzig/comments/x/plagwitz", "Wohnung in Plagwitz oder Connewitz? : r/leipzig", "flat"),
    ("https://www.mieterverein-leipzig.de/kaution", "Mietkaution: was Mieter in Leipzig wissen müssen", "flat"),
    ("https://www.youtube.com/watch/accords", "Les 5 accords de guitare pour débutants - YouTube", "guitar"),
    ("https://www.guitare-debutant.fr/accords", "Accords de guitare : le guide complet pour débutant", "guitar"),
    ("https://www.thomann.de/fr/guitares-folk.html", "Guitares folk – Thomann France", "guitar"),
    ("https://fr.wikipedia.org/wiki/Guitare", "Guitare — Wikipédia", "guitar"),
    ("https://www.spiegel.de/politik/1", "Haushaltsstreit: Koalition einigt sich - DER SPIEGEL", "spiegel"),
    ("https://www.spiegel.de/wissenschaft/2", "Leipziger Forscher finden neue Käferart - DER SPIEGEL", "spiegel"),
    ("https://www.spiegel.de/sport/3", "RB Leipzig gewinnt gegen Bayern - DER SPIEGEL", "spiegel"),
    ("https://de.wikipedia.org/wiki/Völkerschlachtdenkmal", "Völkerschlachtdenkmal – Wikipedia", "one-off"),
    ("https://www.immobilienscout24.de/anmelden", "Anmelden | ImmoScout24", "utility"),
    ("https://outlook.live.com/calendar/0/view/week", "Kalender - Outlook", "utility"),
    ("https://teams.example.com/meet/1", "Einladung: Wohnungsbesichtigung Plagwitz @ Di 1. Dez", "utility"),
    ("https://teams.example.com/meet/2", "Einladung: Besichtigung Connewitz @ Do 3. Dez", "utility"),
    ("https://www.thomann.de/fr/basket.html", "Panier – Thomann France", "utility"),
    ("https://www.google.de/search", "wohnung leipzig plagwitz - Google Suche", "utility"),
    ("https://www.qwant.com/", "accords guitare débutant - Qwant", "utility"),
    ("https://news.example.fr/newsletter/desinscription", "Se désabonner de la newsletter", "utility"),
    ("https://www.wg-gesucht.de/weiterleitung", "Weiterleitung…", "utility"),
    ("https://app.example.com/verify", "Bestätigungscode eingeben", "utility"),
]


def test_a_week_in_german_and_french_is_topics_too_and_a_news_site_stays_a_site():
    visits = [PageVisit(url, title, f"2026-11-{23 + n % 7:02d}T{8 + n % 12:02d}:00:00Z")
              for n, (url, title, _) in enumerate(SECOND_WEEK)]
    label = {url: lab for url, _, lab in SECOND_WEEK}
    found = {tuple(sorted({label[u] for u in urls})): interest for interest, urls in interests_with_pages(visits, 50)}
    assert sorted(found) == [("flat",), ("guitar",), ("spiegel",)]  # each pure; no utility page anywhere
    assert found[("flat",)].pages == 5 and {"wohnung", "leipzig"} <= set(found[("flat",)].topic.split())
    assert found[("guitar",)].pages == 4 and "guitare" in found[("guitar",)].topic
    # three unrelated articles of one site: an interest in the site, named after it, never joined to a topic
    assert (found[("spiegel",)].topic, found[("spiegel",)].pages) == ("spiegel.de", 3)


@pytest.mark.parametrize(("url", "title"), [
    ("https://calendar.google.com/calendar/r/week", "Google Calendar - Week of 30 November 2026"),
    ("https://mail.example.com/m/1", "Invitation: Quarterly review @ Mon 7 Dec 2026 14:00"),
    ("https://www.example.com/e/2", "Einladung: Teammeeting @ Fr 4. Dez"),
    ("https://slack.com/x", "Accept your invitation to join Kettle Labs"),
    ("https://www.example.org/p", "Unsubscribe from the weekly digest"),
    ("https://shop.example.com/p", "Your shopping cart"),
    ("https://www.example.com/gp/checkout", "Review your order"),
    ("https://auth.example.com/code", "Enter code"),
    ("https://www.example.com/p", "Your verification code is ready"),
    ("https://github.com/settings/tokens", "Personal access tokens"),
    ("https://www.bing.com/search", "best running shoes - Bing"),
    ("https://www.google.fr/search", "recette pain au levain - Recherche Google"),
    ("https://duckduckgo.com/", "lisbon tram 28 at DuckDuckGo"),
    ("https://www.example.com/r", "Redirecting…"),
    ("https://t.co/xyz", "https://example.com/article"),
    ("https://www.example.com/x", "Just a moment..."),
    ("https://www.example.com/y", "404 Page not found"),
    ("https://www.example.es/z", "Resultados de búsqueda: guitarra"),
])
def test_utility_pages_are_told_by_host_path_and_title(url, title):
    assert utility_page(url, title) is not None


@pytest.mark.parametrize(("url", "title"), [
    ("https://www.nytimes.com/a", "The Mayan calendar explained"),
    ("https://en.wikipedia.org/wiki/URL_redirection", "URL redirection - Wikipedia"),
    ("https://css-tricks.com/design-tokens", "What are design tokens? A primer for CSS"),
    ("https://www.bonappetit.com/dinner", "The art of the dinner party invitation"),
    ("https://www.theguardian.com/travel/lisbon", "Lisbon's best new restaurants | Travel | The Guardian"),
    ("https://go.dev/doc/effective_go", "Effective Go - The Go Programming Language"),
    ("https://www.reddit.com/r/Sourdough/comments/1", "My first loaf after searching for a good recipe : r/Sourdough"),
])
def test_reading_pages_are_not_utility_pages(url, title):
    assert utility_page(url, title) is None


def test_site_kinds():
    assert [site_kind(s) for s in ("lonelyplanet.com", "bbc.com", "docs.rs", "amazon.de", "seriouseats.com",
                                   "reddit.com", "stripe.com")] == ["travel", "news", "code", "shop", "food",
                                                                      "general", "general"]
