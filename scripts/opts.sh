#!/bin/sh
# make opts: the Open POSIX Test Suite's pthread and semaphore conformance tests
# (conformance/interfaces/pthread_* and sem_*), built with the suite's own Makefiles, run one by
# one natively (as its bin/run-tests.sh runs them: its t0 with its timeout) and under
# 'ptt trace --check' (each test's trace kept), both runs imported into one ptt runs database
# and compared (docs/runs.md, "make opts").
#
#   scripts/opts.sh BUILD [SUITE]
#
# SUITE: the suite's source (read-only is fine: it is copied into BUILD/opts); by default
# shared/opts/open_posix_testsuite in the nearest directory above this repository that has it.
# TIMEOUT_VAL: a test's time limit in seconds, the suite's variable (its default: 300).
# OPTS_DIRS: the test directories, globs under conformance/interfaces (default 'pthread_* sem_*').
set -eu

build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
suite_src=${2:-}
if [ -z "$suite_src" ]; then
    d=$here
    while [ "$d" != / ] && [ ! -d "$d/shared/opts/open_posix_testsuite" ]; do
        d=$(dirname "$d")
    done
    suite_src=$d/shared/opts/open_posix_testsuite
fi
if [ ! -f "$suite_src/bin/run-tests.sh" ]; then
    echo "scripts/opts.sh: no Open POSIX Test Suite at $suite_src (make opts OPTS=path)" >&2
    exit 2
fi
ptt=$build/bin/ptt
out=$build/opts
suite=$out/open_posix_testsuite
logs=$out/logs
traces=$out/traces
db=$out/runs.db
TIMEOUT_VAL=${TIMEOUT_VAL:-300}
OPTS_DIRS=${OPTS_DIRS:-'pthread_* sem_*'}
stamp=$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"

# The suite, copied once (a stamp says the copy is whole), configured as its configure would
# (include/mk/config.mk, from config.mk.in), its Makefiles generated, its library and t0 built.
if [ ! -f "$suite/.ptt-copied" ] || [ "$(cat "$suite/.ptt-copied")" != "$suite_src" ]; then
    echo "make opts: copying $suite_src"
    rm -rf "$suite"
    cp -R "$suite_src" "$suite"
    chmod -R u+w "$suite"
    sed -e 's,@CC@,cc,' -e 's,@CFLAGS@,,' -e 's,@LIBS@,,' -e 's,@LDFLAGS@,,' \
        -e 's,@prefix@,/opt/openposix_testsuite,' -e 's,@exec_prefix@,$(prefix),' \
        -e 's,@testdir@,,' "$suite/include/mk/config.mk.in" >"$suite/include/mk/config.mk"
    echo "make opts: generating the suite's Makefiles (about a minute)"
    make -s -C "$suite" generate-makefiles >"$out/generate.out" 2>&1
    make -s -C "$suite/lib" all >/dev/null
    make -s -C "$suite/tools" all >/dev/null 2>&1
    echo "$suite_src" >"$suite/.ptt-copied"
fi

cd "$suite"
dirs=""
for g in $OPTS_DIRS; do
    for d in conformance/interfaces/$g conformance/interfaces/$g/speculative; do
        [ -f "$d/Makefile" ] && dirs="$dirs $d"
    done
done
rm -rf "$logs" "$traces"
mkdir -p "$logs" "$traces"
ndirs=$(echo "$dirs" | wc -w)
echo "make opts: building the tests of $ndirs directories"
: >"$out/build.out"
for d in $dirs; do # built again each time: the build's log is the run's too (BUILDFAIL)
    make -s -C "$d" clean >/dev/null 2>&1 || true
    make -s -C "$d" all LOGFILE="$logs/build.log" >>"$out/build.out" 2>&1 || true
