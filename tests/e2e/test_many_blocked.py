"""More threads blocked at once than the pool has sub-buffers (tests/progs/many_blocked): a
barrier, a mutex the main thread holds, a condition variable, sigwait, pthread_once. Once threads hold most sub-buffers,
a thread about to block hands its own over first, and threads waiting for a free one sleep until
the drain frees some: nothing is lost, and every call keeps its IN and OUT. Before, the threads
that found none waited 10 s, then dropped their events (with the default pool: 3,000 threads at a
barrier took 20.7 s, against 0.21 s untraced, and lost 1,932 events)."""

import collections

from conftest import parse_output, prog, ptt_trace, trace_prog

N = 600  # a pool of 1 MiB in sub-buffers of 4 KiB holds 250
SMALL = ["--buffer=1M", "--subbuffer=4K"]
THREAD = ("THREAD_CREATE_IN", "THREAD_CREATE_OUT", "THREAD_START", "THREAD_END",
          "THREAD_JOIN_IN", "THREAD_JOIN_OUT")


def traced(tmp_path, mode, n, opts):
    # trace_prog's check_trace: nothing lost, every call opened and closed in its thread's order
    t = trace_prog(tmp_path, "many_blocked", mode, n, opts=opts)
    assert t.results == {"threads": str(n), "waits": str(n)}
    c = t.counts()
    assert {name: c[name] for name in THREAD} == {name: n for name in THREAD}
    return t, c


def calls_of(t, stem):
    """Per thread, the IN and OUT of calls stem, in order."""
    seq = collections.defaultdict(str)
    for e in t.events:
        if e.name in (stem + "_IN", stem + "_OUT"):
            seq[e.tid] += e.name[-2:] == "IN" and "(" or ")"
    return seq


def test_barrier(tmp_path):
    t, c = traced(tmp_path, "b", N, SMALL)
    assert c["BARRIER_WAIT_IN"] == c["BARRIER_WAIT_OUT"] == c["BARRIER_RELEASED"] == N + 1
    seq = calls_of(t, "BARRIER_WAIT")
    assert len(seq) == N + 1 and set(seq.values()) == {"()"}


def test_mutex(tmp_path):
    """Locks that waited keep their IN, MUTEX_WAIT, MUTEX_ACQUIRED and OUT."""
    t, c = traced(tmp_path, "m", N, SMALL)
    assert c["MUTEX_LOCK_IN"] == c["MUTEX_LOCK_OUT"] == c["MUTEX_UNLOCK_IN"] == N + 1
    assert 0 < c["MUTEX_WAIT"] <= N
    waited = {e.tid for e in t.events if e.name == "MUTEX_WAIT"}
    for tid in waited:
        # ptt's own events (its waits for a sub-buffer) may come between
        names = [k[0] for k in t.thread(tid) if not k[0].startswith("TRACE_")]
        i = names.index("MUTEX_WAIT")
        assert names[i - 1:i + 3] == ["MUTEX_LOCK_IN", "MUTEX_WAIT", "MUTEX_ACQUIRED",
                                      "MUTEX_LOCK_OUT"], names


def test_cond(tmp_path):
    t, c = traced(tmp_path, "c", N, SMALL)
    assert c["COND_WAIT_IN"] == c["COND_WAIT_OUT"] >= N
    assert c["COND_BROADCAST_IN"] == 1
    assert set(calls_of(t, "COND_WAIT").values()) <= {"()" * k for k in range(1, 4)}


def test_sigwait(tmp_path):
    """Threads in sigwait until the main thread sends each its signal."""
    t, c = traced(tmp_path, "s", N, SMALL)
    assert c["SIGNAL_WAIT_IN"] == c["SIGNAL_WAIT_OUT"] == N
    assert set(calls_of(t, "SIGNAL_WAIT").values()) == {"()"}


def test_once(tmp_path):
    """Threads in pthread_once while the first one runs the routine."""
    t, c = traced(tmp_path, "o", N, SMALL)
    assert c["ONCE_RUN"] == c["ONCE_DONE"] == 1
    assert c["THREAD_ONCE_IN"] == c["THREAD_ONCE_OUT"] == N
    assert set(calls_of(t, "THREAD_ONCE").values()) == {"()"}


def test_default_pool(tmp_path):
    """The default pool (2,048 sub-buffers of 32 KiB here) and 3,000 threads at a barrier."""
    t, c = traced(tmp_path, "b", 3000, [])
    assert c["BARRIER_WAIT_IN"] == c["BARRIER_WAIT_OUT"] == 3001


def test_hang_of_threads_holding_none(tmp_path):
    """600 threads blocked on a mutex the main thread holds while it joins one of them: most
    handed their sub-buffer over before blocking, and hold none. The hang watch still reports
    each, and --kill-on-hang sees every thread blocked in a traced call."""
    t = ptt_trace(tmp_path, [prog("many_blocked"), "d", N],
                  opts=SMALL + ["--hang-timeout=0.5", "--kill-on-hang"], rc=137)
    out = parse_output(t.stdout)[1]
    err = t.stderr.splitlines()
    assert f"; {N + 1} blocked in a call:" in t.stderr
    locks = [ln for ln in err if " in pthread_mutex_lock (mutex lock) at many_blocked.c:" in ln]
    assert len(locks) == N
    assert all(ln.endswith(f", held by thread main ({out['tid']})") for ln in locks), locks[0]
    joins = [ln for ln in err if " in pthread_join " in ln]
    assert len(joins) == 1 and joins[0].startswith(f"ptt:   pid {out['tid']} thread main ")
    assert joins[0].endswith(f"({out['first']})"), joins[0]
    assert "ptt: killing the program (--kill-on-hang)" in err
    assert t.lost == 0
    assert t.counts()["HANG_BLOCKED"] == N + 1
