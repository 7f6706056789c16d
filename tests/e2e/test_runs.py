"""ptt runs (docs/runs.md): test logs into the database, shown and compared, the HTML page.

The parsers read real logs (tests/data/runs, whose README.md says how each was made): the Open
POSIX Test Suite's from make opts and from its own bin/run-tests.sh, TAP from Perl's Test::More
and node --test, JUnit XML from pytest --junitxml and ctest --output-junit; their counts and
statuses are asserted exactly. Comparisons run on small logs written here. Bad input (cut or
foreign logs, foreign or other-version databases) gives one line and exit status 2. The page is
opened in headless Chromium: its filters, set through the page's address, change the rows
shown, and the tests whose status differs are marked.
"""

import fcntl
import html.parser
import json
import os
import re
import select
import shutil
import sqlite3
import subprocess
import time

import pytest

from conftest import PROGS, PTT, SOURCE, run

DATA = SOURCE / "tests" / "data" / "runs"
OPTS = "conformance/interfaces"


def ptt_runs(*args, rc=0):
    p = run([PTT, "runs", *args])
    assert p.returncode == rc, f"ptt runs {args}: exit {p.returncode}: {p.stderr}"
    return p


@pytest.fixture(autouse=True)
def need_sqlite():
    p = run([PTT, "runs", "list", "--db=/nonexistent/x.db"])
    if "built without SQLite" in p.stderr:
        if os.environ.get("CI"):
            pytest.fail("ptt runs needs SQLite (Debian: apt-get install libsqlite3-dev)")
        pytest.skip("ptt was built without SQLite")


def show(db, run_ref, *opts):
    return json.loads(ptt_runs("show", f"--db={db}", "--format=json", *opts, run_ref).stdout)


def statuses(doc):
    return {t["test"]: t["status"] for t in doc["tests"]}


def one_line_error(p, start):
    """Bad input: exit status 2 and one line on stderr, that starts so."""
    assert p.returncode == 2, p
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(start), lines[0]
    return lines[0]


# ---- the parsers, on real logs ----------------------------------------------------------------

# make opts on this project's machine: the suite's 456 pthread and semaphore tests gave the same
# results natively and under ptt trace --check (docs/opts-comparison.md).
NATIVE_COUNTS = {"PASS": 448, "FAIL": 1, "UNSUPPORTED": 5, "UNTESTED": 2}
NATIVE_LINE = "run 1 native: 456 tests: 448 PASS, 1 FAIL, 5 UNSUPPORTED, 2 UNTESTED\n"
TRACED_COUNTS = NATIVE_COUNTS
NATIVE_NOT_PASS = {
    f"{OPTS}/pthread_barrier_destroy/2-1": "UNSUPPORTED",
    f"{OPTS}/pthread_cond_destroy/speculative/4-1": "UNSUPPORTED",
    f"{OPTS}/pthread_mutex_init/speculative/5-2": "UNSUPPORTED",
    f"{OPTS}/pthread_mutexattr_gettype/speculative/3-1": "UNTESTED",
    f"{OPTS}/pthread_rwlock_unlock/3-1": "FAIL",
    f"{OPTS}/pthread_rwlock_unlock/4-1": "UNSUPPORTED",
    f"{OPTS}/pthread_rwlock_unlock/4-2": "UNSUPPORTED",
    f"{OPTS}/sem_init/7-1": "UNTESTED",
}
SUITE_LOG_COUNTS = {"PASS": 11, "FAIL": 1, "UNSUPPORTED": 2, "UNTESTED": 1}


def test_opts_make_opts_logs(tmp_path):
    """The logs of make opts (the build's and both runs'): 456 tests each, the statuses as the
    suite's bin/run-tests.sh words them, a duration for each test."""
    db = tmp_path / "r.db"
    d = DATA / "opts"
    p = ptt_runs("import", f"--db={db}", "--name=native", d / "build.log", d / "native.log")
    assert p.stdout == NATIVE_LINE
    ptt_runs("import", f"--db={db}", "--name=traced", d / "build.log", d / "traced.log")
    for name, counts in (("native", NATIVE_COUNTS), ("traced", TRACED_COUNTS)):
        doc = show(db, name)
        assert doc["run"]["counts"] == counts
        assert doc["run"]["format"] == "opts"
        assert len(doc["tests"]) == 456
        assert all(t["duration"] is not None for t in doc["tests"])
        assert all(t["test"].startswith(OPTS + "/pthread_") or t["test"].startswith(OPTS + "/sem_")
                   for t in doc["tests"])
    native = show(db, "native")
    st = statuses(native)
    for test, status in NATIVE_NOT_PASS.items():
        assert st[test] == status, test
    assert sum(s != "PASS" for s in st.values()) == len(NATIVE_NOT_PASS)
    # A test that did not pass keeps what it printed.
    failed = {t["test"]: t for t in native["tests"]}[f"{OPTS}/pthread_rwlock_unlock/3-1"]
    assert failed["output"].endswith("Test fail: writer did not get write lock, when test_main "
                                      "release the lock\n")
    # The same results: no new failure, no fix, nothing flaky or missing.
    doc = json.loads(ptt_runs("compare", f"--db={db}", "--format=json", "native",
                              "traced").stdout)
    assert {k: v for k, v in doc["summary"].items() if k != "slower"} == {
        "tests": 456, "new_failures": 0, "fixed": 0, "flaky": 0, "missing": 0, "unchanged": 456}


