#!/bin/sh
# Records the traces whose reader outputs tests/golden/test_golden.py compares, from the test
# programs of a build (default: build), with MODULE_LOAD events padded (strip_modules.py) so that
# the outputs hold addresses, not names that depend on the binaries present. Run once; commit the
# traces; then `PTT_GOLDEN_UPDATE=1 python3 -m pytest tests/golden` writes the expected outputs.
set -e
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
ptt=$build/bin/ptt
progs=$build/tests/progs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$here/traces"
rec() { # NAME [ptt trace options] -- PROGRAM ARGS...
    name=$1
    shift
    "$ptt" trace -q -o "$tmp/$name.ptt" "$@" >/dev/null 2>&1 || true
    python3 "$here/strip_modules.py" "$tmp/$name.ptt" "$here/traces/$name.ptt"
}
rec prodcons -- "$build/examples/prodcons" 5
rec export_mix -- "$progs/export_mix" 20
rec report_mix -- "$progs/report_mix" 3
rec names_prog -- "$progs/names_prog"
rec abba_hang --hang-timeout=0.3 --kill-on-hang -- "$progs/abba"
rec rwlock_wait_writer -- "$progs/rwlock_calls" wait_writer
rec signal_handlers -- "$progs/signal_calls" handlers
