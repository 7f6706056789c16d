"""Nothing of a session outlives it, whatever ends ptt trace (docs/security.md): killed by any
signal at any point of a run (right after its start, while the program records, while it is
idle), its pool leaves /dev/shm and its sockets the control directory, and the program runs on
untraced without waiting for it. What sessions killed together with their guardian left is
removed by the next ptt trace. (tests/progs/gap_flood.c, idle_sleep.c, flood.c, prodcons.c)"""

import glob
import os
import random
import resource
import signal
import subprocess
import time

import pytest

from conftest import PTT, TIMEOUT, prog, require_build
from robust_util import Live, wait_until
from test_readahead import sanitized

UID = os.getuid()


def private_env(tmp_path):
    """The environment of ptt trace: a control directory of the test's own."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTT_")}
    env["XDG_RUNTIME_DIR"] = str(run)
    return env, run / "ptt"


def leftovers(ptt_pid, ctl_dir, since=0):
    """What remains of the session of the ptt trace of pid ptt_pid: its pool (whatever its
    name's random part), its control socket and the socket where processes announce themselves.
    since: only what was made then or later (pids are reused soon: a session of an earlier
    process of that pid, of another test, may have left its own, which ptt trace removes at its
    start, if it gets so far)."""
    name = f"ptt-{UID}-{ptt_pid}"
    found = []
    for path in (glob.glob(f"/dev/shm/{name}") + glob.glob(f"/dev/shm/{name}-*") +
                 glob.glob(f"{ctl_dir}/{name}.*")):
        try:
            if os.lstat(path).st_mtime >= since:
                found.append(path)
        except FileNotFoundError:
            pass
    return sorted(found)


def group_alive(pgid):
    """Whether a process of group pgid (ptt trace's: the program and its threads' processes)
    runs yet; zombies do not count (nobody may reap an orphan here)."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def no_core():
    os.setsid()  # a group of its own, which the program inherits
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


SIGNALS = [signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGSEGV, signal.SIGXFSZ,
           signal.SIGABRT, signal.SIGHUP, signal.SIGQUIT, signal.SIGBUS, signal.SIGUSR1,
           signal.SIGALRM, signal.SIGPIPE]
PROGRAMS = [["idle_sleep", 300], ["flood", 2, 100000], ["prodcons", 2, 2, 20000, 4]]


def test_killed_anywhere_leaves_nothing(tmp_path):
    """100 runs, each ptt trace sent one signal (SIGKILL, or one it dies of, or one it passes on
    to the program) after a random delay, none included: once ptt trace and the program have
    ended, nothing of the session is left. 40 under the sanitizers, which need each path run,
    not the numbers (every signal 3 times at least; make check's plain pass runs the 100)."""
    require_build()
    env, ctl_dir = private_env(tmp_path)
    rng = random.Random(1234)
    with_pool, runs = 0, 40 if sanitized() else 100
    for k in range(runs):
        sig, argv = SIGNALS[k % len(SIGNALS)], PROGRAMS[k % len(PROGRAMS)]
        delay = 0 if k % 10 == 0 else rng.uniform(0, 0.2)
        cmd = [str(PTT), "trace", "-q", "--buffer=2M", "-o", str(tmp_path / f"t{k}.ptt"), "--",
               prog(argv[0])] + [str(a) for a in argv[1:]]
        t0 = time.time() - 0.5  # file times lag the clock by a tick
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                             preexec_fn=no_core)
        if sig in (signal.SIGSEGV, signal.SIGBUS) or k % 2:
            # The sanitizer build's runtime catches these, and deadlocks on one that comes
            # while it starts: counted from the pool's creation. So is every other delay: on a
            # loaded machine ptt trace may not have its pool 0.2 s after it was started.
            deadline = time.monotonic() + TIMEOUT
            while (not leftovers(p.pid, ctl_dir, t0) and p.poll() is None and
                   time.monotonic() < deadline):
                time.sleep(0.001)
        time.sleep(delay)
        with_pool += bool(leftovers(p.pid, ctl_dir, t0))
        p.send_signal(sig)
        p.wait(timeout=TIMEOUT)
        wait_until(lambda: not group_alive(p.pid), timeout=TIMEOUT, what="the program's end")
        # The guardian acts as ptt trace dies; the program may end first.
        deadline = time.monotonic() + 5
        while leftovers(p.pid, ctl_dir, t0) and time.monotonic() < deadline:
            time.sleep(0.01)
        left = leftovers(p.pid, ctl_dir, t0)
        for f in tmp_path.glob(f"t{k}.ptt*"):
            f.unlink()
        assert not left, f"run {k} ({' '.join(map(str, cmd[6:]))}), {sig.name} after {delay:.3f} s, " \
            f"ptt trace's status {p.returncode}: left {left}"
    print(f"{with_pool} of {runs} signals came while the session had its pool")
    # Many signals came while the session was under way, not before it had a pool or after it.
    assert with_pool >= runs * 3 // 10, with_pool


