#!/bin/sh
# Creates the Python environment the fault matrix (Tests/Faults/matrix.py) drives its load from, in a cache
# outside the repository: paho-mqtt 2.x (the MQTT publishers and the requester, with their acknowledgements),
# python-socketio 5 (the Socket.IO presses), requests and websocket-client (its transports). Prints the
# environment's python on standard output. Idempotent: an environment whose marker file names the same
# requirements is left alone, so a second run takes well under a second.
set -eu

CACHE="${TRELLIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trellis}"
PYTHON="${PYTHON:-python3}"
DIR="$CACHE/faults"
WANTED="paho-mqtt>=2.1,<3 python-socketio>=5.11,<6 python-engineio>=4.9,<5 requests>=2.25,<3 websocket-client>=1.0,<2"

# Debian's python3 makes virtual environments only with python3-venv installed.
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
    # shellcheck disable=SC2086 # one requirement per word
    "$DIR/bin/python" -m pip install --quiet --disable-pip-version-check $WANTED >&2
    printf '%s' "$WANTED" > "$DIR/.requirements"
fi
echo "$DIR/bin/python"
