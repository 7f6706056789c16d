"""ptt stat: wait and hold times, acquisitions and contention of a program whose contention is
known (tests/progs/contend.c), blocked time per thread; its JSON against docs/stat.schema.json,
CSV and text saying the same, --sort, --top, --kind, --names, bad options."""

import collections
import csv
import io
import json
import os
import re

import pytest

from conftest import PROGS, PTT, SITES, SOURCE, parse_raw, prog, ptt_trace, run, trace_prog, view
from names_util import ptt_ok, ptt_usage_error, schema_errors, site_lines, stat_json
from test_names import peak_kib
from test_readahead import sanitized
from test_report import page_data

ROUNDS, HOLD_MS = 5, 20
MS = 10**6
# What a traced call adds to a time the program measured around it, or takes from it (the
# program and ptt read different clocks, converted): 5%, and 1 ms per call on a loaded machine.
REL, PER_CALL = 0.05, MS
# A percentile is the middle of its log-linear histogram bucket: within 19% of the true value.
PCT = 0.19
SCHEMA = json.loads((SOURCE / "docs" / "stat.schema.json").read_text())


def close(value, expected, n):
    """value is what ptt measured of n calls the program measured as expected (ns)."""
    return abs(value - expected) <= REL * expected + n * PER_CALL


@pytest.fixture(scope="module")
def contend(tmp_path_factory):
    """contend traced: (Traced, its printed values, ptt stat's JSON, the objects by name)."""
    t = trace_prog(tmp_path_factory.mktemp("contend"), "contend", ROUNDS, HOLD_MS)
    s = stat_json(t.path)
    return t, t.out, s, {o["name"]: o for o in s["objects"]}


@pytest.fixture(scope="module")
def names_trace(tmp_path_factory):
    """names_prog traced (two processes, every kind of name), and ptt stat's JSON."""
    t = trace_prog(tmp_path_factory.mktemp("names"), "names_prog")
    return t, stat_json(t.path)


def program_times(out, what, j=None):
    """The program's own measures of big_lock: what (wait or hold) of worker j (None: both)."""
    return [int(out[f"{what}_{w}_{k}"]) for w in ((0, 1) if j is None else (j,))
            for k in range(ROUNDS)]


