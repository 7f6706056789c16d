#!/bin/sh
# ptt check's speed and memory on a large trace (docs/check.md, docs/performance.md): traces
# tests/progs/flood with THREADS threads of ITERATIONS lock/unlock pairs (4 events each; 30
# million events by default), then times ptt check on it (GNU time: elapsed, CPU, max RSS).
#   bench/check_speed.sh [BUILD [THREADS [ITERATIONS]]]
set -e
build=${1:-build}
threads=${2:-4}
iters=${3:-1875000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$build/bin/ptt" trace -q -o "$dir/flood.ptt" -- "$build/tests/progs/flood" "$threads" "$iters"
/usr/bin/time -f "ptt check: %e s elapsed, %U s user, %S s sys, %M KB max RSS" \
    "$build/bin/ptt" check "$dir/flood.ptt"
/usr/bin/time -f "ptt view --summary (reading alone): %e s elapsed, %U s user, %S s sys" \
    "$build/bin/ptt" view --summary "$dir/flood.ptt" >/dev/null
