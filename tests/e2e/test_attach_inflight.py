"""ptt trace -p PID and the calls already in progress at the attach (docs/attach.md): a thread
blocked in pthread_cond_wait, main blocked in pthread_join, threads blocked in
pthread_mutex_lock and sem_wait (tests/progs/attach_inflight.c).
Woken while attached, their ends are in the trace, each call marked CALL_BEFORE_ATTACH, with
its IN as of the attach (the condvar and its mutex, the thread joined, the mutex, the semaphore); ptt stat and ptt check
take them as calls begun before the attach. Detached (or ptt trace killed) while they are
still blocked, the program ends as it would have: their return addresses are given back (or
the trampoline left in their place only jumps back)."""

import json
import signal
import struct
import time

import pytest

from conftest import E, PTT, parse_raw, prog, run, view
from robust_util import Live
from test_attach import Attach, Loop, need_ptrace  # noqa: F401 (the fixture skips without ptrace)


class Blocked:
    """attach_inflight running, its waiter in pthread_cond_wait, main in pthread_join, its
    locker in pthread_mutex_lock, its taker in sem_wait."""

    def __init__(self, name="attach_inflight"):
        self.live = Live([], tool=[prog(name)])
        self.v = {k: self.live.value(k) for k in ("pid", "cond", "mutex", "gate", "cond2", "sem",
                                          "waiter")}
        self.pid = int(self.v["pid"])
        self.waiter_tid = int(self.live.value("waiter_tid"))
        self.locker_tid = int(self.live.value("locker_tid"))
        self.taker_tid = int(self.live.value("taker_tid"))
        assert self.live.value("waiting") == "1"

    def wake(self):
        """All woken: the lock returns 0, the wait returns 0 with the mutex held, main's join
        returns."""
        self.live.send("wake")
        assert self.live.value("locked") == "0"
        assert self.live.value("taken") == "0"
        assert self.live.value("woken") == "1"
        assert self.live.value("joined") == "0"
        assert self.live.value("retval") == "42"

    def finish(self):
        self.live.send("quit")
        self.live.p.stdin.close()
        assert self.live.p.wait(timeout=60) == 0  # no SIGSEGV: the stacks were right


