"""The flight recorder (--flight-recorder=64K) over a numbered sequence of events
(tests/progs/numbered.c: the K-th sem_post records the value K): the file holds a window of
whole sub-buffers, says in its INFO how many older events it left out, and is rewritten on
ptt ctl SESSION dump while the program runs."""

import re
import time

import pytest

from conftest import SUMMARY_RE, prog, ptt_trace, summary_counts
from robust_util import Live, ctl_ok, raw_lines, read_info

WINDOW = 64 * 1024
SUBBUFFER = 32 * 1024
POST = 11  # bytes of a sem_post at least: one record, its length, a head of 2 bytes, a time, a
# duration and six values of a byte at least (docs/format.md)
KEPT_RE = re.compile(r"^ptt: flight recorder kept the newest (\d+) events \((\d+) older ones "
                     r"left out\)$")


def posted(path):
    """The values of the SEM_POST_OUT events in the file, in order, and every event name."""
    values, names = [], []
    for name, _pid, _tid, fields in raw_lines(path):
        names.append(name)
        if name == "SEM_POST_OUT":
            values.append(int(fields[2]))
    return values, names


def kept_dropped(stderr):
    m = [KEPT_RE.match(line) for line in stderr.splitlines()]
    m = [x for x in m if x]
    assert len(m) == 1, stderr
    return int(m[0][1]), int(m[0][2])


def test_window_counts(tmp_path):
    """Everything recorded is either in the window or counted as left out, the window is about
    64K of events, and the INFO says what was left out."""
    n = 100000
    full = ptt_trace(tmp_path, [prog("numbered"), n, 0], name="full.ptt")
    all_events = int(SUMMARY_RE.match(full.stderr.splitlines()[-1])[1])  # MODULE_LOAD too
    t = ptt_trace(tmp_path, [prog("numbered"), n, 0], opts=[f"--flight-recorder={WINDOW}"])
    assert t.stdout.splitlines()[-1] == f"value={n}"
    kept, dropped = kept_dropped(t.stderr)
    assert int(SUMMARY_RE.match(t.stderr.splitlines()[-1])[1]) == kept
    assert kept + dropped == all_events + 1  # + its TRACE_DUMP
    info = read_info(t.path)
    assert info["flight_recorder"] == str(WINDOW)
    assert int(info["older_events_dropped"]) == dropped > 0
    values, names = posted(t.path)
    assert 0 < len(values) <= (WINDOW + SUBBUFFER) // POST
    assert values == sorted(set(values)) and values[-1] <= n
    assert names.count("TRACE_DUMP") == 1
    counts, head = summary_counts(t.path)
    assert counts["TRACE_DUMP"] == 1 and head["exit"] == "0"


def burst(tmp_path, name, n1, n2):
    """numbered N1 N2 with the flight recorder: phase 2 starts once ptt trace has had time to
    drain phase 1, so that its sub-buffers (a burst of several) reach ptt trace together at the
    end (the wait only makes the case below likely; nothing is inferred from it)."""
    live = Live([prog("numbered"), n1, n2], tmp_path / name, opts=[f"--flight-recorder={WINDOW}"])
    live.value("phase1")
    time.sleep(0.1)
    live.send("go")
    live.finish(0)
    return live


def test_window_is_the_newest(tmp_path):
    """The window holds the newest events: the last values of the sequence, contiguous up to
    the end, then the program's last call and its end."""
    n1, n2 = 50000, 3000
    for run in range(2):
        live = burst(tmp_path, f"b{run}.ptt", n1, n2)
        values, names = posted(live.path)
        assert values == list(range(values[0], n1 + n2 + 1)), \
            f"window {values[0]}..{values[-1]}, {len(values)} values; the run ended at {n1 + n2}"
        assert names[-4:] == ["SEM_GETVALUE_IN", "SEM_GETVALUE_OUT", "PROCESS_EXIT",
                              "TRACE_DUMP"]


def test_dump_while_running(tmp_path):
    """ptt ctl SESSION dump while the program waits between its phases writes a file of the
    run so far; the end of the session writes it again."""
    n1, n2 = 20000, 20000
    path = tmp_path / "t.ptt"
    live = Live([prog("numbered"), n1, n2], path, opts=[f"--flight-recorder={WINDOW}"])
    session = live.wait_session()
    live.value("phase1")
    reply = ctl_ok(session, "dump")
    m = re.fullmatch(rf"ok: wrote (\d+) events to {re.escape(str(path))}\n", reply)
    assert m, reply
    values, names = posted(path)
    assert values and values == sorted(set(values)) and values[-1] <= n1  # a prefix of the run
    assert names.count("TRACE_DUMP") == 1
    assert "PROCESS_EXIT" not in names
    counts, head = summary_counts(path, keep_machine=True)
    assert int(head["events"]) - counts["TRACE_UNFINISHED"] == int(m[1])
    assert "exit" not in head  # no END record: the session goes on
    info = read_info(path)
    assert int(info["older_events_dropped"]) > 0
    dump_status = [f for name, _p, _t, f in raw_lines(path) if name == "TRACE_DUMP"]
    assert dump_status == [["1"]]  # ptt ctl dump
    live.send("go")
    live.finish(0)
    assert live.out[-1] == f"value={n1 + n2}"
    assert [f for name, _p, _t, f in raw_lines(path) if name == "TRACE_DUMP"] == [["1"], ["0"]]
    values, names = posted(path)
    assert values[-1] > n1 and "PROCESS_EXIT" in names
    assert summary_counts(path)[1]["exit"] == "0"
