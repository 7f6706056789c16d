"""ptt paje: the Pajé trace of known programs, read back by PajeNG's pj_dump (the exact numbers of
containers, states, variables and links, their names and ends, derived from the raw trace), and
drawn by ViTE under Xvfb (a screenshot that shows the states in their colours).

pj_dump (Debian package pajeng), vite (vite), Xvfb (xvfb) and PIL (python3-pil) must be there
when the environment variable CI is set; elsewhere the tests that need them are skipped."""

import collections
import colorsys
import json
import os
import random
import shutil
import subprocess
import time

import pytest

from conftest import BUILD, PTT, parse_raw, prog, ptt_trace, run, trace_prog, view
from palette_util import by_name


def need(tool, package):
    if shutil.which(tool):
        return
    if os.environ.get("CI"):
        pytest.fail(f"{tool} is missing: install the Debian package {package}")
    pytest.skip(f"{tool} is missing (Debian package {package})")


def paje(tmp_path, trace, name="t.paje"):
    out = tmp_path / name
    p = run([PTT, "paje", trace, "-o", out])
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    return out


def pj_dump(path):
    """pj_dump's lines, split into their columns; it must read the file without complaint."""
    need("pj_dump", "pajeng")
    p = run(["pj_dump", path])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    return [line.split(", ") for line in p.stdout.splitlines()]


def by_type(rows, kind):
    return collections.Counter(r[2] for r in rows if r[0] == kind)


def names_of(t):
    """Thread names by tid and object names by address, as ptt view knows them (addresses when
    ptt was built without libdw)."""
    threads, objects = {}, {}
    for line in view("--format=json", t.path).splitlines():
        j = json.loads(line)
        threads[j["tid"]] = j.get("thread") or f"thread {j['tid']}"
        for k, v in j.get("names", {}).items():
            if k in ("mutex", "cond"):
                objects[j["fields"][k]] = v
    return threads, objects


def distinct_times(times):
    """How many values PajeNG keeps of a variable set at these times: one per distinct time."""
    return len(set(times))


