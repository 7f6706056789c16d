"""pthread_cancel, pthread_setcancelstate, pthread_setcanceltype, pthread_testcancel, and threads
actually cancelled: inside pthread_testcancel, inside waits (their cleanup handlers run as they
do untraced, and their calls are seen inside the call the thread was cancelled in), and
asynchronously (the trace stays well formed)."""

from errno import EINVAL

import pytest

from conftest import CREATE_IN, E, check_trace, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")
CANCELED = "0xffffffffffffffff"  # PTHREAD_CANCELED
ENABLE, DISABLE = 0, 1
DEFERRED, ASYNCHRONOUS = 0, 1


def cancel(tmp_path, case, check=True):
    t = trace_prog(tmp_path, "cancel_calls", case, check=check)
    ev = t.thread(t.out["tid_main"])
    assert ev[:3] == [t.process_start(), E("SEM_INIT_IN", t.out["s"], 0, 0),
                      E("SEM_INIT_OUT", 0, 0)]
    return t, ev[3:]


def without_unwinder(ev):
    """ev without the pthread_once calls of the unwinder (libgcc_s) while a cancelled thread
    unwinds: the first runs its init routine, the others find it done."""
    out, i = [], 0
    while i < len(ev):
        e = ev[i]
        if e[0] != "THREAD_ONCE_IN":
            out.append(e)
            i += 1
            continue
        once, init, state = e[1:]
        assert state in ("0", "2"), e
        group = [e, E("ONCE_RUN", once, init), E("ONCE_DONE", once),
                 E("THREAD_ONCE_OUT", 0, 1)] if state == "0" else [e, E("THREAD_ONCE_OUT", 0, 0)]
        assert ev[i:i + len(group)] == group
        i += len(group)
    return out


def test_cancel_settings(tmp_path):
    t, ev = cancel(tmp_path, "settings")
    o = t.out
    assert [o[k] for k in ("disable", "enable", "enable_null", "async", "deferred_null")] == \
        ["0"] * 5
    assert (o["state_bad"], o["type_bad"]) == (str(EINVAL),) * 2
    assert (o["disable.old"], o["enable.old"], o["async.old"]) == ("0", "1", "0")
    # Refused: the old value is left as it was (7).
    assert (o["state_bad.old"], o["type_bad.old"]) == ("7", "7")
    assert o["testcancel"] == "returned"
    assert ev == [
        E("THREAD_SETCANCELSTATE_IN", DISABLE),
        E("THREAD_SETCANCELSTATE_OUT", o["disable"], o["disable.old"]),
        E("THREAD_SETCANCELSTATE_IN", ENABLE),
        E("THREAD_SETCANCELSTATE_OUT", o["enable"], o["enable.old"]),
        E("THREAD_SETCANCELSTATE_IN", 5),
        E("THREAD_SETCANCELSTATE_OUT", o["state_bad"], o["state_bad.old"]),
        # Without a place for the old state, libptt still records it.
        E("THREAD_SETCANCELSTATE_IN", ENABLE),
        E("THREAD_SETCANCELSTATE_OUT", o["enable_null"], ENABLE),
        E("THREAD_SETCANCELTYPE_IN", ASYNCHRONOUS),
        E("THREAD_SETCANCELTYPE_OUT", o["async"], o["async.old"]),
        E("THREAD_SETCANCELTYPE_IN", DEFERRED),
        E("THREAD_SETCANCELTYPE_OUT", o["deferred_null"], ASYNCHRONOUS),
        E("THREAD_SETCANCELTYPE_IN", 9),
        E("THREAD_SETCANCELTYPE_OUT", o["type_bad"], o["type_bad.old"]),
        E("THREAD_TESTCANCEL_IN"), E("THREAD_TESTCANCEL_OUT"),
        EXIT0,
    ]


def main_events(t, trylock=True):
    """main's part of cancel_calls' cancel_thread: create t2, cancel it, join it (cancelled),
    then (trylock) check that its cleanup handlers left the mutex free."""
    o = t.out
    assert [o[k] for k in ("create", "cancel", "join")] == ["0"] * 3
    assert o["join.value"] == CANCELED
    ev = [
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], o["arg"]),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("THREAD_CANCEL_IN", o["th"]), E("THREAD_CANCEL_OUT", o["cancel"]),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], o["join.value"]),
    ]
    if trylock:
        assert (o["trylock"], o["unlock"]) == ("0", "0")
        ev += [E("MUTEX_TRYLOCK_IN", o["m"]), E("MUTEX_TRYLOCK_OUT", o["trylock"]),
               E("MUTEX_UNLOCK_IN", o["m"]), E("MUTEX_UNLOCK_OUT", o["unlock"])]
    return ev + [EXIT0]


def test_cancel_testcancel(tmp_path):
    """t2 disables cancellation, is cancelled, enables it (nothing happens: deferred), and is
    cancelled in pthread_testcancel."""
    t, ev = cancel(tmp_path, "testcancel")
    o = t.out
    assert ev == main_events(t)
    assert (o["t2_disable"], o["t2_disable.old"]) == ("0", str(ENABLE))
    assert (o["t2_enable"], o["t2_enable.old"]) == ("0", str(DISABLE))
    assert o["cleanup"] == "outer(testcancel);"
    assert without_unwinder(t.thread(o["tid_t2"])) == [
        E("THREAD_START", o["fn"], o["arg"], o["tid_main"], o["th"], "0x0", "0x0", "0x0", "0x0"),
        E("THREAD_SETCANCELSTATE_IN", DISABLE),
        E("THREAD_SETCANCELSTATE_OUT", o["t2_disable"], o["t2_disable.old"]),
        E("THREAD_SETCANCELSTATE_IN", ENABLE),
        E("THREAD_SETCANCELSTATE_OUT", o["t2_enable"], o["t2_enable.old"]),
        E("THREAD_TESTCANCEL_IN"),
        E("THREAD_CANCELLED", "THREAD_TESTCANCEL_IN"),
        E("THREAD_END", CANCELED, "cancel"),
    ]


