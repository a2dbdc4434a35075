"""The `twin` command line: the commands by group (memories, forget, status, run, sources, transfer), their
argument types (`arguments`), the parser and `main` (`app`), and one output layer (`output`: `show` for every
line, `emit` for `--json`, `report_lines` for reports read by people).

Read commands take `--json`. An invalid setting prints one line and exits 2.
"""

from twin.cli.app import build_parser, main
from twin.cli.output import emit, print_json, show

__all__ = ["build_parser", "emit", "main", "print_json", "show"]
