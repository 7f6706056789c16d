"""ptt check on its corpus (tests/progs/check, README.md there): every program traced (those
that hang with --hang-timeout and --kill-on-hang, and checked from the trace the hang left),
then checked; the JSON findings must be exactly the expected ones (expected.json): their
number, and for each its kind, its objects by variable name, its threads by role, the marked
lines among its steps' sites, the errno of an error. The correct programs give no finding and
exit status 0. Also: the text output, ptt trace --check, and bad input."""

import collections
import json
import re
import struct

import pytest

from conftest import PROGS, PTT, PYTHON, SOURCE, parse_output, prog, ptt_trace, run

CORPUS = SOURCE / "tests" / "progs" / "check"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
HANG_OPTS = ("--hang-timeout=0.5", "--kill-on-hang")


def markers(prog):
    """{NAME: line} of the /* check:NAME */ comments of PROG.c."""
    lines = {}
    for no, text in enumerate((CORPUS / f"{prog}.c").read_text().splitlines(), 1):
        for key in re.findall(r"/\* check:(\w+) \*/", text):
            lines[key] = no
    return lines


def trace(tmp_path, prog, opts=()):
    hangs = EXPECTED[prog]["hangs"]
    t = ptt_trace(tmp_path, [PROGS / "check" / prog], opts=(*(HANG_OPTS if hangs else ()), *opts),
                  rc=137 if hangs else 0)
    t.out = parse_output(t.stdout)[1]
    return t


def check_json(path):
    p = run([PTT, "check", "--format=json", path])
    assert p.returncode in (0, 1), p.stderr
    assert p.stderr == ""
    doc = json.loads(p.stdout)
    assert (p.returncode == 1) == bool(doc["findings"])
    return doc


def named(f, out):
    """A finding's objects by variable name and threads by role (the program printed their
    addresses and ids); an unknown address stays as it is, and fails the comparison."""
    by_addr = {v: k for k, v in out.items() if v.startswith("0x")}
    by_tid = {v: k[4:] for k, v in out.items() if k.startswith("tid_")}
    objects = sorted(by_addr.get(o["address"], o["address"]) for o in f["objects"])
    # A thread of a program killed on its hang may not have flushed its id: its name (that of
    # its start routine, the role's) then stands for it.
    threads = sorted(by_tid.get(str(t["tid"]), t["name"]) for t in f["threads"])
    return objects, threads


def lines_of(f, prog):
    return {int(s["site"].rsplit(":", 1)[1]) for s in f["steps"]
            if s["site"] and s["site"].startswith(f"{prog}.c:")}


@pytest.mark.parametrize("prog", sorted(EXPECTED))
def test_corpus(tmp_path, prog):
    t = trace(tmp_path, prog)
    doc = check_json(t.path)
    want = EXPECTED[prog]["findings"]
    got = doc["findings"]
    shown = [(f["kind"], named(f, t.out), f["summary"]) for f in got]
    assert len(got) == len(want), shown
    marks = markers(prog)
    left = list(got)
    for w in want:
        match = [f for f in left if f["kind"] == w["kind"] and
                 named(f, t.out)[0] == sorted(w["objects"])]
        assert match, (w, shown)
        f = match[0]
        left.remove(f)
        threads = named(f, t.out)[1]
        if isinstance(w["threads"], int):
            assert len(threads) == w["threads"], threads
        else:
            assert threads == sorted(w["threads"]), (w, f)
        assert {marks[k] for k in w["lines"]} <= lines_of(f, prog), (w, f)
        if "errno" in w:
            assert f["errno"] == w["errno"]
        if "what" in w:
            assert f["what"] == w["what"], f
        if "summary_has" in w:
            assert w["summary_has"] in f["summary"], f
        assert f["summary"] and f["count"] >= 1
        for s in f["steps"]:
            assert s["tid"] in {th["tid"] for th in f["threads"]} or s["action"] == "is inside"


def test_text(tmp_path):
    """The text form: one paragraph per finding, kind first, then its steps with their lines."""
    t = trace(tmp_path, "check_abba")
    p = run([PTT, "check", t.path])
    assert p.returncode == 1 and p.stderr == ""
    first, *steps = p.stdout.splitlines()
    out = t.out
    assert first == (f"deadlock: t1 ({out['tid_t1']}) waits for mutex b, held by t2 "
                     f"({out['tid_t2']}); t2 ({out['tid_t2']}) waits for mutex a, held by t1 "
                     f"({out['tid_t1']})")
    m = markers("check_abba")
    assert [re.sub(r"^\s*[\d.]+\s+", "", s) for s in steps] == [
        f"t1 ({out['tid_t1']}) took mutex a at check_abba.c:{m['t1_lock_a']} in t1",
        f"t1 ({out['tid_t1']}) waits for mutex b (pthread_mutex_lock) at "
        f"check_abba.c:{m['t1_lock_b']} in t1",
        f"t2 ({out['tid_t2']}) took mutex b at check_abba.c:{m['t2_lock_b']} in t2",
        f"t2 ({out['tid_t2']}) waits for mutex a (pthread_mutex_lock) at "
        f"check_abba.c:{m['t2_lock_a']} in t2",
    ]


