#!/bin/bash
# The Debian package on a clean Debian 12: `make deb-check` (and so `make test`) runs
#   Tests/Debian/check-package.sh BINARY
# with BINARY the trellis that `make deb` packages (release, Swift runtime linked statically). It
#  1. packages BINARY three times with packaging/build-deb.sh: as its own version (the package `make deb` makes),
#     as an older version to upgrade from (VERSION~previous, the same binary), and with the packaging of 0.1.0's
#     first package (VERSION~conffile, from git: it shipped /etc/mosquitto/conf.d/trellis.conf as a conffile),
#     and runs lintian on the first;
#  2. makes a minimal Debian 12 root with debootstrap from the Debian mirror apt uses here, once, cached as a
#     tarball in ${TRELLIS_CACHE:-~/.cache/trellis} (with apt's downloaded packages beside it), and unpacks it
#     afresh; nothing of Swift is in it;
#  3. in a chroot of it, with Debian's untouched Mosquitto: installs the 0.1.0 package with `apt-get install
#     ./trellis_….deb` (apt resolves the dependencies and installs the recommended mosquitto), starts Mosquitto
#     from its own package (`mosquitto -c /etc/mosquitto/mosquitto.conf`, as the mosquitto user, reading the
#     conf.d snippet) and Trellis from the installed unit's ExecStart line as its User= in its
#     WorkingDirectory= with its LimitNOFILE=, and asks with mosquitto_rr for a plant answer and reads a
#     button's state; edits /etc/trellis/trellis.yaml, takes the state back one schema version (as a Trellis
#     before the `probe` migration left it), upgrades to the new package, and checks that the edit, the plant
#     and the button total are still there, the state was migrated, the snippet is now the one postinst
#     writes and the configuration is 0640 root:trellis; then that removing keeps the state and purging
#     removes it and the snippet;
#  4. in the same root, Mosquitto set up with accounts beforehand (conf.d/auth.conf: a listener on 18883,
#     allow_anonymous false, a password_file and an acl_file): installs VERSION~previous, upgrades to VERSION
#     and purges, and checks after each step (and before the first) that an anonymous client is refused on
#     18883, that Mosquitto's files are byte for byte what they were, that postinst printed what to add, and
#     that Trellis still starts (it keeps trying the broker).
# The chroot's processes run in a network namespace of their own (`ip netns`), whose loopback is theirs alone:
# Mosquitto and Trellis listen on the ports the package ships (1883, 9465) without meeting anything else on
# this machine. There is no systemd in a chroot: the test starts what systemd would start, and the maintainer
# scripts' deb-systemd-invoke does nothing there (no /run/systemd/system), as in any chroot.
# Needs root (chroot, mount, ip netns). Whatever happens, it stops what it started, unmounts and removes the
# root on exit.
set -euo pipefail

binary=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache="${TRELLIS_CACHE:-$HOME/.cache/trellis}"
suite=bookworm
arch=$(dpkg --print-architecture)
timeout=60

