"""Secrets in structured text, found by the key that names them: JSON/Python pairs (`"password": "…"`), lines of
YAML, TOML, INI, .env and Java properties (`db_password = …`, `wifiPassword: …`), and the columns of a CSV,
TSV or Markdown table whose header names a secret (`site,user,password`).

`twin.text.sensitivity.find_secrets` runs `field_secrets` beside its regex rules. In a structure the key says what the
value is, so the value counts whatever its shape ("Sup3rS3cret!", "let me in", "4827"), unless it is no value
(`twin.text.secret_phrases.plausible_value`: "$DB_PASSWORD", "<token>", "none", "****", a path). A key names a secret
when its last words are a secret's label (`names_secret`: "password", "DB_PASSWORD", "wifiPassword", "api_key",
"client-secret", "auth.token", "pin", "door code", "mnemonic"; not "password_hint", "max_tokens", "token_type",
"pin_length"). The standard `csv` module reads quoted table rows. Pure; linear in the text length.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter
from collections.abc import Iterator

from twin.text.secret_labels import PASSWORD, PASSWORD_ABBR, PIN, SEED, TOTP_LABEL
from twin.text.secret_phrases import CLAUSE_END, plausible_value
from twin.text.secret_shapes import Found

MAX_KEY_CHARS = 64
"""Longest key read (characters)."""
MAX_VALUE_CHARS = 512
"""Longest value read (characters)."""
MIN_TOKEN_CHARS = 8
"""Shortest value under a token/key/secret name ("[PAD]", "EOS" under `pad_token` are a tokenizer's symbols)."""

_TOKEN_KEY = (r"(?:api|access|secret|private|client|auth|signing|encryption|master|license|licence|app|deploy"
              r"|webhook|ssh|gpg|pgp|wifi|wi fi|wlan|network|bot|session|refresh|bearer)\s?(?:key|token|secret)"
              r"|apikey|secret|(?<!page\s)(?<!sync\s)(?<!cursor\s)(?<!continuation\s)token|credentials?")
_KEY_KINDS = (("pin", re.compile(rf"(?:{PIN})$")), ("seed_phrase", re.compile(rf"(?:{SEED})$")),
              ("otp_secret", re.compile(rf"(?:{TOTP_LABEL})$")),
              ("password", re.compile(rf"(?:{PASSWORD}|{PASSWORD_ABBR})$")),
              ("token", re.compile(rf"(?i)(?<![a-z])(?:{_TOKEN_KEY})$")),
              ("key", re.compile(r"(?<![a-z])(?:[a-z]+ )?key$")))
"""Kinds by a key's last words, first match wins; "key" ("STRIPE_KEY", "mailgun key") is any other key: its value
counts only when it looks random (`random_looking`), since "sort_key", "primary key" hold names."""
_NAME_PARTS = re.compile(r"[_.\-:/]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_KEY_SEPARATORS = re.compile(r"[\s_.\-/]+")

_PAIR = re.compile(  # "password": "…", 'pin': 4827 (JSON, a Python dict, JavaScript)
    r"(?P<q>[\"'])(?P<key>[^\"'\\\n]{1,64})(?P=q)[ \t]*:[ \t]*"
    r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.){1,512})\"|'(?P<sq>[^'\\\n]{1,512})'|(?P<num>\d{3,20})(?![\w.]))")
_LINE = re.compile(  # db_password = …, wifiPassword: …, export API_TOKEN=…, - password: … (YAML list item)
    r"(?m)^[ \t]*(?:[-*][ \t]+)?(?:export[ \t]+)?(?P<q>[\"']?)(?P<key>[^\W\d][\w .'’-]{0,63}?)(?P=q)[ \t]*"
    r"(?:=|:(?=[ \t]))[ \t]*(?P<value>[^\n]{1,512})")
