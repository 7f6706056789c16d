"""pthread_kill, pthread_sigqueue, pthread_sigmask, sigwait, sigwaitinfo, sigtimedwait, and the
delivery of signals to the handlers a program installs with sigaction or signal()
(SIGNAL_DELIVERED, the handler's calls, SIGNAL_HANDLED, wherever the signal comes): the exact
events, and the program's own view (results, errno, what the handlers got, what sigaction and
signal() report) unchanged."""

from errno import EAGAIN, EINVAL

from conftest import CREATE_IN, E, check_trace, trace_prog
from names_util import stat_json

EXIT0 = E("PROCESS_EXIT", "exit=0")
SI_USER, SI_QUEUE, SI_TKILL = 0, -1, -6
SIG_BLOCK, SIG_UNBLOCK, SIG_SETMASK = 0, 1, 2


def sig(tmp_path, case):
    """signal_calls CASE: main's events after the set-up (s initialized)."""
    t = trace_prog(tmp_path, "signal_calls", case)
    ev = t.thread(t.out["tid_main"])
    assert ev[:3] == [t.process_start(), E("SEM_INIT_IN", t.out["s"], 0, 0),
                      E("SEM_INIT_OUT", 0, 0)]
    return t, ev[3:]


def handled(o, key, sig, code):
    assert (o[f"{key}.sig"], o[f"{key}.code"], o[f"{key}.from_self"], o[f"{key}.handled"]) == \
        (str(sig), str(code), "1", "1")


def handler(o, sig, code, post_value=0):
    """The SA_SIGINFO handler of signal_calls run for sig: it posts s."""
    return [E("SIGNAL_DELIVERED", sig, code, o["pid"]),
            E("SEM_POST_IN", o["s"], post_value), E("SEM_POST_OUT", 0, 0, post_value + 1),
            E("SIGNAL_HANDLED", sig)]


def test_signal_kill(tmp_path):
    t, ev = sig(tmp_path, "kill")
    o = t.out
    usr1 = o["usr1"]
    assert (o["kill_0"], o["kill_bad"], o["kill_usr1"]) == ("0", str(EINVAL), "0")
    handled(o, "kill_usr1", usr1, SI_TKILL)
    assert ev == [
        # Signal 0: checked, not sent; 99: no such signal.
        E("THREAD_KILL_IN", o["self"], 0), E("THREAD_KILL_OUT", o["kill_0"]),
        E("THREAD_KILL_IN", o["self"], 99), E("THREAD_KILL_OUT", o["kill_bad"]),
        # To itself: the handler runs (and makes its call) before pthread_kill returns.
        E("THREAD_KILL_IN", o["self"], usr1),
        *handler(o, usr1, SI_TKILL),
        E("THREAD_KILL_OUT", o["kill_usr1"]),
        EXIT0,
    ]


def test_signal_sigqueue(tmp_path):
    t, ev = sig(tmp_path, "sigqueue")
    o = t.out
    usr1 = o["usr1"]
    assert (o["sigqueue"], o["sigqueue_bad"]) == ("0", str(EINVAL))
    handled(o, "sigqueue", usr1, SI_QUEUE)
    assert o["sigqueue.value"] == "0x1234"
    assert ev == [
        E("THREAD_SIGQUEUE_IN", o["self"], usr1, "0x1234"),
        *handler(o, usr1, SI_QUEUE),
        E("THREAD_SIGQUEUE_OUT", o["sigqueue"]),
        E("THREAD_SIGQUEUE_IN", o["self"], 99, "0x1"), E("THREAD_SIGQUEUE_OUT", o["sigqueue_bad"]),
        EXIT0,
    ]


