#!/usr/bin/env python3
"""What the peers of `ptt check` report on its test corpus, and how long they take.

The corpus is tests/progs/check (README.md there): 27 check_* programs with known findings and
9 ok_* programs that must give none, listed with their expected findings in expected.json. Each
program is run

  - natively (the plain build of build/tests/progs/check), for the base time;
  - under valgrind --tool=helgrind and valgrind --tool=drd (the same plain build);
  - as a ThreadSanitizer build (gcc -fsanitize=thread -g -O1 -pthread, built here into
    BUILD/check_peers/tsan), with TSAN_OPTIONS=second_deadlock_stack=1 detect_deadlocks=1;
  - under `ptt trace` then `ptt check --format=json` when build/bin/ptt has a check command
    (else its column says n/a); the time is that of both commands together.

Programs whose expected.json entry says "hangs" block for ever: every run of them is stopped
after --timeout seconds (SIGTERM to its process group, SIGKILL 3 s later), and what the tool
printed until then is kept. ptt traces them with --hang-timeout=0.5 --kill-on-hang.

Times are wall-clock seconds of the whole run (tool start-up included) and CPU seconds
(user + system, from getrusage(RUSAGE_CHILDREN) deltas). The TSan build time is not counted.

How the tools' messages are read (conservative; every report's first line is kept in the
details so that a reader can check each decision):

  Each report of a tool is given a class from its message and the pthread call it points at
  (the first frame of its stack):
    lock-order        helgrind 'lock order "A before B" violated', TSan 'lock-order-inversion'
    relock            helgrind 'Attempt to re-lock a non-recursive lock I already hold',
                      DRD 'Recursive locking not allowed', TSan 'double lock of a mutex'
    unlock-not-held   helgrind 'unlocked a not-locked lock', 'unlocked lock at ... currently
                      held by thread', DRD 'Mutex not locked', TSan 'unlock of an unlocked
                      mutex (or by a wrong thread)'; also an 'invalid lock' / 'not a mutex' /
                      'invalid mutex' report whose call is an unlock (it flags that unlock)
    cond-wait-unheld  helgrind 'pthread_cond_{timed}wait called with un-held / invalid mutex /
                      mutex held by a different thread'; an 'unlock of an unlocked mutex' or
                      'not a mutex' report whose call is pthread_cond_(timed)wait
    cond-two-mutexes  helgrind 'cond is associated with a different mutex', DRD 'Inconsistent
                      association of condition variable and mutex'
    destroy-busy      helgrind 'pthread_mutex_destroy of a locked mutex', 'destruction of
                      condition variable being waited upon', 'threads are waiting at barrier',
                      DRD 'Destroying locked mutex' / '... being waited upon', TSan 'destroy of
                      a locked mutex', and a TSan 'data race' whose access is in
                      pthread_*_destroy (TSan's way of saying the object is destroyed in use)
    exit-holding      helgrind 'Exiting thread still holds N lock(s)', DRD 'Mutex still
                      locked at thread exit'
    invalid-object    helgrind 'invalid lock', DRD 'is not a mutex', TSan 'use of an invalid
                      mutex' (any other call)
    failed:ERRNO      helgrind "Thread #N's call to pthread_X failed with error code N"
    anything else     data races, 'signal-unsafe', 'thread leak', 'The impossible happened',
                      TSan's one-line 'too long mutex cycle found' (no locks, no stacks, exit
                      status 0), ...: no class.

  Each expected finding has a class too (EXPECTED_CLASS below: deadlock, lock-order and hang
  findings are their kind, an error is error:ERRNO, a misuse is one of the misuse classes
  above, chosen by hand from its program's top comment). A report class credits:
    lock-order -> a lock-order or a deadlock finding
    relock     -> a deadlock finding, or error:EDEADLK (the relock of an error-checking mutex)
    failed:E   -> error:E (the tools report every failed call, handled or not)
    a misuse class -> a misuse finding of that class
  Findings and reports are paired one to one, in the order the tool printed them; a report
  whose only candidates are already paired is a duplicate (not counted either way).

  A report that pairs with nothing is counted as a false report, except:
    - "related": a failed-call report whose errno is the one the misused call returns (e.g.
      pthread_join failed with EINVAL on a detached thread): it points at the call but does not
      say what is wrong with it, so it neither finds the misuse nor is false; TSan's 'too long
      mutex cycle found' on a program whose expected finding is a lock-order cycle, likewise;
    - "kill artefact": an exit-holding report printed after the run was stopped at the timeout
      (helgrind says so of every thread killed holding a lock).
  No tool tells a hang (deadlock, lost wake-up, endless wait) once the program is killed: a
  hang finding is found only by a report printed before the kill (e.g. a relock).

Usage: bench/check_peers.py [--build build] [--out build/check_peers.md] [--timeout 10]
"""

