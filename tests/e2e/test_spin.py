"""pthread_spin_init, _lock, _trylock, _unlock, _destroy: the exact events of each call,
successful and failing, with the program's own view of each result unchanged."""

from errno import EBUSY

from conftest import CREATE_IN, E, trace_prog

EXIT0 = E("PROCESS_EXIT", "exit=0")


def spin(case, tmp_path):
    """spin_calls CASE, and main's events around the case's (s initialized, then destroyed)."""
    t = trace_prog(tmp_path, "spin_calls", case)
    o = t.out
    assert (o["init_s"], o["destroy_s"]) == ("0", "0")
    ev = t.thread(o["tid_main"])
    assert ev[:3] == [t.process_start(), E("SPIN_INIT_IN", o["s"], 0),
                      E("SPIN_INIT_OUT", o["init_s"])]
    assert ev[-3:] == [E("SPIN_DESTROY_IN", o["s"]), E("SPIN_DESTROY_OUT", o["destroy_s"]), EXIT0]
    return t, ev[3:-3]


def test_spin_init(tmp_path):
    t, ev = spin("init", tmp_path)
    o = t.out
    x = o["x"]
    assert [o[k] for k in ("init_private", "destroy_private", "init_shared",
                           "destroy_shared")] == ["0"] * 4
    assert ev == [
        E("SPIN_INIT_IN", x, 0), E("SPIN_INIT_OUT", o["init_private"]),
        E("SPIN_DESTROY_IN", x), E("SPIN_DESTROY_OUT", o["destroy_private"]),
        E("SPIN_INIT_IN", x, 1), E("SPIN_INIT_OUT", o["init_shared"]),
        E("SPIN_DESTROY_IN", x), E("SPIN_DESTROY_OUT", o["destroy_shared"]),
    ]


def test_spin_lock(tmp_path):
    t, ev = spin("lock", tmp_path)
    o = t.out
    s = o["s"]
    assert [o[k] for k in ("lock", "unlock", "trylock_free", "trylock_held", "unlock_2")] == \
        ["0", "0", "0", str(EBUSY), "0"]
    assert ev == [
        E("SPIN_LOCK_IN", s), E("SPIN_LOCK_OUT", o["lock"]),
        E("SPIN_UNLOCK_IN", s), E("SPIN_UNLOCK_OUT", o["unlock"]),
        E("SPIN_TRYLOCK_IN", s), E("SPIN_TRYLOCK_OUT", o["trylock_free"]),
        # Held: the try fails at once, it never spins.
        E("SPIN_TRYLOCK_IN", s), E("SPIN_TRYLOCK_OUT", o["trylock_held"]),
        E("SPIN_UNLOCK_IN", s), E("SPIN_UNLOCK_OUT", o["unlock_2"]),
    ]


def test_spin_contended(tmp_path):
    t, ev = spin("contended", tmp_path)
    o = t.out
    s, me = o["s"], o["tid_main"]
    assert [o[k] for k in ("lock", "create", "unlock", "join", "t2_lock", "t2_unlock")] == \
        ["0"] * 6
    assert ev == [
        E("SPIN_LOCK_IN", s), E("SPIN_LOCK_OUT", o["lock"]),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x9"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("SPIN_UNLOCK_IN", s), E("SPIN_UNLOCK_OUT", o["unlock"]),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], "0x9"),
    ]
    assert t.thread(o["tid_t2"]) == [
        E("THREAD_START", o["fn"], "0x9", me, o["th"], "0x0", "0x0", "0x0", "0x0"),
        E("SPIN_LOCK_IN", s), E("SPIN_WAIT", s), E("SPIN_ACQUIRED", s),
        E("SPIN_LOCK_OUT", o["t2_lock"]),
        E("SPIN_UNLOCK_IN", s), E("SPIN_UNLOCK_OUT", o["t2_unlock"]),
        E("THREAD_END", "0x9", "return"),
    ]
    # The spin: from SPIN_WAIT until main's unlock let it go.
    ev = t.events
    at = {e.name: e.ns for e in ev if e.tid == int(o["tid_t2"])}
    unlock = next(e.ns for e in ev if e.name == "SPIN_UNLOCK_IN" and e.tid == int(me))
    assert at["SPIN_WAIT"] <= unlock <= at["SPIN_ACQUIRED"]
