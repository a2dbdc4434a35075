"""The CLI's one output layer: every line a command prints goes through `show` (terminal controls escaped), a
read command's `--json` through `emit`/`print_json`, and a report for people through `report_lines` (sections,
aligned `key: value`, lists one per line, never a Python repr). Colour (`paint`) only when stdout is a terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TextIO

from twin.outside_text import escape_controls, json_text

STYLES = {"bold": "1", "green": "32", "yellow": "33", "red": "31", "dim": "2"}
"""ECMA-48 SGR parameters `paint` knows."""
INDENT = "  "
"""One level of a section's body."""


def show(text: str = "", *, file: TextIO | None = None, newlines: bool = False, end: str = "\n",
         flush: bool = False, style: str | None = None) -> None:
    """Print one line of output (to stdout, or `file`): every command prints through here, since almost every
    line holds outside text (memory content, sources, diary lines, signal titles, profile values, error
    messages naming a file). Terminal controls in it are escaped (`twin.outside_text.escape_controls`); line
    breaks are escaped too unless `newlines` (a text of our own that spans lines). `style` (a key of `STYLES`)
    colours the escaped line when that stream is a terminal (`colour_on`), else it is ignored."""
    stream = file or sys.stdout
    line = escape_controls(text, newlines=newlines)
    print(paint(line, style, stream) if style else line, file=stream, end=end, flush=flush)


def colour_on(stream: TextIO) -> bool:
    """Whether `stream` gets colour: it is a terminal, `NO_COLOR` (no-color.org) is unset, `TERM` is not `dumb`,
    and the process does not log to journald (`JOURNAL_STREAM`, set by systemd for a unit's output: the journal
    keeps escape codes as bytes)."""
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return False
    env = os.environ
    return "NO_COLOR" not in env and env.get("TERM") != "dumb" and "JOURNAL_STREAM" not in env


def paint(text: str, style: str | None, stream: TextIO | None = None) -> str:
    """`text` wrapped in the SGR codes of `style` when `stream` (default stdout) gets colour, else unchanged.
    Apply it to text already escaped (`show` does): the codes are ours, the text may be outside text."""
    if not style or not colour_on(stream or sys.stdout):
        return text
    return f"\x1b[{STYLES[style]}m{text}\x1b[0m"


def print_json(value: object) -> None:
    """`value` as one JSON line, controls and lone surrogates as `\\uXXXX` escapes (`outside_text.json_text`)."""
    show(json_text(value))


def emit(args: argparse.Namespace, value: object, plain: Callable[[], None]) -> int:
    """The one fork between the two outputs of a read command: `value` as JSON when `--json` was given (the
    parser adds it to every read command: `twin.cli.parser.add_command`), else `plain()` prints it for people.
    Returns 0 (the exit code)."""
    if getattr(args, "json", False):
        print_json(value)
    else:
        plain()
    return 0


UNITS = {"_s": "s", "_ms": "ms", "_bytes": "bytes"}
"""Key suffixes that name a unit: shown after the value instead (`age_s: 4` → `age: 4 s`)."""


def label(key: str) -> str:
    """A report key as a person reads it: `pending_embedding` → `pending embedding`, a unit suffix dropped
    (`every_s` → `every`: `entry` puts the unit after the value)."""
    for suffix in UNITS:
        if key.endswith(suffix) and len(key) > len(suffix):
            key = key[: -len(suffix)]
            break
    return key.replace("_", " ")


def scalar(value: object) -> str:
    """A single value in words: None → `none`, booleans → `yes`/`no`, a float with at most 3 decimals."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".")
    return str(value)


def entry(key: str, value: object) -> str:
    """The value of report field `key` in words (`scalar`), with its unit (`UNITS`) after it; a `last_…` time
    that is None is `never`."""
    if value is None and key.startswith("last"):
        return "never"
    unit = next((u for suffix, u in UNITS.items() if key.endswith(suffix) and len(key) > len(suffix)), None)
    return f"{scalar(value)} {unit}" if unit and value is not None else scalar(value)


def aligned(pairs: Iterable[tuple[str, str]], indent: str = "") -> list[str]:
    """`key: value` lines with the values in one column (`indent` before each)."""
    pairs = list(pairs)
    width = max((len(k) for k, _ in pairs), default=0) + 1
    return [f"{indent}{k + ':':<{width}} {v}".rstrip() for k, v in pairs]


Line = tuple[str, str | None]
"""One line of a report for people and its `show` style (None, or `bold` for a section heading)."""


def report_lines(report: Mapping, indent: str = "",
                 own: Mapping[str, Callable[[object], list[str]]] | None = None) -> list[Line]:
    """A nested report (a `--json` value: dicts, lists, scalars) as lines for people: the scalars (and empty
    mappings and lists, as `none`) first, as one aligned `key: value` block; then each mapping as a section (its
    key as a heading, its body indented by `INDENT`, nested the same way); a list one item per line under its
    key (a mapping item as `key value, key value`). `own` maps a top-level key to the function that writes its
    part instead (lines of their own, not indented). Keys keep the report's order; never a Python repr."""
    own = own or {}
    rest = {k: v for k, v in report.items() if k not in own}
    flat = [(label(k), "none" if isinstance(v, Mapping | list) else entry(k, v)) for k, v in rest.items()
            if not (v and isinstance(v, Mapping | list))]
    lines: list[Line] = [(line, None) for line in aligned(flat, indent)]
    for key, value in report.items():
        if key in own:
            lines += [(line, None) for line in own[key](value)]
        elif value and isinstance(value, Mapping):
            lines += [(f"{indent}{label(key)}", "bold"), *report_lines(value, indent + INDENT)]
        elif value and isinstance(value, list):
            lines += [(f"{indent}{label(key)}", "bold"), *((indent + INDENT + item_line(v), None) for v in value)]
    return lines


def item_line(item: object) -> str:
    """One list item on one line: a mapping as `key value, key value`, anything else as `scalar`."""
    if isinstance(item, Mapping):
        return ", ".join(f"{label(k)} {entry(k, v) if not isinstance(v, Mapping | list) else item_line(v)}"
                         for k, v in item.items())
    if isinstance(item, list):
        return ", ".join(item_line(v) for v in item) or "none"
    return scalar(item)
