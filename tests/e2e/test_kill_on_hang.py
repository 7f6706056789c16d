"""--kill-on-hang kills only a program all of whose threads stay blocked in traced calls (or
stopped) for the whole timeout: not one whose waiting threads are held by a thread that computes,
sleeps in nanosleep or reads a pipe outside any traced call and then releases them
(tests/progs/hang_busy.c); a real deadlock (tests/progs/abba.c) is killed."""

import pytest

from conftest import parse_output, prog, ptt_trace
from names_util import site_lines
from robust_util import abba_gone_quiet

OPTS = ["--hang-timeout=0.5", "--kill-on-hang"]
NOT_KILLED = ": the program is not killed (--kill-on-hang waits for every thread to be blocked " \
             "in a traced call)"


def check_not_killed(t, why):
    """The program ran to its end; the hang was reported (the waiter and main blocked) with the
    one line naming the thread that kept it alive, and nothing was killed."""
    out = parse_output(t.stdout)
    assert out[0] == {"released": "1"}
    pid, holder, waiter = out[1]["pid"], out[1]["tid_holder"], out[1]["tid_waiter"]
    err = t.stderr.splitlines()
    assert "ptt: killing the program (--kill-on-hang)" not in err
    heads = [ln for ln in err if ln.startswith("ptt: hang: no traced thread recorded an event")]
    assert len(heads) == 1 and heads[0].endswith("; 2 blocked in a call:"), t.stderr
    # the waiter's line names the holder, which holds the mutex but is not blocked
    line = f"ptt:   pid {pid} thread waiter ({waiter}): in pthread_mutex_lock (mutex m) at " \
        f"hang_busy.c:{site_lines('hang_busy')['waiter_lock']} for "
    lines = [ln for ln in err if ln.startswith(line)]
    assert len(lines) == 1 and lines[0].endswith(f" s, held by thread holder ({holder})"), t.stderr
    lines = [ln for ln in err if ln.endswith(NOT_KILLED)]
    assert lines == [f"ptt: hang: pid {pid} thread holder ({holder}) {why}{NOT_KILLED}"], t.stderr
    assert t.counts()["HANG_DETECTED"] == 1
    # the waiter got the mutex once the holder let it go
    assert [e[0] for e in t.thread(waiter) if e[0].startswith("MUTEX_LOCK")] == \
        ["MUTEX_LOCK_IN", "MUTEX_LOCK_OUT"]


def test_computing_holder_not_killed(tmp_path):
    """The holder computes for 3 s (no pthread call), six times the timeout."""
    t = ptt_trace(tmp_path, [prog("hang_busy"), "compute", 3000], opts=OPTS, rc=0)
    check_not_killed(t, "is running")


@pytest.mark.parametrize("mode", ["sleep", "read"])
def test_holder_outside_traced_calls_not_killed(tmp_path, mode):
    """The holder sleeps 2 s in nanosleep, or in read(2) on a pipe: not a traced wait."""
    t = ptt_trace(tmp_path, [prog("hang_busy"), mode, 2000], opts=OPTS, rc=0)
    check_not_killed(t, "is not in a traced call (state S)")


def test_deadlock_killed(tmp_path):
    t = abba_gone_quiet(tmp_path, OPTS, 137)
    err = t.stderr.splitlines()
    assert err.count("ptt: killing the program (--kill-on-hang)") == 1
    assert not any(ln.endswith(NOT_KILLED) for ln in err)
    assert t.counts()["HANG_DETECTED"] == 1 and t.counts()["HANG_BLOCKED"] == 3
