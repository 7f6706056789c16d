"""Two concurrent sessions of two users (root and ptttest, created if missing): each session's
trace file, pool and control directory belong to its user alone; the other user can neither
read them nor list or control the session; both traces are complete. Needs root (CI runs as
root); the binaries are copied where the other user can run them."""

import collections
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import PTT, prog, summary_counts
from robust_util import Live, ctl, session_pools, status_fields

USER = "ptttest"
PHASES, K = 2, 3


@pytest.fixture(scope="module")
def other_user():
    if os.geteuid() != 0:
        pytest.skip("needs root: it creates a user and runs a session as that user")
    try:
        pw = pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", USER], check=True,
                       capture_output=True)
        pw = pwd.getpwnam(USER)
    return pw


@pytest.fixture
def shared():
    """A directory both users use: bin/ptt, lib/libptt.so and bin/phases (copies, readable by
    all), traces/ (mode 1777, as /tmp)."""
    d = Path(tempfile.mkdtemp(prefix="ptt-users-"))
    try:
        d.chmod(0o755)
        (d / "bin").mkdir(mode=0o755)
        (d / "lib").mkdir(mode=0o755)
        (d / "traces").mkdir()
        (d / "traces").chmod(0o1777)
        shutil.copy(PTT, d / "bin" / "ptt")
        shutil.copy(PTT.parent.parent / "lib" / "libptt.so", d / "lib" / "libptt.so")
        shutil.copy(prog("phases"), d / "bin" / "phases")
        yield d
    finally:
        shutil.rmtree(d)


def clean_env():
    """The environment of both users' commands: no runtime directory (the control directory is
    then /tmp/ptt-UID), nothing of ptt's."""
    env = {k: v for k, v in os.environ.items()
           if k != "XDG_RUNTIME_DIR" and not k.startswith("PTT_") and k != "LD_PRELOAD"}
    env["HOME"] = "/"
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    return env


def as_user(pw, *cmd):
    return ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups", "--",
            *[str(c) for c in cmd]]


def run_as(pw, *cmd):
    return subprocess.run(as_user(pw, *cmd), capture_output=True, text=True, timeout=60,
                          env=clean_env())


def check_private(path, uid, mode):
    st = os.lstat(path)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (uid, mode), f"{path}: uid {st.st_uid}, " \
        f"mode {oct(stat.S_IMODE(st.st_mode))}"


def expected_counts():
    """Every event of phases PHASES K with everything recorded."""
    c = collections.Counter({"PROCESS_START": 1, "PROCESS_EXIT": 1, "SEM_INIT_IN": 1,
                             "SEM_INIT_OUT": 1})
    for name in ("THREAD_CREATE_IN", "THREAD_CREATE_OUT", "THREAD_START", "THREAD_END",
                 "THREAD_JOIN_IN", "THREAD_JOIN_OUT"):
        c[name] = 1
    for name in ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT"):
        c[name] = 2 * PHASES
    c["MUTEX_WAIT"] = c["MUTEX_ACQUIRED"] = PHASES
    for name in ("COND_SIGNAL_IN", "COND_SIGNAL_OUT", "SEM_POST_IN", "SEM_POST_OUT"):
        c[name] = K * PHASES
    return c


def test_two_users(other_user, shared):
    pw, env = other_user, clean_env()
    ptt, phases = shared / "bin" / "ptt", shared / "bin" / "phases"
    mine, theirs = shared / "traces" / "root.ptt", shared / "traces" / "user.ptt"
    assert run_as(pw, ptt, "ctl", "list").returncode == 0  # the user can run ptt from there
    root = Live([phases, PHASES, K], mine, env=env, tool=[ptt, "trace"])
    user = Live([phases, PHASES, K], theirs, env=env, tool=as_user(pw, ptt, "trace"))
    try:
        rs, us = root.wait_session(), user.wait_session()
        root.value("pid")
        user.value("pid")
        assert rs == f"ptt-0-{root.pid}" and us == f"ptt-{pw.pw_uid}-{user.pid}"

        check_private(mine, 0, 0o600)
        check_private(theirs, pw.pw_uid, 0o600)
        (rpool,), (upool,) = session_pools(rs), session_pools(us)
        check_private(rpool, 0, 0o600)
        check_private(upool, pw.pw_uid, 0o600)
        check_private("/tmp/ptt-0", 0, 0o700)
        check_private(f"/tmp/ptt-{pw.pw_uid}", pw.pw_uid, 0o700)

        # The user can read neither root's file nor root's pool, nor reach its socket.
        for path in (mine, rpool):
            p = run_as(pw, "cat", path)
            assert p.returncode != 0 and "Permission denied" in p.stderr, (path, p.stderr)
        p = run_as(pw, sys.executable, "-c", "import socket; socket.socket(socket.AF_UNIX)"
                   f".connect('/tmp/ptt-0/{rs}.sock')")
        assert p.returncode != 0 and "PermissionError" in p.stderr, p.stderr

        # Each lists its own session only, and controls only its own.
        p = run_as(pw, ptt, "ctl", "list")
        assert p.returncode == 0 and p.stdout.splitlines() == [us], p
        listed = ctl("list", env=env).stdout.splitlines()
        assert rs in listed and us not in listed
        for target in (rs, root.pid):
            p = run_as(pw, ptt, "ctl", target, "status")
            assert p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1, p
            p = run_as(pw, ptt, "ctl", target, "stop")
            assert p.returncode == 2, p
        p = run_as(pw, ptt, "ctl", us, "status")
        assert p.returncode == 0 and status_fields(p.stdout)["session"] == us
        # root reaching the user's socket all the same is refused by the session itself, which
        # answers at once, before any request (sending one would only race with its close)
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(30)
            s.connect(f"/tmp/ptt-{pw.pw_uid}/{us}.sock")
            reply = b""
            while chunk := s.recv(4096):
                reply += chunk
        assert reply == b"error: this session belongs to another user\n"
        assert status_fields(run_as(pw, ptt, "ctl", us, "status").stdout)["recording"] == "on"
        assert status_fields(ctl(rs, "status", env=env).stdout)["recording"] == "on"

        for n in range(1, PHASES + 1):
            for live in (root, user):
                live.send("go")
                live.wait_line(f"phase={n}")
        root.finish(0)
        user.finish(0)
    finally:
        root.kill()
        user.kill()
    for path in (mine, theirs):
        counts, head = summary_counts(path)
        assert head["exit"] == "0" and head["lost"] == "0"
        assert counts == expected_counts(), path
    check_private(theirs, pw.pw_uid, 0o600)
    assert not session_pools(rs) and not session_pools(us)
