"""The binaries a trace names, read for their symbols (docs/names.md): a path that is no longer a
regular file (a FIFO, a device) is not opened, so a reader never waits for a writer that will
not come: it names that binary's addresses as when the file is missing. Separate debug files
are looked for next to a program only where no one else can put files."""

import gzip
import os
import re
import shutil
import subprocess

import pytest

from conftest import PTT, prog, ptt_trace, run
from test_readahead import sanitized

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


@pytest.mark.parametrize("now", ["fifo", "gzip"])
def test_binary_replaced(tmp_path, now):
    """The traced program replaced by a FIFO, or by its own gzip'd copy (which libdw would
    inflate whole in memory): read as when it is missing. (A device is left alone by the same
    test as a FIFO; opening /dev/zero would not show.)"""
    binary = tmp_path / "fl"
    shutil.copy(prog("flood"), binary)
    t = ptt_trace(tmp_path, [binary, 1, 10])
    present = outputs(t.path)
    assert "worker" in present[0]  # flood's thread, named by its start routine's symbol
    data = binary.read_bytes()
    binary.unlink()
    missing = outputs(t.path)
    assert "worker" not in missing[0]
    if now == "fifo":
        os.mkfifo(binary)
    else:
        binary.write_bytes(gzip.compress(data))
    assert outputs(t.path) == missing


DL_C = """#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(void)
{
    pthread_mutex_lock(&m);
    return pthread_mutex_unlock(&m);
}
"""


def build_dl(d, debuglink):
    """dl, built in d with its debug information in dl.debug (named by a .gnu_debuglink if
    debuglink, else found by its name alone), traced: the trace."""
    if not shutil.which("gcc") or not shutil.which("objcopy"):
        pytest.skip("needs gcc and objcopy")
    (d / "dl.c").write_text(DL_C)
    cmds = [["gcc", "-g", "-O0", "-pthread", "-o", "dl", "dl.c"],
            ["objcopy", "--only-keep-debug", "dl", "dl.debug"],
            ["objcopy", "--strip-debug", "dl"]]
    if debuglink:
        cmds.append(["objcopy", "--add-gnu-debuglink=dl.debug", "dl"])
    for cmd in cmds:
        assert run(cmd, cwd=d).returncode == 0, cmd
    return ptt_trace(d, [d / "dl"]).path


def test_debug_file_next_to_the_program(tmp_path):
    """In a directory only its owner can write to, the debug file the program's
    .gnu_debuglink names gives the lines."""
    assert "pthread_mutex_lock (mutex m) at dl.c:5." in outputs(build_dl(tmp_path, True))[0]


@pytest.mark.parametrize("debuglink", [True, False])
def test_debug_file_where_others_can_write(tmp_path, debuglink):
    """In a directory anyone can write to (mode 1777), no file is looked for next to the
    program: one planted there is not read, and a FIFO there (which libdw's open would wait on
    for ever, with or without a .gnu_debuglink naming it) is not opened."""
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o1777)
    path = build_dl(d, debuglink)
    planted = outputs(path)
    assert "dl.c:" not in planted[0]
    (d / "dl.debug").unlink()
    os.mkfifo(d / "dl.debug")
    assert outputs(path) == planted


def test_without_proc(tmp_path):
    """Where /proc is not mounted (a container), binaries are opened by their path, checked to
    be the file looked at: the names are the same."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare, to hide /proc in a mount namespace of its own")
    if sanitized():
        pytest.skip("the sanitizers' runtime needs /proc, even to exit")
    t = ptt_trace(tmp_path, [prog("flood"), 1, 10])
    want = outputs(t.path)[0]
    assert "worker" in want
    p = run(["unshare", "-m", "sh", "-c", 'mount -t tmpfs none /proc && exec "$0" view "$1"',
             PTT, t.path], timeout=WAIT)
    if p.returncode and "mount" in p.stderr:
        pytest.skip(f"cannot hide /proc: {p.stderr.strip()}")
    assert p.returncode == 0 and p.stdout == want, p.stderr


def test_libraries_loaded_when_needed(tmp_path):
    """ptt links none of the libraries only some commands need (docs/performance.md, "ptt's own
    libraries"): a session's ptt trace maps no libdw, which a reader loads to name what the
    binaries' symbols name (a thread by its start routine)."""
    needed = run(["readelf", "-d", PTT]).stdout
    names = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", needed)
    assert names and "libc.so.6" in names, needed
    for lib in ("libdw", "libelf", "libz", "libsqlite3", "libexpat", "libstdc++"):
        assert not [n for n in names if n.startswith(lib + ".")], (lib, names)
    # The program's parent is ptt trace: its own mappings while the session runs.
    t = ptt_trace(tmp_path, ["sh", "-c", "cat /proc/$PPID/maps"], opts=["-q"])
    maps = t.stdout
    assert os.path.realpath(PTT) in maps, maps
    assert "libdw" not in maps and "libelf" not in maps, maps
    t = ptt_trace(tmp_path, [prog("flood"), 1, 10], name="flood.ptt")
    assert "worker" in outputs(t.path)[0]


def test_bound_at_start():
    """ptt is linked with -z now -z relro (docs/performance.md, "Bound at start"): every symbol
    bound when it starts, the table read-only after."""
    dynamic = run(["readelf", "-d", PTT]).stdout
    assert re.search(r"\(FLAGS\)\s+BIND_NOW", dynamic), dynamic
    assert re.search(r"\(FLAGS_1\)\s+Flags: NOW", dynamic), dynamic
    assert "GNU_RELRO" in run(["readelf", "-l", PTT]).stdout


def test_without_libdw(tmp_path):
    """A libdw that cannot be loaded when a reader needs it (here, /dev/null mounted over it in a
    mount namespace of its own): one line says so, every event is still there, the addresses are
    not named, and the exit status is 0."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare, to hide libdw in a mount namespace of its own")
    found = re.search(r"libdw\.so\.1 \([^)]*x86-64[^)]*\) => (\S+)", run(["ldconfig", "-p"]).stdout)
    if not found:
        pytest.skip("no libdw.so.1 known to ldconfig")
    t = ptt_trace(tmp_path, [prog("flood"), 1, 10])
    want = outputs(t.path)[0]
    assert "start worker (flood.c:" in want, want
    p = run(["unshare", "-m", "sh", "-c", 'mount --bind /dev/null "$2" && exec "$0" view "$1"',
             PTT, t.path, found[1]], timeout=WAIT)
    if p.returncode and "mount" in p.stderr:
        pytest.skip(f"cannot hide libdw: {p.stderr.strip()}")
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("ptt view: cannot load libdw, addresses are not named: ")
    assert p.stderr.count("\n") == 1, p.stderr
    assert len(p.stdout.splitlines()) == len(want.splitlines())
    assert "worker (flood.c:" not in p.stdout and "flood.c:" not in p.stdout, p.stdout
