"""ptt trace's clock choice and default output file."""

import os
import subprocess

from conftest import (E, PTT, TIMEOUT, check_trace, parse_output, prog, ptt_trace, run,
                      summary_counts)


def tsc_invariant():
    with open("/proc/cpuinfo") as f:
        flags = next((line for line in f if line.startswith("flags")), "").split()
    return "constant_tsc" in flags and "nonstop_tsc" in flags


def trylock_events(t):
    o = parse_output(t.stdout)[1]
    m = o["m"]
    return o, [
        E("MUTEX_TRYLOCK_IN", m), E("MUTEX_TRYLOCK_OUT", 0),
        E("MUTEX_TRYLOCK_IN", m), E("MUTEX_TRYLOCK_OUT", 16),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", 0),
        E("PROCESS_EXIT", "exit=0"),
    ]


def test_clock_monotonic(tmp_path):
    t = ptt_trace(tmp_path, [prog("mutex_calls"), "trylock"], opts=["--clock=monotonic"])
    check_trace(t)
    assert summary_counts(t.path)[1]["clock"] == "monotonic"
    o, rest = trylock_events(t)
    assert t.thread(o["tid_main"]) == [t.process_start(2)] + rest


def test_clock_environment(tmp_path):
    env = dict(os.environ, PTT_CLOCK="monotonic")
    t = ptt_trace(tmp_path, [prog("mutex_calls"), "trylock"], env=env)
    check_trace(t)
    o, rest = trylock_events(t)
    assert t.thread(o["tid_main"]) == [t.process_start(2)] + rest


def test_clock_tsc(tmp_path):
    if not tsc_invariant():
        p = run([PTT, "trace", "--clock=tsc", "--", "true"], cwd=tmp_path)
        assert p.returncode == 125 and "invariant TSC" in p.stderr
        return
    t = ptt_trace(tmp_path, [prog("mutex_calls"), "trylock"], opts=["--clock=tsc"])
    check_trace(t)
    assert summary_counts(t.path)[1]["clock"] == "tsc"
    o, rest = trylock_events(t)
    assert t.thread(o["tid_main"]) == [t.process_start(1)] + rest
    # Times are seconds since the start of the trace, whatever the clock counts in.
    assert 0 < t.events[0].ns < t.events[-1].ns < 10 * 10**9


def test_default_output(tmp_path):
    """Without -o: ptt.data in the current directory, mode 0600."""
    p = subprocess.Popen([str(PTT), "trace", "--", str(prog("mutex_calls")), "trylock"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 0
    name = "ptt.data"
    assert os.listdir(tmp_path) == [name]
    # 8 events of the program's, its command line and the modules it maps (MODULE_LOAD).
    counts = summary_counts(tmp_path / name, keep_machine=True)[0]
    modules = counts["MODULE_LOAD"]
    assert modules >= 3 and counts["PROCESS_ARGS"] == 1
    assert err.splitlines()[-1].startswith(f"ptt: wrote {9 + modules} events (")
    assert err.splitlines()[-1].endswith(f" to {name}, 0 lost")
    assert os.stat(tmp_path / name).st_mode & 0o777 == 0o600
