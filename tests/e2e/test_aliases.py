"""ptt-trace and ptt-view, links to ptt, behave as ptt trace and ptt view."""

import os

from conftest import BIN, E, PTT, check_trace, parse_output, prog, ptt_trace, run

TRACE, VIEW = BIN / "ptt-trace", BIN / "ptt-view"


def test_links():
    for link in (TRACE, VIEW):
        assert link.is_symlink() and os.path.samefile(link, PTT)


def test_ptt_trace_alias(tmp_path):
    """ptt-trace records what ptt trace records, and passes the exit status through."""
    t = ptt_trace(tmp_path, [prog("exit_status"), "exit", 9], rc=9, tool=[TRACE])
    check_trace(t)
    o = parse_output(t.stdout)[1]
    m = o["m"]
    assert t.thread(o["tid_main"]) == [
        t.process_start(),
        E("MUTEX_LOCK_IN", m), E("MUTEX_LOCK_OUT", 0),
        E("MUTEX_UNLOCK_IN", m), E("MUTEX_UNLOCK_OUT", 0),
        E("PROCESS_EXIT", "exit=9"),
    ]
    p = run([TRACE, "-o", tmp_path / "u.ptt", "--overflow=sometimes", "--", "true"])
    assert p.returncode == 125 and p.stderr.startswith("ptt trace: --overflow=sometimes")
    p = run([TRACE, "--list"])
    assert p.returncode == 0 and p.stdout == run([PTT, "trace", "--list"]).stdout
    p = run([TRACE, "--help"])
    assert p.returncode == 0 and p.stdout == run([PTT, "trace", "--help"]).stdout


def test_ptt_view_alias(tmp_path):
    t = ptt_trace(tmp_path, [prog("cond_calls"), "broadcast"])
    for args in (["--format=raw"], ["--summary"], [], ["--format=human"], ["--help"]):
        a = run([VIEW, *args, t.path])
        b = run([PTT, "view", *args, t.path])
        assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)
        assert a.returncode == 0 and a.stdout
    p = run([VIEW, tmp_path / "missing.ptt"])
    assert p.returncode == 2 and p.stderr.startswith("ptt view: ")
