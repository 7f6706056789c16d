"""Every JSON output of ptt (view --format=json, stat --format=json, export --format=chrome, the
report's #ptt-data element) is strict JSON (RFC 8259) in UTF-8, whatever bytes the program named
its threads and objects with: a strict parser reads it (the bytes decoded as UTF-8 with
errors='strict', json.loads with strict=True), valid UTF-8 names come back as they are, and each
ill-formed part of a name comes back as one U+FFFD (src/util/json.h).

json_names (tests/progs/json_names.c) names four threads with pthread_setname_np and twelve
mutexes with ptt_name; every thread locks every mutex."""

import json
import re
import subprocess

import pytest

from conftest import PTT, TIMEOUT, parse_output, prog, ptt_trace

# The names json_names gives, as bytes, and what every JSON output must give back.
THREADS = [
    (b"w\xc3\xb6rker-\xc3\xbc", "wörker-ü"),
    (b"\xe7\xba\xbf\xe7\xa8\x8b", "线程"),
    (b"bad\xffname", "bad\ufffdname"),
    (b'tab\tq"b\\s/', 'tab\tq"b\\s/'),
]
OBJECTS = [
    (b"verrou-\xc3\xa9", "verrou-é"),
    (b"\xe4\xba\x92\xe6\x96\xa5\xe9\x94\x81/lock", "互斥锁/lock"),
    (b"emoji-\xf0\x9f\x94\x92", "emoji-\U0001f512"),
    (b"lone\x80cont", "lone\ufffdcont"),
    (b"cut\xe4\xb8", "cut\ufffd"),  # one U+FFFD for the two bytes of the cut sequence
    (b"cut\xe4\xb8-mid", "cut\ufffd-mid"),
    (b"overlong\xc0\xaf-\xe0\x80\xaf", "overlong\ufffd\ufffd-\ufffd\ufffd\ufffd"),
    (b"surrogate\xed\xa0\x80", "surrogate\ufffd\ufffd\ufffd"),
    (b"big\xf4\x90\x80\x80", "big\ufffd\ufffd\ufffd\ufffd"),
    (b"ff\xff-fe\xfe", "ff\ufffd-fe\ufffd"),
    (b"nl\nbell\x07del\x7f", "nl\nbell\x07del\x7f"),
]
# 300 bytes ("é" 150 times): ptt keeps 255 (include/ptt.h), the last one a lead byte alone.
LONG = (b"\xc3\xa9" * 150, "é" * 127 + "\ufffd")


def run_bytes(cmd):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0, f"{cmd}: exit {p.returncode}: {p.stderr!r}"
    return p.stdout


def no_constant(name):
    raise ValueError(f"{name} is not JSON")


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def strict(data):
    """data (bytes) parsed as RFC 8259 JSON: UTF-8 only, no raw control character in a string,
    no NaN or Infinity, no lone surrogate escaped."""
    value = json.loads(data.decode("utf-8", errors="strict"), strict=True,
                       parse_constant=no_constant)
    for s in strings(value):
        assert not re.search("[\ud800-\udfff]", s), f"a lone surrogate in {s!r}"
    return value


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    # The expected names are what Unicode's recommended practice gives (one U+FFFD per maximal
    # ill-formed subpart), as Python's decoder implements it.
    for raw, text in THREADS + OBJECTS:
        assert raw.decode("utf-8", "replace") == text
    assert LONG[0][:255].decode("utf-8", "replace") == LONG[1]
    assert all(len(raw) <= 15 for raw, _ in THREADS)  # pthread_setname_np's limit
    d = tmp_path_factory.mktemp("json")
    t = ptt_trace(d, [prog("json_names")])
    _, t.out = parse_output(t.stdout)
    t.dir = d
    t.tids = {int(t.out[f"tid_{i}"]): THREADS[i][1] for i in range(len(THREADS))}
    t.objs = {int(t.out[f"obj_{k}"], 16): OBJECTS[k][1] for k in range(len(OBJECTS))}
    t.objs[int(t.out["obj_long"], 16)] = LONG[1]
    return t


