"""Out of memory: every command, its Nth allocation failing and every one after it
(tests/progs/failalloc.c, preloaded), ends with one line that says so and its documented status
(2 for the readers, 125 for ptt trace), never a crash or an abort, and never runs the program
untraced without a word. N runs over the first allocations, where the set-up is, and further
apart beyond."""

import os
import subprocess

import pytest

from conftest import PTT, SOURCE, TIMEOUT, prog, require_build, run
from test_readahead import READERS as TEXT_READERS, sanitized

READERS = [  # those of test_readahead, and the commands that write files
    *TEXT_READERS,
    ["export", "--format=chrome", "-o", "OUT"],
    ["export", "--format=ctf", "-o", "OUT"],
    ["export", "--format=sco", "-o", "OUT"],
    ["paje", "-o", "OUT"],
    ["report", "-o", "OUT"],
]
NS = [*range(1, 40), *range(40, 400, 9)]


def oom_said(line):
    """ptt's own words, or strerror(ENOMEM) after what could not be done."""
    return line.startswith("ptt") and ("out of memory" in line or
                                       line.endswith(": Cannot allocate memory"))


def failing(n, argv, cwd, once=False):
    env = dict(os.environ, PTT_TEST_FAIL_ALLOC=str(n), PTT_TEST_FAIL_ALLOC_ALL="1",
               PTT_TEST_FAIL_ALLOC_ONCE="1" if once else "0", PTT_READ_AHEAD="0",
               LD_PRELOAD=str(prog("libfailalloc.so")))
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    require_build()
    if sanitized():
        pytest.skip("the sanitizers' allocator cannot be replaced by a preloaded one")
    d = tmp_path_factory.mktemp("oom")
    p = run([PTT, "trace", "-q", "-o", d / "t.ptt", "--", prog("thread_churn"), 50])
    assert p.returncode == 0, p.stderr
    return d / "t.ptt"


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a[:2]))
def test_reader(trace, tmp_path, args):
    failed = 0
    for n in NS:
        out = tmp_path / f"out{n}"
        p = failing(n, [PTT, *[str(out) if a == "OUT" else a for a in args], trace], tmp_path)
        if p.returncode == 0:
            continue
        failed += 1
        last = p.stderr.splitlines()[-1] if p.stderr else ""
        assert p.returncode == 2 and oom_said(last), (n, p.returncode, p.stderr)
    assert failed >= 39  # the set-up's allocations failed, each said so


def true_status(p, n):
    """A command whose one allocation failed: it got over it (status 0, nothing said), or said
    so with status 2; a status 0 after a complaint is a summary that is not true."""
    last = p.stderr.splitlines()[-1] if p.stderr else ""
    if p.returncode == 0:
        assert p.stderr == "", (n, p.stderr)
    else:
        assert p.returncode == 2 and oom_said(last), (n, p.returncode, p.stderr)
    return p.returncode != 0


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a[:2]))
def test_reader_once(trace, tmp_path, args):
    """Only the Nth allocation fails: the command gets over it or says so (a names table that
    could not be made crashed ptt view, stat and check; a count table ptt view --summary)."""
    failed = 0
    for n in [*range(1, 12), *range(12, 400, 23)]:
        out = tmp_path / f"out{n}"
        argv = [PTT, *[str(out) if a == "OUT" else a for a in args], trace]
        failed += true_status(failing(n, argv, tmp_path, once=True), n)
    assert failed


def test_trace(tmp_path):
    """ptt trace: its own allocations come before the program starts, but for a few."""
    require_build()
    if sanitized():
        pytest.skip("the sanitizers' allocator cannot be replaced by a preloaded one")
    failed = 0
    for n in range(1, 40):
        out = tmp_path / f"t{n}.ptt"
        p = failing(n, [PTT, "trace", "-q", "-o", out, "--", "echo", "ran"], tmp_path)
        if p.returncode == 0:
            assert p.stdout == "ran\n"
            continue
        failed += 1
        lines = p.stderr.splitlines()
        assert p.returncode == 125 and lines, (n, p.returncode, p.stderr)
        assert oom_said(lines[-1]), (n, lines)
        assert p.stdout in ("", "ran\n"), n
    assert failed >= 10


