"""The browser deny-list by kind of site, in several languages (twin/text/private_sites.py): real Chromium and Firefox
history files holding bank, login, health, insurance, tax and webmail visits are imported with a model provider
(tests/fake_llm.py) and none of those visits reaches the store or the model, while ordinary reading still becomes
interests; and on a list of ordinary titles and pages (river banks, food banks, "Inbox zero", login-screen
articles) nothing is blocked."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest
from browser_fixtures import FF_LINK, LINK, make_chromium_profile, make_firefox_profile

from twin.connectors.browser import import_now
from twin.connectors.browser_history import clean_url
from twin.learn.interests import PageVisit, learn_interests
from twin.text.private_sites import private_site

PRIVATE = [  # (url, title): each must be refused, by host, path or title
    ("https://www.labanquepostale.fr/particulier/comptes.html", "Mes comptes - La Banque Postale"),
    ("https://particuliers.societegenerale.fr/app/virement", "Nouveau virement"),
    ("https://www.lcl.fr/", "LCL - Mes comptes"),
    ("https://app.example-fintech.fr/dashboard", "Mes comptes – Ma banque en ligne"),
    ("https://app.example-fintech.fr/operations", "Relevés de compte"),
    ("https://www.sparkasse-koelnbonn.de/de/home/onlinebanking.html", "Finanzstatus - Sparkasse KölnBonn"),
    ("https://portal.example.de/uebersicht", "Kontoübersicht | Online-Banking"),
    ("https://portal.example.de/auftrag", "Überweisung"),
    ("https://www.caixabank.es/particular/home", "CaixaBank - Banca online"),
    ("https://web.example.es/inicio", "Movimientos de la cuenta - Mi banco"),
    ("https://www.cgd.pt/", "Caixadirecta - Caixa Geral de Depósitos"),
    ("https://app.example.pt/", "Entrar | Conta"),
    ("https://app.example.it/pagamenti", "Bonifico SEPA"),
    ("https://mijn.example.nl/", "Mijn rekeningen"),
    ("https://lk.example.ru/", "Личный кабинет"),
    ("https://ebank.example.cn/", "网上银行 - 登录"),
    ("https://www.example-shinkin.co.jp/", "ログイン | ネットバンキング"),
    ("https://www.doctolib.fr/", "Doctolib - Mes rendez-vous"),
    ("https://portal.example-praxis.de/daten", "Meine Befunde"),
    ("https://www.ameli.fr/assure", "Mon compte ameli"),
    ("https://www.huk.de/", "HUK-COBURG - Meine HUK"),
    ("https://kunden.example.de/", "Versicherungsschein herunterladen"),
    ("https://www.elster.de/eportal/start", "Mein ELSTER - Ihr Online-Finanzamt"),
    ("https://www.example.gouv.fr/", "Déclaration de revenus 2026"),
    ("https://github.com/login", "Sign in to GitHub · GitHub"),
    ("https://example.org/user", "Anmelden | Example"),
    ("https://example.com/", "Se connecter – Example"),
    ("https://x.example.io/", "Iniciar sesión"),
    ("https://www.example.it/", "Accedi - Example"),
    ("https://www.example.ru/", "Вход"),
    ("https://www.example.cn/", "登录"),
    ("https://app.example.com/", "Spotify Login"),
    ("https://app.example.com/settings", "Reset password"),
    ("https://post.example.com/", "Inbox (3) - owner@example.com - Example Mail"),
    ("https://post.example.de/", "Posteingang (12)"),
    ("https://post.example.fr/", "Boîte de réception"),
    ("https://shop.example.com/cart/checkout", "Checkout"),
    ("https://www.example.com/wallet/0x12ab", "Wallet"),
    ("https://secure.example.com/account/88123456/statement", "Statement"),
    ("https://www.example.com/transfer/5512", "Transfer money"),
]

ORDINARY = [  # (url, title): none may be refused
    ("https://en.wikipedia.org/wiki/River_bank", "River bank erosion - Wikipedia"),
    ("https://www.bbc.com/news/uk-england-leeds-1", "Food bank volunteers needed in Leeds - BBC News"),
    ("https://www.theguardian.com/artanddesign/banksy", "Banksy's new mural appears overnight"),
    ("https://www.metoffice.gov.uk/weather/forecast", "Bank holiday weekend weather forecast"),
    ("https://www.parisinfo.com/rive-gauche", "Cafés de la rive gauche, the Left Bank"),
    ("https://www.example.com/crafts/piggy", "Piggy bank craft for kids"),
    ("https://www.reuters.com/markets/rates", "ECB holds rates; Bank of England next"),
    ("https://www.lemonde.fr/economie/article", "La Banque de France relève sa prévision de croissance"),
    ("https://www.zeit.de/kultur/parkbank", "Die Bank am Fluss: Geschichte einer Parkbank"),
    ("https://www.elpais.com/ciencia/peces", "El banco de peces del Mediterráneo"),
    ("https://www.example.pt/casa/energia", "Conta de luz: como economizar energia"),
    ("https://www.example.pt/musica", "Caixa de música antiga restaurada"),
    ("https://www.example.nl/weer", "Rekening houden met het weer"),
    ("https://www.france.tv/jeux", "Des chiffres et des lettres : le compte est bon"),
    ("https://docs.python.org/3/library/ssl.html", "ssl — TLS/SSL wrapper for socket objects"),
    ("https://www.nngroup.com/articles/login-walls/", "Login walls stop users in their tracks"),
    ("https://www.digitalocean.com/community/tutorials/ssh", "How to log in to a Linux server over SSH"),
    ("https://zenhabits.net/inbox-zero/", "Inbox zero: a method for email"),
    ("https://news.ycombinator.com/item", "Show HN: A statement parser for SQL"),
    ("https://www.skysports.com/transfer-centre", "Transfer news: Arsenal close in on striker"),
    ("https://www.bbc.co.uk/history/hastings", "An account of the Battle of Hastings"),
    ("https://www.allrecipes.com/recipe/sourdough", "Sourdough bread recipe"),
    ("https://www.kassel.de/veranstaltungen", "Stadt Kassel – Veranstaltungen"),
    ("https://www.sussex.ac.uk/study", "University of Sussex - Study"),
    ("https://www.essex.gov.uk/", "Essex County Council"),
    ("https://github.com/tokio-rs/tokio", "tokio-rs/tokio: A runtime for asynchronous Rust"),
    ("https://open.spotify.com/", "Spotify – Web Player: Music for everyone"),
    ("https://www.example.com/research", "Password strength meters: a research review"),
    ("https://www.imdb.com/title/tt0039", "The Transfer of Power (1947)"),
    ("https://www.example.com/retail", "Checkout counter design in supermarkets"),
    ("https://www.example.ru/perevod", "Перевод текстов онлайн"),
    ("https://www.example.cn/code", "如何学习编程"),
    ("https://www.example.jp/ramen", "ラーメンの作り方"),
    ("https://www.example.de/vogel", "Die Elster – ein kluger Vogel"),
    ("https://www.example.de/handel", "Umsätze im Einzelhandel steigen"),
    ("https://www.example.pt/receitas", "Extrato de tomate caseiro"),
    ("https://www.example.fr/politique", "Une ordonnance du gouvernement sur le logement"),
    ("https://www.example.com/blog/year-end-bookkeeping", "Bookkeeping: how accountants close the year"),
    ("https://www.wikipedia.org/wiki/Bank_of_Portugal", "Banco de Portugal - Wikipedia"),
    ("https://www.example.com/ux", "Designing a sign-in form that works"),
]


def refused(url: str, title: str) -> bool:
    """What the reader does with one visit: `clean_url` (host and path) and then the title."""
    cleaned = clean_url(url)
    if cleaned is None:
        return True
    parts = urlsplit(cleaned)
    return private_site(parts.hostname or "", parts.path, title) is not None


@pytest.mark.parametrize(("url", "title"), PRIVATE, ids=[t for _, t in PRIVATE])
def test_private_kinds_of_site_are_refused_in_every_language(url, title):
    assert refused(url, title)


def test_ordinary_pages_are_not_blocked():
    blocked = [(url, title) for url, title in ORDINARY if refused(url, title)]
    assert blocked == [], f"{len(blocked)} of {len(ORDINARY)} ordinary pages blocked"


def _visits(pages: list[tuple[str, str]], kind: int, start: datetime) -> list[tuple]:
    return [(url, title, start + timedelta(minutes=i), kind, False) for i, (url, title) in enumerate(pages)]


TOKIO = [(f"https://docs.rs/tokio/latest/tokio/{n}/", f"{n} in tokio - Rust") for n in
         ("runtime", "task", "sync", "net", "time")]


def test_denied_visits_never_reach_the_store_or_the_model(provider_env, store, fake_llm, tmp_path):
    home = tmp_path / "home"
    start = datetime.now(UTC) - timedelta(hours=3)
    half = len(PRIVATE) // 2
    make_chromium_profile(home, visits=_visits(PRIVATE[:half] + TOKIO[:3], LINK, start))
    make_firefox_profile(home, visits=_visits(PRIVATE[half:] + TOKIO[3:], FF_LINK, start))
    result = import_now(provider_env, home)
    assert result["profiles"] == 2 and result["visits"] == len(TOKIO)
    assert fake_llm.chat_requests(), "the model clustered the ordinary visits"
    sent = "\n".join(json.dumps(body, ensure_ascii=False) for body in fake_llm.chat_requests())
    kept = "\n".join(row[0] for row in store.conn.execute("SELECT content FROM memories"))
    for url, title in PRIVATE:
        host = urlsplit(url).hostname
        assert title not in sent and host not in sent, (url, title)
        assert title not in kept and host not in kept, (url, title)
    assert "docs.rs" in sent and any("docs.rs" in t for t in result["interests"])


def test_visits_queued_before_are_filtered_before_clustering(store, activity, fake_llm, provider):
    now = datetime.now(UTC)
    queued = [PageVisit(f"https://{urlsplit(url).hostname}/0123456789abcdef", title, (now - timedelta(minutes=i))
                        .strftime("%Y-%m-%dT%H:%M:%SZ")) for i, (url, title) in enumerate(PRIVATE + TOKIO)]
    _, line = learn_interests(store, activity, "owner", queued, 1, provider, now=now)
    sent = "\n".join(json.dumps(body, ensure_ascii=False) for body in fake_llm.chat_requests())
    assert not [t for _, t in PRIVATE if t in sent] and "docs.rs" in sent
    assert line.startswith(f"Browser: {len(queued)} visits read")
