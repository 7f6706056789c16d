#!/bin/sh
# Instructions per call, libptt merely preloaded against a stopped session (ptt trace
# --start-stopped), counted by valgrind --tool=callgrind: the difference of two runs of
# bench/ptt-stopped's loop, of N and 2N calls, over N (user space only; the load changes none of
# it). docs/performance.md, "Session lifetime".
#
#   bench/stopped.sh [BUILD [N [CALL...]]]     BUILD: build (default), N: 200000, CALL: all
set -eu
build=${1:-build}
n=${2:-200000}
[ $# -gt 2 ] && shift 2 || set --
bin=$build/bench/ptt-stopped
lib=$(cd "$build/lib" && pwd)/libptt.so
ptt=$build/bin/ptt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ $# -gt 0 ] || set -- $("$bin" --list)

# The instructions callgrind counted for one run: how (preloaded or stopped), call, count.
count() {
    out=$tmp/cg.out
    case $1 in
    preloaded)
        LD_PRELOAD=$lib valgrind --tool=callgrind --callgrind-out-file="$out" \
            "$bin" --child "$2" "$3" 2>"$tmp/err" ;;
    stopped)
        "$ptt" trace --start-stopped -q -o "$tmp/t.ptt" -- valgrind --tool=callgrind \
            --callgrind-out-file="$out" "$bin" --child "$2" "$3" 2>"$tmp/err" ;;
    esac
    if ! grep -q '^libptt: loaded' "$tmp/err"; then
        echo "stopped.sh: $1 $2: libptt not loaded" >&2
        exit 1
    fi
    sed -n 's/^summary: //p' "$out"
}

printf '%-16s %10s %10s\n' call preloaded stopped
for call in "$@"; do
    line=$(printf '%-16s' "$call")
    for how in preloaded stopped; do
        a=$(count $how "$call" "$n")
        b=$(count $how "$call" $((2 * n)))
        line="$line $(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%10.1f", (b - a) / n }')"
    done
    echo "$line"
done
