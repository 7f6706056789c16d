"""Names in ptt view (human and JSON): threads (main, the start routine's symbol numbered per
routine, a name set with pthread_setname_np by the thread or by another), objects (symbols with
member and element paths, heap and stack objects by the line of their init or first use,
ptt_name/ptt_namef, a --names file by address and by symbol), code addresses (function and
line); the modules each process mapped (MODULE_LOAD); <ptt.h> with and without ptt."""

import re
import subprocess
import sys

import pytest

from conftest import PROGS, PTT, parse_raw, prog, ptt_trace, run, trace_prog, view
from names_util import def_line, obj_fields, ptt_usage_error, site_lines, stat_json, view_json

L = site_lines("names_prog")
SRC = "names_prog.c"


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """names_prog traced (and run untraced: the same results), and its JSON view."""
    t = trace_prog(tmp_path_factory.mktemp("names"), "names_prog")
    return t, view_json(t.path)


def object_names(out):
    """The name of each object of names_prog (by the key of its printed address)."""
    return {"queue_lock": "queue_lock", "cache_lock": "cache.lock", "cache_cond": "cache.cond",
            "locks2": "locks[2]", "shard1": "shards[1].lock", "addr_named": "addr_named_lock",
            "symbol_named": "symbol_named_lock", "renamed": "renamed by ptt_name",
            "items": "items", "heap": f"mutex@{SRC}:{L['heap_init']}",
            "fresh": f"mutex@{SRC}:{L['main_lock_fresh']}", "job": "job 7 lock",
            "gate": f"barrier@{SRC}:{L['gate_init']}"}


def named_objects(ev):
    """[(field, address, name)] of the object fields of a JSON event (name None: unnamed)."""
    return [(f, ev["fields"][f], ev.get("names", {}).get(f)) for f in obj_fields(ev["event"])
            if f in ev["fields"]]


def test_thread_names(traced):
    """Every event carries its thread's name: main (in both processes), producer and producer#2
    (the second thread started at producer), the consumer "consumer" until its
    pthread_setname_np returns, then "eater", the thread main named "sleeper" from main's call
    on (before it, "idle", its routine); main is never renamed."""
    assert_thread_names(*traced)


def test_thread_names_light(tmp_path):
    """The same names with --level=light, which records the threads' starts and ends: without
    them, no thread was named by its routine, nor by a pthread_setname_np, which names a
    pthread_t."""
    t = trace_prog(tmp_path, "names_prog", opts=["--level=light"])
    events = view_json(t.path)
    assert not {e["event"] for e in events} & {"MUTEX_ACQUIRED", "COND_WOKEN", "MUTEX_WAIT"}
    assert_thread_names(t, events)


def assert_thread_names(t, events):
    out = t.out
    pid, child = int(out["tid_main"]), int(out["child"])
    want = {int(out["tid_producer0"]): "producer", int(out["tid_producer1"]): "producer#2"}
    cons, idle = int(out["tid_consumer"]), int(out["tid_idle"])
    named = next(i for i, e in enumerate(events) if e["event"] == "THREAD_SETNAME_NP_OUT"
                 and e["tid"] == pid)
    seen = set()
    for i, e in enumerate(events):
        tid, name = e["tid"], e.get("thread")
        if tid in (pid, child):
            assert e["pid"] == tid and name == "main", e
        elif tid in want:
            assert name == want[tid], e
        elif tid == cons:
            renamed = e["event"] == "THREAD_SETNAME_NP_OUT" or "eater" in seen
            assert name == ("eater" if renamed else "consumer"), e
        else:
            assert tid == idle, e
            assert name == ("sleeper" if i > named else "idle"), e
            assert e["event"] == "THREAD_START" or i > named, e
        seen.add(name)
    assert seen - {"idle"} == {"main", "producer", "producer#2", "consumer", "eater", "sleeper"}
    # THREAD_START names its creator by name, and its routine by symbol and line.
    starts = [e for e in events if e["event"] == "THREAD_START"]
    assert [s["names"]["creator"] for s in starts] == ["main"] * 4
    for s in starts:
        fn = {"producer": "producer", "producer#2": "producer", "consumer": "consumer",
              "eater": "consumer", "idle": "idle", "sleeper": "idle"}[s["thread"]]
        line = def_line("names_prog", fn)
        assert s["names"]["start"] in (f"{fn} ({SRC}:{line})", f"{fn} ({SRC}:{line + 1})"), s


