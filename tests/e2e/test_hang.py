"""Hang detection (--hang-timeout): an ABBA deadlock is reported, on stderr and in the trace,
with each blocked thread, its call, its object, the line of the call, the thread holding the
object and what each blocked thread holds, named as ptt view names them (tests/progs/abba.c); a
writer waiting for a rwlock two readers hold names both readers (rwlock_hang.c); a program idle
outside any traced call is not reported (idle_sleep.c)."""

import json
import os
import re
import signal
import subprocess
import threading
import time

import pytest

from conftest import (PROGS, PTT, PYTHON, SOURCE, E, check_calls, parse_output, prog, ptt_trace,
                      run, summary_counts, trace_prog, view)
from names_util import ptt_ok, site_lines, stat_json
from robust_util import DEADLOCK_REPORT, Live, abba_gone_quiet, ctl_ok, status_fields

HEAD_RE = re.compile(r"^ptt: hang: no traced thread recorded an event for (\d+\.\d) s; "
                     r"(\d+) blocked in a call:$")
# A blocked thread's line: its duration (group 1) is replaced by D to compare the rest.
LINE_RE = re.compile(r"^ptt:   pid \d+ thread .*: in \w+ \(.*\)(?: at \S+)? for (\d+\.\d) s")
HELD_PREFIX = "ptt:     holds "


def expected_blocked(out):
    """Each blocked thread of abba: its line (duration D), and what it holds."""
    pid, t1, t2, L = out["pid"], out["tid_t1"], out["tid_t2"], site_lines("abba")
    head = f"ptt:   pid {pid} thread"
    return {
        f"{head} main ({pid}): in pthread_join (thread {out['th1']}) at abba.c:{L['join']} "
        f"for D s, waiting for thread t1 ({t1})": (),
        f"{head} t1 ({t1}): in pthread_mutex_lock (mutex b) at abba.c:{L['t1_lock_b']} for D s, "
        f"held by thread t2 ({t2})": (f"{HELD_PREFIX}mutex a, taken at abba.c:{L['t1_lock_a']}",),
        f"{head} t2 ({t2}): in pthread_mutex_lock (mutex a) at abba.c:{L['t2_lock_a']} for D s, "
        f"held by thread t1 ({t1})": (f"{HELD_PREFIX}mutex b, taken at abba.c:{L['t2_lock_b']}",),
    }


def report(stderr, timeout, blocked=3):
    """The hang report on ptt trace's stderr: {blocked thread's line: its held lines}, each
    duration checked and replaced by D."""
    lines = stderr.splitlines()
    heads = [m for m in map(HEAD_RE.match, lines) if m]
    assert len(heads) == 1, stderr
    assert float(heads[0][1]) >= timeout and heads[0][2] == str(blocked)
    at = lines.index(heads[0][0]) + 1
    threads = {}
    while at < len(lines) and lines[at].startswith("ptt:   pid "):
        m = LINE_RE.match(lines[at])
        assert m, f"not a blocked thread's line: {lines[at]!r}"
        assert float(m[1]) >= timeout
        line = lines[at][:m.start(1)] + "D" + lines[at][m.end(1):]
        held = []
        at += 1
        while at < len(lines) and lines[at].startswith(HELD_PREFIX):
            held.append(lines[at])
            at += 1
        threads[line] = tuple(held)
    assert len(threads) == blocked, stderr
    return threads


def check_hang_events(t, out, timeout):
    pid = int(out["pid"])
    detected = [e for e in t.events if e.name == "HANG_DETECTED"]
    assert len(detected) == 1 and detected[0].pid == detected[0].tid == t.ptt_pid
    assert int(detected[0].fields[0]) >= timeout * 1e9 and detected[0].fields[1] == "3"
    blocked = [e for e in t.events if e.name == "HANG_BLOCKED"]
    assert all(e.pid == e.tid == pid for e in blocked)
    assert all(int(e.fields[4]) >= timeout * 1e9 for e in blocked)
    assert {e.fields[:4] for e in blocked} == {
        (out["tid_t1"], "MUTEX_LOCK_IN", out["B"], out["tid_t2"]),
        (out["tid_t2"], "MUTEX_LOCK_IN", out["A"], out["tid_t1"]),
        (out["pid"], "THREAD_JOIN_IN", out["th1"], out["tid_t1"])}
    assert len(blocked) == 3
    # the report comes after the last call the threads entered
    last_in = max(e.ns for e in t.events if e.name in ("MUTEX_LOCK_IN", "THREAD_JOIN_IN"))
    assert detected[0].ns >= last_in + timeout * 1e9


