"""ptt trace -p PID (docs/attach.md) on a C++ program, on a JVM, and refused by Yama.

C++ (tests/progs/attach_cxx.cc, built when CMake finds a C++ compiler): std::threads contending
on std::mutex through std::lock_guard, and taking turns through a std::condition_variable,
count their own calls per phase; attached for one phase of a second, the trace holds exactly
each thread's calls of that phase, named as in a traced start as far as an attach can: objects
and call sites by the program's names and lines (the lines of libstdc++'s headers as detail), a
thread started while attached by the function it runs; the threads that were there before the
attach by their names then (the program's name, numbered), where a start under ptt trace names
every thread after what it runs (checked too, with the same sites and objects).

JVM (tests/progs/AttachJvm.java, compiled with javac at test time; skipped without javac): Java
monitors and java.util.concurrent locks are pthread mutexes and condition variables inside the
JVM; attached for a second, the trace holds them from the Java threads, by their names; the JVM
finishes normally with its result; ptt check and ptt stat read the trace.

Yama: with kernel.yama.ptrace_scope = 1 (Debian's default), as root, a user's ptt trace -p of
its own process that is not its child gets the one line and 125, and the process runs on
untouched. The line for each scope and user is checked everywhere root may make a mount
namespace: /proc/sys/kernel/yama/ptrace_scope is then a file of the test's (a tmpfs over
/proc/sys/kernel, in ptt trace's namespace only) and ptt trace's ptrace calls fail with EPERM (a
seccomp filter), as Yama's refusal would. A real scope 3 cannot be undone until the next boot:
that test runs only when PTT_TEST_YAMA3=1 is set in the environment, and sets it."""

import collections
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import PROGS, PTT, SOURCE, prog, run, summary_counts
from robust_util import Live
from test_attach import Attach, Loop, ptrace_permitted

YAMA = "/proc/sys/kernel/yama/ptrace_scope"
AS_USER = ["setpriv", "--reuid=12001", "--regid=12001", "--clear-groups"]


@pytest.fixture(scope="module", autouse=True)
def need_ptrace():
    why = ptrace_permitted()
    if why:
        pytest.skip(f"ptrace is not permitted here ({why}): ptt trace -p cannot attach")


def site_lines(src):
    """{KEY: line} of the comments "site:KEY" of a program of tests/progs."""
    return {key: no for no, text in
            enumerate((SOURCE / "tests" / "progs" / src).read_text().splitlines(), 1)
            for key in re.findall(r"/\* site:(\w+) \*/", text)}


def end_program(live):
    """Tells the program to quit: its ok line, then its exit status 0."""
    live.send("quit")
    assert live.value("ok") == "1"
    live.p.stdin.close()
    assert live.p.wait(timeout=60) == 0


# --- C++ ---------------------------------------------------------------------------------------

CXX = "attach_cxx.cc"
WORKERS = 4  # two count_worker, then two Player::run (attach_cxx.cc)
SPAWN_LOCKS = 1000
KINDS = {"MUTEX_LOCK_IN": "locks", "COND_WAIT_IN": "waits", "COND_SIGNAL_IN": "notifies",
         "COND_BROADCAST_IN": "notifies"}


def cxx_phase(live, seconds):
    """The workers run for that long: {worker: {"locks": N, "waits": N, "notifies": N}}."""
    live.send("go")
    live.value("going")
    time.sleep(seconds)
    live.send("pause")
    return {i: {k: int(live.value(f"{k}_{i}")) for k in ("locks", "waits", "notifies")}
            for i in range(WORKERS)}


def cxx_expected_site(event, worker):
    """The site:KEY of the program's line of a call of a worker (None: the spawned one)."""
    if worker is None:
        return "tally_lock"
    if worker < 2:
        return "count_lock"
    return {"MUTEX_LOCK_IN": "turn_lock", "COND_WAIT_IN": "turn_wait",
            "COND_SIGNAL_IN": "turn_notify", "COND_BROADCAST_IN": "end_notify"}[event]


def cxx_start(live):
    """The program's tids: ({tid: worker}, pid), once it is ready."""
    pid = int(live.value("pid"))
    worker_of = {int(live.value(f"tid_{i}")): i for i in range(WORKERS)}
    live.value("ready")
    return worker_of, pid


def cxx_spawn(live):
    live.send("spawn")
    spawned = int(live.value("tid_spawned"))
    assert live.value("spawned") == str(SPAWN_LOCKS)
    return spawned


