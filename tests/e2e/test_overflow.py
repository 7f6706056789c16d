"""A small pool and threads that record as fast as they can: by default (--overflow=block) the
writers wait for ptt trace and nothing is lost; with --overflow=discard events are dropped, and
every dropped event is counted."""

import collections
import json
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from conftest import PTT, prog, ptt_trace, run, summary_counts

THREADS, ITERS = 4, 250000
SMALL = ["--buffer=1M", "--subbuffer=4K"]
MUTEX = ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT")
THREAD = ("THREAD_CREATE_IN", "THREAD_CREATE_OUT", "THREAD_START", "THREAD_END",
          "THREAD_JOIN_IN", "THREAD_JOIN_OUT")


def expected(classes=("thread", "mutex")):
    """The events flood THREADS ITERS records (without ptt trace's PROCESS_EXIT)."""
    c = collections.Counter({"PROCESS_START": 1})
    if "thread" in classes:
        c.update({name: THREADS for name in THREAD})
    if "mutex" in classes:
        c.update({name: THREADS * ITERS for name in MUTEX})
    return c


def proc_of(pid):
    """(command name, parent pid) of a process, None when gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
    return name, int(rest[1])


def pause_tracer(out, seconds=0.3, timeout=30):
    """Once flood runs under the ptt trace that writes out, stop that ptt trace (SIGSTOP) for
    seconds: its pool fills while flood writes, however fast the drain would have been (records
    of 4 bytes a lock let it keep up with two free CPUs). Returns the thread doing it."""
    def find():
        for d in Path("/proc").iterdir():
            info = proc_of(d.name) if d.name.isdigit() else None
            if not info or info[0] != "flood":
                continue
            try:
                argv = Path(f"/proc/{info[1]}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(out).encode() in argv:
                return info[1]
        return None

    def run_it():
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            tracer = find()
            if tracer:
                os.kill(tracer, signal.SIGSTOP)
                time.sleep(seconds)
                os.kill(tracer, signal.SIGCONT)
                return
            time.sleep(0.005)

    th = threading.Thread(target=run_it)
    th.start()
    return th


def flood(tmp_path, opts):
    # flood paced over 2 s, ptt trace stopped for 0.3 s meanwhile
    pauser = pause_tracer(tmp_path / "t.ptt")
    try:
        t = ptt_trace(tmp_path, [prog("flood"), THREADS, ITERS, 2000], opts=opts)
    finally:
        pauser.join()
    assert t.stdout == f"done={THREADS * ITERS}\n"
    counts, head = summary_counts(t.path)
    assert int(head["lost"]) == t.lost
    assert int(head["events"]) == sum(counts.values())
    # ptt view closes the calls whose _OUT was dropped with TRACE_UNFINISHED events.
    unfinished = counts.pop("TRACE_UNFINISHED", 0)
    assert t.nevents == sum(counts.values())
    assert counts.pop("PROCESS_EXIT") == 1
    return t, counts, unfinished


def test_block_loses_nothing(tmp_path):
    t, counts, unfinished = flood(tmp_path, SMALL)
    assert t.lost == 0 and unfinished == 0
    # The pool was far too small: the writers had to wait for ptt trace, each wait recorded
    # (TRACE_BUFFER_WAIT) as many times as the warning says, and shown apart by ptt stat.
    m = re.search(r"threads waited [0-9.]+ ms in all, (\d+) times?, for a free sub-buffer",
                  t.stderr)
    assert m, t.stderr
    waits = counts.pop("TRACE_BUFFER_WAIT")
    assert waits == int(m[1])
    assert counts == expected()
    stat = run([PTT, "stat", "--format=json", t.path])
    assert json.loads(stat.stdout)["ptt_buffer_wait"]["waits"] == waits
    text = run([PTT, "stat", t.path]).stdout.splitlines()
    assert re.fullmatch(rf"waited for ptt's buffer: \S+ in {waits} waits?, not counted as lock "
                        "waits", text[1])


@pytest.mark.parametrize("classes", [None, "mutex"])
def test_discard_counts_every_lost_event(tmp_path, classes):
    opts = SMALL + ["--overflow=discard"] + ([f"--events={classes}"] if classes else [])
    t, counts, unfinished = flood(tmp_path, opts)
    assert t.lost > 0, "nothing dropped: the test needs a smaller pool or more events"
    reported = counts.pop("TRACE_LOST", 0)
    want = expected() if classes is None else expected(("mutex",))
    # What was recorded and what was dropped add up to what the program did, kind by kind
    # where the kind cannot be lost (PROCESS_START comes first, into an empty pool).
    assert sum(counts.values()) + t.lost == sum(want.values())
    assert counts["PROCESS_START"] == 1
    assert set(counts) <= set(want)
    for name in counts:
        assert counts[name] <= want[name], name
    assert f"{t.lost} events were dropped" in t.stderr
    # Lost events are reported in the threads' streams, when they get a sub-buffer again.
    assert reported > 0
    lost_in_stream = 0
    p = run([PTT, "view", "--format=raw", t.path])
    assert p.returncode == 0
    for line in p.stdout.splitlines():
        if ":TRACE_LOST :" in line:
            lost_in_stream += int(line.rsplit(" : ", 1)[1])
    assert 0 < lost_in_stream <= t.lost
