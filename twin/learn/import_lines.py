"""One line of an import file read and checked (`twin import`, `twin.learn.transfer.import_memories`): a bad line is a
`BadLine` that says why, never a traceback, and never echoes the memory's text.

What a line may hold (every other field is ignored; `superseded_by`, `supersede_reason`, `id` and `edges` are
resolved by `twin.learn.transfer` once the whole file is read):

- the line: UTF-8 (a BOM before the first line is skipped), at most `MAX_LINE_BYTES`, one whole JSON object (a
  line that ends before its object closes is reported as cut short, with the column where it ends); no
  duplicate keys (which value would be meant?), no `NaN`/`Infinity` (not JSON), no deeper nesting than the
  decoder's recursion limit; blank lines (CRLF or whitespace only) are neither good nor bad;
- `content`: a string; terminal controls dropped as on the learn path (`strip_controls`: ESC sequences, OSC 52,
  NUL, bidi overrides, lone surrogates), then 1..`MAX_CONTENT_CHARS` characters;
- `kind`, `sensitivity`, `status`, `tier`: one of their values (default fact, private, active, warm; null is the
  default too, with a note: `line_notes`); the legacy `"sensitive": true` means sensitive; content holding a
  secret is sensitive whatever the line says;
- `being_id`: ignored, every line goes to the importing twin's being; another one is imported with a note;
- `namespace`: a namespace name (`twin.namespaces.checked`); missing or null (an export made before namespaces):
  the namespace the import was asked for (`default` unless said); a person's or a project's stored namespace only
  in an import of the whole twin, which maps it (`twin.operations.transfer`);
- `importance`: a number 0..1 (default 0.4), not a string or a boolean; `hits`: a whole number 0..`MAX_HITS`;
- `created_at`, `last_accessed`, `updated_at`: an ISO-8601 string (`Z`, an offset, or none: UTC; a date alone
  is its midnight UTC) or a number of seconds since 1970-01-01 UTC (what other tools export; milliseconds read
  as seconds would land in the future and are refused), from 1970 to `FUTURE_SLACK` ahead of now; a missing or
  null `created_at` is now;
- `source`: a string (default `import`), its controls escaped (`escape_controls`: one line, and a source twin
  exported comes back the same); `tags`: a list of strings, each cleaned like content, blanks dropped;
- `provenance`: an object whose scalar values are kept (strings cleaned, numbers finite), nested ones dropped;
  anything else counts as `{}`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import BinaryIO

from twin.memory import KINDS, SENSITIVITIES, STATUSES, Memory, format_time, parse_time, utc_now
from twin.namespaces import DEFAULT_NAMESPACE, NamespaceError, checked, split_stored
from twin.outside_text import escape_controls, has_text, strip_controls
from twin.text.sensitivity import infer_sensitivity

MAX_LINE_BYTES = 1 << 20
"""An import line may be at most this long (1 MiB: a memory of `MAX_CONTENT_CHARS` in 4-byte UTF-8 and its
edges fit many times over); a longer one is read past, holding at most this much, and reported."""
MAX_CONTENT_CHARS = 20_000
"""An imported memory's content may be at most this long (a memory is a sentence; a longer line is not one)."""
MAX_HITS = 2**62
"""An imported hit count must lie in 0..MAX_HITS (SQLite integers are 64-bit)."""
FUTURE_SLACK = timedelta(days=1)
"""An imported time may be at most this far ahead of now (clock skew); later is a bad line."""
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
"""No imported time is older than the Unix epoch (twin's times are `YYYY-MM-DDTHH:MM:SSZ`, four-digit years)."""
SHOWN_CHARS = 40
"""A bad value quoted in a problem is cut to this many characters (and escaped): problems never carry a memory."""
TIME_FIELDS = ("created_at", "last_accessed", "updated_at")


class BadLine(ValueError):
    """A line that cannot be imported; the message says why, naming the field, never the memory's text."""


def shown(value: object) -> str:
    """`value` for a problem message: its repr, escaped (`escape_controls`) and cut to `SHOWN_CHARS`."""
    text = escape_controls(repr(value))
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…"


