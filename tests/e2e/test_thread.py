"""pthread_create, pthread_exit, pthread_join, pthread_tryjoin_np, pthread_timedjoin_np,
pthread_detach: the exact events of each call, successful and failing, with the program's own
view of each result unchanged."""

from errno import EAGAIN, EBUSY, EDEADLK, EINVAL, ETIMEDOUT

import pytest

from conftest import CREATE_IN, E, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")


def thread(case, tmp_path):
    return trace_prog(tmp_path, "thread_calls", case)


def test_thread_create(tmp_path):
    t = thread("create", tmp_path)
    o = t.out
    me = o["tid_main"]
    assert (o["create_1"], o["create_2"], o["create_fail"]) == ("0", "0", str(EAGAIN))
    assert int(o["attr_stack"]) > 0 and o["big_stack"] == str(1 << 47)
    assert t.thread(me) == [
        t.process_start(),
        CREATE_IN(o["t1_ptr"], "0x0", o["fn"], "0x11"),
        E("THREAD_CREATE_OUT", o["create_1"], o["t1"]),
        E("THREAD_JOIN_IN", o["t1"]), E("THREAD_JOIN_OUT", 0, "0x11"),
        CREATE_IN(o["t2_ptr"], o["attr"], o["fn"], "0x22", stacksize=o["attr_stack"]),
        E("THREAD_CREATE_OUT", o["create_2"], o["t2"]),
        E("THREAD_JOIN_IN", o["t2"]), E("THREAD_JOIN_OUT", 0, "0x22"),
        # A failed create: no thread (0), and nothing starts.
        CREATE_IN(o["t3_ptr"], o["big"], o["fn"], "0x33", stacksize=o["big_stack"]),
        E("THREAD_CREATE_OUT", o["create_fail"], "0x0"),
        EXIT0,
    ]
    for arg, th in (("0x11", o["t1"]), ("0x22", o["t2"])):
        assert t.thread(o[f"tid_{arg[2:]}"]) == [
            E("THREAD_START", o["fn"], arg, me, th, "0x0", "0x0", "0x0", "0x0"),
            E("THREAD_END", arg, "return"),
        ]
    assert t.counts()["THREAD_START"] == 2


def test_thread_exit(tmp_path):
    # Only thread events: while a thread unwinds, glibc's unwinder (libgcc_s) makes calls of its
    # own (pthread_once), traced as well.
    t = trace_prog(tmp_path, "thread_calls", "exit", opts=["--events=thread"])
    o = t.out
    me = o["tid_main"]
    assert o["join_2.value"] == "0x2a"
    # main ends with pthread_exit while t3 runs: the process ends (status 0) when t3 does.
    assert t.thread(me) == [
        t.process_start(),
        CREATE_IN(o["t2_ptr"], "0x0", o["fn2"], "0x0"),
        E("THREAD_CREATE_OUT", o["create_2"], o["t2"]),
        E("THREAD_JOIN_IN", o["t2"]), E("THREAD_JOIN_OUT", o["join_2"], o["join_2.value"]),
        CREATE_IN(o["t3_ptr"], "0x0", o["fn3"], "0x3"),
        E("THREAD_CREATE_OUT", o["create_3"], o["t3"]),
        E("THREAD_EXIT_IN", "0x99"),
        EXIT0,
    ]
    # pthread_exit from a function the thread's function called: the value, and how it ended.
    assert t.thread(o["tid_t2"]) == [
        E("THREAD_START", o["fn2"], "0x0", me, o["t2"], "0x0", "0x0", "0x0", "0x0"),
        E("THREAD_EXIT_IN", "0x2a"),
        E("THREAD_END", "0x2a", "exit"),
    ]
    assert t.thread(o["tid_t3"]) == [
        E("THREAD_START", o["fn3"], "0x3", me, o["t3"], "0x0", "0x0", "0x0", "0x0"),
        E("THREAD_END", "0x3", "return"),
    ]
    assert "not reached" not in t.stdout