def test_abba_kill_on_hang(tmp_path):
    t = abba_gone_quiet(tmp_path, ["--hang-timeout=1", "--kill-on-hang"], 137)
    out = parse_output(t.stdout)[1]
    assert report(t.stderr, 1.0) == expected_blocked(out)
    assert "ptt: killing the program (--kill-on-hang)" in t.stderr.splitlines()
    check_hang_events(t, out, 1.0)
    pid = int(out["pid"])
    # ptt view closes the calls the kill cut short at the process's end, just before it.
    assert t.thread(pid)[-2:] == [E("TRACE_UNFINISHED", "THREAD_JOIN_IN"),
                                  E("PROCESS_EXIT", "signal=9")]
    check_calls(t.events)
    for tid in (out["tid_t1"], out["tid_t2"]):
        assert t.thread(tid)[-1] == E("TRACE_UNFINISHED", "MUTEX_LOCK_IN")
    # The report's events, under ptt trace's pid, make no process nor thread of the trace in
    # the exports (before: a "thread PID" of ptt trace in each).
    tids = {pid, int(out["tid_t1"]), int(out["tid_t2"])}
    chrome = json.loads(ptt_ok("export", "--format=chrome", "-o", "-", t.path))
    meta = [e for e in chrome["traceEvents"] if e.get("ph") == "M"]
    assert {e["pid"] for e in meta} == {pid}, meta
    assert {e["tid"] for e in meta if e["name"] == "thread_name"} == tids, meta
    paje = ptt_ok("paje", "-o", "-", t.path)
    assert set(re.findall(r"^6 \S+ t\d+\.(\d+) p\d+ T ", paje, re.M)) == {str(x) for x in tids}
    assert re.findall(r"^6 \S+ p(\d+) R PS ", paje, re.M) == [str(pid)]
    ptt_ok("export", "--format=sco", "-o", tmp_path / "sco", t.path)
    assert sorted(os.listdir(tmp_path / "sco")) == sorted(
        [f"tr.{pid:07x}.{tid & 0xfff:03x}" for tid in tids] + ["tracemap.h"])


def test_deadlock_amid_activity(tmp_path):
    """abba with a timer thread that wakes every 20 ms: the program never goes quiet, yet its two
    threads that wait for each other are reported once they waited the timeout, named with what
    each holds, as HANG_BLOCKED events, and --kill-on-hang kills at once."""
    t = ptt_trace(tmp_path, [prog("abba"), "tick"], opts=["--hang-timeout=1", "--kill-on-hang"],
                  rc=137)
    out = parse_output(t.stdout)[1]
    err = t.stderr.splitlines()
    assert not [ln for ln in err if "no traced thread recorded an event" in ln]
    i = err.index(f"ptt: hang: deadlock in pid {out['pid']}: 2 threads wait for each other:")
    L = site_lines("abba")
    t1, t2 = f"t1 ({out['tid_t1']})", f"t2 ({out['tid_t2']})"
    lines = [re.sub(r" for \d+\.\d s,", " for T s,", ln) for ln in err[i + 1:i + 5]]
    assert sorted(lines) == sorted([
        f"ptt:   pid {out['pid']} thread {t1}: in pthread_mutex_lock (mutex b) at "
        f"abba.c:{L['t1_lock_b']} for T s, held by thread {t2}",
        f"ptt:     holds mutex a, taken at abba.c:{L['t1_lock_a']}",
        f"ptt:   pid {out['pid']} thread {t2}: in pthread_mutex_lock (mutex a) at "
        f"abba.c:{L['t2_lock_a']} for T s, held by thread {t1}",
        f"ptt:     holds mutex b, taken at abba.c:{L['t2_lock_b']}"]), err
    assert err[i + 5] == "ptt: killing the program (--kill-on-hang)"
    blocked = [e for e in t.events if e.name == "HANG_BLOCKED"]
    assert sorted(e.fields[:4] for e in blocked) == sorted([
        (out["tid_t1"], "MUTEX_LOCK_IN", out["B"], out["tid_t2"]),
        (out["tid_t2"], "MUTEX_LOCK_IN", out["A"], out["tid_t1"])])
    assert all(int(e.fields[4]) >= 1e9 for e in blocked)
    assert t.counts()["HANG_DETECTED"] == 0


def test_hang_reported_session_goes_on(tmp_path):
    """Without --kill-on-hang the session goes on after the report: ptt ctl status counts the
    hang, and a SIGTERM to ptt trace reaches the program."""
    for k in range(3):  # a quiet program's report (see robust_util.abba_gone_quiet)
        live = Live([prog("abba")], tmp_path / f"t{k}.ptt", opts=["--hang-timeout=0.5"])
        session = live.wait_session()
        if HEAD_RE.match(live.wait_line(lambda s: HEAD_RE.match(s) or s.startswith(
                DEADLOCK_REPORT), "err")):
            break
        live.kill()
    else:
        pytest.fail("abba was reported as a deadlock 3 times, never as gone quiet")
    live.wait_line(lambda s: s.startswith("ptt:   pid "), "err")
    assert status_fields(ctl_ok(session, "status"))["hangs"] == "1"
    live.p.send_signal(signal.SIGTERM)
    live.finish(128 + signal.SIGTERM)
    out = parse_output("\n".join(live.out))[1]
    assert report("\n".join(live.err), 0.5) == expected_blocked(out)
    assert not any("killing" in line for line in live.err)
    counts = summary_counts(live.path)[0]
    assert counts["HANG_DETECTED"] == 1 and counts["HANG_BLOCKED"] == 3