def test_signal_mask(tmp_path):
    t, ev = sig(tmp_path, "mask")
    o = t.out
    assert [o[k] for k in ("block", "query", "setmask", "unblock_null")] == ["0"] * 4
    assert o["bad_how"] == str(EINVAL)
    # SIGUSR1 (10) and SIGTERM (15): bits 9 and 14.
    assert o["set"] == "0x4200" and o["block.old"] == "0x0"
    assert o["query.old"] == o["setmask.old"] == o["set"]
    assert ev == [
        E("THREAD_SIGMASK_IN", SIG_BLOCK, o["set"]), E("THREAD_SIGMASK_OUT", 0, o["block.old"]),
        # No set (a query): an empty set recorded.
        E("THREAD_SIGMASK_IN", SIG_BLOCK, "0x0"), E("THREAD_SIGMASK_OUT", 0, o["query.old"]),
        E("THREAD_SIGMASK_IN", 99, "0x0"), E("THREAD_SIGMASK_OUT", o["bad_how"], "0x0"),
        E("THREAD_SIGMASK_IN", SIG_SETMASK, "0x0"),
        E("THREAD_SIGMASK_OUT", 0, o["setmask.old"]),
        # No place for the old mask: libptt still records it.
        E("THREAD_SIGMASK_IN", SIG_UNBLOCK, o["set"]), E("THREAD_SIGMASK_OUT", 0, "0x0"),
        EXIT0,
    ]


def test_signal_wait(tmp_path):
    t, ev = sig(tmp_path, "wait")
    o = t.out
    usr1, usr2, pid, st = o["usr1"], o["usr2"], o["pid"], o["set"]
    assert st == "0xa00"
    assert (o["sigwait"], o["sigwait.sig"]) == ("0", usr1)
    assert (o["sigwaitinfo"], o["sigwaitinfo.code"], o["sigwaitinfo.value"],
            o["sigwaitinfo.from_self"]) == (usr2, str(SI_QUEUE), str(0x42), "1")
    assert (o["sigtimedwait_timeout"], o["sigtimedwait_timeout.errno"]) == ("-1", str(EAGAIN))
    assert o["sigtimedwait"] == usr1
    assert (o["sigtimedwait_bad"], o["sigtimedwait_bad.errno"]) == ("-1", str(EINVAL))
    assert o["sigwaitinfo_null"] == usr2
    assert ev == [
        E("THREAD_SIGMASK_IN", SIG_BLOCK, st), E("THREAD_SIGMASK_OUT", 0, "0x0"),
        # Blocked: pending, nothing delivered.
        E("THREAD_KILL_IN", o["self"], usr1), E("THREAD_KILL_OUT", o["kill"]),
        E("SIGNAL_WAIT_IN", st), E("SIGNAL_WAIT_OUT", o["sigwait"], o["sigwait.sig"]),
        E("THREAD_SIGQUEUE_IN", o["self"], usr2, "0x42"), E("THREAD_SIGQUEUE_OUT", o["sigqueue"]),
        E("SIGNAL_WAITINFO_IN", st), E("SIGNAL_WAITINFO_OUT", o["sigwaitinfo"], 0, pid),
        # Nothing pending: EAGAIN after the timeout (ns), no sender.
        E("SIGNAL_TIMEDWAIT_IN", st, 10000000),
        E("SIGNAL_TIMEDWAIT_OUT", -1, o["sigtimedwait_timeout.errno"], 0),
        E("THREAD_KILL_IN", o["self"], usr1), E("THREAD_KILL_OUT", o["kill_2"]),
        E("SIGNAL_TIMEDWAIT_IN", st, 30 * 10**9),
        E("SIGNAL_TIMEDWAIT_OUT", o["sigtimedwait"], 0, pid),
        E("SIGNAL_TIMEDWAIT_IN", st, 2 * 10**9),
        E("SIGNAL_TIMEDWAIT_OUT", -1, o["sigtimedwait_bad.errno"], 0),
        E("THREAD_KILL_IN", o["self"], usr2), E("THREAD_KILL_OUT", o["kill_3"]),
        # Without a siginfo of the program's: libptt still records the sender.
        E("SIGNAL_WAITINFO_IN", st), E("SIGNAL_WAITINFO_OUT", o["sigwaitinfo_null"], 0, pid),
        E("THREAD_SIGMASK_IN", SIG_SETMASK, "0x0"), E("THREAD_SIGMASK_OUT", 0, st),
        EXIT0,
    ]
    # ptt stat names what a signal wait waits for as ptt view does: the signals, not a mask.
    (main,) = stat_json(t.path)["threads"]
    on = {b["call"]: b["object"] for b in main["blocked_on"]}
    assert on["sigtimedwait"] == f"set {int(usr1)},{int(usr2)}", on


