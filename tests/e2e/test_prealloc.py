"""The trace file's blocks reserved ahead on ext4 (docs/trace.md, "Output file"): while the
session writes, the file has blocks beyond its end; when it ends (or a part of a rotated trace is
closed), they are given back, and the file's size is always that of its whole records."""

import os
import subprocess
import time

import pytest

from conftest import PTT, SUMMARY_RE, TIMEOUT, prog, require_build, run

STEP = 64 << 20  # what ptt trace reserves at a time (src/trace/writer.c)


def require_ext4(path):
    fs = subprocess.run(["stat", "-f", "-c", "%T", str(path)], capture_output=True, text=True)
    if fs.stdout.strip() != "ext2/ext3":
        pytest.skip(f"{path} is on {fs.stdout.strip()}, not ext4: nothing is reserved there")


def allocated(path):
    return os.stat(path).st_blocks * 512


def test_reserved_while_writing_given_back_at_the_end(tmp_path):
    require_build()
    require_ext4(tmp_path)
    out = tmp_path / "t.ptt"
    argv = [PTT, "trace", "-o", out, "--", "sh", "-c", f"{prog('flood')} 1 100000; sleep 2"]
    p = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=tmp_path)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (out.exists() and out.stat().st_size > 1 << 20):
            assert time.monotonic() < deadline and p.poll() is None, p.stderr and p.stderr.read()
            time.sleep(0.05)
        during = allocated(out)
        size = out.stat().st_size
        assert during >= size + STEP // 2, (during, size)  # the step beyond the end
        _, stderr = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0, stderr
    finally:
        p.kill()
    m = SUMMARY_RE.match(stderr.splitlines()[-1])
    assert m, stderr
    size = out.stat().st_size
    assert size == int(m[2]) and size > 1 << 20
    assert allocated(out) < size + (1 << 20), (allocated(out), size)
    v = run([PTT, "view", "--summary", out])
    assert v.returncode == 0 and v.stderr == "", v.stderr


def test_rotated_parts_given_back(tmp_path):
    require_build()
    require_ext4(tmp_path)
    out = tmp_path / "r.ptt"
    p = run([PTT, "trace", "-q", "-o", out, "--max-size=1M", "--", prog("flood"), 2, 100000],
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    parts = sorted(f for f in tmp_path.iterdir() if f.name.startswith("r."))
    assert len(parts) >= 3, parts
    for f in parts:
        size = f.stat().st_size
        assert 0 < size <= 2 << 20 and allocated(f) < size + (1 << 20), (f, allocated(f), size)
