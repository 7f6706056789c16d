"""ptt trace's exit status: the program's, 128+N when a signal N killed it, 127 when it cannot
be found, 126 when it cannot be run, 2 for ptt's own usage errors; and the PROCESS_EXIT event
that records how the program ended, with the calls it left open."""

import fcntl
import os
import re
import signal
import subprocess
import termios
import threading
import time

import pytest

from conftest import (CLASSES, CREATE_IN, E, PTT, SUMMARY_RE, TIMEOUT, parse_output, parse_raw,
                      prog, run, summary_counts, trace_prog, view)

SIGS = {"kill": signal.SIGKILL, "term": signal.SIGTERM, "segv": signal.SIGSEGV}


def ending(tmp_path, action, n, blocked=False):
    """exit_status ACTION N [blocked] under ptt trace: (Traced, expected PROCESS_EXIT field)."""
    if action == "exit":
        rc, plain_rc, status = n, n, f"exit={n}"
        args = ["exit", n]
    else:
        sig = SIGS[action]
        rc, plain_rc, status = 128 + sig, -sig, f"signal={int(sig)}"
        args = ["segv", 0] if action == "segv" else ["kill", int(sig)]
    t = trace_prog(tmp_path, "exit_status", *args, *(["blocked"] if blocked else []), rc=rc,
                   plain_rc=plain_rc)
    return t, E("PROCESS_EXIT", status)


@pytest.mark.parametrize("action,n", [("exit", 0), ("exit", 3), ("exit", 42), ("exit", 255),
                                      ("kill", 0), ("term", 0), ("segv", 0)])
def test_exit_status(tmp_path, action, n):
    t, exit_event = ending(tmp_path, action, n)
    o = t.out
    m = o["m"]
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", 0),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", 0),
        exit_event,
    ]
    assert [e.key for e in t.events if e.name == "PROCESS_EXIT"] == [exit_event]


@pytest.mark.parametrize("action,n", [("exit", 5), ("kill", 0), ("segv", 0)])
def test_exit_with_blocked_thread(tmp_path, action, n):
    """The program ends while a thread waits in pthread_mutex_lock: what that thread recorded
    is saved, and the call is closed by TRACE_UNFINISHED."""
    t, exit_event = ending(tmp_path, action, n, blocked=True)
    o = t.out
    m, me = o["m"], o["tid_main"]
    assert t.thread(me) == [
        t.process_start(),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", 0),
        CREATE_IN(o["th_ptr"], "0x0", o["fn"], "0x0"),
        E("THREAD_CREATE_OUT", 0, o["th"]),
        exit_event,
    ]
    assert t.thread(o["tid_t2"]) == [
        E("THREAD_START", o["fn"], "0x0", me, o["th"], "0x0", "0x0", "0x0", "0x0"),
        E("MUTEX_LOCK_IN", m), E("MUTEX_WAIT", m, me),
        E("TRACE_UNFINISHED", "MUTEX_LOCK_IN"),
    ]
    # Closed when the process ended.
    ends = {e.name: e.ns for e in t.events if e.name in ("TRACE_UNFINISHED", "PROCESS_EXIT")}
    assert ends["TRACE_UNFINISHED"] == ends["PROCESS_EXIT"]
    # The summary says the reader added it: its count is ptt trace's and the one added.
    counts, head = summary_counts(t.path, keep_machine=True)
    written = int(re.search(r"wrote (\d+) events", t.stderr).group(1))  # ptt trace's count
    assert head["unfinished"] == (f"1 call never returned: {written} events recorded, and the "
                                  "TRACE_UNFINISHED below, added by the reader")
    assert int(head["events"]) == written + 1 == sum(counts.values())
    filtered = view("--summary", "--event=TRACE_UNFINISHED", t.path)
    assert ("unfinished: 1 call never returned: their TRACE_UNFINISHED, below, added by the "
            "reader\n") in filtered, filtered


@pytest.mark.parametrize("what,rc,message", [
    ("missing", 127, "No such file or directory"),
    ("not_executable", 126, "Permission denied"),
    ("directory", 126, "Permission denied"),
])
def test_cannot_run(tmp_path, what, rc, message):
    target = {"missing": tmp_path / "no-such-program",
              "not_executable": tmp_path / "data.txt",
              "directory": tmp_path}[what]
    if what == "not_executable":
        target.write_text("#!/bin/sh\nexit 0\n")
    out = tmp_path / "t.ptt"
    p = run([PTT, "trace", "-o", out, "--", target, "arg"], cwd=tmp_path)
    assert p.returncode == rc
    assert p.stderr.splitlines()[-1] == f"ptt trace: cannot run '{target}': {message}"
    assert not out.exists(), "a trace file left for a program that never ran"