RUNS = [
    ["list"],
    ["show", "a"],
    ["compare", "a", "a"],
    ["report", "-o", "OUT"],
    ["import", "--name=b", "LOG"],
    ["import", "LOG"],
]
LOG = SOURCE / "tests" / "data" / "runs" / "opts" / "logfile.conformance-test"


@pytest.mark.parametrize("args", RUNS, ids=lambda a: " ".join(a[:2]))
def test_runs(tmp_path, args):
    """ptt runs: SQLite's own failures too (its "out of memory"), never read as "no such run",
    "not a database of ptt runs" or "a run is named so already"."""
    require_build()
    if sanitized():
        pytest.skip("the sanitizers' allocator cannot be replaced by a preloaded one")
    db = tmp_path / "r.db"
    p = run([PTT, "runs", "import", f"--db={db}", "--name=a", LOG])
    if "built without SQLite" in p.stderr:
        pytest.skip("ptt was built without SQLite")
    assert p.returncode == 0, p.stderr
    clean = db.read_bytes()
    failed = 0
    for n in [*range(1, 40), *range(40, 700, 7)]:
        db.write_bytes(clean)
        out = tmp_path / f"r{n}.html"
        argv = [PTT, "runs", args[0], f"--db={db}",
                *[out if a == "OUT" else LOG if a == "LOG" else a for a in args[1:]]]
        p = failing(n, argv, tmp_path)
        if p.returncode == 0:
            continue
        failed += 1
        last = p.stderr.splitlines()[-1] if p.stderr else ""
        assert p.returncode == 2 and oom_said(last), (n, p.returncode, p.stderr)
    assert failed >= 39
    once = 0
    for n in [*range(1, 20), *range(20, 900, 29)]:  # only the Nth: said, then status 2
        db.write_bytes(clean)
        out = tmp_path / f"r{n}.html"
        argv = [PTT, "runs", args[0], f"--db={db}",
                *[out if a == "OUT" else LOG if a == "LOG" else a for a in args[1:]]]
        once += true_status(failing(n, argv, tmp_path, once=True), n)
    assert once


@pytest.mark.parametrize("cmd", ["show", "report"])
def test_runs_findings_once(tmp_path, cmd):
    """A run with a finding of ptt check (a deadlock): one allocation failing anywhere in ptt
    runs show or report, SQLite's included, is got over or said with status 2 (a query that
    could not be prepared was said, then status 0)."""
    require_build()
    if sanitized():
        pytest.skip("the sanitizers' allocator cannot be replaced by a preloaded one")
    traces = tmp_path / "traces"
    traces.mkdir()
    p = run([PTT, "trace", "--hang-timeout=0.5", "--kill-on-hang", "-q", "-o",
             traces / "abba.ptt", "--", prog("check/check_abba")])
    assert p.returncode == 137, p.stderr
    log = tmp_path / "run.tap"
    log.write_text("1..1\nnot ok 1 - abba\n")
    db = tmp_path / "f.db"
    p = run([PTT, "runs", "import", f"--db={db}", "--name=dir", f"--trace={traces}", log])
    if "built without SQLite" in p.stderr:
        pytest.skip("ptt was built without SQLite")
    assert p.returncode == 0, p.stderr
    clean = db.read_bytes()
    said = 0
    for n in range(1, 1500, 23):  # the failure was at 693 to 751 (SQLite 3.40)
        db.write_bytes(clean)
        argv = [PTT, "runs", cmd, f"--db={db}", *(["-o", tmp_path / "r.html"] if cmd == "report"
                                                  else []), "dir"]
        said += true_status(failing(n, argv, tmp_path, once=True), n)
    assert said