import argparse
import errno
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "progs", "check")
TOOLS = ("helgrind", "drd", "tsan", "ptt")
TSAN_OPTIONS = "second_deadlock_stack=1 detect_deadlocks=1"

# The class of each misuse finding, keyed by program and the first line marker of the finding,
# with the errno the misused call returns (None when it returns 0 or never returns).
EXPECTED_CLASS = {
    ("check_unlock_not_held", "unlock"): ("unlock-not-held", None),
    ("check_unlock_other", "owner_lock"): ("exit-holding", None),
    ("check_unlock_other", "unlock"): ("unlock-not-held", None),
    ("check_double_unlock", "second_unlock"): ("unlock-not-held", None),
    ("check_recursive_over", "third_unlock"): ("unlock-not-held", "EPERM"),
    ("check_destroy_locked", "destroy"): ("destroy-busy", "EBUSY"),
    ("check_destroy_cond_busy", "destroy"): ("destroy-busy", None),
    ("check_destroy_barrier_busy", "destroy"): ("destroy-busy", None),
    ("check_cond_two_mutexes", "w1_wait"): ("cond-two-mutexes", None),
    ("check_wait_unlocked", "wait"): ("cond-wait-unheld", None),
    ("check_join_detached", "join"): ("join-misuse", "EINVAL"),
    ("check_join_twice", "second_join"): ("join-misuse", "ESRCH"),
    ("check_exit_holding", "worker_lock"): ("exit-holding", None),
    ("check_exit_holding", "main_lock"): ("exit-holding", None),
    ("check_uninit", "lock_uninit"): ("invalid-object", None),
    ("check_uninit", "lock_destroyed"): ("invalid-object", "EINVAL"),
}

# Report class -> the expected classes it credits (see the docstring).
CREDITS = {
    "lock-order": {"lock-order", "deadlock"},
    "relock": {"deadlock", "error:EDEADLK"},
}


@dataclass
class Finding:
    """One expected finding of a program."""

    kind: str
    cls: str
    label: str  # what the table shows: kind, or kind(errno/class)
    fail_errno: str = None  # the errno the misused call returns, for "related" reports


@dataclass
class Report:
    """One report a tool printed."""

    headline: str
    call: str = ""  # the pthread call of the first stack frame, when known
    cls: str = None
    after_kill: bool = False
    fate: str = "false"  # found:LABEL, duplicate, related, kill artefact, false


@dataclass
class Run:
    """One run of one program under one tool."""

    status: str  # exit status, "killed" or "build failed" / "n/a"
    wall: float = 0.0
    cpu: float = 0.0
    killed: bool = False
    reports: list = field(default_factory=list)
    found: int = 0
    false: int = 0


# ---------------------------------------------------------------------------------------------
# Running


def run_timed(cmd, timeout, env=None, cwd=None):
    """Runs cmd; returns (returncode or None if killed, stdout, stderr, wall s, cpu s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=cwd, start_new_session=True, text=True, errors="replace")
    killed = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        killed = True
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=3)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return (None if killed else proc.returncode), out, err, wall, cpu


def new_run(rc, wall, cpu):
    """A Run from run_timed's results."""
    return Run(status="killed" if rc is None else str(rc), wall=wall, cpu=cpu,
               killed=rc is None)


def build_tsan(prog, outdir):
    """Builds the TSan variant of prog; returns its path, or None when the build fails."""
    exe = os.path.join(outdir, prog)
    cmd = ["gcc", "-std=gnu17", "-D_GNU_SOURCE", "-fsanitize=thread", "-g", "-O1", "-pthread",
           "-I", os.path.join(ROOT, "tests", "progs"), "-o", exe,
           os.path.join(CORPUS, prog + ".c")]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        return None
    return exe


