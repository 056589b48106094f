#!/bin/bash
# A minimal Debian root (debootstrap --variant=minbase) of SUITE for this machine's architecture, from the
# Debian mirror that apt uses here, kept as a tarball outside the repository:
#   Tests/Debian/debian-root.sh [SUITE]    (default bookworm, Debian 12)
# prints ${TRELLIS_CACHE:-~/.cache/trellis}/debian-SUITE-ARCH-minbase.tar; beside it, .source names the mirror.
# Idempotent: an existing tarball made from the same mirror is only printed; it is made anew when the mirror
# changes. A failed or interrupted run leaves no tarball behind. Needs root (debootstrap).
set -euo pipefail

suite=${1:-bookworm}
cache="${TRELLIS_CACHE:-$HOME/.cache/trellis}"
arch=$(dpkg --print-architecture)
tarball="$cache/debian-$suite-$arch-minbase.tar"

# The Debian mirror apt uses here: the first URI that serves the suite in /etc/apt/sources.list.d/*.sources
# (deb822), then in /etc/apt/sources.list and /etc/apt/sources.list.d/*.list.
deb822=$(for file in /etc/apt/sources.list.d/*.sources; do if [ -f "$file" ]; then cat "$file"; echo; fi; done)
one_line=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
mirror=$(
    awk -v suite="$suite" '
        /^URIs:/ { uris = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) ok = 1 }
        /^$/ { if (ok && uris != "") print uris; uris = ""; ok = 0 }' <<<"$deb822"
    awk -v suite="$suite" '
        $1 == "deb" { n = 2; if ($2 ~ /^\[/) { while ($n !~ /\]$/) n++; n++ } if ($(n + 1) == suite) print $n }' <<<"$one_line"
)
mirror=$(head -n 1 <<<"$mirror")
mirror=${mirror:-http://deb.debian.org/debian}

if [ -f "$tarball" ] && [ "$(cat "$tarball.source" 2>/dev/null)" = "$mirror" ]; then
    echo "$tarball"
    exit 0
fi

[ "$(id -u)" = 0 ] || { echo "debian-root.sh: debootstrap needs root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "debian-root.sh: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
mkdir -p "$cache"
fresh=$(mktemp -d /var/tmp/trellis-debootstrap.XXXXXX)
trap 'rm -rf "$fresh" "$tarball.partial.$$"' EXIT
echo "debootstrap --variant=minbase $suite from $mirror into $tarball (once)" >&2
started=$SECONDS
if ! debootstrap --variant=minbase --arch="$arch" "$suite" "$fresh/root" "$mirror" >"$fresh/debootstrap.log" 2>&1; then
    tail -n 20 "$fresh/debootstrap.log" >&2
    echo "debian-root.sh: debootstrap failed" >&2
    exit 1
fi
# apt's download cache and package lists are not part of a clean root.
find "$fresh/root/var/cache/apt/archives" -name '*.deb' -delete
find "$fresh/root/var/lib/apt/lists" -maxdepth 1 -type f ! -name lock -delete
tar -C "$fresh/root" -cf "$tarball.partial.$$" .
mv "$tarball.partial.$$" "$tarball"
echo "$mirror" > "$tarball.source"
echo "made $tarball in $((SECONDS - started)) s" >&2
echo "$tarball"