def test_opts_suite_log(tmp_path):
    """The suite's own log (make test in two directories: bin/run-tests.sh), and its standard
    output: the same results; its log has no durations."""
    db = tmp_path / "r.db"
    d = DATA / "opts"
    ptt_runs("import", f"--db={db}", "--name=log", d / "logfile.conformance-test")
    p = ptt_runs("import", f"--db={db}", "--name=stdout", d / "make-test.out")
    assert p.stderr == (f"ptt runs: {d / 'make-test.out'}: its summaries count 15 tests, 4 of "
                        "them named: run-tests.sh's standard output names only those that did "
                        "not pass; its log file (logfile) names every one\n")
    log, out = show(db, "log"), show(db, "stdout")
    assert log["run"]["counts"] == SUITE_LOG_COUNTS
    assert all(t["duration"] is None for t in log["tests"])
    # Standard output names only the tests that did not pass.
    assert {k: v for k, v in statuses(log).items() if v != "PASS"} == statuses(out)


def test_opts_names_and_glued_lines(tmp_path):
    """A test is named after its source (the log's pthread_x_1-1 is pthread_x/1-1); a status
    line glued to the output of a test that printed no final newline is still found; the build
    log's failure is a BUILDFAIL."""
    log = tmp_path / "log"
    log.write_text(
        "\n"
        f"{OPTS}/pthread_x/pthread_x_1-1: execution: FAILED: Output: \n"
        "Test FAILED: no newline at the end"
        f"{OPTS}/pthread_x/pthread_x_2-1: execution: PASS\n"
        f"{OPTS}/pthread_x/speculative/pthread_x_speculative_3-1: execution: UNRESOLVED: Output: \n"
        "could not tell\n"
        f"{OPTS}/pthread_x/pthread_x_3-1: execution: HUNG: Output: \n"
        f"{OPTS}/pthread_x/pthread_x_3-1: duration: 300.5\n")
    build = tmp_path / "build"
    build.write_text(f"{OPTS}/pthread_x/1-1 compile PASSED\n"
                     f"{OPTS}/pthread_x/4-1 compile FAILED; SKIPPING\n"
                     "4-1.c:3: error: 'x' undeclared\n")
    db = tmp_path / "r.db"
    ptt_runs("import", f"--db={db}", "--name=r", build, log)
    doc = show(db, "r")
    assert [(t["test"], t["status"], t["raw_status"], t["duration"]) for t in doc["tests"]] == [
        (f"{OPTS}/pthread_x/4-1", "BUILDFAIL", "compile FAILED", None),
        (f"{OPTS}/pthread_x/1-1", "FAIL", "FAILED", None),
        (f"{OPTS}/pthread_x/2-1", "PASS", "PASS", None),
        (f"{OPTS}/pthread_x/speculative/3-1", "UNRESOLVED", "UNRESOLVED", None),
        (f"{OPTS}/pthread_x/3-1", "TIMEOUT", "HUNG", 300.5)]
    out = {t["test"]: t["output"] for t in doc["tests"]}
    assert out[f"{OPTS}/pthread_x/1-1"] == "Test FAILED: no newline at the end"
    assert out[f"{OPTS}/pthread_x/speculative/3-1"] == "could not tell\n"
    assert out[f"{OPTS}/pthread_x/4-1"] == "4-1.c:3: error: 'x' undeclared\n"


def test_opts_test_run_again(tmp_path):
    """A test the log has twice (run again): its last result, without the earlier duration; so
    for a name with a control character too (stored as '?', looked up so). A summary's TOTAL
    too large for an int is still a summary line."""
    log = tmp_path / "log"
    log.write_text(f"{OPTS}/pthread_x/pthread_x_1-1: execution: PASS\n"
                   f"{OPTS}/pthread_x/pthread_x_1-1: duration: 0.5\n"
                   f"{OPTS}/pthread_x/pthread_x_1-1: execution: FAILED: Output: \n"
                   "again\n"
                   f"{OPTS}/pthread_x/pthread_x_2\x1b-1: execution: PASS\n"
                   f"{OPTS}/pthread_x/pthread_x_2\x1b-1: duration: 0.25\n"
                   "TOTAL\t\t4294967297\n")
    db = tmp_path / "r.db"
    p = ptt_runs("import", f"--db={db}", "--name=r", log)
    assert p.stderr == (f"ptt runs: {log}: its summaries count 4294967297 tests, 2 of them "
                        "named: run-tests.sh's standard output names only those that did not "
                        "pass; its log file (logfile) names every one\n")
    assert [(t["test"], t["status"], t["duration"], t["output"]) for t in show(db, "r")["tests"]] \
        == [(f"{OPTS}/pthread_x/1-1", "FAIL", None, "again\n"),
            (f"{OPTS}/pthread_x/2?-1", "PASS", 0.25, "")]


def test_byte_order_mark(tmp_path):
    """A log that begins with UTF-8's byte-order mark (as some Windows tools write) reads as
    without it."""
    log = tmp_path / "bom.tap"
    log.write_bytes(b"\xef\xbb\xbf" + (DATA / "tap" / "basic.tap").read_bytes())
    p = ptt_runs("import", f"--db={tmp_path / 'r.db'}", log)
    assert p.stdout == "run 1 bom.tap: 7 tests: 3 PASS, 2 FAIL, 1 SKIP, 1 XFAIL\n"


