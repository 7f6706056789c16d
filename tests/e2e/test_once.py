"""pthread_once: which thread runs the init routine (ONCE_RUN, its calls, ONCE_DONE inside its
pthread_once), which waits for it (state 1, running, on entry), and later calls (state 2)."""

from conftest import CREATE_IN, E, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")
NOT_RUN, RUNNING, DONE = 0, 1, 2


def test_once(tmp_path):
    t = trace_prog(tmp_path, "once_calls", "once")
    o = t.out
    once, init, m, me = o["once"], o["init"], o["m"], o["tid_main"]
    assert o["runs"] == "1"
    assert [o[k] for k in ("t1_once", "t2_once", "main_once", "init_lock", "init_unlock")] == \
        ["0"] * 5
    assert t.thread(me) == [
        t.process_start(),
        CREATE_IN(o["t1_ptr"], "0x0", o["fn"], o["t1_arg"]),
        E("THREAD_CREATE_OUT", o["create_1"], o["t1"]),
        CREATE_IN(o["t2_ptr"], "0x0", o["fn"], o["t2_arg"]),
        E("THREAD_CREATE_OUT", o["create_2"], o["t2"]),
        E("THREAD_JOIN_IN", o["t1"]), E("THREAD_JOIN_OUT", o["join_1"], "0x0"),
        E("THREAD_JOIN_IN", o["t2"]), E("THREAD_JOIN_OUT", o["join_2"], "0x0"),
        # Done long ago: state 2, nothing run.
        E("THREAD_ONCE_IN", once, init, DONE), E("THREAD_ONCE_OUT", o["main_once"], 0),
        EXIT0,
    ]
    # t1 runs the init routine, and its calls are seen inside it.
    assert t.thread(o["tid_t1"]) == [
        E("THREAD_START", o["fn"], o["t1_arg"], me, o["t1"], "0x0", "0x0", "0x0", "0x0"),
        E("THREAD_ONCE_IN", once, init, NOT_RUN),
        E("ONCE_RUN", once, init),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", o["init_lock"]),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", o["init_unlock"]),
        E("ONCE_DONE", once),
        E("THREAD_ONCE_OUT", o["t1_once"], 1),
        E("THREAD_END", "0x0", "return"),
    ]
    # t2 came while t1 ran it: state 1, it waited, ran nothing.
    assert t.thread(o["tid_t2"]) == [
        E("THREAD_START", o["fn"], o["t2_arg"], me, o["t2"], "0x0", "0x0", "0x0", "0x0"),
        E("THREAD_ONCE_IN", once, init, RUNNING), E("THREAD_ONCE_OUT", o["t2_once"], 0),
        E("THREAD_END", "0x0", "return"),
    ]
    ev = t.events
    t2_out = next(e.ns for e in ev if e.name == "THREAD_ONCE_OUT" and e.tid == int(o["tid_t2"]))
    done = next(e.ns for e in ev if e.name == "ONCE_DONE")
    assert done <= t2_out


def test_once_nested(tmp_path):
    """An init routine that calls pthread_once on another once: the frames nest."""
    t = trace_prog(tmp_path, "once_calls", "nested")
    o = t.out
    outer, inner = o["once"], o["inner"]
    outer_init, inner_init = o["outer_init"], o["inner_init"]
    assert o["runs"] == "2"
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("THREAD_ONCE_IN", outer, outer_init, NOT_RUN),
        E("ONCE_RUN", outer, outer_init),
        E("THREAD_ONCE_IN", inner, inner_init, NOT_RUN),
        E("ONCE_RUN", inner, inner_init),
        E("ONCE_DONE", inner),
        E("THREAD_ONCE_OUT", o["inner_once"], 1),
        E("ONCE_DONE", outer),
        E("THREAD_ONCE_OUT", o["outer_once"], 1),
        E("THREAD_ONCE_IN", outer, outer_init, DONE), E("THREAD_ONCE_OUT", o["again_once"], 0),
        EXIT0,
    ]
