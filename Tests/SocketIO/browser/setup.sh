#!/bin/sh
# Makes what Tests/SocketIO/browser/p2o_browser.py needs, in a cache outside the repository:
#   - Debian's headless Chromium and its ChromeDriver (apt, installed only when missing);
#   - a Python venv with Selenium (PyPI), remade only when its marker names other requirements;
#   - the official socket.io browser bundles of the 1.x and 2.x generations, which are NOT kept in
#     the repository: they are taken from the registry packages below and checked by sha256.
# Idempotent: a second run installs nothing, prints only the cache directory and takes ~1 s.
# The LAST stdout line is always the cache directory (the bundles and the venv live there):
#   ${TRELLIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trellis}/browser
#
# Bundles (socket.io-client is MIT licensed, Copyright (c) 2014 Guillermo Rauch):
#   socket.io-1.4.5.js  socket.io-client 1.4.5 with engine.io-client 1.6.8 (the P2O web app's
#       ^1.4.5), the unminified browserify dist build. From PyPI: the sdist socketIO-client-2 0.7.5
#       (socketIO-client-2-0.7.5.tar.gz, sha256 6a493c46d830200774b72f4859fe5a0b85ba98c83fd650db31e082fb5bf6c933),
#       path socketIO-client-2-0.7.5/socketIO_client/tests/node_modules/socket.io-client/socket.io.js;
#       the bundle has no version string, so the package.json files beside it are checked
#       (socket.io-client 1.4.5, engine.io-client 1.6.8, both "license": "MIT").
#   socket.io-2.3.0.js  socket.io-client 2.3.0 (engine.io-client 3.4.x), the official dist build,
#       header "Socket.IO v2.3.0 ... Released under the MIT License". From Debian bookworm: the
#       package onionshare-cli 2.6-5~deb12u1 (debian/copyright: Expat), path
#       /usr/share/onionshare-cli/static/js/socket.io.js (downloaded with apt-get download, not installed).
# No socket.io-client 1.3.x (engine.io-client 1.5) bundle was found in either registry.
set -eu

CACHE="${TRELLIS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trellis}/browser"
PYTHON="${PYTHON:-python3}"
SELENIUM="selenium==4.38.0"
SIO1_SHA=d55c53253dafdb2ef27506cc7db9aa5e77bd90baa53cb5daf74f337d6980044f
SIO1_SDIST_SHA=6a493c46d830200774b72f4859fe5a0b85ba98c83fd650db31e082fb5bf6c933
SIO2_SHA=6d09ab65ee323e742b2d363ed6063295f34c06e19f9d3fc72ac0865fef57baaa

fail() { echo "browser setup: $*" >&2; exit 1; }
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
sha() { sha256sum "$1" | cut -d' ' -f1; }
mkdir -p "$CACHE"

# 1. Chromium and ChromeDriver from Debian (same version, so the driver speaks to the browser).
missing=""
for pkg in chromium chromium-driver; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
    echo "installing$missing" >&2
    $SUDO apt-get update -qq >&2 || fail "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2 \
        || fail "apt-get install$missing failed"
fi
[ -x /usr/bin/chromedriver ] || fail "no /usr/bin/chromedriver after installing chromium-driver"

# 2. The venv with Selenium (the same marker-file pattern as ../setup-venvs.sh).
if ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    echo "installing python3-venv" >&2
    $SUDO apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >&2 \
        || fail "python3-venv could not be installed"
fi
VENV="$CACHE/venv"
if ! { [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/.requirements" 2>/dev/null)" = "$SELENIUM" ]; }; then
    echo "creating $VENV ($SELENIUM)" >&2
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || fail "could not make the venv $VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$SELENIUM" >&2 \
        || fail "pip could not install $SELENIUM"
    printf '%s' "$SELENIUM" > "$VENV/.requirements"
fi

