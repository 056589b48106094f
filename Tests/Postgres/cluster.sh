#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests, on a free loopback port, from Debian's packages.
#
#   cluster.sh start DIR   creates a new cluster in DIR (an empty directory the caller made, such as
#                          `mktemp -d`), starts it and prints one line on standard output, the URL the
#                          tests connect with: postgres://trellis:PASSWORD@127.0.0.1:PORT/trellis
#                          Started again on the same DIR, it prints the same URL (restarting the server
#                          when it is not running, on the port it had when that port is still free).
#   cluster.sh halt DIR    stops the server as an operator would (fast shutdown: sessions get SQLSTATE
#                          57P01) and keeps DIR, so `start DIR` brings the same cluster back: for the
#                          tests of a store that goes away and comes back.
#   cluster.sh crash DIR   stops the server as a crash would (immediate shutdown: no checkpoint, sessions
#                          cut without a word, recovery from the WAL at the next start) and keeps DIR, so
#                          `start DIR` brings the same cluster back: for the fault matrix (Tests/Faults).
#   cluster.sh restart DIR restarts the running server (fast shutdown, then a start with the same options
#                          on the same port), as `systemctl restart postgresql` would.
#   cluster.sh stop DIR    stops the server (immediate shutdown: nothing in it is worth keeping) and
#                          removes DIR; quiet and successful when it is already stopped or gone.
#
# The role `trellis` logs in over TCP with a SCRAM password, so the tests exercise the client's
# password path; it may create databases (CREATEDB), as tests create one each. The superuser `postgres`
# is reachable only on the unix socket inside DIR. Run as root, the server runs as the `postgres` user
# the Debian package creates; otherwise as the calling user. The server's log is DIR/log.
# Durability is off (fsync, synchronous_commit, full_page_writes): a test cluster never outlives a crash.
#
# PG_BINDIR, when set, names the directory of initdb, pg_ctl and psql; otherwise the newest
# /usr/lib/postgresql/<version>/bin is used.
# PG_EXTRA_LISTEN, when set at the first start, is a comma-separated list of further addresses the server
# listens on besides 127.0.0.1 (addresses of network namespaces the caller made, such as 10.231.1.1), and
# PG_EXTRA_HBA a network (10.231.0.0/16) from which the role `trellis` may then log in; both are kept for
# later starts of the same DIR. The URL printed names 127.0.0.1 still.
# PG_DURABLE_COMMITS=1 at the first start turns synchronous_commit on (for later starts of DIR too): a
# commit is then written to the WAL before it is acknowledged, so `crash` loses no committed transaction
# (fsync stays off: the machine does not crash, only the server).
set -euo pipefail

MARKER=.trellis-test-cluster

die() {
    echo "cluster.sh: $*" >&2
    # A start that fails half way leaves no server running behind it.
    if [[ ${STARTED:-0} == 1 ]]; then
        as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
    fi
    exit 1
}

usage() {
    echo "usage: cluster.sh start DIR | cluster.sh halt DIR | cluster.sh crash DIR | cluster.sh restart DIR | cluster.sh stop DIR" >&2
    exit 2
}

# The directory of Debian's PostgreSQL binaries, newest version first.
find_bindir() {
    if [[ -n "${PG_BINDIR:-}" ]]; then
        [[ -x "$PG_BINDIR/initdb" ]] || die "PG_BINDIR=$PG_BINDIR has no initdb"
        echo "$PG_BINDIR"
        return
    fi
    local dir
    dir=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
    [[ -n "$dir" && -x "$dir/initdb" ]] \
        || die "no PostgreSQL server in /usr/lib/postgresql/*/bin: install Debian's postgresql package (make deps does)"
    echo "$dir"
}

# Runs a command as the cluster's owner: `postgres` when called as root (initdb and the server refuse
# root), else the calling user. Working directory DIR, which the owner can always enter.
as_owner() {
    if [[ $(id -u) == 0 ]]; then
        if command -v runuser >/dev/null 2>&1; then
            (cd "$DIR" && runuser -u postgres -- "$@")
        else
            (cd "$DIR" && su postgres -s /bin/bash -c "$(printf '%q ' "$@")")
        fi
    else
        (cd "$DIR" && "$@")
    fi
}

