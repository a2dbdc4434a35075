"""Pages never learned from the browser history, by the kind of site they are: banking, payments, health,
insurance, tax, login / account / password pages, webmail inboxes, adult. DESIGN.md invariant 8 (private by
default): such a visit is dropped where the history is read and again before interests are clustered, so it
never reaches the store, Redis or a model provider.

Three kinds of evidence, each in English, German, French, Spanish, Portuguese, Italian, Dutch, Russian, Chinese
and Japanese:
- the host: words anywhere in it ("sparkasse", "bank", "banque", "versicherung", "porn") or whole labels of it
  ("caixa", "ing", "elster", "impots", "login", "accounts", "pay");
- the path: a segment that names a private page (/login, /signin, /account, /statement, /virement, /transfer,
  /auth, /oauth, /sso, /checkout, /wallet, …), whatever ids or further segments follow;
- the title: phrases that only private pages carry ("Mes comptes", "Nouveau virement", "Kontoübersicht",
  "online banking", "patient portal", "Steuererklärung"); login, inbox and checkout words only when they are
  a title part's own name ("Sign in – Google Accounts", "Anmelden | Sparkasse", "Inbox (3)"); an e-mail
  address; and words that name a bank or an insurer ("bank", "banque", "Versicherung") only beside a second
  such word or an account word, so "River bank erosion" and "Food bank volunteers" stay ordinary reading.
What is blocked on ordinary titles is measured in tests/test_private_sites.py. Pure functions.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_HOST_WORDS: dict[str, str] = {
    "banking": r"bank|banque|sparkasse|volksbank|raiffeisen|postfinance|boursorama|creditagricole|credit-agricole"
               r"|creditmutuel|societegenerale|bnpparibas|caisse-epargne|caisse-d-epargne|comdirect|consorsbank"
               r"|santander|bbva|barclays|natwest|lloyds|hsbc|monzo|revolut|schwab|fidelity|vanguard|wellsfargo"
               r"|capitalone|millenniumbcp|novobanco|unicredit|intesasanpaolo|abnamro|rabobank|sberbank|tinkoff",
    "payments": r"paypal|venmo|klarna|payoneer|skrill|sumup|alipay|coinbase|binance|kraken\.com|bitpanda",
    "health": r"patient|mychart|doctolib|myhealth|healthcare|pharmacy|apotheke|pharmacie|farmacia|clinic|klinik"
              r"|hospital|krankenhaus|hopital|psychiatr|therapy|zahnarzt|dentist|telemed",
    "insurance": r"insurance|versicherung|assurance|assicurazion|verzekering|krankenkasse|seguros",
    "tax": r"elster\.de|impots\.gouv|agenciatributaria|portaldasfinancas|agenziaentrate|belastingdienst|turbotax",
    "adult": r"porn|xvideos|xnxx|xhamster|redtube|youporn|onlyfans|chaturbate|hentai",
}
_HOST_LABELS: dict[str, str] = {
    "banking": "ing dkb n26 lcl citi chase cgd caixa banca banco bankia ebanking netbank postbank",
    "health": "nhs ameli sante salud saude salute gezondheid",
    "insurance": "aok barmer dak axa allianz ergo huk generali mapfre geico",
    "tax": "irs hmrc tax taxes steuer nalog",
    "login": "login signin auth sso accounts account id secure myaccount",
    "payments": "pay wallet checkout",
    "adult": "xxx sex adult nsfw",
}
_PATH_SEGMENTS: dict[str, str] = {
    "login": "login log-in logon signin sign-in sign_in signon logout auth oauth oauth2 authorize authenticate sso"
             " saml 2fa mfa password passwords reset-password forgot-password anmelden connexion iniciar-sesion",
    "account": "account accounts myaccount my-account konto mein-konto compte mon-compte moncompte mi-cuenta"
               " minha-conta il-mio-account mijn-account",
    "banking": "banking onlinebanking statement statements kontoauszug kontoauszuege releve releves virement"
               " virements transfer ueberweisung überweisung transferencia bonifico overboeking",
    "payments": "checkout wallet payment payments billing pay",
    "health": "patient patients medical befunde",
}
_TITLE_STRONG: dict[str, str] = {
    "banking": "online banking|onlinebanking|online-banking|e-banking|internet banking|homebanking|mes comptes"
               "|nouveau virement|virement|releve de compte|releves de compte|banque en ligne|ma banque"
               "|espace client|kontoubersicht|kontostand|kontoumsatze|uberweisung|finanzstatus|kontoauszug|banca online"
               "|banca en linea|banca por internet|mis cuentas|movimientos de la cuenta|extracto bancario"
               "|conta corrente|extrato bancario|extrato da conta|transferencia bancaria|bonifico|conto corrente"
               "|estratto conto"
               "|mijn rekeningen|overboeking|rekeningoverzicht|интернет-банк|интернет банк|выписка по счету"
               "|网上银行|网银|转账|ネットバンキング|振込|account summary|account overview|bank statement"
               "|account statement|sparkasse|volksbank|raiffeisenbank|transfer money|send money|geld senden"
               "|envoyer de l'argent|enviar dinero|enviar dinheiro",
    "payments": "payment details|zahlungsdetails|zur kasse|paiement securise|pago seguro|secure checkout",
    "health": "patient portal|my health|medical record|medical records|lab results|befund|befunde"
              "|arzttermin|resultats d'analyses|mon ordonnance|ordonnance medicale|historia clinica|cita medica"
              "|prontuario"
              "|cartella clinica|referto|patientenportal|patientportaal|медицинская карта|病历|診察券",
    "insurance": "insurance claim|my policy|versicherungsschein|schadenmeldung|police d'assurance|mon assurance"
                 "|mi seguro|meu seguro|la mia polizza|mijn verzekering|страховой полис|保险单|保険証券",
    "tax": "tax return|steuererklarung|mein elster|online-finanzamt|declaration de revenus|impots.gouv"
           "|declaracion de la renta"
           "|dichiarazione dei redditi|belastingaangifte|налоговая декларация|个人所得税|確定申告",
    "login": "forgot password|reset password|password reset|passwort vergessen|passwort zurucksetzen"
             "|mot de passe oublie|olvidaste tu contrasena|esqueceu a senha|password dimenticata"
             "|wachtwoord vergeten|two-factor authentication|verification code|bestatigungscode",
    "adult": "porn|nsfw|onlyfans|hentai|sex cam|live cams",
}
_TITLE_PARTS: dict[str, str] = {  # a title part of its own (see `_names_the_page`)
    "login": "sign in|sign-in|signin|log in|log-in|login|log on|anmelden|anmeldung|einloggen|login-bereich"
             "|se connecter|connexion|identification|iniciar sesion|acceder|entrar|accedi|inloggen|aanmelden"
             "|войти|вход|登录|登入|ログイン|サインイン|my account|mein konto|mon compte|mi cuenta|minha conta"
             "|il mio account|mijn account|account settings|личный кабинет",
    "webmail": "inbox|posteingang|boite de reception|bandeja de entrada|caixa de entrada|posta in arrivo"
               "|postvak in|входящие|收件箱|受信トレイ",
    "payments": "checkout|kasse|caisse|pago|pagamento|paiement|zahlung|wallet|portefeuille|cartera|carteira",
    "banking": "statement|statements|transfer|transfers|kontoauszug|kontoauszuge|releve|releves|virements",
}
_TITLE_WEAK: dict[str, str] = {  # private only beside a second weak word or a part word
    "banking": "bank|banque|banca|banco|caixa|kasse|konto|compte|cuenta|conta|rekening|account|accounts|login",
    "insurance": "versicherung|assurance|seguro|seguros|assicurazione|verzekering|insurance|krankenkasse",
}
_LEAD_INS = ("to", "with", "at", "into", "in", "on", "zu", "bei", "a", "au", "aux", "en", "na", "em", "no", "su",
             "bij", "op", "в", "на")
"""Words after a login phrase in a page's own name: "Sign in to GitHub", "Anmelden bei", "Se connecter à"."""
MAX_NAME_WORDS = 3
"""At most this many words in a title part that ends with a login phrase ("Spotify Login", "Netflix-Login")."""


