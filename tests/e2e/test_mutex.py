"""pthread_mutex_init, _lock, _trylock, _timedlock, _clocklock, _unlock, _consistent, _destroy:
the exact events of each call, successful and failing, with the program's own view of each
result unchanged; what MUTEX_INIT records of each kind of attribute; robust mutexes."""

from errno import (EBUSY, EDEADLK, EINVAL, ENOTRECOVERABLE, ENOTSUP, EOWNERDEAD, EPERM,
                   ETIMEDOUT)

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
    m, e, pi, me = o["m"], o["e"], o["pi"], o["tid_main"]
    assert (o["lock"], o["unlock"], o["lock_e"], o["relock_e"], o["unlock_e"]) == \
        ("0", "0", "0", str(EDEADLK), "0")
    assert (o["lock_pi"], o["relock_pi"], o["unlock_pi"]) == ("0", str(EDEADLK), "0")
    assert t.thread(me) == [
        t.process_start(),
        E("MUTEX_INIT_IN", pi, o["pi_attr"]), E("MUTEX_INIT", pi, 2, 1, 0, 0),
        E("MUTEX_INIT_OUT", 0),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["lock"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock"]),
        E("MUTEX_LOCK_IN", e), E("MUTEX_LOCK_OUT", o["lock_e"]),
        # The relock of an errorcheck mutex fails at once (EDEADLK): no wait, though libptt's
        # first try found it held, by this very thread.
        E("MUTEX_LOCK_IN", e), E("MUTEX_LOCK_OUT", o["relock_e"]),
        E("MUTEX_UNLOCK_IN", e), E("MUTEX_UNLOCK_OUT", o["unlock_e"]),
        E("MUTEX_LOCK_IN", pi), E("MUTEX_LOCK_OUT", o["lock_pi"]),
        E("MUTEX_LOCK_IN", pi), E("MUTEX_LOCK_OUT", o["relock_pi"]),
        E("MUTEX_UNLOCK_IN", pi), E("MUTEX_UNLOCK_OUT", o["unlock_pi"]),
        E("MUTEX_DESTROY_IN", pi), E("MUTEX_DESTROY_OUT", 0),
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
    out, in_fields = {"MUTEX_LOCK_IN": ("t2_lock", (m,)),
                      "MUTEX_TIMEDLOCK_IN": ("t2_timedlock", (m, o.get("t2_abs"))),
                      "MUTEX_CLOCKLOCK_IN": ("t2_clocklock", (m, 1, o.get("t2_abs")))}[lock_in]
    assert o[out] == "0" and o["t2_unlock"] == "0"
    assert t.thread(t2) == [
        E("THREAD_START", o["fn"], "0x7", me, o["th"], "0x0", "0x0", "0x0", "0x0"),
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
        # An errorcheck mutex held by this thread: EDEADLK at once, no wait.
        E("MUTEX_TIMEDLOCK_IN", e, o["abs3"]), E("MUTEX_TIMEDLOCK_OUT", o["timedlock_e"]),
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
        E("THREAD_START", o["fn"], "0x0", me, o["th"], "0x0", "0x0", "0x0", "0x0"),
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


def test_mutex_clocklock(tmp_path):
    t = mutex("clocklock", tmp_path)
    o = t.out
    m, me, cpu = o["m"], o["tid_main"], o["cputime"]
    assert (o["clocklock_free"], o["clocklock_held"], o["unlock"]) == ("0", str(ETIMEDOUT), "0")
    assert [o[k] for k in ("clocklock_badclock_free", "clocklock_badclock", "clocklock_bad")] == \
        [str(EINVAL)] * 3
    assert t.thread(me) == [
        t.process_start(),
        # An unsupported clock: EINVAL though the mutex is free; not tried first, no MUTEX_WAIT.
        E("MUTEX_CLOCKLOCK_IN", m, cpu, o["abs1"]),
        E("MUTEX_CLOCKLOCK_OUT", o["clocklock_badclock_free"]),
        E("MUTEX_CLOCKLOCK_IN", m, 1, o["abs1"]), E("MUTEX_CLOCKLOCK_OUT", o["clocklock_free"]),
        # Held by this very thread (a normal mutex): waits until the time-out.
        E("MUTEX_CLOCKLOCK_IN", m, 0, o["abs2"]), E("MUTEX_WAIT", m, me),
        E("MUTEX_CLOCKLOCK_OUT", o["clocklock_held"]),
        E("MUTEX_CLOCKLOCK_IN", m, cpu, o["abs1"]),
        E("MUTEX_CLOCKLOCK_OUT", o["clocklock_badclock"]),
        E("MUTEX_CLOCKLOCK_IN", m, 1, o["abs_bad"]), E("MUTEX_CLOCKLOCK_OUT", o["clocklock_bad"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock"]),
        EXIT0,
    ]


def test_mutex_clocklock_wait(tmp_path):
    contended(mutex("clocklock_wait", tmp_path), "MUTEX_CLOCKLOCK_IN")


KINDS = ["normal", "recursive", "errorcheck", "robust", "inherit", "protect", "shared", "all"]


def test_mutex_types(tmp_path):
    """MUTEX_INIT: the type (0 normal, 1 recursive, 2 errorcheck), protocol (0 none, 1 inherit,
    2 protect), robustness and sharing the attribute gave."""
    t = mutex("types", tmp_path)
    o = t.out
    x = o["x"]
    expect = {"normal": "0 0 0 0", "recursive": "1 0 0 0", "errorcheck": "2 0 0 0",
              "robust": "0 0 1 0", "inherit": "0 1 0 0", "protect": "0 2 0 0",
              "shared": "0 0 0 1", "all": "1 1 1 1"}
    ev = [t.process_start()]
    for k in KINDS:
        assert o[f"{k}_kind"] == expect[k]
        assert (o[f"{k}_init"], o[f"{k}_destroy"]) == ("0", "0")
        ev += [E("MUTEX_INIT_IN", x, o[f"{k}_attr"]), E("MUTEX_INIT", x, *expect[k].split()),
               E("MUTEX_INIT_OUT", o[f"{k}_init"]),
               E("MUTEX_DESTROY_IN", x), E("MUTEX_DESTROY_OUT", o[f"{k}_destroy"])]
    assert t.thread(o["tid_main"]) == ev + [EXIT0]


def test_mutex_robust(tmp_path):
    """t2 ends holding robust (errorcheck) mutexes r1, r2, r3, main waiting for r3: each next lock
    says EOWNERDEAD; r1 is made consistent and works again; r2, unlocked without
    pthread_mutex_consistent, is not recoverable."""
    t = mutex("robust", tmp_path)
    o = t.out
    r1, r2, r3, me, t2 = o["r1"], o["r2"], o["r3"], o["tid_main"], o["tid_t2"]
    dead, gone = str(EOWNERDEAD), str(ENOTRECOVERABLE)
    assert [o[k] for k in ("lock_r3", "lock_r1", "trylock_r2", "lock_r2")] == \
        [dead, dead, dead, gone]
    assert [o[k] for k in ("consistent_ok", "consistent_r2")] == [str(EINVAL)] * 2
    assert [o[k] for k in ("init_r1", "init_r2", "init_r3", "create", "join", "consistent_r1",
                           "unlock_r1", "relock_r1", "unlock_r1_again", "unlock_r2",
                           "consistent_r3", "unlock_r3")] == ["0"] * 12
    ev = [t.process_start()]
    for r in ("r1", "r2", "r3"):
        ev += [E("MUTEX_INIT_IN", o[r], o["attr"]), E("MUTEX_INIT", o[r], 2, 0, 1, 0),
               E("MUTEX_INIT_OUT", o[f"init_{r}"])]
    assert t.thread(me) == ev + [
        # Not inconsistent: EINVAL.
        E("MUTEX_CONSISTENT_IN", r1), E("MUTEX_CONSISTENT_OUT", o["consistent_ok"]),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x0"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        # Waiting for t2 when it ended: acquired, owner dead.
        E("MUTEX_LOCK_IN", r3), E("MUTEX_WAIT", r3, t2), E("MUTEX_ACQUIRED", r3),
        E("MUTEX_LOCK_OUT", o["lock_r3"]),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], "0x0"),
        # The owner is gone: the first try acquires it at once, EOWNERDEAD, no MUTEX_WAIT.
        E("MUTEX_LOCK_IN", r1), E("MUTEX_LOCK_OUT", o["lock_r1"]),
        E("MUTEX_CONSISTENT_IN", r1), E("MUTEX_CONSISTENT_OUT", o["consistent_r1"]),
        E("MUTEX_UNLOCK_IN", r1), E("MUTEX_UNLOCK_OUT", o["unlock_r1"]),
        E("MUTEX_LOCK_IN", r1), E("MUTEX_LOCK_OUT", o["relock_r1"]),
        E("MUTEX_UNLOCK_IN", r1), E("MUTEX_UNLOCK_OUT", o["unlock_r1_again"]),
        E("MUTEX_TRYLOCK_IN", r2), E("MUTEX_TRYLOCK_OUT", o["trylock_r2"]),
        E("MUTEX_UNLOCK_IN", r2), E("MUTEX_UNLOCK_OUT", o["unlock_r2"]),
        E("MUTEX_LOCK_IN", r2), E("MUTEX_LOCK_OUT", o["lock_r2"]),
        E("MUTEX_CONSISTENT_IN", r2), E("MUTEX_CONSISTENT_OUT", o["consistent_r2"]),
        E("MUTEX_CONSISTENT_IN", r3), E("MUTEX_CONSISTENT_OUT", o["consistent_r3"]),
        E("MUTEX_UNLOCK_IN", r3), E("MUTEX_UNLOCK_OUT", o["unlock_r3"]),
        EXIT0,
    ]
    assert t.thread(t2) == [
        E("THREAD_START", o["fn"], "0x0", me, o["th"], "0x0", "0x0", "0x0", "0x0"),
        E("MUTEX_LOCK_IN", r1), E("MUTEX_LOCK_OUT", o["t2_lock_r1"]),
        E("MUTEX_LOCK_IN", r2), E("MUTEX_LOCK_OUT", o["t2_lock_r2"]),
        E("MUTEX_LOCK_IN", r3), E("MUTEX_LOCK_OUT", o["t2_lock_r3"]),
        E("THREAD_END", "0x0", "return"),
    ]
