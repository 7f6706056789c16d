"""Processes of one session (tests/progs/proc_chain.c): fork then exec of the same program and
of another, vfork+exec, posix_spawn, system(), popen() and a daemon that outlives the program.
Every process's events are in the file under its pid, exactly, ending with how it ended (exit
status or signal), whoever reaped it (glibc's system() and popen() reap where no interposer
sees); ptt trace ends with the last process of the session, or with the program under
--no-follow."""

import collections
import fcntl
import os
import struct

import pytest
from conftest import PYTHON, E, parse_output, parse_raw, prog, ptt_trace, trace_prog
from names_util import ptt_ok, stat_json
from robust_util import pid_alive, session_pools, wait_until

LOCK = ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT")
FORK_ITERS, LEAF_ITERS, DAEMON_ITERS = 3, 5, 7  # as in proc_chain.c
SEM = ["SEM_INIT_IN", "SEM_INIT_OUT"] + ["SEM_POST_IN", "SEM_POST_OUT"] * 4 + \
    ["SEM_DESTROY_IN", "SEM_DESTROY_OUT"]  # proc_other


def pidfd_exit_supported():
    """Whether the kernel tells a reaped process's wait status through a pidfd (Linux 6.15's
    PIDFD_INFO_EXIT), as ptt trace checks before it relies on it."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    fd = os.pidfd_open(pid)
    os.waitpid(pid, 0)
    info = bytearray(struct.pack("QQ", 1 << 3, 0) + bytes(48))  # mask: PIDFD_INFO_EXIT
    get_info = (3 << 30) | (len(info) << 16) | (0xFF << 8) | 11  # _IOWR(0xFF, 11, 64 bytes)
    try:
        fcntl.ioctl(fd, get_info, info)
    except OSError:
        return False
    finally:
        os.close(fd)
    return bool(struct.unpack_from("Q", info)[0] & (1 << 3))


# Without it, only the processes ptt trace reaps itself end with PROCESS_EXIT.
PIDFD_EXIT = pidfd_exit_supported()


def per_pid(events):
    out = collections.defaultdict(list)
    for e in events:
        out[e.pid].append(e)
    return out


def expected_names(out, ptt_pid):
    """pid -> the names of its events, in order, and pid -> its PROCESS_START fields."""
    pid = int(out["pid"])
    kids = {k: int(out[f"pid_{k}"]) for k in ("fork_exec", "other", "vfork", "spawn", "system",
                                               "popen", "system_kill", "daemon")}
    d1 = int(out["pid_daemon_parent"])
    start, end = ["PROCESS_START"], ["PROCESS_EXIT"]
    other_end = end if PIDFD_EXIT else []  # of a process that another process reaps
    names = {
        pid: start + ["CHILD_EXIT"] * 5 + end,
        kids["fork_exec"]: start + list(LOCK) * FORK_ITERS + start + list(LOCK) * LEAF_ITERS +
        other_end,
        kids["other"]: start + start + SEM + other_end,
        kids["vfork"]: start + list(LOCK) * LEAF_ITERS + other_end,
        kids["spawn"]: start + list(LOCK) * LEAF_ITERS + other_end,
        # the shell, then the leaf it became by exec
        kids["system"]: start + start + list(LOCK) * LEAF_ITERS + other_end,
        kids["popen"]: start + start + list(LOCK) * LEAF_ITERS + other_end,
        kids["system_kill"]: start + start + list(LOCK) * LEAF_ITERS + other_end,
        d1: start + other_end,
        kids["daemon"]: start + list(LOCK) * DAEMON_ITERS + end,
    }
    # How each ended, as the program saw it (the daemon's, which ptt trace reaps, after).
    ends = {kids[k]: f"exit={c}" for k, c in (("fork_exec", 11), ("other", 12), ("vfork", 13),
                                                ("spawn", 14), ("system", 15), ("popen", 16))}
    ends.update({d1: "exit=0", kids["system_kill"]: "signal=11"})
    if not PIDFD_EXIT:
        ends = {}
    ends.update({pid: "exit=3", kids["daemon"]: "exit=17"})
    parents = {p: pid for p in names if p != pid}
    parents[pid] = ptt_pid
    parents[kids["daemon"]] = d1
    return names, parents, pid, kids, d1, ends


def test_chain_follow(tmp_path):
    t = trace_prog(tmp_path, "proc_chain", prog("proc_other"), rc=3)
    assert t.results == {"fork_exec": "11", "fork_other": "12", "vfork": "13", "spawn": "14",
                         "system": "15", "popen": "16", "system_kill": "-11",
                         "daemon_parent": "0"}
    out = t.out
    assert out["pid_fork"] == out["pid_fork_exec"] and out["pid_fork_other"] == out["pid_other"]
    assert out["pid_vfork_parent"] == out["pid_vfork"]
    assert out["pid_spawn_parent"] == out["pid_spawn"]
    names, parents, pid, kids, d1, ends = expected_names(out, t.ptt_pid)
    got = per_pid(t.events)
    assert {p: [e.name for e in ev] for p, ev in got.items()} == names
    assert {p: ev[-1].key for p, ev in got.items() if ev[-1].name == "PROCESS_EXIT"} == {
        p: E("PROCESS_EXIT", status) for p, status in ends.items()}
    for p, ev in got.items():
        for e in ev:
            if e.name == "PROCESS_START":
                assert e.fields == (str(parents[p]), str(t.clock)), f"pid {p}: {e}"
            assert e.tid == p  # every process here is single-threaded
    assert [e.key for e in got[pid] if e.name != "PROCESS_START"] == [
        E("CHILD_EXIT", kids["fork_exec"], "exit=11"), E("CHILD_EXIT", kids["other"], "exit=12"),
        E("CHILD_EXIT", kids["vfork"], "exit=13"), E("CHILD_EXIT", kids["spawn"], "exit=14"),
        E("CHILD_EXIT", d1, "exit=0"), E("PROCESS_EXIT", "exit=3")]
    # The daemon recorded its calls only once ptt trace had reaped the program, and ptt trace
    # waited for it: they are in the file, and its end is the last event.
    assert t.events[-1].key == E("PROCESS_EXIT", "exit=17") and t.events[-1].pid == kids["daemon"]
    assert not session_pools(f"ptt-{os.getuid()}-{t.ptt_pid}")
    stat_of_processes(t, kids)
    command_lines(t, pid, kids, d1)


def command_lines(t, pid, kids, d1):
    """PROCESS_ARGS: one after each PROCESS_START, with argc and the arguments quoted as for a
    shell (system()'s shell's -c argument quoted); a forked child records its parent's (the
    daemon's two, and the children before they exec), vfork's and posix_spawn's (system() and
    popen() use it) none before their exec."""
    raw = parse_raw(ptt_ok("view", "--format=raw", "--event=PROCESS_START,PROCESS_ARGS", t.path),
                    keep_machine=True)
    args = collections.defaultdict(list)
    for before, e in zip(raw, raw[1:]):
        if e.name == "PROCESS_ARGS":
            assert before.name == "PROCESS_START" and before.pid == e.pid, (before, e)
            args[e.pid].append(e.fields)
    me, other = os.path.realpath(prog("proc_chain")), str(prog("proc_other"))

    def leaf(*a):
        return (str(len(a) + 2), f'"{me} leaf {" ".join(a)}"')

    def shell(*a):
        return ("3", f'"sh -c \'exec \'\\\\\'\'{me}\'\\\\\'\' leaf {" ".join(a)}\'"')
    main = ("2", f'"{prog("proc_chain")} {other}"')
    assert dict(args) == {
        pid: [main],
        kids["fork_exec"]: [main, leaf("fork_exec", "11")],
        kids["other"]: [main, ("2", f'"{other} 12"')],
        kids["vfork"]: [leaf("vfork", "13")],
        kids["spawn"]: [leaf("spawn", "14")],
        kids["system"]: [shell("system", "15"), leaf("system", "15")],
        kids["popen"]: [shell("popen", "16"), leaf("popen", "16")],
        kids["system_kill"]: [shell("system_kill", "-11"), leaf("system_kill", "-11")],
        d1: [main],
        kids["daemon"]: [main],
    }, args


def stat_of_processes(t, kids):
    """ptt stat of the chain: the mutex m of every process, by its symbol, that of the forked
    child's first program (FORK_ITERS) too, named before the exec replaced its symbols, the
    leaf's as m#2; the text says whose each object is (a pid column)."""
    objs = collections.defaultdict(dict)
    for o in stat_json(t.path)["objects"]:
        objs[o["pid"]][o["name"]] = o["acquisitions"]
    assert objs[kids["fork_exec"]] == {"m": FORK_ITERS, "m#2": LEAF_ITERS}, objs
    assert objs[kids["daemon"]] == {"m": DAEMON_ITERS}
    head, *rows = ptt_ok("stat", t.path).split("\n\n")[1].splitlines()
    assert head.split()[:3] == ["kind", "pid", "object"]
    got = sorted((int(r.split()[1]), int(r.split()[3])) for r in rows)
    assert got == sorted((p, n) for p, o in objs.items() for n in o.values()), rows
    # ptt view says the exec and the leaf's program (a forked child maps nothing: its parent's).
    pid = kids["fork_exec"]
    text = ptt_ok("view", f"--pid={pid}", "--event=PROCESS_START,MODULE_LOAD", t.path)
    lines = [ln.split(f"Pid {pid}, Thread main ({pid}) ", 1)[1] for ln in text.splitlines()]
    said = [ln.split(",")[0] if ln.startswith("runs") else ln.split(" (")[0] for ln in lines
            if not ln.startswith("maps")]
    leaf = str(prog("proc_chain"))
    assert said == ["starts process", "execs a new program", f'runs program "{leaf}"'], lines