def ptt_has_check(ptt):
    """Whether this ptt has a check command."""
    if not os.access(ptt, os.X_OK):
        return False
    res = subprocess.run([ptt, "check", "--help"], capture_output=True, text=True)
    return res.returncode == 0


# ---------------------------------------------------------------------------------------------
# Reading the tools' messages


def errno_name(code):
    """The symbolic name of an errno value ("E130" when unknown)."""
    return errno.errorcode.get(code, "E%d" % code)


INVALID = re.compile(r"invalid lock|is not a mutex|invalid mutex|use of an invalid mutex")
CLASS_PATTERNS = [  # (regex on the headline, class); the first that matches wins
    (re.compile(r"lock order .* violated|lock-order-inversion"), "lock-order"),
    (re.compile(r"Attempt to re-lock|Recursive locking not allowed|double lock"), "relock"),
    (re.compile(r"cond_\{timed\}wait called with"),
     "cond-wait-unheld"),
    (re.compile(r"associated with a different mutex|Inconsistent association"),
     "cond-two-mutexes"),
    (re.compile(r"not-locked lock|currently held by thread|Mutex not locked|"
                r"unlock of an unlocked mutex"), "unlock-not-held"),
    (re.compile(r"destroy of a locked mutex|_destroy of a locked|Destroying locked|"
                r"being waited upon|waiting at barrier|destroy.*(in use|busy)"),
     "destroy-busy"),
    (re.compile(r"Exiting thread still holds|still locked at thread exit"), "exit-holding"),
]


def classify(rep):
    """Sets rep.cls from its headline and the call it points at."""
    head, call = rep.headline, rep.call
    m = re.search(r"call to \w+ failed with error code (\d+)(?: \((E[A-Z]+):)?", head)
    if m:
        name = m.group(2) or errno_name(int(m.group(1)))
        rep.cls = "failed:" + ("EDEADLK" if name == "EDEADLOCK" else name)
        return
    if "data race" in head and call.endswith("_destroy"):
        rep.cls = "destroy-busy"
        return
    invalid = INVALID.search(head) or "unlock of an unlocked mutex" in head
    if invalid and re.match(r"pthread_cond_(timed|clock)?wait", call):
        rep.cls = "cond-wait-unheld"
        return
    for pattern, cls in CLASS_PATTERNS:
        if pattern.search(head):
            rep.cls = cls
            return
    if INVALID.search(head):
        unlock = call.endswith("unlock") or "unlocked" in head
        rep.cls = "unlock-not-held" if unlock else "invalid-object"


def strip_vg(text):
    """valgrind's lines without their ==PID== prefix."""
    return [re.sub(r"^==\d+== ?", "", line) for line in text.splitlines()]


FRAME = re.compile(r"\s+(?:at|by) 0x[0-9A-Fa-f]+: ([\w.?@*]+)|\s+#\d+ ([\w.]+)")


def stack_call(lines, start):
    """The pthread call a report points at: the first pthread_* function (else the first named
    one) of the stack that follows the headline at lines[start - 1]."""
    i = start
    while i < len(lines) and i < start + 3 and not FRAME.match(lines[i]):
        i += 1  # a continuation line or a blank line before the stack
    names = []
    while i < len(lines) and FRAME.match(lines[i]):
        m = FRAME.match(lines[i])
        names.append((m.group(1) or m.group(2)).split("@")[0])
        i += 1
    named = [n for n in names if n != "???"]
    return next((n for n in named if n.startswith("pthread_")), named[0] if named else "")


def parse_helgrind(text):
    """Helgrind's reports: the first line after each separator of dashes."""
    lines, reports, killed = strip_vg(text), [], False
    for i, line in enumerate(lines):
        killed = killed or "Process terminating with default action" in line
        if not re.fullmatch(r"-{20,}", line):
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j >= len(lines):
            continue
        head = lines[j].strip()
        if lines[j + 1:j + 2] and "with error code" in lines[j + 1]:
            head += " " + lines[j + 1].strip()
        reports.append(Report(head, stack_call(lines, j + 1), after_kill=killed))
    return reports


