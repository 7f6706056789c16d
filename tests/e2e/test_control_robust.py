"""Live control never hurts the session it controls: a client that closes early does not kill
ptt trace (SIGPIPE); clients that send nothing, or half a line, do not hold up the session loop that drains
the pool (another client is served while they are connected; the program, writing events into a
small pool, prints its own longest gap: tests/progs/gap_work.c) and are dropped after their 2 s; one that does not read its reply is answered all the same; more
than 8 at once are refused at once; ptt ctl works meanwhile. ptt ctl talks to no stranger: a
control directory taken by another user is named with its owner and not used; another user's
session is refused by name and unreachable; a socket of another user's server in our directory
is not spoken to. The tests with two users need root."""

import contextlib
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import PTT, SOURCE, TIMEOUT, parse_output, prog, summary_counts
from robust_util import Live, ctl, ctl_ok, status_fields

CLIENTS = 8  # the clients a session serves at once (src/session/control.h)
# How long a session waits for a client's request, at most (PTT_CTL_CLIENT_NS), in seconds.
CLIENT_S = int(re.search(r"#define PTT_CTL_CLIENT_NS (\d+)ull", (
    SOURCE / "src" / "session" / "control.h").read_text())[1]) / 1e9


def sock_path(session):
    """As src/session/control.c: the runtime directory if it is ours and others cannot write it."""
    run = os.environ.get("XDG_RUNTIME_DIR")
    try:
        st = os.stat(run) if run else None
    except OSError:
        st = None
    ok = st and stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o22
    d = f"{run}/ptt" if ok else f"/tmp/ptt-{os.getuid()}"
    return f"{d}/{session}.sock"


def connect(session):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path(session))  # blocking: it waits for room in the backlog
    s.settimeout(TIMEOUT)
    return s


def read_all(s):
    """Everything the session sends until it closes the connection."""
    data = b""
    while chunk := s.recv(4096):
        data += chunk
    return data


def test_early_close_does_not_kill(tmp_path):
    """Clients that send a request and close at once: the reply meets a closed socket."""
    live = Live([prog("phases"), 1, 0], tmp_path / "t.ptt", opts=["--start-stopped"])
    session = live.wait_session()
    for _ in range(20):
        s = connect(session)
        s.sendall(b"status\n")
        s.close()
    st = status_fields(ctl_ok(session, "status"))
    assert st["session"] == session and st["recording"] == "off"
    live.send("go")
    live.finish(0)
    assert parse_output("\n".join(live.out))[0] == {"phase": "1"}


def test_slow_clients_do_not_stall(tmp_path):
    live = Live([prog("gap_work"), 6000, 5], tmp_path / "t.ptt", opts=["--buffer=1M"])
    session = live.wait_session()
    live.wait_line("@started=1")
    t0 = time.monotonic()
    slow = [connect(session) for _ in range(3)]
    half = connect(session)
    half.sendall(b"sta")
    slow.append(half)
    mute = connect(session)  # reads nothing for now, with the smallest receive buffer
    mute.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
    mute.sendall(b"status\n")
    # another client is served meanwhile, while the silent ones are still connected: the
    # session loop, which drains the pool, never waits for a client (the base served one client
    # at a time, waiting a second for each silent one, and drained nothing meanwhile). A loop
    # that waited out the 4 silent clients one after the other would take 4 time limits; a
    # loaded machine may take more than one to start ptt ctl and answer.
    t1 = time.monotonic()
    st = status_fields(ctl_ok(session, "status"))
    assert time.monotonic() - t1 < 3 * CLIENT_S
    assert st["session"] == session and st["recording"] == "on"
    for s in slow:
        s.setblocking(False)
        try:
            got = s.recv(1, socket.MSG_PEEK)
        except BlockingIOError:  # not closed, nothing to read
            got = None
        # closed only if the client's time limit was up before this look (a loaded machine)
        assert got is None or (got == b"" and time.monotonic() - t0 >= CLIENT_S), got
        s.settimeout(TIMEOUT)
    for s in slow:  # dropped at their time limit, unanswered
        assert read_all(s) == b""
        s.close()
    assert status_fields(read_all(mute).decode())["session"] == session
    mute.close()
    # a full table: the excess clients are refused at once, ptt ctl too, until slots free up
    full = [connect(session) for _ in range(CLIENTS)]
    refusal = f"error: the session serves {CLIENTS} clients at once already; try again\n"
    extra = [connect(session) for _ in range(2)]
    for s in extra:
        assert read_all(s).decode() == refusal
        s.close()
    p = ctl(session, "status")
    assert p.returncode == 2 and p.stderr == f"ptt ctl: {refusal[7:]}", p.stderr
    for s in full:
        assert read_all(s) == b""
        s.close()
    assert status_fields(ctl_ok(session, "status"))["session"] == session
    _events, _bytes, lost = live.finish(0)
    assert lost == 0
    out = parse_output("\n".join(live.out))
    assert out[0] == {"done": "1"}
    gap = float(out[1]["max_gap_ms"])
    # Reported, not asserted (a loaded machine stretches any gap): 18.6 ms here against 928.9 ms
    # before the clients were served without blocking.
    print(f"gap_work: longest gap {gap} ms over {out[1]['iterations']} iterations")


