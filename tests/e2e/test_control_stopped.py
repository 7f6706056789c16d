"""A stopped session passes the calls of every class straight on (lib/record.h, ptt_on_class):
ptt ctl start and stop switch, and between the switches exactly the calls made are recorded; a
call begun while stopped records nothing, even when it returns after the start
(tests/progs/stopped_calls.c)."""

import collections

from conftest import CLASSES, parse_raw, prog, view
from robust_util import Live, ctl_ok

# One phase's calls (stopped_calls.c's calls()), as ptt view --format=raw gives them back.
CALLS = [
    "COND_SIGNAL_IN", "COND_SIGNAL_OUT", "COND_BROADCAST_IN", "COND_BROADCAST_OUT",
    "MUTEX_LOCK_IN", "MUTEX_LOCK_OUT",
    "COND_TIMEDWAIT_IN", "COND_WOKEN", "COND_TIMEDWAIT_OUT",
    "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT",
    "SEM_POST_IN", "SEM_POST_OUT", "SEM_WAIT_IN", "SEM_WAIT_OUT",
    "SEM_TRYWAIT_IN", "SEM_TRYWAIT_OUT",
    "THREAD_SETSPECIFIC_IN", "THREAD_SETSPECIFIC_OUT",
    "THREAD_GETSPECIFIC_IN", "THREAD_GETSPECIFIC_OUT",
    "BARRIER_WAIT_IN", "BARRIER_RELEASED", "BARRIER_WAIT_OUT",
    "SCHED_YIELD_IN", "SCHED_YIELD_OUT",
    "THREAD_ONCE_IN", "THREAD_ONCE_OUT",
    "THREAD_TESTCANCEL_IN", "THREAD_TESTCANCEL_OUT",
    "THREAD_SETCANCELSTATE_IN", "THREAD_SETCANCELSTATE_OUT",
    "THREAD_SIGMASK_IN", "THREAD_SIGMASK_OUT",
]

# What ptt trace writes in main's stream as recording starts: a THREAD_RUNNING for each of the
# process's threads, main and the worker.
RUNNING = ["THREAD_RUNNING"] * 2

# The ptt ctl request before each phase (the first runs stopped, as the session starts), and
# main's events in it. Phase 2: main's post of the semaphore the worker blocked on while stopped,
# then its calls; the worker's sem_wait, begun stopped, records nothing.
STEPS = [
    (None, []),
    ("start", RUNNING + ["SEM_POST_IN", "SEM_POST_OUT"] + CALLS),
    ("stop", []),
    ("start", RUNNING + CALLS),
    ("stop", []),
]


def test_stopped_calls(tmp_path):
    path = tmp_path / "t.ptt"
    live = Live([prog("stopped_calls"), len(STEPS)], path,
                opts=["--start-stopped", "--events=" + ",".join(CLASSES)])
    session = live.wait_session()
    pid = int(live.value("pid"))
    for n, (req, _main) in enumerate(STEPS, 1):
        if req:
            assert ctl_ok(session, req).startswith("ok: ")
        live.send("go")
        live.wait_line(f"phase={n}")
    live.finish(0)
    worker = int(next(x for x in live.out if x.startswith("@tid_worker=")).split("=")[1])
    events = parse_raw(view("--format=raw", path))
    cuts = [e.ns for e in events if e.name == "TRACE_CONTROL"]
    assert len(cuts) == len(STEPS) - 1
    phases = collections.defaultdict(lambda: collections.defaultdict(list))
    for e in events:
        if e.pid == pid:
            phases[sum(1 for c in cuts if c <= e.ns)][e.tid].append(e.name)
    expected = {n: {pid: main} for n, (_req, main) in enumerate(STEPS) if main}
    expected[0] = {pid: ["PROCESS_START"]}
    expected[len(STEPS) - 1] = {pid: ["PROCESS_EXIT"]}  # ptt trace's, after the stop
    assert {n: dict(v) for n, v in phases.items()} == expected
    # The threads as they were at each start, named as the kernel had them: the worker named
    # itself while the session was stopped, so no event of its own says so.
    running = [(sum(1 for c in cuts if c <= e.ns), e.fields) for e in events
               if e.name == "THREAD_RUNNING"]
    threads = {(str(pid), '"stopped_calls"'), (str(worker), '"stopper"')}
    assert sorted(running) == sorted([(1, f) for f in threads] + [(3, f) for f in threads])
    # The readers name the worker so, though its THREAD_START was never recorded; main stays
    # main, as in a session that records from the start.
    text = view(path)
    assert text.count(f"Thread main ({pid}) finds thread stopper running, named \"stopper\"") == 2
    assert text.count(f"Thread main ({pid}) finds thread main running") == 2