DRD_NOT_HEAD = re.compile(r"was first observed at:|^Other segment|Allocation context|"
                          r"^Process terminating|^Thread \d+:$|^Address ")


def parse_drd(text):
    """DRD's reports: an unindented line followed by a stack, but for its context lines."""
    lines, reports, killed = strip_vg(text), [], False
    for i, line in enumerate(lines[:-1]):
        killed = killed or "Process terminating with default action" in line
        if not line or line[0].isspace() or DRD_NOT_HEAD.search(line):
            continue
        if re.match(r"\s+at 0x", lines[i + 1]):
            reports.append(Report(line.strip(), stack_call(lines, i + 1), after_kill=killed))
    return reports


def parse_tsan(text):
    """TSan's reports: its WARNING lines, the call being frame #0 of the first stack."""
    lines, reports = text.splitlines(), []
    for i, line in enumerate(lines):
        if not line.startswith("WARNING:"):
            continue
        head = re.sub(r" \(pid=\d+\)", "", line.strip())
        reports.append(Report(head, stack_call(lines, i + 1)))
    return reports


# ---------------------------------------------------------------------------------------------
# Comparing with expected.json


def expected_findings(prog, entry):
    """The Findings of a program's expected.json entry."""
    out = []
    for f in entry["findings"]:
        kind, marker = f["kind"], (f.get("lines") or [""])[0]
        if kind == "misuse":
            cls, fail = EXPECTED_CLASS.get((prog, marker), ("misuse", None))
            out.append(Finding(kind, cls, "misuse(%s)" % cls, fail))
        elif kind == "error":
            out.append(Finding(kind, "error:" + f["errno"], "error(%s)" % f["errno"]))
        else:
            out.append(Finding(kind, kind, kind))
    return out


def credits(rep_cls, finding):
    """Whether a report of class rep_cls finds this expected finding."""
    if rep_cls is None:
        return False
    if rep_cls in CREDITS:
        return finding.cls in CREDITS[rep_cls]
    if rep_cls.startswith("failed:"):
        return finding.cls == "error:" + rep_cls[len("failed:"):]
    return finding.kind == "misuse" and finding.cls == rep_cls


def judge(run, findings):
    """Pairs the run's reports with the expected findings; sets fates and counts."""
    paired = [False] * len(findings)
    for rep in run.reports:
        cands = [i for i, f in enumerate(findings) if credits(rep.cls, f)]
        free = [i for i in cands if not paired[i]]
        if free:
            paired[free[0]] = True
            rep.fate = "found " + findings[free[0]].label
        elif cands:
            rep.fate = "duplicate"
        elif is_related(rep, findings):
            rep.fate = "related"
        elif rep.cls == "exit-holding" and rep.after_kill:
            rep.fate = "kill artefact"
        else:
            rep.fate = "false"
    run.found = sum(paired)
    run.false = sum(1 for r in run.reports if r.fate == "false")


def is_related(rep, findings):
    """A report that points at an expected finding without saying what it is (docstring)."""
    if rep.cls and rep.cls.startswith("failed:"):
        err = rep.cls[len("failed:"):]
        return any(f.fail_errno == err for f in findings)
    if "too long mutex cycle" in rep.headline:
        return any(f.kind == "lock-order" for f in findings)
    return False


def judge_ptt(run, findings, reported_kinds):
    """ptt check names the kind itself: pairs kinds one to one."""
    free = list(findings)
    for kind in reported_kinds:
        match = next((f for f in free if f.kind == kind), None)
        rep = Report("ptt check: " + kind, cls=kind)
        if match:
            free.remove(match)
            rep.fate = "found " + match.label
        else:
            rep.fate = "false"
        run.reports.append(rep)
    run.found = len(findings) - len(free)
    run.false = sum(1 for r in run.reports if r.fate == "false")


# ---------------------------------------------------------------------------------------------
# One program under every tool


def run_native(exe, timeout):
    """The plain program."""
    rc, _, _, wall, cpu = run_timed([exe], timeout)
    return new_run(rc, wall, cpu)


