"""pthread_setname_np, pthread_setschedparam, pthread_setschedprio, pthread_setaffinity_np,
sched_yield, pthread_yield, and the attribute settings THREAD_CREATE_IN records: the exact
events of each call, successful and failing, with the program's own view of each result
unchanged."""

import re
from errno import EFAULT, EINVAL, EPERM, ERANGE

from conftest import CREATE_IN, PTT, E, parse_raw, run, trace_prog, view

EXIT0 = E("PROCESS_EXIT", "exit=0")
SCHED_OTHER, SCHED_FIFO = 0, 1


def sched(case, tmp_path, rc=0):
    return trace_prog(tmp_path, "sched_calls", case, rc=rc)


def test_setname(tmp_path):
    t = sched("setname", tmp_path)
    o = t.out
    assert (o["setname_self"], o["setname_t2"], o["setname_long"]) == ("0", "0", str(ERANGE))
    assert o["t2_name"] == 'ptt "t2"'
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], o["arg"]),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("THREAD_SETNAME_NP_IN", o["self"], '"ptt-main"'),
        E("THREAD_SETNAME_NP_OUT", o["setname_self"]),
        # Quotes are escaped: a raw line stays one line of fields.
        E("THREAD_SETNAME_NP_IN", o["th"], r'"ptt \"t2\""'),
        E("THREAD_SETNAME_NP_OUT", o["setname_t2"]),
        # Over 15 characters: ERANGE; the whole name is recorded.
        E("THREAD_SETNAME_NP_IN", o["th"], '"a-name-longer-than-15"'),
        E("THREAD_SETNAME_NP_OUT", o["setname_long"]),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], "0x0"),
        EXIT0,
    ]


def test_setname_main(tmp_path):
    """The main thread names itself: PROCESS_START gives its pthread_t (since format 2.1), and
    it is named from then on (before: main for good). The names it then gives the thread it
    made go to that thread, not to main."""
    t = sched("setname", tmp_path)
    o = t.out
    tm = o["tid_main"]
    start = [e for e in parse_raw(view("--format=raw", t.path), keep_machine=True)
             if e.name == "PROCESS_START"]
    assert [e.fields[2] for e in start] == [o["self"]]
    text = run([PTT, "view", "--event=THREAD_SETNAME_NP_OUT,THREAD_JOIN_IN", t.path]).stdout
    assert [ln.split(" : ", 1)[1] for ln in text.splitlines()] == [
        f"Pid {tm}, Thread ptt-main ({tm}) leaves function pthread_setname_np, returning 0.",
        f"Pid {tm}, Thread ptt-main ({tm}) leaves function pthread_setname_np, returning 0.",
        f"Pid {tm}, Thread ptt-main ({tm}) leaves function pthread_setname_np, returning ERANGE "
        f"({ERANGE}).",
        f"Pid {tm}, Thread ptt-main ({tm}) enters function pthread_join (thread {o['th']}) at "
        "sched_calls.c:37.",
    ], text
    stat = run([PTT, "stat", t.path]).stdout
    assert re.search(rf"^{tm} +{tm} +ptt-main ", stat, re.M), stat
    assert re.search(rf"^{tm} +{o['tid_t2']} +ptt \"t2\" ", stat, re.M), stat


def test_setname_hidden(tmp_path):
    """A thread started past the pthread_create interposer names itself: no THREAD_START gave
    its pthread_t, yet it is named from then on (before: by its tid for good)."""
    t = sched("setname_hidden", tmp_path)
    o = t.out
    assert (o["create_hidden"], o["setname_hidden"], o["join_hidden"]) == ("0", "0", "0")
    text = run([PTT, "view", "--event=MUTEX_LOCK_IN", t.path]).stdout
    assert f"Thread ptt-hidden ({o['tid_hidden']}) enters function pthread_mutex_lock" in text, \
        text


def test_prctl(tmp_path):
    """prctl(PR_SET_NAME, 16): -1 and EFAULT as untraced (trace_prog compares), no crash; its
    events hold no name. A name is recorded as the kernel kept it (15 bytes) and names the
    thread from then on."""
    t = sched("prctl", tmp_path)
    o = t.out
    assert (o["prctl_bad"], o["prctl_bad.errno"]) == ("-1", str(EFAULT))
    assert (o["prctl_name"], o["prctl_long"], o["name"]) == ("0", "0", "a-name-longer-t")
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("PRCTL_IN", 15, '""'), E("PRCTL_OUT", -1, EFAULT),
        E("PRCTL_IN", 15, '"ptt-prctl"'), E("PRCTL_OUT", 0, 0),
        E("PRCTL_IN", 15, '"a-name-longer-t"'), E("PRCTL_OUT", 0, 0),
        EXIT0,
    ]
    text = run([PTT, "view", t.path]).stdout
    assert f"Thread a-name-longer-t ({o['tid_main']}) ends" in text, text
    # A window after the name was set: the name still (the prctl passed over, before: main).
    exit_ns = [e.ns for e in t.events if e.name == "PROCESS_EXIT"][0]
    text = run([PTT, "view", f"--from={(exit_ns - 1000) / 1e9:.9f}", t.path]).stdout
    assert text.splitlines() == [text.splitlines()[0]], text
    assert f"Thread a-name-longer-t ({o['tid_main']}) ends" in text, text