def test_idle_is_not_a_hang(tmp_path):
    """Idle for four times the timeout in nanosleep, no traced call open: no report."""
    t = trace_prog(tmp_path, "idle_sleep", 2000, opts=["--hang-timeout=0.5"], compare=False)
    assert t.results == {"slept": "2000"}
    assert not any(line.startswith("ptt: hang") for line in t.stderr.splitlines())
    assert t.counts()["HANG_DETECTED"] == t.counts()["HANG_BLOCKED"] == 0
    assert t.counts()["MUTEX_UNLOCK_OUT"] == 2


def rwlock_hang(tmp_path, rounds=0, opts=()):
    """rwlock_hang ROUNDS, killed on its hang: the Traced run, its output's values, the words
    naming the readers, and the report expected (report())."""
    t = ptt_trace(tmp_path, [prog("rwlock_hang"), rounds],
                  opts=["--hang-timeout=0.5", "--kill-on-hang", *opts], rc=137)
    out = parse_output(t.stdout)[1]
    pid, r1, r2, w, L = out["pid"], out["tid_r1"], out["tid_r2"], out["tid_w"], \
        site_lines("rwlock_hang")
    head = f"ptt:   pid {pid} thread"
    readers = f"held for reading by threads r1 ({r1}), r2 ({r2})"
    return t, out, readers, {
        f"{head} main ({pid}): in pthread_join (thread {out['tw']}) at rwlock_hang.c:{L['join']} "
        f"for D s, waiting for thread w ({w})": (),
        f"{head} r1 ({r1}): in sem_wait (sem never) at rwlock_hang.c:{L['r1_wait']} for D s":
            (f"{HELD_PREFIX}rwlock rw for reading, taken at rwlock_hang.c:{L['r1_rdlock']}",),
        f"{head} r2 ({r2}): in sem_wait (sem never) at rwlock_hang.c:{L['r2_wait']} for D s":
            (f"{HELD_PREFIX}rwlock rw for reading, taken at rwlock_hang.c:{L['r2_rdlock']}",),
        f"{head} w ({w}): in pthread_rwlock_wrlock (rwlock rw) at rwlock_hang.c:{L['w_wrlock']} "
        f"for D s, {readers}": (),
    }


def test_semaphore_lock_holders(tmp_path):
    """Semaphores used as locks (made with the value 1, posted only by the thread that took them:
    CPython's locks): the report says which thread holds the one each thread waits for, and what
    each holds, as for mutexes (tests/progs/check/check_sem_lock_abba.c); the HANG_BLOCKED events
    name the holder. A semaphore posted by another thread than its taker is a signal: no holder
    (check_sem_signal_hang.c); nor does a thread that waits on one it took without ever posting
    it hold it (Python's Event.wait)."""
    check = PROGS / "check"
    t = ptt_trace(tmp_path, [check / "check_sem_lock_abba"],
                  opts=["--hang-timeout=0.5", "--kill-on-hang"], rc=137)
    _, out = parse_output(t.stdout)
    t1, t2 = out["tid_t1"], out["tid_t2"]
    lines = report(t.stderr, 0.5)
    pid = next(e.pid for e in t.events if e.name == "HANG_BLOCKED")
    src, head = "check_sem_lock_abba.c", f"ptt:   pid {pid} thread"
    L = check_marks(src)
    assert lines[f"{head} t1 ({t1}): in sem_wait (sem sb) at {src}:{L['t1_wait_b']} for D s, "
                 f"held by thread t2 ({t2})"] == (f"{HELD_PREFIX}sem sa, taken at {src}:"
                                                  f"{L['t1_take_a']}",)
    assert lines[f"{head} t2 ({t2}): in sem_wait (sem sa) at {src}:{L['t2_wait_a']} for D s, "
                 f"held by thread t1 ({t1})"] == (f"{HELD_PREFIX}sem sb, taken at {src}:"
                                                  f"{L['t2_take_b']}",)
    blocked = {e.fields[0]: e.fields[1:4] for e in t.events if e.name == "HANG_BLOCKED"}
    assert blocked[t1] == ("SEM_WAIT_IN", out["sb"], t2)
    assert blocked[t2] == ("SEM_WAIT_IN", out["sa"], t1)
    t = ptt_trace(tmp_path, [check / "check_sem_signal_hang"], name="s.ptt",
                  opts=["--hang-timeout=0.5", "--kill-on-hang"], rc=137)
    lines = report(t.stderr, 0.5, blocked=1)
    assert list(lines.values()) == [()]
    assert list(lines)[0].endswith(" for D s"), lines
    # CPython's Condition (under Event.wait) takes a fresh semaphore and waits on it again until
    # another thread posts it: the waiter does not hold what it waits for.
    t = ptt_trace(tmp_path, [PYTHON, "-c", "import threading; threading.Event().wait()"],
                  name="e.ptt", opts=["--hang-timeout=0.5", "--kill-on-hang"], rc=137)
    lines = report(t.stderr, 0.5, blocked=1)
    assert list(lines.values()) == [()]
    assert re.search(r"thread main \(\d+\): in sem_wait \(sem .*\) .*for D s$", list(lines)[0])


