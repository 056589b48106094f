#!/bin/sh
# Creates the Python environment the email tests run their SMTP server from (Tests/Notifications/smtp_server.py):
# aiosmtpd 1.4 from PyPI, in a cache outside the repository. Prints the environment's python on standard output.
# Idempotent: an environment whose marker file names the same requirements is left alone, so a second run takes
# well under a second.
set -eu

CACHE="${TRELLIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trellis}"
PYTHON="${PYTHON:-python3}"
DIR="$CACHE/smtp"
WANTED="aiosmtpd>=1.4.6,<2"

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
    "$DIR/bin/python" -m pip install --quiet --disable-pip-version-check "$WANTED" >&2
    printf '%s' "$WANTED" > "$DIR/.requirements"
fi
echo "$DIR/bin/python"
