"""ptt trace -p PID (docs/attach.md): attached to a running lock loop (tests/progs/attach_loop.c,
which counts its own lock calls between a "go" and a "pause"), the trace holds exactly the calls
made while attached, with their call sites; after the detach (Ctrl-C, ptt ctl stop, --duration)
the program runs on as before: same threads, descriptors, no pool mapped, the right result. Also
twice in a row, ptt trace killed while attached, the program ending while attached, and refusals
that leave the target untouched."""

import ctypes
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import PTT, SUMMARY_RE, parse_raw, prog, run, summary_counts
from robust_util import Live, ctl_ok
from test_readahead import sanitized

ATTACHED_RE = re.compile(r"^ptt: session (ptt-\d+-\d+) attached to process (\d+), records into")
CALLS = ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT")


def ptrace_permitted():
    """Whether this process may ptrace a child of its own (PTRACE_SEIZE, then detach)."""
    libc = ctypes.CDLL(None, use_errno=True)
    child = subprocess.Popen(["sleep", "30"])
    try:
        if libc.ptrace(0x4206, child.pid, None, None) != 0:  # PTRACE_SEIZE
            return os.strerror(ctypes.get_errno())
        libc.ptrace(17, child.pid, None, None)  # PTRACE_DETACH
        return None
    finally:
        child.kill()
        child.wait()


@pytest.fixture(scope="module", autouse=True)
def need_ptrace():
    why = ptrace_permitted()
    if why:
        pytest.skip(f"ptrace is not permitted here ({why}): ptt trace -p cannot attach")


SANITIZED = sanitized()


class Loop:
    """attach_loop running in the background, driven by its commands."""

    def __init__(self, prefix=()):
        self.live = Live([], tool=[*prefix, prog("attach_loop")])
        self.pid = int(self.live.value("pid"))
        self.live.value("ready")
        time.sleep(0.05)
        self.before = self.state()

    def phase(self, seconds):
        """The workers run for that long (a third of it under the sanitizers, whose ptt reads the
        millions of events of a phase ten times slower); the lock calls they made."""
        self.live.send("go")
        self.live.value("going")
        time.sleep(seconds / 3 if SANITIZED else seconds)
        self.live.send("pause")
        return int(self.live.value("locks"))

    def state(self):
        """What must be as before after a detach: threads, descriptors, no pool mapped."""
        fds = sorted(os.readlink(f"/proc/{self.pid}/fd/{f}") for f in os.listdir(f"/proc/{self.pid}/fd"))
        tasks = len(os.listdir(f"/proc/{self.pid}/task"))
        with open(f"/proc/{self.pid}/maps") as f:
            pools = [line for line in f if "/dev/shm/" in line or "ptt-" in line.split("/")[-1]]
        return fds, tasks, pools

    def finish(self):
        self.live.send("quit")
        total = int(self.live.value("total"))
        assert self.live.value("ok") == "1"
        self.live.p.stdin.close()
        assert self.live.p.wait(timeout=60) == 0
        return total


