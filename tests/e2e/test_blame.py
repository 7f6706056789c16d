"""Who made others wait (docs/stat.md): the waiting for a lock charged to the threads that held it,
by the call sites where they took and released it, in ptt stat (JSON, text, --top) and ptt report
(tests/progs/blame.c: known holders, waiters and lines; tests/progs/abba.c: holds never released).
Times are never compared with a duration: the time charged must add up to the waits ptt stat
itself counts."""

import json

import pytest

from conftest import SOURCE, parse_output, prog, ptt_trace, trace_prog
from names_util import ptt_ok, schema_errors, site_lines, stat_json
from test_report import Page, browse, chromium, page_data, report  # noqa: F401 (a fixture)

SCHEMA = json.loads((SOURCE / "docs" / "stat.schema.json").read_text())


@pytest.fixture(scope="module")
def blame(tmp_path_factory):
    """blame traced: (Traced, its printed values, ptt stat's JSON, the objects by name)."""
    t = trace_prog(tmp_path_factory.mktemp("blame"), "blame")
    s = stat_json(t.path)
    return t, t.out, s, {o["name"]: o for o in s["objects"]}


def holders(o):
    """An object's holders: (tid, taken_at, released_at, held_at_end, waits), as listed."""
    return [(b["tid"], b["taken_at"], b["released_at"], b["held_at_end"], b["waits"])
            for b in o["blame"]]


def blocked_on(s, name, tid=None):
    """The time the threads (or thread tid) were blocked in a lock of object name."""
    return sum(b["ns"] for th in s["threads"] if tid is None or th["tid"] == tid
               for b in th["blocked_on"] if b["object"] == name and "lock" in b["call"])


def charged(o, tid):
    return sum(b["wait_ns"] for b in o["blame"] if b["tid"] == tid)


def first_waiter(t, out):
    """The waiter that got big_lock first, from the trace (the other waited for it)."""
    tids = {int(out["tid_waiter0"]), int(out["tid_waiter1"])}
    for e in t.events:
        if e.name == "MUTEX_LOCK_OUT" and e.tid in tids:
            return e.tid
    raise AssertionError("no waiter got big_lock")


def test_mutex_holders(blame):
    """big_lock: holder made both waiters wait, from its lock line to its unlock line; the waiter
    that got it first made the other wait once more; second made main wait. Nobody else."""
    t, out, s, objs = blame
    L, o = site_lines("blame"), objs["big_lock"]
    at = lambda key: f"blame.c:{L[key]}"  # noqa: E731
    tid = lambda key: int(out[f"tid_{key}"])  # noqa: E731
    first = first_waiter(t, out)
    assert o["contended"] == 3
    assert sorted(holders(o)) == sorted([
        (tid("holder"), at("holder_lock"), at("holder_unlock"), False, 2),
        (first, at("waiter_lock"), at("waiter_unlock"), False, 1),
        (tid("second"), at("second_lock"), at("second_unlock"), False, 1)])
    names = {b["tid"]: b["holder"] for b in o["blame"]}
    assert names[tid("holder")] == "holder" and names[tid("second")] == "second"
    assert names[first] == ("waiter" if first == tid("waiter0") else "waiter#2")
    for b in o["blame"]:
        assert int(b["taken_address"], 16) and int(b["released_address"], 16)
    assert [b["wait_ns"] for b in o["blame"]] == sorted((b["wait_ns"] for b in o["blame"]),
                                                        reverse=True)


def test_mutex_time_adds_up(blame):
    """The time charged is the time waited, as ptt stat counts it: in all, as the call sites' and
    the waiters' blocked time say; main's wait is second's alone; the waiters' the others'."""
    t, out, s, objs = blame
    o = objs["big_lock"]
    total = sum(b["wait_ns"] for b in o["blame"])
    # main blocked on 8 (call, object) pairs, and blocked_on keeps about the 4 largest: its
    # short wait for big_lock may be left out then, for four longer joins (docs/stat.md).
    mine = charged(o, int(out["tid_second"]))
    (main,) = [th for th in s["threads"] if th["tid"] == int(out["tid_main"])]
    kept = blocked_on(s, "big_lock", int(out["tid_main"]))
    if not kept:
        assert len(main["blocked_on"]) == 4 and min(b["ns"] for b in main["blocked_on"]) >= mine
    assert kept in (0, mine)
    assert total == sum(x["wait_ns"] for x in o["sites"]) == blocked_on(s, "big_lock") + mine - kept
    waiters = [int(out["tid_waiter0"]), int(out["tid_waiter1"])]
    assert total - charged(o, int(out["tid_second"])) == \
        sum(blocked_on(s, "big_lock", w) for w in waiters)
    assert sum(b["waits"] for b in o["blame"]) == 4  # the second waiter's counts for two holders


def test_rwlock_readers_share(blame):
    """table_lock: the writer waited for both readers: each is charged once, from its read lock
    to its unlock, and together the writer's whole wait."""
    t, out, s, objs = blame
    L, o = site_lines("blame"), objs["table_lock"]
    sites = (f"blame.c:{L['reader_lock']}", f"blame.c:{L['reader_unlock']}", False, 1)
    r0, r1 = int(out["tid_reader0"]), int(out["tid_reader1"])
    assert sorted(holders(o)) == sorted([(r0, *sites), (r1, *sites)])
    assert {b["tid"]: b["holder"] for b in o["blame"]} == {r0: "reader", r1: "reader#2"}
    assert sum(b["wait_ns"] for b in o["blame"]) == blocked_on(s, "table_lock") == \
        blocked_on(s, "table_lock", int(out["tid_writer"])) > 0
    # reader#2 held it alone after reader let go: it has the larger part.
    assert charged(o, r1) > charged(o, r0)