say() { echo "deb-check: $*"; }
fail() { echo "deb-check: FAILED: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (chroot, mount, ip netns): run it as root, as CI does"
for tool in debootstrap lintian chroot ip setpriv dpkg-deb sqlite3; do
    command -v "$tool" >/dev/null || fail "$tool is missing (make deb-check installs it)"
done

work=$(mktemp -d /var/tmp/trellis-deb-check.XXXXXX)
root="$work/root"
netns="trellis-deb-check-$$"
pids=()
mosquitto_pid=

cleanup() {
    local status=$?
    set +e
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
    done
    # Anything else still running inside the root (a maintainer script's leftover, say).
    for proc in /proc/[0-9]*; do
        if [ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ]; then kill -KILL "${proc#/proc/}" 2>/dev/null; fi
    done
    ip netns delete "$netns" 2>/dev/null
    # Every mount under the root, deepest first.
    awk -v root="$root" '$2 == root || index($2, root "/") == 1 { print $2 }' /proc/self/mounts | sort -r |
        while read -r mount; do umount "$mount" 2>/dev/null || umount -l "$mount"; done
    if awk -v root="$root" 'index($2, root) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
        echo "deb-check: $root is still mounted; left in place" >&2
    else
        rm -rf "$work"
    fi
    [ "$status" = 0 ] && say "passed" || echo "deb-check: see above for what failed" >&2
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 1. the packages -------------------------------------------------------------------------------------
version=$("$binary" --version | cut -d' ' -f1)
previous="$version~previous"
say "packaging $($binary --version)"
deb=$("$repo/packaging/build-deb.sh" "$binary" "$work" | tail -n 1)
old_deb=$("$repo/packaging/build-deb.sh" "$binary" "$work" "$previous" | tail -n 1)
[ "$(basename "$deb")" = "trellis_${version}_${arch}.deb" ] || fail "the package is named $(basename "$deb")"
# The packaging of 0.1.0's first package, whose Mosquitto snippet was a conffile: the upgrade from it must remove
# that conffile (unchanged) and let postinst write the snippet instead.
conffile_packaging=dd43c71
legacy="$version~conffile"
git -C "$repo" cat-file -e "$conffile_packaging^{commit}" 2>/dev/null \
    || { [ "$(git -C "$repo" rev-parse --is-shallow-repository)" = true ] && git -C "$repo" fetch --quiet --unshallow 2>/dev/null \
         && git -C "$repo" cat-file -e "$conffile_packaging^{commit}" 2>/dev/null; } \
    || fail "commit $conffile_packaging (the packaging with the conffile snippet) is not in this clone: fetch the history"
mkdir -p "$work/legacy"
git -C "$repo" archive "$conffile_packaging" packaging deploy CHANGELOG.md | tar -C "$work/legacy" -xf -
legacy_deb=$("$work/legacy/packaging/build-deb.sh" "$binary" "$work" "$legacy" | tail -n 1)

say "lintian $(basename "$deb")"
lintian --fail-on error "$deb" || fail "lintian found errors in $(basename "$deb")"

depends=$(dpkg-deb -f "$deb" Depends)
say "Depends: $depends"
for library in libmosquitto1 libsqlite3-0 libssl3 libc6; do
    grep -q "$library" <<<"$depends" || fail "Depends lacks $library: $depends"
done
! grep -qi swift <<<"$depends" || fail "Depends names Swift: $depends"
# Packed relative relocations need glibc 2.36's loader, which dpkg-shlibdeps cannot tell from the binary.
if readelf -V "$binary" | grep -q GLIBC_ABI_DT_RELR; then
    grep -q "libc6 (>= 2.36)" <<<"$depends" || fail "the binary packs its relocations (DT_RELR) but Depends allows a glibc before 2.36: $depends"
fi
[ "$(dpkg-deb -f "$deb" Recommends)" = mosquitto ] || fail "the package does not recommend mosquitto"
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles)
grep -qx /etc/trellis/trellis.yaml <<<"$conffiles" || fail "/etc/trellis/trellis.yaml is not a conffile: $conffiles"
! grep -q /etc/mosquitto <<<"$conffiles" || fail "the package ships a file under /etc/mosquitto: $conffiles"
dpkg-deb --fsys-tarfile "$deb" | tar -tf - | grep -qx ./usr/share/trellis/mosquitto-trellis.conf \
    || fail "the package lacks /usr/share/trellis/mosquitto-trellis.conf"

# The packaged units, as systemd reads them (pointing at the binary here, which the package installs).
if analyzer=$(command -v systemd-analyze); then
    mkdir -p "$work/units"
    dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./lib/systemd/system/trellis.service \
        | sed "s|/usr/bin/trellis|$binary|" > "$work/units/trellis.service"
    dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./lib/systemd/system/trellis@.service \
        | sed "s|/usr/bin/trellis|$binary|" > "$work/units/trellis@1.service"
    verified=$("$analyzer" verify "$work/units/trellis.service" "$work/units/trellis@1.service" 2>&1) \
        && [ -z "$verified" ] || fail "systemd-analyze verify of the packaged units: $verified"
    say "systemd-analyze verify accepts the packaged units"
fi

# --- 2. the clean Debian 12 root -------------------------------------------------------------------------
tarball=$("$repo/Tests/Debian/debian-root.sh" "$suite")
mirror=$(cat "$tarball.source")
mkdir -p "$root"
tar -C "$root" -xf "$tarball"
if [ -n "$(find "$root" -xdev \( -name 'libswift*' -o -name 'libFoundation*' -o -name swift \) -type f | head -n 1)" ]; then
    fail "the root holds Swift"
fi

mount -t proc proc "$root/proc"
mount --bind /dev/pts "$root/dev/pts"
# apt's downloads are kept between runs, beside the root's tarball.
mkdir -p "$cache/debian-$suite-$arch-archives/partial"
mount --bind "$cache/debian-$suite-$arch-archives" "$root/var/cache/apt/archives"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# As in any chroot: maintainer scripts start no services (invoke-rc.d asks policy-rc.d).
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d" && chmod 0755 "$root/usr/sbin/policy-rc.d"
cp "$deb" "$old_deb" "$legacy_deb" "$root/tmp/"

ip netns add "$netns"
ip netns exec "$netns" ip link set lo up

# A command in the root: with the host's network (apt), or in the namespace (the services and their clients).
# Each execs the next (ip netns exec, chroot, env, setpriv), so a command started with & has the pid of $!.
environment=(/usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/root DEBIAN_FRONTEND=noninteractive)
in_root() { chroot "$root" "${environment[@]}" "$@"; }
in_netns() { ip netns exec "$netns" chroot "$root" "${environment[@]}" "$@"; }
# apt-get in the root, in its /tmp (where the packages are), as a user types it; its output goes to apt.log.
# The output of the last call is in $work/apt.last.
apt_get() {
    echo "# apt-get $*" >>"$work/apt.log"
    in_root /bin/sh -c 'cd /tmp && exec apt-get -q -y -o Dpkg::Use-Pty=0 "$@"' sh "$@" </dev/null >"$work/apt.last" 2>&1 \
        || { cat "$work/apt.last" >>"$work/apt.log"; tail -n 30 "$work/apt.log" >&2; fail "apt-get $* failed (log above)"; }
    cat "$work/apt.last" >>"$work/apt.log"
}

# Waits until "$@" succeeds, trying again every tenth of a second, at most $timeout seconds.
wait_for() {
    local what=$1; shift
    local deadline=$((SECONDS + timeout))
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || fail "no $what within $timeout s"
        sleep 0.1
    done
}

# The value of KEY= in the installed unit (the last one, as systemd reads it).
unit_value() { sed -n "s/^$2=//p" "$root/lib/systemd/system/$1" | tail -n 1; }

# Starts Mosquitto as Debian's mosquitto.service does, reading its configuration afresh.
launch_mosquitto() {
    # What Debian's mosquitto.service does before it starts the broker (its RuntimeDirectory), then the broker.
    install -d -o "$(in_root id -u mosquitto)" -g "$(in_root id -g mosquitto)" -m 0740 "$root/run/mosquitto"
    ip netns exec "$netns" chroot "$root" "${environment[@]}" setpriv --reuid=mosquitto --regid=mosquitto --init-groups \
        /usr/sbin/mosquitto -c /etc/mosquitto/mosquitto.conf >"$work/mosquitto.out" 2>&1 &
    mosquitto_pid=$!
    pids+=("$mosquitto_pid")
}

start_mosquitto() {
    launch_mosquitto
    wait_for "Mosquitto on 127.0.0.1:1883" in_netns mosquitto_pub -h 127.0.0.1 -p 1883 -t deb-check/ping -n
    [ "$(stat -c %u "/proc/$mosquitto_pid")" = "$(in_root id -u mosquitto)" ] || fail "Mosquitto does not run as mosquitto"
    # With the snippet's listener Mosquitto is not in its "local only mode" (no listener configured).
    local log="$root/var/log/mosquitto/mosquitto.log"
    ! grep -q "local only mode" "$log" && grep -q "Opening ipv4 listen socket on port 1883" "$log" \
        || fail "Mosquitto did not take the listener of /etc/mosquitto/conf.d/trellis.conf: $(cat "$log")"
}

start_trellis() {
    local exec_start user group directory umask files
    exec_start=$(unit_value trellis.service ExecStart)
    user=$(unit_value trellis.service User)
    group=$(unit_value trellis.service Group)
    directory=$(unit_value trellis.service WorkingDirectory)
    umask=$(unit_value trellis.service UMask)
    files=$(unit_value trellis.service LimitNOFILE)
    [ -n "$exec_start" ] && [ -n "$user" ] && [ -n "$directory" ] || fail "trellis.service lacks ExecStart, User or WorkingDirectory"
    # The unit of the package under test sets LimitNOFILE= (0.1.0's did not: it keeps the limit it inherits).
    [ -n "$files" ] || [ "$(in_root dpkg-query -W -f '${Version}' trellis)" = "$legacy" ] || fail "trellis.service lacks LimitNOFILE"
    say "starting, as $user in $directory with at most ${files:-(inherited)} descriptors: $exec_start"
    # systemd would run ExecStart as User= (which postinst created), in WorkingDirectory=, with UMask= and
    # LimitNOFILE= (soft and hard).
    # shellcheck disable=SC2086 # ExecStart is split on spaces as systemd splits it (no quotes in it).
    # The unit's EnvironmentFile=-/etc/trellis/broker-login.env: the login postinst keeps, where it configured Mosquitto.
    local login=()
    if grep -qx 'EnvironmentFile=-/etc/trellis/broker-login.env' "$root/lib/systemd/system/trellis.service" \
       && [ -f "$root/etc/trellis/broker-login.env" ]; then
        while IFS= read -r line; do case "$line" in '#'* | '') ;; *) login+=("$line") ;; esac; done < "$root/etc/trellis/broker-login.env"
    fi
    ip netns exec "$netns" chroot "$root" "${environment[@]}" "${login[@]}" setpriv --reuid="$user" --regid="${group:-$user}" --init-groups \
        /bin/sh -c 'umask "$1"; [ -z "$2" ] || ulimit -n "$2"; cd "$3" && shift 3 && exec "$@"' sh "${umask:-0022}" "$files" "$directory" $exec_start \
        >>"$work/trellis.out" 2>&1 &
    trellis_pid=$!
    pids+=("$trellis_pid")
    wait_for "live Trellis (trellis health)" in_netns trellis health --address 127.0.0.1:9465
    [ "$(stat -c %u "/proc/$trellis_pid")" = "$(in_root id -u "$user")" ] || fail "Trellis does not run as $user"
    [ -z "$files" ] || grep -Eq "^Max open files +$files +$files " "/proc/$trellis_pid/limits" \
        || fail "Trellis does not run with LimitNOFILE=$files"
}

