"""The pool's memory in /dev/shm is reserved as the writers need it, for the whole session
(src/session/guardian.c): a session that lasts but records little holds a few MiB of the 64 MiB
pool, not all of it (each reserved page is one the kernel zeroes, then frees at the end), and a
program that writes more than that still loses nothing."""

import glob
import os
import subprocess
import time

from conftest import PTT, TIMEOUT, prog, require_build, run, summary_counts

MIB = 1 << 20


def pool_files(pid):
    """The pools of ptt trace pid (/dev/shm/ptt-UID-PID-RANDOM)."""
    return glob.glob(f"/dev/shm/ptt-{os.getuid()}-{pid}-*")


def test_quiet_session_holds_little(tmp_path):
    """A session of 1.5 s that records a few events: 0.8 s and 1.3 s after its start (well after
    the guardian's first 200 ms), its pool holds at most the first MiB and one 4 MiB step."""
    require_build()
    p = subprocess.Popen([str(PTT), "trace", "-q", "-o", str(tmp_path / "t.ptt"), "--",
                          "sleep", "1.5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen = []
        for at in (0.8, 1.3):
            time.sleep(at - (0.8 if seen else 0))
            for f in pool_files(p.pid):
                st = os.stat(f)
                seen.append((st.st_size, st.st_blocks * 512))
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    pools = [s for s in seen if s[0] >= 32 * MIB]
    assert len(pools) == 2, seen  # the 64 MiB pool, seen twice
    assert all(used <= 6 * MIB for _, used in pools), seen


def test_busy_session_loses_nothing(tmp_path):
    """A program that writes far more than one step (flood: 4 threads, 2 M events) gets the pool
    it needs: nothing lost, every event counted."""
    require_build()
    path = tmp_path / "t.ptt"
    p = run([PTT, "trace", "-q", "-o", path, "--", prog("flood"), 4, 500000])
    assert p.returncode == 0, p.stderr
    counts, head = summary_counts(path)
    assert head["lost"] == "0"
    assert counts["MUTEX_LOCK_IN"] == counts["MUTEX_UNLOCK_IN"] == 4 * 500000