def test_cxx_function_names_whole(tmp_path):
    """The functions of a finding's steps are named whole: a C++ name has spaces ('> >'), where
    it was cut (at 'std::tuple<main::{lambda()#1}>'), in the text and the JSON."""
    exe = PROGS / "cxx_order"
    if not exe.exists():
        pytest.skip("no C++ compiler when the tests were built")
    out = ptt_trace(tmp_path, [exe]).path
    p = run([PTT, "check", "--format=json", out])
    assert p.returncode == 1, p.stderr
    (f,) = json.loads(p.stdout)["findings"]
    functions = [step["function"] for step in f["steps"]]
    want = "std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#%d}> > >::_M_run"
    assert functions == [want % 1, want % 1, want % 2, want % 2], functions
    text = run([PTT, "check", out]).stdout
    assert text.count(f" in {want % 1}\n") == 2, text


def test_clean(tmp_path):
    t = trace(tmp_path, "ok_prodcons")
    p = run([PTT, "check", t.path])
    assert p.returncode == 0 and p.stderr == ""
    assert re.fullmatch(r".*: \d+ events, nothing found\n", p.stdout)


def test_trace_check(tmp_path):
    """ptt trace --check: the findings on stderr after the run; the exit status is the program's,
    or 1 when the program exited 0 and something was found."""
    def traced(prog, *opts):
        return run([PTT, "trace", "-q", "-o", tmp_path / f"{prog}.ptt", *opts, "--check", "--",
                    PROGS / "check" / prog])

    p = traced("check_abba", *HANG_OPTS)
    assert p.returncode == 137
    lines = p.stderr.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("ptt: wrote "))
    assert lines[k + 1].startswith("deadlock: t1 (") and len(lines) == k + 6
    p = traced("check_double_unlock")
    assert p.returncode == 1
    assert p.stderr.splitlines()[1].startswith("misuse: main (")
    p = traced("ok_recursive")
    assert p.returncode == 0 and p.stderr.splitlines()[-1].endswith("nothing found")


PY_ABBA = """
import threading
a, b, both = threading.Lock(), threading.Lock(), threading.Barrier(2)
def one():
    with a:
        both.wait()
        with b: pass
def two():
    with b:
        both.wait()
        with a: pass
ts = [threading.Thread(target=f) for f in (one, two)]
[t.start() for t in ts]
[t.join() for t in ts]
"""


def test_python_deadlock(tmp_path):
    """CPython 3.11's threading.Lock is a semaphore made with the value 1: an ABBA deadlock of
    two Python threads is told as a deadlock of two semaphores, each held by the other thread
    (check_sem_lock_abba is its C form); main's join, which waits for a lock the first thread
    holds, follows from it and is no finding of its own. ptt trace's live report says who holds
    each lock the three threads wait for."""
    t = ptt_trace(tmp_path, [PYTHON, "-c", PY_ABBA], opts=HANG_OPTS, rc=137)
    doc = check_json(t.path)
    assert [f["kind"] for f in doc["findings"]] == ["deadlock"], doc["findings"]
    f = doc["findings"][0]
    assert len(f["threads"]) == 2 and [o["type"] for o in f["objects"]] == ["sem"] * 2
    assert "ptt takes a semaphore for a lock when it is never seen above 1" in f["summary"]
    assert [s["action"] for s in f["steps"]] == ["took", "waits for"] * 2
    # The live report: every thread (main in its join) waits for a lock a worker holds.
    blocked = [ln for ln in t.stderr.splitlines() if ln.startswith("ptt:   pid ")]
    assert len(blocked) == 3 and all(
        re.search(r": in sem_wait \(sem .*, held by thread pythread_wrapper(#2)? \(\d+\)$", ln)
        for ln in blocked), t.stderr


PY_CLEAN = """
import queue, threading, time
q, ev = queue.SimpleQueue(), threading.Event()
def daemon():
    try:
        q.get(timeout=0.01)
    except queue.Empty:
        pass
    q.put(1)
    q.get()
    ev.set()
    q.get()  # waits for a put that never comes: a daemon thread when the program exits
threading.Thread(target=daemon, daemon=True).start()
ev.wait()
time.sleep(0.05)
"""


def test_python_clean(tmp_path):
    """A Python program that exits with a daemon thread waiting in SimpleQueue.get(), whose lock
    the same thread took and posted before (a signal to itself, not a lock), and main having
    waited on an Event (a Condition's fresh semaphore): nothing found."""
    t = ptt_trace(tmp_path, [PYTHON, "-c", PY_CLEAN])
    assert check_json(t.path)["findings"] == []