@pytest.mark.parametrize("where", ["cond_wait", "cond_timedwait", "sem_wait", "sem_timedwait"])
def test_cancel_in_wait(tmp_path, where):
    """t2 pushes two cleanup handlers and blocks in a wait (a timed one far from its timeout);
    main cancels it. The handlers run, innermost first, as untraced (trace_prog compares what
    they wrote); their calls come inside the wait, and THREAD_CANCELLED names it."""
    t, ev = cancel(tmp_path, where)
    o = t.out
    m, c, s = o["m"], o["c"], o["s"]
    assert ev == main_events(t)
    cond = where.startswith("cond")
    if cond:
        # glibc locked the mutex again before the handlers ran: the inner one unlocks it.
        assert o["cleanup"] == f"inner({where}): unlock 0;outer({where});"
        wait_in = E("COND_WAIT_IN", c, m) if where == "cond_wait" else \
            E("COND_TIMEDWAIT_IN", c, m, o["t2_abs"])
        before = [E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["t2_lock"]), wait_in]
        handlers = [E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", 0)]
    else:
        assert o["cleanup"] == f"inner({where}): value 0;outer({where});"
        wait_in = E("SEM_WAIT_IN", s, 0) if where == "sem_wait" else \
            E("SEM_TIMEDWAIT_IN", s, 0, o["t2_abs"])
        before = [wait_in, E("SEM_BLOCK", s)]
        handlers = [E("SEM_GETVALUE_IN", s), E("SEM_GETVALUE_OUT", 0, 0, 0)]
    assert without_unwinder(t.thread(o["tid_t2"])) == [
        E("THREAD_START", o["fn"], o["arg"], o["tid_main"], o["th"], "0x0", "0x0", "0x0", "0x0"),
        *before,
        *handlers,
        E("THREAD_CANCELLED", wait_in[0]),
        E("THREAD_END", CANCELED, "cancel"),
    ]


def check_async(t, ev):
    """cancel_calls async / async_cleanup: main's events, and t2's up to its cancellation (the
    lock-unlock loop cut anywhere); gives t2's events after the loop but THREAD_END."""
    o = t.out
    m = o["m"]
    assert ev == main_events(t, trylock=False)
    assert (o["t2_async"], o["t2_async.old"]) == ("0", str(DEFERRED))
    t2 = without_unwinder(t.thread(o["tid_t2"]))
    assert t2[:3] == [
        E("THREAD_START", o["fn"], o["arg"], o["tid_main"], o["th"], "0x0", "0x0", "0x0", "0x0"),
        E("THREAD_SETCANCELTYPE_IN", ASYNCHRONOUS),
        E("THREAD_SETCANCELTYPE_OUT", o["t2_async"], o["t2_async.old"]),
    ]
    assert t2[-1] == E("THREAD_END", CANCELED, "cancel")
    cycle = [E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", 0),
             E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", 0)]
    n = 0
    while 3 + n < len(t2) - 1 and t2[3 + n] == cycle[n % 4]:
        n += 1
    assert n >= 4 * int(o["loops"]) and n >= 4 * 2000
    return t2[3 + n:-1]


@pytest.mark.parametrize("run", range(3))
def test_cancel_async(tmp_path, run):
    """t2 locks and unlocks a mutex in a loop, cancellable at any instruction; main cancels it.
    The program ends normally, the trace is well formed (ptt view reads it all, without an
    error), t2's last call, if any, is the one it was cancelled in."""
    t, ev = cancel(tmp_path, "async", check=False)
    # Events the unwinder records when the cancellation interrupted the recording of an event
    # may be dropped (and counted as lost): see test_cancel_async_cleanup.
    check_trace(t, lost=t.lost)
    assert t.out["cleanup"] == ""
    rest = check_async(t, ev)
    assert sum(int(e[1]) for e in rest if e[0] == "TRACE_LOST") == t.lost
    rest = [e for e in rest if e[0] != "TRACE_LOST"]
    assert rest in ([], [E("THREAD_CANCELLED", "MUTEX_LOCK_IN")],
                    [E("THREAD_CANCELLED", "MUTEX_UNLOCK_IN")])


def test_cancel_async_cleanup(tmp_path):
    """As test_cancel_async, with a cleanup handler that posts a semaphore: its sem_post is in
    the trace, right before the thread's end, in every run (the cancellation lands inside
    libptt's recording of an event in about half of the runs)."""
    for run in range(16):
        t, ev = cancel(tmp_path, "async_cleanup")
        o = t.out
        assert o["cleanup"] == "post(async_cleanup): 0;"
        rest = check_async(t, ev)
        post = [E("SEM_POST_IN", o["s"], 0), E("SEM_POST_OUT", 0, 0, 1)]
        # After the loop (cut inside a call or between calls): the handler's call.
        assert rest in (post, post + [E("THREAD_CANCELLED", "MUTEX_LOCK_IN")],
                        post + [E("THREAD_CANCELLED", "MUTEX_UNLOCK_IN")]), f"run {run}"
