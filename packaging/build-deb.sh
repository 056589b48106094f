#!/bin/sh
# Builds the Debian package trellis_<version>_<arch>.deb around a trellis binary that SwiftPM built with the
# Swift runtime linked in statically (`make deb` builds it, then runs this):
#   packaging/build-deb.sh BINARY OUTDIR [PACKAGE_VERSION]
# The package's version is the binary's (`trellis --version`), which must be the first entry of CHANGELOG.md;
# PACKAGE_VERSION packages the same binary under another version (the package check uses it to make an
# older package to upgrade from). The files are staged under .build/deb/, debhelper (packaging/debian/) makes
# the package, and the .deb is copied to OUTDIR. Prints the .deb's path last.
set -eu

binary=$1
outdir=$2
override=${3:-}
repo=$(cd "$(dirname "$0")/.." && pwd)
work="$repo/.build/deb"

fail() { echo "build-deb.sh: $*" >&2; exit 1; }
[ -x "$binary" ] || fail "$binary is not an executable"
for tool in dpkg-buildpackage dh dpkg-shlibdeps readelf help2man; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is missing (make deb installs dpkg-dev, debhelper, binutils and help2man)"
done

# The binary needs only C libraries: none of the Swift runtime's shared libraries.
swift_libraries=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' \
    | grep -E '^lib(swift|Foundation|_Foundation|dispatch|BlocksRuntime)' || true)
[ -z "$swift_libraries" ] || fail "$binary needs the Swift runtime's shared libraries: $swift_libraries (build it with --static-swift-stdlib)"

# `trellis --version` prints "VERSION (commit COMMIT)".
version_line=$("$binary" --version)
binary_version=${version_line%% *}
commit=$(printf '%s\n' "$version_line" | sed -n 's/.*(commit \([^)]*\)).*/\1/p')
[ -n "$commit" ] || fail "trellis --version printed \"$version_line\", without its commit"
changelog_version=$(sed -n 's/^## \([^ ]*\) (\([0-9-]*\))$/\1/p' "$repo/CHANGELOG.md" | head -n 1)
[ "$changelog_version" = "$binary_version" ] \
    || fail "the binary is version $binary_version, but CHANGELOG.md's first entry is ${changelog_version:-missing}: add an entry for it"
version=${override:-$binary_version}
maintainer=$(sed -n 's/^Maintainer: //p' "$repo/packaging/debian/control")

rm -rf "$work"
stage="$work/trellis-$version"
root="$stage/root"
mkdir -p "$stage"
cp -R "$repo/packaging/debian" "$stage/debian"

# debian/changelog from CHANGELOG.md: each "## VERSION (DATE)" entry with its "- " lines as "  * " items,
# wrapped at 78 columns, dated at noon UTC of its day.
{
    if [ "$version" != "$binary_version" ]; then
        printf 'trellis (%s) unstable; urgency=medium\n\n' "$version"
        printf '  * Trellis %s (commit %s) packaged as %s.\n\n' "$binary_version" "$commit" "$version"
        printf ' -- %s  %s\n\n' "$maintainer" "$(LC_ALL=C date -u -R)"
    fi
    awk -v maintainer="$maintainer" '
        function flush_item() {
            if (item == "") return
            n = split(item, words, " "); line = "  *"
            for (i = 1; i <= n; i++) {
                if (length(line) + 1 + length(words[i]) > 78 && line != "  *") { print line; line = "   " }
                line = line " " words[i]
            }
            print line; item = ""
        }
        function close_entry() {
            if (!open) return
            flush_item()
            cmd = "LC_ALL=C date -u -R -d \"" date " 12:00:00 UTC\""; cmd | getline stamp; close(cmd)
            printf "\n -- %s  %s\n\n", maintainer, stamp
            open = 0
        }
        /^## [^ ]+ \([0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]\)$/ {
            close_entry()
            date = substr($3, 2, 10)
            printf "trellis (%s) unstable; urgency=medium\n\n", $2
            open = 1; next
        }
        /^## / { close_entry(); next }
        open && /^- / { flush_item(); item = substr($0, 3); next }
        open && /^  +[^ ]/ && item != "" { sub(/^ +/, ""); item = item " " $0; next }
        open && /^$/ { flush_item(); next }
        END { close_entry() }
    ' "$repo/CHANGELOG.md"
} | sed -e '$ { /^$/ d; }' > "$stage/debian/changelog"

# The files of the package, as they are installed.
install -D -m 0755 "$binary" "$root/usr/bin/trellis"

# trellis(1), from `trellis --help`.
help2man --no-info --section=1 --name="headless MQTT relay for small IoT systems" \
    --version-string="$binary_version" "$binary" > "$work/trellis.1" || fail "help2man failed"
install -D -m 0644 "$work/trellis.1" "$root/usr/share/man/man1/trellis.1"