def cxx_calls(path, worker_of, spawned):
    """Each thread's lock, wait and notify calls in the trace, and its name; every call at the
    program's line for it, on its object by name."""
    lines = site_lines(CXX)
    objects = {"count_lock": "counter_lock", "tally_lock": "counter_lock",
               "turn_lock": "table.m", "turn_wait": "table.cv", "turn_notify": "table.cv",
               "end_notify": "table.cv"}
    got = collections.defaultdict(collections.Counter)
    names = {}
    p = subprocess.Popen([str(PTT), "view", "--format=json", "--event=" + ",".join(KINDS),
                          str(path)], stdout=subprocess.PIPE, text=True)
    for line in p.stdout:
        e = json.loads(line)
        tid = e["tid"]
        assert tid in worker_of or tid == spawned, e  # main makes no such call
        names.setdefault(tid, e["thread"])
        assert e["thread"] == names[tid], e
        key = cxx_expected_site(e["event"], worker_of.get(tid))
        assert e["names"]["site"] == f"{CXX}:{lines[key]}", e
        obj = e["names"]["mutex" if e["event"] == "MUTEX_LOCK_IN" else "cond"]
        assert obj == objects[key], e
        if e["event"] == "MUTEX_LOCK_IN":  # inlined from libstdc++'s gthr-default.h
            assert re.fullmatch(r"gthr-default\.h:\d+", e["names"]["site_detail"]), e
        got[tid][KINDS[e["event"]]] += 1
    assert p.wait() == 0
    return got, names


def check_cxx_counts(got, made, worker_of, spawned):
    """Each thread's calls, exactly as it counted them."""
    assert {tid: dict(got[tid]) for tid in worker_of} == {
        tid: {k: v for k, v in made[i].items() if v} for tid, i in worker_of.items()}
    assert dict(got[spawned]) == {"locks": SPAWN_LOCKS}


need_cxx = pytest.mark.skipif(not (PROGS / "attach_cxx").exists(),
                              reason="no C++ compiler: attach_cxx was not built")


@need_cxx
def test_cxx(tmp_path):
    live = Live([], tool=[prog("attach_cxx")])
    worker_of, pid = cxx_start(live)
    cxx_phase(live, 0.2)  # before the attach: not recorded
    a = Attach(pid, tmp_path / "t.ptt")
    made = cxx_phase(live, 0.3)
    spawned = cxx_spawn(live)
    rc, err = a.end()
    assert rc == 0, err
    assert f"ptt: detached from process {pid}" in err
    cxx_phase(live, 0.2)  # after the detach: not recorded either
    end_program(live)

    got, names = cxx_calls(tmp_path / "t.ptt", worker_of, spawned)
    check_cxx_counts(got, made, worker_of, spawned)
    # Started while attached: named after what it runs, as in a traced start; there before: by
    # their names then (the program's, numbered), the main thread as main.
    assert names[spawned] == "Tally::run"
    assert sorted(names[t] for t in worker_of) == [
        "attach_cxx", "attach_cxx#2", "attach_cxx#3", "attach_cxx#4"]
    counts, _head = summary_counts(tmp_path / "t.ptt")
    assert counts["THREAD_ATTACHED"] == 1 + WORKERS
    assert [counts[n] for n in ("THREAD_CREATE_IN", "THREAD_START", "THREAD_JOIN_IN")] == [1] * 3
    total = sum(m["locks"] for m in made.values()) + SPAWN_LOCKS
    assert (counts["MUTEX_LOCK_IN"], counts["MUTEX_UNLOCK_IN"]) == (total, total)
    c = run([PTT, "check", tmp_path / "t.ptt"])
    assert c.returncode == 0 and "nothing found" in c.stdout, c.stdout + c.stderr


@need_cxx
def test_cxx_traced_start(tmp_path):
    """The same program traced from its start: the same sites and objects (cxx_calls), and
    every thread named after what it runs, which an attach can give only to the threads it sees
    start."""
    live = Live([prog("attach_cxx")], tmp_path / "s.ptt", opts=["-q"])
    worker_of, _pid = cxx_start(live)
    made = cxx_phase(live, 0.3)
    spawned = cxx_spawn(live)
    live.send("quit")
    assert live.value("ok") == "1"
    live.finish(0)
    got, names = cxx_calls(tmp_path / "s.ptt", worker_of, spawned)
    check_cxx_counts(got, made, worker_of, spawned)
    assert names[spawned] == "Tally::run"
    assert sorted(names[t] for t in worker_of) == [
        "Player::run", "Player::run#2", "count_worker", "count_worker#2"]


