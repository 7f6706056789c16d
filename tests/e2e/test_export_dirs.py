"""The directories of ptt export's CTF and SCO (docs/export.md): made 0700 with files 0600, an
earlier export replaced, and, run as root, another user's links refused: uid 12002 plants a
symbolic link in place of the directory or of one of its files in a sticky world-writable
directory (like /tmp), uid 12001 exports there: one line on stderr, exit status 2, the link's
target untouched."""

import os
import shutil
import stat
import subprocess

import pytest

from conftest import ATTACKER, PTT, TIMEOUT, VICTIM, run, sticky_dir, trace_prog

# (format, a file the export writes first in DIR)
FORMATS = [("ctf", "metadata"), ("sco", "tracemap.h")]


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    return trace_prog(tmp_path_factory.mktemp("dirs"), "prodcons", 1, 1, 20, 4)


def export(trace, fmt, out, uid=None):
    return one_file(trace, ["export", f"--format={fmt}"], out, uid)


def one_file(trace, cmd, out, uid=None):
    """ptt CMD TRACE -o OUT, as uid when given."""
    argv = [PTT, *cmd, str(trace), "-o", str(out)]
    if uid is not None:
        argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--", *argv]
    return run(argv)


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.parametrize("fmt,first", FORMATS)
def test_private_and_replaced(traced, tmp_path, fmt, first):
    """A new DIR is 0700, its files 0600; exporting again replaces them."""
    out = tmp_path / "out"
    p = export(traced.path, fmt, out)
    assert p.returncode == 0, p.stderr
    files = sorted(os.listdir(out))
    assert first in files and len(files) > 1
    assert mode(out) == 0o700
    assert {mode(out / f) for f in files} == {0o600}
    before = {f: (out / f).read_bytes() for f in files}
    p = export(traced.path, fmt, out)
    assert p.returncode == 0, p.stderr
    assert {f: (out / f).read_bytes() for f in os.listdir(out)} == before


@pytest.mark.parametrize("fmt,first", FORMATS)
def test_own_links_refused(traced, tmp_path, fmt, first):
    """A link in place of DIR or of its first file is not followed, even the user's own."""
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / first).symlink_to(victim)
    p = export(traced.path, fmt, out)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.splitlines() == [
        f"ptt export: {out}/{first}: a symbolic link: refused, ptt export follows none"]
    assert victim.read_text() == "keep\n"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "linked"
    linked.symlink_to(elsewhere, target_is_directory=True)
    p = export(traced.path, fmt, linked)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        f"ptt export: {linked}: a symbolic link: refused, ptt export follows none"]
    assert os.listdir(elsewhere) == []


@pytest.fixture
def sticky(traced):
    """conftest.sticky_dir's directories, with the victim's trace and a directory of the victim's
    beside its file."""
    with sticky_dir("ptt-dirs-", "exports as two other users") as (base, shared, victim_file):
        trace = os.path.join(base, "t.ptt")
        shutil.copyfile(traced.path, trace)
        os.chown(trace, VICTIM, VICTIM)
        victim_dir = os.path.join(base, "victim_dir")
        os.mkdir(victim_dir, 0o700)
        os.chown(victim_dir, VICTIM, VICTIM)
        yield base, shared, trace, victim_file, victim_dir


def as_attacker(*cmd):
    p = run(["setpriv", f"--reuid={ATTACKER}", f"--regid={ATTACKER}", "--clear-groups", "--",
             *cmd])
    assert p.returncode == 0, p.stderr


def refused(sticky, fmt, out, line):
    """The victim's export into out is refused with "ptt export: LINE", the victim's file and
    directory untouched."""
    _, _, trace, victim_file, victim_dir = sticky
    p = export(trace, fmt, out, uid=VICTIM)
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == [f"ptt export: {line}"]
    with open(victim_file) as f:
        assert f.read() == "precious\n"
    assert os.listdir(victim_dir) == []


@pytest.mark.parametrize("fmt,first", FORMATS)
def test_planted_dir_link_refused(sticky, fmt, first):
    """DIR is the attacker's link to a directory of the victim's: refused."""
    base, shared, trace, victim_file, victim_dir = sticky
    out = os.path.join(shared, "out")
    as_attacker("ln", "-s", victim_dir, out)
    refused(sticky, fmt, out, f"{out}: a symbolic link: refused, ptt export follows none")
    assert os.readlink(out) == victim_dir and os.lstat(out).st_uid == ATTACKER


@pytest.mark.parametrize("fmt,first", FORMATS)
def test_planted_dir_refused(sticky, fmt, first):
    """DIR is the attacker's directory, a link in it in place of the first file: refused, as
    another user's directory, before any file is opened."""
    base, shared, trace, victim_file, victim_dir = sticky
    out = os.path.join(shared, "out")
    as_attacker("mkdir", "-m", "0777", out)
    as_attacker("ln", "-s", victim_file, os.path.join(out, first))
    refused(sticky, fmt, out, f"{out}: not a file or directory of the user's own: refused")
    assert sorted(os.listdir(out)) == [first]


