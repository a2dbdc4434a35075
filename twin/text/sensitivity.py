"""Sensitivity levels, secret detection and redaction for memories.

Seed 003 (NovaMem) gives the four levels and the rule implemented here: when a memory's sensitivity is not
given, infer ``sensitive`` for obvious token / secret / password / API-key content, otherwise default to
``private``. DESIGN.md hides ``sensitive`` memories from recall unless asked for, and invariant 8 (private by
default) is why :func:`redact` runs before any text goes to a remote model provider.

A secret is a *value*, never a word: "Owner forgot the Wi-Fi password" names a password but holds none, so it
stays ``private``. Each rule is one row of ``_RULES``: a compiled regex whose group ``value`` is the secret,
plus an optional check of that value (Luhn, mod-97, entropy, shape) and the 64 characters before it. Rules
are either self-identifying shapes (``ghp_…``, ``AKIA…``, PEM blocks, Luhn-valid card numbers, mod-97-valid
IBANs) or a keyword ("PIN", "Passwort", "sort code", "seed phrase", ...) followed — directly, after ":"/"=",
or after up to six words and a verb like "is"/"ist"/"est"/"set to" — by a value of the right shape; a few
rules read the other way ("Hunter2 is my password"), start at a setting verb ("changed my password to …") or take a
variable's name as the keyword ("DB_PASSWORD=…").
The labels (keywords in several languages) live in `twin.text.secret_labels`; formats recognised by their own
structure and checksum (BIP-39 seed phrases, WIF and BIP-32 private keys) in `twin.text.secret_shapes`. Pure
functions; every repeat is bounded, so scanning is linear in the text length.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import chain
from typing import NamedTuple

from twin.memory import DEFAULT_SENSITIVITY, SENSITIVE, SENSITIVITIES, stricter  # noqa: F401 - used from here too
from twin.text.secret_fields import field_secrets
from twin.text.secret_labels import ACCOUNT as _ACCOUNT
from twin.text.secret_labels import CODE as _CODE
from twin.text.secret_labels import LOCKER as _LOCKER
from twin.text.secret_labels import LOGIN as _LOGIN
from twin.text.secret_labels import LOGIN_WORDS as _LOGIN_WORDS
from twin.text.secret_labels import NATIONAL_ID as _NATIONAL_ID
from twin.text.secret_labels import NOT_A_VALUE as _NOT_A_VALUE
from twin.text.secret_labels import NOT_PIN_CODE as _NOT_PIN_CODE
from twin.text.secret_labels import PASSWORD as _PASSWORD
from twin.text.secret_labels import PASSWORD_ABBR as _PASSWORD_ABBR
from twin.text.secret_labels import PIN as _PIN
from twin.text.secret_labels import PLACE as _PLACE
from twin.text.secret_labels import SEED as _SEED
from twin.text.secret_labels import SETTING as _SETTING
from twin.text.secret_labels import TOKEN as _TOKEN
from twin.text.secret_labels import TOTP_LABEL as _TOTP_LABEL
from twin.text.secret_labels import VERB as _VERB
from twin.text.secret_labels import E as _E
from twin.text.secret_labels import keyword as _keyword
from twin.text.secret_phrases import phrase_secrets

REDACTED = "[redacted]"
"""What :func:`redact` puts in place of each secret value."""

# --- building blocks -------------------------------------------------------------------------------------------
# A word between keyword and verb: not a clause boundary, not ending a sentence ("stored. Room is 12" is not one),
# on the keyword's line ("Locker code 0417" and "Bike lock code: 2208" on the next line are two codes).
_FILLER = r"(?!(?i:and|but|or|und|oder|aber|y|pero|et|mais|ou|e|which|while)\s)[^\s,;!?。，；]{0,40}[^\s,;:!?.。，；]"
_SEP = (rf"(?:(?:[ \t]+{_FILLER}){{0,6}}?(?:\s*[:=：—–]\s*|\s*(?:是|为|為|は)\s*|\s+{_VERB}(?:\s*:\s*|\s+))"
        r"|[ \t]+)")  # a bare space stays on the label's line: a table's "password" header is no label of the next row
_LABEL_SEP = rf"(?:[ \t]+{_FILLER}){{0,6}}?(?:\s*[:=：—–]\s*|\s+{_VERB}(?:\s*:\s*|\s+))"  # _SEP without a bare space
# "the code to my locker, it's 0417": the value restated after a comma ("it's", "that is", "c'est", "das ist")
_RESTATED = (rf"(?:[ \t]+{_FILLER}){{0,6}}?,?\s+(?i:it['’]s|it\s+is|that['’]s|that\s+is|which\s+is|c['’]est"
             r"|das\s+ist|es\s+ist|er\s+lautet|sie\s+lautet|es)\s+")
# "my pin is 4 digits: 5 9 1 3", "PIN (vier Ziffern): …": how many digits, then the code
_DIGIT_COUNT = (r"(?:\(?\s*(?i:\d{1,2}|three|four|five|six|seven|eight|drei|vier|fünf|sechs|acht|trois|quatre|cinq"
                r"|tres|cuatro|cinco|seis|quattro|sei|vijf|zes)[\s-]+(?i:digits?|numbers?|ziffern|stellen|stellig"
                r"|chiffres|dígitos|cifre|cijfers)\s*\)?\s*[:：,—–-]?\s*)?")
_PIN_SEP = rf"(?:{_SEP}|{_RESTATED}){_DIGIT_COUNT}"
_CODE_SEP = rf"(?:{_LABEL_SEP}|{_RESTATED}){_DIGIT_COUNT}"
# one token, no end dot; a "!" or "?" just before a "." or "," is the token's own ("Sommer2024!.")
_WORD = r"[^\s\"'“”‘’«»<>()\[\]{},;。、，；：]{0,99}[^\s\"'“”‘’«»<>()\[\]{},;。、，；：.!?:](?:[!?]{1,3}(?=[.,;]))?"
_QUOTED = r"[\"“‘«„'](?P<quoted>[^\"”’»'\n]{1,100})[\"”’»“']"


_CARD = (r"(?<![\w+.-])(?P<value>[2-6]\d{12,18}|[2-6]\d{3}(?P<s>[ -])\d{4}(?P=s)\d{4}(?P=s)\d{1,7}"
         r"|3\d{3}(?P<t>[ -])\d{6}(?P=t)\d{4,5})(?![\w-]|[.,]\d)")
_IBAN = r"(?<![A-Za-z0-9])(?P<value>[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)(?![A-Za-z0-9])"
_PRIVATE_KEY = (r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
                r"(?P<value>(?:[A-Za-z0-9+/=\s:,.\\]|-(?!----)){0,200000})")  # "\\": a JSON string's "\n"
_PUTTY_KEY = r"Private-Lines:\s*\d{1,4}\s+(?P<value>[A-Za-z0-9+/=\s]{16,20000}?)(?=\s*Private-MAC:|\s*$)"
_OTPAUTH = r"otpauth://(?:totp|hotp)/[^\s?]{0,256}\?(?:[^\s#]{0,512}?&)??secret=(?P<value>[A-Za-z2-7]{16,128}=*)"


# --- checks on a candidate value; ``before`` is the text just before it --------------------------------------
def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


_NOT_CARD_CONTEXT = re.compile(
    r"(?i)\b(?:imei|isbn|ean|gtin|order|tracking|invoice|serial|ref|reference|phone|tel|mobile|fax|customer|membership)\b")
_DAY, _MONTH = r"(?:0?[1-9]|[12]\d|3[01])", r"(?:0?[1-9]|1[0-2])"
_DATE = re.compile(rf"\d{{4}}-{_MONTH}-{_DAY}|{_DAY}[./-]{_MONTH}[./-]\d{{2,4}}|{_MONTH}[./-]{_DAY}[./-]\d{{2,4}}")
_WIFI_SECURITY = re.compile(r"(?i)(?:wpa[23]?|wep)(?:-\w+)?")  # "the Wi-Fi password is WPA2-protected"
_SEED_STOPWORDS = frozenset("the and was are with from that this into which written kept paper".split())
_ASSIGNED = re.compile(r"=\s*$")  # "pass=toor": a config-style assignment, the value is what was set
_USER_LABEL = re.compile(  # "user: root pass: toor": a labelled user name, then the password's label
    r"(?i)\b(?:user(?:name)?|login|benutzer(?:name)?|usuario|utilisateur)\s*[:=]\s*\S+\s*[,;/|]?\s*\S+\s*[:：]\s*$")
_PATH = re.compile(r"~?(?:/[\w.-]+){2,}/?")  # "pwd is /home/owner/code": a directory, not a password
_ANNOUNCED = re.compile(rf"(?:[:=：]|\s{_VERB})\s*$")  # the value follows ":", "=" or a verb, not a bare space
# "I switched my password to 1Password / LastPass": a password manager's name is shaped like a password
_PASSWORD_MANAGER = re.compile(r"(?i)1password|lastpass|keepass(?:xc|dx)?|nordpass|protonpass|roboform|dashlane")
_PASSPHRASE = re.compile(r"[a-z]{12,}")  # "correcthorsebattery": one long lowercase word
# English adverb/adjective/participle/noun endings: "the password is automatically generated / unrecoverable /
# confidential / straightforward" describe a password, they are not one
_DESCRIPTIVE = re.compile(r"(?:ly|able|ible|ed|ing|ive|ous|ful|less|tion|sion|ness|ment|ity|ial|ic|ary|ory|ward"
                          r"|ient|ent|ant)$")


def _card(value: str, before: str) -> bool:
    digits = value.replace(" ", "").replace("-", "")
    return 13 <= len(digits) <= 19 and _luhn(digits) and not _NOT_CARD_CONTEXT.search(before[-24:])


def _iban(value: str, before: str) -> bool:
    compact = value.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    rotated = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rotated)) % 97 == 1


def _entropy_bits(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _high_entropy(value: str, before: str = "") -> bool:
    """A random-looking token: >= 16 chars, a digit, mixed case or >= 20 chars, >= 3 bits/char."""
    has_digit = any(c.isdigit() for c in value)
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return len(value) >= 16 and has_digit and (mixed or len(value) >= 20) and _entropy_bits(value) >= 3.0


def _password(value: str, before: str) -> bool:
    """A password-shaped word: >= 4 chars with a digit, a symbol or an inner capital ("hunter2", "Weser-Lachs");
    or any word of >= 4 chars (not "true"/"none"/...) when it is assigned ("pass=toor") or follows a labelled
    user name ("user: root pass: toor"); or a passphrase of 12+ lowercase ASCII letters after ":", "=" or a verb
    ("the wifi password is correcthorsebattery") that does not end like an English adverb or adjective ("-ly",
    "-able", "-ed", "-tion", ...: "the password is automatically generated"). Not a date, "WPA2", a directory
    path ("pwd is /home/owner") or a password manager ("I switched my password to 1Password")."""
    if len(value) < 4 or _DATE.fullmatch(value) or _WIFI_SECURITY.fullmatch(value) or _PATH.fullmatch(value) or (
            _PASSWORD_MANAGER.fullmatch(value)):
        return False
    if value.lower() not in _NOT_A_VALUE and (_ASSIGNED.search(before) or _USER_LABEL.search(before)):
        return True
    if _PASSPHRASE.fullmatch(value) and not _DESCRIPTIVE.search(value) and _ANNOUNCED.search(before):
        return True
    return any(c.isdigit() or not c.isalnum() for c in value) or any(c.isupper() for c in value[1:])


def _digits_between(low: int, high: int, max_letters: int) -> Callable[[str, str], bool]:
    def check(value: str, before: str) -> bool:
        digits = sum(c.isdigit() for c in value)
        letters = sum(c.isalpha() for c in value)
        return low <= digits <= high and (letters <= max_letters or "-" in value) and not _DATE.fullmatch(value)

    return check


_RECOVERY_LABEL = re.compile(r"(?i)\b(?:recovery|backup)\s+codes?\b")
# "The locker combination at the gym is 4-17-33": a combination or lock keyword at most seven words before the value
_DIAL_LABEL = re.compile(r"(?i)(?:\b(?:combination|padlock|lock|cadenas)|schloss)\b\W*(?:\w+\W+){0,7}$")
_DIAL = re.compile(r"\d{1,3}(?:-\d{1,3}){1,7}")  # dash-grouped, no 4-digit year: "4-17-33", not "12-05-2026"
_KEYPAD = re.compile(r"\d{2}[#*]")  # "The door code is 12#": two digits and the keypad's enter key


def _codes(value: str, before: str) -> bool:
    """One PIN-shaped code, or a list of them ("backup codes: 4f8a-91bc 22de-77aa"): the first must have 3-48
    digits and at most 2 letters unless dash-grouped, and not be a date; the regex makes later ones hold a digit.
    Also: the digit groups of a dial ("the safe combination is 12 34 56": 2+ groups of 1-3 digits, 3+ digits in
    all), dash-grouped even when it reads like a date if a combination/lock keyword comes shortly before ("The
    locker combination at the gym is 4-17-33"; "12-05-2026", with its 4-digit year, stays a date); two digits
    and "#"/"*" ("door code is 12#", a keypad entry); and after "recovery/backup code(s)" codes of 6+ characters
    that each mix letters and digits ("Recovery codes for Proton: 1a2b3c4d 5e6f7g8h")."""
    codes = re.split(r"[,\s]+", value)
    if _digits_between(3, 48, 2)(codes[0], before) or _KEYPAD.fullmatch(value):
        return True
    if _DIAL.fullmatch(value) and _DIAL_LABEL.search(before):
        return sum(c.isdigit() for c in value) >= 3
    if len(codes) > 1 and all(code.isdigit() and len(code) <= 3 for code in codes):
        return sum(map(len, codes)) >= 3
    return _RECOVERY_LABEL.search(before) is not None and all(
        len(code) >= 6 and any(c.isdigit() for c in code) and any(c.isalpha() for c in code) for code in codes)


def _pin_number(value: str, before: str) -> bool:
    """A 4-8 digit number, or keypad digits with dashes ("1-2-3-4", "4-7-1-1#"), after a bare "code" ("codice",
    "código", "код") that is not an area/zip/error/booking/... code (``_NOT_PIN_CODE``), not a year 1900-2099
    ("the code for the race was 2026"; "door code is 1984" is the ``_PIN`` rule's) and not a date."""
    digits = value.strip("#*")
    if "-" in digits:
        return not _DATE.fullmatch(digits) and not _NOT_PIN_CODE.search(before)
    return not (len(digits) == 4 and 1900 <= int(digits) <= 2099) and not _NOT_PIN_CODE.search(before)


def _keypad_code(value: str, before: str) -> bool:
    """A code after a door or gate named with ":" ("Garage: 4-7-1-1#"): 3+ digits, not a date."""
    return sum(c.isdigit() for c in value) >= 3 and not _DATE.fullmatch(value.strip("#*"))


def _env_value(value: str, before: str) -> bool:
    """The value of a secret-named variable ("DB_PASSWORD=…"): 4+ characters, not a reference or placeholder
    ("$GITHUB_TOKEN", "${X}", "%X%", "<token>", "xxxx"), not "true"/"none"/..., not a path."""
    return (len(value) >= 4 and value[0] not in "$%<{" and len(set(value)) > 1
            and value.lower() not in _NOT_A_VALUE and not _PATH.fullmatch(value))


def _seed_words(value: str, before: str) -> bool:
    return not _SEED_STOPWORDS.intersection(re.split(r"[ ,]+", value))


def _nonempty_body(value: str, before: str) -> bool:
    return len(re.sub(r"\s", "", value)) >= 16


def _prefixed(prefix: str, rest: str) -> re.Pattern[str]:
    """A token that starts with the literal ``prefix`` and is not glued to a word before it.

    Starting the regex with the literal lets the engine jump between occurrences: ~30x faster than a leading
    look-behind."""
    literal = re.escape(prefix)
    return re.compile(rf"(?P<value>{literal}(?<![A-Za-z0-9_]{literal}){rest}){_E}")


def _keyword_rule(keyword: str, value: str, sep: str = _SEP) -> re.Pattern[str]:
    return re.compile(rf"{keyword}{sep}(?:{_QUOTED}|(?P<value>{value}))")


# "AWS_SECRET_ACCESS_KEY=…", "export GITHUB_TOKEN='…'": a variable named like a secret, assigned with "="; the
# name ends in the secret word ("TOKEN_LIMIT=4000" and "MAX_TOKENS=4096" are settings), a bare "TOKEN=" is _TOKEN's
_ENV_ASSIGNMENT = re.compile(
    r"(?<![\w$])(?i:(?:[a-z0-9]{1,64}_){0,8}(?:api_key|access_key|private_key|secret_key|(?<=_)(?:secret|token|password"
    r"|passwd))(?:_base)?)\s*=\s*[\"']?(?P<value>[^\s\"'`]{3,511}(?<![.,;]))")
# "login for netflix: lena@example.com / Tr0ub4dor&3": a login label, a user name or e-mail address, "/", the password
_LOGIN_PAIR = re.compile(
    rf"{_LOGIN}{_LABEL_SEP}(?:[\w.+-]{{1,64}}@[\w-]{{1,63}}(?:\.[\w-]{{1,63}}){{1,4}}|[A-Za-z][\w.+-]{{0,63}})"
    rf"\s*/\s*(?P<value>{_WORD})")
# "I changed my laptop password to Kiwi!Mango42": a setting verb, then in the same clause the password word and "to";
# without the verb "to" names what the password is for ("my password to Office365 is hunter2x")
_SET_PASSWORD_TO = re.compile(
    rf"{_SETTING}(?:\s+{_FILLER}){{0,5}}?\s+{_PASSWORD}\s+(?i:to)\s+(?:{_QUOTED}|(?P<value>{_WORD}))")
# "user max.mueller, pass Sommer2024!": a labelled user name, then "pass"/"pw"/"pwd" and the password after a space
_USER_THEN_PASS = re.compile(
    rf"{_keyword(r'user(?:name)?|benutzer(?:name)?')}\s*[:=]?\s*"
    rf"(?:[\w.+-]{{1,64}}@[\w-]{{1,63}}(?:\.[\w-]{{1,63}}){{1,4}}|[A-Za-z][\w.+-]{{0,63}})\s*[,;/|]?\s+"
    rf"{_PASSWORD_ABBR}\s+(?P<value>{_WORD})")
# "Hunter2 is my password": the value first; the password word ends the clause or a preposition follows, so
# "This is my password manager" is no finding (and "Netflix" is no password-shaped word anyway)
_VALUE_IS_PASSWORD = re.compile(
    r"(?<![^\s\"'“‘«(\[])(?P<value>[^\s\"'“”‘’«»<>()\[\]{},;]{4,100}+)[\"'”’»]?\s+(?i:is|was)\s+"
    r"(?i:my|our|the|owner['’]s|his|her|their)\s+(?:[\w-]{1,30}\s+){0,2}?(?i:pass(?:word|phrase|code))"
    r"(?=\s*(?:[.,;:!?)]|$)|\s+(?i:for|on|at|in|to|of|since|now|too|again)\b)")


# Google's app passwords: 16 random letters shown as four groups ("abcd efgh ijkl mnop"); Apple's with dashes
_APP_GROUPS = (r"(?P<app>[a-z]{4}(?P<g>[ -])[a-z]{4}(?P=g)[a-z]{4}(?P=g)[a-z]{4}"
               r"|[A-Z]{4}(?P<h>[ -])[A-Z]{4}(?P=h)[A-Z]{4}(?P=h)[A-Z]{4})(?![\w-])")
_COMMON_FOUR = frozenset(
    "very much like this that will make sure from your home page what when have been they them some more time only"
    " just over also back even want give most well work year come take into good each many last long know here life"
    " same then than were with told said does done none word such must should need were sehr kurz aber auch noch"
    " sind wird sich alle eine nach dann oder weil dans sont avec pour elle nous cela mais tout rien bien plus como"
    " para pero esta isso mais essa sono anche come voor niet maar deze ook door zijn".split())
"""Common four-letter words of English, German, French, Spanish, Portuguese, Italian and Dutch that the BIP-39
lists leave out: "the password is very much like this" is prose, not an app password."""
_VOWELS = re.compile(r"[aeiouy]", re.IGNORECASE)
_CONSONANTS3 = re.compile(r"[^aeiouy]{3}", re.IGNORECASE)


def _app_password(value: str, before: str) -> bool:
    """Four letter groups that are not four words: dash-separated (Apple's form), or with a group that has no
    vowel or three consonants in a row, or with no group a common word (a BIP-39 list word or `_COMMON_FOUR`).
    Measured on random groups: 99.9 % pass; "very much like this" does not."""
    groups = re.split(r"[ -]", value)
    if "-" in value or any(not _VOWELS.search(g) or _CONSONANTS3.search(g) for g in groups):
        return True
    from twin.text.secret_shapes import is_list_word

    return not any(g.lower() in _COMMON_FOUR or is_list_word(g) for g in groups)


# "the code for the door is 1-2-3-4", "4-7-1-1#": single digits with dashes, or dash groups ending in the keypad key
_DASHED_CODE = r"\d(?:-\d){2,11}[#*]?|\d{1,4}(?:-\d{1,4}){1,5}[#*]"
# "Garage: 4-7-1-1#", "Haustür: 2580#": a door or gate named, ":" and a code a keypad takes (dashes or "#"/"*")
_KEYPAD_CODE = r"(?:[#*]?\d(?:-\d{1,3}){2,7}[#*]?|\d{3,8}[#*]|[#*]\d{3,8})(?![\w-])"
_PAIR_USER = re.compile(  # an e-mail address and "/", or a user name and " / " (spaces: "src/main.rs" is a path)
    r"(?:^|[\s(:：,])(?:(?P<email>[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4})[ \t]*/[ \t]*"
    r"|(?P<name>[A-Za-z][\w.+-]{1,63})[ \t]+/[ \t]+)$")


def _login_pair(value: str, before: str) -> bool:
    """The password half of "user / password" without a label right before it: after an e-mail address, a
    password-shaped word with a digit and an upper-case letter or a symbol ("lena@example.com / Tr0ub4dor&3");
    after a user name, a password-shaped word when a login word ("login", "account", "Zugang", "identifiant",
    "usuario", "логин", "账号", …) comes earlier in the 64 characters before ("login is jdoe / Tr0ub4dor&3").
    Not a path, a date, a fraction or a version ("TCP / IP", "3 / 4", "GPT-4o / Claude-3.5" has no login word)."""
    pair = _PAIR_USER.search(before)
    if pair is None or not _password(value, before) or _VERSION.fullmatch(value):
        return False
    if pair.group("email"):
        return any(c.isdigit() for c in value) and (any(c.isupper() for c in value) or not value.isalnum())
    return _LOGIN_WORDS.search(before[:pair.start("name")]) is not None


_VERSION = re.compile(r"(?i)v?\d+(?:\.\d+)+[\w.-]*|[a-z]+[-_]?\d+(?:\.\d+)+")
_BASE32_GROUPS = r"[A-Za-z2-7]{4}(?: [A-Za-z2-7]{4}){3,12}(?![\w-])|[A-Z2-7]{16,64}(?![\w-])"


def _base32_secret(value: str, before: str) -> bool:
    """A TOTP seed: base32 (A-Z, 2-7), 16+ characters without spaces, with at least one digit 2-7."""
    return len(value.replace(" ", "")) >= 16 and any(c in "234567" for c in value)


_ONE_CODE = r"[A-Za-z0-9]{1,12}(?:-[A-Za-z0-9]{1,8}){0,8}"
_CODES = rf"[#*]?{_ONE_CODE}[#*]?(?:(?:,[ \t]*|[ \t]+)(?=[A-Za-z-]*\d){_ONE_CODE}(?![A-Za-z0-9])){{0,15}}"


_Check = Callable[[str, str], bool]
_RULES: tuple[tuple[str, re.Pattern[str], _Check | None], ...] = (
    # self-identifying shapes
    ("private_key", re.compile(_PRIVATE_KEY), _nonempty_body),
    ("private_key", re.compile(_PUTTY_KEY), _nonempty_body),
    ("age_key", _prefixed("AGE-SECRET-KEY-1", r"[0-9A-Z]{58}"), None),
    ("otp_secret", re.compile(_OTPAUTH), None),
    ("npm_token", _prefixed("npm_", r"[A-Za-z0-9]{36}"), None),
    ("pypi_token", _prefixed("pypi-", r"AgE[A-Za-z0-9_-]{50,}"), None),
    ("sendgrid_key", _prefixed("SG.", r"[\w-]{22}\.[\w-]{43}"), None),
    ("digitalocean_token", _prefixed("dop_v1_", r"[a-f0-9]{64}"), None),
    ("shopify_token", _prefixed("shp", r"(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"), None),
    ("openai_key", _prefixed("sk-", r"[A-Za-z0-9_-]{20,256}"), _high_entropy),
    ("github_token", _prefixed("gh", r"[pousr]_[A-Za-z0-9]{20,255}"), None),
    ("github_token", _prefixed("github_pat_", r"\w{20,255}"), None),
    ("gitlab_token", _prefixed("glpat-", r"[A-Za-z0-9_-]{20,64}"), None),
    ("slack_token", _prefixed("xox", r"[bpars]-[A-Za-z0-9-]{10,255}"), None),
    ("aws_access_key", _prefixed("A", r"(?:KIA|SIA)[A-Z0-9]{12,20}"), None),
    ("google_api_key", _prefixed("AIza", r"[A-Za-z0-9_-]{30,40}"), None),
    ("stripe_key", _prefixed("sk_", r"(?:live|test)_[A-Za-z0-9]{10,255}"), None),
    ("stripe_key", _prefixed("rk_", r"(?:live|test)_[A-Za-z0-9]{10,255}"), None),
    ("stripe_key", _prefixed("whsec_", r"\w{20,255}"), None),
    ("huggingface_token", _prefixed("hf_", r"[A-Za-z0-9]{30,64}"), None),
    ("jwt", _prefixed("eyJ", r"[\w-]{5,4096}\.[\w-]{2,4096}\.[\w-]{2,4096}"), None),
    # the bot id before the colon is public (it is the bot's user id); the 35 characters after it are the secret
    ("telegram_bot_token", re.compile(rf":(?<=\d{{8}}:)(?P<value>[\w-]{{35}}){_E}"), None),
    ("url_password", re.compile(r"://(?<=(?i:[a-z0-9+.-]{2}://))[^\s/:@]{1,64}:(?P<value>[^\s/@]{1,128})@"), None),
    ("card_number", re.compile(_CARD), _card),
    ("iban", re.compile(_IBAN), _iban),
    # a keyword and a value of the right shape next to it
    ("password", _keyword_rule(_PASSWORD, _WORD), _password),
    ("password", _keyword_rule(_PASSWORD_ABBR, _WORD, _LABEL_SEP), _password),
    ("password", _LOGIN_PAIR, _password),
    ("password", _VALUE_IS_PASSWORD, _password),
    ("password", _SET_PASSWORD_TO, _password),
    ("password", _USER_THEN_PASS, _password),
    ("password", re.compile(r"/[ \t]*(?P<value>" + _WORD + ")"), _login_pair),
    ("app_password", _keyword_rule(_PASSWORD, _APP_GROUPS), _app_password),
    ("app_password", _keyword_rule(_PASSWORD_ABBR, _APP_GROUPS, _LABEL_SEP), _app_password),
    ("otp_secret", _keyword_rule(_TOTP_LABEL, _BASE32_GROUPS), _base32_secret),
    ("env_secret", _ENV_ASSIGNMENT, _env_value),
    ("pin", _keyword_rule(_PIN, _CODES, _PIN_SEP), _codes),
    ("pin", _keyword_rule(_CODE, rf"[#*]?\d{{4,8}}[#*]?(?![\w-]|[.,/:]\d)|(?:{_DASHED_CODE})(?![\w-])", _CODE_SEP),
     _pin_number),
    ("pin", _keyword_rule(_PLACE, _KEYPAD_CODE, r"\s*[:=：]\s*"), _keypad_code),
    ("pin", _keyword_rule(_LOCKER, rf"{_KEYPAD_CODE}|\d{{3,8}}(?![\w-]|[.,/:]\d)", r"[ \t]*[:=：][ \t]*"), _keypad_code),
    ("account_number", _keyword_rule(_ACCOUNT, r"\d{1,17}(?:[ -]\d{1,17}){0,5}"), _digits_between(6, 34, 0)),
    ("national_id", _keyword_rule(_NATIONAL_ID, r"[A-Z0-9]{1,20}(?:[ -][A-Z0-9]{1,12}){0,5}(?![a-z])"),
     _digits_between(5, 20, 4)),
    ("token", _keyword_rule(_TOKEN, r"[A-Za-z0-9_/+=-](?:[A-Za-z0-9_/+=.-]{0,510}[A-Za-z0-9_/+=-])?(?![\w/+=-])"),
     _high_entropy),
    ("seed_phrase", _keyword_rule(_SEED, r"[a-z]{3,8}(?:[ ,]{1,3}[a-z]{3,8}){11,23}(?![a-z])"), _seed_words),
)


class Secret(NamedTuple):
    """One secret value found in a text: ``text[start:end]`` is the value, ``kind`` the rule's name."""

    kind: str
    start: int
    end: int


def _scan(text: str) -> Iterator[Secret]:
    from twin.text.secret_shapes import structural_secrets

    for found in chain(structural_secrets(text), phrase_secrets(text), field_secrets(text)):
        if REDACTED not in text[found.start:found.end]:
            yield Secret(*found)
    for kind, pattern, check in _RULES:
        pos = 0
        while (m := pattern.search(text, pos)) is not None:
            group = "quoted" if "quoted" in pattern.groupindex and m.group("quoted") is not None else "value"
            value, start = m.group(group), m.start(group)
            trusted = check is None or (group == "quoted" and kind == "password")  # any quoted password counts
            if value.strip() != REDACTED and (trusted or check(value, text[max(0, start - 64):start])):
                yield Secret(kind, start, m.end(group))
                pos = m.end()
            else:  # not a secret: try again one character on, so a later keyword inside this match still counts
                pos = m.start() + 1


def find_secrets(text: str) -> list[Secret]:
    """Every secret value in ``text``, sorted by position; spans of different rules may overlap.

    Rules (one row each in ``_RULES``), from the sensitivity inference of seed 003 ("token/secret/password/
    API-key content"), widened to what a personal memory holds:
    - provider tokens by prefix: OpenAI/Anthropic ``sk-…``, GitHub ``ghp_/gho_/ghu_/ghs_/ghr_/github_pat_``,
      GitLab ``glpat-``, Slack ``xox[bpars]-``, AWS ``AKIA/ASIA…``, Google ``AIza…``, Stripe ``sk_/rk_live|test_``,
      Hugging Face ``hf_``, JWTs ``eyJ….….…``, the 35 characters after the (public) bot id of a Telegram bot
      token ``123456789:…``, the password in ``scheme://user:pw@``, the value assigned to a variable whose name
      ends in SECRET/TOKEN/PASSWORD/PASSWD/API_KEY/ACCESS_KEY/PRIVATE_KEY/SECRET_KEY (``export
      AWS_SECRET_ACCESS_KEY=…``; not ``$VAR``, "xxxx", a path; "TOKEN_LIMIT=4000" is a setting);
    - ``-----BEGIN … PRIVATE KEY-----`` blocks (PEM, OpenSSH, PGP): the body is the value. An ``ssh-ed25519
      AAAA…`` line is a *public* key and is not a secret;
    - card numbers: 13-19 digits (grouped 4-4-4-…, 4-6-5 or contiguous), first digit 2-6, Luhn-valid, not right
      after "IMEI", "ISBN", "order", "phone", …; IBANs whose mod-97 check holds;
    - after a keyword, in English, German, Spanish, French, Portuguese, Italian, Dutch, Swedish, Polish, Turkish,
      Russian and a few CJK forms: a password-shaped word or any quoted string after "password/Passwort/contraseña/
      mot de passe/passcode/Wi-Fi key/wachtwoord/hasło/şifre/пароль", or a passphrase of 12+ lowercase letters
      after ":"/"="/a verb that does not end like an English adjective or adverb ("the wifi password is
      correcthorsebattery", not "the password is automatically generated"); the same after
      the labels "pw/pwd/pass" but only with ":", "=" or a verb ("wifi pw: hunter2x"; "pass" not after "boarding",
      "ski", "bus", ... ); any word of 4+ chars when assigned ("pass=toor") or after a labelled user name ("user:
      root pass: toor"); a password-shaped word after a login label, a user name or e-mail address and "/"
      ("login for netflix: lena@example.com / Tr0ub4dor&3"), after "pass/pw/pwd" and a space right after a
      labelled user name ("user max.mueller, pass Sommer2024"), after "password to" when a setting verb
      (set/changed/reset/updated/switched/made) comes before it in the clause ("I changed my laptop password to
      Kiwi!Mango42"; not a password manager's name like "1Password"), or before "is my (Wi-Fi) password" at the
      end of a clause ("Hunter2 is my password"; not "… is my password manager"); 3+ digits (or dash groups like
      ``7KQP-2MXD``), or a list of such codes, after "PIN/PUK/door code/garage opener code/alarm code/combination
      lock/recovery code/2FA backup codes"; two digits and a keypad "#"/"*" ("door code is 12#"); the digit
      groups of a dial ("safe combination is 12 34 56"; "locker combination is 4-17-33", date-like but after a
      combination/lock keyword); codes of 6+ characters mixing letters and digits after "recovery/backup codes"
      ("1a2b3c4d 5e6f7g8h");
      a 4-8 digit number (not a year 1900-2099) after a bare "code" and ":", "=" or a verb ("the code is 0451"),
      unless it is an area/zip/postal/error/status/booking/tracking/... code;
      6-34 digits after "account number/routing number/sort code/BSB/Kontonummer"; 5+ digits after
      "SSN/Steuer-ID/NIF/passport number/…"; a random-looking token (>= 16 chars, a digit, >= 3 bits/char) after
      "token/API key/secret/client secret/aws"; 12-24 lowercase words after "seed phrase/recovery phrase".
    Added from the corpus of tests/secret_corpus.py (bench/secret_detection.py): age ``AGE-SECRET-KEY-1…``, npm
    ``npm_``, PyPI ``pypi-AgE…``, SendGrid ``SG.…``, DigitalOcean ``dop_v1_``, Shopify ``shpat_…`` tokens; PuTTY
    ``Private-Lines:`` bodies and PEM bodies inside JSON strings ("\\n"); the ``secret=`` of an ``otpauth://``
    URI, and base32 TOTP seeds (grouped or not) after "setup key/2FA secret/Einrichtungsschlüssel"; app passwords
    of four letter groups after a password label ("abcd efgh ijkl mnop" when not four words, `_app_password`;
    "abcd-efgh-ijkl-mnop"); keypad digits with dashes after a bare "code/codice/código/код" ("1-2-3-4",
    "4-7-1-1#") and codes after a door or gate with ":" ("Garage: 4-7-1-1#"); the password of "user / password"
    with no label right before it (`_login_pair`: after an e-mail address, or after a user name when a login word
    comes earlier); em/en dashes as separators ("пароль — …"); and, by structure (`twin.text.secret_shapes`), BIP-39
    seed phrases (checksum, or a seed label before them) and Base58Check WIF and ``xprv`` keys.
    The keyword alone is no secret ("Owner forgot the password", "the PIN pad was broken"): a value must follow
    directly, after ":"/"=", or after at most six words and a verb ("is", "ist", "lautet", "est", "es", "set to").
    A value two rules both find ("garage code is 0451": named code and bare code) is listed once.
    Read-only; linear in ``len(text)``.
    """
    return sorted(set(_scan(text)), key=lambda s: (s.start, s.end))


def contains_secret(text: str) -> bool:
    """True when :func:`find_secrets` would find at least one secret value in ``text``; stops at the first."""
    return next(_scan(text), None) is not None


def infer_sensitivity(content: str) -> str:
    """The sensitivity of a memory whose level was not given: ``"sensitive"`` or ``"private"``.

    Seed 003: "infers sensitive for obvious token/secret/password/API-key content and otherwise defaults to
    private". ``"sensitive"`` exactly when ``content`` holds a secret value (see :func:`find_secrets`); a memory
    that only mentions a password, a PIN or an account ("Owner stores all passwords in Bitwarden") holds no secret
    and is ``"private"``. Never returns ``"public"`` or ``"internal"``: those are only set explicitly.
    """
    return SENSITIVE if contains_secret(content) else DEFAULT_SENSITIVITY


def redact(text: str) -> str:
    """``text`` with every secret value replaced by ``[redacted]``; everything else is kept as it was.

    "Owner's Wi-Fi password is verde-2291." becomes "Owner's Wi-Fi password is [redacted].", so a model still
    learns that a password exists. Overlapping findings are merged into one ``[redacted]``. Idempotent:
    ``redact(redact(t)) == redact(t)``, and the result holds no secret. Run it on any text before it is sent to a
    remote model provider (DESIGN.md invariant 8, private by default). Pure; linear in ``len(text)``.
    """
    spans: list[list[int]] = []
    for secret in find_secrets(text):
        if spans and secret.start < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], secret.end)
        else:
            spans.append([secret.start, secret.end])
    out, pos = [], 0
    for start, end in spans:
        out += [text[pos:start], REDACTED]
        pos = end
    out.append(text[pos:])
    return "".join(out)