def run_valgrind(tool, exe, timeout, parse):
    """The plain program under valgrind --tool=TOOL."""
    rc, _, err, wall, cpu = run_timed(["valgrind", "--tool=" + tool, exe], timeout)
    run = new_run(rc, wall, cpu)
    run.reports = parse(err)
    run.raw = err
    return run


def run_tsan(exe, timeout):
    """The TSan build of the program."""
    if exe is None:
        return Run(status="build failed")
    env = dict(os.environ, TSAN_OPTIONS=TSAN_OPTIONS)
    rc, _, err, wall, cpu = run_timed([exe], timeout, env=env)
    run = new_run(rc, wall, cpu)
    run.reports = parse_tsan(err)
    run.raw = err
    return run


def run_ptt(ptt, exe, hangs, timeout, workdir):
    """ptt trace, then ptt check --format=json; returns (Run, reported kinds)."""
    trace = os.path.join(workdir, os.path.basename(exe) + ".ptt")
    cmd = [ptt, "trace", "-o", trace]
    if hangs:
        cmd += ["--hang-timeout=0.5", "--kill-on-hang"]
    rc1, _, err1, wall1, cpu1 = run_timed(cmd + ["--", exe], timeout)
    rc2, out, err2, wall2, cpu2 = run_timed([ptt, "check", "--format=json", trace], timeout)
    run = Run(status="trace %s, check %s" % (rc1, rc2), wall=wall1 + wall2, cpu=cpu1 + cpu2,
              killed=rc1 is None)
    run.raw = err1 + err2 + out
    try:
        kinds = [f["kind"] for f in json.loads(out)["findings"]]
    except (ValueError, KeyError, TypeError):
        run.status += " (no JSON)"
        kinds = []
    return run, kinds


def measure(prog, entry, args, tsan_dir, have_ptt):
    """Every tool on one program: {tool: Run} (plus "native")."""
    exe = os.path.join(args.build, "tests", "progs", "check", prog)
    findings = expected_findings(prog, entry)
    runs = {"native": run_native(exe, args.timeout)}
    runs["helgrind"] = run_valgrind("helgrind", exe, args.timeout, parse_helgrind)
    runs["drd"] = run_valgrind("drd", exe, args.timeout, parse_drd)
    runs["tsan"] = run_tsan(build_tsan(prog, tsan_dir), args.timeout)
    for tool in ("helgrind", "drd", "tsan"):
        for rep in runs[tool].reports:
            classify(rep)
        judge(runs[tool], findings)
    if have_ptt:
        with tempfile.TemporaryDirectory() as tmp:
            runs["ptt"], kinds = run_ptt(args.ptt, exe, entry["hangs"], args.timeout, tmp)
        judge_ptt(runs["ptt"], findings, kinds)
    else:
        runs["ptt"] = Run(status="n/a")
    return findings, runs


# ---------------------------------------------------------------------------------------------
# The table


def secs(run):
    """A run's wall time as the table shows it."""
    return "%.2f s%s" % (run.wall, " (killed)" if run.killed else "")


def cell(run, findings):
    """One tool's cell for one program."""
    if run.status in ("n/a", "build failed"):
        return run.status
    if findings:
        n = len(findings)
        word = "found" if run.found == n else "missed" if run.found == 0 else "partly"
        text = "%s %d/%d" % (word, run.found, n)
    else:
        text = "clean" if run.false == 0 else ""
    if run.false:
        text += (" +" if text else "") + "%d false" % run.false
    return "%s · %s" % (text, secs(run))