# 3. The bundles; a present file with the right sha256 is kept as it is.
WORK=""
cleanup() { [ -z "$WORK" ] || rm -rf "$WORK"; }
trap cleanup EXIT
workdir() { [ -n "$WORK" ] || WORK=$(mktemp -d); }

if [ "$(sha "$CACHE/socket.io-1.4.5.js" 2>/dev/null)" != "$SIO1_SHA" ]; then
    echo "fetching socket.io-client 1.4.5 from PyPI (socketIO-client-2 0.7.5)" >&2
    workdir
    # --require-hashes pins the sdist itself; pip prepares its metadata (a plain setup.py) to download it.
    echo "socketIO-client-2==0.7.5 --hash=sha256:$SIO1_SDIST_SHA" > "$WORK/req.txt"
    "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
        --require-hashes -r "$WORK/req.txt" -d "$WORK" >&2 || fail "pip download socketIO-client-2==0.7.5 failed"
    mods=socketIO-client-2-0.7.5/socketIO_client/tests/node_modules
    tar -xzf "$WORK/socketIO-client-2-0.7.5.tar.gz" -C "$WORK" \
        "$mods/socket.io-client/socket.io.js" "$mods/socket.io-client/package.json" "$mods/engine.io-client/package.json" \
        || fail "socketIO-client-2-0.7.5.tar.gz has no socket.io-client bundle"
    "$VENV/bin/python" - "$WORK/$mods" <<'EOF' || fail "socket.io-client 1.4.5: unexpected package.json versions"
import json, sys
for name, version in (("socket.io-client", "1.4.5"), ("engine.io-client", "1.6.8")):
    meta = json.load(open(f"{sys.argv[1]}/{name}/package.json"))
    assert (meta["version"], meta["license"]) == (version, "MIT"), (name, meta["version"], meta["license"])
EOF
    f="$WORK/$mods/socket.io-client/socket.io.js"
    [ "$(sha "$f")" = "$SIO1_SHA" ] || fail "socket.io-client 1.4.5 bundle: sha256 $(sha "$f"), expected $SIO1_SHA"
    cp "$f" "$CACHE/socket.io-1.4.5.js.tmp" && mv "$CACHE/socket.io-1.4.5.js.tmp" "$CACHE/socket.io-1.4.5.js"
fi

if [ "$(sha "$CACHE/socket.io-2.3.0.js" 2>/dev/null)" != "$SIO2_SHA" ]; then
    echo "fetching socket.io-client 2.3.0 from Debian (onionshare-cli)" >&2
    workdir
    # apt-get download needs no root; as root, keep apt from dropping to _apt (it cannot write here).
    ( cd "$WORK" && apt-get download -qq -o APT::Sandbox::User=root onionshare-cli >&2 ) || {
        $SUDO apt-get update -qq >&2
        ( cd "$WORK" && apt-get download -qq -o APT::Sandbox::User=root onionshare-cli >&2 )
    } || fail "apt-get download onionshare-cli failed"
    dpkg-deb -x "$WORK"/onionshare-cli_*.deb "$WORK/deb" || fail "could not unpack onionshare-cli"
    f="$WORK/deb/usr/share/onionshare-cli/static/js/socket.io.js"
    [ -f "$f" ] || fail "onionshare-cli has no static/js/socket.io.js"
    head -c 200 "$f" | grep -q "Socket.IO v2.3.0" || fail "onionshare-cli socket.io.js is not Socket.IO v2.3.0"
    head -c 200 "$f" | grep -q "Released under the MIT License" || fail "onionshare-cli socket.io.js: no MIT header"
    [ "$(sha "$f")" = "$SIO2_SHA" ] || fail "socket.io-client 2.3.0 bundle: sha256 $(sha "$f"), expected $SIO2_SHA"
    cp "$f" "$CACHE/socket.io-2.3.0.js.tmp" && mv "$CACHE/socket.io-2.3.0.js.tmp" "$CACHE/socket.io-2.3.0.js"
fi

echo "$CACHE"
