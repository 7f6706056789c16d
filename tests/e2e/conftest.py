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
import contextlib
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BUILD = Path(os.environ.get("PTT_BUILD") or Path(__file__).resolve().parents[2] / "build")
BIN = BUILD / "bin"
PTT = BIN / "ptt"
PROGS = BUILD / "tests" / "progs"
TIMEOUT = 90  # seconds for one command: a hang fails the test instead of blocking the suite
# The Python a test traces: the one running the tests (Debian's /usr/bin/python3 in CI), never a
# wrapper found first on PATH (a version manager's shim is a chain of shell scripts, traced too).
PYTHON = sys.executable

SOURCE = Path(os.environ.get("PTT_SOURCE") or Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class EventInfo:
    name: str
    cls: str
    kind: str
    routine: str
    role: str = "NONE"  # PTT_ROLE in common/events.def: what the event means
    flags: frozenset = frozenset()  # its role's flags: blocks, shared, counted, wakes
    parts: tuple = ()  # its role's (key, field) pairs: ("object", "mutex"), ...


def load_table():
    """The classes (in order) and events of common/events.def, the one event table, with their
    roles (an OUT event without a role line has its call's)."""
    text = (SOURCE / "common" / "events.def").read_text()
    classes = re.findall(r"^PTT_CLASS\((\w+),\s*\d+,", text, re.M)
    events = {m[1]: EventInfo(m[1], m[2], m[3], m[4]) for m in re.finditer(
        r'^PTT_EVENT\((\w+),\s*0x[0-9a-fA-F]+,\s*(\w+),\s*(\w+),\s*"([^"]*)"', text, re.M)}
    assert classes and len(events) > 50, f"cannot read the event table in {SOURCE}"
    roles = {m[1]: (m[2], m[3].split()) for m in re.finditer(
        r'^PTT_ROLE\((\w+),\s*(\w+),\s*"([^"]*)"\)', text, re.M)}
    assert len(roles) > 50, f"cannot read the roles of the event table in {SOURCE}"
    by_routine = {e.routine: roles[e.name][0] for e in events.values()
                  if e.kind == "IN" and e.name in roles}
    for e in list(events.values()):
        role, words = roles.get(e.name, (by_routine.get(e.routine, "NONE") if e.kind == "OUT"
                                         else "NONE", []))
        events[e.name] = EventInfo(e.name, e.cls, e.kind, e.routine, role,
                                   frozenset(w for w in words if "=" not in w),
                                   tuple(tuple(w.split("=", 1)) for w in words if "=" in w))
    return classes, events


CLASSES, EVENTS = load_table()
# IN events of routines that never return (no OUT event).
NORETURN = {e.name for e in EVENTS.values() if e.kind == "IN" and not any(
    o.kind == "OUT" and o.routine == e.routine for o in EVENTS.values())}


def _inside():
    """The STATE events recorded inside a call, between its IN and its OUT (innermost open:
    nothing else open above it), and the routines of those calls, by their roles: a CONTENDED or
    ACQUIRED event inside a blocking ACQUIRE call of its class, a WOKEN one inside a blocking
    WAIT call of its class, a CREATE one inside its class's CREATE call. Others open or close a
    frame (see check_calls) or come outside any call (THREAD_START, THREAD_END)."""
    call_role = {"CONTENDED": "ACQUIRE", "ACQUIRED": "ACQUIRE", "WOKEN": "WAIT",
                 "CREATE": "CREATE"}
    inside = {}
    for s in EVENTS.values():
        if s.kind == "STATE" and s.role in call_role:
            inside[s.name] = {c.routine for c in EVENTS.values() if c.kind == "IN" and
                              c.cls == s.cls and c.role == call_role[s.role] and
                              (s.role == "CREATE" or "blocks" in c.flags)}
            assert inside[s.name], f"{s.name}: no call of its class to come inside"
    return inside


INSIDE = _inside()
# Frames other than calls, opened and closed by a pair of STATE events of a class (roles
# FRAME_BEGIN, FRAME_END): the init routine that pthread_once runs (inside its call), a signal
# handler (anywhere), the notification function of a SIGEV_THREAD timer (outside any call, like a
# thread). Calls nest inside them.
FRAMES = {b.name: e.name for b in EVENTS.values() for e in EVENTS.values()
          if b.role == "FRAME_BEGIN" and e.role == "FRAME_END" and b.cls == e.cls}
FRAME_END = {end: begin for begin, end in FRAMES.items()}

# ptt trace's last line: events and bytes in the file, its name, events lost in the pool; after a
# write error, the events not written and the program's own exit status (docs/trace.md).
SUMMARY_RE = re.compile(r"^ptt: wrote (\d+) events \((\d+) bytes\) to (.+), (\d+) lost"
                        r"(?:, (\d+) not written; the program's exit status: (\d+))?$")
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


# Events that depend on the machine or the run, not on the program's calls: the modules each
# process maps (for names) and each program's command line (its paths are the test's). parse_raw
# leaves them out; test_names.py and test_process.py check them.
MACHINE_EVENTS = {"MODULE_LOAD", "PROCESS_ARGS"}


def load_sites():
    """The positions of the site fields (return addresses) of every event, from docs/events.md
    (generated from the table, and checked to be current)."""
    sites = {}
    for line in (SOURCE / "docs" / "events.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 6 and re.fullmatch(r"0x[0-9a-f]{4}", cells[1]):
            fields = [f for f in cells[5].split(", ") if f]
            pos = [i for i, f in enumerate(fields) if f.endswith(":site")]
            if pos:
                sites[cells[2]] = pos
    assert sites, "no site field found in docs/events.md"
    return sites


# Return addresses depend on the build: parse_raw leaves site fields out (test_names.py checks
# them), so expected events are written without them.
SITES = load_sites()

# Fields that depend on the run, left out as sites are: PROCESS_START's self, the pthread_t of
# the thread that starts the process (an address; test_sched.py checks what it names).
RUN_FIELDS = {**SITES, "PROCESS_START": [2]}


def parse_raw(text, keep_machine=False):
    """Lines of ptt view --format=raw into Events; any other line fails the test. MODULE_LOAD
    events, site fields and PROCESS_START's self are left out unless keep_machine."""
    events = []
    for line in text.splitlines():
        when, sep, rest = line.partition(":")
        parts = rest.split(" : ")
        m = TIME_RE.match(when)
        assert sep and m and len(parts) >= 3, f"malformed raw line: {line!r}"
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", parts[0]), f"malformed event name: {line!r}"
        if parts[0] in MACHINE_EVENTS and not keep_machine:
            continue
        fields = parts[3:]
        if not keep_machine and parts[0] in RUN_FIELDS:
            fields = [f for i, f in enumerate(fields) if i not in RUN_FIELDS[parts[0]]]
        events.append(Event(int(m[1]) * 10**9 + int(m[2]), parts[0], int(parts[1]),
                            int(parts[2]), tuple(fields)))
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


# The users of the tests where another user plants a link in a shared directory.
VICTIM, ATTACKER = 12001, 12002


@contextlib.contextmanager
def sticky_dir(prefix, why):
    """A sticky, world-writable directory (like /tmp) in a directory every uid can cross, and a
    file of VICTIM's outside it: (base, shared, victim_file), removed at the end. Skips unless
    root (why: what the test runs as the other users) with setpriv."""
    if os.geteuid() != 0:
        pytest.skip(f"needs root: {why}")
    if not shutil.which("setpriv"):
        pytest.skip("needs setpriv")
    base = tempfile.mkdtemp(prefix=prefix)
    try:
        os.chmod(base, 0o755)
        shared = os.path.join(base, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)
        victim_file = os.path.join(base, "victim.txt")
        with open(victim_file, "w") as f:
            f.write("precious\n")
        os.chown(victim_file, VICTIM, VICTIM)
        yield base, shared, victim_file
    finally:
        shutil.rmtree(base)


def run(cmd, **kw):
    kw.setdefault("timeout", TIMEOUT)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def view(*args):
    """ptt view ARGS: its stdout; it must succeed."""
    p = run([PTT, "view", *args])
    assert p.returncode == 0, f"ptt view {args} failed ({p.returncode}): {p.stderr}"
    assert p.stderr == ""
    return p.stdout


def summary_counts(path, keep_machine=False):
    """ptt view --summary FILE: (counts per event name, header fields). MODULE_LOAD events are
    left out of both unless keep_machine, as parse_raw does."""
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
    if not keep_machine:
        for name in MACHINE_EVENTS:
            if "events" in head:
                head["events"] = str(int(head["events"]) - counts[name])
            del counts[name]
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
    # The tests count the program's events: the machine's (MODULE_LOAD) are left out everywhere.
    counts = summary_counts(path, keep_machine=True)[0]
    t.nevents -= sum(counts[name] for name in MACHINE_EVENTS)
    return t


def flood_trace(tmp_path_factory, name, iters):
    """A module's trace of flood 2 ITERS (ptt trace -q), in a directory of its own."""
    require_build()
    path = tmp_path_factory.mktemp(name) / "t.ptt"
    p = run([PTT, "trace", "-q", "-o", path, "--", prog("flood"), 2, iters])
    assert p.returncode == 0, p.stderr
    return path


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
    same; times never go back; calls open and close as check_calls says; nothing lost."""
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


def _cancelled_calls(events):
    """Per thread, the index (in events) of the _IN of the call each THREAD_CANCELLED names: the
    innermost call still open when the thread ended cancelled, matched the way ptt view matches
    them (an _OUT closes the innermost open call of its routine)."""
    cancelled, open_ins = set(), collections.defaultdict(list)
    for i, e in enumerate(events):
        info = EVENTS.get(e.name)
        stack = open_ins[(e.pid, e.tid)]
        if info is None:
            continue
        if info.kind == "IN" and e.name not in NORETURN:
            stack.append(i)
        elif info.kind == "OUT":
            for k in range(len(stack) - 1, -1, -1):
                if routine_of(events[stack[k]].name) == info.routine:
                    del stack[k:]
                    break
        elif e.name == "THREAD_CANCELLED" and stack:
            cancelled.add(stack[-1])
            stack.clear()
    return cancelled


def check_calls(events):
    """Per thread, a stack of open frames: calls (_IN to its _OUT) and the frames of FRAMES.
    A call opens where nothing is open, inside a frame of FRAMES, or inside the call a thread is
    cancelled in (from the cancellation on, its cleanup handlers and the unwinder make calls);
    a call's state events (INSIDE) come while it is the innermost frame; a signal handler may
    come anywhere; THREAD_CANCELLED names the innermost open call and closes every frame, right
    before THREAD_END (cancel); TRACE_UNFINISHED closes the innermost open call when the trace
    ended inside it; other events about the trace itself (TRACE_LOST...) may come anywhere.
    Everything else comes with nothing open; no event unknown to the table."""
    unwound = _cancelled_calls(events)
    stacks = collections.defaultdict(list)  # (pid, tid) -> [(kind, event name, fields, index)]
    cancelled = {}  # (pid, tid) -> the THREAD_CANCELLED that must come right before THREAD_END
    for i, e in enumerate(events):
        assert e.name in EVENTS, f"event {e.name} is not in common/events.def"
        info = EVENTS[e.name]
        key = (e.pid, e.tid)
        stack = stacks[key]
        top = stack[-1] if stack else None

        def where():  # for a failure message only
            return f"thread {e.tid}: {e.name} {e.fields} (open: {[f[1] for f in stack]})"

        if key in cancelled:
            assert e.name == "THREAD_END" and e.fields[1:] == ("cancel",), \
                f"{where()} after {cancelled[key]}"
            del cancelled[key]
            continue
        if info.kind == "IN":
            assert top is None or top[0] == "frame" or top[3] in unwound, \
                f"{where()}: a call inside a call"
            if e.name not in NORETURN:
                stack.append(("call", e.name, e.fields, i))
        elif info.kind == "OUT":
            assert top and top[0] == "call" and routine_of(top[1]) == info.routine, \
                f"{where()} without its _IN"
            stack.pop()
        elif e.name in INSIDE:
            assert top and top[0] == "call" and routine_of(top[1]) in INSIDE[e.name], \
                f"{where()} outside its call"
        elif e.name == "ONCE_RUN":
            assert top and top[1] == "THREAD_ONCE_IN" and top[2][:2] == e.fields, \
                f"{where()} outside its pthread_once"
            stack.append(("frame", e.name, e.fields, i))
        elif e.name == "SIGNAL_DELIVERED":
            stack.append(("frame", e.name, e.fields, i))
        elif e.name == "TIMER_THREAD_START":
            assert top is None, f"{where()} inside a call"
            stack.append(("frame", e.name, e.fields, i))
        elif e.name in FRAME_END:
            assert top and top[1] == FRAME_END[e.name] and top[2][0] == e.fields[0], \
                f"{where()} without its {FRAME_END[e.name]}"
            stack.pop()
        elif e.name == "THREAD_CANCELLED":
            calls = [f for f in stack if f[0] == "call"]
            assert calls and e.fields == (calls[-1][1],) and calls[-1][3] in unwound, \
                f"{where()}: not the innermost open call"
            stack.clear()
            cancelled[key] = where()
        elif e.name == "TRACE_UNFINISHED":
            while stack and stack[-1][0] == "frame":
                stack.pop()
            assert stack and e.fields == (stack[-1][1],), f"{where()}: not the innermost open call"
            stack.pop()
        elif info.kind == "META" and e.name not in ("PROCESS_START", "PROCESS_EXIT"):
            pass  # about the trace (lost events...), where it was noticed: anywhere
        else:
            assert top is None, f"{where()} inside a call"
    still = {k: [f[1] for f in v] for k, v in stacks.items() if v}
    assert not still, f"calls never closed: {still}"
    assert not cancelled, f"THREAD_CANCELLED without THREAD_END: {cancelled}"


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


def pytest_configure(config):
    config.addinivalue_line("markers", "large: a long test run only with PTT_LARGE_TESTS=1")


@pytest.fixture(autouse=True)
def _end_live_sessions():
    """What a test's live sessions left running ends with the test (robust_util.Live)."""
    yield
    robust_util = sys.modules.get("robust_util")
    if robust_util:
        robust_util.Live.kill_all()
