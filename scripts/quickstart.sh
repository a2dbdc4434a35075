#!/usr/bin/env bash
# Set twin up (scripts/install.sh) and run the daemon in the foreground on its embedded defaults:
# no API keys, a private Redis on a unix socket, the local embedding model. Stop it with Ctrl-C.
#
#   bash scripts/quickstart.sh FOLDER...
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [ "$#" -eq 0 ]; then
    echo "usage: bash scripts/quickstart.sh FOLDER...   (the folders twin learns from, e.g. ~/Documents)" >&2
    exit 2
fi
args=()
for folder in "$@"; do
    [ -d "$folder" ] || { echo "quickstart: not a folder: $folder" >&2; exit 2; }
    args+=(--files "$(cd "$folder" && pwd)")
done

bash "$ROOT/scripts/install.sh"
cd "$ROOT"

# Where this twin keeps things, as its settings say (TWIN_* variables or ~/.config/twin/twin.toml may move them).
paths="$(.venv/bin/python -c '
from twin.settings import config_file_path, load_settings
s = load_settings()
print(f"  data:    {s.data_dir}  (SQLite store, vector index, Redis AOF; mode 0700)")
print(f"  runtime: {s.runtime_dir}  (private Redis socket)")
print(f"  config:  {config_file_path()}  (optional; see config/twin.example.toml)")' 2>/dev/null || true)"

cat <<MSG

twin: starting the daemon on its embedded defaults, learning from: $*
${paths}

From another terminal, in $ROOT:
  .venv/bin/twin recall "what did I write about the garden?"   # recall by meaning
  .venv/bin/twin status                                         # counts, queues, degraded modes
  .venv/bin/twin activity -f                                    # follow what it does
Stop it with Ctrl-C (it drains its workers and stops its Redis).

MSG
exec .venv/bin/twin up "${args[@]}"