def test_schema_and_others(blame):
    """The JSON is valid; objects that are not locks, or never waited for, have no holders."""
    s = blame[2]
    assert schema_errors(SCHEMA, s) == []
    for o in s["objects"]:
        assert bool(o["blame"]) == (o["name"] in ("big_lock", "table_lock")), o["name"]


def fmt_ns(ns):
    if ns < 10000:
        return f"{ns}ns"
    if ns < 10**7:
        return f"{ns / 1e3:.1f}us"
    if ns < 10**10:
        return f"{ns / 1e6:.1f}ms"
    return f"{ns / 1e9:.2f}s"


def text_lines(o, n=None):
    """The text lines ptt stat prints for the holders of o (its first n)."""
    lines = [f"  {o['name']}:"]
    for b in o["blame"][:n]:
        w = f"{b['waits']} wait{'' if b['waits'] == 1 else 's'}, {fmt_ns(b['wait_ns'])}"
        if not b["tid"]:
            lines.append(f"    no holder known: {w}")
            continue
        end = ("still held at the end" if b["held_at_end"]
               else f"released it at {b['released_at'] or '?'}")
        lines.append(f"    {b['holder']} (tid {b['tid']}) took it at {b['taken_at'] or '?'}, "
                     f"{end}: {w}")
    return lines


def blame_section(text):
    parts = text.split("\n\n")
    found = [p for p in parts if p.startswith("who made others wait:\n")]
    assert len(found) == 1, text
    assert parts.index(found[0]) == 3 and parts[2].startswith("call sites that waited most:")
    return found[0].splitlines()[1:]


def test_text(blame):
    """The text section, after the call sites: per object shown, its holders as the JSON says."""
    t, s = blame[0], blame[2]
    want = [line for o in s["objects"] if o["blame"] for line in text_lines(o)]
    assert blame_section(ptt_ok("stat", t.path)) == want


@pytest.mark.parametrize("n", [1, 2])
def test_top(blame, n):
    """--top=N: the first N holders of each of the first N objects."""
    t, s = blame[0], blame[2]
    top = stat_json(t.path, f"--top={n}")
    assert [o["blame"] for o in top["objects"]] == [o["blame"][:n] for o in s["objects"][:n]]
    want = [line for o in s["objects"][:n] if o["blame"] for line in text_lines(o, n)]
    assert blame_section(ptt_ok("stat", f"--top={n}", t.path)) == want


def test_held_at_end(tmp_path):
    """abba, killed in its deadlock: each mutex is charged to the thread that took it and still
    held it when the trace ended, for the other thread's whole wait."""
    t = ptt_trace(tmp_path, [prog("abba")], opts=["--hang-timeout=1", "--kill-on-hang"],
                  rc=137)
    out = parse_output(t.stdout)[1]
    s = stat_json(t.path)
    objs = {o["address"]: o for o in s["objects"]}
    t1, t2 = int(out["tid_t1"]), int(out["tid_t2"])
    for addr, holder, waiter in ((out["A"], t1, t2), (out["B"], t2, t1)):
        o = objs[addr]
        assert [(b["tid"], b["released_at"], b["released_address"], b["held_at_end"], b["waits"])
                for b in o["blame"]] == [(holder, "", "0x0", True, 1)]
        assert o["blame"][0]["taken_at"].startswith("abba.c:")
        assert o["blame"][0]["wait_ns"] == blocked_on(s, o["name"], waiter) > 0
    text = ptt_ok("stat", t.path)
    assert text.count("still held at the end: 1 wait,") == 2
    assert schema_errors(SCHEMA, s) == []


def report_rows(s):
    """What the report's table holds: every holder of the first 25 objects, most time first."""
    rows = [dict(b, object=o["name"], kind=o["kind"], pid=o["pid"])
            for o in s["objects"][:25] for b in o["blame"]]
    rows.sort(key=lambda r: (-r["wait_ns"], -r["waits"]))
    for r in rows:
        del r["taken_address"], r["released_address"]
    return rows


def test_report_data(blame, tmp_path):
    """ptt report's data for its table "who made others wait": ptt stat's holders."""
    t, s = blame[0], blame[2]
    out = tmp_path / "r.html"
    report(t.path, out)
    d = page_data(out.read_text())
    want = report_rows(s)
    assert d["nblame"] == len(want) == 5
    key = lambda r: (-r["wait_ns"], -r["waits"], r["tid"])  # noqa: E731 (ties: any order)
    assert sorted(d["blame"], key=key) == sorted(want, key=key)
    assert [r["wait_ns"] for r in d["blame"]] == [r["wait_ns"] for r in want]


def test_report_table(blame, tmp_path, chromium):  # noqa: F811
    """The page's table "who made others wait", as built by its script: a row per holder."""
    t, s = blame[0], blame[2]
    out = tmp_path / "r.html"
    report(t.path, out)
    dom, _ = browse(chromium, out, tmp_path, "--dump-dom", "--window-size=1400,1000")
    rows = Page(dom).find("tr", "blame")
    got = sorted((r["data-object"], int(r["data-tid"]), r["data-taken"], r["data-released"],
                  r["data-held-at-end"], int(r["data-waits"]), int(r["data-wait"])) for r in rows)
    assert got == sorted((r["object"], r["tid"], r["taken_at"], r["released_at"], "false",
                          r["waits"], r["wait_ns"]) for r in report_rows(s))
