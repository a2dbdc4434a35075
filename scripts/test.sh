#!/usr/bin/env bash
# The test suite: set twin up with the test tools (scripts/install.sh --test: strace), then run pytest.
# Arguments go to pytest. The tests start their own private redis-server, so only the binary must be installed.
# Two pytest-xdist workers, one test file each at a time (--dist loadfile: a module's fixtures, such as the page's
# API and browser, are built once); most of the suite waits on processes it started, so two overlap well on two
# cores. `-n 0` among the arguments runs it in one process.
#
#   bash scripts/test.sh                 # everything
#   bash scripts/test.sh -k recall -x    # a selection
#   bash scripts/test.sh -n 0 -k recall  # in this process (pdb, print debugging)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/install.sh" --test
cd "$ROOT"
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile "$@"
