"""Case tables kept as data: tests/data/NAME_cases.toml holds, for a test module, one array of rows per test (or
module-level table) that reads it, with the comments that explain a case beside its row."""

from __future__ import annotations

import tomllib
from pathlib import Path

DATA = Path(__file__).parent / "data"


def case_tables(name: str) -> dict[str, list]:
    """The tables of tests/data/NAME_cases.toml by key: a row of several values as a tuple (the shape of a
    `pytest.mark.parametrize` row), a row of one value as that value. Raises `FileNotFoundError` for a missing
    file, `tomllib.TOMLDecodeError` for a malformed one."""
    tables = tomllib.loads((DATA / f"{name}_cases.toml").read_text(encoding="utf-8"))
    return {key: [tuple(row) if isinstance(row, list) else row for row in rows] for key, rows in tables.items()}
