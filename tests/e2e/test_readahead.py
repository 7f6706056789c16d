"""Reading ahead (src/trace/readahead.c; PTT_READ_AHEAD in docs/view.md): a second thread merges
and decodes the trace while the command works on the events. What every reader prints must be
exactly what it prints on one thread: the same events in the same order, the same error line
after the same events, the same exit status, when it reads all, stops after a window, or meets a
truncated or damaged file. The trace holds many batches of the thread's ring (320,000 events:
about 26 MB of decoded events against batches of 512 KiB)."""

import os
import shutil
import subprocess
import time

import pytest

from conftest import PTT, TIMEOUT, flood_trace, prog, run

READERS = [
    ["view", "--format=raw"],
    ["view", "--summary"],
    ["stat"],
    ["stat", "--format=json"],
    ["check"],
    ["check", "--format=json"],
]


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return flood_trace(tmp_path_factory, "readahead", 40000)


def read(args, path, ahead):
    env = dict(os.environ, PTT_READ_AHEAD=ahead)
    p = subprocess.run([str(a) for a in [PTT, *args, path]], capture_output=True, env=env,
                       timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def assert_same(args, path, rc):
    one = read(args, path, "0")
    two = read(args, path, "1")
    assert one[0] == rc, one[2]
    assert one[1], f"{args}: nothing printed"
    assert two == one


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_whole_trace(trace, args):
    assert_same(args, trace, 0)


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_window(trace, args):
    """--from skips what precedes without decoding it; --to stops the reading (and the thread)
    in the middle of the trace."""
    dur = float(next(line.split()[1] for line in read(["view", "--summary"], trace, "0")[1]
                     .decode().splitlines() if line.startswith("duration:")))
    assert_same([*args, f"--from={dur * 0.3:.6f}", f"--to={dur * 0.6:.6f}"], trace, 0)


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_truncated(trace, tmp_path, args):
    cut = tmp_path / "cut.ptt"
    data = trace.read_bytes()
    cut.write_bytes(data[: len(data) * 6 // 10])
    assert_same(args, cut, 2)


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_damaged(trace, tmp_path, args):
    """Bytes overwritten in the middle of the file: the reader says so after the events before."""
    bad = tmp_path / "bad.ptt"
    data = bytearray(trace.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 64] = b"\xff" * 64
    bad.write_bytes(bytes(data))
    one = read(args, bad, "0")
    assert one[2], "the damage was not seen"
    assert read(args, bad, "1") == one


def threads_of(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def threads_while_blocked(argv, env, want):
    """Run argv (ptt view --format=raw of a trace far larger than a pipe) without reading its
    output at first: the command then waits on its output. Its thread count once it is at
    want (or 10 s passed) and 0.2 s later, when any thread it would start has started; then its
    whole output, status and stderr."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, bufsize=0)
    try:
        # Its first output comes after its first events (view --format=raw fills a 1 MiB buffer
        # first): by then it has decided whether to read ahead.
        first = p.stdout.read(1)
        deadline = time.monotonic() + 10
        while threads_of(p.pid) < want and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        seen = threads_of(p.pid)
        out, err = p.communicate(timeout=TIMEOUT)
        out = first + out
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return seen, out, p.returncode, err


@pytest.mark.parametrize("ahead,want", [("0", 1), ("1", 2)])
def test_thread(trace, ahead, want):
    """The second thread is there while the command waits on its output, and only when asked;
    the output is whole once read."""
    env = dict(os.environ, PTT_READ_AHEAD=ahead)
    seen, out, rc, err = threads_while_blocked([str(PTT), "view", "--format=raw", str(trace)],
                                               env, want)
    assert (seen, rc, err) == (want, 0, b"")
    assert out == read(["view", "--format=raw"], trace, "0")[1]


def test_one_cpu(trace):
    """On one CPU (taskset), no second thread by default; the output is the same."""
    if not shutil.which("taskset"):
        pytest.skip("no taskset")
    env = {k: v for k, v in os.environ.items() if k != "PTT_READ_AHEAD"}
    cpu = str(min(os.sched_getaffinity(0)))
    seen, out, rc, err = threads_while_blocked(
        ["taskset", "-c", cpu, str(PTT), "view", "--format=raw", str(trace)], env, 1)
    assert (seen, rc, err) == (1, 0, b"")
    assert out == read(["view", "--format=raw"], trace, "0")[1]


def test_damage_just_after_window(trace, tmp_path):
    """The thread reads past --to and meets damage there: the command, which stops at --to,
    must not say so (on one thread the damage is never reached). The damage is put at the first
    place after the middle of the file that one thread, stopping at the time of the middle
    event, does not reach: within the thread's look-ahead (2 MiB of events)."""
    data = trace.read_bytes()
    # the time of the middle event: the program may start late in the session and end early
    # (the session's duration put the middle after most events under the sanitizers)
    lines = read(["view", "--format=raw"], trace, "0")[1].splitlines()
    window = [f"--to={float(lines[len(lines) // 2].split(b':', 1)[0]):.6f}"]
    bad = tmp_path / "bad.ptt"
    for at in range(len(data) // 2, len(data) * 9 // 10, len(data) // 100):
        damaged = bytearray(data)
        damaged[at : at + 64] = b"\xff" * 64
        bad.write_bytes(bytes(damaged))
        if read(["stat", *window], bad, "0")[0] == 0:
            break
    else:
        pytest.fail("no damage after the window found")
    assert read(["stat"], bad, "0")[0] == 2  # the whole file does meet it
    # view --format=raw first: the slowest of the three, its thread is always the ring ahead
    for args in (["view", "--format=raw"], ["stat"], ["check"]):
        assert_same([*args, *window], bad, 0)


def sanitized():
    cache = os.path.join(os.environ.get("PTT_BUILD", ""), "CMakeCache.txt")
    return os.path.exists(cache) and "PTT_SANITIZE:BOOL=ON" in open(cache).read()


def test_out_of_memory_on_the_thread(trace):
    """The thread's allocation number N fails, and all after it (tests/progs/failalloc.c): the
    command says it is out of memory after the events read before, exit status 2, never an
    abort. N runs over the thread's first allocations: some fail before any event, some after
    whole batches, some never (the thread needed fewer)."""
    if sanitized():
        pytest.skip("the sanitizers' allocator cannot be replaced by a preloaded one")
    full = read(["view", "--format=raw"], trace, "0")[1].splitlines()
    shim = str(prog("libfailalloc.so"))
    after_events = whole = 0
    for n in range(1, 25):
        env = dict(os.environ, PTT_READ_AHEAD="1", PTT_TEST_FAIL_ALLOC=str(n), LD_PRELOAD=shim)
        p = subprocess.run([PTT, "view", "--format=raw", str(trace)], capture_output=True,
                           env=env, timeout=TIMEOUT)
        out, err = p.stdout.splitlines(), p.stderr.decode().splitlines()
        if p.returncode == 0:
            assert out == full and err == [], n
            whole += 1
            continue
        assert p.returncode == 2, (n, p.returncode, err)
        assert err and err[-1].startswith("ptt") and "out of memory" in err[-1], (n, err)
        # What was printed are events of the trace in its order (a stream whose chunk could
        # not be loaded is left out, as on one thread).
        it = iter(full)
        assert all(line in it for line in out), n
        after_events += bool(out) and err[-1] == "ptt: out of memory"
    assert after_events and whole