def test_chain_no_follow(tmp_path):
    """--no-follow: ptt trace ends with the program, while the daemon waits for GOFILE; the
    daemon then runs on, unhindered, without its events in the file."""
    go = tmp_path / "go"
    t = ptt_trace(tmp_path, [prog("proc_chain"), prog("proc_other"), go], opts=["--no-follow"],
                  rc=3)
    results, out = parse_output(t.stdout)
    daemon = int(out["pid_daemon"])
    try:
        assert pid_alive(daemon), "the daemon ended before it was told to go"
        assert not session_pools(f"ptt-{os.getuid()}-{t.ptt_pid}")
        size = t.path.stat().st_size
        names, parents, pid, kids, d1, ends = expected_names(out, t.ptt_pid)
        got = per_pid(t.events)
        # The daemon's start may have been saved (ptt trace takes every sub-buffer at the end),
        # nothing after: it had not recorded anything else yet, nor ended.
        assert [e.name for e in got.pop(daemon, [])] in ([], ["PROCESS_START"])
        del names[daemon], ends[daemon]
        assert {p: [e.name for e in ev] for p, ev in got.items()} == names
        assert {p: ev[-1].key for p, ev in got.items() if ev[-1].name == "PROCESS_EXIT"} == {
            p: E("PROCESS_EXIT", status) for p, status in ends.items()}
    finally:
        go.touch()
    wait_until(lambda: (tmp_path / "go.done").exists(), what="the daemon's work after go")
    wait_until(lambda: not pid_alive(daemon), what="the daemon's end")
    assert t.path.stat().st_size == size


