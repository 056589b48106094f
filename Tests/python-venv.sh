#!/bin/sh
# Makes (or finds) a Python virtual environment of the tests in a cache outside the repository:
#   Tests/python-venv.sh NAME REQUIREMENT...
# creates ~/.cache/trellis/NAME with the requirements from PyPI and prints its python on standard output.
# Idempotent: an environment whose marker file names the same requirements is left alone, so a second run takes
# well under a second. Installs Debian's python3-venv first when python3 cannot make environments.
set -eu

CACHE="${TRELLIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trellis}"
PYTHON="${PYTHON:-python3}"
DIR="$CACHE/$1"
shift
WANTED="$*"

if ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    echo "installing python3-venv" >&2
    $SUDO apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >&2
fi

if [ ! -x "$DIR/bin/python" ] || [ "$(cat "$DIR/.requirements" 2>/dev/null)" != "$WANTED" ]; then
    echo "creating $DIR ($WANTED)" >&2
    rm -rf "$DIR"
    mkdir -p "$CACHE"
    "$PYTHON" -m venv "$DIR"
    "$DIR/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2
    printf '%s' "$WANTED" > "$DIR/.requirements"
fi
echo "$DIR/bin/python"