@pytest.mark.parametrize("args,msg", [
    ([], "ptt.data: No such file or directory (the default trace file"),
    (["a", "b"], "one trace file at a time"),
    (["--format=xml", "x"], "--format=xml: use text or json"),
    (["/nonexistent.ptt"], "/nonexistent.ptt"),
])
def test_bad_usage(args, msg, tmp_path):
    p = run([PTT, "check", *args], cwd=tmp_path)
    assert p.returncode == 2
    assert len(p.stderr.splitlines()) == 1 and msg in p.stderr


def test_damaged(tmp_path):
    """A trace cut short: the findings of what was read, then one line, status 2."""
    t = trace(tmp_path, "check_double_unlock")
    data = t.path.read_bytes()
    cut = tmp_path / "cut.ptt"
    cut.write_bytes(data[: len(data) - 40])
    p = run([PTT, "check", cut])
    assert p.returncode == 2
    assert len(p.stderr.splitlines()) == 1 and "cut.ptt" in p.stderr


@pytest.mark.parametrize("opt,warning", [
    ("--events=mutex", "records only mutex: findings that need the other classes are not "
                       "looked for"),
    ("--level=light", "was recorded with --level=light: no waits are seen, so no deadlock or "
                      "hang is found"),
])
def test_partial_recording(tmp_path, opt, warning):
    """A trace of some classes only, or without the waits: one line says what cannot be found;
    the unlock of a mutex whose lock was not recorded (its condvar wait gave it back) is then
    not called a misuse."""
    t = ptt_trace(tmp_path, [PROGS / "check" / "ok_prodcons"], opts=(opt,))
    p = run([PTT, "check", t.path])
    assert p.returncode == 0, p.stdout
    assert p.stderr == f"ptt check: {t.path} {warning}\n"


def test_lost_events(tmp_path):
    """Events dropped (--overflow=discard, a small pool): one line says how many and which
    rules are off; a thread is taken to hold no lock from where it lost events on, so an unlock
    among them makes no thread end holding its mutex (flood's threads each lock and unlock their
    own: before, a few of them in every such trace)."""
    t = ptt_trace(tmp_path, [prog("flood"), 8, 200000],
                  opts=("--overflow=discard", "--buffer=1M", "--subbuffer=4K"))
    assert t.lost > 0  # the premise: 6.4 M events through 250 sub-buffers of 4 KiB
    p = run([PTT, "check", t.path])
    assert p.returncode == 0, p.stdout
    assert re.fullmatch(r".*: \d+ events, nothing found\n", p.stdout)
    assert p.stderr == (f"ptt check: {t.path}: {t.lost} events were lost: the rules that need "
                        "every event are off (unlocks of locks not held, uses of objects never "
                        "initialised or destroyed, locks held when a thread or process ends, "
                        "condvar waits without their mutex), and a thread is taken to hold no "
                        "lock from where it lost events on\n")


def test_chunk_missing_between_two(tmp_path):
    """A file that lost a chunk of a thread between two it holds (cut short: the drain writes
    sub-buffers in the pool's order): one line says the rules that need every event are off,
    and the unlock after the gap, whose lock was in the missing chunk, is not a misuse."""
    t = ptt_trace(tmp_path, [prog("flood"), 2, 20000], opts=("--subbuffer=4K",))
    data = t.path.read_bytes()
    off, chunks = struct.unpack_from("<I", data, 12)[0], []
    while off < len(data):
        rtype, size = struct.unpack_from("<II", data, off)
        if rtype == 3:  # CHUNK: pid, tid, serial, seq, base_ts, nevents
            tid, seq = struct.unpack_from("<i4xI", data, off + 12)
            chunks.append((tid, seq, struct.unpack_from("<I", data, off + 32)[0], off, size))
        off += size
    tid = collections.Counter(c[0] for c in chunks).most_common(1)[0][0]
    mine = sorted(c[1:] for c in chunks if c[0] == tid)
    names = [ln.split(":")[1].strip() for ln in
             run([PTT, "view", "--format=raw", f"--tid={tid}", t.path]).stdout.splitlines()]
    # A chunk whose neighbours end and begin with an unlock: its lock is the gap's.
    first = 0
    for k, (seq, n, o, size) in enumerate(mine):
        if 0 < k < len(mine) - 1 and names[first - 1] == "MUTEX_UNLOCK_OUT" and \
                names[first + n] == "MUTEX_UNLOCK_IN":
            break
        first += n
    else:
        pytest.fail("no chunk between two unlocks")
    cut = tmp_path / "cut.ptt"
    cut.write_bytes(data[:o] + data[o + size:])
    p = run([PTT, "check", cut])
    assert (p.returncode, p.stderr) == (0, (
        f"ptt check: {cut}: 1 thread misses events between others the file holds: the rules "
        "that need every event are off (unlocks of locks not held, uses of objects never "
        "initialised, condvar waits without their mutex)\n")), p.stdout
    assert re.fullmatch(r".*: \d+ events, nothing found\n", p.stdout)