_COMMENT = re.compile(r"[ \t]+#.*$")  # YAML, TOML, shell
_GENERIC_KEY = re.compile(r"\b(?:a|an|any|every|each|good|strong|secure|your)\b")  # "tip for a good password"
MAX_KEY_WORDS = 4
"""A line's key is a name of at most this many words ("Wi-Fi password"), not a sentence."""
_TABLE_HINT = re.compile(r"(?i)pass|pw|pin|secret|token|key|code|kennwort|contrase|senha|wachtwoord|mnemonic|seed")
_DELIMITERS = (",", ";", "\t", "|")
_RULE_ROW = re.compile(r"[\s|:+-]+")  # a Markdown table's |---|---| line
Cells = list[tuple[int, str]]
"""One table row's cells: `[(offset in the line, stripped cell text)]` (`table_cells`)."""


def key_words(key: str) -> str:
    """A key as lower-case words: "wifiPassword" -> "wifi password", "DB_PASSWORD" -> "db password"."""
    return " ".join(_KEY_SEPARATORS.split(_CAMEL.sub(" ", key.strip()))).strip().lower()


def names_secret(key: str) -> str | None:
    """The kind of secret ("password", "pin", "token", "seed_phrase", "otp_secret") that `key` names by its last
    words, or None."""
    words = key_words(key)
    if not words or len(words) > MAX_KEY_CHARS or words.count(" ") >= MAX_KEY_WORDS or _GENERIC_KEY.search(words):
        return None
    return next((kind for kind, pattern in _KEY_KINDS if pattern.search(words)), None)


def value_counts(value: str, kind: str) -> bool:
    """Whether `value`, found under a key that names a secret of `kind`, is that secret (`plausible_value`; a PIN
    holds 3+ digits, a token or key `MIN_TOKEN_CHARS`+ characters)."""
    if not plausible_value(value):
        return False
    if kind == "pin":
        return sum(c.isdigit() for c in value) >= 3
    if kind == "key":
        return random_looking(value)
    return kind != "token" or len(value) >= MIN_TOKEN_CHARS


def _reported(kind: str) -> str:
    return "token" if kind == "key" else kind


def random_looking(value: str) -> bool:
    """One word of 16+ characters with letters and digits, some part mixing them, and 3+ bits of entropy per
    character (a generated key, not "created_at_timestamp_2024")."""
    if len(value) < 16 or any(c.isspace() for c in value) or not any(c.isdigit() for c in value):
        return False
    if not any(c.isalpha() for c in value) or all(p.isalpha() or p.isdigit() for p in _NAME_PARTS.split(value)):
        return False  # "created_at_timestamp_2024", "user-profile-12": words and numbers joined, a name
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values()) >= 3.0


def field_secrets(text: str) -> Iterator[Found]:
    """Values under keys that name a secret (module docstring), in the order pairs, lines, table columns (not
    sorted; one value found twice is listed twice). Read-only; linear in `len(text)`."""
    if ":" in text or "=" in text:
        yield from _pairs(text)
        yield from _lines(text)
    if any(d in text for d in _DELIMITERS) and "\n" in text:
        yield from _tables(text)


def _pairs(text: str) -> Iterator[Found]:
    if '"' not in text and "'" not in text:
        return
    for match in _PAIR.finditer(text):
        kind = names_secret(match.group("key"))
        group = next(g for g in ("dq", "sq", "num") if match.group(g) is not None)
        if kind and value_counts(match.group(group), kind):
            yield Found(_reported(kind), match.start(group), match.end(group))


def _lines(text: str) -> Iterator[Found]:
    for match in _LINE.finditer(text):
        kind = names_secret(match.group("key"))
        if kind is None:
            continue
        raw, start = match.group("value").rstrip(), match.start("value")
        if raw[:1] in "\"'":
            close = raw.find(raw[0], 1)
            value, start = (raw[1:close], start + 1) if close > 0 else (raw[1:], start + 1)
        else:
            value = _COMMENT.sub("", raw)
            end = CLAUSE_END.search(value) if " " in match.group("key").strip() else None
            value = value[:end.start()] if end else value  # "Wi-Fi password: hunter2x (case matters).": prose
        if value_counts(value.strip(), kind):
            yield Found(_reported(kind), start, start + len(value.rstrip()))


