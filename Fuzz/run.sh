#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer and runs each one.
#   Fuzz/run.sh [RUNS] [TARGET…]      RUNS inputs through each target (default 1000000); the committed
#                                     corpus Fuzz/corpus/<target>/ takes what they found, minimized
#   Fuzz/run.sh --brief [RUNS] [TARGET…]
#                                     the check of `make test`: each target for RUNS inputs (default 20000)
#                                     or FUZZ_BRIEF_SECONDS seconds (default 10), whichever comes first,
#                                     from the committed corpus, which it leaves as it is
# TARGET is a file name of Fuzz/Targets/ without .swift (default: all of them). A crash leaves its input
# in Fuzz/crashes/; the script goes on with the other targets and exits 1 at the end.
#
# The library modules a target reaches (TrellisCore, TrellisSocketIO, TrellisWire and what they import) are
# built once, instrumented, as static libraries in .build-fuzz/, with the package name SwiftPM gives them
# (`package` declarations need one) and -enable-testing, so that a target — its own small module —
# reaches their internal declarations with `@testable import`. A module is rebuilt only when its sources,
# the flags, the compiler or a module it imports change.
set -euo pipefail
cd "$(dirname "$0")/.."

brief=0
runs=""
selected=()
for argument in "$@"; do
    case "$argument" in
        --brief) brief=1 ;;
        '' | *[!0-9]*) selected+=("$argument") ;;
        *) runs="$argument" ;;
    esac
done
if [ "$brief" = 1 ]; then runs="${runs:-20000}"; else runs="${runs:-1000000}"; fi
seconds="${FUZZ_BRIEF_SECONDS:-10}"

out=.build-fuzz
# A crash is reported by libFuzzer and AddressSanitizer; Swift's own backtracer would only slow it down.
export SWIFT_BACKTRACE=enable=no
mkdir -p "$out/modules" "$out/logs" Fuzz/crashes
flags=(-sanitize=fuzzer,address -parse-as-library -O -package-name Trellis -enable-testing -I "$out/modules")
compiler="$(swiftc --version 2>&1 | head -1)"

# Runs swiftc with its output in a log; shows the log (less the linker's noise about ASan's symbols)
# and stops the script when it fails.
compile() {
    local log="$1"
    shift
    if ! swiftc "$@" >"$log" 2>&1; then
        grep -v "Cannot export local symbol" "$log" | tail -60 >&2
        echo "fuzz: the build failed (whole output: $log)" >&2
        exit 1
    fi
}

# The stamp of a module or target: its sources, the flags, the compiler and what it imports.
stamp() {
    { printf '%s\n' "$compiler" "${flags[*]}"; cat "$@"; } | sha256sum | cut -c1-16
}

# TrellisBuildInfo reads GitCommit.swift, which SwiftPM's build plugin writes; the fuzz build writes a
# fixed one, so that a commit does not rebuild every module.
mkdir -p "$out/build-info"
[ -f "$out/build-info/GitCommit.swift" ] || printf 'let gitCommit = "fuzz"\n' >"$out/build-info/GitCommit.swift"

# The library modules in the order they build (each after what it imports), with what they import.
modules=(TrellisBuildInfo TrellisMQTTTypes TrellisCore TrellisSocketIO TrellisWire)
declare -A imports=([TrellisBuildInfo]="" [TrellisMQTTTypes]="" [TrellisCore]="TrellisBuildInfo TrellisMQTTTypes"
    [TrellisSocketIO]="TrellisCore" [TrellisWire]="TrellisCore TrellisMQTTTypes")