# The units point at /usr/bin/trellis and read /etc/trellis/trellis.yaml. They run as the system user trellis
# that postinst creates (instead of a DynamicUser= one): the state directory keeps one owner across upgrades,
# and purging knows where the state is.
for unit in trellis.service trellis@.service; do
    sed -e 's|^ExecStart=/usr/local/bin/trellis run|ExecStart=/usr/bin/trellis run --config /etc/trellis/trellis.yaml|' \
        -e 's|/usr/local/bin/trellis|/usr/bin/trellis|g' \
        -e 's|^# Installed by `make install` as /etc/systemd/system/\([^ ]*\) (PREFIX and DESTDIR respected)|# Installed by the Debian package trellis as /lib/systemd/system/\1|' \
        -e '/^DynamicUser=yes$/d' \
        -e 's|^# Its own unprivileged user, created at first start\.$|# The system user trellis, which the package creates.|' \
        -e 's|^# One unprivileged user, created at first start, shared by every instance\.$|# The system user trellis, which the package creates, shared by every instance.|' \
        "$repo/deploy/$unit" > "$work/$unit"
    if grep -q -e '/usr/local' -e 'DynamicUser' -e 'created at first start' "$work/$unit" \
       || ! grep -q '^ExecStart=/usr/bin/trellis run --config /etc/trellis/trellis.yaml' "$work/$unit"; then
        fail "deploy/$unit changed in a way this script does not rewrite: check its sed lines"
    fi
    install -D -m 0644 "$work/$unit" "$root/lib/systemd/system/$unit"
done

# /etc/trellis/trellis.yaml: `trellis config example` with the values of the service.
"$binary" config example | awk '
    NR == 1 { print "# /etc/trellis/trellis.yaml: the configuration of trellis.service, every key at its default but the"
              print "# broker (the system Mosquitto on loopback) and the state directory. An upgrade of the package keeps"
              print "# your edits. trellis.service runs `trellis run --config /etc/trellis/trellis.yaml` with --broker,"
              print "# --state, --log-format and --health on its command line, which win over the same keys here;"
              print "# change those with `systemctl edit trellis`."
              next }
    NR == 2 { next }
    /^[a-z_]+:$/ { section = $1 }
    section == "broker:" && /^  address: ""$/ { print "  address: \"127.0.0.1:1883\""; next }
    section == "state:" && /^  dir: "trellis-state"$/ { print "  dir: \"/var/lib/trellis\""; next }
    { print }
' > "$work/trellis.yaml"
grep -q '^  address: "127.0.0.1:1883"$' "$work/trellis.yaml" && grep -q '^  dir: "/var/lib/trellis"$' "$work/trellis.yaml" \
    || fail "trellis config example changed in a way this script does not rewrite"
"$binary" config check "$work/trellis.yaml" >/dev/null || fail "the packaged trellis.yaml does not pass trellis config check"
install -D -m 0644 "$work/trellis.yaml" "$root/etc/trellis/trellis.yaml"
install -D -m 0644 "$repo/deploy/trellis.env.example" "$root/etc/trellis/trellis.env.example"
# What Trellis needs of the system's Mosquitto: not a conffile under /etc/mosquitto, since it would change any
# broker it lands in. postinst copies it to /etc/mosquitto/conf.d/trellis.conf only while Mosquitto has Debian's
# untouched configuration, and otherwise prints what to add (docs/packaging.md, "The broker").
install -D -m 0644 "$repo/deploy/mosquitto-trellis.conf" "$root/usr/share/trellis/mosquitto-trellis.conf"

# The NOTICE files of the Swift packages linked into the binary (Apache-2.0 asks for them with the binary).
notices="$root/usr/share/doc/trellis/NOTICE.bundled"
mkdir -p "$(dirname "$notices")"
: > "$notices"
for notice in "$repo"/.build/checkouts/*/NOTICE*; do
    [ -f "$notice" ] || continue
    printf '%s\n== %s ==\n\n' "$([ -s "$notices" ] && echo)" "$(basename "$(dirname "$notice")")" >> "$notices"
    cat "$notice" >> "$notices"
done
[ -s "$notices" ] || rm -f "$notices"

( cd "$stage" && dpkg-buildpackage --build=binary --no-sign >"$work/dpkg-buildpackage.log" 2>&1 ) \
    || { tail -n 40 "$work/dpkg-buildpackage.log" >&2; fail "dpkg-buildpackage failed (log: $work/dpkg-buildpackage.log)"; }

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb="trellis_${version}_${arch}.deb"
[ -f "$work/$deb" ] || fail "dpkg-buildpackage made no $deb"
mkdir -p "$outdir"
cp "$work/$deb" "$outdir/$deb"
echo "$(cd "$outdir" && pwd)/$deb"
