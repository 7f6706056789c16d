"""sem_init, sem_destroy, sem_open, sem_close, sem_unlink, sem_wait, sem_trywait, sem_timedwait,
sem_clockwait, sem_post, sem_getvalue: the exact events of each call, successful and failing,
with the program's own view of each result (return value and errno) unchanged.

The OUT events of sem_* carry the result, errno (0 when the call did not fail) and, for waits and
posts, the value after the call; their IN events the value before it."""

from errno import EAGAIN, EEXIST, EINVAL, ENOENT, EOVERFLOW, ETIMEDOUT

import pytest

from conftest import CREATE_IN, PTT, E, run, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")
REALTIME, MONOTONIC = 0, 1


def sem(tmp_path, *args):
    return trace_prog(tmp_path, "sem_calls", *args)


def out(name, o, key, *value):
    """SEM_<NAME>_OUT with the result and errno the program saw (errno 0 when it did not
    fail: the program's errno then still holds the sentinel it set before the call)."""
    r = o[key]
    return E(f"SEM_{name}_OUT", r, o[f"{key}.errno"] if r == "-1" else 0, *value)


def test_sem_init(tmp_path):
    t = sem(tmp_path, "init")
    o = t.out
    x, mx = o["x"], int(o["max"])
    assert [o[k] for k in ("init_0", "destroy_0", "init_shared", "destroy_shared", "init_max",
                           "destroy_max")] == ["0"] * 6
    assert (o["init_over"], o["init_over.errno"]) == ("-1", str(EINVAL))
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("SEM_INIT_IN", x, 0, 0), out("INIT", o, "init_0"),
        E("SEM_DESTROY_IN", x), out("DESTROY", o, "destroy_0"),
        E("SEM_INIT_IN", x, 1, 3), out("INIT", o, "init_shared"),
        E("SEM_DESTROY_IN", x), out("DESTROY", o, "destroy_shared"),
        E("SEM_INIT_IN", x, 0, mx), out("INIT", o, "init_max"),
        E("SEM_DESTROY_IN", x), out("DESTROY", o, "destroy_max"),
        # Over SEM_VALUE_MAX: EINVAL.
        E("SEM_INIT_IN", x, 0, mx + 1), out("INIT", o, "init_over"),
        EXIT0,
    ]


def test_sem_named(tmp_path):
    t = sem(tmp_path, "named")
    o = t.out
    name, other = o["name"], o["other"]
    a = o["open_new"]
    assert (o["open_new.failed"], o["open_again.failed"]) == ("0", "0")
    assert o["open_again"] == a  # the same name, opened twice: the same mapping
    assert (o["open_excl.failed"], o["open_excl.errno"]) == ("1", str(EEXIST))
    assert (o["open_none.failed"], o["open_none.errno"]) == ("1", str(ENOENT))
    assert (o["getvalue"], o["value"]) == ("0", "2")
    assert (o["close_a"], o["close_b"], o["unlink"]) == ("0", "0", "0")
    assert (o["close_unnamed"], o["close_unnamed.errno"]) == ("-1", str(EINVAL))
    assert (o["unlink_again"], o["unlink_again.errno"]) == ("-1", str(ENOENT))
    # sem_open's fields: flags, mode (octal), value, then the name; without O_CREAT, no mode
    # and no value.
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("SEM_OPEN_IN", o["creat_excl"], "0600", 2, name), E("SEM_OPEN_OUT", a, 0),
        E("SEM_OPEN_IN", o["creat_excl"], "0600", 2, name),
        E("SEM_OPEN_OUT", "0x0", o["open_excl.errno"]),
        E("SEM_OPEN_IN", o["creat"], "0644", 5, name), E("SEM_OPEN_OUT", a, 0),
        E("SEM_OPEN_IN", "0x0", "00", 0, other), E("SEM_OPEN_OUT", "0x0", o["open_none.errno"]),
        E("SEM_GETVALUE_IN", a), out("GETVALUE", o, "getvalue", o["value"]),
        E("SEM_CLOSE_IN", a), out("CLOSE", o, "close_a"),
        E("SEM_CLOSE_IN", a), out("CLOSE", o, "close_b"),
        E("SEM_CLOSE_IN", o["s"]), out("CLOSE", o, "close_unnamed"),
        E("SEM_UNLINK_IN", name), out("UNLINK", o, "unlink"),
        E("SEM_UNLINK_IN", name), out("UNLINK", o, "unlink_again"),
        EXIT0,
    ]
    # Named by its name from sem_open's return on (before: by its address from there for good).
    view = run([PTT, "view", "--event=SEM_OPEN_OUT,SEM_GETVALUE_IN", t.path]).stdout
    bare = name.strip('"')
    assert view.count(f"returning {bare}.") == 2, view
    assert f"sem_getvalue (sem {bare})." in view, view


def test_sem_wait(tmp_path):
    t = sem(tmp_path, "wait")
    o = t.out
    s = o["s"]
    assert (o["wait"], o["post"], o["trywait_1"]) == ("0", "0", "0")
    assert (o["trywait_0"], o["trywait_0.errno"]) == ("-1", str(EAGAIN))
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("SEM_INIT_IN", s, 0, 1), out("INIT", o, "init"),
        # The value was 1: no wait.
        E("SEM_WAIT_IN", s, 1), out("WAIT", o, "wait", 0),
        E("SEM_TRYWAIT_IN", s, 0), out("TRYWAIT", o, "trywait_0", 0),
        E("SEM_POST_IN", s, 0), out("POST", o, "post", 1),
        E("SEM_TRYWAIT_IN", s, 1), out("TRYWAIT", o, "trywait_1", 0),
        EXIT0,
    ]