# --- JVM ---------------------------------------------------------------------------------------

JAVA_THREADS = {"player-0", "player-1", "counter-0", "counter-1"}


@pytest.fixture(scope="module")
def jvm_classes(tmp_path_factory):
    if not shutil.which("javac") or not shutil.which("java"):
        pytest.skip("no javac: the JVM test needs a JDK (default-jdk-headless)")
    d = tmp_path_factory.mktemp("jvm")
    p = run(["javac", "-d", d, SOURCE / "tests" / "progs" / "AttachJvm.java"], timeout=180)
    assert p.returncode == 0, p.stderr
    return d


def test_jvm(tmp_path, jvm_classes):
    live = Live([], tool=["java", "-cp", jvm_classes, "AttachJvm"])
    pid = int(live.value("pid"))
    live.value("ready")
    path = tmp_path / "jvm.ptt"
    a = Attach(pid, path)
    time.sleep(1)
    rc, err = a.end()
    assert rc == 0, err
    assert f"ptt: detached from process {pid}" in err
    end_program(live)

    counts, _ = summary_counts(path)
    assert counts["PROCESS_START"] == 1
    assert counts["THREAD_ATTACHED"] >= 1 + len(JAVA_THREADS)  # and the JVM's own threads
    for name in ("MUTEX_LOCK_IN", "COND_WAIT_IN", "COND_SIGNAL_IN"):
        assert counts[name] > 0, name
    # The Java threads' monitors and parking, by the names the JVM gave their native threads.
    p = run([PTT, "view", "--format=json", "--event=MUTEX_LOCK_IN,COND_WAIT_IN", path])
    assert p.returncode == 0, p.stderr
    assert JAVA_THREADS <= set(re.findall(r'"thread":"([^"]*)"', p.stdout))
    c = run([PTT, "check", path])
    assert c.returncode in (0, 1), c.stderr  # docs/check.md: 0 nothing found, 1 findings
    assert re.match(rf"{re.escape(str(path))}: \d+ events, ", c.stdout), c.stdout
    s = run([PTT, "stat", "--format=json", path])
    assert s.returncode == 0 and s.stderr == "", s.stderr
    assert JAVA_THREADS <= {t["name"] for t in json.loads(s.stdout)["threads"]}


# --- Yama --------------------------------------------------------------------------------------

SCOPE_1_LINE = ("ptrace is forbidden by Yama (kernel.yama.ptrace_scope >= 1: run as root, or set "
                "it to 0)")
SCOPE_3_LINE = ("ptrace is disabled by Yama (kernel.yama.ptrace_scope = 3): no process can be "
                "attached to until the next boot; run the program under ptt trace -- PROGRAM")
NOT_PERMITTED_LINE = ("ptrace is not permitted (another user's process, a setuid program, or no "
                      "CAP_SYS_PTRACE here)")


@pytest.fixture
def user_dir():
    """A directory user 12001 can reach and write (pytest's tmp_path is under a 0700 one)."""
    with tempfile.TemporaryDirectory(prefix="ptt-attach-", dir="/tmp") as d:
        os.chmod(d, 0o777)
        yield Path(d)


def refused(pid, why):
    return [f"ptt trace: cannot attach to process {pid}: {why}"]


def untouched(loop):
    """The refused target: as before, no libptt mapped, and it runs on."""
    assert loop.state() == loop.before
    with open(f"/proc/{loop.pid}/maps") as f:
        assert "libptt" not in f.read()
    assert loop.phase(0.2) > 0
    loop.finish()


def read_scope():
    try:
        with open(YAMA) as f:
            return int(f.read())
    except OSError:
        return None


@pytest.mark.skipif(read_scope() != 1 or os.getuid() != 0 or not shutil.which("setpriv"),
                    reason="needs kernel.yama.ptrace_scope = 1, root and setpriv")
def test_yama_scope_1(user_dir):
    """A user's ptt trace -p of its own process, not its child (the test started both)."""
    loop = Loop(AS_USER)
    p = run([*AS_USER, PTT, "trace", "-p", loop.pid, "-o", user_dir / "t.ptt"],
            env={**os.environ, "PTT_DIR": str(user_dir)})
    assert (p.returncode, p.stderr.splitlines()) == (125, refused(loop.pid, SCOPE_1_LINE))
    assert not (user_dir / "t.ptt").exists()
    untouched(loop)


