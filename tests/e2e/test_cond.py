"""pthread_cond_init, _wait, _timedwait, _clockwait, _signal, _broadcast, _destroy: the exact
events of each call, with the program's own view of each result unchanged."""

from errno import EINVAL, EPERM, ETIMEDOUT

from conftest import CREATE_IN, E, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")


def cond(case, tmp_path):
    return trace_prog(tmp_path, "cond_calls", case)


def waiter_events(t, name, timed):
    """A waiter of cond_calls: lock m, wait on c once (timed: False, True or "clock"), unlock,
    return 0x5."""
    o = t.out
    m, c = o["m"], o["c"]
    wait, wait_in = {False: ("COND_WAIT", (c, m)),
                     True: ("COND_TIMEDWAIT", (c, m, o.get(f"{name}_abs"))),
                     "clock": ("COND_CLOCKWAIT", (c, m, 1, o.get(f"{name}_abs")))}[timed]
    assert (o[f"{name}_lock"], o[f"{name}_wait"], o[f"{name}_unlock"]) == ("0", "0", "0")
    return [
        E("THREAD_START", o["fn"], o[f"{name}_arg"], o["tid_main"], o[f"{name}_th"], "0x0", "0x0", "0x0", "0x0"),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o[f"{name}_lock"]),
        E(f"{wait}_IN", *wait_in), E("COND_WOKEN", c, m, o[f"{name}_wait"]),
        E(f"{wait}_OUT", o[f"{name}_wait"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o[f"{name}_unlock"]),
        E("THREAD_END", "0x5", "return"),
    ]


def waker_events(t, names, wake):
    """main's part of cond_calls' wake_waiters: start the waiters, then lock, wake, unlock,
    join them."""
    o = t.out
    m, c = o["m"], o["c"]
    ev = []
    for n in names:
        ev += [CREATE_IN(o[f"{n}_th_ptr"], "0x0", o["fn"], o[f"{n}_arg"]),
               E("THREAD_CREATE_OUT", o[f"{n}_create"], o[f"{n}_th"])]
    ev += [E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["lock"]),
           E(f"{wake}_IN", c), E(f"{wake}_OUT", o[wake.split("_")[1].lower()]),
           E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock"])]
    for n in names:
        assert o[f"{n}_join"] == "0" and o[f"{n}_join.value"] == "0x5"
        ev += [E("THREAD_JOIN_IN", o[f"{n}_th"]),
               E("THREAD_JOIN_OUT", o[f"{n}_join"], o[f"{n}_join.value"])]
    return ev


def test_cond_init(tmp_path):
    t = cond("init", tmp_path)
    o = t.out
    x = o["x"]
    assert [o[k] for k in ("init_default", "destroy_default", "init_attr", "destroy_attr")] == \
        ["0"] * 4
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("COND_INIT_IN", x, "0x0"), E("COND_INIT_OUT", o["init_default"]),
        E("COND_DESTROY_IN", x), E("COND_DESTROY_OUT", o["destroy_default"]),
        E("COND_INIT_IN", x, o["attr"]), E("COND_INIT_OUT", o["init_attr"]),
        E("COND_DESTROY_IN", x), E("COND_DESTROY_OUT", o["destroy_attr"]),
        EXIT0,
    ]


def test_cond_wait(tmp_path):
    t = cond("wait", tmp_path)
    o = t.out
    assert o["signal"] == "0"
    assert t.thread(o["tid_main"]) == \
        [t.process_start()] + waker_events(t, ["w1"], "COND_SIGNAL") + [EXIT0]
    assert t.thread(o["tid_w1"]) == waiter_events(t, "w1", timed=False)


