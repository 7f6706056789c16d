"""ptt trace's output file (docs/trace.md, "Output file"): an existing one is kept as FILE.old,
--force overwrites it, a symbolic link planted by another user in a sticky world-writable
directory is refused, special files (/dev/null, a FIFO, /dev/stdout) are written as they are."""

import os
import stat
import struct
import subprocess
import threading

import pytest

from conftest import (ATTACKER, PTT, SUMMARY_RE, TIMEOUT, VICTIM, prog, require_build, run,
                      sticky_dir)


def info_command(path):
    """The command line an INFO record of the trace at path names."""
    p = run([PTT, "view", "--summary", path])
    assert p.returncode == 0, p.stderr
    return next(line.split(None, 1)[1] for line in p.stdout.splitlines()
                if line.startswith("command"))


def trace(out, *argv, opts=(), **kw):
    return run([PTT, "trace", "-q", "-o", out, *opts, "--", *argv], **kw)


def test_existing_kept_as_old(tmp_path):
    require_build()
    out = tmp_path / "t.ptt"
    assert trace(out, "true").returncode == 0
    first = out.read_bytes()
    p = trace(out, "echo", "second")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "t.ptt.old").read_bytes() == first
    assert info_command(out) == "echo second"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert sorted(f.name for f in tmp_path.iterdir()) == ["t.ptt", "t.ptt.old"]
    second = out.read_bytes()
    assert trace(out, "echo", "third").returncode == 0
    assert (tmp_path / "t.ptt.old").read_bytes() == second  # one generation kept
    assert info_command(out) == "echo third"


def test_existing_link_kept_as_old(tmp_path):
    """A link of one's own is moved to FILE.old (rename never follows it): its target stays."""
    require_build()
    target = tmp_path / "target.txt"
    target.write_text("precious\n")
    out = tmp_path / "t.ptt"
    out.symlink_to(target)
    assert trace(out, "true").returncode == 0
    assert target.read_text() == "precious\n"
    assert os.readlink(tmp_path / "t.ptt.old") == str(target)
    assert not out.is_symlink() and info_command(out) == "true"


def test_force_overwrites(tmp_path):
    require_build()
    out = tmp_path / "t.ptt"
    assert trace(out, "true").returncode == 0
    inode = out.stat().st_ino
    p = trace(out, "echo", "forced", opts=["--force"])
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "t.ptt.old").exists()
    assert out.stat().st_ino == inode  # the same file, overwritten
    assert info_command(out) == "echo forced"


def test_default_name_kept_as_old(tmp_path):
    """ptt.data in $PTT_DIR: the same rule, the previous one kept as ptt.data.old."""
    require_build()
    (tmp_path / "ptt.data").write_text("old\n")
    p = run([PTT, "trace", "-q", "--", "true"], env={**os.environ, "PTT_DIR": str(tmp_path)})
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "ptt.data.old").read_text() == "old\n"
    assert info_command(tmp_path / "ptt.data") == "true"


def test_special_files(tmp_path):
    require_build()
    p = trace("/dev/null", "true")
    assert p.returncode == 0, p.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and not os.path.exists("/dev/null.old")

    with open(tmp_path / "out.ptt", "wb") as f:  # /dev/stdout: the file the shell gave
        p = subprocess.run([str(PTT), "trace", "-q", "-o", "/dev/stdout", "--", "true"],
                           stdout=f, stderr=subprocess.PIPE, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    m = SUMMARY_RE.match(p.stderr.decode().splitlines()[-1])
    assert int(m[2]) == (tmp_path / "out.ptt").stat().st_size > 0
    assert info_command(tmp_path / "out.ptt") == "true"

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    p = trace(fifo, "true")
    reader.join(TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and not (tmp_path / "fifo.old").exists()
    (tmp_path / "copy.ptt").write_bytes(got[0])
    assert info_command(tmp_path / "copy.ptt") == "true"

    # A reader that goes away is a write error ptt trace reports, not a SIGPIPE that kills it;
    # the program runs to its end.
    def read_header():
        with open(fifo, "rb") as f:
            got.append(f.read(16))
    reader = threading.Thread(target=read_header)
    reader.start()
    p = run([PTT, "trace", "-q", "-o", fifo, "--", prog("flood"), 2, 20000])
    reader.join(TIMEOUT)
    magic, major, _minor, size = struct.unpack("<8sHHI", got[-1])
    assert (magic, major, size) == (b"PTTRACE\0", 2, 16)  # the file header, whatever the minor
    assert p.returncode == 125, p.stderr
    assert p.stdout == "done=40000\n"
    errors = [line for line in p.stderr.splitlines() if line.startswith("ptt trace: ")]
    assert len(errors) == 1 and errors[0].startswith(f"ptt trace: cannot write {fifo}: Broken pipe")
    m = SUMMARY_RE.match(p.stderr.splitlines()[-1])
    assert m and int(m[5]) > 0 and m[6] == "0"


@pytest.fixture
def sticky():
    with sticky_dir("ptt-sticky-", "runs ptt trace as two other users") as dirs:
        yield dirs


def as_uid(uid, *cmd, cwd=None):
    return run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *cmd],
               cwd=cwd)


