"""The argument types of the `twin` command line: each turns bad input into one argparse error line."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from pathlib import Path

from twin.exceptions import InvalidInput
from twin.limits import LIMIT_MAX, checked_limit
from twin.memory import normal_time


def whole(value: str) -> int:
    """A whole number ≥ 1. Raises `argparse.ArgumentTypeError` (one line naming the value) otherwise."""
    try:
        number = int(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from exc
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value!r}")
    return number


def positive(value: str) -> int:
    """A count or limit: a whole number ≥ 1, capped at SQLite's largest integer."""
    from twin.store.ids import INTEGER_MAX

    return min(whole(value), INTEGER_MAX)


def limit(value: str) -> int:
    """A `--limit` (or `-n`): a whole number 1-200, the one rule of every interface (`twin.limits.checked_limit`).
    Raises `argparse.ArgumentTypeError` with its words otherwise."""
    number = whole(value)
    try:
        return checked_limit(number)
    except InvalidInput:  # the rule's own words name the API's since and after, which no command has
        said = f"limit must be 1-{LIMIT_MAX}, at most {LIMIT_MAX} per call (got {number})"
        raise argparse.ArgumentTypeError(said) from None


def share(value: str) -> float:
    """A share 0..1 ("0.4"); anything else is an argparse error."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number 0..1: {value!r}") from None
    if not 0 <= number <= 1:
        raise argparse.ArgumentTypeError(f"not a number 0..1: {value!r}")
    return number


def memory_id(value: str) -> int:
    """A memory id: plain digits, ≥ 1 (`twin.memory.memory_id_of`, the rule of every interface), that fits
    SQLite's INTEGER (≤ 2**63 - 1)."""
    from twin.memory import memory_id_of

    try:
        number = memory_id_of(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    from twin.store.ids import INTEGER_MAX

    if number > INTEGER_MAX:
        raise argparse.ArgumentTypeError(f"no memory has id {value}")
    return number


def namespace_name(value: str) -> str:
    """A namespace name (`twin.namespaces.checked`, the one rule)."""
    from twin.namespaces import NamespaceError, checked

    try:
        return checked(value)
    except NamespaceError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("namespace ")) from exc


def port(value: str) -> int:
    """A TCP port, 1-65535."""
    number = whole(value)
    if number > 65535:
        raise argparse.ArgumentTypeError(f"not a port (1-65535): {value!r}")
    return number


def folder(value: str) -> Path:
    """An existing folder (`~` expanded), as an absolute path."""
    path = Path(value).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a folder: {value!r}")
    return path.resolve()


def time_point(value: str) -> str:
    """An ISO-8601 time, returned as UTC `YYYY-MM-DDTHH:MM:SSZ`, the form the store compares
    (`twin.memory.normal_time`, the reading the API's times get too)."""
    try:
        return normal_time(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO-8601 time: {value!r}") from exc


def private_output(value: str):
    """`-o FILE` of a command that writes memories (`twin export`): `-` is stdout; a file is opened for writing
    with mode 0600 (an existing one made 0600: it holds every memory, secrets too) and never through a symbolic link
    (`O_NOFOLLOW`: a link put in the file's place would have the export overwrite its target and make it 0600; a
    breaker run). Raises `argparse.ArgumentTypeError` with the reason."""
    if value == "-":
        return sys.stdout
    try:
        fd = os.open(value, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise argparse.ArgumentTypeError(f"{value!r} is a symbolic link: not followed (write to the file "
                                             "itself)") from exc
        raise argparse.ArgumentTypeError(f"cannot write {value!r}: {exc.strerror or exc}") from exc
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, "w", encoding="utf-8")