@pytest.mark.parametrize("fmt,first", FORMATS)
def test_planted_link_in_open_dir_refused(sticky, fmt, first):
    """DIR is the victim's but world-writable (made so by hand): the attacker's link in place
    of the first file is refused, not followed nor removed."""
    base, shared, trace, victim_file, victim_dir = sticky
    out = os.path.join(shared, "out")
    os.mkdir(out)
    os.chmod(out, 0o777)
    os.chown(out, VICTIM, VICTIM)
    link = os.path.join(out, first)
    as_attacker("ln", "-s", victim_file, link)
    refused(sticky, fmt, out, f"{link}: a symbolic link: refused, ptt export follows none")
    assert os.readlink(link) == victim_file and os.lstat(link).st_uid == ATTACKER


# The exports of one file: made as ptt trace makes its file (docs/security.md), "-" is standard
# output.
ONE_FILE = [["export", "--format=chrome"], ["paje"], ["report"]]


@pytest.mark.parametrize("cmd", ONE_FILE, ids=lambda c: c[-1])
def test_one_file_private_and_to_stdout(traced, tmp_path, cmd):
    """The file is 0600 whatever the umask; "-o -" writes the same bytes to standard output and
    makes no file named "-"."""
    out = tmp_path / "out"
    p = one_file(traced.path, cmd, out)
    assert p.returncode == 0, p.stderr
    assert mode(out) == 0o600
    os.chmod(out, 0o644)  # an earlier file of the user's, readable by others: private again
    p = one_file(traced.path, cmd, out)
    assert p.returncode == 0, p.stderr
    assert mode(out) == 0o600
    p = subprocess.run([str(PTT), *cmd, str(traced.path), "-o", "-"], capture_output=True,
                       cwd=tmp_path, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "-").exists()
    if cmd[0] != "report":  # the report names the time it was made
        assert p.stdout == out.read_bytes()
    else:
        assert p.stdout.startswith(b"<!DOCTYPE html>")


@pytest.mark.parametrize("cmd", ONE_FILE, ids=lambda c: c[-1])
def test_one_file_planted_link_refused(sticky, cmd):
    """The attacker's link in a sticky directory, in place of the victim's output: refused in
    one line, exit status 2, the link's target untouched."""
    base, shared, trace, victim_file, victim_dir = sticky
    link = os.path.join(shared, "out")
    as_attacker("ln", "-s", victim_file, link)
    p = one_file(trace, cmd, link, uid=VICTIM)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and f"refusing to write through {link}" in lines[0], p.stderr
    with open(victim_file) as f:
        assert f.read() == "precious\n"
    assert os.readlink(link) == victim_file and os.lstat(link).st_uid == ATTACKER


@pytest.mark.parametrize("cmd", ONE_FILE, ids=lambda c: c[-1])
def test_one_file_planted_file_refused(sticky, cmd):
    """The attacker's own file, open to all, in a sticky directory in place of the victim's
    output: refused (it would stay the attacker's, readable by them), left as it was."""
    base, shared, trace, victim_file, victim_dir = sticky
    out = os.path.join(shared, "out")
    as_attacker("sh", "-c", f"echo planted > {out}; chmod 666 {out}")
    p = one_file(trace, cmd, out, uid=VICTIM)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and f"refusing to write through {out}: a file of uid {ATTACKER}" in \
        lines[0], p.stderr
    with open(out) as f:
        assert f.read() == "planted\n"
    assert os.lstat(out).st_uid == ATTACKER and mode(out) == 0o666


def test_one_file_hard_link_refused(traced, tmp_path):
    """An output with another name (a hard link) is not written through."""
    out, other = tmp_path / "out", tmp_path / "other"
    out.write_text("kept\n")
    os.link(out, other)
    p = one_file(traced.path, ["export", "--format=chrome"], out)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [f"ptt export: refusing to overwrite {out}: the file has "
                                     "other names (hard links); give another -o"]
    assert other.read_text() == "kept\n"


@pytest.mark.parametrize("cmd", [*ONE_FILE, ["stat"], ["view"]], ids=lambda c: c[-1])
def test_stdout_closed(traced, tmp_path, cmd):
    """'-o -' (or standard output by default) closed when ptt starts: one line and status 2,
    and nothing written into a file the command opened meanwhile (paje's temporary file took
    the number before)."""
    args = [*cmd, str(traced.path)] + (["-o", "-"] if cmd in ONE_FILE else [])
    p = subprocess.run(f"exec {PTT} {' '.join(args)} >&-", shell=True, capture_output=True,
                       text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert p.returncode == 2
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "standard output: Bad file descriptor" in lines[0], p.stderr
    assert os.listdir(tmp_path) == []
