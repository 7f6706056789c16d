"""Trace files of earlier format versions read as they did: tests/data/VERSION/contend.ptt was
recorded by ptt trace writing that format (`contend 3 1`, MODULE_LOAD events padded by
tests/golden/strip_modules.py) and is never written again: 1.1, every call as IN and OUT;
v1.2, the calls that did not wait as one record each in format 1's encoding (written on the way
to 2.0 with a 1.2 header; 1.2 proper only adds the carried-state chunks of rotation, which
test_rotation.py reads). Every reader must give the same events, with
the same fields, from them whatever the format written today."""

from pathlib import Path

import pytest

from conftest import parse_raw, prog, ptt_trace, run, summary_counts, view, PTT

DATA = Path(__file__).resolve().parents[1] / "data"
V11 = DATA / "v1.1" / "contend.ptt"
V12 = DATA / "v1.2" / "contend.ptt"

COUNTS_V11 = {
    "PROCESS_START": 1, "PROCESS_EXIT": 1,
    "THREAD_CREATE_IN": 2, "THREAD_CREATE_OUT": 2, "THREAD_START": 2, "THREAD_END": 2,
    "THREAD_JOIN_IN": 2, "THREAD_JOIN_OUT": 2,
    "MUTEX_LOCK_IN": 6, "MUTEX_LOCK_OUT": 6, "MUTEX_WAIT": 5, "MUTEX_ACQUIRED": 5,
    "MUTEX_UNLOCK_IN": 6, "MUTEX_UNLOCK_OUT": 6,
    "BARRIER_INIT_IN": 1, "BARRIER_INIT_OUT": 1, "BARRIER_WAIT_IN": 3, "BARRIER_WAIT_OUT": 3,
    "BARRIER_RELEASED": 3,
    "RWLOCK_RDLOCK_IN": 6, "RWLOCK_RDLOCK_OUT": 6, "RWLOCK_UNLOCK_IN": 6,
    "RWLOCK_UNLOCK_OUT": 6,
    "SEM_INIT_IN": 1, "SEM_INIT_OUT": 1, "SEM_WAIT_IN": 2, "SEM_WAIT_OUT": 2,
    "SEM_POST_IN": 2, "SEM_POST_OUT": 2, "SEM_BLOCK": 2, "SEM_ACQUIRED": 2,
}


@pytest.mark.parametrize("path", [V11, V12], ids=["1.1", "1.2"])
def test_counts(path):
    """The summary: every event of the file, counted exactly, and its header (the same program,
    the same events, in either version)."""
    counts, head = summary_counts(path)
    assert dict(counts) == COUNTS_V11
    assert head["events"] == "97"
    assert head["threads"] == "3"
    assert head["lost"] == "0"
    assert head["clock"] == "tsc"


def test_v11_fields():
    """Events as ptt view --format=raw prints them: times, ids and every field."""
    lines = view("--format=raw", V11).splitlines()
    assert len(lines) == 97
    assert lines[:5] == [
        "0.004011345:PROCESS_START : 26146 : 26146 : 26142 : 1",
        "0.004199453:BARRIER_INIT_IN : 26146 : 26146 : 0x56481464af00 : 0x0 : 3 : 0x564814640888",
        "0.004200074:BARRIER_INIT_OUT : 26146 : 26146 : 0",
        "0.004210873:SEM_INIT_IN : 26146 : 26146 : 0x56481464ae60 : 0 : 0 : 0x5648146408a6",
        "0.004211284:SEM_INIT_OUT : 26146 : 26146 : 0 : 0",
    ]
    # A lock that waited: its IN, the wait with the owner, then (after the owner's unlock) the
    # acquisition and the OUT; an uncontended one: IN and OUT.
    assert lines[20:30] == [
        "0.004960512:MUTEX_LOCK_IN : 26146 : 26147 : 0x56481464aec0 : 0x5648146405f4",
        "0.004961894:MUTEX_LOCK_OUT : 26146 : 26147 : 0",
        lines[22], lines[23],
        "0.004969648:MUTEX_LOCK_IN : 26146 : 26148 : 0x56481464aec0 : 0x5648146405f4",
        "0.004969738:MUTEX_WAIT : 26146 : 26148 : 0x56481464aec0 : 26147",
        "0.006046976:MUTEX_UNLOCK_IN : 26146 : 26147 : 0x56481464aec0 : 0x564814640682",
        "0.006053788:MUTEX_ACQUIRED : 26146 : 26148 : 0x56481464aec0",
        "0.006053818:MUTEX_LOCK_OUT : 26146 : 26148 : 0",
        "0.006060450:MUTEX_UNLOCK_OUT : 26146 : 26147 : 0",
    ]
    assert lines[-1] == "0.012171963:PROCESS_EXIT : 26146 : 26146 : exit=0"
    ev = parse_raw("\n".join(lines), keep_machine=True)
    assert [e.fields for e in ev if e.name == "SEM_POST_OUT"] == [("0", "0", "1")] * 2