def test_semaphore_lock_holder_ended(tmp_path):
    """A semaphore used as a lock whose taker ended without posting it: the waiter's line names
    the taker, ended, as for a mutex (tests/progs/check/check_sem_lock_ended.c); so when the
    taker also ended holding a mutex (tests/progs/hang_sem_ended.c both). Not once the semaphore
    was made again at its address (hang_sem_ended reinit: main waits for the one it took)."""
    t = ptt_trace(tmp_path, [PROGS / "check" / "check_sem_lock_ended"],
                  opts=["--hang-timeout=0.5", "--kill-on-hang"], rc=137)
    _, out = parse_output(t.stdout)
    src, L = "check_sem_lock_ended.c", check_marks("check_sem_lock_ended.c")
    main, taker = out["tid_main"], out["tid_t"]
    assert report(t.stderr, 0.5, blocked=1) == {
        f"ptt:   pid {main} thread main ({main}): in sem_wait (sem s) at {src}:{L['wait']} "
        f"for D s, held by thread t ({taker})": ()}
    blocked = {e.fields[0]: e.fields[1:4] for e in t.events if e.name == "HANG_BLOCKED"}
    assert blocked == {main: ("SEM_WAIT_IN", out["s"], taker)}
    wait = site_lines("hang_sem_ended")["wait"]
    for mode, holder in (("both", " held by thread t ({})"), ("reinit", "")):
        t = ptt_trace(tmp_path, [prog("hang_sem_ended"), mode], name=f"{mode}.ptt",
                      opts=["--hang-timeout=0.5", "--kill-on-hang"], rc=137)
        _, out = parse_output(t.stdout)
        main, taker = out["tid_main"], out["tid_t"]
        after = "," + holder.format(taker) if holder else ""
        assert report(t.stderr, 0.5, blocked=1) == {
            f"ptt:   pid {main} thread main ({main}): in sem_wait (sem s) at hang_sem_ended.c:"
            f"{wait} for D s{after}": ()}, mode
        blocked = {e.fields[0]: e.fields[1:4] for e in t.events if e.name == "HANG_BLOCKED"}
        assert blocked == {main: ("SEM_WAIT_IN", out["s"], taker if holder else "0")}, mode


def check_marks(name):
    """{NAME: line} of the /* check:NAME */ comments of tests/progs/check/NAME."""
    text = (SOURCE / "tests" / "progs" / "check" / name).read_text().splitlines()
    return {k: no for no, line in enumerate(text, 1) for k in re.findall(r"/\* check:(\w+) \*/", line)}


def test_rwlock_readers_named(tmp_path):
    """A writer blocked on a rwlock that two readers hold (each then waiting on a semaphore):
    the report names both readers, and each reader's line says it holds the rwlock for reading
    and where it took it; ptt view names them in the writer's wait and in its hang report."""
    t, out, readers, expected = rwlock_hang(tmp_path)
    assert report(t.stderr, 0.5, blocked=4) == expected
    pid, r1, r2, w = out["pid"], out["tid_r1"], out["tid_r2"], out["tid_w"]
    blocked = {e.fields[0]: e.fields[1:4] for e in t.events if e.name == "HANG_BLOCKED"}
    assert blocked == {pid: ("THREAD_JOIN_IN", out["tw"], w),
                       r1: ("SEM_WAIT_IN", out["never"], "0"),
                       r2: ("SEM_WAIT_IN", out["never"], "0"),
                       w: ("RWLOCK_WRLOCK_IN", out["rw"], "0")}
    text = view(t.path).splitlines()
    wait = [ln.split(" : ", 1)[1] for ln in text if "must wait to" in ln]
    assert wait == [f"Pid {pid}, Thread w ({w}) must wait to write-lock rwlock rw, held by writer "
                    f"0 and 2 readers; {readers}."]
    hang = [ln.split(" : ", 1)[1] for ln in text if "reports thread w " in ln]
    assert len(hang) == 1 and hang[0].startswith(
        f"Pid {pid}, ptt trace reports thread w blocked in pthread_rwlock_wrlock on rw "
        f"for ") and hang[0].endswith(f" s (the thread holding it, or joined: 0); {readers}.")


