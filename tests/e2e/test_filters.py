"""ptt view's filters, alone and combined: --pid, --tid (by number and by name), --object (by
address and by name), --event (names, globs, lists, !exclusions), --kind, --from/--to. Each
filtered output is compared with the events of the unfiltered trace that satisfy the filter,
computed here from its raw and JSON views (names_prog: two processes, named threads and
objects). Bad values: exit status 2, one line on stderr."""

import collections
import fnmatch

import pytest

from conftest import PTT, run, trace_prog, view
from names_util import obj_fields, ptt_usage_error, raw_ns, site_lines, view_json

L = site_lines("names_prog")


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """names_prog traced: (Traced, [(raw line, JSON event)] of the whole trace)."""
    t = trace_prog(tmp_path_factory.mktemp("filters"), "names_prog")
    raw = view("--format=raw", t.path).splitlines()
    events = view_json(t.path)
    assert len(raw) == len(events)
    for line, e in zip(raw, events):
        assert line.split(":", 1)[1].startswith(e["event"] + " : ")
    return t, list(zip(raw, events))


def check(trace, opts, pred, some=True):
    """ptt view --format=raw OPTS prints the lines of the events that satisfy pred, in order;
    some: at least one, and not all."""
    t, recs = trace
    want = [line for line, e in recs if pred(e)]
    got = view("--format=raw", *opts, t.path).splitlines()
    assert got == want, opts
    if some:
        assert 0 < len(want) < len(recs), (opts, len(want))
    return want


def selects_none(trace, opts, warnings):
    """ptt view OPTS prints nothing, and says which values matched no event."""
    t, _ = trace
    p = run([PTT, "view", *opts, t.path])
    assert (p.returncode, p.stdout) == (0, "")
    assert p.stderr.splitlines() == [f"ptt view: {w}" for w in warnings]


def on_object(e, value, by_name=False):
    """Whether an object field of e is value (an address, or a name)."""
    return any((e.get("names", {}).get(f) if by_name else e["fields"][f]) == value
               for f in obj_fields(e["event"]) if f in e["fields"])


def test_pid(trace):
    t, recs = trace
    pid, child = int(t.out["tid_main"]), int(t.out["child"])
    check(trace, [f"--pid={pid}"], lambda e: e["pid"] == pid)
    check(trace, [f"--pid={child}"], lambda e: e["pid"] == child)
    check(trace, [f"--pid={pid},{child}"], lambda e: True, some=False)
    check(trace, ["--pid=1"], lambda e: False, some=False)


def test_tid_number(trace):
    t, _ = trace
    o = t.out
    for key in ("tid_main", "tid_producer0", "tid_consumer", "tid_idle", "child"):
        check(trace, [f"--tid={o[key]}"], lambda e: e["tid"] == int(o[key]))
    both = {int(o["tid_producer0"]), int(o["tid_producer1"])}
    check(trace, [f"--tid={o['tid_producer0']},{o['tid_producer1']}"], lambda e: e["tid"] in both)


@pytest.mark.parametrize("name", ["main", "producer", "producer#2", "eater", "consumer",
                                  "sleeper"])
def test_tid_name(trace, name):
    """By name: the events of the threads of that name when they happened (main: in both
    processes; the consumer is "consumer" until its pthread_setname_np returns, "eater"
    after)."""
    check(trace, [f"--tid={name}"], lambda e: e.get("thread") == name)


def test_tid_name_values(trace):
    """What names select, from the program's thread ids: main is both processes' main threads,
    eater is the consumer from its rename on."""
    t, recs = trace
    o = t.out
    mains = check(trace, ["--tid=main"], lambda e: e.get("thread") == "main")
    assert {int(line.split(" : ")[2]) for line in mains} == {int(o["tid_main"]), int(o["child"])}
    eater = check(trace, ["--tid=eater"], lambda e: e.get("thread") == "eater")
    cons = [line for line, e in recs if e["tid"] == int(o["tid_consumer"])]
    first = next(i for i, line in enumerate(cons) if "THREAD_SETNAME_NP_OUT" in line)
    assert eater == cons[first:]
    check(trace, [f"--tid=producer#2,{o['tid_producer0']}"],
          lambda e: e["tid"] in (int(o["tid_producer0"]), int(o["tid_producer1"])))
    selects_none(trace, ["--tid=nobody"], [
        "--tid=nobody: no thread of that name in the events read (a thread's name is the one "
        "ptt view shows; the kernel keeps the first 15 bytes of a name)"])


@pytest.mark.parametrize("key", ["queue_lock", "cache_lock", "cache_cond", "items", "heap",
                                 "job", "gate", "shard1"])
def test_object_address(trace, key):
    """By address: every event with that object in an object field (a condvar wait's mutex too;
    the forked child's queue_lock is at the same address)."""
    t, _ = trace
    addr = t.out[key]
    check(trace, [f"--object={addr}"], lambda e: on_object(e, addr))