def test_v11_stat():
    """ptt stat of the file: the contention it holds."""
    p = run([PTT, "stat", "--format=csv", V11])
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("kind,name,address,pid,acquisitions,contended,wait_total_ns,")
    rows = {line.split(",")[0]: line.split(",")[4:7] for line in lines[1:]}
    assert rows == {"sem": ["2", "2", "6729835"], "mutex": ["6", "5", "4747808"],
                    "barrier": ["3", "3", "891763"], "rwlock": ["6", "0", "1552"]}


def test_v12_fields():
    """Format 1.2: the calls written as one record come back as their IN and OUT, with every
    field; a lock that waited has its IN, the wait, and (later) its OUT."""
    lines = view("--format=raw", V12).splitlines()
    assert len(lines) == 97
    assert lines[1:5] == [
        "0.015419809:BARRIER_INIT_IN : 3719 : 3719 : 0x563dc6baff00 : 0x0 : 3 : 0x563dc6ba5888",
        "0.015419929:BARRIER_INIT_OUT : 3719 : 3719 : 0",
        "0.015425870:SEM_INIT_IN : 3719 : 3719 : 0x563dc6bafe60 : 0 : 0 : 0x563dc6ba58a6",
        "0.015426061:SEM_INIT_OUT : 3719 : 3719 : 0 : 0",
    ]
    assert lines[22:30] == [
        "0.019375054:MUTEX_LOCK_IN : 3719 : 3724 : 0x563dc6bafec0 : 0x563dc6ba55f4",
        "0.019375966:MUTEX_LOCK_OUT : 3719 : 3724 : 0",
        "0.019537825:MUTEX_LOCK_IN : 3719 : 3725 : 0x563dc6bafec0 : 0x563dc6ba55f4",
        "0.019538857:MUTEX_WAIT : 3719 : 3725 : 0x563dc6bafec0 : 3724",
        "0.020443480:MUTEX_UNLOCK_IN : 3719 : 3724 : 0x563dc6bafec0 : 0x563dc6ba5682",
        "0.020450754:MUTEX_UNLOCK_OUT : 3719 : 3724 : 0",
        "0.020458468:RWLOCK_RDLOCK_IN : 3719 : 3724 : 0x563dc6bafe80 : 0x563dc6ba56b0",
        "0.020458899:RWLOCK_RDLOCK_OUT : 3719 : 3724 : 0",
    ]
    assert lines[-1] == "0.026449609:PROCESS_EXIT : 3719 : 3719 : exit=0"
    p = run([PTT, "stat", "--format=csv", V12])
    assert p.returncode == 0, p.stderr
    rows = {line.split(",")[0]: line.split(",")[4:6] for line in p.stdout.splitlines()[1:]}
    assert rows == {"sem": ["2", "2"], "mutex": ["6", "5"], "barrier": ["3", "3"],
                    "rwlock": ["6", "0"]}


def test_recorded_today_as_then(tmp_path):
    """The same program recorded today (format 2.0: calls that did not wait as one record, the
    compact encoding) gives the readers exactly the events of the 1.1 file, by name and count,
    and the same contention in ptt stat: what is recorded did not change with the encoding."""
    t = ptt_trace(tmp_path, [prog("contend"), 3, 1])
    counts, head = summary_counts(t.path)
    assert dict(counts) == COUNTS_V11
    assert head["events"] == "97" and head["lost"] == "0"
    p = run([PTT, "stat", "--format=csv", t.path])
    assert p.returncode == 0, p.stderr
    rows = {line.split(",")[0]: line.split(",")[4:6] for line in p.stdout.splitlines()[1:]}
    assert rows == {"sem": ["2", "2"], "mutex": ["6", "5"], "barrier": ["3", "3"],
                    "rwlock": ["6", "0"]}