# Two users: uids without a passwd entry, unlike those of other tests, so that no other test's
# session meets the directories these tests plant.
VICTIM, ATTACKER = 12031, 12032


def as_user(uid, *cmd):
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--",
            *[str(c) for c in cmd]]


def clean_env():
    """No runtime directory (the control directory is then /tmp/ptt-UID), no HOME, nothing of
    ptt's."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_RUNTIME_DIR", "HOME", "LD_PRELOAD") and not k.startswith("PTT_")}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    return env


def run_as(uid, *cmd):
    return subprocess.run(as_user(uid, *cmd), capture_output=True, text=True, timeout=TIMEOUT,
                          env=clean_env())


def remove(path):
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


@pytest.fixture
def shared():
    """bin/ptt, lib/libptt.so and the programs, readable by all; traces/ mode 1777."""
    if os.geteuid() != 0:
        pytest.skip("needs root: runs ptt as two other users (setpriv)")
    if not shutil.which("setpriv"):
        pytest.skip("needs setpriv")
    d = Path(tempfile.mkdtemp(prefix="ptt-ctl-users-"))
    try:
        d.chmod(0o755)
        for sub in ("bin", "lib"):
            (d / sub).mkdir(mode=0o755)
        (d / "traces").mkdir()
        (d / "traces").chmod(0o1777)
        shutil.copy(PTT, d / "bin" / "ptt")
        shutil.copy(PTT.parent.parent / "lib" / "libptt.so", d / "lib" / "libptt.so")
        for name in ("idle_sleep", "phases"):
            shutil.copy(prog(name), d / "bin" / name)
        yield d
    finally:
        shutil.rmtree(d)


@pytest.mark.parametrize("kind", ["directory", "symbolic link"])
def test_taken_control_directory(shared, kind):
    """The attacker made /tmp/ptt-VICTIM first: a directory of its own open to all, or a
    symbolic link to one. The victim's program runs traced all the same, ptt trace says in one
    line that it runs without live control and why; nothing of the victim's lands in the
    attacker's directory; ptt ctl refuses with the same reason."""
    ctl_dir, target = f"/tmp/ptt-{VICTIM}", shared / "traces" / "attacker"
    remove(ctl_dir)
    try:
        assert run_as(ATTACKER, "mkdir", "-m", "0777", target).returncode == 0
        os.chmod(target, 0o777)  # whatever the umask
        if kind == "directory":
            assert run_as(ATTACKER, "mkdir", "-m", "0777", ctl_dir).returncode == 0
            os.chmod(ctl_dir, 0o777)
        else:
            assert run_as(ATTACKER, "ln", "-s", target, ctl_dir).returncode == 0
        why = f"{ctl_dir} is a {kind} owned by uid {ATTACKER}, not a directory of this user " \
              f"(uid {VICTIM}): not used"
        out = shared / "traces" / "victim.ptt"
        p = run_as(VICTIM, shared / "bin" / "ptt", "trace", "-o", out, "--",
                   shared / "bin" / "idle_sleep", 10)
        assert p.returncode == 0 and p.stdout == "slept=10\n", p
        err = p.stderr.splitlines()
        assert len(err) == 3 and err[1].startswith(f"ptt: session ptt-{VICTIM}-") and \
            err[2].startswith("ptt: wrote "), p.stderr
        assert err[0] == f"ptt trace: no live control: {why}"
        assert summary_counts(out)[1]["exit"] == "0"
        for d in (ctl_dir, target):
            assert os.listdir(d) == []
        for args in (["list"], [f"ptt-{VICTIM}-1", "status"]):
            p = run_as(VICTIM, shared / "bin" / "ptt", "ctl", *args)
            assert p.returncode == 2 and p.stdout == "" and p.stderr == f"ptt ctl: {why}\n", p
    finally:
        remove(ctl_dir)


