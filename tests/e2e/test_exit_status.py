"""ptt trace's exit statuses (docs/trace.md, "Exit status"), in the style of timeout(1) and
env(1): the program's own when the trace is whole, 125 when ptt trace itself failed, 126 and
127 when the program cannot run. The program keeps the signal dispositions it would have had
without ptt trace."""

import os
import resource
import signal
import subprocess

import pytest

from conftest import PTT, SUMMARY_RE, TIMEOUT, prog, require_build, run


@pytest.mark.parametrize("args", [
    ["--bogus", "--", "true"],
    ["--buffer=lots", "--", "true"],
    ["--kill-on-hang", "--", "true"],
    [],
    ["-o", "nodir/t.ptt", "--", "true"],
])
def test_own_failure(tmp_path, args):
    require_build()
    if args[:1] != ["-o"]:
        args = ["-o", "t.ptt", *args]
    p = run([PTT, "trace", *args], cwd=tmp_path)
    assert p.returncode == 125, p.stderr
    assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("ptt trace: ")
    assert not (tmp_path / "t.ptt").exists()
    # A program's own 2 or 125 stays its own; the summary line tells them apart from ptt
    # trace's failures (it has no "not written" part).
    for status in (2, 125):
        p = run([PTT, "trace", "-q", "-o", "t.ptt", "--force", "--", "sh", "-c", f"exit {status}"],
                cwd=tmp_path)
        assert p.returncode == status, p.stderr
        m = SUMMARY_RE.match(p.stderr.splitlines()[-1])
        assert m and m[5] is None


def shm_names(pid):
    """This session's shared memory objects (a pool is /ptt-UID-PID)."""
    return [n for n in os.listdir("/dev/shm") if n == f"ptt-{os.getuid()}-{pid}"
            or n.startswith(f"ptt-{os.getuid()}-{pid}.")]


def test_pool_over_file_size_limit(tmp_path):
    """A file-size limit below the pool: one line naming the limit and what helps, exit 125,
    no SIGXFSZ death, nothing left in /dev/shm."""
    require_build()
    limit = 512 << 10

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    p = subprocess.Popen([str(PTT), "trace", "--buffer=2M", "-o", "t.ptt", "--", "true"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=small_files)
    out, err = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 125, (p.returncode, err)
    assert len(err.splitlines()) == 1, err
    assert "ulimit -f" in err and str(limit) in err and "--buffer=SIZE" in err
    assert shm_names(p.pid) == []
    assert not (tmp_path / "t.ptt").exists()


@pytest.mark.parametrize("inherit_ignored", [False, True])
def test_program_keeps_dispositions(tmp_path, inherit_ignored):
    """ptt trace ignores SIGXFSZ (and SIGPIPE) for itself, and survives a file-size limit its
    trace goes over; the program sees the dispositions it would have had without ptt trace:
    the default ones, or those inherited (Python ignores SIGPIPE and SIGXFSZ, and hands that
    on with restore_signals=False)."""
    require_build()
    limit = 2 << 20

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    script = f'grep "^SigIgn:" /proc/$$/status; exec "{prog("flood")}" 2 100000'
    kw = dict(capture_output=True, text=True, timeout=TIMEOUT, preexec_fn=small_files,
              restore_signals=not inherit_ignored, cwd=tmp_path)
    plain = subprocess.run(["sh", "-c", script], **kw)
    traced = subprocess.run([str(PTT), "trace", "-q", "--buffer=1M", "-o", "t.ptt", "--", "sh",
                             "-c", script], **kw)
    assert plain.returncode == 0
    assert traced.returncode == 125, (traced.returncode, traced.stderr)
    assert traced.stdout == plain.stdout
    ign = int(traced.stdout.split()[1], 16)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        assert bool(ign & (1 << (sig - 1))) == inherit_ignored
    assert (tmp_path / "t.ptt").stat().st_size <= limit
