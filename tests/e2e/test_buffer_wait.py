"""ptt's own waits for a free sub-buffer of its pool (TRACE_BUFFER_WAIT: a tiny pool, threads
that record as fast as they can, --overflow=block) are a state of their own in the pictures,
`ptt_buffer`, "waiting for ptt's buffer": in the Pajé trace (read back by pj_dump), the HTML
report (its data, and the page Chromium builds from it) and the Chrome JSON; not a lock wait,
not "outside pthread calls". Each span ends at its event and lasts what the event says."""

import collections
import json

import pytest

from conftest import PTT, parse_raw, prog, ptt_trace, run, view
from test_chrome import check_rules, load, ns
from test_paje import pj_dump
from test_report import Page, browse, chromium, page_data, report  # noqa: F401 (a fixture)

THREADS, ITERS = 4, 40000
SMALL = ["--buffer=1M", "--subbuffer=4K", "--overflow=block"]
LABEL = "waiting for ptt's buffer"


@pytest.fixture(scope="module")
def flood(tmp_path_factory):
    """flood traced into a pool far too small: its buffer waits (tid, end ns, waited ns)."""
    d = tmp_path_factory.mktemp("bufwait")
    # ptt trace stopped (SIGSTOP) for 0.3 s while flood writes: its pool fills and the writers
    # wait, however fast the drain (with two free CPUs it kept up with records of 4 bytes a lock).
    # The sleep before SIGCONT runs untraced: it would wait for a sub-buffer too.
    stop = 'p=$PPID; (LD_PRELOAD= sleep 0.3; kill -CONT $p) & kill -STOP $p; exec "$0" "$@"'
    t = ptt_trace(d, ["sh", "-c", stop, prog("flood"), THREADS, ITERS], opts=SMALL)
    assert t.stdout == f"done={THREADS * ITERS}\n"
    raw = parse_raw(view("--format=raw", t.path))
    t.waits = [(e.tid, e.ns, int(e.fields[0])) for e in raw if e.name == "TRACE_BUFFER_WAIT"]
    assert t.waits, "no buffer wait: the test needs a smaller pool or more events"
    assert all(w > 0 for _, _, w in t.waits)
    t.workers = {e.tid for e in raw if e.name == "THREAD_START"}
    # The span each wait is drawn as: what it waited (a CLOCK_MONOTONIC duration), but never
    # from before the thread's previous event (time stamps are the TSC's, converted): the two
    # clocks may disagree by more than the few ns between that event and the wait's start.
    t.spans, prev = [], {}
    for e in raw:
        if e.name == "TRACE_BUFFER_WAIT":
            waited = int(e.fields[0])
            t.spans.append((e.tid, e.ns, min(waited, e.ns - prev[e.tid]) if e.tid in prev
                            else waited))
        prev[e.tid] = e.ns
    assert sum(w - s for (_, _, w), (_, _, s) in zip(t.waits, t.spans)) < 10**6  # under 1 ms
    t.dir = d
    return t


def seconds(n):
    """A time as pj_dump prints it: the file's nine decimals, read as a double, six printed."""
    return f"{float(f'{n // 10**9}.{n % 10**9:09d}'):.6f}"


def test_paje(flood):
    """A state ptt_buffer of the thread state type, in its own colour; each wait a span of it,
    pushed over running, from its start to its end."""
    out = flood.dir / "t.paje"
    p = run([PTT, "paje", flood.path, "-o", out])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert '\n5 ptt_buffer TS ptt_buffer "0.118 0.533 0.898"\n' in out.read_text()
    rows = pj_dump(out)
    tids = {}
    for line in view("--format=json", "--event=THREAD_START", flood.path).splitlines():
        j = json.loads(line)
        tids[j["thread"]] = j["tid"]
    spans = collections.Counter()
    states = collections.Counter()
    for r in rows:
        if r[0] != "State" or r[2] != "Thread state":
            continue
        states[r[7]] += 1
        if r[7] == "ptt_buffer":
            assert r[6] == "1.000000", r  # pushed over running
            spans[(tids[r[1]], r[3], r[4])] += 1
    want = collections.Counter((tid, seconds(end - waited), seconds(end))
                               for tid, end, waited in flood.spans)
    assert spans == want
    assert set(states) == {"running", "join", "ptt_buffer"}


def test_report(flood, chromium, tmp_path):
    """The report's data: the state and its label, each row's time in it the thread's buffer
    waits, to the nanosecond; the page: the label in the legend (not "blocked: ..."), the state
    drawn; the tables of ptt stat's, which leave these waits out."""
    out = tmp_path / "r.html"
    report(flood.path, out)
    data = page_data(out.read_text())
    buf = data["states"].index("ptt_buffer")
    assert data["state_labels"][0] == "outside pthread calls"
    assert data["state_labels"][buf] == LABEL
    per_tid = collections.Counter()
    for tid, _, waited in flood.spans:
        per_tid[tid] += waited
    assert {r["t"]: r["bl"][buf] for r in data["rows"] if r["bl"][buf]} == dict(per_tid)
    spans = [s for s in data["spans"] if s[1] == buf]
    assert len(spans) == min(len(flood.waits), data["spans_total"])
    dom, _ = browse(chromium, out, tmp_path, "--dump-dom", "--window-size=1400,900")
    page = Page(dom)
    legend = page.texts.get("legend", "")
    assert LABEL in legend and f"blocked: {LABEL}" not in legend
    drawn = {c for p in page.find("path", inside="svg") for c in p.get("class", "").split()}
    assert f"s{buf}" in drawn
    stat = json.loads(run([PTT, "stat", "--format=json", flood.path]).stdout)
    assert stat["ptt_buffer_wait"] == {"waits": len(flood.waits),
                                       "wait_ns": sum(w for _, _, w in flood.waits)}
    for th in stat["threads"]:
        assert th["tid"] in flood.workers or th["name"] == "main"
        if th["tid"] in flood.workers:
            assert th["blocked_ns"] == 0, th  # a buffer wait is no blocked time


def test_chrome(flood, tmp_path):
    """A complete slice "waiting for ptt's buffer" per wait, with its state and no call or
    object, coloured as the state; the file keeps the Trace Event Format's rules."""
    out = tmp_path / "t.json"
    p = run([PTT, "export", "--format=chrome", flood.path, "-o", out])
    assert p.returncode == 0, p.stderr
    events = load(out)["traceEvents"]
    check_rules(events)
    got = collections.Counter()
    for e in events:
        if e["ph"] == "X" and e["name"] == LABEL:
            assert e["cat"] == "blocked" and e["args"] == {"state": "ptt_buffer"}, e
            assert e["cname"] == "rail_response"
            got[(e["tid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))] += 1
        elif e.get("cat") == "blocked":
            assert e["args"]["state"] == "join", e
    want = collections.Counter((tid, end - waited, end) for tid, end, waited in flood.spans)
    assert got == want
