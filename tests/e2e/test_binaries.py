"""The binaries a trace names, read for their symbols (docs/names.md): a path that is no longer a
regular file (a FIFO, a device) is not opened, nor a separate debug file that is not one, so a
reader never waits for a writer that will not come: it names that binary's addresses as when the
file is missing."""

import os
import shutil
import subprocess

import pytest

from conftest import PTT, prog, ptt_trace, run

READERS = (["view"], ["stat"], ["check"])
WAIT = 30  # s: far more than any of these takes, far less than a reader waiting for ever


def outputs(path):
    """What each reader prints of the trace at path; each must end within WAIT, with status 0."""
    got = []
    for cmd in READERS:
        try:
            p = run([PTT, *cmd, path], timeout=WAIT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"ptt {cmd[0]} did not end in {WAIT} s")
        assert p.returncode == 0 and p.stderr == "", (cmd, p.stderr)
        got.append(p.stdout)
    return got


def test_binary_now_a_fifo(tmp_path):
    """(A device is left alone by the same test; opening /dev/zero would not show.)"""
    binary = tmp_path / "fl"
    shutil.copy(prog("flood"), binary)
    t = ptt_trace(tmp_path, [binary, 1, 10])
    present = outputs(t.path)
    assert "worker" in present[0]  # flood's thread, named by its start routine's symbol
    binary.unlink()
    missing = outputs(t.path)
    assert "worker" not in missing[0]
    os.mkfifo(binary)
    assert outputs(t.path) == missing


DL_C = """#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
    pthread_mutex_lock(&m);
    return pthread_mutex_unlock(&m);
}
"""


def test_debug_file_not_a_file(tmp_path):
    """A program whose debug information is in a file of its own, found by its .gnu_debuglink
    next to it: the lines it gives, none once that file is a FIFO, as when it is missing."""
    if not shutil.which("gcc") or not shutil.which("objcopy"):
        pytest.skip("needs gcc and objcopy")
    (tmp_path / "dl.c").write_text(DL_C)
    for cmd in (["gcc", "-g", "-O0", "-pthread", "-o", "dl", "dl.c"],
                ["objcopy", "--only-keep-debug", "dl", "dl.debug"],
                ["objcopy", "--strip-debug", "--add-gnu-debuglink=dl.debug", "dl"]):
        assert run(cmd, cwd=tmp_path).returncode == 0, cmd
    t = ptt_trace(tmp_path, [tmp_path / "dl"])
    assert "pthread_mutex_lock (mutex m) at dl.c:5." in outputs(t.path)[0]
    (tmp_path / "dl.debug").unlink()
    missing = outputs(t.path)
    assert "dl.c:" not in missing[0]
    os.mkfifo(tmp_path / "dl.debug")
    assert outputs(t.path) == missing
