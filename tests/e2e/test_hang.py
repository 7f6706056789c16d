"""Hang detection (--hang-timeout): an ABBA deadlock is reported, on stderr and in the trace,
with each blocked thread, its call, its object and the thread holding it (tests/progs/abba.c);
a program idle outside any traced call is not (idle_sleep.c)."""

import re
import signal

from conftest import E, check_calls, parse_output, prog, ptt_trace, summary_counts, trace_prog
from robust_util import Live, ctl_ok, status_fields

HEAD_RE = re.compile(r"^ptt: hang: no traced thread recorded an event for (\d+\.\d) s; "
                     r"(\d+) blocked in a call:$")
LINE_RE = re.compile(r"^ptt:   pid (\d+) thread (\d+): in (\w+) \((\w+) (0x[0-9a-f]+)\) for "
                     r"(\d+\.\d) s, (held by|waiting for) thread (\d+)$")


def expected_blocked(out):
    """(thread, routine, object kind, object, held by|waiting for, owner) of each blocked
    thread of abba."""
    pid, t1, t2 = out["pid"], out["tid_t1"], out["tid_t2"]
    return {(t1, "pthread_mutex_lock", "mutex", out["B"], "held by", t2),
            (t2, "pthread_mutex_lock", "mutex", out["A"], "held by", t1),
            (pid, "pthread_join", "thread", out["th1"], "waiting for", t1)}


def report(stderr, pid, timeout):
    """The hang report on ptt trace's stderr: {(thread, routine, kind, object, how, owner)}."""
    lines = stderr.splitlines()
    heads = [m for m in map(HEAD_RE.match, lines) if m]
    assert len(heads) == 1, stderr
    assert float(heads[0][1]) >= timeout and heads[0][2] == "3"
    at = lines.index(heads[0][0])
    blocked = set()
    for line in lines[at + 1:at + 4]:
        m = LINE_RE.match(line)
        assert m and m[1] == pid, f"not a blocked thread of pid {pid}: {line!r}"
        assert float(m[6]) >= timeout
        blocked.add((m[2], m[3], m[4], m[5], m[7], m[8]))
    return blocked


def check_hang_events(t, out, timeout):
    pid = int(out["pid"])
    detected = [e for e in t.events if e.name == "HANG_DETECTED"]
    assert len(detected) == 1 and detected[0].pid == detected[0].tid == t.ptt_pid
    assert int(detected[0].fields[0]) >= timeout * 1e9 and detected[0].fields[1] == "3"
    blocked = [e for e in t.events if e.name == "HANG_BLOCKED"]
    assert all(e.pid == e.tid == pid for e in blocked)
    assert all(int(e.fields[4]) >= timeout * 1e9 for e in blocked)
    assert {e.fields[:4] for e in blocked} == {
        (out["tid_t1"], "MUTEX_LOCK_IN", out["B"], out["tid_t2"]),
        (out["tid_t2"], "MUTEX_LOCK_IN", out["A"], out["tid_t1"]),
        (out["pid"], "THREAD_JOIN_IN", out["th1"], out["tid_t1"])}
    assert len(blocked) == 3
    # the report comes after the last call the threads entered
    last_in = max(e.ns for e in t.events if e.name in ("MUTEX_LOCK_IN", "THREAD_JOIN_IN"))
    assert detected[0].ns >= last_in + timeout * 1e9


def test_abba_kill_on_hang(tmp_path):
    t = ptt_trace(tmp_path, [prog("abba")], opts=["--hang-timeout=1", "--kill-on-hang"],
                  rc=137)
    out = parse_output(t.stdout)[1]
    assert report(t.stderr, out["pid"], 1.0) == expected_blocked(out)
    assert "ptt: killing the program (--kill-on-hang)" in t.stderr.splitlines()
    check_hang_events(t, out, 1.0)
    pid = int(out["pid"])
    # ptt view closes the calls the kill cut short at the process's end, just before it.
    assert t.thread(pid)[-2:] == [E("TRACE_UNFINISHED", "THREAD_JOIN_IN"),
                                  E("PROCESS_EXIT", "signal=9")]
    check_calls(t.events)
    for tid in (out["tid_t1"], out["tid_t2"]):
        assert t.thread(tid)[-1] == E("TRACE_UNFINISHED", "MUTEX_LOCK_IN")


def test_hang_reported_session_goes_on(tmp_path):
    """Without --kill-on-hang the session goes on after the report: ptt ctl status counts the
    hang, and a SIGTERM to ptt trace reaches the program."""
    live = Live([prog("abba")], tmp_path / "t.ptt", opts=["--hang-timeout=0.5"])
    session = live.wait_session()
    live.wait_line(HEAD_RE.match, "err")
    live.wait_line(lambda s: s.startswith("ptt:   pid "), "err")
    assert status_fields(ctl_ok(session, "status"))["hangs"] == "1"
    live.p.send_signal(signal.SIGTERM)
    live.finish(128 + signal.SIGTERM)
    out = parse_output("\n".join(live.out))[1]
    assert report("\n".join(live.err), out["pid"], 0.5) == expected_blocked(out)
    assert not any("killing" in line for line in live.err)
    counts = summary_counts(live.path)[0]
    assert counts["HANG_DETECTED"] == 1 and counts["HANG_BLOCKED"] == 3


def test_idle_is_not_a_hang(tmp_path):
    """Idle for four times the timeout in nanosleep, no traced call open: no report."""
    t = trace_prog(tmp_path, "idle_sleep", 2000, opts=["--hang-timeout=0.5"], compare=False)
    assert t.results == {"slept": "2000"}
    assert not any(line.startswith("ptt: hang") for line in t.stderr.splitlines())
    assert t.counts()["HANG_DETECTED"] == t.counts()["HANG_BLOCKED"] == 0
    assert t.counts()["MUTEX_UNLOCK_OUT"] == 2