@pytest.mark.parametrize("name", ["queue_lock", "cache.lock", "cache.cond", "locks[2]",
                                  "shards[1].lock", "items", "renamed by ptt_name", "job 7 lock",
                                  f"mutex@names_prog.c:{L['heap_init']}",
                                  f"barrier@names_prog.c:{L['gate_init']}"])
def test_object_name(trace, name):
    """By name: the events whose object has that name when they happen."""
    check(trace, [f"--object={name}"], lambda e: on_object(e, name, by_name=True))


def test_object_name_is_address(trace):
    """A name that never changes selects what its address does; "job 7 lock" (ptt_namef after
    the init) the job mutex's events but its init; a list mixes names and addresses."""
    t, recs = trace
    o = t.out
    for name, key in (("queue_lock", "queue_lock"), ("cache.lock", "cache_lock"),
                      ("locks[2]", "locks2"), ("shards[1].lock", "shard1")):
        assert view("--format=raw", f"--object={name}", t.path) == \
            view("--format=raw", f"--object={o[key]}", t.path)
    job = check(trace, ["--object=job 7 lock"], lambda e: on_object(e, "job 7 lock", True))
    by_addr = check(trace, [f"--object={o['job']}"], lambda e: on_object(e, o["job"]))
    assert [x.split(":")[1].split()[0] for x in by_addr if x not in job] == \
        ["MUTEX_INIT_IN", "MUTEX_INIT"]
    check(trace, [f"--object=cache.cond,{o['items']}"],
          lambda e: on_object(e, o["cache_cond"]) or on_object(e, o["items"]))
    selects_none(trace, ["--object=0x1", "--tid=99999999"], [
        "--tid=99999999: no event of that thread was read",
        "--object=0x1: no event on that object was read"])


@pytest.mark.parametrize("spec", ["MUTEX_LOCK_IN", "MUTEX_*", "*_OUT", "MUTEX_LOCK_IN,COND_*",
                                  "THREAD_START,THREAD_END", "?EM_*", "PROCESS_*,OBJECT_NAME"])
def test_event(trace, spec):
    """--event: names and globs (fnmatch), a comma list of either."""
    pats = spec.split(",")
    check(trace, [f"--event={spec}"],
          lambda e: any(fnmatch.fnmatchcase(e["event"], p) for p in pats))


@pytest.mark.parametrize("spec", ["!MODULE_LOAD", "MUTEX_*,!MUTEX_UNLOCK_*", "!*_IN,!*_OUT",
                                  "*_IN,!MUTEX_*,!SEM_*"])
def test_event_not(trace, spec):
    """--event=!NAME or !GLOB leaves those events out: an event is printed when it matches one
    of the others (any, when there are none) and none of the !s."""
    pats = spec.split(",")
    yes = [p for p in pats if not p.startswith("!")]
    no = [p[1:] for p in pats if p.startswith("!")]
    check(trace, [f"--event={spec}"],
          lambda e: (not yes or any(fnmatch.fnmatchcase(e["event"], p) for p in yes))
          and not any(fnmatch.fnmatchcase(e["event"], p) for p in no))


@pytest.mark.parametrize("kinds", ["mutex", "cond,barrier", "sem", "thread", "meta",
                                   "sched,mutex"])
def test_kind(trace, kinds):
    """--kind: the events of those classes."""
    want = set(kinds.split(","))
    check(trace, [f"--kind={kinds}"], lambda e: e["class"] in want)


