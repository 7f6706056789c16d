"""The system calls of a traced thread's lifetime (docs/performance.md, "Session lifetime"):
libptt makes none of its own per thread. Counted exactly with strace -f -c on tests/progs/
thread_churn (create and join threads one after the other), as the difference between two runs
of different lengths, so that what a process does once (libptt's start-up) cancels out. Skipped
without strace, or where it may not trace (ptrace refused)."""

import os
import shutil

import pytest

from conftest import BUILD, PTT, prog, run

STRACE = shutil.which("strace")
LIBPTT = BUILD / "lib" / "libptt.so"
SHORT, LONG = 50, 200
# Their number depends on timing, not on what the thread does: a wait in pthread_join, and the
# wake-up of ptt trace's drain when it was idle (SIGURG, once per idle spell, docs/performance.md).
TIMING = {"futex", "kill"}


def strace_works():
    if not STRACE:
        return False
    return run([STRACE, "-f", "-c", "-o", os.devnull, "true"]).returncode == 0


def counts(tmp_path, n, traced):
    """System call -> count, of thread_churn n alone (strace -f -c)."""
    out = tmp_path / f"strace-{'traced' if traced else 'preloaded'}-{n}.txt"
    cmd = [STRACE, "-f", "-c", "-o", out, prog("thread_churn"), n]
    env = dict(os.environ)
    env.pop("PTT_SHM", None)
    if traced:
        # Sub-buffers of 16K: the main thread's events fit in its first (a switch of sub-buffers
        # is once per sub-buffer, not per thread), and the pool's first 4 MiB hold one for each
        # thread besides: none waits for one.
        cmd = [PTT, "trace", "-q", "-o", tmp_path / f"churn-{n}.ptt", "--subbuffer=16K", "--",
               *cmd]
    else:
        env["LD_PRELOAD"] = str(LIBPTT)
    p = run(cmd, env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert f"threads={n}" in p.stdout
    c = {}
    for line in out.read_text().splitlines():
        f = line.split()
        # "% time seconds usecs/call calls [errors] syscall"
        if len(f) >= 5 and f[3].isdigit() and f[-1] not in ("total", "syscall"):
            c[f[-1]] = int(f[3])
    assert "clone3" in c or "clone" in c, out.read_text()
    return c


def per_thread(tmp_path, traced):
    a, b = counts(tmp_path, SHORT, traced), counts(tmp_path, LONG, traced)
    grown = {k: b.get(k, 0) - a.get(k, 0) for k in set(a) | set(b)}
    return {k: v / (LONG - SHORT) for k, v in grown.items() if v and k not in TIMING}


@pytest.mark.skipif(not strace_works(), reason="needs strace, allowed to trace")
def test_no_system_call_of_libptt_per_thread(tmp_path):
    """Traced, a thread created and joined makes exactly the system calls it makes with libptt
    merely preloaded (glibc's own: clone3, rt_sigprocmask, ...): its first sub-buffer taken and
    its last handed over without blocking signals, its tid read without gettid."""
    preloaded = per_thread(tmp_path, traced=False)
    traced = per_thread(tmp_path, traced=True)
    assert "gettid" not in traced
    assert traced.get("rt_sigprocmask") == preloaded.get("rt_sigprocmask")
    assert traced == preloaded