def test_human_thread_names(traced):
    """The human format: "Thread NAME (TID)" on every line, the same names as the JSON."""
    t, events = traced
    human = view(t.path).splitlines()
    assert len(human) == len(events)
    for h, e in zip(human, events):
        assert f" : Pid {e['pid']}, Thread {e['thread']} ({e['tid']}) " in h, h
    creates = [h for h in human if "starts user function producer" in h]
    assert len(creates) == 2 and all("created by thread main." in h for h in creates)


def test_object_names(traced):
    """Every object field of every event is named: global symbols, fields (cache.lock), array
    elements (locks[2], shards[1].lock), heap objects by the line of their init
    (mutex@names_prog.c:LINE) or, never initialized, of their first use, the stack barrier by
    its init line; ptt_name's name over the symbol; ptt_namef's from its OBJECT_NAME on (the
    init before it is named by its line). The forked child's queue_lock too."""
    t, events = traced
    out = t.out
    by_addr = {out[k]: (k, n) for k, n in object_names(out).items()}
    job_named = next(i for i, e in enumerate(events) if e["event"] == "OBJECT_NAME"
                     and e["fields"]["object"] == out["job"])
    seen = set()
    for i, e in enumerate(events):
        for field, addr, name in named_objects(e):
            if addr not in by_addr:
                # shards[0] and [2], initialized only
                assert e["event"] in ("MUTEX_INIT_IN", "MUTEX_INIT"), e
                assert re.fullmatch(r"shards\[[02]\]\.lock", name), e
                continue
            key, want = by_addr[addr]
            if key == "job" and i < job_named:
                want = f"mutex@{SRC}:{L['job_init']}"
            assert name == want, e
            seen.add(key)
            if e["pid"] == int(out["child"]):
                assert key == "queue_lock", e
    assert seen == set(object_names(out))
    # OBJECT_NAME events: ptt_name's and ptt_namef's, by main.
    on = [(e["fields"]["object"], e["fields"]["name"], e["tid"]) for e in events
          if e["event"] == "OBJECT_NAME"]
    assert on == [(out["renamed"], "renamed by ptt_name", int(out["tid_main"])),
                  (out["job"], "job 7 lock", int(out["tid_main"]))]


def test_human_object_names(traced):
    """The human format says the names where the JSON has them, and not the addresses."""
    t, events = traced
    human = view(t.path).splitlines()
    n = 0
    for h, e in zip(human, events):
        for field, addr, name in named_objects(e):
            assert name and name in h and addr not in h, (h, e)
            n += 1
    assert n > 50
    out = t.out
    pid, tid = int(out["tid_main"]), int(out["tid_producer0"])
    assert any(h.endswith(f" : Pid {pid}, Thread producer ({tid}) enters function "
                          f"pthread_mutex_lock (mutex queue_lock) at {SRC}:{L['producer_lock']}.")
               for h in human)
    assert any(h.endswith(f"is woken from condvar cache.cond (the wait returns 0) and holds "
                          "mutex cache.lock again.") for h in human)
    assert any(f"enters function pthread_mutex_init (mutex mutex@{SRC}:{L['heap_init']}, "
               f"attr 0x0) at {SRC}:{L['heap_init']}." in h for h in human)


