#!/bin/sh
# Creates the two Python environments the Socket.IO tests drive real clients from, in a cache outside
# the repository: Engine.IO 3 / Socket.IO 4 (python-socketio 4.6.1, python-engineio 3.14.2) and
# Engine.IO 4 / Socket.IO 5 (python-socketio 5.x). Idempotent: an environment whose marker file names
# the same requirements is left alone, so a second run takes well under a second.
set -eu

CACHE="${TRELLIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trellis}"
PYTHON="${PYTHON:-python3}"

# Debian's python3 makes virtual environments only with python3-venv installed.
if ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
    echo "installing python3-venv"
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
fi

make_env() {
    dir="$CACHE/$1"; shift
    wanted="$*"
    if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.requirements" 2>/dev/null)" = "$wanted" ]; then
        return 0
    fi
    echo "creating $dir ($wanted)"
    rm -rf "$dir"
    mkdir -p "$CACHE"
    "$PYTHON" -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    printf '%s' "$wanted" > "$dir/.requirements"
}

make_env sio3 "python-socketio==4.6.1" "python-engineio==3.14.2" "requests>=2.25,<3" "websocket-client>=1.0,<2"
make_env sio5 "python-socketio>=5.11,<6" "python-engineio>=4.9,<5" "requests>=2.25,<3" "websocket-client>=1.0,<2"