@pytest.mark.parametrize("args", [
    ["trace"],
    ["trace", "-o", "t.ptt"],
    ["trace", "-o", "t.ptt", "--overflow=sometimes", "--", "touch", "ran"],
    ["trace", "-o", "t.ptt", "--buffer=100K", "--", "touch", "ran"],
    ["trace", "-o", "t.ptt", "--buffer=lots", "--", "touch", "ran"],
    ["trace", "-o", "t.ptt", "--buffer=1M", "--subbuffer=1M", "--", "touch", "ran"],
    ["trace", "-o", "t.ptt", "--subbuffer=5000", "--", "touch", "ran"],
    ["trace", "-o", "t.ptt", "--subbuffer=2K", "--", "touch", "ran"],
    ["trace", "-o", "t.ptt", "--events=mutex,nosuch", "--", "touch", "ran"],
    ["trace", "-o", "t.ptt", "--clock=sundial", "--", "touch", "ran"],
    ["trace", "-o", "t.ptt", "--bogus", "--", "touch", "ran"],
    ["trace", "-o", "t.ptt", "-x", "--", "touch", "ran"],
    ["trace", "-o", "nodir/t.ptt", "--", "touch", "ran"],
    [],
    ["nosuchcommand"],
    ["view"],
    ["view", "a.ptt", "b.ptt"],
    ["view", "--format=xml", "t.ptt"],
    ["view", "--bogus", "t.ptt"],
    ["view", "missing.ptt"],
    ["view", "notatrace.txt"],
])
def test_usage_errors(tmp_path, args):
    """Exit status 125 for ptt trace (2 for the other commands) and a message on stderr; the
    program is not run, no trace is written."""
    (tmp_path / "notatrace.txt").write_text("hello\n" * 100)
    p = run([PTT, *args], cwd=tmp_path)
    assert p.returncode == (125 if args[:1] == ["trace"] else 2), p.stderr
    assert p.stdout == ""
    if args and args[0] in ("trace", "view"):
        # One line, naming the command.
        assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith(f"ptt {args[0]}: "), \
            p.stderr
    else:
        assert p.stderr.startswith(("ptt: ", "usage: ptt")), p.stderr
    assert not (tmp_path / "ran").exists()
    assert not (tmp_path / "t.ptt").exists()


def test_quiet(tmp_path):
    """-q: the summary is the only line on stderr."""
    p = run([PTT, "trace", "-q", "-o", "t.ptt", "--", prog("exit_status"), "exit", "7"],
            cwd=tmp_path)
    assert p.returncode == 7
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and SUMMARY_RE.match(lines[0]), p.stderr
    p = run([PTT, "trace", "-o", "t.ptt", "--", prog("exit_status"), "exit", "7"], cwd=tmp_path)
    assert len(p.stderr.splitlines()) == 2


def test_help_and_list(tmp_path):
    for args in (["--help"], ["trace", "--help"], ["view", "--help"]):
        p = run([PTT, *args])
        assert p.returncode == 0 and p.stdout.startswith("usage: ptt") and p.stderr == ""
    p = run([PTT, "trace", "--list"])
    assert p.returncode == 0
    assert [line.split()[0] for line in p.stdout.splitlines()] == CLASSES


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_passed_on(tmp_path, sig):
    """A signal sent to ptt trace goes to the program; ptt trace exits as the program did."""
    out = tmp_path / "t.ptt"
    p = subprocess.Popen([str(PTT), "trace", "-o", str(out), "--", str(prog("exit_status")),
                          "pause", "0"], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    lines = []
    while not lines or lines[-1] != "@ready=1\n":  # the program runs, and waits
        lines.append(p.stdout.readline())
        assert lines[-1], "the program ended before it was ready"
    p.send_signal(sig)
    rest, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 128 + sig, err
    assert SUMMARY_RE.match(err.splitlines()[-1])
    o = parse_output("".join(lines) + rest)[1]
    m = o["m"]
    events = parse_raw(view("--format=raw", out))
    assert [e.key for e in events] == [
        E("PROCESS_START", p.pid, events[0].fields[1]),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", 0),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", 0),
        E("PROCESS_EXIT", f"signal={int(sig)}"),
    ]
    assert {e.tid for e in events} == {int(o["tid_main"])}