start_ready_trellis() {
    start_trellis
    wait_for "ready Trellis (trellis health --ready)" in_netns trellis health --ready --address 127.0.0.1:9465
}

stop() {
    local pid=$1 name=$2
    kill -TERM "$pid"
    local deadline=$((SECONDS + timeout))
    while kill -0 "$pid" 2>/dev/null; do
        [ "$SECONDS" -lt "$deadline" ] || fail "$name did not stop within $timeout s of SIGTERM"
        sleep 0.1
    done
    local status=0
    wait "$pid" || status=$?
    # Reaped: its pid may now be another process's, so cleanup must not signal it.
    local kept=() other
    for other in "${pids[@]}"; do [ "$other" = "$pid" ] || kept+=("$other"); done
    pids=("${kept[@]}")
    [ "$status" = 0 ] || fail "$name exited with status $status after SIGTERM"
}

# One request on the plant tracker's per-client topics; prints the answer.
# Mosquitto's clients logged in as the local operator, with the options postinst wrote (absent before it kept the
# accounts: then anonymous, which 0.1.0's open broker lets do anything).
as_operator() { in_netns /usr/bin/env XDG_CONFIG_HOME=/etc/trellis/mosquitto-clients "$@"; }
plant() { as_operator mosquitto_rr -h 127.0.0.1 -p 1883 -q 1 -W 20 -t rpi/torpi/operator -e rpi/fromrpi/operator -m "$1"; }

