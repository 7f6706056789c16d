"""Threads of a CPython program (Debian's /usr/bin/python3, 3.11; tests/progs/py_threads.py) as
ptt names them (docs/names.md, "Python"): a threading.Thread is named after CPython's start
routine, pythread_wrapper (with its debug information, python3.11-dbg, installed by
scripts/test-deps; else python3.11+0xOFFSET), numbered in the order the threads started; a thread
that gives its name to the OS thread through the process's global scope (pthread_setname_np or
prctl(PR_SET_NAME) with ctypes.CDLL(None)) is named so from then on; two threads that take the
same name are told apart (worker, worker#2); pthread_setname_np through ctypes.CDLL("libc.so.6")
is not seen. Each thread with its kernel thread id (Python's threading.get_native_id()), in
ptt view, ptt stat, the report and the Pajé trace, no two with the same name."""

import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import PTT, SOURCE, parse_output, ptt_trace, run
from names_util import stat_json, view_json

PYTHON = "/usr/bin/python3"
PROG = (SOURCE / "tests" / "progs" / "py_threads.py").resolve()

if not os.path.exists(PYTHON):
    pytest.skip(f"{PYTHON} is missing", allow_module_level=True)


def debug_file(binary):
    """Whether the separate debug file of binary is installed (/usr/lib/debug/.build-id)."""
    p = subprocess.run(["readelf", "-n", binary], capture_output=True, text=True)
    m = re.search(r"Build ID: ([0-9a-f]{2})([0-9a-f]+)", p.stdout)
    return bool(m) and os.path.exists(f"/usr/lib/debug/.build-id/{m[1]}/{m[2]}.debug")


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    t = ptt_trace(tmp_path_factory.mktemp("python"), [PYTHON, PROG])
    t.results, t.out = parse_output(t.stdout)
    assert t.results == {"total": "210"}
    t.tids = {k[4:]: int(v) for k, v in t.out.items() if k.startswith("tid_")}
    events = view_json(t.path)
    starts = [e for e in events if e["event"] == "THREAD_START"]
    assert len(starts) == 6
    # What the start routine is called: its symbol from python3.11-dbg's debug file, else
    # the module and offset (CPython's binary is stripped, the routine is static).
    routine = {e["names"]["start"] for e in starts}
    assert len(routine) == 1
    t.base = routine.pop()
    if debug_file(os.path.realpath(PYTHON)):
        assert re.fullmatch(r"pythread_wrapper \(thread_pthread\.h:\d+\)", t.base), t.base
        t.base = "pythread_wrapper"
    else:
        assert re.fullmatch(r"python3\.11\+0x[0-9a-f]+", t.base), t.base
    t.jevents, t.starts = events, starts
    b = t.base
    t.want = {"main": "main", "producer": "producer", "consumer": "consumer",
              "worker1": "worker", "worker2": "worker#2", "hidden": f"{b}#5",
              "anonymous": f"{b}#6"}
    return t


def test_names_at_start(traced):
    """Each thread starts under the start routine's name, numbered in start order (Thread.start
    returns once the thread runs)."""
    t, b = traced, traced.base
    order = ["producer", "consumer", "worker1", "worker2", "hidden", "anonymous"]
    assert [(e["tid"], e["thread"]) for e in t.starts] == \
        [(t.tids[k], b if i == 0 else f"{b}#{i + 1}") for i, k in enumerate(order)]


def test_names_set(traced):
    """From the call that names it on (pthread_setname_np, prctl), a thread has its name;
    before, the start routine's; the name the libc-scoped call gave is never seen."""
    t = traced
    by_tid = {tid: k for k, tid in t.tids.items()}
    renamed = {}
    for e in t.jevents:
        key = by_tid.get(e["tid"])
        if key is None:
            continue
        if e["event"] in ("THREAD_SETNAME_NP_OUT", "PRCTL_OUT"):
            renamed[key] = e["event"]
        want = t.want[key]
        if key in ("producer", "consumer", "worker1", "worker2") and key not in renamed:
            assert e["thread"] != want, e
        else:
            assert e["thread"] == want, e
    assert renamed == {"producer": "THREAD_SETNAME_NP_OUT", "consumer": "PRCTL_OUT",
                       "worker1": "THREAD_SETNAME_NP_OUT", "worker2": "THREAD_SETNAME_NP_OUT"}
    prctl = [e for e in t.jevents if e["event"] == "PRCTL_IN"]
    assert [(e["tid"], e["fields"]["option"], e["fields"]["name"]) for e in prctl] == \
        [(t.tids["consumer"], 15, "consumer")]


def test_human(traced):
    """ptt view's sentences give the name and the tid."""
    t = traced
    text = run([PTT, "view", "--event=THREAD_END", t.path]).stdout
    for key in ("producer", "consumer", "worker1", "worker2", "hidden", "anonymous"):
        assert f"Thread {t.want[key]} ({t.tids[key]}) ends (returned)" in text, key


def test_stat(traced):
    """ptt stat: every thread, its final name and tid; the text table the same."""
    t = traced
    want = sorted((t.tids[k], v) for k, v in t.want.items())
    st = stat_json(t.path)
    assert sorted((th["tid"], th["name"]) for th in st["threads"]) == want
    text = run([PTT, "stat", t.path]).stdout.splitlines()
    head = next(i for i, line in enumerate(text) if line.startswith("pid ") and " tid " in line)
    rows = []
    for line in text[head + 1:]:
        if not line.strip():
            break
        m = re.match(r"(\d+) +(\d+) +(.+?) +[\d.]+(?:ns|us|ms|s) ", line)
        assert m, line
        rows.append((int(m[2]), m[3]))
    assert sorted(rows) == want


def test_report_and_paje(traced, tmp_path):
    """The report's rows and the Pajé trace's thread containers: the same names, no two alike."""
    t = traced
    want = sorted(t.want.values())
    out = tmp_path / "r.html"
    p = run([PTT, "report", t.path, "-o", out])
    assert p.returncode == 0, p.stderr
    m = re.search(r'<script type="application/json" id="ptt-data">(.*?)</script>',
                  out.read_text(), re.S)
    rows = json.loads(m[1])["rows"]
    assert sorted((r["t"], r["n"]) for r in rows) == sorted((t.tids[k], v)
                                                           for k, v in t.want.items())
    paje = tmp_path / "t.paje"
    p = run([PTT, "paje", t.path, "-o", paje])
    assert p.returncode == 0, p.stderr
    if not shutil.which("pj_dump"):
        if os.environ.get("CI"):
            pytest.fail("pj_dump is missing: install the Debian package pajeng")
        pytest.skip("pj_dump is missing (Debian package pajeng)")
    dump = run(["pj_dump", paje])
    assert dump.returncode == 0 and dump.stderr == "", dump.stderr
    names = [r.split(", ")[6] for r in dump.stdout.splitlines()
             if r.startswith("Container, ") and r.split(", ")[2] == "Thread"]
    assert sorted(names) == want
