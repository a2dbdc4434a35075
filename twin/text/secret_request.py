"""Requests for secrets: when a message asks for a sensitive thing, and which `sensitive` memories answer it.

Seed 003 hides `sensitive` memories unless the caller asks for them; DESIGN.md "Recall" lets a chat ask by
naming the thing ("what's my Wi-Fi password?"). Naming a *kind* of secret is not asking for every secret of that
kind: "what's my wifi password?" must not also show the bank and Netflix passwords that share the word
"password". `only_what_was_asked` keeps a sensitive memory only when it holds the kind asked for and matches what
the query is about (its other content words: "wifi", "bank", "Netflix"), or when it is by far the best match of
the sensitive ones; otherwise none. Non-sensitive memories pass unchanged. Every path that lets sensitive
memories through on request calls this (the chat and Telegram's /recall through `twin.chat.relevant_memories`);
`twin recall --sensitive` is the owner asking for all of them and does not. Pure.
"""

from __future__ import annotations

import re

from twin.memory import Recalled
from twin.text.query_terms import query_terms
from twin.text.sensitivity import find_secrets

BY_FAR = 0.15
"""A sensitive memory with no word of the request is still shown when its match beats every other sensitive
memory's of the kind asked by this much (cosine, or keyword score without vectors) and clears `MIN_BEST`.
Measured on the local model over 3 passwords, 2 PINs and a door code: a request for one of them leads by
0.18-0.30 ("what's my WLAN key?" 0.53 vs 0.35 for the Wi-Fi password), an ambiguous one by 0.01-0.10 ("my PIN?"
0.53 vs 0.43 for two PINs)."""
MIN_BEST = 0.3

_ASKS_FOR_SENSITIVE = re.compile(
    r"(?i)\b(passwords?|passcodes?|passphrases?|pins?|puk|secrets?|tokens?|credentials?|account number|"
    r"card number|iban|sensitive|(?:api|test|secret|private|access|ssh|stripe|license|licence|recovery|wlan|wi-?fi"
    r"|network|wpa|wallet) keys?|seed phrase|recovery phrase|mnemonic|"
    r"(?:recovery|backup|door|alarm|lock|locker|padlock|safe|access|security|unlock|gate|garage) codes?|"
    r"codes? (?:on|for|of|to) (?:my|the)|combination|"
    r"passw(?:ort|ord)\w*|kennwort|pin-?code|(?:haus)?türcode|(?:tor|garagen|zugangs|alarm|tresor)code|zugangsdaten"
    r"|mot de passe|code (?:secret|de la porte|d'accès|d'entrée|de l'alarme|du portail)|digicode|contraseñas?"
    r"|código (?:de (?:la puerta|acceso|la alarma)|da porta|de acesso)|senhas?|codice (?:pin|della porta|del cancello)"
    r"|wachtwoord|(?:toegangs|deur|alarm)code)\b"
    r"|пароль|пин-код|код\s+(?:от|домофона|двери)|密码|密碼|暗証番号|パスワード")

_KINDS: dict[str, tuple[str, frozenset[str]]] = {
    # group: (words that name it in a request or a memory, the find_secrets kinds that hold it)
    "password": (r"pass(?:word|phrase|wort|wd)s?|pw|pwd|kennwort|contraseñas?|mot de passe|senhas?|wachtwoord|"
                 r"пароль|密码|パスワード|logins?|credentials?",
                 frozenset({"password", "app_password", "url_password", "env_secret"})),
    "code": (r"pins?|puk|passcodes?|codes?|combination|digicode|códigos?|codice|код|暗証番号",
             frozenset({"pin"})),
    "key": (r"keys?|tokens?|api|schlüssel|clés?|claves?|chaves?|chiavi|chiave|sleutel|ключ|токен|密钥|鍵|wif|xprv",
            frozenset({"private_key", "token", "openai_key", "github_token", "gitlab_token", "slack_token",
                       "aws_access_key", "google_api_key", "stripe_key", "huggingface_token", "jwt",
                       "telegram_bot_token", "age_key", "otp_secret", "npm_token", "pypi_token", "sendgrid_key",
                       "digitalocean_token", "shopify_token", "crypto_private_key", "env_secret"})),
    "seed": (r"seed|seeds|mnemonic|recovery phrase|wallet", frozenset({"seed_phrase", "crypto_private_key"})),
    "account": (r"iban|account number|routing|sort code|bsb|kontonummer|card number|card|credit card",
                frozenset({"iban", "account_number", "card_number"})),
    "id": (r"ssn|passport|tax id|steuer-?id|national id", frozenset({"national_id"})),
}
_KIND_WORDS = {group: re.compile(rf"(?i)(?<!\w)(?:{words})(?!\w)") for group, (words, _) in _KINDS.items()}
_GENERIC = re.compile(r"(?i)\b(?:secrets?|sensitive|credentials?)\b")
_REQUEST_WORDS = frozenset(
    "password passwords passcode passphrase pin pins puk secret secrets token tokens credential credentials key keys "
    "code codes combination number account card sensitive tell give show remind remember send need forgot know "
    "please again wie lautet ist mein meine meiner meines der die das von vom für quel quelle est le la les mon ma mes"
    " de du des pour cuál cual es mi mis el la del para qual é o a meu minha do da para è il lo mio mia di del per"
    " wat welke mijn van voor какой какая какое мой моя мне меня у от".split())
