"""Structured text spelled out as lines the offline extractor reads as sentences, so no label is dropped.

Two shapes (a file's rows and pairs said what their values are; the sentence reader lost that):

- a table (CSV, TSV, ";"-separated, a Markdown table): a header of short names, then rows of the same width;
  each row becomes one line naming its columns, "site: example.com, user: jdoe, password: Tr0ub4dor&3." (empty
  cells left out), a blank line after each so every row is one memory, and the header line goes (it says
  nothing alone). A "," table's header has no ", " (prose lists do: "milk, bread, cheese");
- a key/value line whose key names a secret (`twin.text.secret_fields.names_secret`: JSON `"password": "…",`, YAML
  `password: …`, .env `DB_PASSWORD=…`, INI `password = …`) becomes "<key words>: <value>" ("db password:
  hunter22x"), so the memory says what the value is and `twin.text.sensitivity.find_secrets` still finds it.

Everything else is left as it was. Pure; linear in the text length.
"""

from __future__ import annotations

import re

from twin.text.secret_fields import Cells, key_words, names_secret, table_cells, table_rows, value_counts

MAX_CELL_CHARS = 40
"""Longest header cell (characters); a longer one is prose, not a column name."""
MAX_HEADER_WORDS = 4
"""Most words of a header cell ("mot de passe")."""
_DELIMITERS = ("\t", ";", "|", ",")
_PAIR_LINE = re.compile(  # "password": "…", | 'pin': 4827 | "token": "…"}  (one pair on its line)
    r"^(?P<indent>[ \t]*)[{\[]?[ \t]*(?P<q>[\"'])(?P<key>[^\"'\\\n]{1,64})(?P=q)[ \t]*:[ \t]*"
    r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.){1,512})\"|'(?P<sq>[^'\\\n]{1,512})'|(?P<num>\d{3,20}))[ \t]*[,}\]]*[ \t]*$")
_KEY_LINE = re.compile(  # db_password = …, wifiPassword: …, export API_TOKEN=…, - password: …
    r"^(?P<indent>[ \t]*)(?:[-*][ \t]+)?(?:export[ \t]+)?(?P<key>[^\W\d][\w.-]{0,63})[ \t]*(?:=|:(?=[ \t]))[ \t]*"
    r"[\"']?(?P<value>[^\"'\n]{1,512}?)[\"']?[ \t]*$")


def spell_out(text: str) -> str:
    """`text` with its tables' rows and its secret key/value lines spelled out (module docstring); `text`
    itself when it holds neither. Never raises."""
    if "\n" not in text and not any(d in text for d in ":="):
        return text
    lines = text.split("\n")
    out: list[str] = []
    i, changed = 0, False
    while i < len(lines):
        table = _table(lines, i)
        if table is not None:
            names, rows, i = table
            for _, cells in rows:
                pairs = [f"{name}: {cell}" for name, (_, cell) in zip(names, cells, strict=True) if cell]
                out += [", ".join(pairs) + ".", ""]
            changed = True
            continue
        spelled = _secret_pair(lines[i])
        changed = changed or spelled is not None
        out.append(lines[i] if spelled is None else spelled)
        i += 1
    return "\n".join(out) if changed else text


def _secret_pair(line: str) -> str | None:
    """"<key words>: <value>" for a key/value line whose key names a secret and whose value counts, or None."""
    if len(line) > 600 or not any(c in line for c in ":="):
        return None
    match = _PAIR_LINE.match(line)
    if match is not None:
        value = next(match.group(g) for g in ("dq", "sq", "num") if match.group(g) is not None)
    elif (match := _KEY_LINE.match(line)) is not None:
        value = match.group("value").strip()
    else:
        return None
    kind = names_secret(match.group("key"))
    if kind is None or not value_counts(value, kind):
        return None
    key = match.group("key").strip()
    words = key if key_words(key) == key.lower() else key_words(key)  # "PIN" stays, "DB_PASSWORD" is "db password"
    return f"{match.group('indent')}{words}: {value}"


def _table(lines: list[str], i: int) -> tuple[list[str], list[tuple[int, Cells]], int] | None:
    """`(column names, rows, end)` when `lines[i]` is a table header: 2+ short names, and at least one row of
    the same width after it (`twin.text.secret_fields.table_rows`, which gives `rows` and `end`)."""
    line = lines[i]
    if len(line) > 1000 or i + 1 >= len(lines):
        return None
    delimiter = next((d for d in _DELIMITERS if d in line), None)
    if delimiter is None or (delimiter == "," and ", " in line):
        return None
    names = [name for _, name in table_cells(line, delimiter) or []]
    if len(names) < 2 or not all(0 < len(n) <= MAX_CELL_CHARS and not n[0].isdigit()
                                 and n.count(" ") < MAX_HEADER_WORDS and not n.endswith((".", "!", "?"))
                                 for n in names):
        return None
    rows, end = table_rows(lines, i + 1, delimiter, len(names))
    return (names, rows, end) if rows else None
