"""--backtrace=N (docs/trace.md): a BACKTRACE of the program's stack before each call that has a
call site. The unwinder's own calls (libgcc's pthread_once, at each unwind) are not the
program's; a signal handler that runs while libptt unwinds is the program's, and all of it is
recorded."""

import collections

from conftest import parse_output, prog, ptt_trace, view
from robust_util import raw_lines

SIGNALS, HZ = 400, 20000
HANDLER = ("SIGNAL_DELIVERED", "SEM_POST_IN", "SEM_POST_OUT", "SIGNAL_HANDLED")


def test_backtrace_is_the_programs_alone(tmp_path):
    """flood 2 1000 with 4 frames: the program's calls, each lock, unlock, create and join after
    its BACKTRACE, and nothing else (the unwinder's pthread_once was recorded 4004 times)."""
    t = ptt_trace(tmp_path, [prog("flood"), 2, 1000], opts=["--backtrace=4"])
    counts = t.counts()
    assert counts["THREAD_ONCE_IN"] == counts["THREAD_ONCE_OUT"] == 0
    assert counts["MUTEX_LOCK_IN"] == counts["MUTEX_UNLOCK_IN"] == 2000
    assert counts["BACKTRACE"] == 2000 + 2000 + 2 + 2
    for tid in {e.tid for e in t.events}:
        mine = [e.name for e in t.events if e.tid == tid]
        assert all(b != "BACKTRACE" or e.endswith("_IN") for b, e in zip(mine, mine[1:])), tid
    text = view(t.path).splitlines()
    lock = next(i for i, line in enumerate(text) if "pthread_mutex_lock" in line)
    assert " was called from flood.c:" in text[lock - 1], text[lock - 1]


def test_handler_during_unwind_is_recorded(tmp_path):
    """sig_storm: SIGALRM at 20 kHz reaches a thread that locks and unlocks with a backtrace of 8
    frames each time, so that most handlers run while libptt unwinds: every event of every
    handler is in the trace or counted lost (the handler's calls went untraced before)."""
    t = ptt_trace(tmp_path, [prog("sig_storm"), SIGNALS, HZ], opts=["--backtrace=8"])
    out = parse_output(t.stdout)[1]
    worker, handled = int(out["tid_worker"]), int(out["handled"])
    counts = collections.Counter(name for name, _pid, tid, _f in raw_lines(t.path)
                                 if tid == worker)
    assert handled >= SIGNALS
    assert counts["THREAD_ONCE_IN"] == 0
    assert counts["MUTEX_LOCK_IN"] == counts["MUTEX_UNLOCK_IN"] == int(out["iterations"])
    assert sum(counts[name] for name in HANDLER) + t.lost == 4 * handled