def test_setschedparam(tmp_path):
    t = sched("sched", tmp_path)
    o = t.out
    self = o["self"]
    assert (o["other_0"], o["back"], o["prio_0"]) == ("0", "0", "0")
    # Only priority 0 with SCHED_OTHER; SCHED_FIFO as privileges allow (trace_prog compared it
    # with the untraced run).
    assert (o["other_5"], o["prio_5"]) == (str(EINVAL), str(EINVAL))
    assert o["fifo_1"] in ("0", str(EPERM))
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("THREAD_SETSCHEDPARAM_IN", self, SCHED_OTHER, 0),
        E("THREAD_SETSCHEDPARAM_OUT", o["other_0"]),
        E("THREAD_SETSCHEDPARAM_IN", self, SCHED_OTHER, 5),
        E("THREAD_SETSCHEDPARAM_OUT", o["other_5"]),
        E("THREAD_SETSCHEDPARAM_IN", self, SCHED_FIFO, 1),
        E("THREAD_SETSCHEDPARAM_OUT", o["fifo_1"]),
        E("THREAD_SETSCHEDPARAM_IN", self, SCHED_OTHER, 0),
        E("THREAD_SETSCHEDPARAM_OUT", o["back"]),
        E("THREAD_SETSCHEDPRIO_IN", self, 0), E("THREAD_SETSCHEDPRIO_OUT", o["prio_0"]),
        E("THREAD_SETSCHEDPRIO_IN", self, 5), E("THREAD_SETSCHEDPRIO_OUT", o["prio_5"]),
        EXIT0,
    ]


def test_setaffinity(tmp_path):
    t = sched("affinity", tmp_path)
    o = t.out
    self = o["self"]
    assert (o["set_one"], o["set_none"], o["set_orig"]) == ("0", str(EINVAL), "0")
    # CPUs as a mask, CPU 0 in bit 0: the first CPU of the thread's, none (EINVAL), all again.
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("THREAD_SETAFFINITY_NP_IN", self, o["one_mask"]),
        E("THREAD_SETAFFINITY_NP_OUT", o["set_one"]),
        E("THREAD_SETAFFINITY_NP_IN", self, "0x0"),
        E("THREAD_SETAFFINITY_NP_OUT", o["set_none"]),
        E("THREAD_SETAFFINITY_NP_IN", self, o["orig_mask"]),
        E("THREAD_SETAFFINITY_NP_OUT", o["set_orig"]),
        EXIT0,
    ]


def test_sched_yield(tmp_path):
    t = sched("yield", tmp_path)
    o = t.out
    assert o["sched_yield"] == "0"
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("SCHED_YIELD_IN"), E("SCHED_YIELD_OUT", o["sched_yield"]),
        EXIT0,
    ]


def test_pthread_yield(tmp_path):
    """A binary built against glibc < 2.34 calls pthread_yield@GLIBC_2.2.5, which resolves to
    libptt's pthread_yield."""
    t = sched("pthread_yield", tmp_path)
    o = t.out
    assert o["pthread_yield"] == "0"
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("THREAD_YIELD_IN"), E("THREAD_YIELD_OUT", o["pthread_yield"]),
        EXIT0,
    ]


def test_pthread_yield_dlsym(tmp_path):
    """glibc 2.34 and later define pthread_yield only as a compat symbol, which
    dlsym(RTLD_DEFAULT) does not find; under ptt trace neither: libptt's is the same compat
    symbol, so a program that looks for it takes the same path."""
    t = sched("pthread_yield_dlsym", tmp_path)
    assert t.out["found"] == "0"
    assert "THREAD_YIELD_IN" not in [e.name for e in t.events]


def test_create_attr(tmp_path):
    """THREAD_CREATE_IN: the stack size, detached state, policy, priority and inheritance the
    attribute sets (a: 256 KiB, detached, SCHED_FIFO 5 but inherited; b: default stack,
    SCHED_OTHER 0, explicit)."""
    t = sched("attr", tmp_path)
    o = t.out
    me = o["tid_main"]
    assert (o["create_a"], o["create_b"], o["join"]) == ("0", "0", "0")
    assert t.thread(me) == [
        t.process_start(),
        CREATE_IN(o["t1_ptr"], o["a"], o["fn"], o["t1_arg"], stacksize=256 * 1024, detached=1,
                  policy=SCHED_FIFO, priority=5, inherit=1),
        E("THREAD_CREATE_OUT", o["create_a"], o["t1"]),
        CREATE_IN(o["t2_ptr"], o["b"], o["fn"], o["t2_arg"], stacksize=o["b_stack"],
                  detached=0, policy=SCHED_OTHER, priority=0, inherit=0),
        E("THREAD_CREATE_OUT", o["create_b"], o["t2"]),
        E("THREAD_JOIN_IN", o["t2"]), E("THREAD_JOIN_OUT", o["join"], "0x0"),
        EXIT0,
    ]
    for n in ("t1", "t2"):
        assert t.thread(o[f"tid_{n}"]) == [
            E("THREAD_START", o["fn"], o[f"{n}_arg"], me, o[n], "0x0", "0x0", "0x0", "0x0"),
            E("THREAD_END", "0x0", "return"),
        ]
