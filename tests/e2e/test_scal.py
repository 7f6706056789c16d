"""ptt scal (docs/scal.md): a COMMAND whose durations follow a known model (scal_fake.py) gets
that model as its verdict and the exit status that says so; the JSON holds exactly the
durations the command printed after its warm-up, N given as {} and $PTT_SCAL_N; bad arguments
and failing commands give one line and exit status 2; --plot writes a gnuplot script and a
valid SVG; the built-in probes run and leave no named semaphore, even when killed. No duration
of a real probe is asserted: only what the command promises."""

import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import PTT, SOURCE, TIMEOUT, require_build, run

sys.path.insert(0, str(Path(__file__).parent))
import scal_fake  # noqa: E402

FAKE = [sys.executable, str(Path(__file__).parent / "scal_fake.py")]
PROBES = ["sem_open", "sem_close", "thread_create", "mutex_unlock", "cond_signal",
          "cond_broadcast", "key_create", "barrier_wait"]


def scal(*args, **kw):
    require_build()
    return run([PTT, "scal", "--no-pager", *args], **kw)


def strict_json(text):
    """The one JSON document of text; NaN and Infinity, which JSON has not, refused."""
    def refuse(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def fake(model, *opts, arg="{}", **kw):
    return scal(*opts, "--", *FAKE, model, arg, **kw)


def verdict_line(text):
    return next(line for line in text.splitlines() if line.startswith("verdict:"))


@pytest.mark.parametrize("model,opts,verdict,rc", [
    ("constant", ["--to=1000"], "constant", 0),
    ("linear", ["--to=1000"], "linear", 1),
    ("quadratic", ["--to=1000"], "quadratic", 1),
    ("log", ["--to=4096", "--spacing=geometric", "--steps=13"], "logarithmic", 1),
])
def test_known_models(model, opts, verdict, rc):
    p = fake(model, "--repeat=5", "--warmup=2", *opts)
    assert (p.returncode, p.stderr) == (rc, ""), p.stderr
    line = verdict_line(p.stdout)
    if rc:
        assert line.startswith(f"verdict:  {verdict}: grows with N, ×"), line
    else:
        assert line.startswith("verdict:  constant: no significant change with N"), line


def test_interval_in_the_unit():
    """A confidence interval of three digits in the coefficient's unit is written as such, not
    in exponent notation (1.8e+02ns)."""
    p = fake("scatter", "--to=1000", "--repeat=3")
    assert p.returncode == 0, p.stderr
    assert "          a = 500ns ± 175ns (95% confidence interval)\n" in p.stdout, p.stdout


def test_values_all_the_same():
    """Durations that do not vary leave R² undefined: no model is said to fit (R² = 1 for all
    of them before), in the text and in the JSON."""
    p = fake("flat", "--to=1000", "--repeat=3")
    assert (p.returncode, p.stderr) == (0, ""), p.stderr
    assert verdict_line(p.stdout).startswith("verdict:  constant: no significant change with N")
    assert "          every value is the same: no model fits better than another\n" in p.stdout
    rows = [line.split()[:3] for line in p.stdout.splitlines()
            if line.split()[:1] in (["constant"], ["logarithmic"], ["linear"], ["quadratic"])]
    assert rows == [[m, "-", "-"] for m in ("constant", "logarithmic", "linear", "quadratic")]
    doc = strict_json(fake("flat", "--to=1000", "--repeat=3", "--format=json").stdout)
    assert [(m["r2"], m["adj_r2"]) for m in doc["models"]] == [(None, None)] * 4


def test_wide_n_aligned():
    """The steps' table is as wide as its widest N: a 15-digit N pushed its row out of line."""
    p = fake("flat", "--values=1,2,3,4,100000000000000", "--repeat=3")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split("\n\n")[1].splitlines()
    assert lines[0].split() == ["N", "value", "min", "max", "samples"]
    assert [line.split()[0] for line in lines[1:]] == ["1", "2", "3", "4", "100000000000000"]
    assert len({len(line) for line in lines}) == 1, lines
    assert len({line.index("5.000us") for line in lines[1:]}) == 1, lines


def test_json(tmp_path):
    """Every field, and the samples: those printed after the warm-up, N as {} and $PTT_SCAL_N."""
    out = tmp_path / "r.json"
    p = fake("linear", "--from=10", "--to=100", "--steps=6", "--repeat=4", "--warmup=3",
             "--rounds=2", "--format=json", "-o", out, arg="--n={}")
    assert (p.returncode, p.stdout, p.stderr) == (1, "", "")
    doc = strict_json(out.read_text())
    assert doc["probe"] is None
    assert doc["command"] == [*FAKE, "linear", "--n={}"]
    assert (doc["spacing"], doc["order"], doc["rounds"], doc["repeat"], doc["warmup"]) == (
        "linear", "shuffled", 2, 4, 3)
    assert (doc["statistic"], doc["level"], doc["threshold"], doc["unit"]) == (
        "median", 0.05, 0.1, "ns")
    assert [pt["n"] for pt in doc["points"]] == [10, 28, 46, 64, 82, 100]
    for pt in doc["points"]:
        want = scal_fake.samples("linear", pt["n"], 7, 3) * 2  # two rounds, one after the other
        assert pt["count"] == len(pt["samples"]) == 8
        assert pt["samples"] == pytest.approx(want, abs=1e-5)
        one = statistics.median(want[:4])  # each round's median, the same in both
        assert pt["rounds"] == pytest.approx([one, one], abs=1e-5)
        assert pt["value"] == pytest.approx(one, abs=1e-5)
        assert (pt["min"], pt["max"]) == pytest.approx((min(want), max(want)), abs=1e-5)
    assert [m["model"] for m in doc["models"]] == ["constant", "logarithmic", "linear",
                                                  "quadratic"]
    for m in doc["models"]:
        assert m["fitted"] is True
        k = {"constant": 1, "quadratic": 3}.get(m["model"], 2)
        assert [c["name"] for c in m["coefficients"]] == ["a", "b", "c"][:k]
        for c in m["coefficients"]:
            assert c["ci_low"] <= c["value"] <= c["ci_high"] and c["stderr"] >= 0
        assert 0 <= m["r2"] <= 1 and m["equation"].startswith("y = ")
        assert (m["p_value"] is None) == (m["model"] == "constant")
    lin = doc["models"][2]
    assert lin["coefficients"][1]["ci_low"] < 7 < lin["coefficients"][1]["ci_high"]  # ns per N
    v = doc["verdict"]
    assert (v["model"], v["constant"], v["reason"], v["shape"]) == (
        "linear", False, "significant", "linear")
    assert v["p_value"] < 0.05 and v["confidence"] == 0.95
    a, b = (c["value"] for c in lin["coefficients"])
    assert v["change"] == pytest.approx(b * (100 - 10) / (a + b * 10), rel=1e-6)


def test_values_trimmed_and_threshold():
    """--values (sorted, each once), --statistic=trimmed, --threshold: a linear growth below the
    threshold is constant, with its reason."""
    p = fake("linear", "--values=400,100,200,300,200,500", "--repeat=10", "--warmup=0",
             "--statistic=trimmed", "--threshold=500%", "--format=json")
    assert (p.returncode, p.stderr) == (0, "")
    doc = strict_json(p.stdout)
    assert doc["spacing"] == "list" and doc["statistic"] == "trimmed"
    assert [pt["n"] for pt in doc["points"]] == [100, 200, 300, 400, 500]
    pt = doc["points"][0]
    want = sorted(scal_fake.samples("linear", 100, 10, 0))[1:-1]  # 10% off each end
    assert pt["value"] == pytest.approx(sum(want) / len(want), abs=1e-5)
    assert pt["rounds"] == [pt["value"]]
    v = doc["verdict"]
    assert (v["model"], v["reason"], v["shape"], v["constant"]) == (
        "constant", "below threshold", "linear", True)
    assert doc["threshold"] == 5


def test_order(tmp_path):
    """--order=shuffled (default): each round a permutation of the steps, the same in every
    run, not the same in every round; --order=ascending: N ascending."""
    def order(*opts):
        log = tmp_path / "log"
        log.unlink(missing_ok=True)
        p = fake("constant", "--to=10", "--repeat=1", "--warmup=0", "--rounds=3", *opts,
                 env={**os.environ, "SCAL_LOG": str(log)})
        assert p.returncode == 0, p.stderr
        ns = [int(n) for n in log.read_text().split()]
        return [ns[i:i + 10] for i in range(0, 30, 10)]
    shuffled = order()
    assert all(sorted(r) == list(range(1, 11)) for r in shuffled)
    assert shuffled[0] != list(range(1, 11)) and shuffled[0] != shuffled[1]
    assert order("--order=shuffled") == shuffled
    assert order("--order=ascending") == [list(range(1, 11))] * 3


BAD = [
    ([], "give --probe=NAME or -- COMMAND; 'ptt scal --list' lists the probes"),
    (["--probe=nosuch"], "--probe=nosuch: no such probe; 'ptt scal --list' lists them"),
    (["--probe=key_create", "--", "true"], "give --probe=NAME or a COMMAND, not both"),
    (["--probe=key_create", "--steps=3"], "--steps=3: give a whole number from 5 to 1000"),
    (["--probe=key_create", "--repeat=0"], "--repeat=0: give a whole number from 1 to 1000000"),
    (["--probe=key_create", "--from=x"], "--from=x: give a whole number from 0 to "
                                         "1000000000000000"),
    (["--probe=key_create", "--level=0.7"], "--level=0.7: give a fraction above 0 and at most "
                                            "0.5 (or a percentage: 5%)"),
    (["--probe=key_create", "--threshold=-1"], "--threshold=-1: give a fraction from 0 and at "
                                               "most 100 (or a percentage: 5%)"),
    (["--probe=key_create", "--format=xml"], "--format=xml: use text, json"),
    (["--probe=key_create", "--spacing=odd"], "--spacing=odd: use linear, geometric"),
    (["--probe=key_create", "--statistic=mean"], "--statistic=mean: use median, trimmed"),
    (["--probe=key_create", "--order=down"], "--order=down: use shuffled, ascending"),
    (["--probe=key_create", "--to=5000"], "--to=5000: the key_create probe takes N up to 1000"),
    (["--probe=key_create", "--from=50", "--to=10"], "--from=50 --to=10: give 0 <= FROM < TO"),
    (["--probe=key_create", "--spacing=geometric", "--from=0"],
     "--from=0 --to=1000: give 0 <= FROM < TO and FROM >= 1 (geometric)"),
    (["--probe=key_create", "--values=1,2,2,3"], "3 distinct values of N: at least 5 are needed"),
    (["--probe=key_create", "--values=1,2,x"], "--values=x: give a whole number from 0 to 1000"),
    (["--probe=key_create", "--values=,"], "--values=,: a value is empty"),
    (["--probe=key_create", "--values=1,2,,3,4,5"], "--values=1,2,,3,4,5: a value is empty"),
    (["--probe=key_create", "--timeout=0"], "--timeout=0: give seconds, above 0 and at most "
                                            "1000000"),
    (["--probe=key_create", "--values=1,2,3,4,5", "--from=1"],
     "--values excludes --from, --to, --steps and --spacing"),
    (["--probe=key_create", "--bogus"], "option '--bogus' is unknown or lacks its value; see "
                                        "'ptt scal --help'"),
    (["--plot=/nonexistent-dir/p.svg", "--probe=key_create"],
     "--plot=/nonexistent-dir/p.svg: cannot write into /nonexistent-dir: No such file or "
     "directory"),
    (["--", "true"], "a COMMAND needs --to=N (and --from=N, 1 by default) or --values"),
    (["--plot=p.png", "--probe=key_create"],
     "--plot=p.png: give a name ending in .svg (the picture is SVG)"),
]


@pytest.mark.parametrize("args,line", BAD, ids=[" ".join(a) or "none" for a, _ in BAD])
def test_bad_arguments(args, line):
    p = scal(*args)
    assert (p.returncode, p.stdout, p.stderr) == (2, "", f"ptt scal: {line}\n")


FAILING = [
    ("exit3", [], "the command (at N=1) exited with status 3"),
    ("garbage", [], "the command printed '12.5 parsecs' (line 1 at N=1): not a duration "
                    "(nanoseconds, or a number with ns, us, ms or s)"),
    ("few", ["--warmup=2"], "the command printed 2 durations at N=1: none left after the 2 of "
                            "--warmup"),
    ("hex", [], "the command printed '0x10' (line 1 at N=1): not a duration (nanoseconds, or a "
                "number with ns, us, ms or s)"),
    ("nan", [], "the command printed 'nan' (line 1 at N=1): not a duration (nanoseconds, or a "
                "number with ns, us, ms or s)"),
]


@pytest.mark.parametrize("model,opts,line", FAILING, ids=[f[0] for f in FAILING])
def test_failing_command(model, opts, line):
    p = fake(model, "--to=10", "--order=ascending", *opts)
    assert (p.returncode, p.stdout, p.stderr) == (2, "", f"ptt scal: {line}\n")


def test_command_not_found():
    p = scal("--to=10", "--", "/nonexistent/cmd", "{}")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == "ptt scal: cannot run '/nonexistent/cmd': No such file or directory\n"


def dead(pid):
    """Gone, or a zombie nobody reaped yet (its parent was killed)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def wait_for(pred, what, seconds=TIMEOUT / 2):
    end = time.monotonic() + seconds
    while not pred():
        assert time.monotonic() < end, f"{what}: not within {seconds} s"
        time.sleep(0.02)


def test_timeout_kills_the_group(tmp_path):
    """--timeout stops the command's whole process group (its child too)."""
    pids = tmp_path / "pids"
    p = fake("hang", "--to=10", "--order=ascending", "--timeout=3",
             env={**os.environ, "SCAL_PIDS": str(pids)})
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == ("ptt scal: the command (at N=1) took longer than --timeout=3s: "
                        "stopped\n")
    for pid in map(int, pids.read_text().split()):
        wait_for(lambda: dead(pid), f"process {pid} ended")


def test_interrupt_kills_the_group(tmp_path):
    """SIGTERM: the command's process group ended, then ptt scal dies of SIGTERM."""
    require_build()
    pids = tmp_path / "pids"
    p = subprocess.Popen([str(PTT), "scal", "--to=10", "--", *FAKE, "hang", "{}"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "SCAL_PIDS": str(pids)})
    wait_for(lambda: pids.exists() and pids.read_text().endswith("\n"), "the command started")
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=TIMEOUT)
    assert (p.returncode, out, err) == (-signal.SIGTERM, "", "")
    for pid in map(int, pids.read_text().split()):
        wait_for(lambda: dead(pid), f"process {pid} ended")


