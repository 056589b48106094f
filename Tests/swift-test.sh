#!/usr/bin/env bash
# Runs `swift test` (arguments passed on) and, when it fails, repeats the lines that say which tests failed and
# where after the run's last line. A full run prints thousands of lines, and a CI log keeps only its tail: without
# this summary the one failing expectation of a run is somewhere far above "Test run ... failed".
set -uo pipefail
swift=${SWIFT:-swift}
log=$(mktemp "${TMPDIR:-/tmp}/swift-test.XXXXXX.log")
trap 'rm -f "$log"' EXIT
"$swift" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "== swift test failed (exit $status); the failing tests and their issues:"
    # swift-testing marks a failed test and each issue it recorded with ✘; XCTest and the compiler say "error:".
    grep -E '✘|(^|[^a-z])error:|Fatal error|fatalError|Crash|signal [0-9]+' "$log" | grep -v '^✘ Test run with' | head -60
    grep -E '^✘ Test run with' "$log"
fi
exit "$status"
