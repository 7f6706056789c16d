"""ptt export --format=chrome (and perfetto, the same): Chrome Trace Event JSON that follows the
format's rules (X slices that nest, flows with both ends, thread and process names, numeric
counters), says what ptt view says (a slice per call at its IN event's time, with its fields; a
blocked span per wait; a flow per interaction), and that headless Chromium parses.

Perfetto's UI (ui.perfetto.dev) cannot be fetched offline: it is not loaded here."""

import collections
import json
import subprocess
from decimal import Decimal

import pytest

from conftest import EVENTS, NORETURN, PTT, parse_raw, prog, ptt_trace, run, view
from export_util import FIELDS, raw_str, require_tool

PHASES = set("XBEisftCM")


@pytest.fixture(scope="module")
def mix(tmp_path_factory):
    d = tmp_path_factory.mktemp("mix")
    t = ptt_trace(d, [prog("export_mix"), 20])
    # Every field, call sites included: the fields' positions are the table's.
    t.raw = parse_raw(view("--format=raw", t.path), keep_machine=True)
    return t


def export(trace, out, fmt="chrome", rc=0):
    p = run([PTT, "export", f"--format={fmt}", trace, "-o", out])
    assert p.returncode == rc, p.stderr
    return p


def load(path):
    """The JSON, its numbers with fractions exact (timestamps are microseconds with three
    decimals: nanoseconds)."""
    return json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)


def ns(us):
    v = Decimal(us) * 1000
    assert v == int(v), f"{us} us is not a whole number of nanoseconds"
    return int(v)


@pytest.fixture(scope="module")
def exported(mix, tmp_path_factory):
    out = tmp_path_factory.mktemp("json") / "mix.json"
    export(mix.path, out)
    return out, load(out)["traceEvents"]


def check_rules(events):
    """The Trace Event Format's rules, as Perfetto and chrome://tracing read them."""
    open_b = collections.defaultdict(list)
    slices = collections.defaultdict(list)
    flows = collections.defaultdict(list)
    instants = set()
    tracks, pids, thread_names, process_names = set(), set(), set(), set()
    for i, e in enumerate(events):
        assert e["ph"] in PHASES, e
        assert isinstance(e["name"], str) and e["name"], e
        assert isinstance(e["pid"], int), e
        pids.add(e["pid"])
        if e["ph"] == "M":
            assert e["name"] in ("thread_name", "process_name") and e["args"]["name"], e
            if e["name"] == "thread_name":
                thread_names.add((e["pid"], e["tid"]))
            else:
                process_names.add(e["pid"])
            continue
        t = ns(e["ts"])
        if e["ph"] == "C":
            assert e["args"] and all(isinstance(v, int) and not isinstance(v, bool)
                                     for v in e["args"].values()), e
            continue
        assert isinstance(e["tid"], int), e
        track = (e["pid"], e["tid"])
        tracks.add(track)
        if e["ph"] == "X":
            assert ns(e["dur"]) >= 0, e
            slices[track].append((t, t + ns(e["dur"]), i))
        elif e["ph"] == "B":
            open_b[track].append(e)
        elif e["ph"] == "E":
            assert open_b[track], f"E without B: {e}"
            assert ns(open_b[track].pop()["ts"]) <= t
        elif e["ph"] == "i":
            assert e.get("s", "t") == "t"
            instants.add((track, t, e["name"]))
        else:  # s, f: a flow's ends, each bound to the instant written right before it
            assert events[i - 1]["ph"] == "i" and (events[i - 1]["pid"], events[i - 1]["tid"],
                                                   events[i - 1]["ts"]) == (*track, e["ts"]), e
            if e["ph"] == "f":
                assert e["bp"] == "e"
            flows[(e["cat"], e["name"], e["id"])].append((e["ph"], t))
    assert not any(open_b.values()), "B without E"
    # Slices of a thread nest: each one inside the one open around it, or after it.
    for track, ss in slices.items():
        stack = []
        for start, end, _ in sorted(ss, key=lambda s: (s[0], -s[1], s[2])):
            while stack and stack[-1] <= start and stack[-1] < end:
                stack.pop()
            assert not stack or end <= stack[-1], f"slices overlap on {track} at {start} ns"
            stack.append(end)
    for key, ends in flows.items():
        assert sorted(p for p, _ in ends) == ["f", "s"], f"flow {key}: {ends}"
        assert dict(ends)["s"] <= dict(ends)["f"], f"flow {key} goes back in time"
    assert tracks <= thread_names, f"threads without a name: {tracks - thread_names}"
    assert pids <= process_names
    return slices, flows