def test_program_runs_on_after_sigkill(tmp_path):
    """SIGKILL to ptt trace while the program records events into a small pool: the program
    runs on untraced (ends normally, and nothing of the session is left). Its writer notices
    the death (the guardian marks the pool abandoned; else a heartbeat still for 50 ms) instead
    of waiting out the 10 s after which a writer gives up on a pool: the longest pause between
    two iterations, as the program measures it, stays far below those 10 s. The bound is that
    far (5 s) so that a loaded machine's scheduling, which has paused it 0.6 s, does not count."""
    env, ctl_dir = private_env(tmp_path)
    n = 5_000_000
    live = Live([prog("gap_flood"), n], tmp_path / "t.ptt", opts=["--buffer=4M"], env=env)
    live.value("started")
    assert leftovers(live.pid, ctl_dir)
    live.p.kill()
    live.p.wait()
    gap = float(live.value("max_gap_ms"))
    assert live.value("done") == str(n)
    print(f"longest pause of the program after ptt trace's SIGKILL: {gap} ms")
    assert gap < 5000, f"the program paused {gap} ms"
    wait_until(lambda: not leftovers(live.pid, ctl_dir), timeout=5, what="the session's removal")


def test_stale_names_swept(tmp_path):
    """Names of sessions whose ptt trace no longer exists (killed with its guardian), in
    /dev/shm and the control directory, are removed by the next ptt trace of the user; those of
    a live process, and another user's form of name, are left alone."""
    env, ctl_dir = private_env(tmp_path)
    ctl_dir.mkdir(mode=0o700)
    child = subprocess.Popen(["true"])
    child.wait()
    dead, live = child.pid, os.getpid()  # a pid that no longer exists; one that does
    stale = [f"/dev/shm/ptt-{UID}-{dead}-0123456789abcdef", f"/dev/shm/ptt-{UID}-{dead}",
             f"{ctl_dir}/ptt-{UID}-{dead}.sock", f"{ctl_dir}/ptt-{UID}-{dead}.proc"]
    kept = [f"/dev/shm/ptt-{UID}-{live}-0123456789abcdef", f"{ctl_dir}/ptt-{UID}-{live}.sock",
            f"/dev/shm/ptt-{UID + 1}-{dead}-0123456789abcdef"]
    # Root's ptt trace -p gives its pool to the traced process's user: killed with its guardian,
    # it leaves a pool of root's name that user owns, which root's next ptt trace removes.
    given = [f"/dev/shm/ptt-{UID}-{dead}-fedcba9876543210"] if UID == 0 else []
    stale += given
    try:
        for path in stale + kept:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.close(fd)
        for path in given:
            os.chown(path, 12001, 12001)
        p = subprocess.run([str(PTT), "trace", "-q", "-o", str(tmp_path / "t.ptt"), "--",
                            prog("flood"), "1", "10"], env=env, capture_output=True, text=True,
                           timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
        assert [path for path in stale if os.path.exists(path)] == []
        assert [path for path in kept if os.path.exists(path)] == kept
    finally:
        for path in stale + kept:
            if os.path.exists(path):
                os.unlink(path)


def test_namespace_init(tmp_path):
    """ptt trace as the first process of a pid namespace (a container's, here unshare -p): the
    guardian and the witness are its children then, and the session still ends with the program
    and what it left (it never ended). The names of live sessions outside, in the /dev/shm and
    control directory it shares, are left alone: their pids do not exist in the namespace, and
    it removed their pools and sockets as stale."""
    if os.geteuid() != 0:
        pytest.skip("unshare -p needs root")
    env, ctl_dir = private_env(tmp_path)
    ctl_dir.mkdir(mode=0o700)
    live = os.getpid()  # alive here, not in the namespace
    kept = [f"/dev/shm/ptt-{UID}-{live}-0123456789abcdef", f"{ctl_dir}/ptt-{UID}-{live}.sock"]
    try:
        for path in kept:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        p = subprocess.run(["unshare", "-pf", "--mount-proc", str(PTT), "trace", "-q", "-o",
                            str(tmp_path / "t.ptt"), "--", "sh", "-c",
                            "(sleep 0.3; echo late) & exit 3"], env=env, capture_output=True,
                           text=True, timeout=TIMEOUT)
        assert (p.returncode, p.stdout) == (3, "late\n"), p.stderr
        assert [path for path in kept if os.path.exists(path)] == kept
    finally:
        for path in kept:
            if os.path.exists(path):
                os.unlink(path)
