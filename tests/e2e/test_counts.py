"""Programs with known numbers of calls: the exact count of every event kind, every _IN paired
with its _OUT on its thread, times never going back (check_trace), and each thread's events
about its own objects."""

import collections
import re

from conftest import THREAD_EVENTS, E, expected_counts, trace_prog

T, M, R = 4, 1000, 10  # threads, iterations, a barrier wait every R iterations
ROUNDS = (M - 1) // R + 1


def test_counts(tmp_path):
    t = trace_prog(tmp_path, "counts", T, M, R)
    o = t.out
    assert t.counts() == expected_counts(T, M, ROUNDS)
    ev = t.events
    pid = int(o["pid"])
    starts = [e for e in ev if e.name == "THREAD_START"]
    assert sorted(e.fields[1] for e in starts) == [hex(i) for i in range(T)]
    objects = set()
    for s in starts:
        mine = [e for e in ev if e.tid == s.tid]
        assert all(e.pid == pid for e in mine)
        assert mine[0] == s and s.fields[0] == o["worker"] and s.fields[2] == str(pid)
        assert mine[-1].key == E("THREAD_END", "0x0", "return")
        per = collections.Counter(e.name for e in mine)
        assert per == collections.Counter({
            "THREAD_START": 1, "THREAD_END": 1,
            "MUTEX_LOCK_IN": M, "MUTEX_LOCK_OUT": M, "MUTEX_TRYLOCK_IN": M,
            "MUTEX_TRYLOCK_OUT": M, "MUTEX_UNLOCK_IN": 2 * M, "MUTEX_UNLOCK_OUT": 2 * M,
            "COND_SIGNAL_IN": M, "COND_SIGNAL_OUT": M, "COND_BROADCAST_IN": M,
            "COND_BROADCAST_OUT": M, "BARRIER_WAIT_IN": ROUNDS, "BARRIER_WAIT_OUT": ROUNDS,
            "BARRIER_RELEASED": ROUNDS})
        # One mutex and one condvar of its own; every call succeeded.
        mutexes = {e.fields[0] for e in mine if e.name.startswith("MUTEX_") and
                   e.name.endswith("_IN")}
        conds = {e.fields[0] for e in mine if e.name.startswith("COND_") and e.name.endswith("_IN")}
        assert len(mutexes) == 1 and len(conds) == 1
        objects |= mutexes | conds
        assert all(e.fields[0] == "0" for e in mine if e.name.endswith("_OUT") and
                   not e.name.startswith("BARRIER"))
        assert {e.fields[0] for e in mine if e.name == "BARRIER_WAIT_IN"} == {o["b"]}
    assert len(objects) == 2 * T
    # Each barrier round has exactly one serial thread, whose wait returned -1.
    rel = [e for e in ev if e.name == "BARRIER_RELEASED"]
    assert sum(e.fields[1] == "1" for e in rel) == ROUNDS
    assert sorted(e.fields[0] for e in ev if e.name == "BARRIER_WAIT_OUT") == \
        ["-1"] * ROUNDS + ["0"] * (T - 1) * ROUNDS


def test_contention(tmp_path):
    """T threads lock one mutex M times each: how often a lock waited varies, but every wait is
    followed by the acquisition, and names a thread of the program as the owner (or 0 when the
    owner let go meanwhile)."""
    t = trace_prog(tmp_path, "counts", T, 2000, "shared")
    o = t.out
    n = T * 2000
    assert o["total"] == str(n)
    c = t.counts()
    assert c["MUTEX_WAIT"] == c["MUTEX_ACQUIRED"]
    w = c["MUTEX_WAIT"]
    expected = collections.Counter({"PROCESS_START": 1, "PROCESS_EXIT": 1, "MUTEX_WAIT": w,
                                    "MUTEX_ACQUIRED": w})
    for name in THREAD_EVENTS:
        expected[name] = T
    for name in ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT"):
        expected[name] = n
    assert c == expected
    ev = t.events
    tids = {e.tid for e in ev if e.name == "THREAD_START"}
    assert len(tids) == T
    one = o["one"]
    lock = re.compile(r"(LI (W A )?LO UI UO )*")
    short = {"MUTEX_LOCK_IN": "LI", "MUTEX_WAIT": "W", "MUTEX_ACQUIRED": "A",
             "MUTEX_LOCK_OUT": "LO", "MUTEX_UNLOCK_IN": "UI", "MUTEX_UNLOCK_OUT": "UO"}
    for tid in tids:
        mine = [e for e in ev if e.tid == tid and e.name.startswith("MUTEX_")]
        assert lock.fullmatch("".join(short[e.name] + " " for e in mine))
        assert all(e.fields[0] == one for e in mine if e.name != "MUTEX_LOCK_OUT" and
                   e.name != "MUTEX_UNLOCK_OUT")
        assert all(e.fields[0] == "0" for e in mine if e.name.endswith("_OUT"))
        owners = {int(e.fields[1]) for e in mine if e.name == "MUTEX_WAIT"}
        assert owners <= (tids - {tid}) | {0}, "a wait names an owner that cannot hold the mutex"