done
tests=$(for d in $dirs; do ls "$d"/*.run-test 2>/dev/null; done | sort)
ntests=$(echo "$tests" | wc -w)

# t0's exit status when it stops a test at its time limit, as bin/run-tests.sh finds it.
t0_timeout=$(bin/t0 0 >/dev/null 2>&1 || echo $?)

now() { date +%s.%N; }
# A test's log lines, as bin/run-tests.sh writes them, then its duration (a line of make opts).
log_result() { # log name rc output-file start end
    case $3 in
    0) echo "$2: execution: PASS" >>"$1" ;;
    *)
        case $3 in
        1) msg=FAILED ;;
        2) msg=UNRESOLVED ;;
        4) msg=UNSUPPORTED ;;
        5) msg=UNTESTED ;;
        HUNG) msg=HUNG ;;
        *) if [ "$3" -gt 128 ]; then msg=SIGNALED; else msg="EXITED ABNORMALLY"; fi ;;
        esac
        echo "$2: execution: $msg: Output: " >>"$1"
        cat "$4" >>"$1"
        ;;
    esac
    echo "$2: duration: $(echo "$5 $6" | awk '{ printf "%.6f", $2 - $1 }')" >>"$1"
}

# The test's name as bin/run-tests.sh writes it: its directory and its file without .run-test.
native() { # test
    dir=$(dirname "$1") base=$(basename "$1")
    args=$(cat "$dir/${base%.*}.args" 2>/dev/null || true)
    start=$(now)
    rc=0
    # shellcheck disable=SC2086
    (cd "$dir" && "$suite/bin/t0" "$TIMEOUT_VAL" "./$base" $args) >"$out/test.out" 2>&1 || rc=$?
    [ "$rc" = "$t0_timeout" ] && rc=HUNG
    log_result "$logs/native.log" "$dir/${base%.*}" "$rc" "$out/test.out" "$start" "$(now)"
}

# Under ptt trace --check, stopped at the time limit by timeout(1) with SIGTERM, which ptt trace
# passes on and then saves the trace (the suite's t0 would kill ptt trace itself). --check turns
# a test's 0 into 1 when ptt check finds something (most of these tests make calls fail on
# purpose): the test's own status is then the one the trace recorded.
traced() { # test
    dir=$(dirname "$1") base=$(basename "$1")
    args=$(cat "$dir/${base%.*}.args" 2>/dev/null || true)
    num=${base%.*}
    trace=$traces/$dir/${num##*_}.ptt # the test's name in the database: its source's

    mkdir -p "$(dirname "$trace")"
    start=$(now)
    rc=0
    # shellcheck disable=SC2086
    (cd "$dir" && timeout -k 10 "$TIMEOUT_VAL" "$ptt" trace --check -q -o "$trace" -- \
        "./$base" $args) >"$out/test.out" 2>&1 || rc=$?
    end=$(now)
    if [ "$rc" = 124 ]; then
        rc=HUNG
    elif [ "$rc" = 1 ]; then
        rc=$("$ptt" view --summary "$trace" 2>/dev/null | sed -n 's/^exit: *//p')
        [ -n "$rc" ] || rc=1
    fi
    log_result "$logs/traced.log" "$dir/${base%.*}" "$rc" "$out/test.out" "$start" "$end"
}

for mode in native traced; do
    echo "make opts: running the $ntests tests $mode (a few minutes)"
    date +%Y-%m-%dT%H:%M:%S%z >"$logs/$mode.date"
    : >"$logs/$mode.log"
    i=0
    for t in $tests; do
        $mode "$t"
        i=$((i + 1))
        [ $((i % 50)) = 0 ] && echo "make opts: $mode: $i of $ntests"
    done
done
rm -f "$out/test.out"

host=$(uname -n)
"$ptt" runs import --db="$db" --name="native-$stamp" --format=opts --machine="$host" \
    --date="$(cat "$logs/native.date")" \
    --command="bin/t0 $TIMEOUT_VAL TEST (the suite's bin/run-tests.sh)" \
    "$logs/build.log" "$logs/native.log"
"$ptt" runs import --db="$db" --name="traced-$stamp" --format=opts --machine="$host" \
    --date="$(cat "$logs/traced.date")" \
    --command="timeout $TIMEOUT_VAL ptt trace --check -o TRACE -- TEST" --trace="$traces" \
    "$logs/build.log" "$logs/traced.log"
"$ptt" runs report --db="$db" -o "$out/report.html"
echo "make opts: the logs are in $logs, the traces in $traces, the page in $out/report.html"
rc=0
"$ptt" runs compare --db="$db" --no-pager "native-$stamp" "traced-$stamp" || rc=$?
exit $rc
