"""pthread_mutex_init, _lock, _trylock, _timedlock, _unlock, _destroy: the exact events of each
call, successful and failing, with the program's own view of each result unchanged."""

from errno import EBUSY, EDEADLK, EINVAL, ENOTSUP, EPERM, ETIMEDOUT

from conftest import CREATE_IN, E, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")


def mutex(case, tmp_path):
    return trace_prog(tmp_path, "mutex_calls", case)


def test_mutex_init(tmp_path):
    t = mutex("init", tmp_path)
    o = t.out
    x = o["x"]
    assert [o[k] for k in ("init_default", "destroy_default", "init_attr", "destroy_attr")] == \
        ["0"] * 4
    assert o["init_bad"] == str(ENOTSUP)
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        # Without an attribute: a normal mutex (type 0), no protocol, not robust, not shared.
        E("MUTEX_INIT_IN", x, "0x0"), E("MUTEX_INIT", x, 0, 0, 0, 0),
        E("MUTEX_INIT_OUT", o["init_default"]),
        E("MUTEX_DESTROY_IN", x), E("MUTEX_DESTROY_OUT", o["destroy_default"]),
        E("MUTEX_INIT_IN", x, o["attr"]), E("MUTEX_INIT", x, o["errorcheck"], 0, 0, 0),
        E("MUTEX_INIT_OUT", o["init_attr"]),
        E("MUTEX_DESTROY_IN", x), E("MUTEX_DESTROY_OUT", o["destroy_attr"]),
        # Refused: no MUTEX_INIT.
        E("MUTEX_INIT_IN", x, o["bad"]), E("MUTEX_INIT_OUT", o["init_bad"]),
        EXIT0,
    ]


def test_mutex_lock(tmp_path):
    t = mutex("lock", tmp_path)
    o = t.out
    m, e, me = o["m"], o["e"], o["tid_main"]
    assert (o["lock"], o["unlock"], o["lock_e"], o["relock_e"], o["unlock_e"]) == \
        ("0", "0", "0", str(EDEADLK), "0")
    assert t.thread(me) == [
        t.process_start(),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["lock"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock"]),
        E("MUTEX_LOCK_IN", e), E("MUTEX_LOCK_OUT", o["lock_e"]),
        # The relock of an errorcheck mutex: libptt's first try finds it held, by this thread.
        E("MUTEX_LOCK_IN", e), E("MUTEX_WAIT", e, me), E("MUTEX_LOCK_OUT", o["relock_e"]),
        E("MUTEX_UNLOCK_IN", e), E("MUTEX_UNLOCK_OUT", o["unlock_e"]),
        EXIT0,
    ]


def contended(t, lock_in):
    """mutex_calls lock_wait / timedlock_wait: main holds m while t2 locks it."""
    o = t.out
    m, me, t2 = o["m"], o["tid_main"], o["tid_t2"]
    assert [o[k] for k in ("lock", "create", "unlock", "join")] == ["0"] * 4
    assert o["join.value"] == "0x7"
    assert t.thread(me) == [
        t.process_start(),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["lock"]),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x7"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock"]),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], o["join.value"]),
        EXIT0,
    ]
    out = "t2_timedlock" if lock_in == "MUTEX_TIMEDLOCK_IN" else "t2_lock"
    assert o[out] == "0" and o["t2_unlock"] == "0"
    in_fields = (m, o["t2_abs"]) if lock_in == "MUTEX_TIMEDLOCK_IN" else (m,)
    assert t.thread(t2) == [
        E("THREAD_START", o["fn"], "0x7", me, o["th"]),
        E(lock_in, *in_fields), E("MUTEX_WAIT", m, me), E("MUTEX_ACQUIRED", m),
        E(lock_in.replace("_IN", "_OUT"), o[out]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["t2_unlock"]),
        E("THREAD_END", "0x7", "return"),
    ]


def test_mutex_lock_wait(tmp_path):
    contended(mutex("lock_wait", tmp_path), "MUTEX_LOCK_IN")


