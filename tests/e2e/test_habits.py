"""The habits of perf and git: the default trace ptt.data, -o on every command that writes, a
pager and colours on a terminal, a progress line for long reads, bash completion, and stat's +N
(docs/trace.md, docs/view.md, docs/stat.md, docs/check.md)."""
import os
import pty
import shutil
import subprocess

import pytest

from conftest import BUILD, PROGS, PTT, TIMEOUT, prog, ptt_trace, require_build, run

SOURCE = os.environ.get("PTT_SOURCE") or str(BUILD.parent)
COMPLETION = os.path.join(SOURCE, "contrib", "ptt.bash-completion")
ESC = "\x1b["


def clean_env(**kw):
    """The environment without the settings these tests vary."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PTT_DIR", "PTT_PAGER", "PAGER", "NO_COLOR", "LESS")}
    env.update(TERM="xterm", **kw)
    return env


def run_pty(argv, env, cwd=None):
    """argv with standard output and error on a new terminal: its exit status and all it wrote
    there."""
    pid, fd = pty.fork()
    if pid == 0:
        if cwd:
            os.chdir(cwd)
        os.execve(str(argv[0]), [str(a) for a in argv], env)
    out = b""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """ptt.data and ptt.data.old, written without -o: a misuse (a double unlock), then a
    trylock run."""
    require_build()
    d = tmp_path_factory.mktemp("habits")
    for argv in ([PROGS / "check" / "check_double_unlock"], [prog("mutex_calls"), "trylock"]):
        p = subprocess.run([str(PTT), "trace", "-q", "--", *map(str, argv)], cwd=d,
                           env=clean_env(), capture_output=True, text=True, timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
    return d


def ptt(d, *args, env=None):
    return run([PTT, *args], cwd=d, env=env or clean_env())


def test_default_trace_and_old(traced):
    """ptt trace without -o writes ptt.data and keeps the one before as ptt.data.old; every
    reader reads ptt.data when given no file."""
    assert sorted(os.listdir(traced)) == ["ptt.data", "ptt.data.old"]
    assert os.stat(traced / "ptt.data").st_mode & 0o777 == 0o600
    for cmd in (["view"], ["view", "--summary"], ["stat"], ["check"],
                ["stat", "--format=json"]):
        a, b = ptt(traced, *cmd), ptt(traced, *cmd, "ptt.data")
        assert a.returncode == b.returncode and a.stdout == b.stdout and a.stdout, cmd
    assert "mutex_calls trylock" in ptt(traced, "view", "--summary").stdout
    assert "check_double_unlock" in ptt(traced, "view", "--summary", "ptt.data.old").stdout
    for cmd in ("report", "paje"):
        out = traced / f"out.{cmd}"
        assert ptt(traced, cmd, "-o", out).returncode == 0 and out.stat().st_size > 0
        out.unlink()


def test_default_trace_in_ptt_dir(traced, tmp_path):
    """$PTT_DIR: where the readers look too."""
    p = ptt(tmp_path, "stat", env=clean_env(PTT_DIR=str(traced)))
    assert p.returncode == 0 and p.stdout.startswith(f"{traced}/ptt.data: ")


def test_default_trace_missing(tmp_path):
    for cmd in (["view"], ["stat"], ["check"], ["report", "-o", "r.html"]):
        p = ptt(tmp_path, *cmd)
        assert p.returncode == 2 and p.stdout == ""
        assert p.stderr == (f"ptt {cmd[0]}: ptt.data: No such file or directory (the default "
                            "trace file: give a FILE, or write it with ptt trace)\n")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("cmd", [["view"], ["view", "--summary"], ["stat"], ["stat", "--format=csv"],
                                 ["check"], ["check", "--format=json"]])
def test_output_file(traced, tmp_path, cmd):
    """-o OUT: what standard output gets, in a new file of mode 0600; '-' is standard output;
    an existing file is overwritten."""
    want = ptt(traced, *cmd)
    out = tmp_path / "out.txt"
    p = ptt(traced, *cmd, "-o", out)
    assert (p.returncode, p.stdout) == (want.returncode, "")
    assert out.read_text() == want.stdout
    assert out.stat().st_mode & 0o777 == 0o600
    out.write_text("x" * 100000)
    assert ptt(traced, *cmd, f"--output={out}").returncode == want.returncode
    assert out.read_text() == want.stdout
    p = ptt(traced, *cmd, "-o", "-")
    assert (p.returncode, p.stdout) == (want.returncode, want.stdout)
    assert not os.path.exists(tmp_path / "out.txt.old")


def test_output_file_refused(traced, tmp_path):
    """A link planted by someone else in a sticky, world-writable directory is refused (as ptt
    trace refuses it); an unreadable trace makes no output; a directory cannot be written."""
    p = ptt(traced, "stat", "-o", tmp_path / "no" / "such" / "dir.txt")
    assert p.returncode == 2 and p.stderr.startswith("ptt stat: cannot create ")
    p = ptt(tmp_path, "view", "-o", "out.txt", "missing.ptt")
    assert p.returncode == 2 and not (tmp_path / "out.txt").exists()
    p = ptt(traced, "check", "-o", tmp_path)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1


def test_output_full_disk(traced):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    p = ptt(traced, "view", "-o", "/dev/full")
    assert p.returncode == 2
    assert p.stderr == "ptt view: cannot write /dev/full: No space left on device\n"


def test_color_always_never(traced):
    """--color=always: escape sequences, even into a pipe; never and the default (auto, a pipe):
    none."""
    for cmd in (["view"], ["stat"], ["check"]):
        always = ptt(traced, *cmd, "--color=always").stdout
        assert ESC in always, cmd
        assert ESC not in ptt(traced, *cmd).stdout
        assert ESC not in ptt(traced, *cmd, "--color=never").stdout
        assert ptt(traced, *cmd, "--color").stdout == always  # no WHEN: always
        # The same text, but the colours.
        plain = always
        for seq in ("\x1b[m", "\x1b[1m", "\x1b[1;31m", "\x1b[1;35m", "\x1b[1;33m",
                    "\x1b[32m", "\x1b[33m", "\x1b[36m"):
            plain = plain.replace(seq, "")
        assert plain == ptt(traced, *cmd).stdout
    check = ptt(traced, "check", "--color=always", "ptt.data.old").stdout
    assert check.startswith("\x1b[1;35mmisuse\x1b[m: ")
    stat = ptt(traced, "stat", "--color=always").stdout
    assert "\x1b[1mkind " in stat
    assert ESC not in ptt(traced, "view", "--format=json", "--color=always").stdout
    p = ptt(traced, "view", "--color=sometimes")
    assert p.returncode == 2
    assert p.stderr == "ptt view: --color=sometimes: use auto, always or never\n"


def test_color_auto_on_a_terminal(traced):
    """auto: colours on a terminal, none with NO_COLOR set or TERM=dumb."""
    env = clean_env(PTT_PAGER="")
    rc, out = run_pty([PTT, "check", "ptt.data.old"], env, cwd=traced)
    assert rc == 1 and "\x1b[1;35mmisuse\x1b[m: " in out
    for extra in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        rc, out = run_pty([PTT, "check", "ptt.data.old"], {**env, **extra}, cwd=traced)
        assert rc == 1 and out.startswith("misuse: ") and ESC not in out
    rc, out = run_pty([PTT, "check", "--color=never", "ptt.data.old"], env, cwd=traced)
    assert ESC not in out
    # NO_COLOR empty: as if unset.
    rc, out = run_pty([PTT, "stat"], {**env, "NO_COLOR": ""}, cwd=traced)
    assert rc == 0 and "\x1b[1mkind " in out


def test_pager_on_a_terminal(traced):
    """On a terminal the text goes through $PTT_PAGER, else $PAGER; --no-pager, an empty pager
    or cat: none. In a pipe: never."""
    mark = "sed s/^/PAGED:/"
    plain = ptt(traced, "stat").stdout.splitlines()
    for env in (clean_env(PTT_PAGER=mark), clean_env(PAGER=mark), clean_env(PAGER="cat",
                                                                              PTT_PAGER=mark)):
        rc, out = run_pty([PTT, "stat", "--color=never"], env, cwd=traced)
        assert rc == 0 and out.splitlines() == ["PAGED:" + l for l in plain]
    for env, opts in ((clean_env(PTT_PAGER=mark), ["--no-pager"]), (clean_env(PTT_PAGER=""), []),
                      (clean_env(PAGER="cat"), []), (clean_env(PTT_PAGER="cat", PAGER=mark), [])):
        rc, out = run_pty([PTT, "stat", "--color=never", *opts], env, cwd=traced)
        assert rc == 0 and out.splitlines() == plain
    # -o: the file gets the text, no pager.
    rc, out = run_pty([PTT, "view", "-o", "v.txt"], clean_env(PTT_PAGER=mark), cwd=traced)
    assert rc == 0 and out == ""
    assert "PAGED" not in (traced / "v.txt").read_text()
    os.unlink(traced / "v.txt")
    p = ptt(traced, "view", env=clean_env(PTT_PAGER=mark))
    assert "PAGED" not in p.stdout


@pytest.mark.skipif(not shutil.which("less"), reason="no less")
def test_default_pager_less(traced):
    """The default, less -FRX, shows a text that fits the screen and quits."""
    rc, out = run_pty([PTT, "check", "ptt.data.old", "--color=never"], clean_env(), cwd=traced)
    assert rc == 1 and "misuse: " in out


def test_progress_line(traced):
    """On a terminal, after the delay (PTT_PROGRESS_DELAY_MS, default 1000): 'ptt CMD: reading
    N% (...)' on stderr, then cleared; none with the default delay on a short read, none when
    stderr is not a terminal."""
    env = clean_env(PTT_PAGER="", PTT_PROGRESS_DELAY_MS="0")
    for cmd in ("view", "stat", "check"):
        rc, out = run_pty([PTT, cmd, "--no-pager", "--color=never", "ptt.data"], env, cwd=traced)
        assert out.startswith(f"\rptt {cmd}: reading   0% (0.0 kB of ")
        assert "\r\x1b[K" in out
    rc, out = run_pty([PTT, "report", "-o", "r.html"], env, cwd=traced)
    assert rc == 0 and out.startswith("\rptt report: reading ") and out.endswith("\r\x1b[K")
    os.unlink(traced / "r.html")
    rc, out = run_pty([PTT, "stat", "--color=never"], clean_env(PTT_PAGER=""), cwd=traced)
    assert "reading" not in out
    p = ptt(traced, "stat", env=env)
    assert p.stderr == ""


def bash_complete(*words):
    """What the completion of ptt offers for the line WORDS (the last one being completed)."""
    script = f"""source {COMPLETION}
