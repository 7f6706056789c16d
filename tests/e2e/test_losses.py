"""Losses: the default mode (--overflow=block) loses nothing whatever signals do; the discard mode
counts every event it drops, by reason, and ptt trace's summary and ptt view --summary word a
loss alike (src/export/textfmt.c ptt_lost_text)."""

import collections
import re

from conftest import prog, ptt_trace, parse_output, summary_counts, view
from test_overflow import pause_tracer
from robust_util import raw_lines
from test_readahead import sanitized

# Fewer runs under the sanitizers, which check the memory the runs touch, not how often a race
# comes: the plain build keeps the five (about 40 s in each build, the longest test of make check).
WORKERS, ROUNDS, RUNS = 4, 20000, 3 if sanitized() else 5
WHY_RE = re.compile(r"^ptt: warning: (\d+ events? w(?:as|ere) dropped: .*)$", re.M)
BECAUSE_RE = re.compile(r"(\d+) because ([^,;]+(?:\([^)]*\))?)")
MARKED_RE = re.compile(r"; (\d+) marked by TRACE_LOST events where they were dropped, (\d+) "
                       r"marked nowhere")


def storm_run(tmp_path, k):
    """One traced run of sig_blocked_storm: the program's figures, and the trace's event counts
    and handler frames checked on the way."""
    # Small sub-buffers: handlers often fill one while an event is in progress.
    t = ptt_trace(tmp_path, [prog("sig_blocked_storm"), WORKERS, ROUNDS], opts=["--subbuffer=4K"],
                  name=f"s{k}.ptt")
    out = parse_output(t.stdout)[1]
    # The counts of every event from the summary; the frames from the handlers' events alone (2
    # million lines of every event parsed here took most of this test's time).
    counts = summary_counts(t.path)[0]
    stacks, frames = collections.defaultdict(list), collections.Counter()
    for name, _pid, tid, fields in raw_lines(t.path, ["--event=SIGNAL_DELIVERED,SIGNAL_HANDLED"]):
        frames[name] += 1
        # Handlers interrupt one another: their frames nest, never cross.
        if name == "SIGNAL_DELIVERED":
            stacks[tid].append(fields[0])
        elif name == "SIGNAL_HANDLED":
            assert stacks[tid] and stacks[tid].pop() == fields[0], (k, tid, fields)
    assert not any(stacks.values()), k
    assert frames["SIGNAL_DELIVERED"] == counts["SIGNAL_DELIVERED"], k
    assert frames["SIGNAL_HANDLED"] == counts["SIGNAL_HANDLED"], k
    return t, {key: int(v) for key, v in out.items()}, counts


def test_blocked_signals_storm_loses_nothing(tmp_path):
    """Threads that block and unblock signals other threads send them all along, handlers that
    record and interrupt one another: in every run, nothing lost, and the trace holds exactly
    the calls the program made and the handler runs it counted."""
    total = 0
    for k in range(RUNS):
        t, out, counts = storm_run(tmp_path, k)
        handled = out["usr1"] + out["usr2"] + out["rt"]
        assert t.lost == 0, (k, t.stderr)
        assert "dropped" not in t.stderr
        assert counts["SIGNAL_DELIVERED"] == counts["SIGNAL_HANDLED"] == handled, k
        assert counts["SEM_POST_IN"] == counts["SEM_POST_OUT"] == out["usr1"] == out["value"], k
        locks = WORKERS * ROUNDS * 5 + out["usr2"]
        assert counts["MUTEX_LOCK_IN"] == counts["MUTEX_UNLOCK_OUT"] == locks, k
        assert counts["THREAD_KILL_IN"] == counts["THREAD_KILL_OUT"] == out["sent"] + out["rt"], k
        assert counts["THREAD_SIGMASK_IN"] == WORKERS * ROUNDS * 2 + 1, k
        assert counts["TRACE_LOST"] == 0
        assert "why:" not in view("--summary", t.path)
        total += handled
    assert total >= RUNS * 100  # signals did land


def reasons(text):
    return {why.strip(): int(n) for n, why in BECAUSE_RE.findall(text.split(";")[0])}


def test_discard_losses_add_up(tmp_path):
    """A tiny pool with --overflow=discard: the summary's lost count is the sum of the TRACE_LOST
    counts in the file and of what the END record says no event marks; the reasons add up to
    it, and ptt trace's stderr and ptt view --summary say it in the same words."""
    pauser = pause_tracer(tmp_path / "t.ptt")  # flood paced over 2 s, ptt trace stopped 0.3 s
    try:
        t = ptt_trace(tmp_path, [prog("flood"), 4, 250000, 2000],
                      opts=["--buffer=1M", "--subbuffer=4K", "--overflow=discard"])
    finally:
        pauser.join()
    assert t.lost > 0
    m = WHY_RE.search(t.stderr)
    assert m, t.stderr
    text = m[1]
    counts, head = summary_counts(t.path)
    assert int(head["lost"]) == t.lost
    assert head["why"] == text
    assert text.startswith(f"{t.lost} events were dropped: ")
    why = reasons(text)
    assert why == {"the pool was full (--overflow=discard)": t.lost}, text
    marked_text, unmarked = (int(x) for x in MARKED_RE.search(text).groups())
    marked = sum(int(f[0]) for name, _p, _t, f in raw_lines(t.path) if name == "TRACE_LOST")
    assert marked == marked_text
    assert marked + unmarked == t.lost
    assert counts["TRACE_LOST"] > 0