def test_tap_perl(tmp_path):
    """TAP from Perl's Test::More (basic.t): a failure and its diagnostics, a skip, a TODO."""
    db = tmp_path / "r.db"
    p = ptt_runs("import", f"--db={db}", DATA / "tap" / "basic.tap")
    assert p.stdout == "run 1 basic.tap: 7 tests: 3 PASS, 2 FAIL, 1 SKIP, 1 XFAIL\n"
    doc = show(db, "basic.tap")
    assert doc["run"]["format"] == "tap"
    assert [(t["test"], t["status"], t["raw_status"]) for t in doc["tests"]] == [
        ("addition", "PASS", "ok"),
        ("lower case", "PASS", "ok"),
        ("multiplication is wrong on purpose", "FAIL", "not ok"),
        ("test 4", "SKIP", "ok # SKIP"),
        ("parse dates", "XFAIL", "not ok # TODO"),
        ("a # in a name \\# is kept", "PASS", "ok"),
        ("ten is less than three", "FAIL", "not ok")]
    assert doc["tests"][2]["output"] == (
        "#   Failed test 'multiplication is wrong on purpose'\n#   at basic.t line 7.\n"
        "#          got: '6'\n#     expected: '7'\n")
    assert all(t["duration"] is None for t in doc["tests"])


def test_tap_skip_all(tmp_path):
    """A plan of 1..0 (Test::More's skip_all) is one SKIP named after its file, the plan's
    comment its output; beside another log, it adds that one test."""
    db = tmp_path / "r.db"
    log = tmp_path / "net.t.tap"
    log.write_text("TAP version 13\n1..0 # SKIP no network here\n")
    p = ptt_runs("import", f"--db={db}", "--name=r", DATA / "tap" / "basic.tap", log)
    assert p.stdout == "run 1 r: 8 tests: 3 PASS, 2 FAIL, 2 SKIP, 1 XFAIL\n"
    doc = show(db, "r")
    skipped = [t for t in doc["tests"] if t["test"] == "net.t.tap"]
    assert [(t["status"], t["output"]) for t in skipped] == [("SKIP", "# SKIP no network here")]


def test_tap_node(tmp_path):
    """TAP from node --test: durations from the YAML blocks, subtests left to their parent."""
    db = tmp_path / "r.db"
    ptt_runs("import", f"--db={db}", "--name=node", DATA / "tap" / "node.tap")
    doc = show(db, "node")
    assert [(t["test"], t["status"], t["duration"]) for t in doc["tests"]] == [
        ("adds", "PASS", 0.021963),
        ("waits a little", "PASS", 0.122099),
        ("fails on purpose", "FAIL", 0.008326),
        ("skipped", "SKIP", 0.000687),
        ("todo", "XFAIL", 0.000320),
        ("group", "PASS", 0.018783)]
    assert "'a' !== 'b'" in doc["tests"][2]["output"]


def test_junit_pytest(tmp_path):
    """pytest --junitxml: classname.name, failure, error, skip, xfail, the machine and date."""
    db = tmp_path / "r.db"
    p = ptt_runs("import", f"--db={db}", DATA / "junit" / "pytest.xml")
    assert p.stdout == "run 1 pytest.xml: 9 tests: 4 PASS, 2 FAIL, 1 ERROR, 1 SKIP, 1 XFAIL\n"
    doc = show(db, "pytest.xml")
    assert doc["run"]["format"] == "junit"
    assert doc["run"]["machine"] == "vm"
    assert doc["run"]["date"] == "2026-11-25T20:03:16.018928"
    assert [(t["test"], t["status"]) for t in doc["tests"]] == [
        ("test_sample.test_passes", "PASS"),
        ("test_sample.test_fails", "FAIL"),
        ("test_sample.test_slow", "PASS"),
        ("test_sample.test_skipped", "SKIP"),
        ("test_sample.test_xfail", "XFAIL"),
        ("test_sample.test_param[1]", "PASS"),
        ("test_sample.test_param[2]", "FAIL"),
        ("test_sample.TestGroup.test_method", "PASS"),
        ("test_sample.test_error", "ERROR")]
    fails = {t["test"]: t for t in doc["tests"]}
    assert fails["test_sample.test_fails"]["output"].startswith(
        "failure: AssertionError: upper case\n")
    assert fails["test_sample.test_param[1]"]["output"] == (
        "system-out:\n" + "-" * 33 + " Captured Out " + "-" * 33 + "\nn is 1\n\n")


def test_junit_ctest(tmp_path):
    """ctest --output-junit: a timeout and a crash are failures, a disabled test is skipped."""
    db = tmp_path / "r.db"
    ptt_runs("import", f"--db={db}", "--name=ctest", DATA / "junit" / "ctest.xml")
    doc = show(db, "ctest")
    assert [(t["test"], t["status"], t["raw_status"]) for t in doc["tests"]] == [
        ("passes", "PASS", "passed"),
        ("fails", "FAIL", "failure"),
        ("times_out", "FAIL", "failure"),
        ("skipped", "SKIP", "notrun"),
        ("disabled", "SKIP", "disabled"),
        ("crashes", "FAIL", "failure")]
    assert doc["tests"][1]["output"] == "failure\nsystem-out:\nabout to fail\n"


def test_show_failed_text(tmp_path):
    db = tmp_path / "r.db"
    ptt_runs("import", f"--db={db}", "--name=p", "--machine=m", "--date=d", "--command=c",
             DATA / "tap" / "basic.tap")
    p = ptt_runs("show", f"--db={db}", "--failed", "p")
    assert p.stdout == (
        "run 1 p (tap), on m, d\ncommand: c\n7 tests: 3 PASS, 2 FAIL, 1 SKIP, 1 XFAIL\n\n"
        "FAIL                -  multiplication is wrong on purpose\n"
        "FAIL                -  ten is less than three\n")


# ---- compare ----------------------------------------------------------------------------------