@pytest.mark.parametrize("producers,consumers,items,size", [(2, 2, 300, 4)])
def test_paje_prodcons(tmp_path, producers, consumers, items, size):
    t = trace_prog(tmp_path, "prodcons", producers, consumers, items, size)
    rows = pj_dump(paje(tmp_path, t.path))
    o, ev = t.out, t.events
    m, not_full, not_empty = o["m"], o["not_full"], o["not_empty"]
    tname, oname = names_of(t)
    oname = collections.defaultdict(lambda: None, oname)
    c = t.counts()
    nthreads = producers + consumers + 1
    waits = c["COND_WAIT_IN"]
    main = ev[0].tid

    # Containers: the root, the program, its process, its threads and its three objects.
    assert by_type(rows, "Container") == {"0": 1, "Program": 1, "Process": 1,
                                          "Thread": nthreads, "Mutex": 1, "Condvar": 2}
    cont = collections.defaultdict(set)
    for r in rows:
        if r[0] == "Container":
            cont[r[2]].add(r[6])
    assert cont["Thread"] == set(tname.values())
    assert cont["Mutex"] == {oname[m] or f"mutex {m}"}
    assert cont["Condvar"] == {oname[not_full] or f"cond {not_full}",
                               oname[not_empty] or f"cond {not_empty}"}
    assert cont["Process"] == {f"process {ev[0].pid}"}
    # The traced command line, without the program's directory.
    assert cont["Program"] == {t.head["command"].split("/tests/progs/", 1)[1]}
    # Times in seconds, as ptt view prints them.
    start = next(float(r[3]) for r in rows if r[0] == "Container" and r[2] == "Process")
    assert abs(start - ev[0].ns / 1e9) < 1e-6

    # Thread states: running, and each blocked span (a cond wait, a mutex wait, a join).
    assert by_type(rows, "State")["Thread state"] == \
        nthreads + waits + c["MUTEX_WAIT"] + c["THREAD_JOIN_IN"]
    for tid, name in tname.items():
        mine = collections.Counter(e.name for e in ev if e.tid == tid)
        want = collections.Counter({"running": 1, "cond": mine["COND_WAIT_IN"],
                                    "mutex": mine["MUTEX_WAIT"], "join": mine["THREAD_JOIN_IN"]})
        got = collections.Counter(r[7] for r in rows if r[0] == "State" and r[1] == name)
        assert got == +want, name
    assert all(r[6] == ("0.000000" if r[7] == "running" else "1.000000")
               for r in rows if r[0] == "State" and r[2] == "Thread state")

    # The mutex's holder: free at first, then each acquisition (a lock, a cond wait's return)
    # and each release (an unlock, a cond wait).
    holders = collections.Counter(r[7] for r in rows if r[0] == "State" and
                                  r[2] == "Mutex holder")
    want = collections.Counter({"free": 1 + c["MUTEX_UNLOCK_IN"] + waits})
    for e in ev:
        if e.name in ("MUTEX_LOCK_OUT", "COND_WOKEN"):
            want[tname[e.tid]] += 1
    assert holders == want
    assert sum(holders.values()) == 1 + 4 * producers * items + 2 * waits

    # Variables: waiters of the mutex and of each condvar, from 0 when first seen; PajeNG keeps
    # one value per distinct time.
    def first_seen(addr):
        return next(e.ns for e in ev if addr in e.fields)

    mutex_times, blocked = [first_seen(m)], set()
    for e in ev:
        if e.name == "MUTEX_WAIT":
            mutex_times.append(e.ns)
            blocked.add(e.tid)
        elif e.name == "MUTEX_LOCK_OUT" and e.tid in blocked:
            mutex_times.append(e.ns)
            blocked.discard(e.tid)
    cond_times = {not_full: [first_seen(not_full)], not_empty: [first_seen(not_empty)]}
    waiting_on = {}
    for e in ev:
        if e.name == "COND_WAIT_IN":
            cond_times[e.fields[0]].append(e.ns)
            waiting_on[e.tid] = e.fields[0]
        elif e.name == "COND_WAIT_OUT":
            cond_times[waiting_on.pop(e.tid)].append(e.ns)
    assert by_type(rows, "Variable") == +collections.Counter({
        "Mutex waiters": distinct_times(mutex_times),
        "Condvar waiters": sum(distinct_times(v) for v in cond_times.values())})

    # Links: main creates and joins each thread; a signal wakes each waiter; an unlock hands
    # the mutex to each thread that waited for it (from the last unlock before it got it).
    links = collections.defaultdict(collections.Counter)
    for r in rows:
        if r[0] == "Link":
            assert r[1] == f"process {ev[0].pid}" and r[6] == r[2]
            links[r[2]][(r[7], r[8])] += 1
    workers = [tid for tid in tname if tid != main]
    assert links["create"] == {("main", tname[tid]): 1 for tid in workers}
    assert links["join"] == {(tname[tid], "main"): 1 for tid in workers}
    wake, handoff, last_signal, last_unlock = (collections.Counter(), collections.Counter(),
                                               {}, None)
    for e in ev:
        if e.name == "COND_SIGNAL_IN":
            last_signal[e.fields[0]] = e.tid
        elif e.name == "COND_WOKEN" and last_signal.get(e.fields[0], e.tid) != e.tid:
            wake[(tname[last_signal[e.fields[0]]], tname[e.tid])] += 1
        elif e.name == "MUTEX_UNLOCK_IN":
            last_unlock = e.tid
        elif e.name == "MUTEX_ACQUIRED" and last_unlock not in (None, e.tid):
            handoff[(tname[last_unlock], tname[e.tid])] += 1
    assert links["wake"] == wake and sum(wake.values()) == waits
    assert links["handoff"] == handoff
    assert set(links) <= {"create", "join", "wake", "handoff"}


