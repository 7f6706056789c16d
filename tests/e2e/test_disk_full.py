"""A trace cut short by a write error (docs/trace.md, "When the file cannot be written"): the
file-size limit (EFBIG) or a full file system (ENOSPC). One line at once on stderr, the program
runs on, the file stays readable up to its last whole record, the summary and the END record
give the events really in the file and those not written, exit status 125."""

import os
import resource
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import PTT, SUMMARY_RE, TIMEOUT, prog, require_build, run

ITERATIONS = 100000  # flood 2 100000: 800000 events, about 15 MB of trace


def traced_flood(out, cwd, preexec_fn=None):
    cmd = [PTT, "trace", "--buffer=1M", "-o", out, "--", prog("flood"), 2, ITERATIONS]
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, preexec_fn=preexec_fn)


def check_cut_short(p, out, cause, remedy):
    assert p.returncode == 125, (p.returncode, p.stderr)
    assert p.stdout == f"done={2 * ITERATIONS}\n"  # the program ran to its end
    errors = [line for line in p.stderr.splitlines() if line.startswith("ptt trace: ")]
    assert len(errors) == 1, p.stderr
    assert errors[0].startswith(f"ptt trace: cannot write {out}: {cause}; it keeps its first ")
    assert remedy in errors[0]
    m = SUMMARY_RE.match(p.stderr.splitlines()[-1])
    assert m, p.stderr
    written, nbytes, lost, unwritten, status = int(m[1]), int(m[2]), int(m[4]), int(m[5]), m[6]
    assert status == "0"
    assert f"it keeps its first {written} events," in errors[0]
    assert 0 < written and unwritten > 0
    assert out.stat().st_size == nbytes
    # Readable to its end: no truncated record; the events it holds are those the summary says
    # (the reader closes the calls the cut left open with events of its own).
    v = run([PTT, "view", "--format=raw", "--event=!TRACE_UNFINISHED", out])
    assert v.returncode == 0 and v.stderr == "", v.stderr
    assert len(v.stdout.splitlines()) == written
    s = run([PTT, "view", "--summary", out])
    head = dict(line.split(None, 1) for line in s.stdout.splitlines()[:12] if " " in line)
    if "exit:" in head:  # the END record, when it still fitted: the true figures
        assert head["exit:"] == "125" and int(head["lost:"]) == lost + unwritten
    return written


def test_file_size_limit(tmp_path):
    require_build()
    limit = 2 << 20

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out = tmp_path / "t.ptt"
    p = traced_flood(out, tmp_path, small_files)
    check_cut_short(p, out, "File too large", f"the file-size limit (ulimit -f) is {limit} bytes")
    assert out.stat().st_size <= limit


def test_file_system_full():
    require_build()
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs")
    d = tempfile.mkdtemp(prefix="ptt-full-")
    try:
        m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", d],
                           capture_output=True, text=True, timeout=TIMEOUT)
        if m.returncode:
            pytest.skip(f"cannot mount a tmpfs: {m.stderr.strip()}")
        try:
            out = Path(d) / "t.ptt"
            p = traced_flood(out, d)
            check_cut_short(p, out, "No space left on device", "free some space")
            assert out.stat().st_size <= 256 << 10
        finally:
            subprocess.run(["umount", d], timeout=TIMEOUT)
    finally:
        shutil.rmtree(d, ignore_errors=True)