def opts_log(path, results):
    """An OPTS log as bin/run-tests.sh and make opts write it: (test, status, seconds)."""
    lines = [""]
    for test, status, secs in results:
        name = f"{OPTS}/demo/demo_{test}"
        lines.append(f"{name}: execution: PASS" if status == "PASS" else
                     f"{name}: execution: {status}: Output: \nit said {status}")
        lines.append(f"{name}: duration: {secs}")
    path.write_text("\n".join(lines) + "\n")
    return path


RUNS = {
    "a": [("1-1", "PASS", 0.1), ("2-1", "FAILED", 0.1), ("3-1", "PASS", 0.1),
          ("4-1", "PASS", 0.1), ("5-1", "PASS", 0.1), ("6-1", "PASS", 0.1)],
    "b": [("1-1", "PASS", 0.1), ("2-1", "FAILED", 0.1), ("3-1", "FAILED", 0.1),
          ("4-1", "PASS", 0.12), ("6-1", "PASS", 0.1)],
    "c": [("1-1", "FAILED", 0.1), ("2-1", "PASS", 0.1), ("3-1", "PASS", 0.1),
          ("4-1", "PASS", 0.5), ("5-1", "PASS", 0.1), ("6-1", "PASS", 0.12)],
}


@pytest.fixture
def three(tmp_path):
    db = tmp_path / "c.db"
    for i, (name, results) in enumerate(RUNS.items()):
        ptt_runs("import", f"--db={db}", f"--name={name}", "--machine=m",
                 f"--date=2024-01-0{i + 1}", opts_log(tmp_path / f"{name}.log", results))
    return db


def T(n):
    return f"{OPTS}/demo/{n}"


def test_compare_text(three):
    """New failure, fix, flaky, missing, slower; exit status 1 for the new failure."""
    p = ptt_runs("compare", f"--db={three}", "a", "b", "c", rc=1)
    assert p.stdout == (
        "runs: 1 a (m, 2024-01-01), 2 b (m, 2024-01-02), 3 c (m, 2024-01-03)\n"
        "\nnew failures: failing in c, not in a (1):\n"
        f"  {T('1-1')}  PASS -> PASS -> FAIL\n"
        "\nfixed: failing in a, not in c (1):\n"
        f"  {T('2-1')}  FAIL -> FAIL -> PASS\n"
        "\nflaky: the status differs across the runs (1):\n"
        f"  {T('3-1')}  PASS -> FAIL -> PASS\n"
        "\nmissing: not in every run (1):\n"
        f"  {T('5-1')}  PASS -> - -> PASS\n"
        "\nslower by more than 50% (1):\n"
        f"  {T('4-1')}  0.100 s -> 0.500 s (+400%)\n"
        "\n6 tests: new failures 1, fixed 1, flaky 1, missing 1, unchanged 2; slower 1\n")
    assert p.stderr == ""


def test_compare_two_json(three):
    """Two runs: the test failed in one and passed in the other; the one slower by 20% is not
    slower at 50% but is at 10%."""
    doc = json.loads(ptt_runs("compare", f"--db={three}", "--format=json", "1", "c",
                              rc=1).stdout)
    assert [r["name"] for r in doc["runs"]] == ["a", "c"]
    assert doc["summary"] == {"tests": 6, "new_failures": 1, "fixed": 1, "flaky": 0,
                              "missing": 0, "slower": 1, "unchanged": 4}
    assert [(t["test"], t["change"], t["slower"], t["statuses"]) for t in doc["tests"]] == [
        (T("1-1"), "new-failure", False, ["PASS", "FAIL"]),
        (T("2-1"), "fixed", False, ["FAIL", "PASS"]),
        (T("4-1"), "same", True, ["PASS", "PASS"])]
    assert doc["tests"][2]["durations"] == [0.1, 0.5]
    doc = json.loads(ptt_runs("compare", f"--db={three}", "--format=json", "--slower=10", "a",
                              "c", rc=1).stdout)
    assert [t["test"] for t in doc["tests"] if t["slower"]] == [T("4-1"), T("6-1")]
    doc = json.loads(ptt_runs("compare", f"--db={three}", "--format=json", "--all", "a",
                              "c", rc=1).stdout)
    assert len(doc["tests"]) == 6


def test_compare_no_new_failure(three):
    """From c to a: a fix and a new failure the other way round... and a run with itself."""
    p = ptt_runs("compare", f"--db={three}", "a", "a")
    assert p.stdout.endswith("6 tests: new failures 0, fixed 0, flaky 0, missing 0, "
                             "unchanged 6; slower 0\n")


def test_compare_bad(three):
    one_line_error(run([PTT, "runs", "compare", f"--db={three}", "a"]),
                   "ptt runs: compare: two runs at least")
    one_line_error(run([PTT, "runs", "compare", f"--db={three}", *["a"] * 11]),
                   "ptt runs: 11 runs: at most 10 are compared")
    line = one_line_error(run([PTT, "runs", "compare", f"--db={three}", "a", "zz"]), "ptt runs: ")
    assert line == f"ptt runs: {three}: no run 'zz' (ptt runs list shows them)"
    one_line_error(run([PTT, "runs", "compare", f"--db={three}", "--slower=x", "a", "b"]),
                   "ptt runs: --slower=x: a percentage")
    one_line_error(run([PTT, "runs", "show", f"--db={three}", "--slower=5", "a"]),
                   "ptt runs: --slower=5 is not an option of ptt runs show")