def renamed_session(tmp_path, opts, requests):
    """renamed_stopped's four steps, each after its ptt ctl request (None: none): the trace's
    lines of THREAD_RUNNING, THREAD_START and MUTEX_LOCK_IN without their time and pid, the
    program's pid and the tids of its threads a and b."""
    path = tmp_path / "t.ptt"
    live = Live([prog("renamed_stopped")], path, opts=opts)
    session = live.wait_session()
    for n, req in enumerate(requests, 1):
        if req:
            assert ctl_ok(session, *req.split()).startswith("ok: ")
        live.send("go")
        live.wait_line(f"step={n}")
    live.finish(0)
    got = dict(x[1:].split("=") for x in live.out if x.startswith("@"))
    text = view("--event=THREAD_RUNNING,THREAD_START,MUTEX_LOCK_IN", path)
    lines = [ln.split(", ", 1)[1] for ln in text.splitlines()]
    return lines, int(got["pid"]), int(got["tid_a"]), int(got["tid_b"])


def running(pid, tid, name, shown=None):
    """The line of a THREAD_RUNNING of tid, named name, shown by the name the reader gives it."""
    return f'Thread main ({pid}) finds thread {shown or name} running, named "{name}", as ' \
        "recording starts."


def locks(a, b, name_a, name_b):
    return sorted(f"Thread {n} ({t}) enters function pthread_mutex_lock (mutex m) at "
                  "renamed_stopped.c:19." for n, t in ((name_a, a), (name_b, b)))


def test_renamed_while_stopped(tmp_path):
    """A name given while nothing was recorded is taken at the next start by a thread that the
    kernel's name named at the first start (before: first for good; before THREAD_RUNNING, its
    thread id). A thread the trace named after its start routine keeps that name: its kernel
    name differs from it anyway, and the trace cannot tell a rename from the name its creator
    gave it."""
    lines, pid, a, b = renamed_session(tmp_path, ["--start-stopped"],
                                       [None, "start", "stop", "start"])
    main = f'Thread main ({pid}) finds thread main running, named "renamed_stopped", as ' \
        "recording starts."
    assert lines[:6] == [
        main, running(pid, a, "first"),
        f"Thread late ({b}) starts user function late (renamed_stopped.c:33)(0x0), created by "
        "thread main.",
        main, running(pid, a, "second"), running(pid, b, "later", shown="late"),
    ]
    assert sorted(lines[6:]) == locks(a, b, "second", "late")


def test_class_switched_on(tmp_path):
    """ptt ctl events that adds a class names the threads running too: recorded with the thread
    class off, a and b have no THREAD_START, and are named from the switch on."""
    lines, pid, a, b = renamed_session(tmp_path, ["--events=mutex"],
                                       [None, None, None, "events mutex,sched"])
    assert lines[:3] == [
        f'Thread main ({pid}) finds thread main running, named "renamed_stopped", as recording '
        "starts.",
        running(pid, a, "second"), running(pid, b, "later"),
    ]
    assert sorted(lines[3:]) == locks(a, b, "second", "later")