def test_format_rules(exported):
    path, events = exported
    check_rules(events)
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"main", "consumer", "worker-0", "worker-3"} <= names
    assert {e["args"]["name"] for e in events if e["name"] == "process_name"} == {"export_mix"}


def json_says(ftype, raw, value):
    """Whether a JSON arg says what ptt view --format=raw's text says."""
    if ftype == "str":
        return raw == raw_str(value)
    return raw == str(value)


def test_calls_match_view(mix, exported):
    _, events = exported
    raw = mix.raw
    calls = [e for e in events if e["ph"] == "X" and e["cat"] != "blocked"]
    ins = {(e.pid, e.tid, e.ns, EVENTS[e.name].routine): e for e in raw
           if EVENTS[e.name].kind == "IN" and e.name not in NORETURN}
    outs = {(e.pid, e.tid, e.ns, EVENTS[e.name].routine): e for e in raw
            if EVENTS[e.name].kind == "OUT"}
    ends = {(e.pid, e.tid, e.ns) for e in raw if e.name in ("THREAD_CANCELLED", "THREAD_END",
                                                              "TRACE_UNFINISHED")}
    assert len(calls) == len(ins), "a slice per call"
    for x in calls:
        start = ns(x["ts"])
        end = start + ns(x["dur"])
        key = (x["pid"], x["tid"], start, x["name"])
        assert key in ins, f"no {x['name']} entered at {start} ns: {x}"
        ev = ins[key]
        assert x["cat"] == EVENTS[ev.name].cls
        fields = FIELDS[ev.name][2]
        args = x["args"]
        for (f, t), text in zip(fields, ev.fields):
            assert json_says(t, text, args[f]), f"{ev.name}.{f}: {text} vs {args[f]}"
        if args.get("unfinished"):
            assert (x["pid"], x["tid"], end) in ends, x
            continue
        out = outs[(x["pid"], x["tid"], end, x["name"])]
        for (f, t), text in zip(FIELDS[out.name][2], out.fields):
            assert json_says(t, text, args["returned"][f]), f"{out.name}.{f}"
    # A thread cancelled in sem_wait never left it.
    assert any(x["args"].get("unfinished") and x["name"] == "sem_wait" for x in calls)


def test_blocked_spans(mix, exported):
    _, events = exported
    c = mix.counts()
    blocked = collections.Counter(e["args"]["state"] for e in events
                                  if e["ph"] == "X" and e["cat"] == "blocked")
    assert blocked["mutex"] == c["MUTEX_WAIT"] > 0
    assert blocked["sem"] == c["SEM_BLOCK"] > 0
    assert blocked["cond"] == c["COND_WAIT_IN"] >= 1
    assert blocked["barrier"] == c["BARRIER_WAIT_IN"]
    assert blocked["join"] == c["THREAD_JOIN_IN"]
    # Each inside its call, ending with it.
    calls = {(e["pid"], e["tid"], ns(e["ts"]) + ns(e["dur"])): ns(e["ts"]) for e in events
             if e["ph"] == "X" and e["cat"] != "blocked"}
    for e in events:
        if e["ph"] == "X" and e["cat"] == "blocked":
            end = ns(e["ts"]) + ns(e["dur"])
            assert calls[(e["pid"], e["tid"], end)] <= ns(e["ts"]), e
            assert e["name"] == "blocked on " + e["args"]["state"]


def test_links(mix, exported):
    _, events = exported
    _, flows = check_rules(events)
    kinds = collections.Counter(name for _, name, _ in flows)
    c = mix.counts()
    assert kinds["create"] == c["THREAD_START"] == 6
    assert kinds["join"] == c["THREAD_JOIN_OUT"] == 6
    assert 1 <= kinds["wake"] <= c["COND_WOKEN"]
    assert kinds["release"] == c["BARRIER_RELEASED"] - 2  # not the last arrival, each round
    assert kinds["post"] == c["SEM_ACQUIRED"] > 0
    assert 0 < kinds["handoff"] <= c["MUTEX_ACQUIRED"] + c["RWLOCK_ACQUIRED"] + \
        c["SPIN_ACQUIRED"]
    # A create arrow leaves the pthread_create that returned the new thread, and arrives at the
    # thread's start.
    raw = mix.raw
    create_in = {}
    for i, e in enumerate(raw):
        if e.name == "THREAD_CREATE_OUT":
            entry = max(j for j in range(i) if raw[j].name == "THREAD_CREATE_IN" and
                        raw[j].tid == e.tid)
            create_in[e.fields[1]] = (e.tid, raw[entry].ns)
    starts = {e.fields[3]: (e.tid, e.ns) for e in raw if e.name == "THREAD_START"}
    ends = collections.defaultdict(set)
    for e in events:
        if e["ph"] == "i" and e["name"] == "create":
            ends[e["args"]["thread"]].add((e["tid"], ns(e["ts"])))
    assert set(ends) == set(starts)
    for thread, points in ends.items():
        assert points == {create_in[thread], starts[thread]}, thread