def test_sem_timedwait(tmp_path):
    t = sem(tmp_path, "timedwait")
    o = t.out
    s = o["s"]
    assert (o["timedwait_timeout"], o["timedwait_timeout.errno"]) == ("-1", str(ETIMEDOUT))
    assert (o["timedwait_bad"], o["timedwait_bad.errno"]) == ("-1", str(EINVAL))
    assert (o["post"], o["timedwait"]) == ("0", "0")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("SEM_INIT_IN", s, 0, 0), out("INIT", o, "init"),
        E("SEM_TIMEDWAIT_IN", s, 0, o["abs1"]), E("SEM_BLOCK", s),
        out("TIMEDWAIT", o, "timedwait_timeout", 0),
        E("SEM_POST_IN", s, 0), out("POST", o, "post", 1),
        # tv_nsec out of range: EINVAL though the value is 1 (not tried first, no SEM_BLOCK).
        E("SEM_TIMEDWAIT_IN", s, 1, o["abs_bad"]), out("TIMEDWAIT", o, "timedwait_bad", 1),
        E("SEM_TIMEDWAIT_IN", s, 1, o["abs2"]), out("TIMEDWAIT", o, "timedwait", 0),
        EXIT0,
    ]


def test_sem_clockwait(tmp_path):
    t = sem(tmp_path, "clockwait")
    o = t.out
    s = o["s"]
    assert (o["clockwait_timeout"], o["clockwait_timeout.errno"]) == ("-1", str(ETIMEDOUT))
    assert (o["clockwait_badclock"], o["clockwait_badclock.errno"]) == ("-1", str(EINVAL))
    assert (o["clockwait_bad"], o["clockwait_bad.errno"]) == ("-1", str(EINVAL))
    assert (o["post"], o["clockwait"]) == ("0", "0")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("SEM_INIT_IN", s, 0, 0), out("INIT", o, "init"),
        E("SEM_CLOCKWAIT_IN", s, 0, MONOTONIC, o["abs1"]), E("SEM_BLOCK", s),
        out("CLOCKWAIT", o, "clockwait_timeout", 0),
        E("SEM_POST_IN", s, 0), out("POST", o, "post", 1),
        E("SEM_CLOCKWAIT_IN", s, 1, o["cputime"], o["abs2"]),
        out("CLOCKWAIT", o, "clockwait_badclock", 1),
        E("SEM_CLOCKWAIT_IN", s, 1, MONOTONIC, o["abs_bad"]),
        out("CLOCKWAIT", o, "clockwait_bad", 1),
        # CLOCK_REALTIME with a CLOCK_MONOTONIC time far in the past: taken at once anyway.
        E("SEM_CLOCKWAIT_IN", s, 1, REALTIME, o["abs2"]), out("CLOCKWAIT", o, "clockwait", 0),
        EXIT0,
    ]


def test_sem_post(tmp_path):
    t = sem(tmp_path, "post")
    o = t.out
    s, mx = o["s"], o["max"]
    assert [o[k] for k in ("post_0", "post_1", "getvalue", "destroy", "init_max",
                           "getvalue_max")] == ["0"] * 6
    assert (o["post_max"], o["post_max.errno"]) == ("-1", str(EOVERFLOW))
    assert (o["value"], o["value_max"]) == ("2", mx)
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("SEM_INIT_IN", s, 0, 0), out("INIT", o, "init"),
        E("SEM_POST_IN", s, 0), out("POST", o, "post_0", 1),
        E("SEM_POST_IN", s, 1), out("POST", o, "post_1", 2),
        E("SEM_GETVALUE_IN", s), out("GETVALUE", o, "getvalue", o["value"]),
        E("SEM_DESTROY_IN", s), out("DESTROY", o, "destroy"),
        E("SEM_INIT_IN", s, 0, mx), out("INIT", o, "init_max"),
        # At SEM_VALUE_MAX: EOVERFLOW, the value unchanged.
        E("SEM_POST_IN", s, mx), out("POST", o, "post_max", mx),
        E("SEM_GETVALUE_IN", s), out("GETVALUE", o, "getvalue_max", mx),
        EXIT0,
    ]


@pytest.mark.parametrize("kind", ["plain", "timed", "clock"])
def test_sem_block(tmp_path, kind):
    """t2 waits on a semaphore of value 0 (SEM_BLOCK) until main posts (SEM_ACQUIRED)."""
    t = sem(tmp_path, "block", kind)
    o = t.out
    s, me = o["s"], o["tid_main"]
    assert [o[k] for k in ("init", "create", "post", "join", "t2_wait")] == ["0"] * 5
    ev = t.thread(me)
    # After the post, the value is 1 until t2 takes it: main may see either.
    post_out = ev[6]
    assert post_out in (out("POST", o, "post", 1), out("POST", o, "post", 0))
    assert ev == [
        t.process_start(),
        E("SEM_INIT_IN", s, 0, 0), out("INIT", o, "init"),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x3"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("SEM_POST_IN", s, 0), post_out,
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], "0x3"),
        EXIT0,
    ]
    name, fields = {"plain": ("WAIT", ()), "timed": ("TIMEDWAIT", (o.get("t2_abs"),)),
                    "clock": ("CLOCKWAIT", (MONOTONIC, o.get("t2_abs")))}[kind]
    assert t.thread(o["tid_t2"]) == [
        E("THREAD_START", o["fn"], "0x3", me, o["th"], "0x0", "0x0", "0x0", "0x0"),
        E(f"SEM_{name}_IN", s, 0, *fields), E("SEM_BLOCK", s), E("SEM_ACQUIRED", s),
        out(name, o, "t2_wait", 0),
        E("THREAD_END", "0x3", "return"),
    ]