def table(results, have_ptt):
    """The markdown table, with its totals row."""
    head = ["program", "expected", "native", "helgrind", "DRD", "TSan", "ptt check"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    tot = {t: [0, 0, 0.0, 0.0] for t in TOOLS + ("native",)}  # found, false, wall, cpu
    expected_total = 0
    for prog, findings, runs, hangs in results:
        expected_total += len(findings)
        exp = ", ".join(f.label for f in findings) or "none"
        if hangs:
            exp += " (hangs)"
        cells = [prog, exp, secs(runs["native"])]
        cells += [cell(runs[t], findings) for t in TOOLS]
        rows.append("| " + " | ".join(cells) + " |")
        for t in tot:
            r = runs[t]
            tot[t][0] += r.found
            tot[t][1] += r.false
            tot[t][2] += r.wall
            tot[t][3] += r.cpu
    total = ["**total**", "%d findings" % expected_total,
             "%.1f s (CPU %.2f s)" % (tot["native"][2], tot["native"][3])]
    for t in TOOLS:
        if t == "ptt" and not have_ptt:
            total.append("n/a")
            continue
        f, fa, wall, cpu = tot[t]
        total.append("**%d/%d** found, %d false · %.1f s (CPU %.1f s)"
                     % (f, expected_total, fa, wall, cpu))
    rows.append("| " + " | ".join(total) + " |")
    return "\n".join(rows) + "\n\n" + legend(results, have_ptt)


def legend(results, have_ptt):
    """How to read the cells, and the times of the programs that end (no timeout in them)."""
    ending = [runs for _, _, runs, hangs in results if not hangs]
    tools = ["native"] + [t for t in TOOLS if have_ptt or t != "ptt"]
    times = ", ".join("%s %.2f s" % (t, sum(r[t].wall for r in ending)) for t in tools)
    return ("A cell: found n/n (every expected finding reported), partly k/n, missed 0/n, or "
            "clean (an ok_ program with no report); +k false: reports that match no expected "
            "finding; then the wall time of the run, tool start-up included (killed: stopped at "
            "the timeout, so the time is the timeout's). Which report was counted as what is "
            "listed below the table.\n\nWall time of the %d programs that end by themselves: %s."
            % (len(ending), times))


def details(results):
    """Every report of every tool, with what it was counted as."""
    out = ["## Reports, as printed (first line) and as counted", ""]
    for prog, _, runs, _ in results:
        out.append("### " + prog)
        for tool in TOOLS:
            run = runs[tool]
            if run.status == "n/a":
                continue
            out.append("- %s (exit %s, %.2f s, CPU %.2f s): %s"
                       % (tool, run.status, run.wall, run.cpu,
                          "nothing" if not run.reports else "%d report(s)" % len(run.reports)))
            for rep in run.reports:
                where = " [in %s]" % rep.call if rep.call else ""
                out.append("  - %s — `%s`%s" % (rep.fate, rep.headline[:160], where))
        out.append("")
    return "\n".join(out)


def versions():
    """The tools' versions, one line each."""
    def first_line(cmd):
        try:
            res = subprocess.run(cmd, capture_output=True, text=True)
            return (res.stdout or res.stderr).splitlines()[0]
        except (OSError, IndexError):
            return "unavailable"
    return "valgrind: %s; gcc: %s" % (first_line(["valgrind", "--version"]),
                                      first_line(["gcc", "--version"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="CMake build dir")
    ap.add_argument("--out", help="markdown output (default BUILD/check_peers.md)")
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="seconds before a run is stopped (hanging programs)")
    ap.add_argument("--ptt", help="the ptt binary (default BUILD/bin/ptt)")
    ap.add_argument("--only", nargs="*", help="only these programs")
    args = ap.parse_args()
    args.out = args.out or os.path.join(args.build, "check_peers.md")
    args.ptt = args.ptt or os.path.join(args.build, "bin", "ptt")
    for tool in ("valgrind", "gcc"):
        if not shutil.which(tool):
            sys.exit("check_peers: %s not found" % tool)
    with open(os.path.join(CORPUS, "expected.json")) as f:
        expected = json.load(f)
    have_ptt = ptt_has_check(args.ptt)
    tsan_dir = os.path.join(args.build, "check_peers", "tsan")
    os.makedirs(tsan_dir, exist_ok=True)
    results = []
    for prog, entry in expected.items():
        if args.only and prog not in args.only:
            continue
        sys.stderr.write("check_peers: %s\n" % prog)
        findings, runs = measure(prog, entry, args, tsan_dir, have_ptt)
        results.append((prog, findings, runs, entry["hangs"]))
    text = "\n\n".join([
        "Tools: %s; TSAN_OPTIONS=%s; runs of hanging programs stopped after %g s."
        % (versions(), TSAN_OPTIONS, args.timeout),
        table(results, have_ptt), details(results)]) + "\n"
    sys.stdout.write(text)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