def has_gnuplot():
    if shutil.which("gnuplot"):
        return True
    if os.geteuid() == 0:
        pytest.fail("gnuplot is missing: scripts/test-deps installs gnuplot-nox as root")
    pytest.skip("gnuplot is missing (Debian: gnuplot-nox; scripts/test-deps installs it as root)")


def test_plot(tmp_path):
    has_gnuplot()
    svg = tmp_path / "lin.svg"
    p = fake("linear", "--to=100", "--repeat=3", "--warmup=0", f"--plot={svg}")
    assert (p.returncode, p.stderr) == (1, "")
    root = ET.parse(svg).getroot()  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = "".join(root.itertext())
    assert "linear: y = " in text and "N: the command's parameter" in text
    script = (tmp_path / "lin.gp").read_text()
    assert f"set output '{svg}'" in script
    rows = script.split("$samples << EOD\n", 1)[1].split("EOD\n", 1)[0].splitlines()
    assert len(rows) == 10 * 3  # every sample
    # the script makes the picture again by itself
    svg.unlink()
    q = run(["gnuplot", tmp_path / "lin.gp"], cwd=tmp_path)
    assert q.returncode == 0, q.stderr
    assert ET.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"


def test_plot_without_gnuplot(tmp_path):
    """gnuplot missing: the result is printed, the script written, no SVG, exit status 2."""
    svg = tmp_path / "c.svg"
    p = fake("constant", "--to=100", "--repeat=3", f"--plot={svg}",
             env={**os.environ, "PTT_GNUPLOT": "/nonexistent/gnuplot"})
    assert p.returncode == 2
    assert verdict_line(p.stdout).startswith("verdict:  constant")
    assert p.stderr == (f"ptt scal: cannot run /nonexistent/gnuplot: No such file or directory "
                        f"(Debian: gnuplot-nox); 'gnuplot {tmp_path}/c.gp' makes {svg}\n")
    assert (tmp_path / "c.gp").exists() and not svg.exists()