def counted(tmp_path, how):
    """sig_count under ptt trace, in a process group of its own (ptt trace's), signalled as how
    says: what the program counted."""
    cmd = [str(PTT), "trace", "-q", "-o", str(tmp_path / "t.ptt"), "--force", "--",
           str(prog("sig_count"))] + {"self": ["self"], "pid+group": ["2"]}.get(how, [])
    if how == "timeout":  # signals ptt trace, then its whole group
        # 1.5 s: a loaded machine may take a while to start the program and its handler
        cmd = ["timeout", "--preserve-status", "-s", "INT", "1.5"] + cmd
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    assert p.stdout.readline() == "@ready=1\n"
    if how == "pid+group":  # read what comes: a signal lost would leave the program waiting
        watchdog = threading.Timer(TIMEOUT / 2, p.kill)
        watchdog.start()
    if how == "group":
        os.killpg(p.pid, signal.SIGINT)
    elif how == "pid":
        p.send_signal(signal.SIGINT)
    elif how == "pid+group":  # one to ptt trace alone, one to the group, in the same 20 ms
        p.send_signal(signal.SIGINT)
        while pending(p.pid) & 1 << (signal.SIGINT - 1):  # else the two merge, as natively
            time.sleep(0.0005)
        os.killpg(p.pid, signal.SIGINT)
    elif how == "every":  # as systemd stops a unit: each process of it, one after the other
        for pid in group_pids(p.pid):
            os.kill(pid, signal.SIGTERM)
    out, err = p.communicate(timeout=TIMEOUT)
    if how == "pid+group":
        watchdog.cancel()
    assert p.returncode == 0, err
    return out.strip().splitlines()[-1]


def pending(pid):
    """The signals pending for process pid as a whole."""
    with open(f"/proc/{pid}/status") as f:
        return int(next(ln for ln in f if ln.startswith("ShdPnd:")).split()[1], 16)


def group_pids(pgid):
    pids = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as f:
                if d.isdigit() and int(f.read().rsplit(")", 1)[1].split()[2]) == pgid:
                    pids.append(int(d))
        except (OSError, ValueError):
            pass
    return pids


@pytest.mark.parametrize("how,counts", [
    ("pid", "int=1 term=0"),      # to ptt trace alone: passed on
    ("group", "int=1 term=0"),    # kill -INT -- -PGID, a shell's kill %1: it got it already
    ("pid+group", "int=2 term=0"),  # both: one passed on (it waited forever for it)
    ("self", "int=1 term=0"),     # the program's own kill(0, SIGINT)
    ("every", "int=0 term=1"),    # systemd's stop, kill -1
])
def test_signal_reaches_the_program_once(tmp_path, how, counts):
    """A signal reaches the program as often as it would without ptt trace: once, whether it
    was sent to ptt trace alone, which passes it on, or to the whole process group or every
    process, which the program is in (twice before)."""
    assert counted(tmp_path, how) == counts


def test_timeout_signals(tmp_path):
    """timeout(1) signals its command, then the whole group: the program gets one from the
    group, and ptt trace passes on the one it got alone unless the two merged in its pending
    signals, as the program's two would without ptt trace: one or two (never none)."""
    assert counted(tmp_path, "timeout") in ("int=1 term=0", "int=2 term=0")


def test_terminal_signal_then_one_to_ptt(tmp_path):
    """Ctrl-C on the terminal reaches the program (and ptt trace, which does not pass it on);
    a SIGINT sent to ptt trace alone after it is passed on: two in all (the terminal's copy
    left pending in the witness made the second seem sent to the group, and dropped it)."""
    master, slave = os.openpty()

    def own_terminal():  # a session of its own, the pty its controlling terminal
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    cmd = [str(PTT), "trace", "-q", "-o", str(tmp_path / "t.ptt"), "--", str(prog("sig_count")),
           "2"]
    p = subprocess.Popen(cmd, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=own_terminal)
    os.close(slave)
    watchdog = threading.Timer(TIMEOUT, p.kill)  # a signal not passed on: no endless wait
    watchdog.start()
    try:
        assert p.stdout.readline() == "@ready=1\n"
        os.write(master, b"\x03")  # the terminal's interrupt character: SIGINT to its group
        assert p.stdout.readline() == "@got=1\n"
        while pending(p.pid) & 1 << (signal.SIGINT - 1):  # else the two merge in ptt trace
            time.sleep(0.0005)
        p.send_signal(signal.SIGINT)
        assert p.stdout.readline() == "@got=2\n"
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        watchdog.cancel()
        p.kill()
        os.close(master)
    assert (p.returncode, out) == (0, "int=2 term=0\n"), err


def test_terminal_hangup_reaches_the_program(tmp_path):
    """ptt trace the leader of a terminal's session (ssh -t, tmux, xterm -e exec it): a hangup
    sends SIGHUP to it alone, and it passes it on; the program dies of it (it waited forever)."""
    master, slave = os.openpty()

    def own_terminal():
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    p = subprocess.Popen([str(PTT), "trace", "-q", "-o", str(tmp_path / "t.ptt"), "--",
                          str(prog("sig_count"))], stdin=slave, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=own_terminal)
    os.close(slave)
    try:
        assert p.stdout.readline() == "@ready=1\n"
        os.close(master)  # the terminal hangs up
        master = None
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        p.kill()
        if master is not None:
            os.close(master)
    assert p.returncode == 128 + signal.SIGHUP, err