def _tables(text: str) -> Iterator[Found]:
    """Cells under a header cell that names a secret, in the rows after the header up to a blank line or a row of
    another width."""
    lines = text.split("\n")
    offset, i = 0, 0
    starts = []
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    while i < len(lines):
        header = _header(lines[i])
        if header is None:
            i += 1
            continue
        delimiter, width, columns = header
        rows, i = table_rows(lines, i + 1, delimiter, width)
        for row, cells in rows:
            for column, kind in columns:
                cell_start, cell = cells[column]
                if not value_counts(cell, kind):
                    continue
                if cell_start < 0:  # a quoted cell the csv module unescaped: the whole row is the secret
                    yield Found(_reported(kind), starts[row], starts[row] + len(lines[row]))
                else:
                    yield Found(_reported(kind), starts[row] + cell_start, starts[row] + cell_start + len(cell))


def table_rows(lines: list[str], start: int, delimiter: str, width: int) -> tuple[list[tuple[int, Cells]], int]:
    """The rows of a table whose first row is `lines[start]` (the line after its header): `([(line index,
    cells)], end)`, cells as `table_cells` gives them, `end` the index of the first line after the table (a blank
    line, a row that is not `width` cells of `delimiter`, or `len(lines)`). A Markdown table's rule rows
    (`|---|:--:|`) are skipped. Never raises; linear in the table's length."""
    rows: list[tuple[int, Cells]] = []
    i = start
    while i < len(lines) and lines[i].strip():
        if delimiter == "|" and _RULE_ROW.fullmatch(lines[i]):
            i += 1
            continue
        cells = table_cells(lines[i], delimiter)
        if cells is None or len(cells) != width:
            break
        rows.append((i, cells))
        i += 1
    return rows, i


def _header(line: str) -> tuple[str, int, list[tuple[int, str]]] | None:
    """`(delimiter, width, [(column, kind)])` when `line` is a table header with a column that names a secret."""
    if len(line) > 1000 or not _TABLE_HINT.search(line):
        return None
    delimiter = max(_DELIMITERS, key=line.count)
    cells = table_cells(line, delimiter)
    if cells is None or len(cells) < 2 or not all(0 < len(c) <= 40 and not c[0].isdigit() for _, c in cells):
        return None
    columns = [(n, kind) for n, (_, cell) in enumerate(cells) if (kind := names_secret(cell))]
    return (delimiter, len(cells), columns) if columns else None


def table_cells(line: str, delimiter: str) -> Cells | None:
    """The cells of one table row `line` split at `delimiter` (",", ";", "\\t", "|"): `[(offset in line, cell
    text)]`, cells stripped of white space; offset -1 for a quoted cell whose text differs from the line's (the
    `csv` module reads quoted cells). None when `line` holds no `delimiter` or is no row the `csv` module can read
    (a field over `csv.field_size_limit()`, a line break inside an unquoted field): never raises. A Markdown
    row's outer pipes are no cells."""
    if delimiter not in line:
        return None
    if delimiter == "|":
        inner = line.strip()
        lead = len(line) - len(line.lstrip()) + (1 if inner.startswith("|") else 0)
        body = line[lead:len(line.rstrip()) - (1 if inner.endswith("|") and len(inner) > 1 else 0)]
    else:  # leading white space is no part of the first cell, so an indented row's quoted cell is still read
        lead = len(line) - len(line.lstrip())
        body = line[lead:]
    if '"' in body:
        out, pos = [], 0
        try:
            quoted = next(csv.reader([body], delimiter=delimiter), [])
        except csv.Error:
            return None
        for cell in quoted:
            found = body.find(cell, pos) if cell else pos
            out.append((lead + found if found >= 0 else -1, cell.strip()))
            pos = found + len(cell) if found >= 0 else pos
        return out
    out, pos = [], 0
    for cell in body.split(delimiter):
        stripped = cell.strip()
        out.append((lead + pos + (len(cell) - len(cell.lstrip())), stripped))
        pos += len(cell) + 1
    return out