def test_names_file(traced, tmp_path):
    """--names=FILE in view: by address (trailing blanks dropped), by symbol (in both processes),
    over the symbol and over the init line; ptt_name still wins; comments and blank lines."""
    t, _ = traced
    out = t.out
    f = tmp_path / "names"
    f.write_text(f"# names_prog\n\n{out['addr_named']}\tname by address \t\n"
                 "symbol_named_lock name by symbol  # a comment\nqueue_lock the queue\n"
                 f"{out['heap']} heap by file\nrenamed_lock loses to ptt_name\n")
    events = view_json(t.path, f"--names={f}")
    want = dict(object_names(out), addr_named="name by address", symbol_named="name by symbol",
                queue_lock="the queue", heap="heap by file")
    del want["job"]  # named by ptt_namef after its init
    by_addr = {out[k]: n for k, n in want.items()}
    n = 0
    for e in events:
        for field, addr, name in named_objects(e):
            if addr in by_addr:
                assert name == by_addr[addr], e
                n += 1
    assert n > 40
    human = view(f"--names={f}", t.path)
    assert f"(mutex name by address) at {SRC}:{L['idle_lock_addr']}." in human
    assert f"(mutex name by symbol) at {SRC}:{L['idle_lock_symbol']}." in human
    assert f"Thread main ({out['child']}) enters function pthread_mutex_lock (mutex the queue)" \
        in human
    assert "symbol_named_lock" not in human and "addr_named_lock" not in human


def test_names_file_errors(traced, tmp_path):
    """A names file that cannot be read, or a line without a name: exit status 2, one line."""
    path = traced[0].path
    line = ptt_usage_error("view", f"--names={tmp_path}/none", path, cmd="view")
    assert line == f"ptt view: {tmp_path}/none: No such file or directory"
    f = tmp_path / "bad"
    f.write_text("queue_lock the queue\n# fine\n0x1234\n")
    line = ptt_usage_error("view", f"--names={f}", path, cmd="view")
    assert line == f"ptt view: {f}:3: give 'ADDRESS NAME' or 'SYMBOL NAME'"


def test_raw_has_no_names(traced):
    """The raw format stays addresses and numbers: no name of names_prog in it."""
    t, _ = traced
    raw = view("--format=raw", t.path)
    for name in ("queue_lock", "cache.lock", "producer", "mutex@", SRC):
        assert name not in raw.replace(str(prog("names_prog")), "")


def test_module_loads(traced):
    """MODULE_LOAD: the program, libptt and libc, mapped by the traced process before its first
    call (the names of its addresses come from them); the forked child maps nothing new."""
    t, events = traced
    pid, child = int(t.out["tid_main"]), int(t.out["child"])
    raw = parse_raw(view("--format=raw", t.path), keep_machine=True)
    loads = [e for e in raw if e.name == "MODULE_LOAD"]
    assert {e.pid for e in loads} == {pid}
    paths = [e.fields[2] for e in loads]
    assert f'"{PROGS / "names_prog"}"' in paths or f'"{(PROGS / "names_prog").resolve()}"' in paths
    assert any(p.endswith('/libptt.so"') for p in paths)
    assert any(re.search(r'/libc\.so\.6"$', p) for p in paths)
    first_call = next(i for i, e in enumerate(raw) if e.name.endswith("_IN"))
    assert all(raw.index(e) < first_call for e in loads)
    for e in loads:
        assert re.fullmatch(r"0x[0-9a-f]+", e.fields[0]) and int(e.fields[1]) > 0