COMP_WORDS=({' '.join(f"'{w}'" for w in words)}); COMP_CWORD={len(words) - 1}
_ptt; printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    p = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    return [w for w in p.stdout.splitlines() if w]


@pytest.mark.skipif(not shutil.which("bash"), reason="no bash")
def test_bash_completion():
    p = subprocess.run(["bash", "--norc", "-c", f"source {COMPLETION}; complete -p ptt"],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.stdout == "complete -o bashdefault -o default -F _ptt ptt\n"
    assert bash_complete("ptt", "st") == ["stat"]
    assert bash_complete("ptt", "stat", "--fo") == ["--format="]
    assert bash_complete("ptt", "stat", "--format=") == ["--format=text", "--format=json",
                                                           "--format=csv"]
    assert bash_complete("ptt", "stat", "--format", "=", "j") == ["json"]
    assert bash_complete("ptt", "view", "--no-") == ["--no-pager"]
    assert bash_complete("ptt", "check", "--color=n") == ["--color=never"]
    assert bash_complete("ptt", "help", "rep") == ["report"]
    assert bash_complete("ptt-view", "--su") == ["--summary"]
    assert bash_complete("ptt", "trace", "--overflow=") == ["--overflow=block",
                                                             "--overflow=discard"]
    # Subcommands: ptt runs SUBCOMMAND, ptt ctl SESSION VERB; then options and files again.
    assert bash_complete("ptt", "runs", "") == ["import", "list", "show", "compare", "report"]
    assert bash_complete("ptt", "runs", "c") == ["compare"]
    assert bash_complete("ptt", "runs", "compare", "--sl") == ["--slower="]
    assert bash_complete("ptt", "ctl", "") == ["list"]
    assert bash_complete("ptt", "ctl", "ptt-0-1", "st") == ["status", "start", "stop"]
    assert bash_complete("ptt-runs", "im") == ["import"]
    # The traced program's own options are not ptt's.
    assert bash_complete("ptt", "trace", "-o", "x", "./prog", "--fo") == []
    assert bash_complete("ptt", "trace", "--", "./prog", "--fo") == []


def test_install_completion(tmp_path):
    """make install puts it in share/bash-completion/completions/ptt."""
    require_build()
    p = run(["cmake", "--install", BUILD, "--prefix", tmp_path])
    assert p.returncode == 0, p.stderr
    installed = tmp_path / "share" / "bash-completion" / "completions" / "ptt"
    assert installed.read_text() == open(COMPLETION).read()


def test_stat_more_threads(tmp_path):
    """+N after the first 8 threads of an object: the number of the other threads, not of their
    calls. counts 12 5 shared: 12 threads lock one mutex 5 times each."""
    t = ptt_trace(tmp_path, [prog("counts"), 12, 5, "shared"])
    p = run([PTT, "stat", "--kind=mutex", t.path])
    assert p.returncode == 0, p.stderr
    rows = [l for l in p.stdout.splitlines() if l.startswith("mutex ") and " one " in l]
    assert len(rows) == 1
    users = rows[0].split()[-1].split(",")
    assert len(users) == 9 and users[-1] == "+4", rows[0]