"""Words of a request that name the kind of secret or the asking, or are function words of the languages the
detector reads (English stopwords are `twin.recall.hybrid`'s), not what the request is about."""


def asks_for_sensitive(text: str) -> bool:
    """True when the message asks for something sensitive by name (a password, PIN, key, account number…):
    only then are `sensitive` memories recalled into a reply (seed 003, DESIGN "Recall")."""
    return bool(_ASKS_FOR_SENSITIVE.search(text))


_ALSO = {"key": {"password"}}
"""Groups a request's group also accepts: a "WLAN key" or "network key" is the Wi-Fi password."""


def asked_kinds(text: str) -> set[str]:
    """The groups of `_KINDS` a request names ("password", "code", "key", …); empty for "my secrets" or any
    request that names no kind (then every kind answers)."""
    return {group for group, pattern in _KIND_WORDS.items() if pattern.search(text)}


def memory_kinds(content: str) -> set[str]:
    """The groups of the secrets a memory holds: from its detected values (`find_secrets` kinds), else from the
    words it uses ("Owner's PUK is …" imported as sensitive with an undetectable value)."""
    kinds = {s.kind for s in find_secrets(content)}
    groups = {group for group, (_, members) in _KINDS.items() if kinds & members}
    return groups or asked_kinds(content)


def _subject_terms(query: str) -> set[str]:
    """The query's content words (FTS form) other than kind words and request words, hyphens dropped."""
    terms = set(query_terms(query.replace("-", "")))
    for pattern in _KIND_WORDS.values():
        for match in pattern.finditer(query):
            terms -= set(query_terms(match.group()))
    return {t for t in terms if t not in _REQUEST_WORDS and len(t) > 1}


def _about(content: str, subject: set[str]) -> bool:
    """Whether `content` uses one of the `subject` words ("Wi-Fi" counts as "wifi", a plural "s" is ignored)."""
    words = set(query_terms(content)) | set(query_terms(content.replace("-", "")))
    return any(t in words or t.rstrip("s") in words or f"{t}s" in words for t in subject)


def only_what_was_asked(query: str, hits: list[Recalled]) -> list[Recalled]:
    """`hits` (best first) without the sensitive memories the request `query` did not ask for, order kept.

    A sensitive memory stays when (1) it holds a kind of secret the query names (`asked_kinds`; any kind when
    it names none, "my secrets") and, when the query has content words besides the kind and the asking
    ("wifi", "bank", "Netflix"), it uses one of them (plural "s" ignored); or (2) it is by far the best of the
    sensitive hits of the kind asked: vector similarity (keyword score when no hit has a vector) at least
    `MIN_BEST` and `BY_FAR` above the next one's. A query with no content words ("what's my password?") is
    answered only by (2).
    """
    sensitive = [h for h in hits if h.memory.sensitivity == "sensitive"]
    if not sensitive:
        return hits
    wanted = asked_kinds(query) if not _GENERIC.search(query) else set()
    wanted |= {also for group in wanted for also in _ALSO.get(group, ())}
    subject = _subject_terms(query)
    of_kind = [h for h in sensitive if not wanted or wanted & memory_kinds(h.memory.content)]
    keep = {h.memory.id for h in of_kind if subject and _about(h.memory.content, subject)}
    if of_kind:
        keep.add(_by_far_best(of_kind))
    return [h for h in hits if h.memory.sensitivity != "sensitive" or h.memory.id in keep]


def _by_far_best(sensitive: list[Recalled]) -> int | None:
    use_vector = any(h.vector > 0 for h in sensitive)
    ranked = sorted(sensitive, key=lambda h: h.vector if use_vector else h.keyword, reverse=True)
    best = ranked[0].vector if use_vector else ranked[0].keyword
    second = (ranked[1].vector if use_vector else ranked[1].keyword) if len(ranked) > 1 else 0.0
    return ranked[0].memory.id if best >= MIN_BEST and best - second >= BY_FAR else None
