"""Helpers of the end-to-end tests: run a program of tests/progs under ptt trace (and without
it), read the trace back with ptt view, and compare events with what the program printed.

The build directory comes from $PTT_BUILD (CTest sets it; by default <repo>/build), the source
tree, for the event table common/events.def, from $PTT_SOURCE (by default this file's tree).

A test program prints "key=value" lines (see tests/progs/progs.h): "@key" values change from
run to run (addresses, thread ids, times), the others are results that must not change when the
program is traced. Events are compared as tuples (NAME, field, field, ...), fields as ptt view
--format=raw prints them.
"""

import collections
import functools
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BUILD = Path(os.environ.get("PTT_BUILD") or Path(__file__).resolve().parents[2] / "build")
BIN = BUILD / "bin"
PTT = BIN / "ptt"
PROGS = BUILD / "tests" / "progs"
TIMEOUT = 90  # seconds for one command: a hang fails the test instead of blocking the suite

SOURCE = Path(os.environ.get("PTT_SOURCE") or Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class EventInfo:
    name: str
    cls: str
    kind: str
    routine: str


def load_table():
    """The classes (in order) and events of common/events.def, the one event table."""
    text = (SOURCE / "common" / "events.def").read_text()
    classes = re.findall(r"^PTT_CLASS\((\w+),\s*\d+,", text, re.M)
    events = {m[1]: EventInfo(m[1], m[2], m[3], m[4]) for m in re.finditer(
        r'^PTT_EVENT\((\w+),\s*0x[0-9a-fA-F]+,\s*(\w+),\s*(\w+),\s*"([^"]*)"', text, re.M)}
    assert classes and len(events) > 50, f"cannot read the event table in {SOURCE}"
    return classes, events


CLASSES, EVENTS = load_table()
# IN events of routines that never return (no OUT event).
NORETURN = {e.name for e in EVENTS.values() if e.kind == "IN" and not any(
    o.kind == "OUT" and o.routine == e.routine for o in EVENTS.values())}
# The STATE events recorded inside a call, between its IN and its OUT, and the routines of those
# calls. Others (THREAD_START, THREAD_END) come outside any call.
INSIDE = {
    "MUTEX_INIT": {"pthread_mutex_init"},
    "MUTEX_WAIT": {"pthread_mutex_lock", "pthread_mutex_timedlock", "pthread_mutex_clocklock"},
    "MUTEX_ACQUIRED": {"pthread_mutex_lock", "pthread_mutex_timedlock",
                       "pthread_mutex_clocklock"},
    "COND_WOKEN": {"pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_clockwait"},
    "BARRIER_RELEASED": {"pthread_barrier_wait"},
}

SUMMARY_RE = re.compile(r"^ptt: wrote (\d+) events \((\d+) bytes\) to (.+), (\d+) lost$")
TIME_RE = re.compile(r"^(\d+)\.(\d{9})$")


def E(name, *fields):
    """An expected event: its name and its fields as ptt view --format=raw prints them."""
    return (name,) + tuple(str(f) for f in fields)


def CREATE_IN(thread, attr, start, arg, stacksize=0, detached=0, policy=0, priority=0,
              inherit=1):
    """THREAD_CREATE_IN: pthread_create's arguments, then what the attribute says (without an
    attribute: default stack (0), joinable, SCHED_OTHER, priority 0, inherited scheduling)."""
    return E("THREAD_CREATE_IN", thread, attr, start, arg, stacksize, detached, policy, priority,
             inherit)


def routine_of(name):
    """The routine of an IN or OUT event: MUTEX_LOCK_IN -> pthread_mutex_lock."""
    info = EVENTS[name]
    assert info.kind in ("IN", "OUT"), name
    return info.routine


def class_of(name):
    return EVENTS[name].cls


def require_build():
    if not PTT.exists():
        pytest.fail(f"{PTT} not found: build ptt first, or set PTT_BUILD to the build directory")


@dataclass(frozen=True)
class Event:
    ns: int
    name: str
    pid: int
    tid: int
    fields: tuple

    @property
    def key(self):
        return (self.name,) + self.fields


def parse_raw(text):
    """Lines of ptt view --format=raw into Events; any other line fails the test."""
    events = []
    for line in text.splitlines():
        when, sep, rest = line.partition(":")
        parts = rest.split(" : ")
        m = TIME_RE.match(when)
        assert sep and m and len(parts) >= 3, f"malformed raw line: {line!r}"
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", parts[0]), f"malformed event name: {line!r}"
        events.append(Event(int(m[1]) * 10**9 + int(m[2]), parts[0], int(parts[1]),
                            int(parts[2]), tuple(parts[3:])))
    return events


def parse_output(text):
    """A test program's stdout: (results, values); values holds every key, '@' removed."""
    results, values = {}, {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        assert sep, f"malformed program output line: {line!r}"
        if key.startswith("@"):
            key = key[1:]
        else:
            results[key] = value
        assert key not in values, f"key {key} printed twice (a call repeated?)"
        values[key] = value
    return results, values


def run(cmd, **kw):
    kw.setdefault("timeout", TIMEOUT)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def view(*args):
    """ptt view ARGS: its stdout; it must succeed."""
    p = run([PTT, "view", *args])
    assert p.returncode == 0, f"ptt view {args} failed ({p.returncode}): {p.stderr}"
    assert p.stderr == ""
    return p.stdout


def summary_counts(path):
    """ptt view --summary FILE: (counts per event name, header fields)."""
    counts, head = collections.Counter(), {}
    in_counts = False
    for line in view("--summary", path).splitlines():
        if in_counts:
            name, n = line.split()
            counts[name] = int(n)
        else:
            key, _, value = line.partition(" ")
            head[key.rstrip(":")] = value.strip()
            in_counts = key == "events:"
    return counts, head


@dataclass
class Traced:
    """One run of ptt trace."""

    argv: list
    path: Path
    rc: int
    stdout: str
    stderr: str
    ptt_pid: int
    nevents: int = 0  # from ptt trace's last line
    nbytes: int = 0
    lost: int = 0
    results: dict = field(default_factory=dict)
    out: dict = field(default_factory=dict)
    _events: list = None

    @property
    def events(self):
        if self._events is None:
            self._events = parse_raw(view("--format=raw", self.path))
        return self._events

    def thread(self, tid):
        """The events of thread tid (a main thread's tid is its pid: ptt trace's PROCESS_EXIT
        for the process comes with them), as (NAME, fields...) tuples."""
        return [e.key for e in self.events if e.tid == int(tid)]

    def counts(self):
        return collections.Counter(e.name for e in self.events)

    def process_start(self, clock=None):
        """The PROCESS_START expected of the program ptt trace started."""
        return E("PROCESS_START", self.ptt_pid, clock if clock is not None else self.clock)

    @property
    def clock(self):
        """PROCESS_START's clock field: 1 for the TSC, 2 for CLOCK_MONOTONIC."""
        return {"tsc": 1, "monotonic": 2}[self.head["clock"]]

    @functools.cached_property
    def head(self):
        """The header lines of ptt view --summary."""
        return summary_counts(self.path)[1]


def ptt_trace(tmp_path, argv, opts=(), rc=0, name="t.ptt", env=None, tool=None):
    """Run tool (default: ptt trace) -o tmp_path/name OPTS -- ARGV. Checks its exit status and
    its last stderr line, and gives the Traced run."""
    require_build()
    path = tmp_path / name
    cmd = [str(c) for c in (tool or [PTT, "trace"])] + ["-o", str(path), *opts, "--",
                                                       *[str(a) for a in argv]]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=tmp_path, env=env)
    try:
        stdout, stderr = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail(f"{cmd} did not end in {TIMEOUT} s")
    t = Traced(cmd, path, p.returncode, stdout, stderr, p.pid)
    assert p.returncode == rc, f"{cmd}: exit status {p.returncode}, expected {rc}; {stderr}"
    last = stderr.splitlines()[-1] if stderr else ""
    m = SUMMARY_RE.match(last)
    assert m, f"last stderr line of ptt trace is not its summary: {stderr!r}"
    t.nevents, t.nbytes, t.lost = int(m[1]), int(m[2]), int(m[4])
    assert m[3] == str(path)
    assert path.stat().st_size == t.nbytes, "the summary's byte count is not the file's size"
    return t


def prog(name):
    return PROGS / name


def trace_prog(tmp_path, name, *args, opts=(), rc=0, plain_rc=None, compare=True, check=True):
    """Run test program NAME ARGS under ptt trace, which must exit with rc, and (compare)
    without it, which must exit with plain_rc (default rc; -N for a signal N): its results
    (return values, errno) must be the same both times. check: the trace must be well formed
    (see check_trace) and lose nothing."""
    t = ptt_trace(tmp_path, [prog(name), *args], opts=opts, rc=rc)
    t.results, t.out = parse_output(t.stdout)
    if compare:
        plain = run([prog(name), *args], cwd=tmp_path)
        assert plain.returncode == (rc if plain_rc is None else plain_rc), plain.stderr
        assert t.results == parse_output(plain.stdout)[0], "traced results differ from untraced"
        assert plain.stderr == ""
    if check:
        check_trace(t)
    return t


def check_trace(t, lost=0):
    """What holds for every trace: the events the summary line counts are those ptt view prints,
    but the TRACE_UNFINISHED and THREAD_CANCELLED it synthesizes; ptt view --summary counts the
    same; times never go back; every _IN is followed by its _OUT on the same thread, with only
    the state events of that call in between; nothing lost."""
    ev = t.events
    counts = collections.Counter(e.name for e in ev)
    assert t.nevents == len(ev) - counts["TRACE_UNFINISHED"] - counts["THREAD_CANCELLED"]
    assert t.lost == lost
    scounts, head = summary_counts(t.path)
    assert scounts == counts
    assert int(head["events"]) == len(ev)
    assert int(head["lost"]) == lost
    assert int(head["exit"]) == t.rc
    times = [e.ns for e in ev]
    assert times == sorted(times), "merged events are not in time order"
    check_calls(ev)


def check_calls(events):
    """Per thread: _IN, then only that call's state events, then its _OUT (or TRACE_UNFINISHED
    naming the _IN when the trace ended inside the call); no event unknown to the table."""
    open_call = {}
    for e in events:
        assert e.name in EVENTS, f"event {e.name} is not in common/events.def"
        info = EVENTS[e.name]
        key = (e.pid, e.tid)
        cur = open_call.get(key)
        where = f"thread {e.tid}: {e.name} {e.fields}"
        if info.kind == "IN":
            assert cur is None, f"{where} inside {cur}"
            if e.name not in NORETURN:
                open_call[key] = e.name
        elif info.kind == "OUT":
            assert cur is not None and routine_of(cur) == info.routine, \
                f"{where} without its _IN (open: {cur})"
            open_call[key] = None
        elif e.name in ("TRACE_UNFINISHED", "THREAD_CANCELLED"):
            assert cur is not None and e.fields == (cur,), f"{where}, open: {cur}"
            open_call[key] = None
        elif e.name in INSIDE:
            assert cur is not None and routine_of(cur) in INSIDE[e.name], \
                f"{where} outside its call (open: {cur})"
        else:
            assert cur is None, f"{where} inside {cur}"
    still = {k: v for k, v in open_call.items() if v}
    assert not still, f"calls never closed: {still}"


THREAD_EVENTS = ("THREAD_CREATE_IN", "THREAD_CREATE_OUT", "THREAD_START", "THREAD_END",
                 "THREAD_JOIN_IN", "THREAD_JOIN_OUT")


def expected_counts(threads, iters, rounds):
    """Every event of counts THREADS ITERS EVERY (private mutexes, see tests/progs/counts.c),
    with rounds barrier waits per thread."""
    c = collections.Counter()
    for name in ("PROCESS_START", "PROCESS_EXIT", "BARRIER_INIT_IN", "BARRIER_INIT_OUT",
                 "BARRIER_DESTROY_IN", "BARRIER_DESTROY_OUT"):
        c[name] = 1
    for name in THREAD_EVENTS + ("MUTEX_INIT_IN", "MUTEX_INIT", "MUTEX_INIT_OUT",
                                 "MUTEX_DESTROY_IN", "MUTEX_DESTROY_OUT", "COND_INIT_IN",
                                 "COND_INIT_OUT", "COND_DESTROY_IN", "COND_DESTROY_OUT"):
        c[name] = threads
    for name in ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_TRYLOCK_IN", "MUTEX_TRYLOCK_OUT",
                 "COND_SIGNAL_IN", "COND_SIGNAL_OUT", "COND_BROADCAST_IN", "COND_BROADCAST_OUT"):
        c[name] = threads * iters
    c["MUTEX_UNLOCK_IN"] = c["MUTEX_UNLOCK_OUT"] = 2 * threads * iters
    for name in ("BARRIER_WAIT_IN", "BARRIER_WAIT_OUT", "BARRIER_RELEASED"):
        c[name] = threads * rounds
    return c