def bounded_lines(source: BinaryIO, max_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of a binary file, split at `\\n`, each at most `max_bytes` + 1 bytes: the rest of a longer line is
    read and dropped, so a 10 GB line costs that much memory and is still reported (`read_line`: too long)."""
    while line := source.readline(max_bytes + 1):
        if len(line) > max_bytes and not line.endswith(b"\n"):
            while (rest := source.readline(max_bytes + 1)) and not rest.endswith(b"\n"):
                pass
        yield line


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise BadLine(f"duplicate key {shown(key)}")
        out[key] = value
    return out


def _no_constant(name: str) -> float:
    raise BadLine(f"{name} is not a JSON number")


def read_line(line: str | bytes, number: int) -> dict | None:
    """One line as the JSON object it holds, or None for a blank line. Raises `BadLine`: too long, not UTF-8, cut
    short (the line ends before its JSON does: where it ends), not JSON (with where), nested too deeply, a duplicate
    key, NaN/Infinity, not an object."""
    if len(line) > MAX_LINE_BYTES:
        raise BadLine(f"longer than {MAX_LINE_BYTES} bytes")
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadLine(f"not valid utf-8 (byte {line[exc.start]:#04x} at column {exc.start + 1})") from exc
    if number == 1:
        line = line.removeprefix("\ufeff")
    if not line.strip():
        return None
    line = line.rstrip("\r\n")  # its end: inside a string that was cut short it read as a control character
    try:
        raw = json.loads(line, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        if exc.msg.startswith("Unterminated string") or exc.pos >= len(line.rstrip()):
            raise BadLine(f"not one whole JSON object: the line is cut short (it ends at column {len(line) + 1}, "
                          "the object still open)") from exc
        raise BadLine(f"not JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})") from exc
    except RecursionError as exc:
        raise BadLine("nested too deeply to read") from exc
    except BadLine:
        raise
    except ValueError as exc:  # Python's bound on integer digits (sys.get_int_max_str_digits)
        raise BadLine(f"a whole number longer than {sys.get_int_max_str_digits()} digits") from exc
    if not isinstance(raw, dict):
        raise BadLine(f"not a JSON object but {json_type(raw)}")
    return raw


def json_type(value: object) -> str:
    """What JSON calls `value`'s type, with its article: "an array", "a string", "null"…"""
    if value is None or isinstance(value, bool):
        return "null" if value is None else "a boolean"
    return {dict: "an object", list: "an array", str: "a string"}.get(type(value), "a number")


def checked_row(raw: dict, namespace: str = DEFAULT_NAMESPACE, stored: Callable[[str], str] | None = None) -> dict:
    """The fields `Store.insert_memory` takes, checked and cleaned by the rules of the module docstring (`namespace`
    for a line that names none). `stored`, when given, maps a stored namespace of a person or a project
    (`person:<id>:<name>`, `project:<id>`: a whole-twin export) to the one it lands in here, raising `BadLine`;
    without it such a namespace is a bad line. Raises `BadLine` naming the first bad field."""
    content = raw.get("content")
    if not isinstance(content, str) or not content.strip():
        raise BadLine("content must be a non-empty string")
    content = strip_controls(content).strip()
    if not has_text(content):  # invisible characters alone (U+200B, U+FEFF) are refused as every interface does
        raise BadLine("content holds only control characters or invisible ones")
    if len(content) > MAX_CONTENT_CHARS:
        raise BadLine(f"content is longer than {MAX_CONTENT_CHARS} characters")
    sensitivity = _choice(raw, "sensitivity", SENSITIVITIES,
                          "sensitive" if raw.get("sensitive") is True else "private")
    times = {key: time_field(raw, key) for key in TIME_FIELDS}
    return {"kind": _choice(raw, "kind", KINDS, "fact"), "content": content, "source": _source(raw),
            "importance": _importance(raw), "tags": _tags(raw), "created_at": times["created_at"] or utc_now(),
            "last_accessed": times["last_accessed"], "hits": _hits(raw),
            "sensitivity": "sensitive" if infer_sensitivity(content) == "sensitive" else sensitivity,
            "provenance": _provenance(raw.get("provenance")), "status": _choice(raw, "status", STATUSES, "active"),
            "tier": _choice(raw, "tier", ("warm", "cold"), "warm"), "updated_at": times["updated_at"],
            "namespace": _namespace(raw, namespace, stored)}


def _namespace(raw: dict, default: str, stored: Callable[[str], str] | None) -> str:
    value = raw.get("namespace")
    if value is None:
        return default
    if stored is not None and split_stored(value) is not None:
        return stored(value)
    try:
        return checked(value)
    except NamespaceError as exc:
        raise BadLine(f"namespace {shown(value)} is not a namespace name (1-64 letters, digits, '_', '.', '-')"
                      ) from exc


LINE_FIELDS = frozenset(f.name for f in dataclasses.fields(Memory)) | {"edges", "sensitive"}
"""What an export line may hold (`Memory.to_dict` and its `edges`; `sensitive`, an older export's flag): another
field is left out with a note (`line_notes`)."""
NULL_DEFAULTED = ("kind", "sensitivity", "status", "tier")
"""Fields a line may give as null: imported as their default, with a note (`line_notes`)."""


def line_notes(raw: dict, row: dict, being: str) -> list[str]:
    """What importing `raw` (as `checked_row` made it `row`) into `being` did that the line did not say, one short
    note each, never the memory's text: a field of `NULL_DEFAULTED` given as null and imported as its default
    ("kind null: imported as fact"), and a `being_id` other than `being` ("being_id 'alice' is not this twin's
    (owner): imported as owner's"), and fields an export line has not ("field zzz is not one of an export line:
    left out"). Empty for a line imported as it says. Pure."""
    notes = [f"{key} null: imported as {row[key]}" for key in NULL_DEFAULTED if key in raw and raw[key] is None]
    if unknown := sorted(k for k in raw if k not in LINE_FIELDS):
        notes.append(f"field {', '.join(shown(k) for k in unknown[:5])}{' …' if len(unknown) > 5 else ''} is not "
                     "one of an export line: left out")
    other = raw.get("being_id", being)
    if other != being:
        notes.append(f"being_id {shown(other)} is not this twin's ({escape_controls(being)}): imported as "
                     f"{escape_controls(being)}'s")
    return notes


def _choice(raw: dict, key: str, choices: tuple[str, ...], default: str) -> str:
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, str) or value not in choices:
        raise BadLine(f"{key} {shown(value)} is not one of {choices}")
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _importance(raw: dict) -> float:
    value = raw.get("importance", 0.4)
    if not _is_number(value) or not 0 <= value <= 1:  # NaN compares false
        raise BadLine(f"importance {shown(value)} is not a number 0..1")
    return float(value)


