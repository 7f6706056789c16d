"""ptt view: its three formats agree on one trace; a damaged file is read as far as it can be."""

import re

from conftest import PTT, check_trace, parse_output, parse_raw, prog, ptt_trace, run, view
from test_names import peak_kib
from test_readahead import sanitized


def test_view_formats_agree(tmp_path):
    """Human and raw output: one line per event, same times (to the microsecond), threads and
    routines; the summary counts them (check_trace)."""
    t = ptt_trace(tmp_path, [prog("cond_calls"), "timedwait"])
    check_trace(t)
    human = view(t.path).splitlines()
    raw = parse_raw(view("--format=raw", t.path), keep_machine=True)
    assert len(human) == len(raw)
    # A thread with a name shows it, its id after it in parentheses.
    line = re.compile(r"^(\d+\.\d{6}) : Pid (\d+), Thread (?:\S+ \()?(\d+)\)? (.*)\.$")
    for h, r in zip(human, raw):
        m = line.match(h)
        assert m, h
        assert (int(m[2]), int(m[3])) == (r.pid, r.tid)
        assert m[1] == f"{r.ns // 10**9}.{r.ns % 10**9 // 1000:06d}"
        if r.name.endswith("_IN"):
            assert m[4].startswith("enters function pthread_"), h
        elif r.name.endswith("_OUT"):
            assert m[4].startswith("leaves function pthread_"), h
    o = parse_output(t.stdout)[1]
    woken = [h for h in human if "is woken from condvar" in h]
    assert len(woken) == 2
    # The objects by name: cond_calls.c's are the globals c and m, named by their symbols.
    assert "ETIMEDOUT" in woken[0]
    assert "from condvar c (" in woken[0] and "holds mutex m again" in woken[0], woken[0]


def test_truncated_trace(tmp_path):
    """Cut short: every event before the cut is printed, then one line naming the problem, and
    the exit status is 2."""
    t = ptt_trace(tmp_path, [prog("counts"), 2, 300, 10])
    whole = t.events
    data = t.path.read_bytes()
    cut = tmp_path / "cut.ptt"
    cut.write_bytes(data[:len(data) * 2 // 3])
    p = run([PTT, "view", "--format=raw", cut])
    assert p.returncode == 2
    assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith(f"ptt view: {cut}: ")
    assert "offset" in p.stderr
    part = parse_raw(p.stdout)
    assert 0 < len(part) < len(whole)
    # What was read is what the whole file holds (calls left open are closed at the end).
    kept = [e.key for e in part if e.name != "TRACE_UNFINISHED"]
    assert set(kept) <= {e.key for e in whole}
    assert [e.ns for e in part] == sorted(e.ns for e in part)


def test_not_a_trace(tmp_path):
    junk = tmp_path / "junk.ptt"
    junk.write_bytes(b"\0" * 4096)
    p = run([PTT, "view", junk])
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == f"ptt view: {junk}: not a ptt trace (bad magic at offset 0)\n"


def test_many_threads_one_after_the_other(tmp_path):
    """A trace of threads made and joined one after the other (thread_churn): the reader holds
    what it needs to read a thread only while the thread's events come (its events at hand, its
    chunk and its decoding: 2.6 KB each before), so ptt view's memory grows little with the
    threads made. Every thread is there, its start and end in order."""
    few = ptt_trace(tmp_path, [prog("thread_churn"), 2000], name="few.ptt").path
    many = ptt_trace(tmp_path, [prog("thread_churn"), 20000], name="many.ptt").path
    starts = ends = 0
    for e in parse_raw(view("--format=raw", "--event=THREAD_START,THREAD_END", many)):
        starts += e.name == "THREAD_START"
        ends += e.name == "THREAD_END"
        assert ends <= starts <= ends + 1  # one thread at a time
    assert starts == ends == 20000
    if sanitized():
        return  # the sanitizers' allocator keeps what is freed
    # 57 MiB before (18,000 more threads), 10 MiB after
    grown = peak_kib("view", "--format=json", many) - peak_kib("view", "--format=json", few)
    assert grown < 20 * 1024, f"ptt view grew by {grown} KiB for 18,000 more threads"