def test_view_json(traced):
    """ptt view --format=json: each line a strict JSON object; the thread of each event, the
    string fields (the names given) and the names of objects as the program gave them."""
    lines = run_bytes([PTT, "view", "--format=json", traced.path]).splitlines()
    events = [strict(line) for line in lines]
    assert len(events) == len(lines) > 100
    seen_threads, setname, named, object_names = {}, {}, {}, {}
    for e in events:
        if e["tid"] in setname:  # named already
            seen_threads.setdefault(e["tid"], set()).add(e.get("thread"))
        if e["event"] == "THREAD_SETNAME_NP_IN":
            setname[e["tid"]] = e["fields"]["name"]
        elif e["event"] == "OBJECT_NAME":
            named[int(e["fields"]["object"], 16)] = e["fields"]["name"]
        elif e["event"] == "MUTEX_LOCK_IN" and int(e["fields"]["mutex"], 16) in traced.objs:
            object_names.setdefault(int(e["fields"]["mutex"], 16), set()).add(
                e["names"]["mutex"])
    # Each thread's events after pthread_setname_np carry its new name.
    assert seen_threads == {tid: {name} for tid, name in traced.tids.items()}
    assert setname == traced.tids
    assert named == traced.objs
    assert object_names == {addr: {name} for addr, name in traced.objs.items()}


def test_stat_json(traced):
    """ptt stat --format=json: the objects', their users' and the threads' names."""
    stat = strict(run_bytes([PTT, "stat", "--format=json", traced.path]))
    objects = {int(o["address"], 16): o for o in stat["objects"]}
    assert {a: objects[a]["name"] for a in traced.objs} == traced.objs
    for a in traced.objs:
        assert sorted(objects[a]["threads"]) == sorted(traced.tids.values())
    threads = {t["tid"]: t["name"] for t in stat["threads"]}
    assert {tid: threads[tid] for tid in traced.tids} == traced.tids


def test_chrome_json(traced):
    """ptt export --format=chrome: thread names (M events) and the names of the mutexes in the
    slices' arguments."""
    out = traced.dir / "c.json"
    run_bytes([PTT, "export", "--format=chrome", traced.path, "-o", out])
    events = strict(out.read_bytes())["traceEvents"]
    thread_names = {e["tid"]: e["args"]["name"] for e in events
                    if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {tid: thread_names[tid] for tid in traced.tids} == traced.tids
    mutexes = {}
    for e in events:
        if e["ph"] == "X" and e["name"] == "pthread_mutex_lock":
            a = int(e["args"]["mutex"], 16)
            if a in traced.objs:
                mutexes.setdefault(a, set()).add(e["args"]["names"]["mutex"])
    assert mutexes == {a: {n} for a, n in traced.objs.items()}


def test_report_json(traced):
    """ptt report: the page is UTF-8, and its #ptt-data element is strict JSON with the threads'
    rows, the objects and the threads' statistics named as the program named them."""
    out = traced.dir / "r.html"
    run_bytes([PTT, "report", traced.path, "-o", out])
    page = out.read_bytes()
    page.decode("utf-8", errors="strict")
    m = re.search(rb'<script type="application/json" id="ptt-data">(.*?)</script>', page, re.S)
    assert m, "no #ptt-data in the page"
    data = strict(m[1])
    rows = {r["t"]: r["n"] for r in data["rows"]}
    assert {tid: rows[tid] for tid in traced.tids} == traced.tids
    objects = {int(o["address"], 16): o["name"] for o in data["objects"]}
    assert {a: objects[a] for a in traced.objs} == traced.objs
    stats = {t["tid"]: t["name"] for t in data["thread_stats"]}
    assert {tid: stats[tid] for tid in traced.tids} == traced.tids