expect() {
    local what=$1 got=$2 want=$3
    [ "$got" = "$want" ] || fail "$what: got \"$got\", expected \"$want\""
    say "$what: $got"
}

# Waits for the retained state of button b1 to count TOTAL presses.
button_total_is() {
    local state
    state=$(as_operator mosquitto_sub -h 127.0.0.1 -p 1883 -t p2o/buttons/b1/state -C 1 -W 2) && grep -q "\"total\":$1[,}]" <<<"$state"
}

state="$root/var/lib/trellis/trellis.sqlite"

# --- 3. install the 0.1.0 package (the snippet a conffile) onto Debian's untouched Mosquitto, use it -----
say "apt-get install ./$(basename "$legacy_deb") in a clean Debian $suite ($mirror)"
apt_get update
apt_get install "./$(basename "$legacy_deb")"
# The command-line clients the test asks with (the package only suggests them).
apt_get install mosquitto-clients
[ "$(in_root dpkg-query -W -f '${Version}' trellis)" = "$legacy" ] || fail "trellis $legacy is not installed"
in_root dpkg-query -W -f '${Status}\n' mosquitto | grep -q 'install ok installed' || fail "apt did not install the recommended mosquitto"
[ -L "$root/etc/systemd/system/multi-user.target.wants/trellis.service" ] || fail "trellis.service was not enabled on install"
in_root getent passwd trellis >/dev/null || fail "postinst created no user trellis"
[ "$(stat -c %u "$root/var/lib/trellis")" = "$(in_root id -u trellis)" ] || fail "/var/lib/trellis does not belong to trellis"
[ -z "$(find "$root" -xdev \( -name 'libswift*' -o -name 'libFoundation*' \) | head -n 1)" ] || fail "installing brought Swift libraries"
[ -f "$root/etc/mosquitto/conf.d/trellis.conf" ] || fail "the 0.1.0 package did not install its conffile snippet"