def test_cond_timedwait(tmp_path):
    t = cond("timedwait", tmp_path)
    o = t.out
    m, c = o["m"], o["c"]
    assert o["timedwait_timeout"] == str(ETIMEDOUT)
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["lock_t"]),
        # Timed out: woken with ETIMEDOUT, the mutex held again.
        E("COND_TIMEDWAIT_IN", c, m, o["abs"]), E("COND_WOKEN", c, m, o["timedwait_timeout"]),
        E("COND_TIMEDWAIT_OUT", o["timedwait_timeout"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock_t"]),
    ] + waker_events(t, ["w1"], "COND_SIGNAL") + [EXIT0]
    assert t.thread(o["tid_w1"]) == waiter_events(t, "w1", timed=True)


def test_cond_clockwait(tmp_path):
    t = cond("clockwait", tmp_path)
    o = t.out
    m, c = o["m"], o["c"]
    assert (o["clockwait_timeout"], o["clockwait_realtime"]) == (str(ETIMEDOUT),) * 2
    assert o["clockwait_badclock"] == str(EINVAL)
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["lock_t"]),
        E("COND_CLOCKWAIT_IN", c, m, 1, o["abs"]), E("COND_WOKEN", c, m, o["clockwait_timeout"]),
        E("COND_CLOCKWAIT_OUT", o["clockwait_timeout"]),
        E("COND_CLOCKWAIT_IN", c, m, 0, o["abs_rt"]),
        E("COND_WOKEN", c, m, o["clockwait_realtime"]),
        E("COND_CLOCKWAIT_OUT", o["clockwait_realtime"]),
        # Refused before any wait: no COND_WOKEN.
        E("COND_CLOCKWAIT_IN", c, m, o["cputime"], o["abs"]),
        E("COND_CLOCKWAIT_OUT", o["clockwait_badclock"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock_t"]),
    ] + waker_events(t, ["w1"], "COND_SIGNAL") + [EXIT0]
    assert t.thread(o["tid_w1"]) == waiter_events(t, "w1", timed="clock")


def test_cond_wait_errors(tmp_path):
    """Waits that fail before waiting: their IN and OUT, no COND_WOKEN (never woken)."""
    t = cond("wait_errors", tmp_path)
    o = t.out
    m, c, e = o["m"], o["c"], o["e"]
    assert (o["wait_unowned"], o["timedwait_bad"]) == (str(EPERM), str(EINVAL))
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("COND_WAIT_IN", c, e), E("COND_WAIT_OUT", o["wait_unowned"]),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["lock"]),
        E("COND_TIMEDWAIT_IN", c, m, o["abs_bad"]), E("COND_TIMEDWAIT_OUT", o["timedwait_bad"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock"]),
        EXIT0,
    ]


def test_cond_signal(tmp_path):
    t = cond("signal", tmp_path)
    o = t.out
    c = o["c"]
    assert (o["signal_nowaiter"], o["signal"]) == ("0", "0")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("COND_SIGNAL_IN", c), E("COND_SIGNAL_OUT", o["signal_nowaiter"]),
    ] + waker_events(t, ["w1"], "COND_SIGNAL") + [EXIT0]
    assert t.thread(o["tid_w1"]) == waiter_events(t, "w1", timed=False)


def test_cond_broadcast(tmp_path):
    t = cond("broadcast", tmp_path)
    o = t.out
    c = o["c"]
    assert (o["broadcast_nowaiter"], o["broadcast"]) == ("0", "0")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("COND_BROADCAST_IN", c), E("COND_BROADCAST_OUT", o["broadcast_nowaiter"]),
    ] + waker_events(t, ["w1", "w2"], "COND_BROADCAST") + [EXIT0]
    # One broadcast woke both waiters.
    assert t.thread(o["tid_w1"]) == waiter_events(t, "w1", timed=False)
    assert t.thread(o["tid_w2"]) == waiter_events(t, "w2", timed=False)
    assert t.counts()["COND_SIGNAL_IN"] == 0


def test_cond_destroy(tmp_path):
    t = cond("destroy", tmp_path)
    o = t.out
    m, x, y = o["m"], o["x"], o["y"]
    assert (o["destroy_unused"], o["timedwait"], o["destroy_used"]) == ("0", str(ETIMEDOUT), "0")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("COND_DESTROY_IN", x), E("COND_DESTROY_OUT", o["destroy_unused"]),
        E("COND_INIT_IN", y, "0x0"), E("COND_INIT_OUT", o["init_y"]),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["lock"]),
        E("COND_TIMEDWAIT_IN", y, m, o["abs"]), E("COND_WOKEN", y, m, o["timedwait"]),
        E("COND_TIMEDWAIT_OUT", o["timedwait"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["unlock"]),
        E("COND_DESTROY_IN", y), E("COND_DESTROY_OUT", o["destroy_used"]),
        EXIT0,
    ]
