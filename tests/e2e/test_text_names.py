"""Names a program chose never reach a terminal as escape sequences: every text output (ptt view,
view --summary, stat, check, the live hang report) shows each control character of a thread's or
an object's name, and of the command line, as \\xNN (Pajé strings as '?'); the JSON outputs keep
the names exact, with every control character escaped the JSON way (tests/progs/ctrl_names.c)."""

import json
import re
import shutil
import subprocess

import pytest

from conftest import PTT, TIMEOUT, parse_output, prog

# The names ctrl_names gives, as text outputs show them (\xNN).
STUCK = r"\x1b[1mstuck"  # the thread of the hang
WIPE, RED = r"\x1b[2Jwipe", r"c1\xc2\x9b31mred"  # the threads, as shown
A, B = r"A\x1b]0;owned\x07", r"B\x1b[5m"  # the mutexes, as shown
# An argument of the command line ctrl_names does not read.
ARG = "\x1b[31m\tit's\\"
# Any byte a terminal may act on: C0 but the line end, DEL, C1 as UTF-8.
CONTROL = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def run_bytes(cmd, rc=0):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, timeout=TIMEOUT)
    assert p.returncode == rc, f"{cmd}: exit {p.returncode}: {p.stderr!r}"
    return p


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    d = tmp_path_factory.mktemp("ctrl")
    path = d / "t.ptt"
    p = run_bytes([PTT, "trace", "-q", "-o", path, "--", prog("ctrl_names"), ARG])
    _, out = parse_output(p.stdout.decode())
    return path, out


def shown_clean(data, what):
    m = CONTROL.search(data)
    assert not m, f"{what}: a control byte {m[0]!r} at {m.start()}: {data[m.start() - 40:][:80]!r}"
    return data.decode("utf-8", errors="strict")


def test_view(traced):
    """ptt view: every thread's events after it named itself carry the name as \\xNN, and the
    named mutexes' too; the string fields were already so."""
    path, out = traced
    text = shown_clean(run_bytes([PTT, "view", path]).stdout, "ptt view")
    t1, t2 = out["tid_1"], out["tid_2"]
    for thread, tid, mutex in ((WIPE, t1, A), (WIPE, t1, B), (RED, t2, B), (RED, t2, A)):
        assert re.search(rf"Thread {re.escape(thread)} \({tid}\) enters function "
                         rf"pthread_mutex_lock \(mutex {re.escape(mutex)}\)", text)


def test_summary_command(traced):
    """ptt view --summary: the command line in $'...' for the argument with control characters,
    which a shell reads back as the argument given."""
    path, _ = traced
    text = shown_clean(run_bytes([PTT, "view", "--summary", path]).stdout, "view --summary")
    command = re.search(r"^command +(.*)$", text, re.M)[1]
    assert command.endswith(r" $'\x1b[31m\x09it\'s\\'")
    argv = subprocess.run(["bash", "-c", f"printf '%s\\0' {command}"], capture_output=True,
                          check=True).stdout.decode().split("\0")[:-1]
    assert argv == [str(prog("ctrl_names")), ARG]


def test_stat(traced):
    """ptt stat: the objects' and the threads' names as \\xNN, in every table."""
    path, out = traced
    text = shown_clean(run_bytes([PTT, "stat", path]).stdout, "ptt stat")
    users = re.escape(f"{WIPE},{RED}")
    for name in (A, B):
        assert re.search(rf"^mutex +{re.escape(name)} +2 +0 .* {users}$", text, re.M), name
    for tid, name in ((out["tid_1"], WIPE), (out["tid_2"], RED)):
        assert re.search(rf"^\d+ +{tid} +{re.escape(name)} ", text, re.M), name


def test_check(traced):
    """ptt check: the lock-order finding names both mutexes and both threads as \\xNN (exit 1: a
    finding)."""
    path, out = traced
    text = shown_clean(run_bytes([PTT, "check", path], rc=1).stdout, "ptt check")
    assert (f"lock-order: 2 locks are taken in an order that can deadlock: mutex {A} -> mutex {B}"
            f" -> mutex {A}") in text
    for thread, tid, mutex in ((WIPE, out["tid_1"], A), (RED, out["tid_2"], B)):
        assert re.search(rf"{re.escape(thread)} \({tid}\) took mutex {re.escape(mutex)} "
                         r"at ctrl_names.c:\d+", text), thread


def test_paje(traced, tmp_path):
    """ptt paje: the names as Pajé strings, each byte of a control character a '?', so that neither
    the file nor pj_dump's output holds one; pj_dump reads them as containers of those names."""
    path, _ = traced
    out = tmp_path / "t.paje"
    run_bytes([PTT, "paje", path, "-o", out])
    events = [line for line in out.read_bytes().split(b"\n") if not line.startswith(b"%")]
    shown_clean(b"\n".join(events), "ptt paje")  # the header's definitions have tabs
    if not shutil.which("pj_dump"):
        pytest.skip("pj_dump is missing (Debian package pajeng)")
    dump = run_bytes(["pj_dump", out])
    assert dump.stderr == b""
    rows = [line.split(", ") for line in shown_clean(dump.stdout, "pj_dump").splitlines()]
    threads = {r[6] for r in rows if r[0] == "Container" and r[2] == "Thread"}
    assert {"?[2Jwipe", "c1??31mred"} <= threads, threads
    mutexes = {r[6] for r in rows if r[0] == "Container" and r[2] == "Mutex"}
    assert {"A?]0;owned?", "B?[5m"} <= mutexes, mutexes


def test_json_exact(traced):
    """The JSON outputs keep the names as the program gave them, every control character (C1
    and DEL too) escaped as \\u00XX, none raw."""
    path, out = traced
    events = run_bytes([PTT, "view", "--format=json", path]).stdout
    shown_clean(events, "view --format=json")
    threads = {}
    for line in events.splitlines():
        e = json.loads(line)
        if e.get("thread") is not None:
            threads.setdefault(e["tid"], set()).add(e["thread"])
    assert "\x1b[2Jwipe" in threads[int(out["tid_1"])]
    assert "c1\u009b31mred" in threads[int(out["tid_2"])]
    check = run_bytes([PTT, "check", "--format=json", path], rc=1).stdout
    shown_clean(check, "check --format=json")
    finding = json.loads(check)["findings"][0]
    assert {o["name"] for o in finding["objects"]} == {"A\x1b]0;owned\x07", "B\x1b[5m"}
    assert {t["name"] for t in finding["threads"]} == {"\x1b[2Jwipe", "c1\u009b31mred"}


def test_hang_report(tmp_path):
    """The live hang report on ptt trace's stderr: the thread and the mutex named as \\xNN."""
    p = run_bytes([PTT, "trace", "-o", tmp_path / "h.ptt", "--hang-timeout=0.5", "--kill-on-hang",
                   "--", prog("ctrl_names"), "hang"], rc=137)
    text = shown_clean(p.stderr, "ptt trace's stderr")
    stuck, a = STUCK, A
    assert re.search(rf"^ptt:   pid \d+ thread main \(\d+\): in pthread_join .* waiting for thread "
                     rf"{re.escape(stuck)} \(\d+\)$", text, re.M), text
    assert re.search(rf"^ptt:   pid \d+ thread {re.escape(stuck)} \(\d+\): in pthread_mutex_lock "
                     rf"\(mutex {re.escape(a)}\) at ctrl_names.c:\d+ for \d+\.\d s, held by thread "
                     rf"main \(\d+\)$", text, re.M), text