def test_children_reaped_by_wait3(tmp_path):
    """dash (Debian's /bin/sh) reaps its children with wait3, whose glibc code calls wait4 past
    the interposer: each child's end is a CHILD_EXIT of the shell too (none before)."""
    t = ptt_trace(tmp_path, ["dash", "-c", "/bin/true; /bin/false; exit 0"])
    shell = t.events[0].pid  # the program ptt trace started, the first to record
    assert t.events[0].name == "PROCESS_START"
    ends = [e for e in t.events if e.name == "CHILD_EXIT"]
    assert [(e.pid, e.fields[1]) for e in ends] == [(shell, "exit=0"), (shell, "exit=1")], ends
    children = {e.pid for e in t.events if e.name == "PROCESS_START"} - {shell}
    assert {int(e.fields[0]) for e in ends} == children


@pytest.mark.skipif(not PIDFD_EXIT, reason="no PIDFD_INFO_EXIT: ptt trace reaps what it can")
def test_end_before_its_reap(tmp_path):
    """A child that exits while its parent sleeps: its end is when ptt trace saw it end, before
    the parent reaps it 0.3 s later (ptt trace learns the status only at the reap: its end was
    stamped then, after the parent's CHILD_EXIT)."""
    code = ("import os, time\n"
            "p = os.fork()\n"
            "if p == 0:\n"
            "    os._exit(3)\n"
            "os.waitid(os.P_PID, p, os.WEXITED | os.WNOWAIT)\n"  # it has ended: the sleep
            "time.sleep(0.3)\n"                                   # starts at its end
            "os.waitpid(p, 0)\n")
    t = ptt_trace(tmp_path, [PYTHON, "-c", code])
    (reap,) = [e for e in t.events if e.name == "CHILD_EXIT" and e.fields[1] == "exit=3"]
    child = int(reap.fields[0])
    (end,) = [e for e in t.events if e.name == "PROCESS_EXIT" and e.pid == child]
    assert end.fields[0] == "exit=3"
    assert t.events.index(end) < t.events.index(reap)
    # About 0.3 s before: more than half of it, even on a loaded machine.
    assert reap.ns - end.ns > 150_000_000, (end.ns, reap.ns)