start_mosquitto
start_ready_trellis
expect "a plant added" "$(plant 'ID:1;sender:operator;receiver:Host-RPI3B+;payload:Fern,0x36;operation:REQ_addNewPlant')" \
    "ID:1;sender:Host-RPI3B+;receiver:operator;payload:Fern;operation:RES_addNewPlant"
expect "the plant answer" "$(plant 'ID:2;sender:operator;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants')" \
    "ID:2;sender:Host-RPI3B+;receiver:operator;payload:1;operation:RES_numPlants"
as_operator mosquitto_pub -h 127.0.0.1 -p 1883 -q 1 -t p2o/buttons/b1/press -m 2026-11-22T10:41:05.123Z
wait_for "button state counting 1 press" button_total_is 1
say "the button state: $(as_operator mosquitto_sub -h 127.0.0.1 -p 1883 -t p2o/buttons/b1/state -C 1 -W 5)"
stop "$trellis_pid" "trellis $legacy"

# --- the upgrade -----------------------------------------------------------------------------------------
# The user's edit of the configuration, which the upgrade must keep.
sed -i 's/^  host_name: "Host-RPI3B+"$/  host_name: "Greenhouse-Pi"/' "$root/etc/trellis/trellis.yaml"
grep -q 'Greenhouse-Pi' "$root/etc/trellis/trellis.yaml" || fail "could not edit plant.host_name in trellis.yaml"
cp "$root/etc/trellis/trellis.yaml" "$work/trellis.yaml.edited"
# Both packages hold the same binary, so the state goes back one schema version first, to what a Trellis
# before the `probe` migration wrote: the new package's Trellis has to migrate it.
sqlite3 "$state" "DROP TABLE store_probe; DELETE FROM grdb_migrations WHERE identifier = 'probe';"
[ "$(sqlite3 "$state" "SELECT count(*) FROM grdb_migrations WHERE identifier = 'probe'")" = 0 ] || fail "the state was not taken back"

