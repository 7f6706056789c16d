"""pthread_rwlock_init, _rdlock, _tryrdlock, _timedrdlock, _clockrdlock, _wrlock, _trywrlock,
_timedwrlock, _clockwrlock, _unlock, _destroy: the exact events of each call, successful and
failing, with the program's own view of each result unchanged."""

from errno import EBUSY, EDEADLK, EINVAL, ETIMEDOUT

import pytest

from conftest import CREATE_IN, E, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")
RD, WR = 0, 1  # RWLOCK_WAIT's mode
REALTIME, MONOTONIC = 0, 1


def rwlock(tmp_path, *args):
    return trace_prog(tmp_path, "rwlock_calls", *args)


def call(o, name, key, *fields):
    """An uncontended call: RWLOCK_<NAME>_IN(fields), RWLOCK_<NAME>_OUT(the result of key)."""
    return [E(f"RWLOCK_{name}_IN", *fields), E(f"RWLOCK_{name}_OUT", o[key])]


def test_rwlock_init(tmp_path):
    t = rwlock(tmp_path, "init")
    o = t.out
    x = o["x"]
    assert [o[k] for k in ("init_default", "destroy_default", "init_attr", "wrlock", "unlock",
                           "destroy_attr")] == ["0"] * 6
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        *call(o, "INIT", "init_default", x, "0x0"),
        *call(o, "DESTROY", "destroy_default", x),
        *call(o, "INIT", "init_attr", x, o["attr"]),
        *call(o, "WRLOCK", "wrlock", x),
        *call(o, "UNLOCK", "unlock", x),
        *call(o, "DESTROY", "destroy_attr", x),
        EXIT0,
    ]


def test_rwlock_lock(tmp_path):
    t = rwlock(tmp_path, "lock")
    o = t.out
    lk, me = o["l"], o["tid_main"]
    assert [o[k] for k in ("rdlock_1", "rdlock_2", "unlock_1", "unlock_2", "wrlock",
                           "unlock")] == ["0"] * 6
    assert (o["rdlock_own"], o["wrlock_own"]) == (str(EDEADLK), str(EDEADLK))
    assert t.thread(me) == [
        t.process_start(),
        *call(o, "RDLOCK", "rdlock_1", lk),
        *call(o, "RDLOCK", "rdlock_2", lk),
        *call(o, "UNLOCK", "unlock_1", lk),
        *call(o, "UNLOCK", "unlock_2", lk),
        *call(o, "WRLOCK", "wrlock", lk),
        # Held for writing by this very thread: the lock says EDEADLK at once, no wait.
        E("RWLOCK_RDLOCK_IN", lk), E("RWLOCK_RDLOCK_OUT", o["rdlock_own"]),
        E("RWLOCK_WRLOCK_IN", lk), E("RWLOCK_WRLOCK_OUT", o["wrlock_own"]),
        *call(o, "UNLOCK", "unlock", lk),
        EXIT0,
    ]


def test_rwlock_trylock(tmp_path):
    t = rwlock(tmp_path, "trylock")
    o = t.out
    lk = o["l"]
    assert [o[k] for k in ("tryrdlock_free", "trywrlock_read", "unlock_r", "trywrlock_free",
                           "tryrdlock_write", "trywrlock_write", "unlock_w")] == \
        ["0", str(EBUSY), "0", "0", str(EBUSY), str(EBUSY), "0"]
    # A try never waits: no RWLOCK_WAIT.
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        *call(o, "TRYRDLOCK", "tryrdlock_free", lk),
        *call(o, "TRYWRLOCK", "trywrlock_read", lk),
        *call(o, "UNLOCK", "unlock_r", lk),
        *call(o, "TRYWRLOCK", "trywrlock_free", lk),
        *call(o, "TRYRDLOCK", "tryrdlock_write", lk),
        *call(o, "TRYWRLOCK", "trywrlock_write", lk),
        *call(o, "UNLOCK", "unlock_w", lk),
        EXIT0,
    ]