def _fold(text: str) -> str:
    """Lower-case, accents dropped (NFKD), whitespace collapsed: "Relevés" and "releves" read the same."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


_TOKEN = re.compile(r"[^\W_]+")


def _cjk(phrase: str) -> bool:
    """Whether `phrase` is written in a script without spaces (CJK, kana): it is then found as a substring."""
    return "\u3040" <= phrase[0] <= "\u9fff"


def _phrases(table: dict[str, str]) -> tuple[dict[tuple[str, ...], str], dict[str, str]]:
    """`({word tuple: kind}, {CJK phrase: kind})` of a table of `|`-separated phrases, folded: titles are
    compared word by word (n-grams in a dict: a few lookups a word, whatever the size of the lists)."""
    words, cjk = {}, {}
    for kind, phrases in table.items():
        for phrase in _fold(phrases).split("|"):
            if _cjk(phrase):
                cjk[phrase] = kind
            else:
                words[tuple(_TOKEN.findall(phrase))] = kind
    return words, cjk


_HOST_WORD = re.compile("|".join(rf"(?P<{k}>{v})" for k, v in _HOST_WORDS.items()))
_HOST_LABEL = {label: kind for kind, labels in _HOST_LABELS.items() for label in labels.split()}
_STRONG, _STRONG_CJK = _phrases(_TITLE_STRONG)
_PART, _PART_CJK = _phrases(_TITLE_PARTS)
_WEAK = {words[0]: kind for words, kind in _phrases(_TITLE_WEAK)[0].items()}
_LONGEST = max(len(words) for words in (*_STRONG, *_PART))
_TITLE_SEPARATORS = re.compile(r"\s+[|–—·•:»/-]\s+|\s*[|–—·•»]\s*|:\s+")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")


def _ngram_kind(words: list[str], table: dict[tuple[str, ...], str]) -> str | None:
    """The kind of the first run of `words` that is a phrase of `table`, or None."""
    for i in range(len(words)):
        for n in range(1, min(_LONGEST, len(words) - i) + 1):
            kind = table.get(tuple(words[i:i + n]))
            if kind:
                return kind
    return None


@functools.lru_cache(maxsize=16_384)
def private_host(host: str) -> str | None:
    """The kind of private site `host` (lower case) belongs to, or None. Remembered: a history has few hosts."""
    match = _HOST_WORD.search(host)
    if match:
        return match.lastgroup
    for label in re.split(r"[.-]", host)[:-1]:  # the top-level domain is no label of the site
        if label in _HOST_LABEL:
            return _HOST_LABEL[label]
    return None


_SEGMENT_WORD = re.compile(
    "/(?:" + "|".join(rf"(?P<{kind}>{'|'.join(map(re.escape, words.split()))})"
                      for kind, words in _PATH_SEGMENTS.items())
    + r")(?:[-_](?:form|page|help|oidc|callback|redirect|success|failed|required|options))?(?:\.\w{1,5})?(?=/|$)")
"""A segment is its word, maybe with a page suffix or a file extension: /login.php, /signin-oidc, /login_form."""


def private_path(path: str) -> str | None:
    """The kind of private page a URL path is, by its segments (`_PATH_SEGMENTS`, see `_SEGMENT_WORD`; case
    ignored), whatever ids or segments follow; an article slug ("/login-walls/") is no such segment."""
    match = _SEGMENT_WORD.search(path.lower())
    return match.lastgroup if match else None


@functools.lru_cache(maxsize=65_536)
def private_title(title: str) -> str | None:
    """The kind of private page a title shows (see the module docstring), or None. Remembered, since a history
    revisits the same pages."""
    if _EMAIL.search(title):
        return "webmail"
    folded = _fold(title)
    words = _TOKEN.findall(folded)
    kind = _ngram_kind(words, _STRONG) or next((k for p, k in _STRONG_CJK.items() if p in folded), None)
    if kind:
        return kind
    for part in _TITLE_SEPARATORS.split(folded):
        if kind := _names_the_page(part):
            return kind
    weak = {w for w in words if w in _WEAK}
    return _WEAK[min(weak)] if len(weak) >= 2 else None


def _names_the_page(part: str) -> str | None:
    """The kind of a title part that is a login, inbox or checkout page's own name: the phrase alone ("Sign in",
    "Posteingang", "Inbox (3)": numbers do not count), the phrase and a lead-in word ("Sign in to GitHub",
    "Anmelden bei …"), or a part of at most `MAX_NAME_WORDS` words ending with a login phrase ("Spotify
    Login"); not "Inbox zero" or "Login walls stop users"."""
    words = [w for w in _TOKEN.findall(part) if not w.isdigit()]
    joined = "".join(words)
    if joined and _cjk(joined):
        return next((k for p, k in _PART_CJK.items() if joined == p or joined.endswith(p)), None)
    for n in range(min(_LONGEST, len(words)), 0, -1):
        kind = _PART.get(tuple(words[:n]))
        if kind and (n == len(words) or (kind == "login" and words[n] in _LEAD_INS)):
            return kind
        tail = _PART.get(tuple(words[-n:]))
        if tail == "login" and n < len(words) <= MAX_NAME_WORDS:
            return tail
    return None


def private_site(host: str, path: str, title: str) -> str | None:
    """The kind of private site a visit is ("banking", "payments", "health", "insurance", "tax", "login",
    "account", "webmail", "adult"), judged by its host, path and title, or None for an ordinary page."""
    return private_host(host.lower()) or private_path(path) or (private_title(title) if title else None)