# Programs with other objects and more processes: pj_dump reads the file, with a container per
# process, thread and object, and the links the objects make.
@pytest.mark.parametrize("args,rc,kinds,link", [
    (("prodcons_sem", 2, 2, 200, 2), 0, {"Semaphore"}, "post"),
    (("rwlock_calls", "wait_writer"), 0, {"Rwlock"}, None),
    (("spin_calls", "contended"), 0, {"Spinlock"}, "handoff"),
    (("barrier_calls", "wait"), 0, {"Barrier"}, "release"),
    (("proc_chain", prog("proc_other")), 3, {"Mutex", "Semaphore"}, None),
])
def test_paje_objects(tmp_path, args, rc, kinds, link):
    t = trace_prog(tmp_path, *args, rc=rc)
    rows = pj_dump(paje(tmp_path, t.path))
    ev = t.events
    containers = by_type(rows, "Container")
    assert containers["Process"] == len({e.pid for e in ev})
    assert containers["Thread"] == len({(e.pid, e.tid) for e in ev})
    assert set(containers) - {"0", "Program", "Process", "Thread"} == kinds
    links = by_type(rows, "Link")
    assert links["create"] == sum(e.name == "THREAD_START" for e in ev)
    if link:
        assert links[link] > 0
    variables = by_type(rows, "Variable")
    if "Semaphore" in kinds:
        assert variables["Semaphore value"] > 0
    if "Rwlock" in kinds:
        assert by_type(rows, "State")["Rwlock holder"] > 0


# A rwlock's holder: how many read locks are held, or which thread holds it for writing.
@pytest.mark.parametrize("case,want", [
    # main reads it twice, then writes it (its own rdlock and wrlock then fail: EDEADLK)
    ("lock", ["free", "1 reader", "2 readers", "1 reader", "free", "main", "free"]),
    # main reads it while t2 waits to write it
    ("wait_writer", ["free", "1 reader", "free", "waiter", "free"]),
])
def test_paje_rwlock_holders(tmp_path, case, want):
    t = trace_prog(tmp_path, "rwlock_calls", case)
    rows = pj_dump(paje(tmp_path, t.path))
    got = [r[7] for r in rows if r[0] == "State" and r[2] == "Rwlock holder"]
    assert got == want


def test_paje_bad_input(tmp_path):
    """Not a trace: an error, and no file."""
    bad = tmp_path / "bad.ptt"
    bad.write_bytes(b"not a trace\n" * 10)
    p = run([PTT, "paje", bad, "-o", tmp_path / "out.paje"])
    assert p.returncode == 2 and p.stderr.startswith("ptt paje: ")
    assert not (tmp_path / "out.paje").exists()


