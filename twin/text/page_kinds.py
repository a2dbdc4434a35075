"""What a visited page is, for interest clustering (issue "Sources summarise what matters": interests are topics).

- `utility_page(url, title)`: a page that is a step of some chore, not reading: sign-in and sign-up pages,
  tokens and verification codes, invitations, unsubscribes and e-mail preferences, carts and checkouts,
  calendars, redirects and interstitials, search result pages, error pages. It never forms or joins an interest
  (ours: such pages recur across sites and topics, so they cluster with each other and say nothing of the owner).
  Told by the host (calendar., accounts., a search engine's /search), the path (/invite, /unsubscribe, /cart,
  /search, /tokens, /redirect, …) and the title ("Invitation: Team sync @ Tue", "Redirecting…", "… - Google
  Search", "Suchergebnisse"), in English, German, French, Spanish, Portuguese and Italian.
- `site_kind(site)`: the kind of site (travel, news, code, shop, food) when its host says so, else "general"
  (forums, video, encyclopedias and any other site, which hold every topic).

Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from urllib.parse import urlsplit

_UTILITY_HOST = re.compile(r"(?:^|\.)(?:calendar|accounts|account|login|signin|auth|sso|checkout|click|links?"
                           r"|email|trk|track|l|redirect)\.|^(?:t\.co|bit\.ly|lnkd\.in|tinyurl\.com|ow\.ly|buff\.ly)$")
_SEARCH_HOST = re.compile(r"(?:^|\.)(?:google|bing|duckduckgo|yahoo|yandex|ecosia|startpage|qwant|baidu|brave)\.")
_UTILITY_SEGMENT = frozenset("""search suche recherche buscar busca results signin sign-in signup sign-up login logout
register registration invite invites invitation invitations unsubscribe optout opt-out email-preferences
manage-subscription cart basket warenkorb panier carrito checkout kasse confirm confirmation verify verification
token tokens personal-access-tokens api-keys apikeys 2fa mfa otp redirect redir outbound interstitial calendar
calendars kalender calendario rsvp""".split())
_UTILITY_TITLE = re.compile(
    r"(?:^|\b)(?:sign\s?in|log\s?in|sign\s?up|log\s?out|create (?:an |your )?account|anmelden|einloggen"
    r"|registrieren|se connecter|iniciar sesi[oó]n|verification code|verify your|confirm your|one[- ]time (?:code"
    r"|password)|security code|access tokens?|api (?:keys?|tokens?)|your token|new token|bestätigungscode"
    r"|invitations?:|accept (?:the |your |this )?invitation|invited you|you(?:'|’)re invited|you are invited"
    r"|einladung:|unsubscribe|newsletter abbestellen|se d[ée]sabonner|darse de baja|email preferences"
    r"|manage (?:your )?subscriptions?|shopping (?:cart|basket)|your (?:cart|basket)|warenkorb|checkout"
    r"|order confirm|order #|bestellbestätigung|thank you for your order|redirecting|redirect notice|weiterleitung"
    r"|you are (?:being )?redirected|just a moment|please wait|checking your browser|attention required"
    r"|access denied|page not found|file not found|error \d{3}|\b404\b|search results|suchergebnisse"
    r"|r[ée]sultats de recherche|resultados de b[uú]squeda|risultati della ricerca|- google search|- google suche"
    r"|- bing$|at duckduckgo|- suche$)", re.IGNORECASE)
_UTILITY_PART = re.compile(r"(?:(?:google|outlook|proton|apple|icloud|zoho|fastmail) )?(?:calendar|kalender"
                           r"|calendrier|calendario|agenda|tokens?|cart|basket|panier|warenkorb|carrito|carrello"
                           r"|new tab|untitled)", re.IGNORECASE)
"""A title part that is only this is the name of a utility page ("Week of 1 Dec – Google Calendar", "Tokens")."""
_TITLE_SEPARATORS = re.compile(r"\s+[|–—·•:»/-]\s+|\s*[|–—·•»]\s*")

KINDS: dict[str, str] = {
    "travel": r"booking|airbnb|tripadvisor|lonelyplanet|expedia|getyourguide|skyscanner|hostelworld|viator|kayak"
              r"|rome2rio|seat61|travel|hotel|flight|visit[a-z]+|tourism|tourist|wikivoyage|holiday",
    "news": r"nytimes|bbc|theguardian|guardian|spiegel|zeit|reuters|apnews|cnn|lemonde|elpais|faz|sueddeutsche"
            r"|tagesschau|politico|washingtonpost|aljazeera|euronews|corriere|news",
    "code": r"docs\.rs|crates\.io|readthedocs|github|gitlab|stackoverflow|stackexchange|pypi|npmjs|rust-lang"
            r"|python\.org|developer\.|tokio\.rs|devdocs|golang|go\.dev",
    "shop": r"amazon|ebay|etsy|zalando|otto|idealo|aliexpress|shop|store|kaufen",
    "food": r"recipe|allrecipes|seriouseats|bbcgoodfood|chefkoch|kingarthurbaking|theperfectloaf|epicurious"
            r"|foodnetwork|bonappetit|cooking|kitchen|baking|bake",
}
"""Site kinds by host pattern (ours); the first that matches wins, in this order. A site of no kind is
"general"."""
_KIND = [(kind, re.compile(pattern)) for kind, pattern in KINDS.items()]


def _fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def utility_page(url: str, title: str) -> str | None:
    """Why the page at `url` titled `title` is a utility page ("host", "search", "path", "title"), or None for a
    page that may be reading (see the module docstring). URL and title verdicts are cached apart (a history holds
    far fewer distinct ones than visits)."""
    why = _url_verdict(url)
    if why is not None:
        return why
    return "title" if title and _utility_title(title) else None


@functools.lru_cache(maxsize=65_536)
def _url_verdict(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".").lower()
    except ValueError:
        return None
    path = parts.path if parts.path.isascii() else _fold(parts.path)
    segments = {s.split(".")[0] for s in path.lower().split("/") if s}  # "basket.html" is "basket"
    search_host, utility_host = _host_verdict(host)
    if search_host and (not segments or segments & {"search", "url", "webhp", "html", "images"}):
        return "search"
    if utility_host:
        return "host"
    return "path" if segments & _UTILITY_SEGMENT else None


@functools.lru_cache(maxsize=4096)
def _host_verdict(host: str) -> tuple[bool, bool]:
    """`(a search engine's host, a utility host)`."""
    return _SEARCH_HOST.search(host) is not None, _UTILITY_HOST.search(host) is not None


@functools.lru_cache(maxsize=65_536)
def _utility_title(title: str) -> bool:
    return bool(_UTILITY_TITLE.search(title)
                or any(_UTILITY_PART.fullmatch(part.strip()) for part in _TITLE_SEPARATORS.split(title)))


@functools.lru_cache(maxsize=65_536)
def site_kind(site: str) -> str:
    """The kind of `site` (a host without `www.`): one of `KINDS`, else "general"."""
    return next((kind for kind, pattern in _KIND if pattern.search(site)), "general")