def test_rwlock_timed(tmp_path):
    t = rwlock(tmp_path, "timed")
    o = t.out
    lk, me = o["l"], o["tid_main"]
    assert [o[k] for k in ("timedrdlock_free", "unlock_r", "clockwrlock_free", "unlock_w",
                           "clockrdlock_free", "unlock_r2")] == ["0"] * 6
    assert (o["timedwrlock_read"], o["clockwrlock_read"]) == (str(ETIMEDOUT),) * 2
    assert (o["timedrdlock_own"], o["clockrdlock_own"], o["timedwrlock_own"]) == \
        (str(EDEADLK),) * 3
    assert [o[k] for k in ("timedrdlock_bad", "timedwrlock_bad", "clockrdlock_badclock",
                           "clockwrlock_badclock")] == [str(EINVAL)] * 4
    a1, a4, bad, cpu = o["abs1"], o["abs4"], o["abs_bad"], o["cputime"]
    assert t.thread(me) == [
        t.process_start(),
        *call(o, "TIMEDRDLOCK", "timedrdlock_free", lk, a1),
        # A write lock while this thread reads: it waits for the reader (itself), times out.
        E("RWLOCK_TIMEDWRLOCK_IN", lk, o["abs2"]), E("RWLOCK_WAIT", lk, WR, 0, 1),
        E("RWLOCK_TIMEDWRLOCK_OUT", o["timedwrlock_read"]),
        E("RWLOCK_CLOCKWRLOCK_IN", lk, MONOTONIC, o["abs3"]), E("RWLOCK_WAIT", lk, WR, 0, 1),
        E("RWLOCK_CLOCKWRLOCK_OUT", o["clockwrlock_read"]),
        *call(o, "UNLOCK", "unlock_r", lk),
        *call(o, "CLOCKWRLOCK", "clockwrlock_free", lk, MONOTONIC, a4),
        # Held for writing by this very thread: EDEADLK at once, no wait.
        E("RWLOCK_TIMEDRDLOCK_IN", lk, a1), E("RWLOCK_TIMEDRDLOCK_OUT", o["timedrdlock_own"]),
        E("RWLOCK_CLOCKRDLOCK_IN", lk, MONOTONIC, a4),
        E("RWLOCK_CLOCKRDLOCK_OUT", o["clockrdlock_own"]),
        E("RWLOCK_TIMEDWRLOCK_IN", lk, a1), E("RWLOCK_TIMEDWRLOCK_OUT", o["timedwrlock_own"]),
        *call(o, "UNLOCK", "unlock_w", lk),
        *call(o, "CLOCKRDLOCK", "clockrdlock_free", lk, MONOTONIC, a4),
        *call(o, "UNLOCK", "unlock_r2", lk),
        # Timeouts glibc refuses before looking at the lock: not tried first, no RWLOCK_WAIT.
        *call(o, "TIMEDRDLOCK", "timedrdlock_bad", lk, bad),
        *call(o, "TIMEDWRLOCK", "timedwrlock_bad", lk, bad),
        *call(o, "CLOCKRDLOCK", "clockrdlock_badclock", lk, cpu, a4),
        *call(o, "CLOCKWRLOCK", "clockwrlock_badclock", lk, cpu, a4),
        EXIT0,
    ]


def test_rwlock_timeout(tmp_path):
    """t2 holds the write lock: main's tries fail, its timed locks wait for t2 and time out."""
    t = rwlock(tmp_path, "timeout")
    o = t.out
    lk, me, t2 = o["l"], o["tid_main"], o["tid_t2"]
    assert (o["tryrdlock"], o["trywrlock"]) == (str(EBUSY),) * 2
    assert (o["timedrdlock"], o["clockrdlock"], o["timedwrlock"]) == (str(ETIMEDOUT),) * 3
    assert t.thread(me) == [
        t.process_start(),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x0"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        *call(o, "TRYRDLOCK", "tryrdlock", lk),
        *call(o, "TRYWRLOCK", "trywrlock", lk),
        E("RWLOCK_TIMEDRDLOCK_IN", lk, o["abs1"]), E("RWLOCK_WAIT", lk, RD, t2, 0),
        E("RWLOCK_TIMEDRDLOCK_OUT", o["timedrdlock"]),
        E("RWLOCK_CLOCKRDLOCK_IN", lk, MONOTONIC, o["abs2"]), E("RWLOCK_WAIT", lk, RD, t2, 0),
        E("RWLOCK_CLOCKRDLOCK_OUT", o["clockrdlock"]),
        E("RWLOCK_TIMEDWRLOCK_IN", lk, o["abs3"]), E("RWLOCK_WAIT", lk, WR, t2, 0),
        E("RWLOCK_TIMEDWRLOCK_OUT", o["timedwrlock"]),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], "0x0"),
        EXIT0,
    ]
    assert t.thread(t2) == [
        E("THREAD_START", o["fn"], "0x0", me, o["th"], "0x0", "0x0", "0x0", "0x0"),
        *call(o, "WRLOCK", "t2_wrlock", lk),
        *call(o, "UNLOCK", "t2_unlock", lk),
        E("THREAD_END", "0x0", "return"),
    ]