def test_stranger_refused(shared):
    """The victim's session: the attacker cannot connect to its socket (the victim's 0700
    directory), and its ptt ctl refuses the session by name; root reaching the socket gets the
    session's refusal. A socket root plants in the victim's directory is not spoken to."""
    ctl_dir = f"/tmp/ptt-{VICTIM}"
    remove(ctl_dir)
    ptt = shared / "bin" / "ptt"
    live = Live([shared / "bin" / "phases", 1, 0], shared / "traces" / "v.ptt",
                opts=["--start-stopped"], env=clean_env(), tool=as_user(VICTIM, ptt, "trace"))
    planted = None
    try:
        session = live.wait_session()
        assert session == f"ptt-{VICTIM}-{live.pid}"
        path = f"{ctl_dir}/{session}.sock"
        p = run_as(ATTACKER, sys.executable, "-c", "import socket; socket.socket(socket.AF_UNIX)"
                   f".connect('{path}')")
        assert p.returncode != 0 and "PermissionError" in p.stderr, p.stderr
        p = run_as(ATTACKER, ptt, "ctl", session, "status")
        assert p.returncode == 2 and p.stdout == "" and p.stderr == \
            f"ptt ctl: session '{session}' belongs to uid {VICTIM}, not to this user " \
            f"(uid {ATTACKER}): refused\n", p
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(TIMEOUT)
            s.connect(path)
            assert read_all(s) == b"error: this session belongs to another user\n"
        p = run_as(VICTIM, ptt, "ctl", session, "status")
        assert p.returncode == 0 and status_fields(p.stdout)["session"] == session, p

        # root's server in the victim's own directory, open to all, that would answer anything
        fake = f"ptt-{VICTIM}-1"
        planted = socket.socket(socket.AF_UNIX)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{ctl_dir}/{fake}.sock")
        planted.bind(f"{ctl_dir}/{fake}.sock")
        os.chmod(f"{ctl_dir}/{fake}.sock", 0o666)
        planted.listen(4)
        heard = []

        def serve():
            planted.settimeout(TIMEOUT)
            with contextlib.suppress(OSError):
                c, _ = planted.accept()
                with c:
                    c.settimeout(5)
                    with contextlib.suppress(OSError):
                        heard.append(c.recv(100))
                    c.sendall(b"session forged\n")

        th = threading.Thread(target=serve, daemon=True)
        th.start()
        p = run_as(VICTIM, ptt, "ctl", fake, "status")
        th.join(TIMEOUT)
        assert p.returncode == 2 and p.stdout == "" and p.stderr.startswith(
            f"ptt ctl: session '{fake}' is served by uid 0 (pid {os.getpid()}), not by this "
            "user: refused"), p
        assert heard in ([], [b""])  # no request was sent
        live.send("go")
        live.finish(0)
    finally:
        live.kill()
        if planted:
            planted.close()
        remove(ctl_dir)