say "upgrading to $(basename "$deb")"
apt_get install "./$(basename "$deb")"
[ "$(in_root dpkg-query -W -f '${Version}' trellis)" = "$version" ] || fail "trellis $version is not installed after the upgrade"
expect "trellis --version" "$(in_root trellis --version | cut -d' ' -f1)" "$version"
cmp -s "$work/trellis.yaml.edited" "$root/etc/trellis/trellis.yaml" || fail "the upgrade changed the edited /etc/trellis/trellis.yaml"
[ ! -e "$root/etc/trellis/trellis.yaml.dpkg-new" ] || fail "the upgrade left trellis.yaml.dpkg-new"
expect "the configuration's mode and owners (root:trellis)" "$(stat -c '%a %u:%g' "$root/etc/trellis/trellis.yaml")" "640 0:$(in_root id -g trellis)"
# The conffile is gone; postinst wrote the snippet in its place (Mosquitto was untouched), with its checksum line.
snippet="$root/etc/mosquitto/conf.d/trellis.conf"
[ -f "$snippet" ] && cmp -s <(sed 1d "$snippet") "$root/usr/share/trellis/mosquitto-trellis.conf" \
    && head -n 1 "$snippet" | grep -q '^# trellis-package-sha256: [0-9a-f]\{64\}$' \
    || fail "postinst did not write the snippet into the untouched Mosquitto: $(ls -la "$root/etc/mosquitto/conf.d")"
[ -z "$(find "$root/etc/mosquitto" -name '*.dpkg-*')" ] || fail "the upgrade left $(find "$root/etc/mosquitto" -name '*.dpkg-*')"
! grep -q "did not change its configuration" "$work/apt.last" || fail "postinst found Debian's untouched Mosquitto changed: $(cat "$work/apt.last")"
say "the 0.1.0 conffile was replaced by postinst's snippet; dpkg lists as conffiles: $(in_root dpkg-query -W -f '${Conffiles}' trellis | tr '\n' ';')"

# Mosquitto reads the snippet postinst wrote (the chroot has no systemd to reload it).
stop "$mosquitto_pid" mosquitto
start_mosquitto
start_ready_trellis
[ "$(sqlite3 "$state" "SELECT count(*) FROM grdb_migrations WHERE identifier = 'probe'")" = 1 ] \
    || fail "the new Trellis did not migrate the state"
say "the state was migrated (the probe migration ran again)"
expect "the plant answer after the upgrade, from the edited host name" \
    "$(plant 'ID:3;sender:operator;receiver:Greenhouse-Pi;payload:;operation:REQ_numPlants')" \
    "ID:3;sender:Greenhouse-Pi;receiver:operator;payload:1;operation:RES_numPlants"
as_operator mosquitto_pub -h 127.0.0.1 -p 1883 -q 1 -t p2o/buttons/b1/press -m 2026-11-22T10:42:05.123Z
wait_for "button state counting 2 presses (the first kept across the upgrade)" button_total_is 2
# The broker postinst configured is safe on a LAN: an anonymous client gets the released app's topics alone.
expect "an anonymous request on the shared rpi/torpi" \
    "$(in_netns mosquitto_rr -h 127.0.0.1 -p 1883 -q 1 -W 20 -t rpi/torpi -e rpi/fromrpi -m 'ID:4;sender:phone;receiver:Greenhouse-Pi;payload:;operation:REQ_numPlants')" \
    "ID:0;sender:Greenhouse-Pi;receiver:phone;payload:1;operation:RES_numPlants"
anonymous_read=$(in_netns mosquitto_sub -h 127.0.0.1 -p 1883 -t trellis/status -t p2o/buttons/b1/state -C 1 -W 3 2>&1) \
    && fail "an anonymous client read Trellis's topics: $anonymous_read"
expect "trellis/status, read by the operator" "$(as_operator mosquitto_sub -h 127.0.0.1 -p 1883 -t trellis/status -C 1 -W 5)" online
expect "the passwords' modes and owners" \
    "$(stat -c '%a %u:%g' "$root/etc/trellis/trellis.password" "$root/etc/trellis/operator.password" "$root/etc/mosquitto/trellis/passwd" | tr '\n' ' ')" \
    "640 0:$(in_root id -g trellis) 600 0:0 640 0:$(in_root id -g mosquitto) "
say "an anonymous client gets rpi/torpi and rpi/fromrpi alone; the operator reads trellis/status"
say "the button state: $(as_operator mosquitto_sub -h 127.0.0.1 -p 1883 -t p2o/buttons/b1/state -C 1 -W 5)"
stop "$trellis_pid" "trellis $version"
stop "$mosquitto_pid" mosquitto
mosquitto_pid=