def test_from_to(trace):
    """--from and --to, in seconds since the start of the trace, bounds included: an event's
    own time (9 decimals) selects it."""
    t, recs = trace
    n = len(recs)
    lo, hi = recs[n // 4][0].split(":")[0], recs[3 * n // 4][0].split(":")[0]
    lo_ns, hi_ns = raw_ns(recs[n // 4][0]), raw_ns(recs[3 * n // 4][0])
    t0 = {id(e): raw_ns(line) for line, e in recs}
    check(trace, [f"--from={lo}"], lambda e: t0[id(e)] >= lo_ns)
    check(trace, [f"--to={hi}"], lambda e: t0[id(e)] <= hi_ns)
    check(trace, [f"--from={lo}", f"--to={hi}"], lambda e: lo_ns <= t0[id(e)] <= hi_ns)
    one = check(trace, [f"--from={hi}", f"--to={hi}"], lambda e: t0[id(e)] == hi_ns)
    assert recs[3 * n // 4][0] in one
    # Just after an event, just before it: it is left out.
    check(trace, [f"--from={(lo_ns + 1) / 1e9:.9f}"], lambda e: t0[id(e)] > lo_ns)
    check(trace, [f"--to={(hi_ns - 1) / 1e9:.9f}"], lambda e: t0[id(e)] < hi_ns)
    check(trace, ["--from=0"], lambda e: True, some=False)
    check(trace, [f"--from={hi}", f"--to={lo}"], lambda e: False, some=False)


def test_combined(trace):
    """Several filters: all must hold."""
    t, recs = trace
    o = t.out
    pid = int(o["tid_main"])
    check(trace, [f"--pid={pid}", "--event=MUTEX_*", "--object=queue_lock"],
          lambda e: e["pid"] == pid and e["event"].startswith("MUTEX_")
          and on_object(e, "queue_lock", True))
    check(trace, ["--tid=producer,eater", "--kind=mutex,cond", "--object=cache.lock"],
          lambda e: e.get("thread") in ("producer", "eater") and e["class"] in ("mutex", "cond")
          and on_object(e, o["cache_lock"]))
    n = len(recs)
    lo, hi = recs[n // 3][0].split(":")[0], recs[-1][0].split(":")[0]
    lo_ns = raw_ns(recs[n // 3][0])
    t0 = {id(e): raw_ns(line) for line, e in recs}
    check(trace, ["--tid=main", f"--from={lo}", f"--to={hi}", "--event=*_IN"],
          lambda e: e.get("thread") == "main" and t0[id(e)] >= lo_ns
          and e["event"].endswith("_IN"))
    check(trace, [f"--object={o['queue_lock']}", f"--pid={o['child']}", "--event=MUTEX_LOCK_IN"],
          lambda e: e["pid"] == int(o["child"]) and e["event"] == "MUTEX_LOCK_IN")
    check(trace, ["--tid=sleeper", "--kind=cond"], lambda e: False, some=False)


def test_formats_and_summary(trace):
    """The same events in every format; --summary counts the filtered events."""
    t, recs = trace
    opts = ["--kind=mutex,sem", "--tid=producer,producer#2,main"]
    want = [e for _, e in recs if e["class"] in ("mutex", "sem")
            and e.get("thread") in ("producer", "producer#2", "main")]
    assert view_json(t.path, *opts) == want
    human = view(*opts, t.path).splitlines()
    assert len(human) == len(want)
    for h, e in zip(human, want):
        assert f"Thread {e['thread']} ({e['tid']}) " in h
    summary = view("--summary", *opts, t.path)
    counts = collections.Counter(e["event"] for e in want)
    assert f"events:    {len(want)}\n" in summary
    for name, n in counts.items():
        assert f"  {name:<26} {n}\n" in summary
    assert summary.count("\n  ") == len(counts)


BAD = [("--pid=abc", "--pid=abc"), ("--pid=12x", "--pid=12x"), ("--pid=1,x", "--pid=1,x"),
       ("--event=NO_SUCH_EVENT", "NO_SUCH_EVENT"), ("--event=MUTEX_LOCK_IN,nope*", "nope*"),
       ("--event=mutex_lock_in", "mutex_lock_in"), ("--event=!NOPE", "!NOPE"),
       ("--kind=mutexes", "mutexes"),
("--from=abc", "--from=abc"), ("--from=-1", "--from=-1"),
       ("--to=1e99", "--to=1e99"), ("--to=", "--to="), ("--from=1s", "--from=1s"),
       ("--pid=" + ",".join(["1"] * 65), "--pid="), ("--format=xml", "xml"),
       ("--thread=1", "--thread")]


@pytest.mark.parametrize("opt,word", BAD)
def test_bad_values(trace, opt, word):
    """A bad filter value: exit status 2, nothing on stdout, one line on stderr naming it."""
    t, _ = trace
    line = ptt_usage_error("view", opt, t.path, cmd="view")
    assert word is None or word in line, line


@pytest.mark.parametrize("opt", ["--pid=", "--tid=", "--object=", "--event=", "--kind=",
                                 "--pid=,"])
def test_empty_list(trace, opt):
    ptt_usage_error("view", opt, trace[0].path, cmd="view")


@pytest.mark.parametrize("opt", ["--from=nan", "--to=nan"])
def test_nan_time(trace, opt):
    ptt_usage_error("view", opt, trace[0].path, cmd="view")


def test_window_names_an_object_once_it_can(tmp_path):
    """0.05 s after the lock on, an object first shown where no name is learned (a condvar wait's mutex)
    gets its name at its first call with a site (before: its address for the rest of the
    output)."""
    t = trace_prog(tmp_path, "window_names")
    m = t.out["m"]
    (lock,) = [e for e in t.events if e.name == "MUTEX_LOCK_IN"]
    text = run([PTT, "view", f"--from={lock.ns / 1e9 + 0.05:.9f}",
                "--event=COND_TIMEDWAIT_IN,MUTEX_UNLOCK_IN", t.path]).stdout
    wait, unlock = text.splitlines()
    assert f"mutex {m}," in wait, wait
    assert "(mutex mutex@window_names.c:" in unlock and m not in unlock, unlock
