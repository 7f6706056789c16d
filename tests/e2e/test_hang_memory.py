"""The hang watch's memory (--hang-timeout): ptt trace's memory does not grow with the threads or
the processes that ended (thread_churn.c, proc_churn.c). Apart from test_hang.py because it
needs the plain build's allocator, and runs in make check's plain pass (tests/e2e/CMakeLists.txt)."""
import subprocess
import time

import pytest

from conftest import PTT, prog
from test_readahead import sanitized


def peak_kb(tmp_path, command):
    """ptt trace's largest private resident memory in KiB (RssAnon: its allocations, not the
    pool's pages it reads) while it traces command, a shell command, read until it ends: the
    command sleeps a second at its end, when all is drained."""
    p = subprocess.Popen([str(PTT), "trace", "-q", "--hang-timeout=10", "-o",
                          str(tmp_path / "t.ptt"), "--force", "--", "sh", "-c",
                          f"{command} >/dev/null && sleep 1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                peak = max([peak] + [int(line.split()[1]) for line in f
                                     if line.startswith("RssAnon:")])
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    assert p.wait() == 0, p.stderr.read()
    return peak


def test_memory_flat_with_ended_threads(tmp_path):
    """Threads made and ended one after the other: once a thread's end and its last sub-buffer
    are read, the watch keeps nothing of it (it held nothing), so ptt trace's memory does not
    grow with the threads made: 20,000 against 2,000 adds less than 2 MiB (about 6 MiB when the
    watch kept each)."""
    if sanitized():
        pytest.skip("the sanitizers' allocator keeps what is freed")
    kb = {n: peak_kb(tmp_path, f"{prog('thread_churn')} {n}") for n in (2000, 20000)}
    assert kb[20000] - kb[2000] < 2048, kb


def test_memory_with_ended_processes(tmp_path):
    """Processes made and ended one after the other: once a process has ended, the watch keeps
    nothing of its threads (it keeps its modules and names, about 350 bytes a process): 3,000
    against 300 adds less than 2 MiB (about 5 MiB when the watch kept its threads)."""
    if sanitized():
        pytest.skip("the sanitizers' allocator keeps what is freed")
    kb = {n: peak_kb(tmp_path, f"{prog('proc_churn')} 1 {n}") for n in (300, 3000)}
    assert kb[3000] - kb[300] < 2048, kb