# --- remove, purge ---------------------------------------------------------------------------------------
apt_get remove trellis
[ ! -e "$root/usr/bin/trellis" ] || fail "removing left /usr/bin/trellis"
[ -f "$state" ] || fail "removing the package removed the state"
[ -f "$root/etc/trellis/trellis.yaml" ] || fail "removing the package removed the configuration"
[ -f "$snippet" ] || fail "removing the package removed the Mosquitto snippet"
say "removed: the state, the configuration and the snippet are kept"
apt_get purge trellis
[ ! -e "$root/var/lib/trellis" ] || fail "purging left /var/lib/trellis"
[ ! -e "$root/etc/trellis/trellis.yaml" ] || fail "purging left /etc/trellis/trellis.yaml"
[ ! -e "$snippet" ] || fail "purging left the Mosquitto snippet"
[ ! -e "$root/etc/mosquitto/trellis" ] && [ ! -e "$root/etc/trellis/operator.password" ] && [ ! -e "$root/etc/trellis/broker-login.env" ] \
    || fail "purging left the accounts: $(ls -A "$root/etc/mosquitto" "$root/etc/trellis" 2>&1 | tr '\n' ' ')"
[ ! -e "$root/etc/systemd/system/multi-user.target.wants/trellis.service" ] || fail "purging left trellis.service enabled"
[ "$(ls -A "$root/etc/mosquitto/conf.d")" = README ] || fail "purging left in conf.d: $(ls -A "$root/etc/mosquitto/conf.d")"
say "purged: the state, the configuration and the snippet are gone"

# --- 4. a Mosquitto set up with accounts before Trellis comes ------------------------------------------------
# A listener of the administrator's with accounts: anonymous clients refused, an owner who may do anything.
# The password is hashed by mosquitto_passwd -U from a file, and the clients read it from their options file:
# it is on no command line.
say "Mosquitto with accounts: conf.d/auth.conf, a listener on 18883, allow_anonymous false, password and ACL files"
cat > "$root/etc/mosquitto/conf.d/auth.conf" <<'CONF'
listener 18883 127.0.0.1
allow_anonymous false
password_file /etc/mosquitto/deb-check.passwd
acl_file /etc/mosquitto/deb-check.acl
CONF
printf 'owner:%s\n' "$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')" > "$root/etc/mosquitto/deb-check.passwd"
mkdir -p "$root/root/owner/.config"
printf -- '-u owner\n-P %s\n' "$(cut -d: -f2 "$root/etc/mosquitto/deb-check.passwd")" > "$root/root/owner/.config/mosquitto_sub"
cp "$root/root/owner/.config/mosquitto_sub" "$root/root/owner/.config/mosquitto_pub"
in_root mosquitto_passwd -U /etc/mosquitto/deb-check.passwd
printf 'user owner\ntopic readwrite #\n' > "$root/etc/mosquitto/deb-check.acl"
chown "root:$(in_root id -g mosquitto)" "$root/etc/mosquitto/deb-check.passwd" "$root/etc/mosquitto/deb-check.acl"
chmod 0640 "$root/etc/mosquitto/deb-check.passwd" "$root/etc/mosquitto/deb-check.acl"
mosquitto_files=(etc/mosquitto/mosquitto.conf etc/mosquitto/conf.d/auth.conf etc/mosquitto/deb-check.passwd etc/mosquitto/deb-check.acl)
(cd "$root" && sha256sum "${mosquitto_files[@]}") > "$work/mosquitto.sha256"

owner() { in_netns /usr/bin/env HOME=/root/owner "$@"; }
# Restarts Mosquitto (reading its configuration afresh, as a reload would) and checks that the owner gets in on
# 18883, an anonymous client does not, and Mosquitto's files are what they were; WHEN says after what.
check_accounts_broker() {
    local when=$1 refusal
    [ -z "$mosquitto_pid" ] || stop "$mosquitto_pid" mosquitto
    launch_mosquitto
    wait_for "Mosquitto on 127.0.0.1:18883 for its owner" owner mosquitto_pub -h 127.0.0.1 -p 18883 -t deb-check/ping -n
    refusal=$(in_netns mosquitto_sub -h 127.0.0.1 -p 18883 -t '#' -C 1 -W 5 2>&1) \
        && fail "$when: an anonymous client subscribed to # on 18883: $refusal"
    grep -q "not authorised" <<<"$refusal" || fail "$when: an anonymous client on 18883 was not refused as unauthorised: $refusal"
    (cd "$root" && sha256sum --quiet -c "$work/mosquitto.sha256") || fail "$when: Mosquitto's files changed"
    say "$when: the owner connects on 18883, an anonymous client is refused ($refusal), Mosquitto's files are unchanged"
}