def test_report_after_many_subbuffers(tmp_path):
    """r1 fills some hundred 4 KiB sub-buffers (handed over, drained) before the hang: the report
    still holds exactly what each thread holds, and every name."""
    t, _, _, expected = rwlock_hang(tmp_path, 20000, opts=["--subbuffer=4K"])
    assert report(t.stderr, 0.5, blocked=4) == expected


def test_report_after_many_ended_threads(tmp_path):
    """3000 threads made and ended before the hang (the watch lets each ended thread's decoding
    go), the holder among them: main's line names the holder, ended, by its start routine."""
    t = ptt_trace(tmp_path, [prog("hang_churn"), 3000],
                  opts=["--hang-timeout=0.5", "--kill-on-hang"], rc=137)
    out = parse_output(t.stdout)[1]
    pid, L = out["pid"], site_lines("hang_churn")
    assert report(t.stderr, 0.5, blocked=1) == {
        f"ptt:   pid {pid} thread main ({pid}): in pthread_mutex_lock (mutex h) at "
        f"hang_churn.c:{L['main_lock']} for D s, held by thread holder ({out['tid_holder']})": ()}
    counts = summary_counts(t.path)[0]
    assert counts["THREAD_START"] == counts["THREAD_END"] == 3001


def test_readers_whatever_the_drain_order(tmp_path):
    """Threads that read-lock a rwlock and fill several 4 KiB sub-buffers each: 24 unlock it
    before they end, 16 end holding it. The drain meets a thread's sub-buffers in pool order,
    not in the thread's, and the watch reads the earlier ones from the pool first: the report
    names exactly the 16 holders as readers (it missed some when it skipped the earlier
    sub-buffers, and named workers that had unlocked when it read them again after forgetting
    the thread). Two sessions, for two orders."""
    for run in range(2):
        t = ptt_trace(tmp_path, [prog("hang_readers"), 24, 16, 1500], name=f"r{run}.ptt",
                      opts=["--subbuffer=4K", "--hang-timeout=0.5", "--kill-on-hang"], rc=137)
        out = parse_output(t.stdout)[1]
        holders = {int(out[f"holder{k}"]) for k in range(16)}
        line = [ln for ln in t.stderr.splitlines() if "in pthread_rwlock_wrlock" in ln]
        assert len(line) == 1 and line[0].startswith(f"ptt:   pid {out['pid']} thread main "), \
            t.stderr
        readers = line[0].split(", held for reading by threads ", 1)[1]
        assert {int(tid) for tid in re.findall(r"\((\d+)\)", readers)} == holders, line[0]


def test_blocked_after_its_end(tmp_path):
    """A thread whose key destructor blocks after its THREAD_END (and after its last sub-buffer
    was drained): main's join is reported waiting for it by name; the watch forgets a name only
    once its thread is gone. (The destructor's lock is not traced: the program is killed by
    the test, not by --kill-on-hang.)"""
    live = Live([prog("hang_keydtor")], tmp_path / "t.ptt", opts=["--hang-timeout=0.5"],
                stdin=False)
    pid, tid_w = live.value("pid"), live.value("tid_w")
    line = live.wait_line(lambda ln: "in pthread_join" in ln, "err")
    os.kill(int(pid), signal.SIGKILL)
    live.finish(137)
    L = site_lines("hang_keydtor")
    assert line.startswith(f"ptt:   pid {pid} thread main ({pid}): in pthread_join (thread ")
    assert f" at hang_keydtor.c:{L['join']} for " in line
    assert line.endswith(f", waiting for thread w ({tid_w})"), line