def test_thread_join(tmp_path):
    t = thread("join", tmp_path)
    o = t.out
    me = o["tid_main"]
    assert (o["join_1"], o["join_1.value"]) == ("0", "0x44")
    assert o["join_2_novalue"] == "0"
    # Joining itself: EDEADLK, and the value pointer is left alone.
    assert (o["join_self"], o["join_self.value"]) == (str(EDEADLK), "0x1")
    assert t.thread(me) == [
        t.process_start(),
        CREATE_IN(o["t1_ptr"], "0x0", o["fn"], "0x44"),
        E("THREAD_CREATE_OUT", o["create_1"], o["t1"]),
        E("THREAD_JOIN_IN", o["t1"]), E("THREAD_JOIN_OUT", o["join_1"], o["join_1.value"]),
        CREATE_IN(o["t2_ptr"], "0x0", o["fn"], "0x45"),
        E("THREAD_CREATE_OUT", o["create_2"], o["t2"]),
        # No value pointer given: the event still has the thread's value.
        E("THREAD_JOIN_IN", o["t2"]), E("THREAD_JOIN_OUT", o["join_2_novalue"], "0x45"),
        E("THREAD_JOIN_IN", o["self"]), E("THREAD_JOIN_OUT", o["join_self"], "0x0"),
        EXIT0,
    ]
    for arg, th in (("0x44", o["t1"]), ("0x45", o["t2"])):
        assert t.thread(o[f"tid_{arg[2:]}"]) == [
            E("THREAD_START", o["fn"], arg, me, th, "0x0", "0x0", "0x0", "0x0"),
            E("THREAD_END", arg, "return"),
        ]


def blocked_child(t):
    """thread_calls' blocked_child: waits for main's go, returns 0x55."""
    o = t.out
    return [
        E("THREAD_START", o["fn"], "0x0", o["tid_main"], o["th"], "0x0", "0x0", "0x0", "0x0"),
        E("THREAD_END", "0x55", "return"),
    ]


def test_thread_tryjoin(tmp_path):
    t = thread("tryjoin", tmp_path)
    o = t.out
    assert (o["tryjoin_running"], o["tryjoin_running.value"]) == (str(EBUSY), "0x1")
    assert (o["tryjoin_ended"], o["tryjoin_ended.value"]) == ("0", "0x55")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x0"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("THREAD_TRYJOIN_NP_IN", o["th"]), E("THREAD_TRYJOIN_NP_OUT", o["tryjoin_running"], "0x0"),
        E("THREAD_TRYJOIN_NP_IN", o["th"]),
        E("THREAD_TRYJOIN_NP_OUT", o["tryjoin_ended"], o["tryjoin_ended.value"]),
        EXIT0,
    ]
    assert t.thread(o["tid_t2"]) == blocked_child(t)


def test_thread_timedjoin(tmp_path):
    t = thread("timedjoin", tmp_path)
    o = t.out
    assert (o["timedjoin_timeout"], o["timedjoin_timeout.value"]) == (str(ETIMEDOUT), "0x1")
    assert (o["timedjoin"], o["timedjoin.value"]) == ("0", "0x55")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x0"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("THREAD_TIMEDJOIN_NP_IN", o["th"], o["abs1"]),
        E("THREAD_TIMEDJOIN_NP_OUT", o["timedjoin_timeout"], "0x0"),
        E("THREAD_TIMEDJOIN_NP_IN", o["th"], o["abs2"]),
        E("THREAD_TIMEDJOIN_NP_OUT", o["timedjoin"], o["timedjoin.value"]),
        EXIT0,
    ]
    assert t.thread(o["tid_t2"]) == blocked_child(t)


def test_thread_detach(tmp_path):
    t = thread("detach", tmp_path)
    o = t.out
    assert (o["detach"], o["detach_again"]) == ("0", str(EINVAL))
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x0"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("THREAD_DETACH_IN", o["th"]), E("THREAD_DETACH_OUT", o["detach"]),
        E("THREAD_DETACH_IN", o["th"]), E("THREAD_DETACH_OUT", o["detach_again"]),
        EXIT0,
    ]
    # A detached thread's end is recorded all the same.
    assert t.thread(o["tid_t2"]) == blocked_child(t)


def test_thread_end_is_last(tmp_path):
    """THREAD_END is the last event of a thread, however it ends: what runs after it (glibc's
    unwinder calls pthread_once while a thread exits) is not traced."""
    t = trace_prog(tmp_path, "thread_calls", "exit", check=False)  # every class
    o = t.out
    assert t.thread(o["tid_t3"])[-1] == E("THREAD_END", "0x3", "return")
    assert t.thread(o["tid_t2"])[-1] == E("THREAD_END", "0x2a", "exit")