def test_contended_mutex(contend):
    """big_lock: every acquisition exact, every one contended but the first; wait and hold
    totals and maxima within 5% of what the program measured; p50 and p99 within the histogram's
    19%; hold at least ROUNDS x 2 x HOLD_MS (a sleep is never short); the workers, by name."""
    t, out, s, objs = contend
    o = objs["big_lock"]
    assert (o["kind"], o["address"], o["pid"]) == ("mutex", out["big_lock"], int(out["tid_main"]))
    n = 2 * ROUNDS
    assert (o["acquisitions"], o["contended"]) == (n, n - 1)
    assert o["threads"] == ["worker", "worker#2"]
    for key, what in (("wait_ns", "wait"), ("hold_ns", "hold")):
        h, mine = o[key], sorted(program_times(out, what))
        assert h["count"] == n, key
        assert close(h["total"], sum(mine), n), (key, h, mine)
        # ptt's hold contains the program's (its wait is contained in it): every difference has
        # the sign of the totals', so the maxima differ by no more than the totals do. A thread
        # preempted between its clock read and the call moves one maximum by milliseconds.
        slack = abs(h["total"] - sum(mine)) + REL * mine[-1]
        assert abs(h["max"] - mine[-1]) <= slack, (key, h, mine)
        assert h["mean"] == h["total"] // n
        # p50 is the 5th of 10 values; p99 the 10th, the bucket's middle never above max.
        assert abs(h["p50"] - mine[n // 2 - 1]) <= PCT * mine[n // 2 - 1] + PER_CALL, (key, h)
        assert abs(h["p99"] - h["max"]) <= PCT * h["max"], (key, h)
        assert h["p50"] <= h["p99"] <= h["max"]
    assert o["hold_ns"]["total"] >= n * HOLD_MS * MS * 0.999
    assert o["hold_ns"]["p50"] >= HOLD_MS * MS * (1 - PCT)
    # Every wait but the very first lasts about as long as the other worker holds the lock.
    assert o["wait_ns"]["total"] >= (n - 1) * HOLD_MS * MS * 0.5


def bucket(v):
    """stats.h's histogram bucket of v: 4 per power of two."""
    if v < 4:
        return v
    lg = v.bit_length() - 1
    return min(lg * 4 + ((v >> (lg - 2)) & 3), 255)


def bucket_mid(b):
    if b < 4:
        return b
    lg, sub = divmod(b, 4)
    return (1 << lg) + (sub << (lg - 2)) + (1 << (lg - 2)) // 2


def times(values):
    """What ptt stat should say of these times: count, total, mean, p50, p99, max."""
    hist = collections.Counter(bucket(v) for v in values)

    def pct(p):
        want, seen = int(p * len(values) + 0.999999), 0
        for b in sorted(hist):
            seen += hist[b]
            if seen >= want:
                return min(bucket_mid(b), max(values))
    return dict(count=len(values), total=sum(values), mean=sum(values) // len(values),
                p50=pct(0.5), p99=pct(0.99), max=max(values))


def test_exact_from_trace(contend):
    """big_lock's and table_lock's wait (a lock's _IN to its _OUT) and hold (the lock's _OUT to
    the unlock's _IN) times, computed from the raw trace: exactly what ptt stat says, the
    percentiles those of its histogram."""
    t, out, s, objs = contend
    raw = parse_raw(view("--format=raw", t.path))
    for name, lock in (("big_lock", "MUTEX_LOCK"), ("table_lock", "RWLOCK_RDLOCK")):
        unlock = lock.split("_")[0] + "_UNLOCK_IN"
        waits, holds, since = [], [], {}
        for e in raw:
            if e.name == f"{lock}_IN" and e.fields[0] == out[name]:
                since[e.tid] = e.ns
            elif e.name == f"{lock}_OUT" and e.tid in since:
                waits.append(e.ns - since[e.tid])
                since[e.tid] = e.ns
            elif e.name == unlock and e.fields[0] == out[name]:
                holds.append(e.ns - since.pop(e.tid))
        assert len(waits) == len(holds) == 2 * ROUNDS
        assert objs[name]["wait_ns"] == times(waits), name
        assert objs[name]["hold_ns"] == times(holds), name

def test_other_objects(contend):
    """The barrier (3 waits, all counted contended), the rwlock (read-locked, never waited),
    the semaphore (main blocked twice): exact counts; objects without a hold have zero hold
    times."""
    t, out, s, objs = contend
    assert sorted(objs) == ["big_lock", "done", "gate", "table_lock"]
    gate, table, done = objs["gate"], objs["table_lock"], objs["done"]
    assert (gate["kind"], gate["address"]) == ("barrier", out["gate"])
    assert (gate["acquisitions"], gate["contended"], gate["wait_ns"]["count"]) == (3, 3, 3)
    assert sorted(gate["threads"]) == ["main", "worker", "worker#2"]  # in the order they left
    assert (table["kind"], table["address"]) == ("rwlock", out["table_lock"])
    n = 2 * ROUNDS
    assert (table["acquisitions"], table["contended"]) == (n, 0)
    assert table["wait_ns"]["count"] == table["hold_ns"]["count"] == n
    assert sorted(table["threads"]) == ["worker", "worker#2"]
    assert (done["kind"], done["address"]) == ("sem", out["done"])
    assert (done["acquisitions"], done["contended"], done["wait_ns"]["count"]) == (2, 2, 2)
    assert done["threads"] == ["main"]
    zero = dict(count=0, total=0, mean=0, p50=0, p99=0, max=0)
    assert gate["hold_ns"] == done["hold_ns"] == zero


def test_threads(contend):
    """Per thread: name, lifetime (its first to its last event, exactly), blocked time (the sum
    of what it was blocked on), and on what: the workers on big_lock (their contended waits,
    within 5% of the program's measure) and the barrier, main on the barrier, the semaphore and
    its two joins ("thread worker"). Sorted by blocked time."""
    t, out, s, objs = contend
    events = parse_raw(view("--format=raw", t.path), keep_machine=True)
    assert s["events"] == len(events) and s["duration_ns"] == events[-1].ns
    tids = {int(out["tid_main"]): "main", int(out["tid_worker0"]): "worker",
            int(out["tid_worker1"]): "worker#2"}
    assert {th["tid"]: th["name"] for th in s["threads"]} == tids
    assert [th["blocked_ns"] for th in s["threads"]] == \
        sorted((th["blocked_ns"] for th in s["threads"]), reverse=True)
    on = {}
    for th in s["threads"]:
        mine = [e.ns for e in events if e.tid == th["tid"]]
        assert th["pid"] == int(out["tid_main"])
        assert th["lifetime_ns"] == mine[-1] - mine[0]
        assert th["blocked_ns"] == sum(b["ns"] for b in th["blocked_on"])
        on[th["name"]] = {(b["call"], b["object"]): b["ns"] for b in th["blocked_on"]}
    assert set(on["main"]) == {("pthread_barrier_wait", "gate"), ("sem_wait", "done"),
                               ("pthread_join", "thread worker"),
                               ("pthread_join", "thread worker#2")}
    for name in ("worker", "worker#2"):
        assert set(on[name]) == {("pthread_barrier_wait", "gate"),
                                 ("pthread_mutex_lock", "big_lock")}
    # The workers' contended waits: all of worker#2's, worker's but its first.
    w0, w1 = program_times(out, "wait", 0), program_times(out, "wait", 1)
    assert close(on["worker"][("pthread_mutex_lock", "big_lock")], sum(w0[1:]), ROUNDS - 1)
    assert close(on["worker#2"][("pthread_mutex_lock", "big_lock")], sum(w1), ROUNDS)
    # The objects' waits are the threads': the barrier's three, the semaphore's two (main's),
    # big_lock's but the first, uncontended one.
    assert sum(on[n][("pthread_barrier_wait", "gate")] for n in on) == \
        objs["gate"]["wait_ns"]["total"]
    assert on["main"][("sem_wait", "done")] == objs["done"]["wait_ns"]["total"]
    lock = ("pthread_mutex_lock", "big_lock")
    first = objs["big_lock"]["wait_ns"]["total"] - on["worker"][lock] - on["worker#2"][lock]
    assert 0 <= first <= int(out["wait_0_0"]) + PER_CALL
    # Lifetimes: a worker lived through its ROUNDS holds and ROUNDS waits at least.
    for name, tid in (("worker", "tid_worker0"), ("worker#2", "tid_worker1")):
        th = next(x for x in s["threads"] if x["tid"] == int(out[tid]))
        assert th["lifetime_ns"] >= (2 * ROUNDS - 1) * HOLD_MS * MS



def test_sites(contend):
    """Where the waits come from: per object, the call sites that waited (contended lock and
    semaphore waits, every barrier wait), most wait first, named contend.c:LINE with their
    return address; their waits and times add up to the object's contended ones."""
    t, out, s, objs = contend
    L = site_lines("contend")
    raw = parse_raw(view("--format=raw", t.path), keep_machine=True)
    returns = {e.fields[-1] for e in raw if e.name in SITES}
    for o in s["objects"]:
        assert [x["wait_ns"] for x in o["sites"]] == \
            sorted((x["wait_ns"] for x in o["sites"]), reverse=True)
        for x in o["sites"]:
            assert x["address"] in returns and x["waits"] >= 1, x
    big = objs["big_lock"]["sites"]
    assert [(x["site"], x["waits"]) for x in big] == [(f"contend.c:{L['worker_lock']}",
                                                      2 * ROUNDS - 1)]
    on = [b["ns"] for th in s["threads"] for b in th["blocked_on"] if b["object"] == "big_lock"]
    assert big[0]["wait_ns"] == sum(on)
    gate = {x["site"]: x for x in objs["gate"]["sites"]}
    assert {k: x["waits"] for k, x in gate.items()} == {f"contend.c:{L['worker_gate']}": 2,
                                                      f"contend.c:{L['main_gate']}": 1}
    assert sum(x["wait_ns"] for x in gate.values()) == objs["gate"]["wait_ns"]["total"]
    # done: main's two waits, at one line (an inlined function) but two return addresses.
    done = objs["done"]["sites"]
    assert {x["site"] for x in done} == {f"contend.c:{L['wait_done']}"}
    assert sum(x["waits"] for x in done) == 2
    assert sum(x["wait_ns"] for x in done) == objs["done"]["wait_ns"]["total"]
    assert objs["table_lock"]["sites"] == []


def test_sites_by_line(contend):
    """A source line is one call site, however many calls the compiler made of it."""
    objs = contend[3]
    assert [(x["site"], x["waits"]) for x in objs["done"]["sites"]] == \
        [(f"contend.c:{site_lines('contend')['wait_done']}", 2)]
    text = ptt_ok("stat", contend[0].path)
    line = next(x for x in text.splitlines() if x.startswith("  done: "))
    assert line.count("contend.c:") == 1, line

def test_schema(contend, names_trace):
    """The JSON of both traces (and with every option) validates against docs/stat.schema.json,
    with python3-jsonschema and with names_util's validator; documents that break the schema are
    refused by both."""
    try:
        import jsonschema
    except ImportError:  # CI must have it (scripts/test-deps); elsewhere, the next test checks
        if os.environ.get("CI"):
            pytest.fail("python3-jsonschema is missing: CI must install it")
        pytest.skip("python3-jsonschema is missing (Debian package python3-jsonschema)")
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    docs = [contend[2], names_trace[1],
            stat_json(names_trace[0].path, "--sort=name", "--top=3", "--kind=mutex,cond")]
    for doc in docs:
        assert schema_errors(SCHEMA, doc) == []
        validator.validate(doc)
    good = contend[2]
    bad = [dict(good, events="12"), {k: v for k, v in good.items() if k != "threads"},
           dict(good, extra=1)]
    for change in ({"kind": "queue"}, {"address": "0X12"}, {"acquisitions": -1},
                   {"wait_ns": dict(good["objects"][0]["wait_ns"], p50=1.5)},
                   {"threads": [1]}):
        bad.append(dict(good, objects=[dict(good["objects"][0], **change)]))
    th = good["threads"][0]
    bad.append(dict(good, threads=[dict(th, blocked_on=th["blocked_on"] * 2)]))
    bad.append(dict(good, threads=[dict(th, blocked_on=[{"call": "sem_wait", "ns": 1}])]))
    for doc in bad:
        assert schema_errors(SCHEMA, doc), doc
        assert not validator.is_valid(doc), doc


def test_schema_without_jsonschema(contend, names_trace):
    """names_util's validator alone (a machine without python3-jsonschema)."""
    for doc in (contend[2], names_trace[1]):
        assert schema_errors(SCHEMA, doc) == []
    assert schema_errors(SCHEMA, dict(contend[2], duration_ns=-1))



def test_schema_documented():
    """docs/stat.md names every key of the schema, and the schema every key ptt stat prints."""
    doc = (SOURCE / "docs" / "stat.md").read_text()
    keys = set()

    def walk(schema):
        for k, v in schema.get("properties", {}).items():
            keys.add(k)
            walk(v)
        if "items" in schema:
            walk(schema["items"])
        for v in schema.get("$defs", {}).values():
            walk(v)
    walk(SCHEMA)
    assert {"objects", "threads", "wait_ns", "hold_ns", "p99", "blocked_on", "sites"} <= keys
    for k in keys:
        assert f"`{k}`" in doc or f'"{k}"' in doc or f".{k}`" in doc, k

CSV_HEAD = ("kind,name,address,pid,acquisitions,contended,wait_total_ns,wait_mean_ns,wait_p50_ns,"
            "wait_p99_ns,wait_max_ns,hold_total_ns,hold_mean_ns,hold_p50_ns,hold_p99_ns,"
            "hold_max_ns,top_site")


def csv_rows(path, *opts):
    text = ptt_ok("stat", "--format=csv", *opts, path)
    assert text.splitlines()[0] == CSV_HEAD
    return list(csv.DictReader(io.StringIO(text)))


def as_csv(o):
    """A JSON object as ptt stat's CSV row says it."""
    row = {k: str(o[k]) for k in ("kind", "name", "address", "pid", "acquisitions", "contended")}
    for h in ("wait", "hold"):
        for k in ("total", "mean", "p50", "p99", "max"):
            row[f"{h}_{k}_ns"] = str(o[f"{h}_ns"][k])
    row["top_site"] = o["sites"][0]["site"] if o["sites"] else ""
    return row


@pytest.mark.parametrize("opts", [(), ("--sort=name",), ("--top=2", "--kind=mutex,sem")])
def test_csv(contend, names_trace, opts):
    """One row per object, the JSON's, in the same order."""
    for t in (contend[0], names_trace[0]):
        assert csv_rows(t.path, *opts) == [as_csv(o) for o in stat_json(t.path, *opts)["objects"]]


def test_csv_quotes(tmp_path):
    """Names with commas and quotes (name_api's rwlock: say "hi", C:\\dir) are CSV fields."""
    t = trace_prog(tmp_path, "name_api")
    rows = csv_rows(t.path)
    assert 'say "hi", C:\\dir' in [r["name"] for r in rows]
    assert [r["address"] for r in rows] == [o["address"] for o in stat_json(t.path)["objects"]]


def fmt_ns(ns):
    """A time as ptt stat's text prints it."""
    if ns < 10000:
        return f"{ns}ns"
    if ns < 10**7:
        return f"{ns / 1e3:.1f}us"
    if ns < 10**10:
        return f"{ns / 1e6:.1f}ms"
    return f"{ns / 1e9:.2f}s"


def test_text(contend, names_trace):
    """The text format: a title line, the objects (kind, name, counts and times as the JSON
    says), the call sites that waited most, who made others wait (test_blame.py), the threads
    (pid, tid, name, lifetime, blocked, what most), then blocked time and program per process."""
    for t, s in ((contend[0], contend[2]), names_trace):
        text = ptt_ok("stat", t.path)
        parts = text.split("\n\n")
        assert len(parts) == 5 + any(o["blame"] for o in s["objects"]), text
        if len(parts) == 6:
            assert parts.pop(3).startswith("who made others wait:\n")
        # Objects of two processes (names_prog forks): a pid column, and "(pid N)" in headings.
        several = len({o["pid"] for o in s["objects"]}) > 1
        assert several == (t is not contend[0])
        whose = {id(o): f" (pid {o['pid']})" if several else "" for o in s["objects"]}
        sites = parts.pop(2).splitlines()
        assert sites[0] == "call sites that waited most:"
        assert sites[1:] == [f"  {o['name']}{whose[id(o)]}: " + ", ".join(
            f"{x['site']} ({x['waits']} wait{'s' * (x['waits'] != 1)}, {fmt_ns(x['wait_ns'])})"
            for x in o["sites"])
            for o in s["objects"] if o["sites"]]
        assert parts[0] == f"{t.path}: {s['events']} events, {s['duration_ns'] / 1e9:.6f} s"
        head, *rows = parts[1].splitlines()
        assert head.split() == ["kind", *["pid"] * several, "object", "acquired", "waited",
                                "wait", "tot", "mean", "p99", "max", "hold", "tot", "hold", "p99",
                                "threads"]
        assert len(rows) == len(s["objects"])
        for row, o in zip(rows, s["objects"]):
            w, h = o["wait_ns"], o["hold_ns"]
            hold = [fmt_ns(h["total"]), fmt_ns(h["p99"])] if h["count"] else ["-", "-"]
            pid = [f"{o['pid']:<8}"] * several
            want = [o["kind"], *pid, o["name"], str(o["acquisitions"]), str(o["contended"]),
                    fmt_ns(w["total"]), fmt_ns(w["mean"]), fmt_ns(w["p99"]), fmt_ns(w["max"]),
                    *hold, ",".join(o["threads"])]
            assert row.startswith(" ".join([f"{o['kind']:<8}", *pid, f"{o['name']:<24} "])), row
            assert row.split() == " ".join(want).split(), row
        head, *rows = parts[2].splitlines()
        assert head.split() == ["pid", "tid", "thread", "lifetime", "blocked", "blocked", "most",
                                "on"]
        assert len(rows) == len(s["threads"])
        for row, th in zip(rows, s["threads"]):
            want = [str(th["pid"]), str(th["tid"]), th["name"], fmt_ns(th["lifetime_ns"]),
                    fmt_ns(th["blocked_ns"])]
            if th["blocked_on"]:
                b = max(th["blocked_on"], key=lambda b: b["ns"])
                want += [b["call"], b["object"], f"({fmt_ns(b['ns'])})"]
            assert row.split() == " ".join(want).split(), row
        head, *rows = parts[3].splitlines()
        assert head.split() == ["pid", "threads", "blocked", "program", "command", "line"]
        pids = list(dict.fromkeys(th["pid"] for th in s["threads"]))
        argv = t.argv[t.argv.index("--") + 1:]  # a fork runs it too
        program = os.path.basename(argv[0])
        assert [r.split() for r in rows] == [
            [str(p), str(sum(th["pid"] == p for th in s["threads"])),
             fmt_ns(sum(th["blocked_ns"] for th in s["threads"] if th["pid"] == p)), program,
             *argv]
            for p in pids]
        assert s["processes"] == [
            {"pid": p, "threads": sum(th["pid"] == p for th in s["threads"]),
             "blocked_ns": sum(th["blocked_ns"] for th in s["threads"] if th["pid"] == p),
             "program": program, "command": " ".join(argv)} for p in pids]


SORT_KEYS = {"wait": lambda o: -o["wait_ns"]["total"], "hold": lambda o: -o["hold_ns"]["total"],
             "acquisitions": lambda o: -o["acquisitions"], "contended": lambda o: -o["contended"],
             "name": lambda o: o["name"].encode()}


@pytest.mark.parametrize("key", list(SORT_KEYS) + [None])
def test_sort(contend, names_trace, key):
    """--sort=KEY (default wait): largest first (name: in byte order), then by address, then by
    pid (names_prog has a queue_lock in each of its two processes, at the same address); the
    same objects whatever the order."""
    for t, full in ((contend[0], contend[2]), names_trace):
        s = stat_json(t.path, f"--sort={key}") if key else full
        objs = s["objects"]
        want = sorted(objs, key=lambda o: (SORT_KEYS[key or "wait"](o), int(o["address"], 16),
                                           o["pid"]))
        assert objs == want
        assert sorted(map(json.dumps, objs)) == sorted(map(json.dumps, full["objects"]))
        assert s["threads"] == full["threads"]


def test_sort_orders(contend):
    """The orders of contend's objects, from what the program did: by wait, the semaphore main
    waited on (both workers' runs) first; by hold, big_lock (all the holds); by acquisitions and
    name, known."""
    t = contend[0]
    names = lambda *o: [x["name"] for x in stat_json(t.path, *o)["objects"]]  # noqa: E731
    assert names("--sort=wait")[0] == "done"
    assert names("--sort=hold")[:2] == ["big_lock", "table_lock"]
    assert names("--sort=contended") == ["big_lock", "gate", "done", "table_lock"]
    assert names("--sort=name") == ["big_lock", "done", "gate", "table_lock"]
    acq = names("--sort=acquisitions")
    assert acq[2:] == ["gate", "done"] and sorted(acq[:2]) == ["big_lock", "table_lock"]


@pytest.mark.parametrize("n", [1, 2, 3, 100])
def test_top(names_trace, n):
    """--top=N: the first N objects and threads of the whole list (and the first N holders of
    each: test_blame.py), in every format."""
    t, full = names_trace
    s = stat_json(t.path, f"--top={n}")
    assert s["objects"] == [dict(o, blame=o["blame"][:n]) for o in full["objects"][:n]]
    assert s["threads"] == full["threads"][:n]
    assert (s["events"], s["duration_ns"]) == (full["events"], full["duration_ns"])
    assert len(csv_rows(t.path, f"--top={n}")) == min(n, len(full["objects"]))
    parts = ptt_ok("stat", f"--top={n}", t.path).split("\n\n")
    if parts[2].startswith("call sites"):
        sites = parts.pop(2).splitlines()[1:]
        assert len(sites) == sum(bool(o["sites"]) for o in s["objects"])
    if parts[2].startswith("who made others wait"):
        parts.pop(2)
    assert len(parts[1].splitlines()) == 1 + min(n, len(full["objects"]))
    assert len(parts[2].splitlines()) == 1 + min(n, len(full["threads"]))
    assert parts[2].startswith("pid      tid      thread")


@pytest.mark.parametrize("kinds", ["mutex", "cond", "barrier,sem", "rwlock", "spin",
                                   "mutex,cond,sem,barrier,rwlock,spin", "all"])
def test_kind(contend, names_trace, kinds):
    """--kind=K,...: the objects of those kinds, in the same order; threads unchanged."""
    want = set(kinds.split(",")) if kinds != "all" else None
    for t, full in ((contend[0], contend[2]), names_trace):
        s = stat_json(t.path, f"--kind={kinds}")
        assert s["objects"] == [o for o in full["objects"] if not want or o["kind"] in want]
        assert s["threads"] == full["threads"]
    # Every kind is in one of the two traces but spin (not used).
    seen = {o["kind"] for s in (contend[2], names_trace[1]) for o in s["objects"]}
    assert seen == {"mutex", "cond", "barrier", "sem", "rwlock"}


def test_names_in_stat(names_trace):
    """Objects and threads by name: symbols with member and element paths, heap objects by the
    line of their init or first use, ptt_name/ptt_namef, the barrier on main's stack; the
    forked child's queue_lock and main thread under its own pid."""
    t, s = names_trace
    out, L = t.out, site_lines("names_prog")
    pid, child = int(out["tid_main"]), int(out["child"])
    want = {("mutex", "queue_lock", pid, out["queue_lock"]),
            ("mutex", "queue_lock", child, out["queue_lock"]),
            ("mutex", "cache.lock", pid, out["cache_lock"]),
            ("cond", "cache.cond", pid, out["cache_cond"]),
            ("mutex", "locks[2]", pid, out["locks2"]),
            ("mutex", "shards[1].lock", pid, out["shard1"]),
            ("mutex", "addr_named_lock", pid, out["addr_named"]),
            ("mutex", "symbol_named_lock", pid, out["symbol_named"]),
            ("mutex", "renamed by ptt_name", pid, out["renamed"]),
            ("mutex", f"mutex@names_prog.c:{L['heap_init']}", pid, out["heap"]),
            ("mutex", f"mutex@names_prog.c:{L['main_lock_fresh']}", pid, out["fresh"]),
            ("mutex", "job 7 lock", pid, out["job"]),
            ("barrier", f"barrier@names_prog.c:{L['gate_init']}", pid, out["gate"]),
            ("sem", "items", pid, out["items"])}
    assert {(o["kind"], o["name"], o["pid"], o["address"]) for o in s["objects"]} == want
    threads = {(th["pid"], th["tid"]): th["name"] for th in s["threads"]}
    assert threads == {(pid, pid): "main", (pid, int(out["tid_producer0"])): "producer",
                       (pid, int(out["tid_producer1"])): "producer#2",
                       (pid, int(out["tid_consumer"])): "eater",
                       (pid, int(out["tid_idle"])): "sleeper", (child, child): "main"}
    users = {o["name"]: o["threads"] for o in s["objects"] if o["pid"] == pid}
    # Both producers start before either locks it: which returned first is the scheduler's.
    assert sorted(users["locks[2]"]) == ["producer", "producer#2"]
    assert users["cache.lock"] == ["eater", "producer"]
    assert users["addr_named_lock"] == ["sleeper"]


def test_names_file(names_trace, tmp_path):
    """--names=FILE: by address and by symbol (in both processes), over the symbol and the
    init line; ptt_name wins over it."""
    t, _ = names_trace
    out = t.out
    f = tmp_path / "names"
    f.write_text(f"# names_prog's objects\n{out['addr_named']}  name by address  \n"
                 "symbol_named_lock name by symbol\nqueue_lock the queue\n"
                 f"{out['heap']} heap by file\nrenamed_lock loses to ptt_name\n")
    s = stat_json(t.path, f"--names={f}")
    names = {(o["pid"], o["address"]): o["name"] for o in s["objects"]}
    pid, child = int(out["tid_main"]), int(out["child"])
    assert names[(pid, out["addr_named"])] == "name by address"
    assert names[(pid, out["symbol_named"])] == "name by symbol"
    assert names[(pid, out["queue_lock"])] == names[(child, out["queue_lock"])] == "the queue"
    assert names[(pid, out["heap"])] == "heap by file"
    assert names[(pid, out["renamed"])] == "renamed by ptt_name"
    assert names[(pid, out["locks2"])] == "locks[2]"
    rows = {r["address"]: r["name"] for r in csv_rows(t.path, f"--names={f}")}
    assert rows[out["addr_named"]] == "name by address"


@pytest.mark.parametrize("opt,word", [("--format=xml", "xml"), ("--sort=time", "time"),
                                      ("--top=0", "--top=0"), ("--top=x", "--top=x"),
                                      ("--top=-3", "--top=-3"), ("--kind=mutex,bogus", "bogus"),
                                      ("--names=/nonexistent", "/nonexistent"),
                                      ("--bogus", "--bogus")])
def test_bad_options(names_trace, opt, word):
    """A bad option: exit status 2, one line on stderr naming it, nothing on stdout."""
    line = ptt_usage_error("stat", opt, names_trace[0].path, cmd="stat")
    assert word in line, line
    assert ptt_usage_error("stat", names_trace[0].path, opt, cmd="stat") == line


def test_bad_names_file(names_trace, tmp_path):
    f = tmp_path / "names"
    f.write_text("# fine\nqueue_lock the queue\n\nlonely\n")
    line = ptt_usage_error("stat", f"--names={f}", names_trace[0].path, cmd="stat")
    assert line == f"ptt stat: {f}:4: give 'ADDRESS NAME' or 'SYMBOL NAME'"


def test_usage(names_trace):
    assert "ptt stat" in ptt_ok("stat", "--help")
    ptt_usage_error("stat", cmd="stat")
    ptt_usage_error("stat", names_trace[0].path, names_trace[0].path, cmd="stat")
    ptt_usage_error("stat", "/nonexistent.ptt", cmd="stat")
    ptt_usage_error("stat", names_trace[0].path, "--names", cmd="stat")


def test_many_objects(tmp_path):
    """A trace of many mutexes each used once (many_mutexes, as a table of per-row locks): every
    one is in ptt stat, each with its one acquisition and its hold, and ptt stat's memory grows
    little with them: each histogram of an object used a few times keeps its buckets in place
    (two arrays of 2 KB an object before)."""
    few = ptt_trace(tmp_path, [prog("many_mutexes"), 2000], name="few.ptt").path
    many = ptt_trace(tmp_path, [prog("many_mutexes"), 20000], name="many.ptt").path
    p = run([PTT, "stat", "--format=csv", many])
    assert p.returncode == 0, p.stderr
    rows = [r for r in csv.DictReader(io.StringIO(p.stdout)) if r["kind"] == "mutex"]
    assert len(rows) == 20000 and len({r["address"] for r in rows}) == 20000
    for r in rows:
        assert (r["acquisitions"], r["contended"]) == ("1", "0"), r
        assert int(r["hold_p50_ns"]) <= int(r["hold_max_ns"]) == int(r["hold_total_ns"]), r
    if sanitized():
        return  # the sanitizers' allocator keeps what is freed
    # 86 MiB before (18,000 more objects), 16 MiB after
    grown = peak_kib("stat", many) - peak_kib("stat", few)
    assert grown < 40 * 1024, f"ptt stat grew by {grown} KiB for 18,000 more objects"



def test_join_of_a_reused_handle(tmp_path):
    """main joins thread slow (200 ms), then eight threads made after it that glibc gives the
    same pthread_t: ptt stat and the report charge the long join to thread slow, by the thread
    the handle named when the join ended, not by the handle's last thread."""
    t = trace_prog(tmp_path, "join_reuse")
    assert int(t.out["reused"]) >= 1  # glibc reused the handle: the case at stake
    (main,) = [th for th in stat_json(t.path)["threads"] if th["name"] == "main"]
    joins = {b["object"]: b["ns"] for b in main["blocked_on"] if b["call"] == "pthread_join"}
    assert max(joins, key=joins.get) == "thread slow", joins
    assert joins["thread slow"] >= 200 * MS  # slow sleeps once main is in its join
    text = ptt_ok("stat", t.path)
    assert re.search(r"^\d+ +\d+ +main .* pthread_join thread slow \(", text, re.M), text
    out = tmp_path / "r.html"
    assert run([PTT, "report", t.path, "-o", out]).returncode == 0
    data = page_data(out.read_text())
    longest = max(data["spans"], key=lambda s: s[3])
    assert data["span_objects"][longest[4]] == "thread slow"


def test_once_that_runs_its_routine(tmp_path):
    """A pthread_once that runs the init routine is the thread's own work, not a wait: main's
    three (a join of 100 ms inside one, 100 ms of computing in another, a sleep of 150 ms in the
    third) count only the join, in stat and in the report (before: 452 ms blocked in a life of
    352); thread waiter, which waits for main's routine, is blocked on that once."""
    t = trace_prog(tmp_path, "once_work")
    threads = {th["name"]: th for th in stat_json(t.path)["threads"]}
    main, waiter = threads["main"], threads["waiter"]
    assert {b["call"] for b in main["blocked_on"]} == {"pthread_join"}, main["blocked_on"]
    # the join (the sleeper sleeps once main is in it), not the 250 ms the routines took
    assert 100 * MS <= main["blocked_ns"] <= main["lifetime_ns"] - 250 * MS, main
    assert [(b["call"], b["object"]) for b in waiter["blocked_on"]] == [
        ("pthread_once", "once_slow")]
    assert waiter["blocked_ns"] >= 100 * MS
    out = tmp_path / "r.html"
    assert run([PTT, "report", t.path, "-o", out]).returncode == 0
    data = page_data(out.read_text())
    once_spans = [sp for sp in data["spans"] if data["span_objects"][sp[4]].startswith("once_")]
    assert [data["span_objects"][sp[4]] for sp in once_spans] == ["once_slow"], once_spans
    # The thread column is as wide as its widest name: the columns after it stay in line.
    parts = ptt_ok("stat", t.path).split("\n\n")
    (table,) = [part.splitlines() for part in parts if part.lstrip().startswith("pid      tid")]
    assert any("sleeper_of_a_hundred_milliseconds " in line for line in table), table
    # where each row's lifetime ends (pid, tid, thread, lifetime: names without spaces here)
    ends = {re.match(r"\S+\s+\S+\s+\S+\s+\S+", line).end() for line in table}
    assert len(ends) == 1, table


def test_wait_never_returned(tmp_path):
    """A condvar wait still open when the program is killed (a lost wake-up, --kill-on-hang): a
    wait until then, no acquisition (docs/stat.md)."""
    out = tmp_path / "t.ptt"
    p = run([PTT, "trace", "-q", "-o", out, "--hang-timeout=0.5", "--kill-on-hang", "--",
             PROGS / "check" / "check_lost_wakeup"])
    assert p.returncode == 137, p.stderr
    (c,) = [o for o in stat_json(out)["objects"] if o["kind"] == "cond"]
    assert (c["name"], c["acquisitions"], c["contended"], c["wait_ns"]["count"]) == ("c", 0, 0, 1)
    assert c["wait_ns"]["total"] >= 500 * 10**6  # until the kill, after the hang timeout


def test_light_level_said(tmp_path):
    """A trace of --level=light has no waits: ptt stat says so on stderr (its columns would seem
    to say nobody waited), and prints its tables as usual; a full trace gets no such line."""
    light = ptt_trace(tmp_path, [prog("flood"), 2, 100], opts=["--level=light"], name="l.ptt")
    full = ptt_trace(tmp_path, [prog("flood"), 2, 100], name="f.ptt")
    for t, said in ((light, True), (full, False)):
        p = run([PTT, "stat", t.path])
        assert p.returncode == 0 and p.stdout.startswith(f"{t.path}: "), p
        assert p.stderr == (f"ptt stat: {t.path} was recorded with --level=light: waits inside "
                            "lock calls are not recorded, so contention and who made others wait "
                            "are incomplete\n" if said else ""), p.stderr


def test_process_table_forked_child(tmp_path):
    """A forked child runs the command line its parent ran when it forked, whatever the parent
    execs later: the subshell of sh -c '(...) & exec sleep' has the shell's, its parent sleep's."""
    script = "(read x </dev/null; true) & exec /bin/sleep 0.2"
    t = ptt_trace(tmp_path, ["sh", "-c", script])
    procs = sorted(stat_json(t.path)["processes"], key=lambda p: p["pid"])
    assert [(p["program"], p["command"]) for p in procs][0] == ("sleep", "/bin/sleep 0.2"), procs
    assert [p["command"] for p in procs][1:] == [f"sh -c '{script}'"], procs


def test_process_table_names_programs(tmp_path):
    """The process table names each process's program (its last exec) and its command line, so
    that the processes of a script are told apart: sh runs flood, counts and flood again."""
    f, c = prog("flood"), prog("counts")
    t = ptt_trace(tmp_path, ["sh", "-c", f"{f} 1 10; {c} 1 1 1 >/dev/null; {f} 1 10"])
    text = ptt_ok("stat", t.path).splitlines()
    head = text.index("pid       threads    blocked  program  command line")
    rows = [line.split(None, 4) for line in text[head + 1:] if line.strip()]
    sh = os.path.basename(os.path.realpath("/bin/sh"))  # dash on Debian
    by_pid = [r[3:] for r in sorted(rows, key=lambda r: int(r[0]))]  # in the order they started
    # Each with the command line it ran with, as a shell reads it back.
    assert by_pid == [[sh, f"sh -c '{f} 1 10; {c} 1 1 1 >/dev/null; {f} 1 10'"],
                      ["flood", f"{f} 1 10"], ["counts", f"{c} 1 1 1"], ["flood", f"{f} 1 10"]], rows
