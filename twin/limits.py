"""How many results one call may ask for: one rule for the CLI, the API, the MCP tools and the page (DESIGN.md
invariant 9), in a module light enough for the command line to check its arguments before it loads anything."""

from __future__ import annotations

import operator

from twin.exceptions import InvalidInput

LIMIT_MAX = 200
"""At most this many results per call (seed 000: "capped at 200 per call")."""
LIMIT_RULE = f"limit must be 1-{LIMIT_MAX} (at most {LIMIT_MAX} per call; ask for older ones with since or after)"
"""What a limit out of range is told, by every interface."""


def checked_limit(limit: int, field: str = "limit") -> int:
    """`limit` when it is 1..`LIMIT_MAX`. A larger one is refused, not quietly cut to 200 (a caller asking for
    1000 would take 200 for everything there is). Raises `InvalidInput` (`field`, `LIMIT_RULE` worded for it)
    otherwise, and for a value that is not an integer (`True` is not a limit of 1, 2.5 not 2): the API answers it
    422, the MCP tools as a tool error, the CLI as a usage error."""
    try:
        value = None if isinstance(limit, bool) else operator.index(limit)
    except TypeError:
        value = None
    if value is None or not 1 <= value <= LIMIT_MAX:
        raise InvalidInput(LIMIT_RULE.replace("limit", field, 1), field=field)
    return value