def test_counters(mix, exported):
    _, events = exported
    raw = mix.raw
    counters = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "C":
            counters[e["name"]].append((ns(e["ts"]), e["args"]))
    # The semaphore's value: what its wait and post events read, in order (an OUT event's
    # semaphore is its IN event's).
    items = next(e.fields[0] for e in raw if e.name == "SEM_POST_IN")
    values, sem_of = [], {}
    for e in raw:
        if not e.name.startswith("SEM_"):
            continue
        fields = [f for f, _ in FIELDS[e.name][2]]
        if EVENTS[e.name].kind == "IN":
            sem_of[e.tid] = e.fields[0]
        if "value" in fields and sem_of.get(e.tid) == items and \
                EVENTS[e.name].kind in ("IN", "OUT"):
            values.append(int(e.fields[fields.index("value")]))
    assert [a["value"] for _, a in counters["sem items"]] == values and values
    # One per semaphore: the two of sem_init and the named one (not one for sem_open's flags).
    sems = {n for n in counters if n.startswith("sem ")}
    assert len(sems) == 3 and {"sem items", "sem never"} < sems, sems
    # Waiters of the contended mutex: from 0, back to 0.
    waiters = counters["mutex big_lock"]
    assert waiters, sorted(counters)
    assert max(a["waiters"] for _, a in waiters) >= 1
    assert waiters[-1][1]["waiters"] == 0
    assert all(a["waiters"] >= 0 for _, a in waiters)
    assert len([n for n in counters if not n.startswith("sem ")]) <= 8


def test_perfetto_is_chrome(mix, exported, tmp_path):
    out = tmp_path / "p.json"
    export(mix.path, out, fmt="perfetto")
    assert out.read_bytes() == exported[0].read_bytes()


PAGE = """<!DOCTYPE html>
<html><body><pre id="out">not run</pre><script>
var out = document.getElementById('out');
try {
  var x = new XMLHttpRequest();
  x.open('GET', 'trace.json', false);  // synchronous: done before the DOM is dumped
  x.send();
  var d = JSON.parse(x.responseText);
  var n = {}, flows = {};
  d.traceEvents.forEach(function (e) {
    n[e.ph] = (n[e.ph] || 0) + 1;
    var k = e.cat + '/' + e.name + '/' + e.id;
    if (e.ph == 's' || e.ph == 'f') flows[k] = (flows[k] || 0) + 1;
  });
  var paired = Object.keys(flows).filter(function (k) { return flows[k] == 2; }).length;
  out.textContent = 'events=' + d.traceEvents.length + ' slices=' + (n.X || 0) +
      ' flows=' + paired + ' counters=' + (n.C || 0);
} catch (e) { out.textContent = 'error=' + e; }
</script></body></html>
"""


def test_chromium_parses_it(exported, tmp_path):
    chromium = require_tool("chromium")
    path, events = exported
    (tmp_path / "trace.json").write_bytes(path.read_bytes())
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'ud'}",
                        "--allow-file-access-from-files", "--dump-dom", page.as_uri()],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    kinds = collections.Counter(e["ph"] for e in events)
    want = (f"events={len(events)} slices={kinds['X']} flows={kinds['s']} "
            f"counters={kinds['C']}")
    assert want in p.stdout, p.stdout[-2000:]


def test_truncated_trace(mix, tmp_path):
    """A trace cut short: the JSON holds what could be read, and the error is reported."""
    cut = tmp_path / "cut.ptt"
    data = mix.path.read_bytes()
    cut.write_bytes(data[:len(data) * 2 // 3])
    out = tmp_path / "cut.json"
    p = export(cut, out, rc=2)
    assert "truncated" in p.stderr or "corrupt" in p.stderr, p.stderr
    events = load(out)["traceEvents"]
    assert events
    check_rules(events)


def test_not_a_trace(tmp_path):
    bad = tmp_path / "bad.ptt"
    bad.write_bytes(b"not a trace")
    p = export(bad, tmp_path / "out.json", rc=2)
    assert "not a ptt trace" in p.stderr
    assert not (tmp_path / "out.json").exists()