def test_mutex_trylock(tmp_path):
    t = mutex("trylock", tmp_path)
    o = t.out
    m = o["m"]
    assert (o["trylock_free"], o["trylock_held"], o["unlock"]) == ("0", str(EBUSY), "0")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("MUTEX_TRYLOCK_IN", m), E("MUTEX_TRYLOCK_OUT", o["trylock_free"]),
        E("MUTEX_TRYLOCK_IN", m), E("MUTEX_TRYLOCK_OUT", o["trylock_held"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock"]),
        EXIT0,
    ]


def test_mutex_timedlock(tmp_path):
    t = mutex("timedlock", tmp_path)
    o = t.out
    m, e, me = o["m"], o["e"], o["tid_main"]
    assert (o["timedlock_free"], o["timedlock_held"], o["timedlock_bad"], o["timedlock_e"]) == \
        ("0", str(ETIMEDOUT), str(EINVAL), str(EDEADLK))
    assert t.thread(me) == [
        t.process_start(),
        E("MUTEX_TIMEDLOCK_IN", m, o["abs1"]), E("MUTEX_TIMEDLOCK_OUT", o["timedlock_free"]),
        # Held by this very thread: waits, times out, never acquires.
        E("MUTEX_TIMEDLOCK_IN", m, o["abs2"]), E("MUTEX_WAIT", m, me),
        E("MUTEX_TIMEDLOCK_OUT", o["timedlock_held"]),
        # A timeout glibc refuses: not tried without blocking first, so no MUTEX_WAIT.
        E("MUTEX_TIMEDLOCK_IN", m, o["abs_bad"]), E("MUTEX_TIMEDLOCK_OUT", o["timedlock_bad"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock"]),
        E("MUTEX_LOCK_IN", e), E("MUTEX_LOCK_OUT", o["lock_e"]),
        E("MUTEX_TIMEDLOCK_IN", e, o["abs3"]), E("MUTEX_WAIT", e, me),
        E("MUTEX_TIMEDLOCK_OUT", o["timedlock_e"]),
        E("MUTEX_UNLOCK_IN", e), E("MUTEX_UNLOCK_OUT", o["unlock_e"]),
        EXIT0,
    ]


def test_mutex_timedlock_wait(tmp_path):
    contended(mutex("timedlock_wait", tmp_path), "MUTEX_TIMEDLOCK_IN")


def test_mutex_unlock(tmp_path):
    t = mutex("unlock", tmp_path)
    o = t.out
    m, e, me, t2 = o["m"], o["e"], o["tid_main"], o["tid_t2"]
    assert (o["unlock"], o["unlock_e_free"], o["unlock_e_other"]) == ("0", str(EPERM), str(EPERM))
    assert t.thread(me) == [
        t.process_start(),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["lock"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock"]),
        E("MUTEX_UNLOCK_IN", e), E("MUTEX_UNLOCK_OUT", o["unlock_e_free"]),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x0"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("MUTEX_UNLOCK_IN", e), E("MUTEX_UNLOCK_OUT", o["unlock_e_other"]),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], "0x0"),
        EXIT0,
    ]
    assert t.thread(t2) == [
        E("THREAD_START", o["fn"], "0x0", me, o["th"]),
        E("MUTEX_LOCK_IN", e), E("MUTEX_LOCK_OUT", o["t2_lock_e"]),
        E("MUTEX_UNLOCK_IN", e), E("MUTEX_UNLOCK_OUT", o["t2_unlock_e"]),
        E("THREAD_END", "0x0", "return"),
    ]


def test_mutex_destroy(tmp_path):
    t = mutex("destroy", tmp_path)
    o = t.out
    x = o["x"]
    assert (o["destroy_locked"], o["destroy"]) == (str(EBUSY), "0")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("MUTEX_LOCK_IN", x), E("MUTEX_LOCK_OUT", o["lock"]),
        E("MUTEX_DESTROY_IN", x), E("MUTEX_DESTROY_OUT", o["destroy_locked"]),
        E("MUTEX_UNLOCK_IN", x), E("MUTEX_UNLOCK_OUT", o["unlock"]),
        E("MUTEX_DESTROY_IN", x), E("MUTEX_DESTROY_OUT", o["destroy"]),
        EXIT0,
    ]
