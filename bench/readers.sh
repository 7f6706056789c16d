#!/bin/sh
# Every reader of a trace on large ones (docs/performance.md, "Every reader, and windows"):
#   bench/readers.sh [BUILD [THREADS [ITERATIONS [PACE_MS]]]]
# traces tests/progs/flood with THREADS threads of ITERATIONS lock/unlock pairs (4 events each; 30
# million events by default) twice: as fast as it can (about 0.7 s of program time), then paced
# over PACE_MS milliseconds (30 s by default: a million events per second). Each reader runs on
# both under GNU time: events per second (of the elapsed time, and of the CPU time, user + sys,
# which a shared machine inflates less), peak memory, and the size of every export per million
# events. Then a window of one second in the middle of the paced trace (--from/--to) is read by
# every reader: the exports that need no state from before skip what precedes it, and all stop
# after it. `stat` and `check` run twice: as they are (reading ahead on a second thread when they
# have two CPUs) and with PTT_READ_AHEAD=0. Prints the commit and the load before and after.
set -e
build=${1:-build}
threads=${2:-4}
iters=${3:-1875000}
pace=${4:-30000}
ptt="$build/bin/ptt"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM # the EXIT trap then removes it

echo "commit: $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "load average at the start: $(cat /proc/loadavg)"

# summary KEY [OPTION...] TRACE: the value of a line of ptt view --summary (events:, duration:).
summary() {
    k=$1
    shift
    "$ptt" view --summary "$@" | awk -v k="$k" '$1 == k {print $2}'
}

# run NAME EVENTS OUT COMMAND...: one line of figures, events per second of EVENTS; OUT, if not
# -, is measured (a file or directory) per million of EVENTS.
run() {
    name=$1 n=$2 out=$3
    shift 3
    /usr/bin/time -o "$dir/time" -f '%e %U %S %M' "$@" >/dev/null
    set -- $(cat "$dir/time")
    size=-
    [ "$out" = - ] || size=$(du -sb "$out" | awk -v n="$n" '{printf "%.0f", $1 / (n / 1e6)}')
    awk -v n="$name" -v e="$1" -v u="$2" -v s="$3" -v m="$4" -v ev="$n" -v sz="$size" \
        'BEGIN {c = u + s > 0 ? u + s : 0.01
                printf "%-36s %7.2fs %7.2fs %7.2fs %8d KB %10.1f %8.1f %14s\n", n, e, u, s, m,
                    ev / e / 1e6, ev / c / 1e6, sz}'
    [ "$out" = - ] || rm -rf "$out"
}

header() {
    printf '%-36s %8s %8s %8s %11s %10s %8s %14s\n' reader elapsed user sys "max RSS" \
        "M ev/s" "(CPU)" "bytes/M events"
}

# readers TRACE EVENTS [FILTER...]: every reader on TRACE (EVENTS: what they read).
readers() {
    t=$1 n=$2
    shift 2
    run "view --summary" "$n" - "$ptt" view --summary "$@" "$t"
    run "view --format=raw" "$n" - "$ptt" view --format=raw "$@" "$t"
    run "stat" "$n" - "$ptt" stat "$@" "$t"
    run "stat, one thread" "$n" - env PTT_READ_AHEAD=0 "$ptt" stat "$@" "$t"
    run "check" "$n" - "$ptt" check "$@" "$t"
    run "check, one thread" "$n" - env PTT_READ_AHEAD=0 "$ptt" check "$@" "$t"
    run "report" "$n" "$dir/r.html" "$ptt" report "$@" "$t" -o "$dir/r.html"
    run "paje" "$n" "$dir/t.paje" "$ptt" paje "$@" "$t" -o "$dir/t.paje"
    run "export --format=chrome" "$n" "$dir/t.json" "$ptt" export --format=chrome "$@" "$t" -o "$dir/t.json"
    run "export --format=ctf" "$n" "$dir/ctf" "$ptt" export --format=ctf "$@" "$t" -o "$dir/ctf"
    run "export --format=sco" "$n" "$dir/sco" "$ptt" export --format=sco "$@" "$t" -o "$dir/sco"
}

for paced in 0 "$pace"; do
    t="$dir/flood.ptt"
    rm -f "$t"
    if [ "$paced" = 0 ]; then
        "$ptt" trace -q -o "$t" -- "$build/tests/progs/flood" "$threads" "$iters" >/dev/null
    else
        "$ptt" trace -q -o "$t" -- "$build/tests/progs/flood" "$threads" "$iters" "$paced" >/dev/null
    fi
    events=$(summary events: "$t")
    duration=$(summary duration: "$t")
    echo
    echo "trace: flood $threads $iters$([ "$paced" = 0 ] || echo " $paced"): $events events," \
        "$duration s, $(stat -c %s "$t") bytes"
    header
    readers "$t" "$events"
done

# One second in the middle of the paced trace: events per second are of the window's events.
from=$(awk -v d="$duration" 'BEGIN {printf "%.6f", d / 2 - 0.5}')
to=$(awk -v d="$duration" 'BEGIN {printf "%.6f", d / 2 + 0.5}')
win="--from=$from --to=$to"
wevents=$(summary events: $win "$t")
echo
echo "window $win of the paced trace: $wevents events"
header
readers "$t" "$wevents" $win
echo
echo "load average at the end: $(cat /proc/loadavg)"