def test_paje_truncated(tmp_path):
    """A truncated trace: an error, and a file of what could be read, that pj_dump reads."""
    t = trace_prog(tmp_path, "prodcons", 1, 1, 3000, 2)
    data = t.path.read_bytes()
    cut = tmp_path / "cut.ptt"
    cut.write_bytes(data[:len(data) * 2 // 3])
    out = tmp_path / "cut.paje"
    p = run([PTT, "paje", cut, "-o", out])
    assert p.returncode == 2 and p.stderr.startswith("ptt paje: ")
    rows = pj_dump(out)
    # The threads of the part that could be read (a thread's events are in chunks of its own:
    # the cut may leave out all of a thread).
    read = parse_raw(run([PTT, "view", "--format=raw", cut]).stdout)
    assert by_type(rows, "Container")["Thread"] == len({(e.pid, e.tid) for e in read}) > 0
    assert 0 < by_type(rows, "State")["Mutex holder"] < 4 * 3000


# The thread states drawn in ViTE's picture of the demo.
DRAWN = ("running", "cond", "barrier", "join")


def window(im):
    """ViTE's window: the screen's non-black part."""
    return im.convert("L").point(lambda v: 255 if v > 8 else 0).getbbox() or (0, 0, *im.size)


def hue_counts(im):
    """Pixels of each state's colour in the trace area of ViTE's window (right of the container
    names, below the ruler). ViTE shades each state from light to dark: its hue and saturation
    stay those of the table (src/analysis/states.def)."""
    x0, y0, x1, y1 = window(im)
    w, h = x1 - x0, y1 - y0
    area = im.convert("RGB").crop((x0 + w * 21 // 100, y0 + h * 20 // 100, x0 + w * 97 // 100,
                                   y0 + h * 90 // 100))
    want = {n: colorsys.rgb_to_hsv(*(c / 255 for c in by_name()[n].rgb)) for n in DRAWN}
    counts = collections.Counter()
    for (r, g, b), n in collections.Counter(area.getdata()).items():
        hh, s, v = colorsys.rgb_to_hsv(r / 255, g / 255, b / 255)
        for name, (h0, s0, _) in want.items():
            dh = abs(hh - h0) * 360
            if v >= 0.25 and min(dh, 360 - dh) <= 8 and abs(s - s0) <= 0.04:
                counts[name] += n
    return counts


def drawn(counts):
    """Main's join and the workers' running fill most of the picture; the workers wait on the
    condvars or the barrier for some of it."""
    return counts["running"] >= 500 and counts["join"] >= 500 and \
        counts["cond"] + counts["barrier"] >= 200


def start_xvfb(tmp_path):
    """An Xvfb of our own, on a display number no other server uses (tests of other sessions
    may run theirs at the same time: a random one, not the lowest free one)."""
    for n in random.sample(range(200, 30000), 20):
        if os.path.exists(f"/tmp/.X11-unix/X{n}") or os.path.exists(f"/tmp/.X{n}-lock"):
            continue
        with open(tmp_path / "xvfb.log", "w") as log:
            x = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x800x24", "-nolisten",
                                  "tcp"], stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and x.poll() is None:
            if os.path.exists(f"/tmp/.X11-unix/X{n}"):
                return x, f":{n}"
            time.sleep(0.1)
        x.kill()
        x.wait()
    pytest.fail(f"Xvfb did not start: {(tmp_path / 'xvfb.log').read_text()}")


def test_vite_screenshot(tmp_path):
    """ViTE draws the demo's Pajé trace: its threads' states in their colours (running, cond
    wait, barrier, join). The screenshot is tmp_path/vite.png; with PTT_VITE_PNG=FILE, FILE too
    (docs/vite-prodcons.png comes from there)."""
    need("vite", "vite")
    need("Xvfb", "xvfb")
    try:
        from PIL import ImageGrab
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("PIL is missing: install the Debian package python3-pil")
        pytest.skip("PIL is missing (Debian package python3-pil)")
    t = ptt_trace(tmp_path, [BUILD / "examples" / "prodcons", 200])
    out = paje(tmp_path, t.path, "prodcons.paje")
    ev = t.events
    xvfb, display = start_xvfb(tmp_path)
    runtime = tmp_path / "xdg"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, DISPLAY=display, HOME=str(tmp_path), XDG_RUNTIME_DIR=str(runtime))
    # -t: from the program's first event (the trace starts earlier, while ptt trace starts it).
    span = f"{ev[0].ns / 1e9:.6f}:{ev[-1].ns / 1e9:.6f}"
    with open(tmp_path / "vite.log", "w") as log:
        vite = subprocess.Popen(["vite", "-t", span, out], cwd=tmp_path, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        deadline, counts, im = time.monotonic() + 60, None, None  # 20 s was short under load
        while time.monotonic() < deadline:
            time.sleep(0.5)
            assert vite.poll() is None, \
                f"vite ended ({vite.returncode}): {(tmp_path / 'vite.log').read_text()}"
            im = ImageGrab.grab(xdisplay=display)
            counts = hue_counts(im)
            if drawn(counts):
                break
        shot = im.crop(window(im))
        shot.save(tmp_path / "vite.png")
        if os.environ.get("PTT_VITE_PNG"):
            shot.save(os.environ["PTT_VITE_PNG"])
        assert drawn(counts), f"ViTE's picture lacks states: {counts}"
    finally:
        for p in (vite, xvfb):
            p.terminate()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