def test_list_and_names(three, tmp_path):
    """list, in order; a default name made unique; a name taken refused."""
    log = opts_log(tmp_path / "x.log", RUNS["a"])
    ptt_runs("import", f"--db={three}", log)
    ptt_runs("import", f"--db={three}", log)
    doc = json.loads(ptt_runs("list", f"--db={three}", "--format=json").stdout)
    assert [(r["id"], r["name"], r["tests"], r["failures"]) for r in doc["runs"]] == [
        (1, "a", 6, 1), (2, "b", 5, 2), (3, "c", 6, 1), (4, "x.log", 6, 1), (5, "x.log-2", 6, 1)]
    assert doc["runs"][0]["counts"] == {"PASS": 5, "FAIL": 1}
    one_line_error(run([PTT, "runs", "import", f"--db={three}", "--name=a", log]),
                   f"ptt runs: {three}: a run is named 'a' already")
    text = ptt_runs("list", f"--db={three}").stdout.splitlines()
    assert text[0].split() == ["id", "name", "date", "machine", "format", "tests", "results"]
    assert text[1].split() == ["1", "a", "2024-01-01", "m", "opts", "6", "5", "PASS,", "1", "FAIL"]


# ---- bad input --------------------------------------------------------------------------------


def cut_logs(tmp_path):
    """(file, options, the error after 'ptt runs: FILE: ')"""
    pytest_xml = (DATA / "junit" / "pytest.xml").read_bytes()
    cases = {
        "opts-cut": (f"\n{OPTS}/d/d_1-1: execution: PASS\n{OPTS}/d/d_2-1: execu".encode(), (),
                     "line 3 has no end: the log is cut short"),
        "opts-junk": (f"\n{OPTS}/d/d_1-1: execution: PASS\nrandom words\n".encode(), (),
                      "line 3 is not a line of an OPTS log: 'random words'"),
        "tap-cut": (b"TAP version 13\n1..5\nok 1 - a\nok 2 - b\n", (),
                    "the plan is 1..5 but 2 tests ran: the log is cut short"),
        "tap-more": (b"1..1\nok 1 - a\nok 2 - b\n", (),
                     "the plan is 1..1 but 2 tests ran: more than it says"),
        "tap-noplan": (b"ok 1 - a\nnot ok 2 - b\n", (),
                       "no plan (1..N) after 2 tests: the log is cut short"),
        "tap-order": (b"1..3\nok 1 - a\nok 3 - c\nok 2 - b\n", (),
                      "test 3 comes where test 2 should: out of sequence"),
        "junit-cut": (pytest_xml[: len(pytest_xml) // 2], (),
                      r"line \d+: not well-formed XML \((unclosed token|no element found)\)$"),
        "junit-html": (b"<html><body>hello</body></html>\n", (),
                       "line 1: not a JUnit XML report: its root element is <html>"),
        "binary": (b"\x7fELF\x02\x01\x01\x00\x00\x00", (),
                   "not a log ptt runs reads (OPTS, TAP or JUnit XML; --format says which)"),
        "nul": (b"ok 1 - a\x00\n1..1\n", ("--format=tap",),
                "not a text file (a NUL byte at offset 8)"),
        "empty": (b"", (), "empty: no test result in it"),
        "wrong-format": (b"1..1\nok 1 - a\n", ("--format=junit",),
                         r"line 1: not well-formed XML \(syntax error\)$"),
    }
    for name, (data, opts, err) in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        yield f, opts, err


def test_bad_logs(tmp_path):
    """Each: one line, exit status 2, no database made."""
    db = tmp_path / "r.db"
    for f, opts, err in cut_logs(tmp_path):
        line = one_line_error(run([PTT, "runs", "import", f"--db={db}", *opts, f]),
                              f"ptt runs: {f}: ")
        rest = line[len(f"ptt runs: {f}: "):]
        assert rest.startswith(err) or (err.endswith("$") and re.match(err, rest)), line
        assert not db.exists()
    one_line_error(run([PTT, "runs", "import", f"--db={db}", tmp_path]),
                   f"ptt runs: {tmp_path} is a directory, not a log")
    one_line_error(run([PTT, "runs", "import", f"--db={db}", tmp_path / "none"]),
                   f"ptt runs: cannot read {tmp_path / 'none'}: No such file or directory")
    one_line_error(run([PTT, "runs", "import", f"--db={db}", "--format=xml", tmp_path]),
                   "ptt runs: --format=xml: use auto, opts, tap or junit")
    assert not db.exists()


def test_bad_log_imports_nothing(three, tmp_path):
    """A run of two logs, the second cut: nothing of it is imported."""
    good = opts_log(tmp_path / "good", RUNS["a"])
    cut = tmp_path / "cut"
    cut.write_text("1..3\nok 1\n")
    one_line_error(run([PTT, "runs", "import", f"--db={three}", good, cut]), f"ptt runs: {cut}: ")
    doc = json.loads(ptt_runs("list", f"--db={three}", "--format=json").stdout)
    assert len(doc["runs"]) == 3


def test_bad_databases(tmp_path):
    log = opts_log(tmp_path / "x.log", RUNS["a"])
    text = tmp_path / "text.db"
    text.write_text("not a database at all, but long enough to be looked at by SQLite\n" * 20)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE songs (title TEXT)")
    newer = tmp_path / "newer.db"
    ptt_runs("import", f"--db={newer}", log)
    with sqlite3.connect(newer) as c:
        c.execute("UPDATE meta SET value = '2' WHERE key = 'version'")
    link = tmp_path / "link.db"
    link.symlink_to(newer)
    for cmd in (["import", log], ["list"], ["show", "1"], ["compare", "1", "1"],
                ["report", "-o", tmp_path / "r.html"]):
        for db, err in ((text, f"{text} is not an SQLite database"),
                        (other, f"{other} is an SQLite database, but not one of ptt runs"),
                        (newer, f"{newer} has version 2 of the schema of ptt runs; this ptt "
                                "reads version 1"),
                        (link, f"{link} is a symbolic link: ptt runs opens no database through "
                               "one")):
            one_line_error(run([PTT, "runs", cmd[0], f"--db={db}", *cmd[1:]]), f"ptt runs: {err}")
    assert not (tmp_path / "r.html").exists()
    one_line_error(run([PTT, "runs", "list", f"--db={tmp_path / 'none.db'}"]),
                   f"ptt runs: {tmp_path / 'none.db'}: No such file or directory (ptt runs "
                   "import makes it)")
    assert not (tmp_path / "none.db").exists()


def damaged_page(db, out, table):
    """A copy of db whose table's first page is garbage: SQLite opens it, and fails on the rows."""
    with sqlite3.connect(db) as c:
        root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
        size = c.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db.read_bytes())
    data[(root[0] - 1) * size:root[0] * size] = b"\x55" * size
    out.write_bytes(data)
    return out