@pytest.mark.parametrize("force", [False, True])
def test_planted_link_refused(sticky, force):
    base, shared, victim_file = sticky
    link = os.path.join(shared, "x")
    p = as_uid(ATTACKER, "ln", "-s", victim_file, link)
    assert p.returncode == 0, p.stderr
    opts = ["--force"] if force else []
    p = as_uid(VICTIM, PTT, "trace", "-o", link, *opts, "--", "true", cwd=base)
    assert p.returncode == 125, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ptt trace: refusing to write through {link}")
    assert "symbolic link" in lines[0] and f"uid {ATTACKER}" in lines[0]
    with open(victim_file) as f:
        assert f.read() == "precious\n"
    assert os.readlink(link) == victim_file and os.lstat(link).st_uid == ATTACKER
    assert sorted(os.listdir(shared)) == ["x"]


def test_planted_fifo_refused(sticky, tmp_path):
    """Another user's FIFO at -o would read the session (or, with no reader, stop it in its open):
    ptt trace and a reader's -o refuse it at once, in one line, whether anyone reads it or not;
    the victim's own FIFO there is written."""
    base, shared, _victim_file = sticky
    fifo = os.path.join(shared, "x")
    assert as_uid(ATTACKER, "mkfifo", "-m", "666", fifo).returncode == 0
    trace_file = os.path.join(shared, "t.ptt")
    p = as_uid(VICTIM, PTT, "trace", "-q", "-o", trace_file, "--", "true", cwd=shared)
    assert p.returncode == 0, p.stderr
    for cmd in (["trace", "-o", fifo, "--", "true"], ["view", "-o", fifo, trace_file]):
        p = as_uid(VICTIM, PTT, *cmd, cwd=shared)  # nobody reads: a blocking open would hang
        assert p.returncode == (125 if cmd[0] == "trace" else 2), (cmd, p.stderr)
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            f"ptt {cmd[0]}: refusing to write through {fifo}: a special file of uid "
            f"{ATTACKER}"), lines
    mine = os.path.join(shared, "mine")
    assert as_uid(VICTIM, "mkfifo", mine).returncode == 0
    got = []
    reader = threading.Thread(target=lambda: got.append(open(mine, "rb").read()))
    reader.start()
    p = as_uid(VICTIM, PTT, "view", "-o", mine, trace_file, cwd=shared)
    reader.join(TIMEOUT)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert got and b"starts process" in got[0]


def test_own_link_followed_in_sticky_dir(sticky):
    """The victim's own link in the same directory is followed with --force (the kernel's rule:
    the link's owner is the user)."""
    base, shared, victim_file = sticky
    link = os.path.join(shared, "mine")
    p = as_uid(VICTIM, "ln", "-s", victim_file, link)
    assert p.returncode == 0, p.stderr
    p = as_uid(VICTIM, PTT, "trace", "-q", "-o", link, "--force", "--", "true", cwd=base)
    assert p.returncode == 0, p.stderr
    assert os.readlink(link) == victim_file
    with open(victim_file, "rb") as f:
        assert f.read(8) == b"PTTRACE\0"