def test_plot_gnuplot_fails(tmp_path):
    """gnuplot runs and fails: one line, exit status 2, no SVG left (an earlier one neither:
    not an empty or partial picture)."""
    svg = tmp_path / "c.svg"
    svg.write_text("<svg/>")
    p = fake("constant", "--to=100", "--repeat=3", f"--plot={svg}",
             env={**os.environ, "PTT_GNUPLOT": "false"})
    assert p.returncode == 2
    assert p.stderr == f"ptt scal: false failed on {tmp_path}/c.gp (exit status 1)\n"
    assert (tmp_path / "c.gp").exists() and not svg.exists()
    # The user's own symbolic link is left, pointing where it did (it was removed).
    target = tmp_path / "pictures.svg"
    target.write_text("<svg/>")
    svg.symlink_to(target)
    p = fake("constant", "--to=100", "--repeat=3", f"--plot={svg}",
             env={**os.environ, "PTT_GNUPLOT": "false"})
    assert p.returncode == 2, p.stderr
    assert svg.is_symlink() and os.readlink(svg) == str(target)


def test_list():
    p = scal("--list")
    assert (p.returncode, p.stderr) == (0, "")
    lines = p.stdout.splitlines()
    assert lines[0].split()[:2] == ["probe", "default"]
    assert [line.split()[0] for line in lines[1:]] == PROBES