@pytest.mark.skipif(os.environ.get("PTT_TEST_YAMA3") != "1" or os.getuid() != 0 or
                    read_scope() is None,
                    reason="sets kernel.yama.ptrace_scope = 3, which only a reboot undoes: "
                    "runs as root with PTT_TEST_YAMA3=1 only")
def test_yama_scope_3(tmp_path):
    """Not even root may attach: the one line, and the process runs on untouched."""
    with open(YAMA, "w") as f:
        f.write("3\n")
    loop = Loop()
    p = run([PTT, "trace", "-p", loop.pid, "-o", tmp_path / "t.ptt"])
    untouched(loop)
    assert (p.returncode, p.stderr.splitlines()) == (125, refused(loop.pid, SCOPE_3_LINE))
    assert not (tmp_path / "t.ptt").exists()


# A seccomp filter: ptrace fails with EPERM, every other system call is allowed.
_BPF = [(0x20, 0, 0, 4),  # A = seccomp_data.arch
        (0x15, 1, 0, 0xC000003E),  # AUDIT_ARCH_X86_64: go on
        (0x06, 0, 0, 0x7FFF0000),  # another architecture: allow
        (0x20, 0, 0, 0),  # A = seccomp_data.nr
        (0x15, 0, 1, 101),  # __NR_ptrace
        (0x06, 0, 0, 0x00050000 | 1),  # SECCOMP_RET_ERRNO | EPERM
        (0x06, 0, 0, 0x7FFF0000)]  # SECCOMP_RET_ALLOW


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint)]


class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


def yama_as(scope, uid):
    """A preexec function: in a mount namespace of its own, the Yama file reads scope (None:
    there is none); the process runs as uid; its ptrace calls fail with EPERM."""
    libc = ctypes.CDLL(None, use_errno=True)
    filters = (_Filter * len(_BPF))(*_BPF)
    fprog = _Prog(len(_BPF), filters)

    def setup():
        if libc.unshare(0x00020000):  # CLONE_NEWNS
            os._exit(120)
        if libc.mount(b"none", b"/", None, 16384 | (1 << 18), None):  # MS_REC | MS_PRIVATE
            os._exit(121)
        if libc.mount(b"tmpfs", b"/proc/sys/kernel", b"tmpfs", 0, b"mode=0755"):
            os._exit(122)
        if scope is not None:  # None: no Yama
            os.mkdir("/proc/sys/kernel/yama")
            with open(YAMA, "w") as f:
                f.write(f"{scope}\n")
        if uid:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0):
            os._exit(123)  # PR_SET_NO_NEW_PRIVS; PR_SET_SECCOMP, SECCOMP_MODE_FILTER

    return setup


def no_leaks():
    """ASAN_OPTIONS without LeakSanitizer (a sanitized build): its check at exit stops the
    process's threads with ptrace, which yama_as's filter refuses."""
    return ":".join(o for o in (os.environ.get("ASAN_OPTIONS", ""), "detect_leaks=0") if o)


def mount_namespace_possible():
    if os.getuid() != 0 or not shutil.which("setpriv"):
        return False
    p = subprocess.run(["true"], preexec_fn=yama_as(1, 0))
    return p.returncode == 0


# (scope, ptt trace's user) -> the line.
YAMA_LINES = [(None, 0, NOT_PERMITTED_LINE), (0, 12001, NOT_PERMITTED_LINE),
              (1, 12001, SCOPE_1_LINE), (2, 12001, SCOPE_1_LINE), (1, 0, NOT_PERMITTED_LINE),
              (3, 12001, SCOPE_3_LINE), (3, 0, SCOPE_3_LINE)]


@pytest.mark.skipif(not mount_namespace_possible(),
                    reason="needs root, setpriv and a mount namespace of its own")
@pytest.mark.parametrize("scope,uid,why", YAMA_LINES, ids=[
    "no-yama-root", "0-user", "1-user", "2-user", "1-root", "3-user", "3-root"])
def test_refusal_lines(user_dir, scope, uid, why):
    """The line ptt trace gives when ptrace refuses, by Yama's scope (None: no Yama) and user."""
    loop = Loop(AS_USER if uid else ())
    p = subprocess.run([str(PTT), "trace", "-p", str(loop.pid), "-o", str(user_dir / "t.ptt")],
                       capture_output=True, text=True, timeout=60, preexec_fn=yama_as(scope, uid),
                       env={**os.environ, "PTT_DIR": str(user_dir), "ASAN_OPTIONS": no_leaks()})
    untouched(loop)
    assert (p.returncode, p.stderr.splitlines()) == (125, refused(loop.pid, why))
    assert not (user_dir / "t.ptt").exists()