def pid_reused(tmp_path, name, *args):
    """Trace tests/progs/NAME ARGS, whose second child gets its first child's pid, until it
    does: the Traced run and its output's values."""
    for attempt in range(5):
        t = ptt_trace(tmp_path, [prog(name), *args], opts=["--hang-timeout=0.5"],
                      name=f"p{attempt}.ptt")
        out = parse_output(t.stdout)[1]
        if out["c1"] == out["c2"]:
            return t, out
    pytest.skip("another process took the pid each time")


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to choose a pid (ns_last_pid)")
def test_pid_reused(tmp_path):
    """A process reaped by its parent, whose pid the next child gets at once: the watch hears
    of the first's end after the second started. The second's hang is reported whole (both
    threads, each held by the other), nothing of it taken for the first's."""
    t, out = pid_reused(tmp_path, "hang_pidreuse")
    c2, tid_t, L = out["c2"], out["tid_t"], site_lines("hang_pidreuse")
    assert report(t.stderr, 0.5, blocked=2) == {
        f"ptt:   pid {c2} thread main ({c2}): in pthread_mutex_lock (mutex a) at "
        f"hang_pidreuse.c:{L['main_lock_a']} for D s, held by thread t ({tid_t})":
            (f"{HELD_PREFIX}mutex b, taken at hang_pidreuse.c:{L['main_lock_b']}",),
        f"ptt:   pid {c2} thread t ({tid_t}): in pthread_mutex_lock (mutex b) at "
        f"hang_pidreuse.c:{L['t_lock_b']} for D s, held by thread main ({c2})":
            (f"{HELD_PREFIX}mutex a, taken at hang_pidreuse.c:{L['t_lock_a']}",)}


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to choose a pid (ns_last_pid)")
@pytest.mark.parametrize("mode", ["held", "free"])
def test_pid_reused_after_holders_ended(tmp_path, mode):
    """The first process ended holding a rwlock for reading (a thread x that ended holding it,
    then main at its _exit), or, "free", holding nothing; the second, with its pid, waits to
    write-lock the rwlock at the same address, which only its own thread r, with x's tid, holds:
    the report names r alone as its reader, by its own name, none of the first process's
    threads. (The names of a first process told of late are dropped when the second is
    announced; this run usually hears of the first's end before.)"""
    t, out = pid_reused(tmp_path, "hang_pidreuse_held", *(["free"] if mode == "free" else []))
    c2, tid_r, L = out["c2"], out["tid_r"], site_lines("hang_pidreuse_held")
    src = "hang_pidreuse_held.c"
    assert report(t.stderr, 0.5, blocked=2) == {
        f"ptt:   pid {c2} thread main ({c2}): in pthread_rwlock_wrlock (rwlock rw) at "
        f"{src}:{L['main_wrlock']} for D s, held for reading by thread r ({tid_r})":
            (f"{HELD_PREFIX}mutex m, taken at {src}:{L['main_lock_m']}",),
        f"ptt:   pid {c2} thread r ({tid_r}): in pthread_mutex_lock (mutex m) at "
        f"{src}:{L['r_lock_m']} for D s, held by thread main ({c2})":
            (f"{HELD_PREFIX}rwlock rw for reading, taken at {src}:{L['r_rdlock']}",)}


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to choose a pid (ns_last_pid)")
def test_pid_reused_deadlock_again(tmp_path):
    """Two processes with one pid, one after the other, each deadlocked (main and a thread, each
    holding what the other wants), each killed: both deadlocks are reported, though the watch
    knows them by the same pid and tid (before: the second was taken for the first, already
    reported)."""
    t, out = pid_reused(tmp_path, "hang_pidreuse_cycle")
    said = [x for x in t.stderr.splitlines() if x.startswith("ptt: hang: deadlock in pid")]
    assert said == [f"ptt: hang: deadlock in pid {out['c2']}: 2 threads wait for each other:"] * 2, \
        t.stderr


def exec_hang(tmp_path, argv, held, held_site, u_call, u_site, held_by):
    """hang_exec's deadlock after the exec, killed on hang: the report has exactly its two
    threads, main (holding HELD) and u (in U_CALL, HELD_BY main). (trace, output, pid, u's tid)"""
    t = ptt_trace(tmp_path, argv, opts=["--hang-timeout=0.5", "--kill-on-hang"], rc=137)
    out = parse_output(t.stdout)[1]
    pid, tid_u, L = out["pid"], out["tid_u"], site_lines("hang_exec")
    assert report(t.stderr, 0.5, blocked=2) == {
        f"ptt:   pid {pid} thread main ({pid}): in pthread_join (thread {out['th_u']}) at "
        f"hang_exec.c:{L['join']} for D s, waiting for thread u_main ({tid_u})":
            (f"{HELD_PREFIX}{held}, taken at hang_exec.c:{L[held_site]}",),
        f"ptt:   pid {pid} thread u_main ({tid_u}): in {u_call} at hang_exec.c:{L[u_site]} for "
        f"D s, {held_by} thread main ({pid})": ()}
    return t, out, pid, tid_u


def test_exec_old_program_forgotten(tmp_path):
    """A thread other than main calls exec while main joins it: the old program's main, whose
    tid the process keeps, is not reported blocked in its join; the new program's deadlock is
    reported whole, both threads, each waiting for the other."""
    t, out, pid, tid_u = exec_hang(tmp_path, [prog("hang_exec")], "mutex m", "main_lock",
                                   "pthread_mutex_lock (mutex m)", "u_lock", "held by")
    blocked = [e for e in t.events if e.name == "HANG_BLOCKED"]
    assert sorted(e.fields[:2] for e in blocked) == sorted(
        [(pid, "THREAD_JOIN_IN"), (tid_u, "MUTEX_LOCK_IN")])
    # The old program's events are all in the trace: its main entered the join it never left.
    starts = [e for e in t.events if e.name == "PROCESS_START" and e.pid == int(pid)]
    assert len(starts) == 2
    joins = [e for e in t.events if e.name == "THREAD_JOIN_IN" and e.pid == int(pid)]
    assert len(joins) == 2 and joins[0].ns < starts[1].ns < joins[1].ns
    # The readers end the old main's join at the exec, the new one's at the kill.
    unfinished = [e for e in t.events if e.name == "TRACE_UNFINISHED" and e.tid == int(pid)]
    assert [(e.fields[0], e.ns) for e in unfinished] == [
        ("THREAD_JOIN_IN", starts[1].ns),
        ("THREAD_JOIN_IN", next(e.ns for e in t.events if e.name == "PROCESS_EXIT"))]


