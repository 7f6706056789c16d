"""timer_create (SIGEV_SIGNAL, SIGEV_THREAD), timer_settime, timer_delete: the exact events of
each call, successful and failing, with the program's own view of each result (return value and
errno) unchanged; the delivery of the timer's signal, and the thread that runs a SIGEV_THREAD
notification (TIMER_THREAD_START, its calls, TIMER_THREAD_END)."""

from errno import EINVAL

from conftest import E, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")
REALTIME, MONOTONIC = 0, 1
SIGEV_SIGNAL, SIGEV_THREAD = 0, 2
SI_TIMER = -2


def timer(case, tmp_path):
    t = trace_prog(tmp_path, "timer_calls", case)
    ev = t.thread(t.out["tid_main"])
    assert ev[:3] == [t.process_start(), E("SEM_INIT_IN", t.out["s"], 0, 0),
                      E("SEM_INIT_OUT", 0, 0)]
    return t, ev[3:]


def ns(abstime):
    """seconds.nanoseconds (as a program prints an absolute time) in nanoseconds."""
    sec, _, frac = abstime.partition(".")
    return int(sec) * 10**9 + int(frac)


def out(name, o, key, *more):
    r = o[key]
    return E(f"TIMER_{name}_OUT", r, o[f"{key}.errno"] if r == "-1" else 0, *more)


def test_timer_signal(tmp_path):
    t, ev = timer("signal", tmp_path)
    o = t.out
    tm, usr1 = o["timer"], o["usr1"]
    assert [o[k] for k in ("create", "settime_far", "settime", "settime_abs", "delete",
                           "create_default", "delete_default")] == ["0"] * 7
    for k in ("settime_bad", "delete_again", "settime_deleted", "create_bad"):
        assert (o[k], o[f"{k}.errno"]) == ("-1", str(EINVAL)), k
    assert o["code"] == str(SI_TIMER)
    # The timer's signal runs the handler between main's calls: after it armed the timer (in
    # timer_settime at the earliest, on a loaded machine), before its next call.
    at = ev.index(E("SIGNAL_DELIVERED", usr1, SI_TIMER, 0))
    assert ev[at + 1] == E("SIGNAL_HANDLED", usr1)
    settime = ev.index(E("TIMER_SETTIME_IN", tm, "0x0", 10**7, 0))
    bad = ev.index(E("TIMER_SETTIME_IN", tm, "0x0", 2 * 10**9, 0))
    assert settime < at < bad
    del ev[at:at + 2]
    assert ev == [
        E("TIMER_CREATE_IN", MONOTONIC, SIGEV_SIGNAL, usr1, "0x0"),
        out("CREATE", o, "create", tm),
        # The first expiry and the period, in ns.
        E("TIMER_SETTIME_IN", tm, "0x0", 60 * 10**9, 30 * 10**9),
        out("SETTIME", o, "settime_far"),
        E("TIMER_SETTIME_IN", tm, "0x0", 10**7, 0), out("SETTIME", o, "settime"),
        E("TIMER_SETTIME_IN", tm, "0x0", 2 * 10**9, 0), out("SETTIME", o, "settime_bad"),
        # TIMER_ABSTIME: the time on the timer's clock.
        E("TIMER_SETTIME_IN", tm, "0x1", ns(o["abs"]), 0),
        out("SETTIME", o, "settime_abs"),
        E("TIMER_DELETE_IN", tm), out("DELETE", o, "delete"),
        # Deleted: EINVAL.
        E("TIMER_DELETE_IN", tm), out("DELETE", o, "delete_again"),
        E("TIMER_SETTIME_IN", tm, "0x0", 10**7, 0), out("SETTIME", o, "settime_deleted"),
        # No sigevent: SIGALRM.
        E("TIMER_CREATE_IN", REALTIME, SIGEV_SIGNAL, o["alrm"], "0x0"),
        out("CREATE", o, "create_default", o["timer_default"]),
        E("TIMER_DELETE_IN", o["timer_default"]), out("DELETE", o, "delete_default"),
        # No such clock: EINVAL, no timer.
        E("TIMER_CREATE_IN", o["bad_clock"], SIGEV_SIGNAL, usr1, "0x0"),
        out("CREATE", o, "create_bad", "0x0"),
        EXIT0,
    ]


def test_timer_thread(tmp_path):
    t, ev = timer("thread", tmp_path)
    o = t.out
    tm, fn, s = o["timer"], o["notify"], o["s"]
    assert [o[k] for k in ("create", "settime", "notify_post", "wait", "delete")] == ["0"] * 5
    assert o["notify.value"] == "0x77"
    assert ev == [
        E("TIMER_CREATE_IN", MONOTONIC, SIGEV_THREAD, 0, fn), out("CREATE", o, "create", tm),
        E("TIMER_SETTIME_IN", tm, "0x0", 10**7, 0), out("SETTIME", o, "settime"),
        E("SEM_WAIT_IN", s, 1), E("SEM_WAIT_OUT", o["wait"], 0, 0),
        E("TIMER_DELETE_IN", tm), out("DELETE", o, "delete"),
        EXIT0,
    ]
    # glibc's own thread runs the function (the program's value, not libptt's), bracketed like a
    # thread's function; no THREAD_START: glibc starts it without pthread_create.
    assert t.thread(o["tid_notify"]) == [
        E("TIMER_THREAD_START", tm, fn, "0x77"),
        E("SEM_POST_IN", s, 0), E("SEM_POST_OUT", o["notify_post"], 0, 1),
        E("TIMER_THREAD_END", tm),
    ]