declare -A stamps
started=$SECONDS
for module in "${modules[@]}"; do
    mapfile -t sources < <(find "Sources/$module" -name '*.swift' | sort)
    [ "$module" = TrellisBuildInfo ] && sources+=("$out/build-info/GitCommit.swift")
    dependencies=""
    for imported in ${imports[$module]}; do dependencies+="${stamps[$imported]}"; done
    stamps[$module]="$(stamp "${sources[@]}" <(printf '%s' "$dependencies"))"
    if [ "$(cat "$out/$module.stamp" 2>/dev/null)" = "${stamps[$module]}" ] && [ -f "$out/lib$module.a" ]; then continue; fi
    echo "== building $module"
    rm -f "$out/$module.stamp"
    compile "$out/logs/build-$module.log" "${flags[@]}" -module-name "$module" -wmo -num-threads 2 \
        -emit-module -emit-module-path "$out/modules/$module.swiftmodule" \
        -emit-library -static "${sources[@]}" -o "$out/lib$module.a"
    echo "${stamps[$module]}" >"$out/$module.stamp"
done
# Static libraries link in order: a module before those it imports.
libraries=("$out/libTrellisWire.a" "$out/libTrellisSocketIO.a" "$out/libTrellisCore.a" "$out/libTrellisBuildInfo.a"
    "$out/libTrellisMQTTTypes.a")
all="${stamps[*]}"

if [ "${#selected[@]}" = 0 ]; then
    mapfile -t selected < <(find Fuzz/Targets -name '*.swift' -exec basename {} .swift \; | sort)
fi
for name in "${selected[@]}"; do
    target="Fuzz/Targets/$name.swift"
    [ -f "$target" ] || { echo "fuzz: no target $target" >&2; exit 2; }
    targetStamp="$(stamp "$target" <(printf '%s' "$all"))"
    if [ "$(cat "$out/$name.stamp" 2>/dev/null)" != "$targetStamp" ] || [ ! -x "$out/$name" ]; then
        echo "== building $name"
        rm -f "$out/$name.stamp"
        compile "$out/logs/build-$name.log" "${flags[@]}" -module-name "$name" "$target" "${libraries[@]}" -o "$out/$name"
        echo "$targetStamp" >"$out/$name.stamp"
    fi
done
echo "== built in $((SECONDS - started)) s"

failed=()
for name in "${selected[@]}"; do
    mkdir -p "Fuzz/corpus/$name"
    # New inputs go to the first directory; the committed corpus is only read while running.
    found="$out/corpus-$name"
    limits=(-runs="$runs")
    if [ "$brief" = 1 ]; then
        rm -rf "$found"
        limits+=(-max_total_time="$seconds")
    fi
    mkdir -p "$found"
    log="$out/logs/$name.log"
    began=$EPOCHREALTIME
    status=0
    "$out/$name" "${limits[@]}" -max_len=4096 -rss_limit_mb=1024 -malloc_limit_mb=256 -print_final_stats=1 \
        -artifact_prefix="Fuzz/crashes/$name-" "$found" "Fuzz/corpus/$name" >"$log" 2>&1 || status=$?
    took=$(awk -v a="$began" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    done_line="$(grep -E '^Done [0-9]+ runs' "$log" | tail -1 || true)"
    inputs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)"
    if [ "$status" != 0 ] || [ -z "$done_line" ]; then
        echo "== $name: FAILED after $(printf '%.1f' "$took") s (exit $status; whole output: $log)"
        grep -E "ERROR|SUMMARY|Fatal error|Test unit written" "$log" | head -20 || tail -20 "$log"
        echo "   again with: $out/$name <the input in Fuzz/crashes/>"
        failed+=("$name")
        continue
    fi
    printf '== %s: %s inputs in %.1f s, peak RSS %s MB\n' "$name" "${inputs:-?}" "$took" "${rss:-?}"
    if [ "$brief" = 0 ]; then
        # Keep the committed corpus small: only inputs that add coverage.
        rm -rf "$out/min-$name" && mkdir -p "$out/min-$name"
        "$out/$name" -merge=1 -max_len=4096 "$out/min-$name" "Fuzz/corpus/$name" "$found" >"$out/logs/merge-$name.log" 2>&1
        rm -rf "Fuzz/corpus/$name" "$found" && mv "$out/min-$name" "Fuzz/corpus/$name"
    else
        rm -rf "$found"
    fi
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: ${failed[*]} failed; the inputs are in Fuzz/crashes/" >&2
    exit 1
fi
echo "== fuzz: ${#selected[@]} targets passed in $((SECONDS - started)) s"