def test_exec_old_program_holds_nothing(tmp_path):
    """Both programs' main threads read-lock a rwlock at the same address (no address
    randomization), the old one after 3000 lock and unlock pairs: the new program's writer is
    reported held by the new main alone, and only the new program's two threads are blocked."""
    if subprocess.run(["setarch", "x86_64", "-R", "true"], capture_output=True).returncode:
        pytest.skip("setarch -R cannot turn address randomization off here")
    exec_hang(tmp_path, ["setarch", "x86_64", "-R", prog("hang_exec"), "rw"],
              "rwlock rw for reading", "main_rdlock", "pthread_rwlock_wrlock (rwlock rw)",
              "u_wrlock", "held for reading by")


def test_exec_chain_frees_its_subbuffers(tmp_path):
    """300 execs in a row, each by a thread while main joins it, in a pool of 256 sub-buffers:
    what each old program's main held is drained at the exec, not kept until the process ends,
    so no writer waits for a sub-buffer and nothing is lost (before: 59 waits, 495 events lost
    and 8 minutes)."""
    t = ptt_trace(tmp_path, [prog("hang_exec"), "chain", 300],
                  opts=["--buffer=1M", "--subbuffer=4K"])
    assert parse_output(t.stdout)[0]["execs"] == "done"
    assert t.lost == 0 and "waited" not in t.stderr, t.stderr
    pid = t.events[0].pid
    assert sum(e.name == "PROCESS_START" and e.pid == pid for e in t.events) == 301
    # (main may not be in its join yet when the exec ends it: its create is there)
    assert sum(e.name == "THREAD_CREATE_IN" and e.pid == pid for e in t.events) == 300
    # Each join the exec cut short ends at the exec: main was blocked for their sum, less than
    # its lifetime (not until the process's end, 300 times over).
    starts = [e.ns for e in t.events if e.name == "PROCESS_START" and e.pid == pid]
    waited = sum(next(s for s in starts if s >= e.ns) - e.ns
                 for e in t.events if e.name == "THREAD_JOIN_IN" and e.pid == pid)
    threads = stat_json(t.path)["threads"]
    main = next(th for th in threads if th["tid"] == pid)
    assert main["blocked_ns"] < main["lifetime_ns"]
    # A thread that execs goes on as the new program's: main and the 300 that exec'd, in the
    # summary as in stat (601 streams, counted as threads before).
    assert summary_counts(t.path)[1]["threads"] == str(len(threads)) == "301"
    assert abs(main["blocked_ns"] - waited) <= 300, (main, waited)


def test_busy_thread_said_so(tmp_path):
    """A thread blocked on a lock that a thread computing outside any traced call holds: the
    report goes on with the computing thread, said to be running, the program busy (not 'idle in
    epoll, read or a sleep', which fits a thread asleep). Three such quiet spells of 0.8 s with
    a timeout of 0.3 s: a report after the first, one after the second, which waits twice as
    long (0.6 s), none after the third, which would wait 1.2 s (three reports before)."""
    lines = backed_off(tmp_path, "compute")
    busy = [ln for ln in lines if "is running" in ln]
    assert len(busy) == 2 and all(
        re.fullmatch(r"ptt: hang: pid (\d+) thread holder(#\d+)? \(\d+\) is running: the "
                     r"threads blocked may wait for its work \(a program that computes between "
                     rf"its calls is busy, not hung; a next report waits for {n} times the "
                     r"timeout\)", ln) for ln, n in zip(busy, (2, 4))), lines


def backed_off(tmp_path, mode):
    """hang_busy MODE 800 3 with a timeout of 0.3 s: two reports, the second after a quiet spell
    of twice the timeout at least. ptt trace's stderr lines."""
    t = trace_prog(tmp_path, "hang_busy", mode, 800, 3, opts=["--hang-timeout=0.3"],
                   compare=False)
    lines = t.stderr.splitlines()
    heads = [i for i, line in enumerate(lines) if HEAD_RE.match(line)]
    assert len(heads) == 2, lines
    assert float(HEAD_RE.match(lines[heads[1]])[1]) >= 0.6, lines
    return lines


