#!/usr/bin/env python3
"""The cost per call of tracing a running program, beside ltrace -p and uprobes, in one run.

The program is tests/progs/attach_loop: two threads lock and unlock one mutex, counting their
lock calls, only between a "go" and a "pause" on its stdin. Every tool runs it for the same
fixed time (--seconds), tools in turn, the order rotated each round (--rounds), so that slow and
fast periods of the machine hit all alike:

  native     the program alone
  preload    ptt trace -o FILE -- PROGRAM (libptt preloaded from the start)
  attached   the program alone, then ptt trace -p PID -o FILE; SIGINT after the pause
  detached   the program after ptt trace -p attached to it for 0.5 s of its loop and detached:
             what the rest of its run costs (to compare with native)
  ltrace     ltrace -p PID -f -e pthread_mutex_lock+pthread_mutex_unlock -o FILE; SIGINT after
  uprobe     perf probe -x LIBC pthread_mutex_lock and pthread_mutex_unlock (two uprobes), then
             perf record --no-buildid -e both -p PID -o FILE: every hit recorded; SIGINT after
  uprobe-count  the same uprobes counted, not recorded: perf stat -e both -p PID
The uprobes need perf and tracefs (mounted at /sys/kernel/tracing here if it is not), and are
removed at the end; where they cannot be set (no perf, no tracefs, not allowed),
the output says why, and gives no figure for them.

A call is one lock and its unlock (one iteration of the loop; ptt records four events for it).
CPU is user + system time of every process involved (/proc/PID/stat): the program's from the
go to the pause, plus the tracer's from the go to its end (read while it is a zombie, before it
is reaped: its detach and the end of its writing included). Shown: the median over the rounds
of calls per second and CPU ns per call, and the CPU added per call: the tool's median minus
native's.

Usage: bench/attach/run.py [--build build] [--seconds 2] [--rounds 3] [--tools a,b]
                           [--md FILE]
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TICK = os.sysconf("SC_CLK_TCK")
TOOLS = ("native", "preload", "attached", "detached", "ltrace", "uprobe", "uprobe-count")
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
PROBES = ("pthread_mutex_lock", "pthread_mutex_unlock")
PROBE_EVENTS = ",".join(f"probe_libc:{p}" for p in PROBES)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def cpu_ns(pid):
    """User + system time of a process (all its threads, those ended included), in ns."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 10**9 // TICK


def zombie_cpu_ns(p, timeout=120):
    """Waits for a child to end, reads its CPU time while it is a zombie, then reaps it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{p.pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    else:
        p.kill()
    ns = cpu_ns(p.pid)
    p.wait()
    return ns


class Program:
    """attach_loop, or a command that runs it (ptt trace --), driven through its stdin."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.pid = int(self.value("pid"))
        self.value("ready")

    def value(self, key):
        for line in self.p.stdout:
            k, _, v = line.strip().partition("=")
            if k.lstrip("@") == key:
                return v
        raise RuntimeError(f"no {key}= line from the program: {self.p.stderr.read()}")

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def quit(self, reap=True):
        self.send("quit")
        ok = self.value("ok")
        self.p.stdin.close()
        if reap:
            self.p.wait(timeout=120)
        if ok != "1":
            raise RuntimeError("the program's result is wrong")


