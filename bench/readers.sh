#!/bin/sh
# Every reader of a trace on a large one (docs/performance.md, "Reading"): traces
# tests/progs/flood with THREADS threads of ITERATIONS lock/unlock pairs (4 events each; 30
# million events by default), then runs each reader on it under GNU time: events per second
# (from the elapsed time), CPU time and peak memory; the size of every export per million
# events; and a window of a thirtieth of the trace exported (--from/--to), which reads only it.
#   bench/readers.sh [BUILD [THREADS [ITERATIONS]]]
set -e
build=${1:-build}
threads=${2:-4}
iters=${3:-1875000}
ptt="$build/bin/ptt"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
t="$dir/flood.ptt"
"$ptt" trace -q -o "$t" -- "$build/tests/progs/flood" "$threads" "$iters" >/dev/null
events=$("$ptt" view --summary "$t" | awk '/^events:/ {print $2}')
duration=$("$ptt" view --summary "$t" | awk '/^duration:/ {print $2}')
echo "trace: $events events, $duration s, $(stat -c %s "$t") bytes"
printf '%-44s %8s %8s %8s %10s %12s %14s\n' reader elapsed user sys "max RSS" "M events/s" "bytes/M events"

# run NAME OUT COMMAND...: one line of figures; OUT, if not -, is measured (a file or directory).
run() {
    name=$1 out=$2
    shift 2
    /usr/bin/time -o "$dir/time" -f '%e %U %S %M' "$@" >/dev/null
    set -- $(cat "$dir/time")
    size=-
    [ "$out" = - ] || size=$(du -sb "$out" | awk -v n="$events" '{printf "%.0f", $1 / (n / 1e6)}')
    awk -v n="$name" -v e="$1" -v u="$2" -v s="$3" -v m="$4" -v ev="$events" -v sz="$size" \
        'BEGIN {printf "%-44s %7.2fs %7.2fs %7.2fs %8d KB %12.1f %14s\n", n, e, u, s, m, ev / e / 1e6, sz}'
    [ "$out" = - ] || rm -rf "$out"
}

run "view --summary" - "$ptt" view --summary "$t"
run "view --format=raw" - "$ptt" view --format=raw "$t"
run "stat" - "$ptt" stat "$t"
run "check" - "$ptt" check "$t"
run "report" "$dir/r.html" "$ptt" report "$t" -o "$dir/r.html"
run "paje" "$dir/t.paje" "$ptt" paje "$t" -o "$dir/t.paje"
run "export --format=chrome" "$dir/t.json" "$ptt" export --format=chrome "$t" -o "$dir/t.json"
run "export --format=ctf" "$dir/ctf" "$ptt" export --format=ctf "$t" -o "$dir/ctf"
run "export --format=sco" "$dir/sco" "$ptt" export --format=sco "$t" -o "$dir/sco"

# A window of a thirtieth of the trace, in its middle: the readers that need no state from
# before skip what precedes it (events per second: of the whole trace, as above).
from=$(awk -v d="$duration" 'BEGIN {printf "%.6f", d / 2}')
to=$(awk -v d="$duration" 'BEGIN {printf "%.6f", d / 2 + d / 30}')
win="--from=$from --to=$to"
echo "window $win: $("$ptt" view --summary $win "$t" | awk '/^events:/ {print $2}') events"
run "view $win" - "$ptt" view $win "$t"
run "export chrome $win" "$dir/w.json" "$ptt" export --format=chrome $win "$t" -o "$dir/w.json"
run "stat $win" - "$ptt" stat $win "$t"
run "check $win" - "$ptt" check $win "$t"