# A free TCP port on 127.0.0.1 (another process may still take it before the server binds: start retries).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

show_log() {
    if [[ -f "$DIR/log" ]]; then
        echo "cluster.sh: last lines of $DIR/log:" >&2
        tail -n 20 "$DIR/log" >&2 || true
    fi
}

running() {
    [[ -f "$DIR/data/postmaster.pid" ]] && as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1
}

# The further listen addresses kept in DIR (PG_EXTRA_LISTEN of the first start), each after a comma.
extra_listen() {
    if [[ -s "$DIR/extra-listen" ]]; then printf ',%s' "$(cat "$DIR/extra-listen")"; fi
}

# off, unless PG_DURABLE_COMMITS=1 was given at the first start of DIR.
synchronous_commit() {
    if [[ -f "$DIR/durable-commits" ]]; then echo on; else echo off; fi
}

# Starts the server on a free port, first on $1 when given (the port a halted cluster had); retries on
# a new port when the chosen one was taken in the meantime.
start_server() {
    local attempt preferred=${1:-}
    for attempt in 1 2 3 4 5; do
        if [[ $attempt == 1 && -n "$preferred" ]]; then PORT=$preferred; else PORT=$(free_port); fi
        if as_owner "$BIN/pg_ctl" -w -t 30 -D "$DIR/data" -l "$DIR/log" start -o \
            "-c listen_addresses=127.0.0.1$(extra_listen) -p $PORT -k $DIR -c fsync=off -c synchronous_commit=$(synchronous_commit) -c full_page_writes=off -c max_connections=600" \
            >>"$DIR/pg_ctl.out" 2>&1; then
            STARTED=1
            return 0
        fi
        # A port race shows as a bind failure in the log; anything else will not get better by retrying.
        if ! grep -q -e 'could not bind' -e 'Address already in use' "$DIR/log" 2>/dev/null; then
            break
        fi
        echo "cluster.sh: port $PORT was taken, retrying on another (attempt $attempt)" >&2
        as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
        mv "$DIR/log" "$DIR/log.port-$PORT" 2>/dev/null || true
    done
    cat "$DIR/pg_ctl.out" >&2 2>/dev/null || true
    show_log
    die "the PostgreSQL server in $DIR/data did not start"
}

psql_superuser() {
    as_owner "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR" -p "$PORT" -U postgres -d postgres "$@"
}