def peak_kib(*args):
    """The peak resident memory (KiB) of ptt ARGS, which must succeed: measured in a Python of
    its own, whose only child it is."""
    code = ("import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
            "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    p = run([sys.executable, "-c", code, PTT, *args])
    rc, kib = p.stdout.split()
    assert rc == "0", p.stderr
    return int(kib)


def test_many_processes(tmp_path):
    """Processes that run the same binaries share their symbols: each process of a trace of 160
    runs of names_prog (each with its forked child, each at its own addresses) names its objects
    and threads as one run does, and ptt view's memory does not grow with the processes (each
    binary was read again per process: 0.5 MB a process of names_prog, 4.5 MB of cmake)."""
    def runs(n, name):
        loop = f"for i in $(seq {n}); do {PROGS / 'names_prog'} > /dev/null || exit 1; done"
        return ptt_trace(tmp_path, ["sh", "-c", loop], name=name).path
    few, many = runs(8, "few.ptt"), runs(80, "many.ptt")
    events = view_json(many)
    names = {}
    for e in events:
        for f, n in e.get("names", {}).items():
            names.setdefault(e["pid"], set()).add(n)
        names.setdefault(e["pid"], set()).add("thread " + e.get("thread", "?"))
    progs = [pid for pid, ns in names.items() if "thread producer#2" in ns]
    assert len(progs) == 80
    for pid in progs:
        assert {"queue_lock", "cache.lock", "locks[2]", "shards[1].lock",
                "thread producer", "thread eater", "thread sleeper"} <= names[pid], pid
    children = [pid for pid, ns in names.items() if pid not in progs and "queue_lock" in ns]
    assert len(children) == 80  # the forked children name queue_lock from their parent's modules
    # 36 MiB before; about 4 MiB now, 9.5 under ASan (its red zones and quarantine)
    grown = peak_kib("view", "--format=json", many) - peak_kib("view", "--format=json", few)
    assert grown < 20 * 1024, f"ptt view grew by {grown} KiB for 144 more processes"


# <ptt.h>

NAMES = {"m": "request lock", "c": "queue 7 not empty",
         "s": "".join(chr(ord("a") + i % 26) for i in range(255)), "rw": 'say "hi", C:\\dir'}


def test_header_untraced(tmp_path):
    """name_api linked with pthread alone (no libptt, no libdl): run without ptt, ptt_name and
    ptt_namef do nothing and it runs to the end (trace_prog runs it both ways: the same
    results, exit status 0, nothing on stderr)."""
    needed = subprocess.run(["readelf", "-d", prog("name_api")], capture_output=True, text=True,
                            check=True).stdout
    libs = set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]", needed))
    assert libs and libs <= {"libc.so.6", "libpthread.so.0"}, libs
    p = run([prog("name_api")], cwd=tmp_path)
    assert p.returncode == 0 and p.stderr == ""
    results = [line for line in p.stdout.splitlines() if not line.startswith("@")]
    assert len(results) == 24 and all(re.fullmatch(r"\w+=0|\w+\.errno=4242", r) for r in results)
    assert trace_prog(tmp_path, "name_api").results == dict(r.split("=") for r in results)


def test_header_traced(tmp_path):
    """Under ptt trace: one OBJECT_NAME per call, right after the object's init, with the name
    (ptt_namef formatted; 255 bytes kept of 300); the objects' later events are named so, in
    human and JSON (quotes and backslashes escaped), and in ptt stat."""
    t = trace_prog(tmp_path, "name_api")
    out = t.out
    ev = t.events
    on = [e for e in ev if e.name == "OBJECT_NAME"]
    raw_name = lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'  # noqa: E731
    assert [e.fields for e in on] == [(out[k], raw_name(NAMES[k])) for k in ("m", "c", "s", "rw")]
    for e in on:
        i = ev.index(e)
        assert ev[i - 1].name.endswith("_INIT_OUT"), ev[i - 1]
        assert e.tid == e.pid
    events = view_json(t.path)
    n = 0
    for e in events:
        if e["event"] == "OBJECT_NAME":
            k = next(k for k in NAMES if out[k] == e["fields"]["object"])
            assert e["fields"]["name"] == NAMES[k]
            continue
        for field, addr, name in named_objects(e):
            k = next(k for k in NAMES if out[k] == addr)
            if not e["event"].endswith("INIT_IN") and e["event"] != "MUTEX_INIT":
                assert name == NAMES[k], e
                n += 1
    assert n == 8  # lock, unlock, destroy; signal; wait, post; wrlock, unlock
    human = view(t.path)
    assert '(rwlock say "hi", C:\\dir) at name_api.c:' in human
    assert "(mutex request lock) at name_api.c:" in human
    assert "(cond queue 7 not empty) at name_api.c:" in human
    s = stat_json(t.path)
    assert {o["address"]: o["name"] for o in s["objects"]} == \
        {out["m"]: NAMES["m"], out["s"]: NAMES["s"], out["rw"]: NAMES["rw"]}