def test_idle_pool_said_so(tmp_path):
    """A pool of workers waiting for work on a condvar while main sleeps outside any traced call
    (a server idle in epoll_wait): the report of the blocked workers goes on with main, which
    they may wait for, and says an idle program is not hung."""
    t = trace_prog(tmp_path, "idle_sleep", 1500, 3, opts=["--hang-timeout=0.5"], compare=False)
    assert t.results == {"slept": "1500"}
    lines = t.stderr.splitlines()
    k = next(i for i, line in enumerate(lines) if HEAD_RE.match(line))
    assert HEAD_RE.match(lines[k])[2] == "3", lines
    assert all(ln.startswith("ptt:   pid ") and "pthread_cond_wait" in ln
               for ln in lines[k + 1:k + 4]), lines
    assert re.fullmatch(r"ptt: hang: pid (\d+) thread main \(\1\) is not in a traced call "
                        r"\(state S\): the threads blocked may wait for it \(a program that waits "
                        r"for work in epoll, read or a sleep is idle, not hung; a next report "
                        r"waits for 2 times the timeout\)", lines[k + 4]), lines


def test_idle_pool_exits_no_hang(tmp_path):
    """The idle pool reported, then main works and returns with its workers still parked: ptt
    check reads the report in the trace and the work after it, and finds no hang, as for an
    idle pool without --hang-timeout (before: the three workers "wait on a condvar never
    signalled": the report made the process hung for good)."""
    t = trace_prog(tmp_path, "idle_sleep", 1000, 3, "park", opts=["--hang-timeout=0.3"],
                   compare=False)
    assert any(HEAD_RE.match(line) for line in t.stderr.splitlines()), t.stderr
    p = run([PTT, "check", t.path])
    assert (p.returncode, p.stderr) == (0, ""), p.stdout
    assert p.stdout.endswith(", nothing found\n"), p.stdout


def test_signal_set_said_as_view_says_it(tmp_path):
    """A thread in sigwait: the report gives the signals it waits for, not their mask (0x200)."""
    code = ("import signal\n"
            "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n"
            "signal.sigwait({signal.SIGUSR1})\n")
    # timeout(1) ends the wait with the signal after the report (exit status 124).
    t = ptt_trace(tmp_path, ["timeout", "-s", "USR1", "2", PYTHON, "-c", code],
                  opts=["--hang-timeout=0.3"], rc=124)
    assert re.search(r"thread main \(\d+\): in sigwait \(set 10\) for", t.stderr), t.stderr
    # The report recorded in the trace, as ptt view says it (before: "on 0x200").
    text = run([PTT, "view", "--event=HANG_BLOCKED", t.path]).stdout
    assert re.search(r"blocked in sigwait on set 10 for ", text), text


def test_idle_thread_backs_off(tmp_path):
    """As test_busy_thread_said_so, the holder asleep (nanosleep) rather than computing: the
    program is idle, and the reports back off the same way: two, not three."""
    lines = backed_off(tmp_path, "sleep")
    idle = [ln for ln in lines if "is idle, not hung" in ln]
    assert len(idle) == 2 and all(f"a next report waits for {n} times the timeout)" in ln
                                  for ln, n in zip(idle, (2, 4))), lines


def children_named(pid, comm):
    """The children of process pid whose command name is comm."""
    found = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        return found
    for c in kids:
        try:
            with open(f"/proc/{c}/comm") as f:
                if f.read().strip() == comm:
                    found.append(c)
        except OSError:
            pass
    return found


def all_asleep(pid):
    """Whether every thread of pid sleeps (state S: the workers parked, main in its sleep)."""
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "S":
                    return False
    except OSError:
        return False
    return True


def test_stopped_program_said_so(tmp_path):
    """The program stopped (SIGSTOP) while its workers wait: the report says its main thread is
    stopped rather than calling it idle or hung (before: nothing said it)."""
    p = subprocess.Popen([str(PTT), "trace", "-q", "-o", str(tmp_path / "t.ptt"),
                          "--hang-timeout=1", "--", str(prog("idle_sleep")), "3000", "3"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    child, deadline = None, time.monotonic() + 30
    while not child and time.monotonic() < deadline:  # ptt trace's own short-lived children first
        child = next((c for c in children_named(p.pid, "idle_sleep")
                      if len(os.listdir(f"/proc/{c}/task")) == 4 and all_asleep(c)), None)
        time.sleep(0.02)
    # Stopped at once: the first report, a second after the workers parked, is the only one
    # until something moves, and it must find main stopped.
    assert child, "the program and its 3 workers did not start and park"
    said = re.compile(rf"^ptt: hang: pid {child} thread main \({child}\) is stopped \(state T: a "
                      r"SIGSTOP, or a debugger\): the program may be stopped rather than hung$")
    lines = []

    def collect():
        for line in p.stderr:
            lines.append(line)

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    os.kill(child, signal.SIGSTOP)
    try:  # stopped until the report says so: a loaded machine may take more than a second
        deadline = time.monotonic() + 30
        while not any(said.match(x.rstrip("\n")) for x in list(lines)):
            assert time.monotonic() < deadline, "".join(lines)
            time.sleep(0.05)
    finally:
        os.kill(child, signal.SIGCONT)
    reader.join(timeout=60)
    assert p.wait(timeout=60) == 0, "".join(lines)