start() {
    umask 077
    mkdir -p "$DIR"
    DIR=$(cd "$DIR" && pwd -P)
    BIN=$(find_bindir)

    # Started before: print the same URL, restarting the server if it stopped.
    if [[ -f "$DIR/$MARKER" && -s "$DIR/url" && -f "$DIR/data/PG_VERSION" ]]; then
        if ! running; then
            local url password port
            url=$(cat "$DIR/url")
            password=${url#postgres://trellis:}
            password=${password%%@*}
            port=${url##*:}
            port=${port%%/*}
            start_server "$port"
            echo "postgres://trellis:$password@127.0.0.1:$PORT/trellis" >"$DIR/url"
        fi
        cat "$DIR/url"
        return
    fi

    if [[ -n "$(ls -A "$DIR")" ]]; then
        die "$DIR is not empty and holds no cluster made by cluster.sh: give it a new directory (mktemp -d)"
    fi
    # The server's socket DIR/.s.PGSQL.<port> must fit in a unix socket address (107 bytes).
    if (( ${#DIR} > 90 )); then
        die "$DIR is too long a path for the server's unix socket in it: use a shorter one (TMPDIR=/tmp mktemp -d)"
    fi
    touch "$DIR/$MARKER"
    chmod 0700 "$DIR"
    if [[ $(id -u) == 0 ]]; then
        getent passwd postgres >/dev/null || die "no postgres user: install Debian's postgresql package (make deps does)"
        chown postgres: "$DIR" "$DIR/$MARKER"
        runuser -u postgres -- test -w "$DIR" 2>/dev/null \
            || su postgres -s /bin/sh -c "test -w '$DIR'" 2>/dev/null \
            || die "the postgres user cannot write $DIR (is a parent directory closed to it?): use a directory under /tmp (mktemp -d)"
    fi

    if ! as_owner "$BIN/initdb" -D "$DIR/data" -U postgres -E UTF8 --no-locale --no-sync \
        --auth-local=trust --auth-host=scram-sha-256 >"$DIR/initdb.out" 2>&1; then
        cat "$DIR/initdb.out" >&2
        die "initdb failed in $DIR/data"
    fi
    if [[ -n "${PG_EXTRA_LISTEN:-}" ]]; then
        as_owner sh -c "printf '%s' '$PG_EXTRA_LISTEN' > extra-listen"
    fi
    if [[ "${PG_DURABLE_COMMITS:-}" == 1 ]]; then
        as_owner touch durable-commits
    fi
    if [[ -n "${PG_EXTRA_HBA:-}" ]]; then
        as_owner sh -c "echo 'host trellis trellis $PG_EXTRA_HBA scram-sha-256' >> data/pg_hba.conf"
    fi

    start_server

    local password
    password=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
    # The password (hexadecimal) goes in on standard input, never on a command line others could read.
    if ! psql_superuser >/dev/null 2>"$DIR/psql.err" <<SQL; then
SET password_encryption = 'scram-sha-256';
CREATE ROLE trellis LOGIN CREATEDB PASSWORD '$password';
CREATE DATABASE trellis OWNER trellis;
SQL
        cat "$DIR/psql.err" >&2
        show_log
        die "could not create the role and database trellis"
    fi
    echo "postgres://trellis:$password@127.0.0.1:$PORT/trellis" >"$DIR/url"
    cat "$DIR/url"
}

# Stops the server with pg_ctl's shutdown mode $1 (fast: as an operator would; immediate: a crash), keeping DIR.
stop_server() {
    [[ -f "$DIR/$MARKER" ]] || die "$DIR holds no cluster made by cluster.sh"
    DIR=$(cd "$DIR" && pwd -P)
    BIN=$(find_bindir)
    if running; then
        as_owner "$BIN/pg_ctl" -D "$DIR/data" -m "$1" -w -t 30 stop >/dev/null || die "the server in $DIR/data did not stop"
    fi
}

halt() { stop_server fast; }

crash() { stop_server immediate; }

restart() {
    [[ -f "$DIR/$MARKER" ]] || die "$DIR holds no cluster made by cluster.sh"
    DIR=$(cd "$DIR" && pwd -P)
    BIN=$(find_bindir)
    running || die "the server in $DIR/data is not running"
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -m fast -w -t 30 restart >>"$DIR/pg_ctl.out" 2>&1 \
        || { show_log; die "the server in $DIR/data did not restart"; }
}

stop() {
    [[ -d "$DIR" ]] || return 0
    DIR=$(cd "$DIR" && pwd -P)
    if [[ ! -f "$DIR/$MARKER" ]]; then
        # Never remove a directory this script did not make a cluster in.
        if [[ -z "$(ls -A "$DIR")" ]]; then
            rmdir "$DIR" 2>/dev/null || true
            return 0
        fi
        echo "cluster.sh: $DIR holds no cluster made by cluster.sh; left alone" >&2
        return 0
    fi
    if [[ -f "$DIR/data/postmaster.pid" ]]; then
        BIN=$(find_bindir 2>/dev/null) || BIN=
        if [[ -n "$BIN" ]]; then
            as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w -t 20 stop >/dev/null 2>&1 || true
        fi
    fi
    rm -rf "$DIR"
}

[[ $# == 2 ]] || usage
DIR=$2
case "$1" in
    start) start ;;
    halt) halt ;;
    crash) crash ;;
    restart) restart ;;
    stop) stop ;;
    *) usage ;;
esac