def wait_traced(pid, timeout=30):
    """Until every thread of pid has a tracer (ltrace attaches them one by one)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tracers = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                tracers += [int(line.split()[1]) for line in f if line.startswith("TracerPid:")]
        if tracers and all(tracers):
            return
        time.sleep(0.05)
    raise RuntimeError("the tracer did not attach")


def attach_detach(ptt, pid, program, out):
    """ptt trace -p on the program for 0.5 s of its loop, then its detach (SIGINT), waited for."""
    tracer = subprocess.Popen([ptt, "trace", "-p", str(pid), "-o", out],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = tracer.stderr.readline()
    if " attached to process " not in line:
        raise RuntimeError(f"ptt trace -p: {line}{tracer.stderr.read()}")
    program.send("go")
    program.value("going")
    time.sleep(0.5)
    program.send("pause")
    program.value("locks")
    tracer.send_signal(signal.SIGINT)
    rest = tracer.communicate(timeout=60)[1]
    if tracer.returncode != 0 or "detached from process" not in rest:
        raise RuntimeError(f"ptt trace -p did not detach: {rest}")


def run_one(tool, a, tmp):
    """One run of a tool: (calls, seconds, cpu ns)."""
    prog = os.path.join(a.build, "tests", "progs", "attach_loop")
    ptt = os.path.join(a.build, "bin", "ptt")
    out = os.path.join(tmp, f"{tool}.out")
    tracer = None
    if tool == "preload":
        program = Program([ptt, "trace", "-q", "-o", out, "--", prog])
        tracer = program.p
    else:
        program = Program([prog])
    pid = program.pid
    if tool == "attached":
        tracer = subprocess.Popen([ptt, "trace", "-p", str(pid), "-o", out],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = tracer.stderr.readline()
        if " attached to process " not in line:
            raise RuntimeError(f"ptt trace -p: {line}{tracer.stderr.read()}")
    elif tool == "detached":
        attach_detach(ptt, pid, program, out)
    elif tool == "ltrace":
        tracer = subprocess.Popen(["ltrace", "-p", str(pid), "-f", "-e",
                                   "+".join(PROBES), "-o", out], stderr=subprocess.DEVNULL)
        wait_traced(pid)
        time.sleep(0.5)  # its breakpoints set
    elif tool == "uprobe":
        tracer = subprocess.Popen(["perf", "record", "-q", "--no-buildid", "-e", PROBE_EVENTS,
                                   "-p", str(pid), "-o", out], stderr=subprocess.DEVNULL)
        time.sleep(1)
    elif tool == "uprobe-count":
        tracer = subprocess.Popen(["perf", "stat", "-x,", "-o", out, "-e", PROBE_EVENTS, "-p",
                                   str(pid)], stderr=subprocess.DEVNULL)
        time.sleep(1)
    c0 = cpu_ns(pid) + (cpu_ns(tracer.pid) if tracer else 0)
    program.send("go")
    program.value("going")
    t0 = time.monotonic()
    time.sleep(a.seconds)
    program.send("pause")
    calls = int(program.value("locks"))
    t1 = time.monotonic()
    cpu = cpu_ns(pid)
    if tool == "preload":
        program.quit(reap=False)  # ptt trace, its parent, ends then
        cpu += zombie_cpu_ns(tracer)
    else:
        if tracer:
            tracer.send_signal(signal.SIGINT)
            cpu += zombie_cpu_ns(tracer)
        program.quit()
    if tool == "uprobe-count":
        with open(out) as f:
            hits = sum(int(line.split(",")[0]) for line in f if "probe_libc:" in line)
        if hits < 2 * calls:
            raise RuntimeError(f"perf stat counted {hits} hits for {calls} calls")
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    return calls, t1 - t0, cpu - c0


def uprobes_possible():
    """None when the uprobes are set; else why not."""
    if not shutil.which("perf"):
        return "perf is not installed (linux-perf)"
    if not os.path.exists("/sys/kernel/tracing/uprobe_events"):
        subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"],
                       capture_output=True)
    if not os.path.exists("/sys/kernel/tracing/uprobe_events"):
        return "no tracefs with uprobe_events at /sys/kernel/tracing (mounting it failed)"
    for probe in PROBES:
        p = subprocess.run(["perf", "probe", "-q", "-x", LIBC, probe], capture_output=True,
                           text=True)
        if p.returncode:
            return f"perf probe -x {LIBC} {probe}: {p.stderr.strip().splitlines()[-1:]}"
    return None


def remove_uprobes():
    subprocess.run(["perf", "probe", "-q", "-d", "probe_libc:*"], capture_output=True)


def commands(a):
    prog = os.path.join(a.build, "tests", "progs", "attach_loop")
    ptt = os.path.join(a.build, "bin", "ptt")
    return {
        "native": prog,
        "preload": f"{ptt} trace -q -o FILE -- {prog}",
        "attached": f"{ptt} trace -p PID -o FILE",
        "detached": f"{prog}, after {ptt} trace -p PID -o FILE for 0.5 s and its detach",
        "ltrace": f"ltrace -p PID -f -e {'+'.join(PROBES)} -o FILE",
        "uprobe": f"perf probe -x {LIBC} pthread_mutex_lock (and _unlock); "
                  f"perf record --no-buildid -e {PROBE_EVENTS} -p PID -o FILE",
        "uprobe-count": f"perf stat -e {PROBE_EVENTS} -p PID",
    }


def report(a, runs, skipped, meta):
    cmds = commands(a)
    out = [f"Date: {meta['date']}; machine: {meta['machine']}; load average before "
           f"{meta['load_before']}, after {meta['load_after']}",
           f"Command: {meta['command']}",
           f"Each run: {a.seconds} s of the loop; median of {a.rounds} rounds (min..max).", "",
           "| tool | calls/s | CPU ns per call | added per call | command |",
           "|---|---:|---:|---:|---|"]
    native = None
    for tool in a.tools:
        if tool in skipped:
            out.append(f"| {tool} | not measured: {skipped[tool]} | | | |")
            continue
        rs = runs[tool]
        rate = [c / s for c, s, _ in rs]
        per = [cpu / c for c, _, cpu in rs]
        m = statistics.median(per)
        if tool == "native":
            native = m
        added = f"{m - native:,.0f}" if native is not None and tool != "native" else ""
        out.append(f"| {tool} | {statistics.median(rate):,.0f} ({min(rate):,.0f}.."
                   f"{max(rate):,.0f}) | {m:,.0f} ({min(per):,.0f}..{max(per):,.0f}) | {added} "
                   f"| `{cmds[tool]}` |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--md", help="also write the table to this file")
    a = ap.parse_args()
    a.tools = a.tools.split(",")
    skipped = {}
    if "ltrace" in a.tools and not shutil.which("ltrace"):
        skipped["ltrace"] = "ltrace is not installed (scripts/bench-deps)"
    uprobe_tools = [t for t in a.tools if t.startswith("uprobe")]
    if uprobe_tools:
        why = uprobes_possible()
        if why:
            skipped.update({t: f"uprobes are not possible here: {why}" for t in uprobe_tools})
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{os.cpu_count()} CPUs, {os.uname().sysname} {os.uname().release}",
            "load_before": loadavg(), "command": " ".join(sys.argv)}
    runs = {t: [] for t in a.tools}
    order = [t for t in a.tools if t not in skipped]
    try:
        with tempfile.TemporaryDirectory(prefix="ptt-bench-attach-") as tmp:
            for r in range(a.rounds):
                for tool in order[r % len(order):] + order[:r % len(order)]:
                    calls, secs, cpu = run_one(tool, a, tmp)
                    runs[tool].append((calls, secs, cpu))
                    print(f"round {r + 1} {tool}: {calls} calls in {secs:.2f} s, "
                          f"{cpu / calls:.0f} CPU ns per call", file=sys.stderr, flush=True)
    finally:
        if uprobe_tools and not any(t in skipped for t in uprobe_tools):
            remove_uprobes()
    meta["load_after"] = loadavg()
    text = report(a, runs, skipped, meta)
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
