#!/usr/bin/env bash
# The test suite: set twin up with the test tools (scripts/install.sh --test: strace), then run pytest.
# Arguments go to pytest. The tests start their own private redis-server, so only the binary must be installed.
#
#   bash scripts/test.sh                 # everything
#   bash scripts/test.sh -k recall -x    # a selection
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/install.sh" --test
cd "$ROOT"
exec .venv/bin/python -m pytest -q "$@"
