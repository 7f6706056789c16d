"""Fork churn (tests/progs/proc_churn): processes created as fast as they come, in parallel
branches, by fork and _exit, fork and exec, system() (reaped inside glibc, where no interposer
sees) and double forks (orphans that ptt trace reaps): each process that started has its end
recorded exactly once. Needs a kernel that tells a reaped process's status through its pidfd
(6.15+). The long variant runs with PTT_STRESS_TESTS=1."""

import collections
import os
import signal
import time

import pytest

from conftest import TIMEOUT, prog
from robust_util import Live, raw_lines
from test_readahead import sanitized


def supported():
    release = os.uname().release.split(".")
    return (int(release[0]), int(release[1].split("-")[0])) >= (6, 15)


def check_ends(path, made):
    # By pid, in time order: a process starts (again at each exec) and ends once; a pid used
    # again starts another.
    seq = collections.defaultdict(list)
    for name, pid, _tid, _fields in raw_lines(path, ["--event=PROCESS_START,PROCESS_EXIT"]):
        if name in ("PROCESS_START", "PROCESS_EXIT"):
            seq[pid].append(name[8])  # S or E
    ends = sum(s.count("E") for s in seq.values())
    unended = [pid for pid, s in seq.items() if s[-1] != "E"]
    twice = [pid for pid, s in seq.items() if s[0] == "E" or "EE" in "".join(s)]
    assert (unended[:5], twice[:5]) == ([], []), (len(unended), len(twice))
    assert ends == made


def check_churn(tmp_path, branches, processes, timeout=TIMEOUT):
    path = tmp_path / "churn.ptt"
    live = Live([prog("proc_churn"), branches, processes], path=path)
    made = int(live.value("processes", timeout=timeout))
    assert live.finish(0, timeout=timeout)[2] == 0
    assert made >= processes
    check_ends(path, made)


@pytest.mark.skipif(not supported(), reason="needs PIDFD_INFO_EXIT (Linux 6.15)")
def test_churn_backlog_full(tmp_path):
    """ptt trace stopped while 6,000 processes start, end and are reaped by their parents: their
    announcements fill the listener's backlog (somaxconn, 4096 here); the processes that find
    it full wait for room rather than go unannounced, and every end is recorded once, late."""
    path = tmp_path / "late.ptt"
    live = Live([prog("proc_churn"), 2, 6000, "wait"], path=path,
                opts=["--buffer=64M", "--subbuffer=4K"])
    stopped = False
    try:
        live.value("ready")
        os.kill(live.pid, signal.SIGSTOP)
        stopped = True
        live.send("go")
        live.wait_line("@p2000=")
        time.sleep(3)  # time to fill it (1.2 announcements a process: an exec announces again)
        os.kill(live.pid, signal.SIGCONT)
        stopped = False
        made = int(live.value("processes"))
    finally:
        if stopped:
            os.kill(live.pid, signal.SIGCONT)
    assert live.finish(0)[2] == 0
    assert made >= 6000
    check_ends(path, made)


@pytest.mark.skipif(not supported(), reason="needs PIDFD_INFO_EXIT (Linux 6.15)")
def test_churn_every_end_once(tmp_path):
    """5,000 processes (1,500 under the sanitizers, which need the code run, not the numbers):
    10,000 took 69 s of make check on a slow 2-core machine, 4,000 under the sanitizers 59 s.
    The races are the long variant's to find: 250,000 (make stress)."""
    check_churn(tmp_path, 16, 1500 if sanitized() else 5000, timeout=300)


@pytest.mark.skipif(not supported(), reason="needs PIDFD_INFO_EXIT (Linux 6.15)")
@pytest.mark.skipif(os.environ.get("PTT_STRESS_TESTS") != "1", reason="PTT_STRESS_TESTS=1 runs it")
def test_churn_every_end_once_long(tmp_path):
    check_churn(tmp_path, 16, 250000, timeout=1200)
