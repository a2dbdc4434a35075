#!/usr/bin/env bash
# Run twin as a systemd user service from this checkout.
#
#   bash scripts/install-service.sh [FOLDER...]
#
# 1. scripts/install.sh (system packages, .venv);
# 2. ~/.config/twin/twin.toml and ~/.config/twin/env (0600) from config/ when they do not exist yet;
#    FOLDERs, if given, become `files_roots` in twin.toml unless it already sets files_roots;
# 3. systemd/twin.service -> ~/.config/systemd/user/twin.service, with ExecStart pointing at this
#    checkout's .venv/bin/twin; then `systemctl --user daemon-reload` and `enable --now twin`
#    (a running twin is restarted so it picks up the new unit and code).
# Re-running it is safe. Uninstall: systemctl --user disable --now twin && rm ~/.config/systemd/user/twin.service
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The unit reads %h/.config/twin/env and keeps its data in %h/.local/share/twin (the user manager does not
# usually set XDG_CONFIG_HOME/XDG_DATA_HOME), so these paths are fixed to match it.
CONFIG_DIR="$HOME/.config/twin"
DATA_DIR="$HOME/.local/share/twin"
UNIT_DIR="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"

say() { printf 'install-service: %s\n' "$*"; }
die() { printf 'install-service: error: %s\n' "$*" >&2; exit 1; }

folders=()
for folder in "$@"; do
    [ -d "$folder" ] || die "not a folder: $folder"
    folders+=("$(cd "$folder" && pwd)")
done

bash "$ROOT/scripts/install.sh"
TWIN_BIN="$ROOT/.venv/bin/twin"
[ -x "$TWIN_BIN" ] || die "$TWIN_BIN is missing after install.sh"

# -- config and data dirs ---------------------------------------------------------------------------------
mkdir -p "$CONFIG_DIR" "$DATA_DIR"
chmod 0700 "$CONFIG_DIR" "$DATA_DIR"
if [ ! -e "$CONFIG_DIR/twin.toml" ]; then
    install -m 0600 "$ROOT/config/twin.example.toml" "$CONFIG_DIR/twin.toml"
    say "wrote $CONFIG_DIR/twin.toml (every setting commented out at its default)"
fi
if [ ! -e "$CONFIG_DIR/env" ]; then
    install -m 0600 "$ROOT/config/env.example" "$CONFIG_DIR/env"
    say "wrote $CONFIG_DIR/env (mode 0600; no secrets are needed for the embedded defaults)"
fi
if [ "${#folders[@]}" -gt 0 ]; then
    if grep -Eq '^[[:space:]]*files_roots[[:space:]]*=' "$CONFIG_DIR/twin.toml"; then
        say "$CONFIG_DIR/twin.toml already sets files_roots; left it as it is (edit it to change the folders)"
    else
        "$ROOT/.venv/bin/python" - "$CONFIG_DIR/twin.toml" "${folders[@]}" <<'PY'
import json, sys, tomllib
path, roots = sys.argv[1], sys.argv[2:]
line = "files_roots = [" + ", ".join(json.dumps(r, ensure_ascii=False) for r in roots) + "]\n"
with open(path, encoding="utf-8") as f:
    text = f.read()
tomllib.loads(text + "\n" + line)  # refuse to write a file twin could not read
with open(path, "a", encoding="utf-8") as f:
    f.write(("" if text.endswith("\n") or not text else "\n") + "\n# added by scripts/install-service.sh\n" + line)
PY
        say "twin will learn from: ${folders[*]} (files_roots in $CONFIG_DIR/twin.toml)"
    fi
fi

# -- the unit ---------------------------------------------------------------------------------------------
# ExecStart takes a quoted path; "%" starts a systemd specifier and must be doubled.
exec_path="${TWIN_BIN//%/%%}"
needs_quotes='[[:space:]"\\]'
if [[ "$exec_path" =~ $needs_quotes ]]; then
    exec_path="${exec_path//\\/\\\\}"
    exec_path="\"${exec_path//\"/\\\"}\""
fi
mkdir -p "$UNIT_DIR"
tmp="$(mktemp "$UNIT_DIR/.twin.service.XXXXXX")"
while IFS= read -r line || [ -n "$line" ]; do
    if [[ "$line" == ExecStart=* ]]; then
        printf 'ExecStart=%s up\n' "$exec_path"
    else
        printf '%s\n' "$line"
    fi
done <"$ROOT/systemd/twin.service" >"$tmp"
chmod 0644 "$tmp"
mv "$tmp" "$UNIT_DIR/twin.service"
say "wrote $UNIT_DIR/twin.service (ExecStart=$exec_path up)"

if ! systemctl --user show-environment >/dev/null 2>&1; then
    die "no systemd user manager is reachable from this shell (no login session, or no systemd). The unit is in
place: from a login session run   systemctl --user daemon-reload && systemctl --user enable --now twin"
fi
was_active=no
systemctl --user is-active --quiet twin.service && was_active=yes
systemctl --user daemon-reload
systemctl --user enable --now twin.service
if [ "$was_active" = yes ]; then
    say "twin was running: restarting it on the new unit and code"
    systemctl --user restart twin.service
fi
say "twin is $(systemctl --user is-active twin.service || true)"

if [ "$(loginctl show-user "${USER:-$(id -un)}" --property=Linger --value 2>/dev/null || true)" != yes ]; then
    say "to keep twin running when you are not logged in:  loginctl enable-linger ${USER:-$(id -un)}"
fi
say "watch it with:  journalctl --user -u twin -f      (or: $TWIN_BIN activity -f)"