class Attach:
    """ptt trace -p PID running in the background."""

    def __init__(self, pid, path, opts=()):
        self.path = path
        self.p = subprocess.Popen([str(PTT), "trace", "-p", str(pid), "-o", str(path), *opts],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.p.stderr.readline()
        m = ATTACHED_RE.match(line)
        assert m, f"ptt trace -p: {line}{self.p.stderr.read() if self.p.poll() is not None else ''}"
        assert int(m[2]) == pid
        self.session = m[1]

    def end(self, how=signal.SIGINT):
        if how is not None:
            self.p.send_signal(how)
        out, err = self.p.communicate(timeout=60)
        return self.p.returncode, err


def first_lines(path, lines):
    """The first lines of ptt view's sentences for the lock and unlock calls (a trace of millions
    of events is not read whole)."""
    p = subprocess.Popen([str(PTT), "view", "--event=MUTEX_LOCK_IN,MUTEX_UNLOCK_IN", str(path)],
                         stdout=subprocess.PIPE, text=True)
    text = "".join(p.stdout.readline() for _ in range(lines))
    p.kill()
    p.wait()
    return text


def sites(path):
    """The call sites of the first lock and unlock calls of the trace."""
    return set(re.findall(r"at (attach_loop\.c:\d+)\.", first_lines(path, 200)))


def check_trace(path, n):
    """Exactly the n lock calls made while attached, named by their sites in attach_loop.c; the
    summary gives no exit status of the process, which ptt trace did not start."""
    counts, head = summary_counts(path)
    assert head["exit"] == "none: ptt trace attached to the process (-p); it detached, or the " \
        "process ended", head
    # The process ran before: its start is said as the attach it is (INFO attached=yes).
    (start,) = run([PTT, "view", "--event=PROCESS_START", path]).stdout.splitlines()
    assert re.search(r"\) was running when ptt trace attached to it \(-p; parent \d+\)\.$",
                     start), start
    assert {name: counts[name] for name in CALLS} == {name: n for name in CALLS}
    assert counts["PROCESS_START"] == 1
    assert counts["THREAD_ATTACHED"] == 3  # main and the two workers, as they were at attach
    assert len(sites(path)) == 2  # the lock and the unlock of the loop, by their lines
    threads = set(re.findall(r"Thread (\S+) \(\d+\) enters", first_lines(path, 400)))
    assert threads <= {"attach_loop", "attach_loop#2"} and threads, threads


def test_attach_record_detach(tmp_path):
    loop = Loop()
    loop.phase(0.2)
    a = Attach(loop.pid, tmp_path / "t.ptt")
    n = loop.phase(0.3)
    loop.live.send("handler")
    assert loop.live.value("handled") == "1"
    rc, err = a.end()
    assert rc == 0, err
    assert f"ptt: detached from process {loop.pid}" in err
    assert loop.state() == loop.before
    loop.live.send("query")  # the handler installed while attached, found as installed
    assert loop.live.value("handler_ours") == "1"
    assert loop.phase(0.2) > 0
    loop.finish()
    check_trace(tmp_path / "t.ptt", n)
    counts, _head = summary_counts(tmp_path / "t.ptt")
    assert (counts["SIGNAL_DELIVERED"], counts["SIGNAL_HANDLED"]) == (1, 1)  # libptt wrapped it
    # ptt check: what the program did before the attach (objects made, locks taken) is not in
    # the trace, which one line says; the rules that need it are off.
    p = run([PTT, "check", tmp_path / "t.ptt"])
    assert (p.returncode, p.stderr) == (0, (
        f"ptt check: {tmp_path / 't.ptt'} was recorded from an attach (ptt trace -p): what the "
        "program did before is not in it, and the rules that need every event are off (unlocks "
        "of locks not held, uses of objects never initialised or destroyed, locks held when a "
        "thread or process ends, condvar waits without their mutex)\n")), p.stdout


def test_attach_twice(tmp_path):
    """Detached by ptt ctl stop, then by --duration; each trace holds its own phase's calls."""
    loop = Loop()
    a = Attach(loop.pid, tmp_path / "1.ptt")
    n1 = loop.phase(0.3)
    assert ctl_ok(a.session, "stop").startswith("ok: detaching")
    rc, err = a.end(None)
    assert rc == 0, err
    assert loop.state() == loop.before
    b = Attach(loop.pid, tmp_path / "2.ptt", ["--duration=30"])
    n2 = loop.phase(0.3)
    b.p.send_signal(signal.SIGTERM)
    rc, err = b.end(None)
    assert rc == 0, err
    assert loop.state() == loop.before
    loop.phase(0.2)
    loop.finish()
    check_trace(tmp_path / "1.ptt", n1)
    check_trace(tmp_path / "2.ptt", n2)


def test_duration(tmp_path):
    loop = Loop()
    a = Attach(loop.pid, tmp_path / "t.ptt", ["--duration=0.5"])
    rc, err = a.end(None)  # ends by itself
    assert rc == 0, err
    assert loop.state() == loop.before
    loop.finish()


def test_killed_while_attached(tmp_path):
    """ptt trace killed: the program runs on, with the right result; the next ptt trace -p takes
    the killed one's libptt out first, and records exactly its own phase."""
    loop = Loop()
    a = Attach(loop.pid, tmp_path / "t.ptt")
    loop.phase(0.3)
    a.end(signal.SIGKILL)
    loop.phase(0.5)
    b = Attach(loop.pid, tmp_path / "again.ptt")
    n = loop.phase(0.3)
    rc, err = b.end()
    assert rc == 0, err
    assert loop.state() == loop.before
    loop.phase(0.2)
    loop.finish()
    check_trace(tmp_path / "again.ptt", n)


def sleeps_in(pid, nr):
    """Whether thread pid sleeps inside system call number nr."""
    with open(f"/proc/{pid}/syscall") as f:
        return status_of(pid, "State")[0] == "S" and f.read().split()[0] == str(nr)


def main_waits_inside_dlopen(loop, tracer):
    """Wait until ptt trace -p (pid tracer) has the program's main thread wait inside the dlopen
    it made it call: for the dynamic linker's lock, in futex (202)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if status_of(loop.pid, "TracerPid") == str(tracer) and sleeps_in(loop.pid, 202):
            return
        time.sleep(0.01)
    pytest.fail("ptt trace -p never had the program wait inside dlopen")


def test_killed_inside_a_call(tmp_path):
    """ptt trace -p killed (SIGKILL) while the thread it made call dlopen waits inside it, for the
    dynamic linker's lock another thread holds (a library's constructor that waits for a file):
    the call returns through the signal frame ptt trace left below it, and the thread goes on as
    it was:
    in a read system call, made again, with its vector registers as they were (all of ymm0, a
    pattern the program checks). It returned to address 0 and died of SIGSEGV before; with a
    frame of the SSE state only, ymm0's upper half came back zeroed. The program runs on, loads
    its library, and a second ptt trace -p records as usual."""
    gate = tmp_path / "gate"
    loop = Loop(prefix=("env", f"SLOWINIT_GATE={gate}"))
    loop.live.send("slowload")
    assert loop.live.value("ctor") == "1"
    loop.live.send("vecread")
    deadline = time.monotonic() + 20
    while not sleeps_in(loop.pid, 0):  # read
        assert time.monotonic() < deadline, "main never read"
        time.sleep(0.01)
    p = subprocess.Popen([str(PTT), "trace", "-p", str(loop.pid), "-o", str(tmp_path / "t.ptt")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    main_waits_inside_dlopen(loop, p.pid)
    time.sleep(0.2)
    p.kill()
    _out, err = p.communicate(timeout=60)
    assert "attached" not in err, "killed after the calls, not inside one"
    gate.touch()  # the constructor ends, the dlopen goes on
    assert loop.live.value("slowloaded") == "1"
    loop.live.send("x")
    vec = loop.live.value("vecread")
    if vec == "-1":
        pytest.skip("no AVX here")
    assert vec == "1", "ymm0 changed"
    assert loop.live.p.poll() is None, "the program died"
    assert loop.phase(0.1) > 0
    b = Attach(loop.pid, tmp_path / "again.ptt")
    n = loop.phase(0.3)
    rc, err = b.end()
    assert rc == 0, err
    loop.phase(0.1)
    loop.finish()
    check_trace(tmp_path / "again.ptt", n)


def test_seccomp_filtered(tmp_path):
    """A program under a seccomp filter that refuses unknown system calls, -1 among them (as
    container runtimes' do): its calls end as without frames (at address 0), since ending one at
    rt_sigreturn's entry skips that system call as number -1, which the filter would answer
    with EPERM in the thread's rax (its read of commands then failed). Recorded as usual."""
    loop = Loop()
    loop.live.send("seccomp")
    assert loop.live.value("seccomp") == "1"
    a = Attach(loop.pid, tmp_path / "t.ptt")
    n = loop.phase(0.3)
    rc, err = a.end()
    assert rc == 0, err
    loop.finish()
    check_trace(tmp_path / "t.ptt", n)


def test_library_not_loadable(tmp_path):
    """A libptt the program's dlopen refuses (not an ELF file, beside a copy of ptt): ptt trace -p
    says why, as dlerror gave it (that call returns to address 0: its rax is the message), and
    leaves the program as it was."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib").mkdir()
    shutil.copy(PTT, tmp_path / "bin" / "ptt")
    lib = tmp_path / "lib" / "libptt.so"
    lib.write_text("not an ELF file\n" * 100)
    loop = Loop()
    p = run([tmp_path / "bin" / "ptt", "trace", "-p", loop.pid, "-o", tmp_path / "t.ptt"])
    assert (p.returncode, p.stderr) == (
        125, f"ptt trace: process {loop.pid} could not load {lib}: {lib}: invalid ELF header\n")
    assert loop.state() == loop.before
    assert status_of(loop.pid, "TracerPid") == "0"
    assert loop.phase(0.1) > 0
    loop.finish()


def test_signal_inside_a_call(tmp_path):
    """A signal handled by the program while the thread ptt trace -p made call dlopen waits
    inside it: the handler returns through the C library's rt_sigreturn, as the call will, but
    with its own frame; ptt trace waits for the call's, and the attach records as usual."""
    gate = tmp_path / "gate"
    loop = Loop(prefix=("env", f"SLOWINIT_GATE={gate}"))
    loop.live.send("handler")
    assert loop.live.value("handled") == "1"
    loop.live.send("slowload")
    assert loop.live.value("ctor") == "1"
    a = subprocess.Popen([str(PTT), "trace", "-p", str(loop.pid), "-o", str(tmp_path / "t.ptt")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    main_waits_inside_dlopen(loop, a.pid)
    for _ in range(3):
        os.kill(loop.pid, signal.SIGUSR1)
        time.sleep(0.05)
    gate.touch()
    line = a.stderr.readline()
    assert ATTACHED_RE.match(line), line + (a.stderr.read() if a.poll() is not None else "")
    assert loop.live.value("slowloaded") == "1"
    n = loop.phase(0.3)
    a.send_signal(signal.SIGINT)
    _out, err = a.communicate(timeout=60)
    assert a.returncode == 0, err
    loop.live.send("handler")  # raises it once more: 1 before, 3 sent during the call
    assert 3 <= int(loop.live.value("handled")) <= 5  # two sent close together may make one
    loop.finish()
    counts, _head = summary_counts(tmp_path / "t.ptt")
    assert {name: counts[name] for name in CALLS} == {name: n for name in CALLS}
    # main, the workers, and the loading thread if it had not ended when libptt started
    assert counts["THREAD_ATTACHED"] in (3, 4)


def status_of(pid, key):
    with open(f"/proc/{pid}/status") as f:
        return next(line.split()[1] for line in f if line.startswith(key + ":"))


def kill_outside_calls(a, target):
    """SIGKILL ptt trace -p at a moment it runs no call in the target (a kill within one is
    test_killed_inside_a_call's; docs/attach.md leaves a few microseconds at a call's end open):
    stopped first, then killed if the target has no tracer, else let go on a little and tried
    again."""
    while True:
        a.p.send_signal(signal.SIGSTOP)
        while status_of(a.p.pid, "State")[0] != "T":
            time.sleep(0.0002)
        if status_of(target, "TracerPid") == "0":
            return a.end(signal.SIGKILL)
        a.p.send_signal(signal.SIGCONT)
        time.sleep(0.001)


def test_killed_while_detaching(tmp_path):
    """ptt trace killed within its detach, after libptt stopped and before the pool's release
    (it drains for 50 ms in between): the next ptt trace -p releases it first, as it takes out
    the libptt of one killed while attached. Killed at five points of the detach."""
    loop = Loop()
    for i, delay in enumerate((0.005, 0.015, 0.025, 0.035, 0.045)):
        a = Attach(loop.pid, tmp_path / f"k{i}.ptt")
        loop.phase(0.1)
        a.p.send_signal(signal.SIGINT)
        time.sleep(delay)
        kill_outside_calls(a, loop.pid)
        b = Attach(loop.pid, tmp_path / f"again{i}.ptt")
        n = loop.phase(0.1)
        rc, err = b.end()
        assert rc == 0, err
        assert loop.state() == loop.before
        check_trace(tmp_path / f"again{i}.ptt", n)
    loop.finish()


def test_already_traced(tmp_path):
    """A program that ptt trace started already: refused, its own session goes on."""
    live = Live([prog("attach_loop")], tmp_path / "pre.ptt", opts=["-q"])
    pid = int(live.value("pid"))
    live.value("ready")
    p = run([PTT, "trace", "-p", pid, "-o", tmp_path / "t.ptt"])
    assert (p.returncode, p.stderr) == (
        125, f"ptt trace: libptt could not start in process {pid} (traced by ptt trace "
        "already?)\n")
    assert not (tmp_path / "t.ptt").exists()
    live.send("go")
    live.value("going")
    live.send("pause")
    n = int(live.value("locks"))
    live.send("quit")
    assert live.value("ok") == "1"
    live.finish(0)
    counts, _head = summary_counts(tmp_path / "pre.ptt")
    assert counts["MUTEX_LOCK_IN"] == n


def test_program_ends_while_attached(tmp_path):
    loop = Loop()
    a = Attach(loop.pid, tmp_path / "t.ptt")
    n = loop.phase(0.3)
    loop.finish()
    rc, err = a.end(None)
    assert rc == 0, err
    # Said and recorded, with its status (its parent reaped it): before, neither.
    assert f"ptt: process {loop.pid} ended while attached (exited with status 0)\n" in err, err
    check_trace(tmp_path / "t.ptt", n)
    (end,) = parse_raw(run([PTT, "view", "--format=raw", "--event=PROCESS_EXIT",
                            tmp_path / "t.ptt"]).stdout)
    assert (end.pid, end.fields) == (loop.pid, ("exit=0",))


def test_exec_while_attached(tmp_path):
    """The process executes another program: the detach finds nothing of libptt to take out, and
    the trace holds what came before."""
    loop = Loop()
    a = Attach(loop.pid, tmp_path / "t.ptt")
    n = loop.phase(0.3)
    loop.live.send("exec")
    loop.live.value("exec")
    time.sleep(0.3)
    rc, err = a.end()
    assert rc == 0, err
    assert f"ptt: detached from process {loop.pid}" in err
    assert loop.live.p.wait(timeout=60) == 0
    check_trace(tmp_path / "t.ptt", n)


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run ptt trace as another user")
def test_other_user_refused(tmp_path):
    loop = Loop()
    os.chmod(tmp_path, 0o777)
    p = run(["setpriv", "--reuid=12001", "--regid=12001", "--clear-groups", PTT, "trace", "-p",
             loop.pid, "-o", tmp_path / "t.ptt"], env={**os.environ, "PTT_DIR": str(tmp_path)})
    assert p.returncode == 125
    assert p.stderr.splitlines() == [
        f"ptt trace: process {loop.pid} belongs to another user (uid 0): ptt trace -p attaches to "
        "your own processes (any, as root)"]
    assert not (tmp_path / "t.ptt").exists()
    assert loop.state() == loop.before
    with open(f"/proc/{loop.pid}/maps") as f:
        assert "libptt" not in f.read()
    loop.phase(0.2)
    loop.finish()


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run the program as another user")
def test_root_attaches_other_user(tmp_path):
    """As root, another user's process: the pool is given to that user, the rest as usual."""
    loop = Loop(["setpriv", "--reuid=12001", "--regid=12001", "--clear-groups"])
    a = Attach(loop.pid, tmp_path / "t.ptt")
    n = loop.phase(0.3)
    assert ctl_ok(a.session, "detach").startswith("ok: detaching")
    rc, err = a.end(None)
    assert rc == 0, err
    assert loop.state() == loop.before
    loop.finish()
    check_trace(tmp_path / "t.ptt", n)


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run the program as another user")
def test_root_attaches_other_user_stopped(tmp_path):
    """As root, another user's process, attached with --start-stopped, recording switched on
    while its threads lock and unlock at full speed: no thread waits for a free sub-buffer. The
    process cannot signal root's ptt trace nor its guardian, whose pool reserved step by step,
    and drain asleep for 100 ms while idle, left the threads waiting (3 of 3 runs, 41 to 335 ms
    in all); the pool is now reserved whole and the drain never sleeps longer than when busy.
    The pool holds the whole second (about 200 MB here): with the default 64 MiB, a drain slowed
    by the tests running beside it made them wait too (14 and 66 ms in 2 of 3 runs of make
    check on a slower machine), which a pool reserved step by step would do whatever its size."""
    loop = Loop(["setpriv", "--reuid=12001", "--regid=12001", "--clear-groups"])
    a = Attach(loop.pid, tmp_path / "t.ptt", ["--start-stopped", "--buffer=256M"])
    loop.live.send("go")
    loop.live.value("going")
    time.sleep(0.3)  # the drain idle, asleep
    assert ctl_ok(a.session, "start").startswith("ok: recording on")
    time.sleep(1)
    loop.live.send("pause")
    loop.live.value("locks")
    assert ctl_ok(a.session, "detach").startswith("ok: detaching")
    rc, err = a.end(None)
    assert rc == 0, err
    assert "for a free sub-buffer" not in err, err
    assert loop.state() == loop.before
    loop.finish()


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run the program as another user")
def test_root_second_attach_refused(tmp_path):
    """As root, another user's process, attached: a second ptt trace -p is refused, the first
    session goes on and records every call. (The process cannot signal root's ptt trace: it
    took that for a dead session's, stopped it and attached the second.)"""
    loop = Loop(["setpriv", "--reuid=12001", "--regid=12001", "--clear-groups"])
    a = Attach(loop.pid, tmp_path / "t.ptt")
    p = run([PTT, "trace", "-p", loop.pid, "-o", tmp_path / "second.ptt"])
    assert (p.returncode, p.stderr) == (
        125, f"ptt trace: libptt could not start in process {loop.pid} (traced by ptt trace "
        "already?)\n")
    n = loop.phase(0.3)
    assert ctl_ok(a.session, "detach").startswith("ok: detaching")
    rc, err = a.end(None)
    assert rc == 0, err
    assert loop.state() == loop.before
    loop.finish()
    check_trace(tmp_path / "t.ptt", n)


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run the program as another user")
@pytest.mark.parametrize("size", [0, 4096])
def test_root_pool_shrunk_by_its_user(tmp_path, size):
    """As root, another user's process: that user, who owns the pool then, shrinks it while the
    workers record. ptt trace and its guardian do not die of the pages gone (SIGBUS): the session
    ends in one line, exit status 125, the trace holds what was drained, nothing is left in
    /dev/shm nor in the control directory."""
    loop = Loop(["setpriv", "--reuid=12001", "--regid=12001", "--clear-groups"])
    a = Attach(loop.pid, tmp_path / "t.ptt")
    pool = f"/dev/shm/{a.session}-"
    loop.live.send("go")
    loop.live.value("going")
    time.sleep(0.2)
    (name,) = [f for f in os.listdir("/dev/shm") if f"/dev/shm/{f}".startswith(pool)]
    cut = run(["setpriv", "--reuid=12001", "--regid=12001", "--clear-groups", "truncate",
               f"--size={size}", f"/dev/shm/{name}"])
    assert cut.returncode == 0, cut.stderr
    rc, err = a.end(None)
    lines = err.splitlines()
    assert rc == 125 and lines[0] == (
        f"ptt trace: the pool was shrunk by the user of process {loop.pid}, to whom ptt trace -p "
        "gave it: the session ends, the process keeps libptt loaded"), err
    assert SUMMARY_RE.match(lines[-1]) and len(lines) == 2, err
    assert run([PTT, "view", "--summary", tmp_path / "t.ptt"]).returncode == 0
    assert not [f for f in os.listdir("/dev/shm") if f"/dev/shm/{f}".startswith(pool)]
    ctl = f"/tmp/ptt-{os.getuid()}"
    assert not [f for f in (os.listdir(ctl) if os.path.isdir(ctl) else []) if
                f.startswith(a.session + ".")]
    loop.live.p.kill()  # its own user's cut: its next write into the pool faults
    loop.live.p.wait(timeout=60)


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run the program as another user")
def test_root_sigbus_sent_is_not_a_cut(tmp_path):
    """A SIGBUS sent to ptt trace -p (kill), not a fault in the pool: it does what it does to
    any program, ptt trace dies of it; the program goes on (test_root_attaches_other_user)."""
    loop = Loop(["setpriv", "--reuid=12001", "--regid=12001", "--clear-groups"])
    a = Attach(loop.pid, tmp_path / "t.ptt")
    a.p.send_signal(signal.SIGBUS)
    rc, err = a.end(None)
    assert rc == -signal.SIGBUS, err
    assert loop.phase(0.1) > 0
    loop.finish()


def test_bad_requests(tmp_path):
    p = run([PTT, "trace", "-p", "999999999", "-o", tmp_path / "t.ptt"])
    assert (p.returncode, p.stderr) == (125, "ptt trace: no process 999999999\n")
    dead = subprocess.Popen(["true"])
    dead.wait()
    p = run([PTT, "trace", "-p", dead.pid, "-o", tmp_path / "t.ptt"])
    assert (p.returncode, p.stderr) == (125, f"ptt trace: no process {dead.pid}\n")
    p = run([PTT, "trace", "--duration=1", "-o", tmp_path / "t.ptt", "--", "true"])
    assert p.returncode == 125 and "--duration needs -p PID" in p.stderr
    p = run([PTT, "trace", "-p", "1", "-o", tmp_path / "t.ptt", "--", "true"])
    assert p.returncode == 125 and "give no PROGRAM" in p.stderr
    assert not (tmp_path / "t.ptt").exists()


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run the program as another user")
def test_pool_header_rewritten_by_target(tmp_path):
    """Attached as root to another user's process, the pool is that user's: a program that
    rewrites its header (the layout out of range, every ready bit set) cannot make ptt trace
    read or write outside the pool (docs/security.md). ptt trace drains on and ends normally,
    whatever becomes of the program that broke its own pool."""
    p = subprocess.Popen(["setpriv", "--reuid=12001", "--regid=12001", "--clear-groups",
                          str(prog("pool_tamper")), "300000"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline().split()[1])
    a = Attach(pid, tmp_path / "t.ptt")
    p.stdin.write("go\n")
    p.stdin.flush()
    assert p.stdout.readline() == "tampered\n"
    p.wait(timeout=60)
    rc, err = a.end(None)
    assert rc == 0, err
    assert "Sanitizer" not in err and "runtime error" not in err, err
