"""Live control (ptt ctl) of a running session: start, stop, level and event classes switched
while the program runs in phases (tests/progs/phases.c), each switch recorded as TRACE_CONTROL
with its masks, and between the switches exactly the events they allow; ptt ctl list, status,
and its errors."""

import collections
import json

from conftest import CLASSES, PTT, parse_raw, prog, run, view
from robust_util import Live, ctl, ctl_ok, status_fields

K = 3  # cond signals and sem posts per phase

ALL_BUT_KEY = ",".join(c for c in CLASSES if c != "key")


def mask(*classes):
    """A TRACE_CONTROL field as ptt view --format=raw prints it."""
    return hex(sum(1 << CLASSES.index(c) for c in classes))


# The default is every class but key, those a newer ptt may add included: every bit but key's.
# Every class of the table but key (off by default).
ALL = hex(sum(1 << i for i, c in enumerate(CLASSES) if c != "key"))
MUTEX = mask("meta", "mutex")
META = mask("meta")

# What one phase records, per thread, at each setting.
MAIN_CALLS = ["MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT"] + \
    ["COND_SIGNAL_IN", "COND_SIGNAL_OUT"] * K + ["SEM_POST_IN", "SEM_POST_OUT"] * K
WORKER_FULL = ["MUTEX_LOCK_IN", "MUTEX_WAIT", "MUTEX_ACQUIRED", "MUTEX_LOCK_OUT",
               "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT"]
WORKER_LIGHT = [n for n in WORKER_FULL if n not in ("MUTEX_WAIT", "MUTEX_ACQUIRED")]
MAIN_MUTEX = MAIN_CALLS[:4]

# (ptt ctl request before the phase, TRACE_CONTROL fields, main's events, worker's events,
# status fields after the request)
STEPS = [
    (None, None, [], [], {"recording": "off", "level": "full", "events": ALL_BUT_KEY}),
    # The start records classes that were not: ptt trace names main and the worker
    # (THREAD_RUNNING, in main's stream).
    ("start", (ALL, ALL), ["THREAD_RUNNING"] * 2 + MAIN_CALLS, WORKER_FULL,
     {"recording": "on", "level": "full"}),
    ("level light", (ALL, "0x0"), MAIN_CALLS, WORKER_LIGHT, {"recording": "on", "level": "light"}),
    ("level full", (ALL, ALL), MAIN_CALLS, WORKER_FULL, {"level": "full"}),
    ("events mutex", (MUTEX, MUTEX), MAIN_MUTEX, WORKER_FULL, {"events": "mutex"}),
    ("stop", (META, "0x0"), [], [], {"recording": "off", "events": "mutex"}),
]


def test_switches(tmp_path):
    path = tmp_path / "t.ptt"
    live = Live([prog("phases"), len(STEPS), K], path, opts=["--start-stopped"])
    session = live.wait_session()
    pid = int(live.value("pid"))
    assert session in ctl_ok("list").splitlines()
    for n, (req, _fields, _main, _worker, status) in enumerate(STEPS, 1):
        if req:
            assert ctl_ok(session, *req.split()).startswith("ok: ")
        st = status_fields(ctl_ok(session, "status"))
        assert {k: st[k] for k in status} == status, f"before phase {n}: {st}"
        assert (st["session"], st["pid"], st["output"]) == (session, str(pid), str(path))
        assert (st["lost"], st["flight_recorder"], st["hangs"]) == ("0", "off", "0")
        live.send("go")
        live.wait_line(f"phase={n}")
    live.finish(0)
    worker = int(next(ln for ln in live.out if ln.startswith("@tid_worker="))[12:])
    events = parse_raw(view("--format=raw", path))
    controls = [e for e in events if e.name == "TRACE_CONTROL"]
    assert all(e.pid == e.tid == live.pid for e in controls)
    assert [e.fields for e in controls] == [s[1] for s in STEPS if s[0]]
    # Split the program's events at the switches: phase n comes after the n-th switch (none
    # before the first) and before the next.
    cuts = [e.ns for e in controls]
    phases = collections.defaultdict(lambda: collections.defaultdict(list))
    for e in events:
        if e.pid == pid:
            n = sum(1 for c in cuts if c <= e.ns)
            phases[n][e.tid].append(e.name)
    expected = {0: {pid: ["PROCESS_START"]}}
    for n, (_req, _fields, main, wk, _status) in enumerate(STEPS[1:], 1):
        expected[n] = {t: names for t, names in ((pid, main), (worker, wk)) if names}
    expected[len(STEPS) - 1] = {pid: ["PROCESS_EXIT"]}  # ptt trace's, after the stop
    assert {n: dict(v) for n, v in phases.items()} == expected
    # ptt stat: the switches are the session's, ptt trace no process of the program.
    threads = json.loads(run([PTT, "stat", "--format=json", path]).stdout)["threads"]
    assert sorted(th["tid"] for th in threads) == sorted([pid, worker])


def test_list_and_errors(tmp_path):
    live = Live([prog("phases"), 1, 0], tmp_path / "t.ptt", opts=["--start-stopped"])
    session = live.wait_session()
    by_pid = status_fields(ctl_ok(live.pid, "status"))  # the pid of ptt trace names it too
    assert by_pid["session"] == session and by_pid["recording"] == "off"
    uid = session.split("-")[1]
    for args in (["ptt-0-1", "status"], [f"ptt-{uid}-999999999", "status"], [session, "bogus"],
                 [session, "level", "medium"], [session, "events", "mutex,nosuch"], ["list", "x"],
                 [session, "detach"], [session], []):
        p = ctl(*args)
        assert p.returncode == 2 and p.stdout == "", f"ptt ctl {args}: {p.returncode}"
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("ptt ctl: "), f"ptt ctl {args}: {lines}"
    assert "unknown event class 'nosuch'" in ctl(session, "events", "mutex,nosuch").stderr
    assert "unknown request 'bogus'" in ctl(session, "bogus").stderr
    assert ctl(session, "detach").stderr == (
        "ptt ctl: detach is for a session of ptt trace -p; this one runs its program (stop "
        "switches recording off)\n")
    # the failed requests changed nothing
    st = status_fields(ctl_ok(session, "status"))
    assert st["events"] == ALL_BUT_KEY and st["recording"] == "off"
    live.send("go")
    live.finish(0)
    assert session not in ctl_ok("list").splitlines()
    p = ctl(session, "status")
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1
    events = parse_raw(view("--format=raw", live.path))
    assert [e.name for e in events] == ["PROCESS_START", "PROCESS_EXIT"]  # no switch recorded
    assert run([PTT, "ctl", "--help"]).returncode == 0