def _hits(raw: dict) -> int:
    value = raw.get("hits")
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_HITS:
        raise BadLine(f"hits must be a whole number 0..{MAX_HITS}, not {shown(value)}")
    return value


def time_field(raw: dict, key: str) -> str | None:
    """`raw[key]` as UTC `YYYY-MM-DDTHH:MM:SSZ`, None when missing or null; raises `BadLine`."""
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) and not _is_number(value):
        raise BadLine(f"{key} must be an ISO-8601 string or seconds since 1970, not {json_type(value)}")
    if _is_number(value) and value > (datetime.now(UTC) + FUTURE_SLACK).timestamp():
        raise BadLine(f"{key} {shown(value)} is in the future as seconds since 1970 (milliseconds?)")
    try:
        moment = parse_time(value) if isinstance(value, str) else datetime.fromtimestamp(value, UTC)
    except (ValueError, OverflowError, OSError) as exc:
        raise BadLine(f"{key} {shown(value)} is not an ISO-8601 time or seconds since 1970") from exc
    if moment > datetime.now(UTC) + FUTURE_SLACK:
        raise BadLine(f"{key} {format_time(moment)} is in the future")
    if moment < EARLIEST:
        raise BadLine(f"{key} {shown(value)} is before 1970")
    return format_time(moment)


def _source(raw: dict) -> str:
    value = raw.get("source")
    if value is None or value == "":
        return "import"
    if not isinstance(value, str):
        raise BadLine(f"source must be a string, not {json_type(value)}")
    return escape_controls(value)


def _tags(raw: dict) -> list[str]:
    value = raw.get("tags")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise BadLine("tags must be a list of strings")
    return [tag for tag in (" ".join(strip_controls(t).split()) for t in value) if tag]


def _provenance(value: object) -> dict:
    if not isinstance(value, dict):
        return {}
    out: dict = {}
    for key, item in value.items():
        if isinstance(item, str):
            out[strip_controls(key)] = strip_controls(item)
        elif item is None or isinstance(item, int) or (isinstance(item, float) and math.isfinite(item)):
            out[strip_controls(key)] = item
    return out