# postinst left Mosquitto alone and said what to add.
check_untouched_message() {
    local when=$1
    grep -q "trellis: Mosquitto has settings of its own here, so this package did not change its configuration:" "$work/apt.last" \
        && grep -q "trellis:   /etc/mosquitto/conf.d/auth.conf" "$work/apt.last" \
        && grep -q "trellis:     listener 1883 127.0.0.1" "$work/apt.last" \
        || fail "$when: postinst did not say what to add: $(cat "$work/apt.last")"
    [ ! -e "$root/etc/mosquitto/conf.d/trellis.conf" ] || fail "$when: postinst wrote the snippet into a Mosquitto with accounts"
    say "$when: postinst printed: $(grep 'trellis: ' "$work/apt.last" | head -n 3 | tr '\n' ' ')…"
}

# Trellis starts though the broker does not let it in, and keeps trying.
check_trellis_waits() {
    local when=$1
    : > "$work/trellis.out"
    start_trellis
    wait_for "a refused connection logged (retrying in …)" grep -q "retrying in" "$work/trellis.out"
    in_netns trellis health --ready --address 127.0.0.1:9465 >/dev/null 2>&1 && fail "$when: Trellis is ready without a broker"
    in_netns trellis health --address 127.0.0.1:9465 >/dev/null || fail "$when: Trellis is not alive after a refused connection"
    say "$when: Trellis is alive and keeps trying the broker: $(grep -m 1 "retrying in" "$work/trellis.out" | cut -c 1-200)"
    stop "$trellis_pid" "trellis"
}

check_accounts_broker "before install"
apt_get install "./$(basename "$old_deb")"
[ "$(in_root dpkg-query -W -f '${Version}' trellis)" = "$previous" ] || fail "trellis $previous is not installed"
check_untouched_message "install"
expect "the configuration's mode and owners (root:trellis)" "$(stat -c '%a %u:%g' "$root/etc/trellis/trellis.yaml")" "640 0:$(in_root id -g trellis)"
check_accounts_broker "after install"
check_trellis_waits "after install"

apt_get install "./$(basename "$deb")"
[ "$(in_root dpkg-query -W -f '${Version}' trellis)" = "$version" ] || fail "trellis $version is not installed after the upgrade"
check_untouched_message "upgrade"
check_accounts_broker "after upgrade"
check_trellis_waits "after upgrade"

apt_get purge trellis
[ ! -e "$root/etc/mosquitto/conf.d/trellis.conf" ] || fail "purging left a snippet"
check_accounts_broker "after purge"
stop "$mosquitto_pid" mosquitto

# --- 5. a first install that brings Mosquitto with it --------------------------------------------------------
# apt installs the recommended mosquitto in the same run: postinst finds Debian's configuration (perhaps not yet
# configured) and writes the snippet.
rm -f "$root/etc/mosquitto/conf.d/auth.conf" "$root/etc/mosquitto/deb-check.passwd" "$root/etc/mosquitto/deb-check.acl"
apt_get purge mosquitto
[ ! -e "$root/etc/mosquitto/mosquitto.conf" ] || fail "purging mosquitto left its configuration"
apt_get install "./$(basename "$deb")"
in_root dpkg-query -W -f '${Status}\n' mosquitto | grep -q 'install ok installed' || fail "apt did not install the recommended mosquitto"
[ -f "$snippet" ] && cmp -s <(sed 1d "$snippet") "$root/usr/share/trellis/mosquitto-trellis.conf" \
    || fail "a first install with Mosquitto did not write the snippet: $(cat "$work/apt.last")"
start_mosquitto
start_ready_trellis
stop "$trellis_pid" "trellis $version"
stop "$mosquitto_pid" mosquitto
say "a first install with the recommended Mosquitto wrote the snippet, and Trellis is ready on it"
