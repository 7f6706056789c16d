"""pthread_barrier_init, _wait, _destroy: the exact events of each call, successful and
failing, with the program's own view of each result unchanged."""

from errno import EINVAL

from conftest import CREATE_IN, E, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")
SERIAL = "-1"  # PTHREAD_BARRIER_SERIAL_THREAD


def barrier(case, tmp_path):
    return trace_prog(tmp_path, "barrier_calls", case)


def test_barrier_init(tmp_path):
    t = barrier("init", tmp_path)
    o = t.out
    b = o["b"]
    assert [o[k] for k in ("init_2", "destroy_2", "init_attr", "destroy_attr")] == ["0"] * 4
    assert o["init_0"] == str(EINVAL)
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("BARRIER_INIT_IN", b, "0x0", 2), E("BARRIER_INIT_OUT", o["init_2"]),
        E("BARRIER_DESTROY_IN", b), E("BARRIER_DESTROY_OUT", o["destroy_2"]),
        E("BARRIER_INIT_IN", b, o["attr"], 1), E("BARRIER_INIT_OUT", o["init_attr"]),
        E("BARRIER_DESTROY_IN", b), E("BARRIER_DESTROY_OUT", o["destroy_attr"]),
        E("BARRIER_INIT_IN", b, "0x0", 0), E("BARRIER_INIT_OUT", o["init_0"]),
        EXIT0,
    ]


def released(b, ret):
    """BARRIER_RELEASED and BARRIER_WAIT_OUT of a wait that returned ret."""
    return [E("BARRIER_RELEASED", b, 1 if ret == SERIAL else 0), E("BARRIER_WAIT_OUT", ret)]


def test_barrier_wait(tmp_path):
    t = barrier("wait", tmp_path)
    o = t.out
    b, me = o["b"], o["tid_main"]
    assert o["wait_alone"] == SERIAL
    # Exactly one of the two threads is the serial one.
    assert o["serial_count"] == "1" and o["main_wait.ok"] == "1" and o["t2_wait.ok"] == "1"
    assert sorted([o["main_wait"], o["t2_wait"]]) == [SERIAL, "0"]
    assert t.thread(me) == [
        t.process_start(),
        E("BARRIER_INIT_IN", b, "0x0", 1), E("BARRIER_INIT_OUT", o["init_1"]),
        E("BARRIER_WAIT_IN", b), *released(b, o["wait_alone"]),
        E("BARRIER_DESTROY_IN", b), E("BARRIER_DESTROY_OUT", o["destroy_1"]),
        E("BARRIER_INIT_IN", b, "0x0", 2), E("BARRIER_INIT_OUT", o["init_2"]),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x0"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("BARRIER_WAIT_IN", b), *released(b, o["main_wait"]),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], "0x0"),
        E("BARRIER_DESTROY_IN", b), E("BARRIER_DESTROY_OUT", o["destroy_2"]),
        EXIT0,
    ]
    assert t.thread(o["tid_t2"]) == [
        E("THREAD_START", o["fn"], "0x0", me, o["th"], "0x0", "0x0", "0x0", "0x0"),
        E("BARRIER_WAIT_IN", b), *released(b, o["t2_wait"]),
        E("THREAD_END", "0x0", "return"),
    ]
    # Neither left the barrier before both had entered it.
    ev = t.events
    ins = [e.ns for e in ev if e.name == "BARRIER_WAIT_IN"][1:]
    rel = [e.ns for e in ev if e.name == "BARRIER_RELEASED"][1:]
    assert max(ins) <= min(rel)


def test_barrier_destroy(tmp_path):
    t = barrier("destroy", tmp_path)
    o = t.out
    b = o["b"]
    assert (o["destroy_unused"], o["wait"], o["destroy_used"]) == ("0", SERIAL, "0")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("BARRIER_INIT_IN", b, "0x0", 3), E("BARRIER_INIT_OUT", o["init_3"]),
        E("BARRIER_DESTROY_IN", b), E("BARRIER_DESTROY_OUT", o["destroy_unused"]),
        E("BARRIER_INIT_IN", b, "0x0", 1), E("BARRIER_INIT_OUT", o["init_1"]),
        E("BARRIER_WAIT_IN", b), *released(b, o["wait"]),
        E("BARRIER_DESTROY_IN", b), E("BARRIER_DESTROY_OUT", o["destroy_used"]),
        EXIT0,
    ]