def test_damaged_database(three, tmp_path):
    """A page damaged under a table: the failure is said in one line with status 2, not taken
    for the end of the rows (an empty list with status 0, a report "with no run")."""
    runs = damaged_page(three, tmp_path / "runs.db", "runs")
    results = damaged_page(three, tmp_path / "results.db", "results")
    for db, cmds in ((runs, (["list"], ["show", "a"], ["compare", "a", "b"],
                             ["report", "-o", tmp_path / "r.html"], ["import", "--name=d",
                                                                    tmp_path / "a.log"])),
                     (results, (["show", "a"], ["compare", "a", "b"]))):
        for cmd in cmds:
            p = run([PTT, "runs", cmd[0], f"--db={db}", *cmd[1:]])
            lines = p.stderr.splitlines()
            assert p.returncode == 2 and len(lines) == 1, (db, cmd, p.returncode, p.stderr)
            assert lines[0].startswith(f"ptt runs: {db}: cannot ") and lines[0].endswith(
                ": database disk image is malformed"), lines[0]


def test_database_file(tmp_path):
    """Made 0600; its schema is the one docs/runs.md shows, with its version."""
    db = tmp_path / "r.db"
    os.umask(0o022)
    ptt_runs("import", f"--db={db}", opts_log(tmp_path / "x.log", RUNS["a"]))
    assert db.stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(db) as c:
        assert dict(c.execute("SELECT key, value FROM meta")) == {"format": "ptt runs",
                                                                   "version": "1"}
        sql = "\n".join(r[0] + ";" for r in c.execute(
            "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"))
    doc = (SOURCE / "docs" / "runs.md").read_text()
    m = re.search(r"```sql\n(CREATE TABLE meta.*?)```", doc, re.S)
    assert m and m[1].strip() == sql.strip()


def test_default_database(tmp_path):
    """ptt-runs.db in $PTT_DIR."""
    env = dict(os.environ, PTT_DIR=str(tmp_path))
    log = opts_log(tmp_path / "x.log", RUNS["a"])
    p = subprocess.run([str(PTT), "runs", "import", str(log)], capture_output=True, text=True,
                       env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "ptt-runs.db").exists()


# ---- traces -----------------------------------------------------------------------------------


def test_traces(tmp_path):
    """A test that hung under ptt trace keeps its trace and ptt check's findings (a deadlock); a
    test that passed keeps none, though its trace is there; --trace-map names them."""
    traces = tmp_path / "traces"
    traces.mkdir()
    p = run([PTT, "trace", "--hang-timeout=0.5", "--kill-on-hang", "-q", "-o",
             traces / "abba.ptt", "--", PROGS / "check" / "check_abba"])
    assert p.returncode == 137, p.stderr
    p = run([PTT, "trace", "-q", "-o", traces / "fine.ptt", "--",
             PROGS / "check" / "ok_prodcons"])
    assert p.returncode == 0, p.stderr
    log = tmp_path / "run.tap"
    log.write_text("1..2\nnot ok 1 - abba\nok 2 - fine\n")
    db = tmp_path / "r.db"
    p = ptt_runs("import", f"--db={db}", "--name=dir", f"--trace={traces}", log)
    assert p.stdout == ("run 1 dir: 2 tests: 1 PASS, 1 FAIL; failed tests with a trace, "
                        "checked: 1\n")
    mapping = tmp_path / "map"
    mapping.write_text("# test, tab, trace\nabba\ttraces/abba.ptt\nfine\ttraces/fine.ptt\n")
    ptt_runs("import", f"--db={db}", "--name=map", f"--trace-map={mapping}", log)
    for name in ("dir", "map"):
        tests = {t["test"]: t for t in show(db, name)["tests"]}
        abba, fine = tests["abba"], tests["fine"]
        assert abba["trace"] == str((traces / "abba.ptt").resolve())
        assert abba["check_status"] == 1
        assert [f["kind"] for f in abba["findings"]] == ["deadlock"]
        assert abba["findings"][0]["summary"].startswith("t1 (")
        assert (fine["trace"], fine["findings"]) == (None, None)
    text = ptt_runs("show", f"--db={db}", "--failed", "dir").stdout
    assert f"trace: {(traces / 'abba.ptt').resolve()} (ptt check: found)\n" in text
    assert "deadlock: t1 (" in text
    # compare leads from the failure to its trace.
    ptt_runs("import", f"--db={db}", "--name=before", DATA / "tap" / "basic.tap")
    other = tmp_path / "ok.tap"
    other.write_text("1..2\nok 1 - abba\nok 2 - fine\n")
    ptt_runs("import", f"--db={db}", "--name=ok", other)
    text = ptt_runs("compare", f"--db={db}", "ok", "dir", rc=1).stdout
    assert f"  abba  PASS -> FAIL\n      trace (run dir): {(traces / 'abba.ptt').resolve()}\n" \
           "        deadlock: t1 (" in text
    doc = json.loads(ptt_runs("compare", f"--db={db}", "--format=json", "ok", "dir",
                              rc=1).stdout)
    abba = next(t for t in doc["tests"] if t["test"] == "abba")
    assert (abba["statuses"], abba["traces"]) == (["PASS", "FAIL"],
                                                  [None, str((traces / "abba.ptt").resolve())])