def libptt_words(pid, tid):
    """The words of thread tid's stack, from its stack pointer up (16 KiB at most, within its
    mapping), that point into libptt's code: a return address replaced by its trampoline."""
    for _ in range(1000):  # back in its system call (restarted after the ptrace stop)
        with open(f"/proc/{pid}/task/{tid}/syscall") as f:
            fields = f.read().split()
        if fields[0] not in ("running", "-1"):
            break
        time.sleep(0.001)
    sp = int(fields[-2], 16)
    lib, top = [], None
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if "libptt" in line and "x" in line.split()[1]:
                lib.append((lo, hi))
            if lo <= sp < hi:
                top = hi
    with open(f"/proc/{pid}/mem", "rb") as mem:
        mem.seek(sp)
        data = mem.read(min(top, sp + 16384) - sp)
    words = struct.unpack(f"<{len(data) // 8}Q", data[:len(data) // 8 * 8])
    return [w for w in words if any(lo <= w < hi for lo, hi in lib)]


def thread_events(path, tid):
    """The events of thread tid, but the THREAD_ATTACHED ptt trace writes (in main's)."""
    return [e.key for e in parse_raw(view("--format=raw", path))
            if e.tid == tid and e.name != "THREAD_ATTACHED"]


@pytest.mark.parametrize("name", ["attach_inflight", "attach_inflight_noplt"])
def test_blocked_calls_recorded(tmp_path, name):
    """Built with PLT calls, and with -fno-plt (call *slot(%rip))."""
    b = Blocked(name)
    a = Attach(b.pid, tmp_path / "t.ptt")
    b.wake()
    b.finish()
    rc, err = a.end(None)  # the program ended while attached
    assert rc == 0, err
    path = tmp_path / "t.ptt"
    assert thread_events(path, b.waiter_tid)[:4] == [
        E("CALL_BEFORE_ATTACH", "COND_WAIT_IN"),
        E("COND_WAIT_IN", b.v["cond"], b.v["mutex"]),
        E("COND_WOKEN", b.v["cond"], b.v["mutex"], 0),
        E("COND_WAIT_OUT", 0),
    ]
    locker = thread_events(path, b.locker_tid)
    assert [e[:2] for e in locker[:5]] == [
        E("CALL_BEFORE_ATTACH", "MUTEX_LOCK_IN"),
        E("MUTEX_LOCK_IN", b.v["gate"]),
        E("MUTEX_WAIT", b.v["gate"]),  # and the thread holding it then
        E("MUTEX_ACQUIRED", b.v["gate"]),
        E("MUTEX_LOCK_OUT", 0),
    ]
    assert thread_events(path, b.taker_tid)[:5] == [
        E("CALL_BEFORE_ATTACH", "SEM_WAIT_IN"),
        E("SEM_WAIT_IN", b.v["sem"], 0),
        E("SEM_BLOCK", b.v["sem"]),
        E("SEM_ACQUIRED", b.v["sem"]),
        E("SEM_WAIT_OUT", 0, 0, 0),
    ]
    main = thread_events(path, b.pid)
    i = main.index(E("CALL_BEFORE_ATTACH", "THREAD_JOIN_IN"))
    assert main[i + 1] == E("THREAD_JOIN_IN", b.v["waiter"])
    # the join's end, then the program's next join (of its commands thread), seen as any call
    assert main[i + 2][:2] == ("THREAD_JOIN_OUT", "0")
    assert main[i + 3][0] == "THREAD_JOIN_IN"
    s = run([PTT, "stat", "--format=json", path])
    assert s.returncode == 0, s.stderr
    st = json.loads(s.stdout)
    assert st["calls_before_attach"] == 4
    conds = [o for o in st["objects"] if o["kind"] == "cond"]
    assert [(o["address"], o["wait_ns"]["count"]) for o in conds] == [(b.v["cond"], 1)]
    text = run([PTT, "stat", path]).stdout
    assert "4 calls begun before ptt trace attached" in text
    c = run([PTT, "check", path])
    assert c.returncode == 0, c.stdout + c.stderr
    assert "nothing found" in c.stdout
    out = tmp_path / "t.json"
    e = run([PTT, "export", "--format=chrome", path, "-o", out])
    assert e.returncode == 0, e.stderr
    calls = json.loads(out.read_text())["traceEvents"]
    marked = sorted(x["name"] for x in calls if x.get("args", {}).get("before_attach"))
    assert marked == ["pthread_cond_wait", "pthread_join", "pthread_mutex_lock", "sem_wait"]
    html = tmp_path / "t.html"
    r = run([PTT, "report", "-o", html, path])
    assert r.returncode == 0, r.stderr
    assert '<td id="before_attach">4</td>' in html.read_text()


def test_detached_while_blocked(tmp_path):
    """Detached with both calls still blocked: the program gets its return addresses back, and
    ends right when woken; the trace holds the two calls, unfinished."""
    b = Blocked()
    a = Attach(b.pid, tmp_path / "t.ptt")
    blocked = (b.waiter_tid, b.pid, b.locker_tid, b.taker_tid)
    for tid in blocked:  # each return address replaced
        assert len(libptt_words(b.pid, tid)) == 1
    rc, err = a.end()
    assert rc == 0, err
    for tid in blocked:  # and given back
        assert libptt_words(b.pid, tid) == []
    b.wake()
    b.finish()
    events = thread_events(tmp_path / "t.ptt", b.waiter_tid)
    assert events == [E("CALL_BEFORE_ATTACH", "COND_WAIT_IN"),
                      E("COND_WAIT_IN", b.v["cond"], b.v["mutex"]),
                      E("TRACE_UNFINISHED", "COND_WAIT_IN")]
    c = run([PTT, "check", tmp_path / "t.ptt"])
    assert c.returncode in (0, 1), c.stderr  # an unfinished wait may be reported, never an error


def test_attached_twice_while_blocked(tmp_path):
    """Detached, then attached again while still blocked: the second trace follows the same
    calls, and sees them return."""
    b = Blocked()
    a = Attach(b.pid, tmp_path / "1.ptt")
    rc, err = a.end()
    assert rc == 0, err
    a = Attach(b.pid, tmp_path / "2.ptt")
    b.wake()
    rc, err = a.end()
    assert rc == 0, err
    b.finish()
    assert thread_events(tmp_path / "2.ptt", b.waiter_tid)[:4] == [
        E("CALL_BEFORE_ATTACH", "COND_WAIT_IN"),
        E("COND_WAIT_IN", b.v["cond"], b.v["mutex"]),
        E("COND_WOKEN", b.v["cond"], b.v["mutex"], 0),
        E("COND_WAIT_OUT", 0),
    ]


def test_blocked_in_interposer(tmp_path):
    """A wait begun while attached (through libptt's interposer) and still blocked at the next
    attach: that trace marks it too, and the interposer records its end there."""
    b = Blocked()
    a = Attach(b.pid, tmp_path / "1.ptt")
    b.live.send("again")
    tid = int(b.live.value("waiter2_tid"))
    assert b.live.value("waiting2") == "1"
    rc, err = a.end()
    assert rc == 0, err
    assert thread_events(tmp_path / "1.ptt", tid)[-2:] == [
        E("COND_WAIT_IN", b.v["cond2"], b.v["mutex"]),
        E("TRACE_UNFINISHED", "COND_WAIT_IN"),
    ]
    a = Attach(b.pid, tmp_path / "2.ptt")
    assert libptt_words(b.pid, tid)  # inside the interposer: no trampoline of its own needed
    b.live.send("free2")
    assert b.live.value("woken2") == "1"
    rc, err = a.end()
    assert rc == 0, err
    b.wake()
    b.finish()
    assert thread_events(tmp_path / "2.ptt", tid) == [
        E("CALL_BEFORE_ATTACH", "COND_WAIT_IN"),
        E("COND_WAIT_IN", b.v["cond2"], b.v["mutex"]),
        E("COND_WOKEN", b.v["cond2"], b.v["mutex"], 0),
        E("COND_WAIT_OUT", 0),
        E("MUTEX_UNLOCK_IN", b.v["mutex"]),
        E("MUTEX_UNLOCK_OUT", 0),
        E("THREAD_END", "0x0", "return"),  # started while attached: on libptt's start wrapper
    ]


@pytest.mark.parametrize("kill", [False, True])
def test_cancelled_while_followed(tmp_path, kill):
    """A C++ thread cancelled in a wait followed (while attached, or after ptt trace was
    killed): the unwinding goes through the replaced return address, and the destructor of the
    frame above the wait runs."""
    if not prog("attach_cancel").exists():
        pytest.skip("no C++ compiler: attach_cancel not built")
    live = Live([], tool=[prog("attach_cancel")])
    pid = int(live.value("pid"))
    assert live.value("waiting") == "1"
    a = Attach(pid, tmp_path / "t.ptt")
    if kill:
        a.end(signal.SIGKILL)
    live.send("cancel")
    assert (live.value("destroyed"), live.value("cancelled"), live.value("relocked")) == \
        ("1", "1", "0")
    live.p.stdin.close()
    assert live.p.wait(timeout=60) == 0
    if not kill:
        rc, err = a.end(None)  # the program ended while attached
        assert rc == 0, err


def test_killed_while_blocked(tmp_path):
    """ptt trace killed while the calls are still blocked: the trampolines stay in place and
    only jump back; the program ends right. A ptt trace -p after that takes the killed one's
    libptt out (the return addresses given back) and follows the calls afresh."""
    b = Blocked()
    a = Attach(b.pid, tmp_path / "t.ptt")
    a.end(signal.SIGKILL)
    again = Attach(b.pid, tmp_path / "again.ptt")
    b.wake()
    rc, err = again.end()
    assert rc == 0, err
    b.finish()
    assert thread_events(tmp_path / "again.ptt", b.waiter_tid)[:2] == [
        E("CALL_BEFORE_ATTACH", "COND_WAIT_IN"),
        E("COND_WAIT_IN", b.v["cond"], b.v["mutex"]),
    ]


def test_killed_then_woken(tmp_path):
    """ptt trace killed, then the calls return through the trampolines left in place."""
    b = Blocked()
    a = Attach(b.pid, tmp_path / "t.ptt")
    a.end(signal.SIGKILL)
    assert len(libptt_words(b.pid, b.waiter_tid)) == 1
    b.wake()
    b.finish()


def test_attached_while_contended(tmp_path):
    """Attached and detached again and again while two threads contend for a mutex
    (tests/progs/attach_loop.c): the locks in progress at each attach are followed, and the
    program's counter stays right; each trace checks clean."""
    loop = Loop()
    loop.live.send("go")
    loop.live.value("going")
    for i in range(8):
        a = Attach(loop.pid, tmp_path / f"{i}.ptt")
        time.sleep(0.05)
        rc, err = a.end(signal.SIGKILL if i == 3 else signal.SIGINT)
        if i != 3:
            assert rc == 0, err
            c = run([PTT, "check", tmp_path / f"{i}.ptt"])
            assert c.returncode == 0, c.stdout + c.stderr
    loop.live.send("pause")
    loop.live.value("locks")
    assert loop.state() == loop.before
    loop.finish()