@pytest.mark.parametrize("kind", ["plain", "timed", "clock"])
@pytest.mark.parametrize("case", ["wait_writer", "wait_reader"])
def test_rwlock_wait(tmp_path, case, kind):
    """main holds the lock (for reading: t2 wants to write; for writing: t2 wants to read): t2
    waits, RWLOCK_WAIT shows who holds it, and t2 acquires it when main unlocks."""
    t = rwlock(tmp_path, case, kind)
    o = t.out
    lk, me, t2 = o["l"], o["tid_main"], o["tid_t2"]
    writer = case == "wait_writer"
    arg = hex(ord("w" if writer else "r"))
    assert o["arg"] == arg
    assert [o[k] for k in ("lock", "create", "unlock", "join", "t2_lock", "t2_unlock")] == \
        ["0"] * 6
    assert t.thread(me) == [
        t.process_start(),
        *call(o, "RDLOCK" if writer else "WRLOCK", "lock", lk),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], arg),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        *call(o, "UNLOCK", "unlock", lk),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], arg),
        EXIT0,
    ]
    op = {"plain": "", "timed": "TIMED", "clock": "CLOCK"}[kind] + ("WRLOCK" if writer else
                                                                     "RDLOCK")
    fields = {"plain": (lk,), "timed": (lk, o.get("t2_lock_abs")),
              "clock": (lk, MONOTONIC, o.get("t2_lock_abs"))}[kind]
    mode = WR if writer else RD
    assert t.thread(t2) == [
        E("THREAD_START", o["fn"], arg, me, o["th"], "0x0", "0x0", "0x0", "0x0"),
        E(f"RWLOCK_{op}_IN", *fields),
        # A writer waits for main's read lock (no writer, one reader); a reader for main's
        # write lock (writer main, no reader).
        E("RWLOCK_WAIT", lk, mode, 0 if writer else me, 1 if writer else 0),
        E("RWLOCK_ACQUIRED", lk, mode),
        E(f"RWLOCK_{op}_OUT", o["t2_lock"]),
        *call(o, "UNLOCK", "t2_unlock", lk),
        E("THREAD_END", arg, "return"),
    ]


def test_rwlock_unlock(tmp_path):
    t = rwlock(tmp_path, "unlock")
    o = t.out
    lk = o["l"]
    assert [o[k] for k in ("rdlock", "unlock_r", "wrlock", "unlock_w")] == ["0"] * 4
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        *call(o, "RDLOCK", "rdlock", lk),
        *call(o, "UNLOCK", "unlock_r", lk),
        *call(o, "WRLOCK", "wrlock", lk),
        *call(o, "UNLOCK", "unlock_w", lk),
        EXIT0,
    ]


def test_rwlock_destroy(tmp_path):
    t = rwlock(tmp_path, "destroy")
    o = t.out
    x = o["x"]
    assert [o[k] for k in ("destroy_static", "init", "rdlock", "unlock", "destroy")] == ["0"] * 5
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        *call(o, "DESTROY", "destroy_static", x),
        *call(o, "INIT", "init", x, "0x0"),
        *call(o, "RDLOCK", "rdlock", x),
        *call(o, "UNLOCK", "unlock", x),
        *call(o, "DESTROY", "destroy", x),
        EXIT0,
    ]