# ---- the page ---------------------------------------------------------------------------------


def chromium_path():
    return shutil.which("chromium") or shutil.which("chromium", path="/usr/bin")


class Rows(html.parser.HTMLParser):
    """The rows of the comparison table (#cmp): (test, differs, [cells]); its header cells."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.rows, self.head, self.cell, self.in_cmp, self.in_head = [], [], None, 0, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == "cmp":
            self.in_cmp = 1
        elif self.in_cmp and tag == "thead":
            self.in_head = True
        elif self.in_cmp and tag == "tr" and "test" in a.get("class", "").split():
            self.rows.append(["", "differs" in a.get("class", "").split(), []])
        elif self.in_cmp and tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "table" and self.in_cmp:
            self.in_cmp = 0
        elif tag == "thead":
            self.in_head = False
        elif self.in_cmp and tag in ("td", "th") and self.cell is not None:
            if self.in_head:
                self.head.append(self.cell)
            elif self.rows and not self.rows[-1][0]:
                self.rows[-1][0] = self.cell
            elif self.rows:
                self.rows[-1][2].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def dump(chromium, page, tmp_path, fragment=""):
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", f"--user-data-dir={tmp_path / 'chromium-profile'}", "--dump-dom",
           page.resolve().as_uri() + fragment]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def test_report_page(three, tmp_path):
    """The page: self-contained; its filters (status, name, runs, only differing) change the
    rows shown; the tests whose status differs between the runs shown are marked."""
    page = tmp_path / "runs.html"
    p = ptt_runs("report", f"--db={three}", "-o", page)
    assert p.stdout == "" and p.stderr == ""
    text = page.read_text()
    assert not re.search(r"(src|href)\s*=|https?:|@import", text)
    data = json.loads(re.search(r'<script type="application/json" id="runs-data">(.*?)</script>',
                                text, re.S)[1])
    assert [r["name"] for r in data["runs"]] == ["a", "b", "c"]
    assert len(data["tests"]) == 6
    chromium = chromium_path()
    if not chromium:
        if os.environ.get("CI"):
            pytest.fail("chromium is needed for the page's test (Debian: apt-get install chromium)")
        pytest.skip("chromium is not installed")

    marked = []

    def rows(fragment=""):
        r = Rows(dump(chromium, page, tmp_path, fragment))
        marked[:] = [re.sub(r"^\u2260 ", "", t)[:-7] for t, _, _ in r.rows if t.endswith(" slower")]
        return r.head, [(re.sub(r"^\u2260 |\s+slower$", "", t), d, c) for t, d, c in r.rows]

    head, every = rows()
    # --slower (default 50%): the tests compare calls slower are marked so.
    assert marked == [t["test"] for t in data["tests"] if t["slower"]] and marked, marked
    assert head == ["test", "a", "b", "c"]
    assert every == [
        (T("1-1"), True, ["PASS", "PASS", "FAIL"]),
        (T("2-1"), True, ["FAIL", "FAIL", "PASS"]),
        (T("3-1"), True, ["PASS", "FAIL", "PASS"]),
        (T("4-1"), False, ["PASS", "PASS", "PASS"]),
        (T("5-1"), True, ["PASS", "-", "PASS"]),
        (T("6-1"), False, ["PASS", "PASS", "PASS"])]
    assert [t for t, _, _ in rows("#status=FAIL")[1]] == [T("1-1"), T("2-1"), T("3-1")]
    assert [t for t, _, _ in rows("#name=3-")[1]] == [T("3-1")]
    head, two = rows("#runs=1,3")
    assert head == ["test", "a", "c"]
    assert [(t, d) for t, d, _ in two] == [(T("1-1"), True), (T("2-1"), True), (T("3-1"), False),
                                           (T("4-1"), False), (T("5-1"), False), (T("6-1"), False)]
    assert [t for t, _, _ in rows("#runs=1,3&differs=1")[1]] == [T("1-1"), T("2-1")]
    assert [t for t, _, _ in rows("#status=FAIL&runs=2")[1]] == [T("2-1"), T("3-1")]
    assert rows("#differs=1&name=nothing")[1] == []


class Browser:
    """Headless Chromium driven through the DevTools protocol on a pipe
    (--remote-debugging-pipe: fds 3 and 4, JSON messages ended by a NUL byte)."""

    def __init__(self, chromium, url, profile):
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()
        # Above 4, so that the child's dup2 onto 3 and 4 cannot clobber them.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_r, from_w)]
        for fd in (to_r, from_w):
            os.close(fd)

        def child():
            os.dup2(high[0], 3)  # dup2 makes them inheritable; the rest is closed on exec
            os.dup2(high[1], 4)

        self.p = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", url], close_fds=False, preexec_fn=child,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in high:
            os.close(fd)
        self.buf, self.id = b"", 0
        page = next(t for t in self.call("Target.getTargets")["targetInfos"]
                    if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                 flatten=True)["sessionId"]
        deadline = time.monotonic() + 30
        while not self.eval("document.readyState === 'complete' && "
                            "!!document.getElementById('shown')"):
            assert time.monotonic() < deadline, "the page did not load"
            time.sleep(0.05)

    def call(self, method, session=None, **params):
        self.id += 1
        msg = {"id": self.id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self.buf:
                ready, _, _ = select.select([self.from_r], [], [], 30)
                chunk = os.read(self.from_r, 1 << 16) if ready else b""
                assert chunk, "chromium went away or does not answer"
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            m = json.loads(raw)
            if m.get("id") == self.id:
                assert "error" not in m, m["error"]
                return m["result"]

    def eval(self, expr):
        r = self.call("Runtime.evaluate", session=self.session, expression=expr,
                      returnByValue=True)
        assert "exceptionDetails" not in r, r["exceptionDetails"]
        return r["result"].get("value")

    def close(self):
        self.call("Browser.close")
        self.p.wait(timeout=30)
        os.close(self.to_w)
        os.close(self.from_r)


def test_report_interactive(three, tmp_path):
    """The filters, used as a person does (clicks, typing): the rows follow, the address keeps
    them; a click on a test shows its output in the runs where it did not pass."""
    chromium = chromium_path()
    if not chromium:
        if os.environ.get("CI"):
            pytest.fail("chromium is needed for the page's test (Debian: apt-get install chromium)")
        pytest.skip("chromium is not installed")
    page = tmp_path / "runs.html"
    ptt_runs("report", f"--db={three}", "-o", page)
    b = Browser(chromium, page.resolve().as_uri(), tmp_path / "profile")
    rows = ("Array.from(document.querySelectorAll('#cmp tr.test')).map(function (r) {"
            " return [r.cells[0].textContent, r.classList.contains('differs')]; })")
    try:
        assert b.eval("document.getElementById('shown').textContent") == "6"
        b.eval("document.getElementById('f-failures').click()")
        assert [t for t, _ in b.eval(rows)] == ["\u2260 " + T(n) for n in ("1-1", "2-1", "3-1")]
        assert b.eval("location.hash") == "#status=FAIL"
        b.eval("var e = document.getElementById('f-name'); e.value = '2-';"
               "e.dispatchEvent(new Event('input', {bubbles: true}))")
        assert b.eval(rows) == [["\u2260 " + T("2-1"), True]]
        assert b.eval("location.hash") == "#status=FAIL&name=2-"
        b.eval("document.getElementById('f-every').click();"
               "var e = document.getElementById('f-name'); e.value = '';"
               "e.dispatchEvent(new Event('input', {bubbles: true}));"
               "document.querySelector('input[name=f-run][value=\"2\"]').click();"
               "document.getElementById('f-differs').click()")
        assert b.eval(rows) == [["\u2260 " + T("1-1"), True], ["\u2260 " + T("2-1"), True]]
        assert b.eval("location.hash") == "#runs=1,3&differs=1"
        b.eval("document.querySelector('#cmp tr.test td').click()")
        assert b.eval("document.querySelector('#detail h2').textContent") == T("1-1")
        assert b.eval("Array.from(document.querySelectorAll('#detail pre'))"
                      ".map(function (p) { return p.textContent; })") == ["it said FAILED\n"]
    finally:
        b.close()


def test_report_bad(three, tmp_path):
    one_line_error(run([PTT, "runs", "report", f"--db={three}"]),
                   "ptt runs: report: -o FILE.html says where the page goes")
    one_line_error(run([PTT, "runs", "report", f"--db={three}", "-o", tmp_path / "x.html",
                        "a", "zz"]), f"ptt runs: {three}: no run 'zz'")
    assert not (tmp_path / "x.html").exists()


def test_usage():
    p = run([PTT, "runs"])
    assert p.returncode == 2 and p.stderr.startswith("usage: ptt runs import")
    one_line_error(run([PTT, "runs", "delete"]),
                   "ptt runs: 'delete' is not a subcommand: import, list, show, compare or report")
    one_line_error(run([PTT, "runs", "import"]), "ptt runs: import: which logs?")


def test_names_and_control_characters(tmp_path):
    """A run's id names it too: a --name that is a number is refused, a log named 1 makes the
    run log-1 (run 1 stays reachable by its id). A log's control characters (a terminal's
    escape sequences) are stored and shown as '?', but the newlines and tabs of an output."""
    db = tmp_path / "r.db"
    ptt_runs("import", f"--db={db}", "--name=first", DATA / "tap" / "basic.tap")
    one_line_error(run([PTT, "runs", "import", f"--db={db}", "--name=1",
                        DATA / "tap" / "basic.tap"]),
                   "ptt runs: --name=1: give a name that is not a number")
    one_line_error(run([PTT, "runs", "import", f"--db={db}", "--name=a\x1b[2Jb",
                        DATA / "tap" / "basic.tap"]),
                   "ptt runs: --name=...: give a name that is not a number")
    evil = tmp_path / "1"
    evil.write_bytes(b"TAP version 13\n1..1\nnot ok 1 - evil\x1b[2J name\n# out \x1b]0;pwned\x07"
                     b"\n#\tand\ttabs\n")
    p = ptt_runs("import", f"--db={db}", evil, rc=0)
    assert p.stdout.startswith("run 2 log-1: 1 test: 1 FAIL")
    assert show(db, "1")["run"]["name"] == "first"
    doc = show(db, "log-1")
    (t,) = doc["tests"]
    assert t["test"] == "evil?[2J name"
    assert t["output"] == "# out ?]0;pwned?\n#\tand\ttabs\n", t["output"]
    text = ptt_runs("show", f"--db={db}", "-v", "log-1").stdout
    assert "\x1b" not in text and "\x07" not in text and "evil?[2J name" in text
