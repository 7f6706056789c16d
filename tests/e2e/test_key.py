"""pthread_key_create, pthread_key_delete, pthread_setspecific, pthread_getspecific: the class
key is off by default (the calls are hot in real programs); --events=key or all records them,
successful and failing, with the program's own view of each result unchanged."""

from errno import EINVAL

import pytest

from conftest import CREATE_IN, E, class_of, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")


def expected(t):
    """Every event of key_calls, by thread (main, t2), all classes recorded."""
    o = t.out
    k, k2, bad, me = o["key"], o["key2"], o["bad"], o["tid_main"]
    assert k != k2
    assert [o[x] for x in ("create", "set", "create_thread", "join", "create_2", "delete",
                           "t2_set", "delete_2")] == ["0"] * 8
    assert [o[x] for x in ("delete_again", "set_deleted", "set_bad", "delete_bad")] == \
        [str(EINVAL)] * 4
    assert (o["get_unset"], o["get"], o["t2_get"], o["get_after"], o["get_bad"]) == \
        ("0x0", "0x1234", "0x5678", "0x1234", "0x0")
    assert o["destroyed"] == "0x5678"
    main = [
        t.process_start(),
        E("KEY_CREATE_IN", o["k_ptr"], o["destructor"]), E("KEY_CREATE_OUT", o["create"], k),
        E("THREAD_GETSPECIFIC_IN", k), E("THREAD_GETSPECIFIC_OUT", o["get_unset"]),
        E("THREAD_SETSPECIFIC_IN", k, "0x1234"), E("THREAD_SETSPECIFIC_OUT", o["set"]),
        E("THREAD_GETSPECIFIC_IN", k), E("THREAD_GETSPECIFIC_OUT", o["get"]),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x5678"),
        E("THREAD_CREATE_OUT", o["create_thread"], o["th"]),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], "0x0"),
        E("THREAD_GETSPECIFIC_IN", k), E("THREAD_GETSPECIFIC_OUT", o["get_after"]),
        E("KEY_CREATE_IN", o["k2_ptr"], "0x0"), E("KEY_CREATE_OUT", o["create_2"], k2),
        E("KEY_DELETE_IN", k), E("KEY_DELETE_OUT", o["delete"]),
        # Deleted, or never created: EINVAL; getspecific gives NULL.
        E("KEY_DELETE_IN", k), E("KEY_DELETE_OUT", o["delete_again"]),
        E("THREAD_SETSPECIFIC_IN", k, "0x1"), E("THREAD_SETSPECIFIC_OUT", o["set_deleted"]),
        E("THREAD_SETSPECIFIC_IN", bad, "0x1"), E("THREAD_SETSPECIFIC_OUT", o["set_bad"]),
        E("THREAD_GETSPECIFIC_IN", bad), E("THREAD_GETSPECIFIC_OUT", o["get_bad"]),
        E("KEY_DELETE_IN", bad), E("KEY_DELETE_OUT", o["delete_bad"]),
        E("KEY_DELETE_IN", k2), E("KEY_DELETE_OUT", o["delete_2"]),
        EXIT0,
    ]
    t2 = [
        E("THREAD_START", o["fn"], "0x5678", me, o["th"], "0x0", "0x0", "0x0", "0x0"),
        E("THREAD_SETSPECIFIC_IN", k, "0x5678"), E("THREAD_SETSPECIFIC_OUT", o["t2_set"]),
        E("THREAD_GETSPECIFIC_IN", k), E("THREAD_GETSPECIFIC_OUT", o["t2_get"]),
        # The destructor runs after the thread's end, untraced.
        E("THREAD_END", "0x0", "return"),
    ]
    return main, t2


@pytest.mark.parametrize("events,classes", [
    ("all", None), ("key,thread", {"key", "thread"}), ("key", {"key"}),
    (None, None),  # default: every class but key
])
def test_key(tmp_path, events, classes):
    t = trace_prog(tmp_path, "key_calls", opts=[f"--events={events}"] if events else [])
    if events is None:
        def keep(e):
            return class_of(e[0]) != "key"
    else:
        def keep(e):
            return classes is None or class_of(e[0]) in classes | {"meta"}
    main, t2 = expected(t)
    assert t.thread(t.out["tid_main"]) == [e for e in main if keep(e)]
    assert t.thread(t.out["tid_t2"]) == [e for e in t2 if keep(e)]
    if events is None:
        assert not [e for e in t.events if class_of(e.name) == "key"]
