"""Where readers read a trace from (docs/view.md, "Input"): '-' is standard input, a pipe or a
FIFO is read as a stream, a FIFO no one writes to is given up after 10 s with one line, a
trace without any event says so (exit status 2, as a truncated one)."""

import os
import subprocess
import threading

import pytest

from conftest import PTT, TIMEOUT, flood_trace, require_build, run


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return flood_trace(tmp_path_factory, "input", 200)


def reader(args, stdin=None):
    return subprocess.run([str(a) for a in [PTT, *args]], stdin=stdin, capture_output=True,
                          timeout=TIMEOUT)


def test_stdin_redirected(trace):
    want = reader(["view", trace])
    assert want.returncode == 0 and want.stdout
    with open(trace, "rb") as f:
        got = reader(["view", "-"], stdin=f)
    assert (got.returncode, got.stdout, got.stderr) == (0, want.stdout, b"")


def test_stdin_pipe(trace):
    """cat FILE | ptt stat -, and an exporter that reads the trace twice (chrome)."""
    want = reader(["stat", trace])
    assert want.returncode == 0
    data = trace.read_bytes()
    got = subprocess.run([str(PTT), "stat", "-"], input=data, capture_output=True,
                         timeout=TIMEOUT)
    assert got.returncode == 0 and got.stderr == b"", got.stderr
    assert got.stdout == want.stdout.replace(str(trace).encode(), b"-")
    out = trace.parent / "c.json"
    p = subprocess.run([str(PTT), "export", "--format=chrome", "-", "-o", str(out)], input=data,
                       capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    ref = trace.parent / "ref.json"
    assert run([PTT, "export", "--format=chrome", trace, "-o", ref]).returncode == 0
    assert out.read_bytes() == ref.read_bytes()


def test_trace_into_pipe(tmp_path):
    """ptt trace -o /dev/stdout | ptt view -: the whole trace, with its end."""
    require_build()
    t = subprocess.Popen([str(PTT), "trace", "-q", "-o", "/dev/stdout", "--", "true"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    v = subprocess.run([str(PTT), "view", "--summary", "-"], stdin=t.stdout, capture_output=True,
                       text=True, timeout=TIMEOUT)
    t.stdout.close()
    assert t.wait(TIMEOUT) == 0
    assert v.returncode == 0, v.stderr
    assert "exit:      0" in v.stdout.splitlines()


def test_fifo_with_writer(trace, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as f:
            f.write(trace.read_bytes())

    writer = threading.Timer(0.5, write)  # the reader is there first
    writer.start()
    got = reader(["view", fifo])
    writer.join(TIMEOUT)
    assert got.returncode == 0 and got.stderr == b"", got.stderr
    assert got.stdout == reader(["view", trace]).stdout


def test_fifo_without_writer(tmp_path):
    """No writer ever comes: one line after the bounded wait, never a hang. view and stat wait on
    FIFOs of their own at the same time (the wait is 10 s)."""
    require_build()
    procs = {}
    for cmd in ("view", "stat"):
        fifo = tmp_path / f"fifo-{cmd}"
        os.mkfifo(fifo)
        procs[cmd] = (fifo, subprocess.Popen([str(PTT), cmd, str(fifo)], stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE))
    for cmd, (fifo, p) in procs.items():
        out, err = p.communicate(timeout=TIMEOUT)  # 90 s, well above the 10 s wait
        assert p.returncode == 2 and out == b"", cmd
        assert err.decode().splitlines() == [
            f"ptt {cmd}: {fifo}: a FIFO no one wrote to in 10 s; start its writer first"]


@pytest.mark.parametrize("cmd", ["view", "stat"])
def test_header_only(trace, tmp_path, cmd):
    path = tmp_path / "h.ptt"
    path.write_bytes(trace.read_bytes()[:16])
    p = reader([cmd, path])
    assert p.returncode == 2
    assert p.stderr.decode().splitlines() == [
        f"ptt {cmd}: {path}: no events: nothing follows the file header "
        "(ptt trace ended before writing any)"]
