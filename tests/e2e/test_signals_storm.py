"""A signal storm (tests/progs/sig_storm.c): SIGALRM from an interval timer at 50 kHz reaches a
thread that records lock/unlock as fast as it can, and the handler posts a semaphore, thousands
of times; so the handler often records while the thread was recording an event. The trace reads
back whole, and holds what the program counted."""

import collections

import pytest

from conftest import parse_output, prog, ptt_trace, summary_counts
from robust_util import raw_lines

SIGNALS, HZ = 3000, 50000
SIGALRM = "14"
HANDLER = ("SIGNAL_DELIVERED", "SEM_POST_IN", "SEM_POST_OUT", "SIGNAL_HANDLED")


@pytest.fixture(scope="module")
def storm(tmp_path_factory):
    """One run for the tests below: (Traced, program's values, per-name counts of the worker's
    events, the worker's handler frames as tuples of names, the values SEM_POST_OUT recorded)."""
    tmp = tmp_path_factory.mktemp("storm")
    t = ptt_trace(tmp, [prog("sig_storm"), SIGNALS, HZ])
    out = parse_output(t.stdout)[1]
    worker = int(out["tid_worker"])
    counts, frames, frame, posted = collections.Counter(), [], None, []
    for name, _pid, tid, fields in raw_lines(t.path):
        if tid != worker:
            continue
        counts[name] += 1
        if name == "SIGNAL_DELIVERED":
            if frame is not None:
                frames.append(tuple(frame))
            frame = [name]
        elif frame is not None and name in HANDLER + ("TRACE_LOST",):
            frame.append(name)
            if name == "SIGNAL_HANDLED":
                frames.append(tuple(frame))
                frame = None
        elif name in HANDLER:
            frames.append((name,))  # a handler's event outside a frame
        if name == "SEM_POST_OUT":
            posted.append(int(fields[2]))
    if frame is not None:
        frames.append(tuple(frame))
    return t, out, counts, frames, posted


def test_storm_reads_back(storm):
    """What holds even when events are dropped: the file reads back (raw_lines checks ptt
    view's status), no sub-buffer was cut short, the worker's own calls are all there, and
    every handler event the program made is either in the file or counted as lost."""
    t, out, counts, frames, posted = storm
    handled, iterations = int(out["handled"]), int(out["iterations"])
    assert handled >= SIGNALS and int(out["value"]) == handled
    assert not any("malformed" in line for line in t.stderr.splitlines())
    for name in ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT"):
        assert counts[name] == iterations, name
    assert counts["THREAD_SIGMASK_IN"] == counts["THREAD_SIGMASK_OUT"] == 2
    assert sum(counts[name] for name in HANDLER) + t.lost == 4 * handled
    # What is left of each handler run is in order, and each lost event spoilt one run at most.
    for f in frames:
        left = iter(HANDLER)
        assert all(n in left for n in f if n != "TRACE_LOST"), f
    whole = sum(1 for f in frames if tuple(n for n in f if n != "TRACE_LOST") == HANDLER)
    assert whole >= handled - t.lost
    assert posted == sorted(set(posted)) and all(1 <= v <= handled for v in posted)
    total = summary_counts(t.path)[0]
    assert total["SIGNAL_DELIVERED"] == counts["SIGNAL_DELIVERED"]  # only the worker's


def test_storm_exact(storm):
    """Every SIGNAL_DELIVERED has its SIGNAL_HANDLED with the handler's sem_post inside, and the
    counts are the program's: nothing lost, wherever the signals landed (in an event, in a
    sub-buffer switch)."""
    t, out, counts, frames, posted = storm
    handled = int(out["handled"])
    assert t.lost == 0
    assert collections.Counter(frames) == {HANDLER: handled}
    assert posted == list(range(1, handled + 1))
