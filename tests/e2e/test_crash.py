"""Abrupt ends. The program killed (SIGKILL at random moments), crashing (SIGSEGV, abort()),
killing itself or calling _exit: every event it printed the effect of is in the file, and the
trace ends with how the process ended. ptt trace itself killed: the program runs on at full
speed and the pool leaves /dev/shm. (tests/progs/crash_loop.c, timed_work.c)"""

import os
import random
import signal
import time

import pytest

from conftest import E, check_trace, prog, ptt_trace, run, summary_counts, view
from names_util import site_lines
from robust_util import Live, pid_alive, session_pools, wait_until

RUNS = 20


def printed(lines, key):
    """The last K of the program's "key=K" lines (0 if none)."""
    ks = [int(line[len(key) + 1:]) for line in lines if line.startswith(key + "=")]
    assert ks == list(range(1, len(ks) + 1)), f"{key} lines out of order"
    return ks[-1] if ks else 0


def check_killed_trace(path, pid, status, last_i, last_j):
    """The trace of crash_loop ended by STATUS (raw, e.g. signal=9): main recorded at least the
    last_i iterations it printed, the second thread the last_j posts it printed, each thread at
    most one call more, which its end cut short; the process's last event is its
    PROCESS_EXIT."""
    counts, head = summary_counts(path)
    assert int(head["lost"]) == 0
    lock_in, unlock_out = counts["MUTEX_LOCK_IN"], counts["MUTEX_UNLOCK_OUT"]
    post_in, post_out = counts["SEM_POST_IN"], counts["SEM_POST_OUT"]
    assert unlock_out >= last_i and post_out >= last_j
    assert lock_in - unlock_out in (0, 1)  # killed inside an iteration at most
    assert post_in - post_out in (0, 1)
    # A killed iteration leaves its open call to TRACE_UNFINISHED: one per thread at most.
    assert counts["TRACE_UNFINISHED"] <= 2
    assert counts["PROCESS_EXIT"] == 1
    lines = view("--format=raw", path).splitlines()
    last = [ln for ln in lines if ":TRACE_UNFINISHED " not in ln][-1]
    assert last.split(":", 1)[1] == f"PROCESS_EXIT : {pid} : {pid} : {status}"
    return counts


def test_sigkill_at_random_moments(tmp_path):
    seed = int(os.environ.get("PTT_SEED", time.time_ns() % 100000))
    rng = random.Random(seed)
    for n in range(RUNS):
        delay = rng.uniform(0, 0.1)
        path = tmp_path / f"kill{n}.ptt"
        live = Live([prog("crash_loop"), "loop", 0], path, opts=["-q"])
        pid = int(live.value("pid"))
        time.sleep(delay)  # a random moment, not a synchronization
        os.kill(pid, signal.SIGKILL)
        written = live.finish(137)[0]
        last_i, last_j = printed(live.out, "i"), printed(live.out, "j")
        try:
            check_killed_trace(path, pid, "signal=9", last_i, last_j)
            # The killed threads' sub-buffers were never handed over: the drain read their
            # records to count them (and wrote the IN of a call a thread was killed inside, which
            # waited in its call slot), and its count is what a reader counts, but the
            # TRACE_UNFINISHED the reader adds for a call left open.
            counts, head = summary_counts(path, keep_machine=True)
            assert int(head["events"]) - counts["TRACE_UNFINISHED"] == written
        except AssertionError as e:
            raise AssertionError(f"run {n} (PTT_SEED={seed}, delay {delay:.3f} s): {e}") from e
        path.unlink()


@pytest.mark.parametrize("mode,rc,status", [
    ("segv", 139, "signal=11"), ("abort", 134, "signal=6"), ("kill", 137, "signal=9"),
    ("_exit", 7, "exit=7")])
def test_crash(tmp_path, mode, rc, status):
    n = 3000  # main's iterations: several sub-buffers
    t = ptt_trace(tmp_path, [prog("crash_loop"), mode, n], rc=rc)
    lines = t.stdout.splitlines()
    assert printed(lines, "i") == n
    pid = int(next(ln for ln in lines if ln.startswith("@pid="))[5:])
    counts = check_killed_trace(t.path, pid, status, n, printed(lines, "j"))
    # main ended between iterations: all of its calls, exactly
    assert [counts[k] for k in ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN",
                                "MUTEX_UNLOCK_OUT")] == [n] * 4
    check_trace(t)
    assert t.thread(pid)[-1] == E("PROCESS_EXIT", status)


def test_crash_inside_a_call(tmp_path):
    """pthread_mutex_lock of address 16 crashes inside the call, before it returns: a call that
    did not block records nothing until it returns (one record, lib/record.h), and its IN waited
    in the thread's call slot in the pool. The drain wrote it after the thread's last record:
    the trace shows the call the program crashed in, its object and its line, never returned."""
    n = 3000
    t = ptt_trace(tmp_path, [prog("crash_loop"), "badlock", n], rc=139)
    lines = t.stdout.splitlines()
    assert printed(lines, "i") == n
    pid = int(next(ln for ln in lines if ln.startswith("@pid="))[5:])
    counts = check_killed_trace(t.path, pid, "signal=11", n, printed(lines, "j"))
    assert (counts["MUTEX_LOCK_IN"], counts["MUTEX_LOCK_OUT"]) == (n + 1, n)
    last = [e for e in t.events if e.tid == pid][-3:]
    assert [e.name for e in last] == ["MUTEX_LOCK_IN", "TRACE_UNFINISHED", "PROCESS_EXIT"]
    assert last[0].fields[0] == "0x10"
    site = site_lines("crash_loop")["badlock"]
    human = [ln for ln in view(t.path).splitlines() if f", Thread main ({pid}) " in ln]
    assert f"enters function pthread_mutex_lock (mutex " in human[-3]
    assert human[-3].endswith(f" at crash_loop.c:{site}."), human[-3:]
    assert human[-2].endswith(" had not returned from pthread_mutex_lock when its process or the "
                              "trace ended."), human[-3:]


def test_ptt_trace_killed(tmp_path):
    """SIGKILL to ptt trace while the program records: the program ends on time (its own
    measure against an untraced run; generous bound, no tight timing) and the session's pool is
    no longer in /dev/shm."""
    n = 30_000_000
    plain = run([prog("timed_work"), n])
    assert plain.returncode == 0
    base_ms = float(plain.stdout.split("@elapsed_ms=")[1])
    # A small pool: the program fills it soon after ptt trace is gone, and must not wait.
    live = Live([prog("timed_work"), n], tmp_path / "t.ptt", opts=["--buffer=4M"])
    session = live.wait_session()
    pools = session_pools(session)
    assert len(pools) == 1, pools
    pool = pools[0]
    pid = int(live.value("pid"))
    live.value("started")
    assert os.path.exists(pool)
    live.p.kill()
    live.p.wait()  # reaped: the program sees ptt trace gone, not a zombie
    ms = float(live.value("elapsed_ms"))
    assert ms <= 2 * base_ms + 2000, f"traced run took {ms} ms after ptt trace died, " \
        f"untraced {base_ms} ms"
    wait_until(lambda: not pid_alive(pid), what="the program's end")
    assert not os.path.exists(pool), f"{pool} left behind"