def test_signal_handlers(tmp_path):
    """Handlers installed with sigaction and with signal(): sigaction and signal() report the
    program's handlers, not libptt's; raise and kill (not traced) run them between calls."""
    t, ev = sig(tmp_path, "handlers")
    o = t.out
    usr1, usr2 = o["usr1"], o["usr2"]
    assert [o[k] for k in ("sigaction.old_dfl", "sigaction_query.mine", "signal_first.dfl",
                           "signal_again.mine", "sigaction_usr2.mine", "sigaction_usr2.restart",
                           "ignore.old_mine", "sigaction_ign.ign")] == ["1"] * 8
    assert o["sigaction_query.siginfo"] == "0"
    assert (o["raise.sig"], o["raise.handled"]) == (usr1, "1")
    assert (o["kill.sig"], o["kill.handled"]) == (usr2, "2")
    assert (o["raise_ignored.sig"], o["raise_ignored.handled"]) == ("0", "2")
    assert (o["sigaction_bad"], o["sigaction_bad.errno"]) == ("-1", str(EINVAL))
    assert (o["sigaction_bad_2"], o["sigaction_bad_2.errno"]) == ("-1", str(EINVAL))
    pid = o["pid"]
    assert ev == [
        E("SIGNAL_DELIVERED", usr1, SI_TKILL, pid), E("SIGNAL_HANDLED", usr1),
        E("SIGNAL_DELIVERED", usr2, SI_USER, pid), E("SIGNAL_HANDLED", usr2),
        EXIT0,
    ]


def test_signal_flags(tmp_path):
    """sigaction(sig, NULL, &old) gives the flags the kernel has, as untraced."""
    t, ev = sig(tmp_path, "flags")
    assert t.out["mask_usr2"] == "1"


def test_signal_thread(tmp_path):
    """A signal to a thread blocked in sem_wait: the handler (SA_RESTART) runs inside the wait,
    posts, and the wait goes on and takes the post."""
    t, ev = sig(tmp_path, "thread")
    o = t.out
    usr1, s = o["usr1"], o["s"]
    assert [o[k] for k in ("create", "kill", "join", "t2_wait")] == ["0"] * 4
    handled(o, "t2", usr1, SI_TKILL)
    assert ev == [
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x0"),
        E("THREAD_CREATE_OUT", o["create"], o["th"]),
        E("THREAD_KILL_IN", o["th"], usr1), E("THREAD_KILL_OUT", o["kill"]),
        E("THREAD_JOIN_IN", o["th"]), E("THREAD_JOIN_OUT", o["join"], "0x0"),
        EXIT0,
    ]
    assert t.thread(o["tid_t2"]) == [
        E("THREAD_START", o["fn"], "0x0", o["tid_main"], o["th"], "0x0", "0x0", "0x0", "0x0"),
        E("SEM_WAIT_IN", s, 0), E("SEM_BLOCK", s),
        *handler(o, usr1, SI_TKILL),
        E("SEM_ACQUIRED", s), E("SEM_WAIT_OUT", o["t2_wait"], 0, 0),
        E("THREAD_END", "0x0", "return"),
    ]


def test_signal_handler_burst(tmp_path):
    """Signals to a thread busy recording events, each handler making 100 calls (more than a
    4 KiB sub-buffer holds), until 3 handlers interrupted libptt: nothing is lost, and every
    handler's events are in the trace, in order. (Whether a signal lands inside libptt is up to
    the scheduler: every one of 5 runs must pass.)"""
    for run in range(5):
        t = trace_prog(tmp_path, "signal_calls", "burst", opts=["--subbuffer=4K"], check=False)
        assert t.lost == 0, f"run {run}: {t.lost} events lost"
        check_trace(t)
        o = t.out
        usr1, s = o["usr1"], o["s"]
        assert o["posts_per_handler"] == "100"
        ev = t.thread(o["tid_t2"])
        starts = [i for i, e in enumerate(ev) if e[0] == "SIGNAL_DELIVERED"]
        assert len(starts) == int(o["handled"])
        for k, i in enumerate(starts):
            # Nobody waits on s: each post adds one to its value.
            posts = [[E("SEM_POST_IN", s, v), E("SEM_POST_OUT", 0, 0, v + 1)]
                     for v in range(100 * k, 100 * (k + 1))]
            handler = [E("SIGNAL_DELIVERED", usr1, SI_TKILL, o["pid"]), *sum(posts, []),
                       E("SIGNAL_HANDLED", usr1)]
            assert ev[i:i + len(handler)] == handler