@pytest.mark.skipif(not shutil.which("bash"), reason="no bash")
def test_bash_completion():
    """The probes complete; after -- the COMMAND's own options are not ptt's."""
    def complete(*words):
        script = (f"source {SOURCE / 'contrib' / 'ptt.bash-completion'}\n"
                  f"COMP_WORDS=({' '.join(repr(w) for w in words)}); "
                  f"COMP_CWORD={len(words) - 1}\n_ptt; printf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
        p = run(["bash", "--norc", "-c", script])
        assert p.returncode == 0, p.stderr
        return p.stdout.split()
    assert complete("ptt", "sc") == ["scal"]
    assert complete("ptt", "scal", "--pro") == ["--probe="]
    assert complete("ptt", "scal", "--probe=sem_") == ["--probe=sem_open", "--probe=sem_close"]
    assert complete("ptt", "scal", "--spacing=") == ["--spacing=linear", "--spacing=geometric"]
    assert complete("ptt", "scal", "--to=9", "--", "./bench", "--fo") == []


def leftovers(pid):
    return [n for n in os.listdir("/dev/shm") if n.startswith(f"sem.ptt-scal-{pid}-")]


@pytest.mark.parametrize("probe", PROBES)
def test_probes_run(probe):
    """Each probe measures, judges and ends cleanly; its durations are not asserted."""
    first = 2 if probe == "barrier_wait" else 1
    values = ",".join(str(first + i) for i in range(5))
    p = scal(f"--probe={probe}", f"--values={values}", "--repeat=3", "--warmup=1",
             "--format=json")
    assert p.returncode in (0, 1) and p.stderr == "", p.stderr
    doc = strict_json(p.stdout)
    assert doc["probe"] == probe and doc["command"] is None
    assert [pt["n"] for pt in doc["points"]] == [first + i for i in range(5)]
    assert all(pt["count"] == 3 for pt in doc["points"])
    assert doc["verdict"]["constant"] == (p.returncode == 0)
    assert not [n for n in os.listdir("/dev/shm") if n.startswith("sem.ptt-scal-")
                and not os.path.exists(f"/proc/{n.split('-')[2]}")]


def probe_child(pid):
    """The probe's process of ptt scal pid, once it made a named semaphore."""
    def child():
        try:
            kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except FileNotFoundError:
            return None
        return int(kids[0]) if kids and leftovers(kids[0]) else None
    wait_for(lambda: child() is not None, "the probe made a semaphore")
    return child()


def long_sem_run():
    require_build()
    return subprocess.Popen([str(PTT), "scal", "--probe=sem_close", "--to=60000",
                             "--repeat=2000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_sem_cleanup_on_signal():
    """SIGTERM during the sem_close probe: its named semaphores removed, ptt dies of SIGTERM."""
    p = long_sem_run()
    child = probe_child(p.pid)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=TIMEOUT)
    assert (p.returncode, out, err) == (-signal.SIGTERM, "", "")
    assert leftovers(child) == []


def test_sem_cleanup_after_probe_killed():
    """The probe's process killed: said, exit status 2, its named semaphores removed."""
    p = long_sem_run()
    child = probe_child(p.pid)
    os.kill(child, signal.SIGKILL)
    out, err = p.communicate(timeout=TIMEOUT)
    assert (p.returncode, out) == (2, "")
    assert err == "ptt scal: the sem_close probe was killed by signal 9 (Killed)\n"
    assert leftovers(child) == []
