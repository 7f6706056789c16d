#!/usr/bin/env python3
"""ptt against its peers: the cost of tracing the same pthread workloads, in one run.

Tools (each one's exact command line is printed in the output):
  native      the workload alone
  ptt         ptt trace -q -o FILE -- WORKLOAD
  ptt-stopped ptt trace -q --start-stopped -o FILE -- WORKLOAD (a session recording nothing)
  preload     LD_PRELOAD=BUILD/lib/libptt.so WORKLOAD, without a session
  lttng       LTTng-UST's liblttng-ust-pthread-wrapper.so preloaded, into a session with the
              lttng_ust_pthread:* events enabled (default channel), of a lttng-sessiond started
              here (--daemonize --no-kernel, LTTNG_HOME in a temporary directory) and stopped
              by its pid at the end. Events: babeltrace2's sink.utils.counter; lost: what
              `lttng stop` says was discarded.
  uftrace     uftrace record --force -F 'pthread_.*' -d DIR -- WORKLOAD: the pthread library
              calls (through the PLT), entry and exit (2 records per call), and uftrace's own
              scheduling events. Events: 2 x the calls `uftrace report` counts.
  eztrace     eztrace -t pthread -o DIR WORKLOAD (EZTrace 2.0's pthread module, OTF2 trace).
              Events: the event lines of otf2-print.
  strace      strace -f -qq -o FILE WORKLOAD: every system call of every thread (futex
              included). Events: the lines of FILE.
  drd         valgrind --tool=drd -q WORKLOAD, stopped after --drd-timeout seconds. No trace.
A run that lasts more than --timeout seconds (--drd-timeout for DRD) is stopped and shown as
"timed out"; the tool's later runs of that workload are skipped.

Workloads (bench/peers/workloads.c, built here with gcc -O2 -pthread; they count their own
pthread calls): startup (one lock/unlock pair: each tool's fixed cost, which the "net" figures
take out), uncontended lock/unlock with 1 and 4 threads, a contended lock with 2 and 4
threads, a condvar producer/consumer, create/join churn, and pigz -p 4 compressing a generated
file (its calls: the _IN events of ptt's first trace of it).

Method: --runs rounds (default 5); in each round every workload runs once under every tool,
tools in turn (the order rotated each round), so that slow and fast periods of the machine hit
all alike. The floor (../shared/bench/floor.c, built as is with gcc -O2 -pthread) runs once per
round too. A run's CPU time is that of all its processes: user + system of the process started
and all its descendants, ptt's guardian included (a cgroup per run, as root; else wait4, which
misses the guardian), plus for LTTng the CPU its lttng-sessiond and consumer daemons
used from the workload's start to the end of `lttng stop` (from /proc). Its wall time is the
process's. Shown: the median over the runs, with min..max.

Usage: bench/peers/run.py [--quick] [--runs N] [--build build] [--before BUILD] [--md FILE] [--json FILE]
                          [--tools a,b] [--workloads a,b] [--drd-timeout S (30)]
                          [--timeout S (60)] [--floor floor.c]
       bench/peers/run.py --render peers.json --md peers.md   (the Markdown of an earlier run)
"""

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "bench", "peers")
TOOLS = ("native", "ptt", "ptt-stopped", "preload", "lttng", "uftrace", "eztrace", "strace", "drd")
TICK = os.sysconf("SC_CLK_TCK")


class Skip(Exception):
    """A tool that cannot run here: its reason is shown in place of its figures."""


def sh(argv, **kw):
    """Runs a helper command (not measured); returns its stdout and stderr together."""
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", **kw)
    return r.returncode, r.stdout


def first_line(argv):
    try:
        return sh(argv)[1].strip().splitlines()[0]
    except (OSError, IndexError):
        return "not found"


def dir_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            p = os.path.join(d, f)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().strip()


# ---------------------------------------------------------------------------------------------
# Tools. Each has: name, version(), setup(tmp), prefix(rundir) -> (argv prefix, extra env),
# before_run(), after_run(rundir, stderr text) -> dict(events, bytes, lost), teardown().


class Tool:
    name = ""
    command = ""  # the command line shown, WORKLOAD standing for the workload's

    def version(self):
        return ""

    def setup(self, tmp):
        self.tmp = tmp

    def prefix(self, rundir):
        return [], {}

    def before_run(self):
        pass

    def daemon_cpu(self):
        """CPU seconds the tool's daemons used in the last run (0 for most tools)."""
        return 0.0

    def after_run(self, rundir, err):
        return {}

    def teardown(self):
        pass


class Native(Tool):
    name = "native"
    command = "WORKLOAD"


class Ptt(Tool):
    name = "ptt"
    extra = []

    def __init__(self, build):
        self.ptt = os.path.join(build, "bin", "ptt")
        self.command = " ".join(["ptt trace -q"] + self.extra + ["-o FILE -- WORKLOAD"])

    def version(self):
        if not os.access(self.ptt, os.X_OK):
            raise Skip(f"{self.ptt} not built")
        rc, out = sh(["git", "-C", ROOT, "describe", "--always", "--dirty"])
        return "ptt " + (out.strip() if rc == 0 else "?") + f" ({self.ptt})"

    def prefix(self, rundir):
        return [self.ptt, "trace", "-q"] + self.extra + ["-o", os.path.join(rundir, "t.ptt"),
                                                        "--"], {}

    def after_run(self, rundir, err):
        # ptt trace's last line: "ptt: wrote N events (B bytes) to FILE, L lost" (from END).
        m = re.search(r"wrote (\d+) events \((\d+) bytes\) to .*, (\d+) lost", err)
        if not m:
            return {"note": err.strip().splitlines()[-1:] or ["no summary line"]}
        return {"events": int(m.group(1)), "bytes": dir_bytes(os.path.join(rundir, "t.ptt")),
                "lost": int(m.group(3))}

    def calls(self, path):
        """The pthread calls of a trace: its _IN events (one per call), for pigz."""
        _, out = sh([self.ptt, "view", "--summary", path])
        return sum(int(n) for name, n in re.findall(r"^\s+(\w+_IN)\s+(\d+)$", out, re.M))


class PttStopped(Ptt):
    name = "ptt-stopped"
    extra = ["--start-stopped"]


class PttBefore(Ptt):
    """ptt trace of another build (--before=BUILD): the same run measures a change's before and
    after."""

    name = "ptt-before"

    def version(self):
        if not os.access(self.ptt, os.X_OK):
            raise Skip(f"{self.ptt} not built")
        src = "?"  # the build's source tree, from its CMake cache
        try:
            with open(os.path.join(os.path.dirname(os.path.dirname(self.ptt)),
                                   "CMakeCache.txt")) as f:
                m = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", f.read(), re.M)
                src = m.group(1) if m else "?"
        except OSError:
            pass
        rc, out = sh(["git", "-C", src, "describe", "--always", "--dirty"])
        return "ptt " + (out.strip() if rc == 0 else "?") + f" ({self.ptt})"


class Preload(Tool):
    name = "preload"

    def __init__(self, build):
        self.lib = os.path.join(build, "lib", "libptt.so")
        self.command = f"LD_PRELOAD={self.lib} WORKLOAD"

    def version(self):
        if not os.path.exists(self.lib):
            raise Skip(f"{self.lib} not built")
        return "libptt.so of the ptt above"

    def prefix(self, rundir):
        return [], {"LD_PRELOAD": self.lib}


class Lttng(Tool):
    name = "lttng"
    wrapper = "liblttng-ust-pthread-wrapper.so"
    command = ("lttng create S --output=DIR; lttng enable-event -u 'lttng_ust_pthread:*'; "
               "lttng start; LD_PRELOAD=liblttng-ust-pthread-wrapper.so WORKLOAD; lttng stop; "
               "lttng destroy S; babeltrace2 DIR -c sink.utils.counter")
    pid = None
    pidfile = None

    def version(self):
        for t in ("lttng", "lttng-sessiond", "babeltrace2"):
            if not shutil.which(t):
                raise Skip(f"{t} not installed (scripts/bench-deps)")
        _, out = sh(["ldconfig", "-p"])
        if self.wrapper not in out:
            raise Skip(f"{self.wrapper} not installed (liblttng-ust-dev)")
        return first_line(["lttng", "--version"]) + "; " + first_line(["babeltrace2", "--version"])

    def setup(self, tmp):
        self.tmp = tmp
        self.home = os.path.join(tmp, "lttng-home")
        os.makedirs(self.home)
        self.env = dict(os.environ, LTTNG_HOME=self.home)
        # As root, the session daemon's sockets are in /var/run/lttng whatever LTTNG_HOME says:
        # one root session daemon at a time.
        rundir = "/var/run/lttng" if os.geteuid() == 0 else os.path.join(self.home, ".lttng")
        self.pidfile = os.path.join(rundir, "lttng-sessiond.pid")
        if os.path.exists(self.pidfile) and self.alive(self.read_pid()):
            raise Skip(f"a session daemon is already running ({self.pidfile})")
        rc, out = sh(["lttng-sessiond", "--daemonize", "--no-kernel"], env=self.env)
        if rc != 0:
            raise Skip("lttng-sessiond: " + out.strip()[-200:])
        self.pid = self.read_pid()
        self.n = 0

    def read_pid(self):
        try:
            with open(self.pidfile) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return None

    @staticmethod
    def alive(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().split(") ")[1][0] != "Z"
        except (OSError, TypeError, IndexError):
            return False

    def tree_cpu(self):
        """CPU seconds of the session daemon and its descendants (consumer daemons)."""
        total, todo = 0, [self.pid]
        while todo:
            pid = todo.pop()
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(") ", 1)[1].split()
                total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as f:
                        todo += [int(c) for c in f.read().split()]
            except (OSError, IndexError):
                pass
        return total / TICK

    def lttng(self, *args):
        rc, out = sh(["lttng"] + list(args), env=self.env)
        if rc != 0:
            raise RuntimeError("lttng " + " ".join(args) + ": " + out.strip())
        return out

    def prefix(self, rundir):
        self.n += 1
        self.session = f"peers{self.n}"
        self.out = os.path.join(rundir, "lttng")
        self.lttng("create", self.session, f"--output={self.out}")
        self.lttng("enable-event", "-u", "lttng_ust_pthread:*", "-s", self.session)
        self.lttng("start", self.session)
        return [], {"LD_PRELOAD": self.wrapper, "LTTNG_HOME": self.home}

    def before_run(self):
        self.cpu0 = self.tree_cpu()

    def after_run(self, rundir, err):
        out = self.lttng("stop", self.session)
        self.cpu1 = self.tree_cpu()
        self.lttng("destroy", self.session)
        m = re.search(r"(\d+) events were discarded", out)
        lost, note = int(m.group(1)) if m else 0, None
        if lost >= 1 << 63:
            # lttng 2.13 sometimes says 2^63 + N, N being what the events missing match.
            lost -= 1 << 63
            note = "lttng stop said 2^63 + N events were discarded: N shown"
        _, cnt = sh(["babeltrace2", self.out, "-c", "sink.utils.counter"])
        ev = re.findall(r"(\d+) Event messages", cnt)
        r = {"events": int(ev[-1]) if ev else 0, "bytes": dir_bytes(self.out), "lost": lost}
        return dict(r, note=note) if note else r

    def daemon_cpu(self):
        return self.cpu1 - self.cpu0

    def teardown(self):
        if self.pid and self.alive(self.pid):
            os.kill(self.pid, signal.SIGTERM)
            for _ in range(50):
                if not self.alive(self.pid):
                    break
                time.sleep(0.1)
            else:
                os.kill(self.pid, signal.SIGKILL)
        self.pid = None


class Uftrace(Tool):
    name = "uftrace"
    command = "uftrace record --force -F 'pthread_.*' -d DIR WORKLOAD; uftrace report -d DIR"

    def version(self):
        if not shutil.which("uftrace"):
            raise Skip("uftrace not installed (scripts/bench-deps)")
        return first_line(["uftrace", "--version"])

    def prefix(self, rundir):
        self.dir = os.path.join(rundir, "uftrace.data")
        return ["uftrace", "record", "--force", "-F", "pthread_.*", "-d", self.dir], {}

    def after_run(self, rundir, err):
        _, out = sh(["uftrace", "report", "--no-pager", "-d", self.dir])
        calls = sum(int(n) for n in re.findall(r"^\s+\S+ \S+\s+\S+ \S+\s+(\d+)\s+\S", out, re.M))
        found = re.findall(r"(\d+) (?:records? )?lost|LOST (\d+)", err + out, re.I)
        lost = sum(int(a or b) for a, b in found)
        return {"events": 2 * calls, "bytes": dir_bytes(self.dir), "lost": lost}


class Eztrace(Tool):
    name = "eztrace"
    command = "eztrace -t pthread -o DIR WORKLOAD; otf2-print DIR/*.otf2"

    def version(self):
        for t in ("eztrace", "otf2-print"):
            if not shutil.which(t):
                raise Skip(f"{t} not installed (scripts/bench-deps)")
        _, out = sh(["dpkg-query", "-W", "-f=${Version}", "eztrace"])
        return "eztrace " + out.strip() + " (Debian); " + first_line(["otf2-print", "--version"])

    def prefix(self, rundir):
        self.dir = os.path.join(rundir, "eztrace")
        return ["eztrace", "-t", "pthread", "-o", self.dir], {}

    def after_run(self, rundir, err):
        anchors = [os.path.join(d, f) for d, _, fs in os.walk(self.dir) for f in fs
                   if f.endswith(".otf2")]
        if not anchors:
            return {"note": "no OTF2 trace"}
        p = subprocess.Popen(["otf2-print", anchors[0]], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, errors="replace")
        events = sum(1 for line in p.stdout if re.match(r"[A-Z_]+\s+\d+\s+\d+", line))
        p.wait()
        return {"events": events, "bytes": dir_bytes(self.dir), "lost": None}


class Strace(Tool):
    name = "strace"
    command = "strace -f -qq -o FILE WORKLOAD"

    def version(self):
        if not shutil.which("strace"):
            raise Skip("strace not installed")
        return first_line(["strace", "-V"])

    def prefix(self, rundir):
        self.file = os.path.join(rundir, "strace.txt")
        return ["strace", "-f", "-qq", "-o", self.file], {}

    def after_run(self, rundir, err):
        with open(self.file, "rb") as f:
            lines = sum(1 for _ in f)
        return {"events": lines, "bytes": dir_bytes(self.file), "lost": 0}


class Drd(Tool):
    name = "drd"
    command = "valgrind --tool=drd -q WORKLOAD"

    def version(self):
        if not shutil.which("valgrind"):
            raise Skip("valgrind not installed")
        return first_line(["valgrind", "--version"])

    def prefix(self, rundir):
        return ["valgrind", "--tool=drd", "-q"], {}


# ---------------------------------------------------------------------------------------------
# Workloads and runs.

SIZES = {  # full, quick
    # One lock/unlock pair: each tool's fixed cost (start-up, end), taken out of "net" below.
    "startup": (["uncontended", "1", "1"], ["uncontended", "1", "1"]),
    "uncontended-1": (["uncontended", "1", "500000"], ["uncontended", "1", "20000"]),
    "uncontended-4": (["uncontended", "4", "125000"], ["uncontended", "4", "5000"]),
    "contended-2": (["contended", "2", "100000"], ["contended", "2", "5000"]),
    "contended-4": (["contended", "4", "50000"], ["contended", "4", "2500"]),
    "condvar": (["condvar", "50000"], ["condvar", "2000"]),
    "churn": (["churn", "1000"], ["churn", "200"]),
    "pigz": (32, 2),  # MiB of input
}


def build(tmp, floor_src):
    wl = os.path.join(tmp, "workloads")
    fl = os.path.join(tmp, "floor")
    for src, out in ((os.path.join(HERE, "workloads.c"), wl), (floor_src, fl)):
        rc, msg = sh(["gcc", "-O2", "-pthread", src, "-o", out])
        if rc != 0:
            sys.exit(f"bench/peers: cannot build {src}: {msg.strip()}")
    return wl, fl


def make_input(path, mib):
    """Text of random words (compresses about 3:1): 1 MiB made once, written MIB times."""
    import random

    rnd = random.Random(1)
    words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9)))
             for _ in range(5000)]
    chunk = bytearray()
    while len(chunk) < 1 << 20:
        chunk += (" ".join(rnd.choice(words) for _ in range(16)) + "\n").encode()
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(chunk[: 1 << 20])


class CpuGroup:
    """A cgroup for one run, where it can be made (root, cgroup v1's cpuacct or v2): the CPU of
    every process of the run, those that outlive it (ptt's guardian, which ptt trace does not wait
    for, a grandchild) and those it does not wait for, until the last has ended. None of this is
    seen by wait4, the fallback."""

    ROOTS = (("/sys/fs/cgroup/cpuacct", "cpuacct.usage", 1e-9),
             ("/sys/fs/cgroup/unified", "cpu.stat", 1e-6),
             ("/sys/fs/cgroup", "cpu.stat", 1e-6))

    def __init__(self):
        self.path = self.usage = None
        for root, usage, unit in self.ROOTS:
            path = os.path.join(root, f"ptt-peers-{os.getpid()}")
            try:
                os.mkdir(path)
            except FileExistsError:
                pass
            except OSError:
                continue
            if os.path.exists(os.path.join(path, usage)):
                self.path, self.usage, self.unit = path, usage, unit
                return
            os.rmdir(path)

    def enter(self):
        """In the child, before exec."""
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def cpu(self, wait=10.0):
        """CPU seconds used in the group so far, once its processes are gone (at most wait s)."""
        end = time.monotonic() + wait
        while time.monotonic() < end:
            with open(os.path.join(self.path, "cgroup.procs")) as f:
                if not f.read().strip():
                    break
            time.sleep(0.01)
        with open(os.path.join(self.path, self.usage)) as f:
            text = f.read()
        m = re.search(r"usage_usec (\d+)", text) if self.usage == "cpu.stat" else None
        return (int(m.group(1)) if m else int(text.split()[0])) * self.unit

    def remove(self):
        if self.path:
            try:
                os.rmdir(self.path)
            except OSError:
                pass


class Runner:
    def __init__(self, timeout):
        self.timeout = timeout
        self.child = None
        self.group = CpuGroup()

    def run(self, argv, env, rundir, timeout):
        """Runs ARGV in its own process group: (wall s, CPU s, exit status or 'timed out', err)."""
        errpath = os.path.join(rundir, "stderr")
        with open(errpath, "w") as err:
            g = self.group if self.group.path else None
            cpu0 = g.cpu(0) if g else 0.0
            t0 = time.monotonic()
            self.child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err,
                                          stdin=subprocess.DEVNULL, start_new_session=True,
                                          preexec_fn=g.enter if g else None)
        fired = []

        def kill():
            fired.append(1)
            self.kill_child()

        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timer.start()
        try:
            _, status, ru = os.wait4(self.child.pid, 0)
        finally:
            timer.cancel()
        wall = time.monotonic() - t0
        self.child.returncode = os.waitstatus_to_exitcode(status)
        self.child = None
        with open(errpath, errors="replace") as f:
            text = f.read()
        code = "timed out" if fired else os.waitstatus_to_exitcode(status)
        cpu = g.cpu() - cpu0 if g else ru.ru_utime + ru.ru_stime
        return wall, cpu, code, text

    def kill_child(self):
        """Stops the running child's process group: SIGTERM, then SIGKILL 2 s later."""
        c = self.child
        if c is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(c.pid, sig)
            except ProcessLookupError:
                return
            for _ in range(20):
                time.sleep(0.1)
                if c.returncode is not None or not os.path.exists(f"/proc/{c.pid}"):
                    return
                try:  # reaps it when the main thread is not waiting for it (interrupted)
                    if threading.current_thread() is threading.main_thread() and \
                            os.waitpid(c.pid, os.WNOHANG)[0]:
                        return
                except ChildProcessError:
                    return


def med(xs):
    return statistics.median(xs) if xs else None


def spread(xs, fmt):
    if not xs:
        return "n/a"
    return f"{fmt(med(xs))} ({fmt(min(xs))}..{fmt(max(xs))})" if len(xs) > 1 else fmt(xs[0])


def startup_cost(results, tool):
    """The tool's fixed CPU cost: its median CPU on the startup workload less native's."""
    st = results.get("startup", {})
    t, n = st.get(tool, {}).get("cpu"), st.get("native", {}).get("cpu")
    return med(t) - med(n) if t and n else None


def summarise(results, calls, floor_ns):
    """Per workload and tool: medians, ratios to native, added CPU ns per call."""
    table = {}
    for wl, by_tool in results.items():
        nat = by_tool.get("native", {})
        nw, nc = med(nat.get("wall", [])), med(nat.get("cpu", []))
        for tool, r in by_tool.items():
            s = {"runs": len(r["wall"]), "timed_out": r["timed_out"], "status": r["status"]}
            if r["wall"]:
                w, c = med(r["wall"]), med(r["cpu"])
                s.update(wall=w, wall_min=min(r["wall"]), wall_max=max(r["wall"]), cpu=c,
                         cpu_min=min(r["cpu"]), cpu_max=max(r["cpu"]))
                if nw and nc:
                    s.update(wall_ratio=w / nw, cpu_ratio=c / nc)
                if nc is not None and calls.get(wl) and wl != "startup":
                    s["added_ns_per_call"] = (c - nc) / calls[wl] * 1e9
                    fixed = startup_cost(results, tool)
                    if fixed is not None and wl != "startup":
                        s["net_ns_per_call"] = (c - nc - fixed) / calls[wl] * 1e9
                        if floor_ns:
                            s["net_per_call_floors"] = s["net_ns_per_call"] / floor_ns
            ev = [e for e in r["events"] if e is not None]
            if ev:
                s["events"] = med(ev)
                bts = [b / e for b, e in zip(r["bytes"], r["events"]) if b is not None and e]
                s["bytes_per_event"] = med(bts) if bts else None
            lost = [x for x in r["lost"] if x is not None]
            s["lost"] = med(lost) if lost else None
            s["lost_max"] = max(lost) if lost else None
            s["notes"] = sorted(set(r["notes"]))
            table.setdefault(wl, {})[tool] = s
    return table


def fmt_num(x, nd=2):
    if x is None:
        return "n/a"
    if abs(x) >= 1e6:
        return f"{x / 1e6:.2f} M"
    if abs(x) >= 1e4:
        return f"{x / 1e3:.0f} k"
    return f"{x:.{nd}f}" if isinstance(x, float) and x != int(x) else f"{int(x)}"


def markdown(meta, table, calls, tools):
    out = ["# ptt and its peers (bench/peers/run.py)", ""]
    out.append(f"- Date: {meta['date']}; machine: {meta['machine']}")
    out.append(f"- Runs: {meta['runs']} per (workload, tool){' (--quick)' if meta['quick'] else ''}"
               f", tools in turn, order rotated each round; median (min..max) over the runs")
    out.append(f"- Load average before: `{meta['load_before']}`; after: `{meta['load_after']}`")
    f = meta["floor"]
    out.append(f"- Floor (floor.c, built as is, once per round): rdtsc + 16-byte store "
               f"{spread(f['event_ns'], lambda v: f'{v:.2f}')} ns/event; uncontended lock+unlock "
               f"{spread(f['pair_ns'], lambda v: f'{v:.2f}')} ns/pair")
    how = meta.get("cpu_method", "wait4: the process started and the descendants it waited for")
    out.append("- CPU: user + system of all the run's processes (the workload, the tracer and "
               "its helpers; for LTTng also lttng-sessiond and its consumer daemons), "
               f"counted by {how}")
    out += ["", "## Tools", "", "| tool | version | command |", "|---|---|---|"]
    for t in tools:
        v = meta["versions"].get(t, "")
        out.append(f"| {t} | {v} | `{meta['commands'].get(t, '')}` |")
    out += summary_table(table, tools)
    out += ["", f"Workloads (WORKLOAD above), built with {meta['versions']['workloads']}"
            + (f"; {meta['versions']['pigz']}" if "pigz" in meta["versions"] else "") + ":", ""]
    for wl, argv in meta["workloads"].items():
        out.append(f"- {wl}: `{' '.join(argv)}`, {fmt_num(calls.get(wl))} pthread calls")
    for wl, by_tool in table.items():
        out += ["", f"## {wl}", "",
                "| tool | wall s | wall x | CPU s | CPU x | CPU ns added/call | net ns/call "
                "| net x floor | events | bytes/event | lost |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for t in tools:
            s = by_tool.get(t)
            if s is None:
                continue
            if not s["runs"]:
                why = "; ".join(s["notes"]) or "not run"
                out.append(f"| {t} | {why} | | | | | | | | | |")
                continue
            lost = "n/r" if s["lost"] is None else fmt_num(s["lost"], 0)
            if s.get("lost_max") and s["lost_max"] != s["lost"]:
                lost += f" (max {fmt_num(s['lost_max'], 0)})"
            to = f", {s['timed_out']} timed out" if s["timed_out"] else ""
            out.append(
                f"| {t}{to} | {s['wall']:.3f} ({s['wall_min']:.3f}..{s['wall_max']:.3f}) "
                f"| {s.get('wall_ratio', 0):.2f} | {s['cpu']:.3f} "
                f"({s['cpu_min']:.3f}..{s['cpu_max']:.3f}) | {s.get('cpu_ratio', 0):.2f} "
                f"| {fmt_num(s.get('added_ns_per_call'), 1)} "
                f"| {fmt_num(s.get('net_ns_per_call'), 1)} "
                f"| {fmt_num(s.get('net_per_call_floors'), 1)} "
                f"| {fmt_num(s.get('events'), 0)} | {fmt_num(s.get('bytes_per_event'), 1)} "
                f"| {lost} |")
    notes = [(wl, t, s["notes"]) for wl, b in table.items() for t, s in b.items() if s["notes"]]
    if notes:
        out += ["", "Notes:", ""] + [f"- {wl}, {t}: {'; '.join(n)}" for wl, t, n in notes]
    out += ["", "wall x, CPU x: the median over the median of native. CPU ns added/call: "
            "(median CPU - native's median CPU) / the workload's pthread calls. net ns/call: the "
            "same less the tool's fixed cost (its added CPU on the startup workload, one "
            "lock/unlock pair); net x floor: that over the floor's ns/event (a call is 2 events "
            "for ptt, uftrace and EZTrace; for LTTng 2 for a lock, 1 for an unlock). events: as the tool counts them (see the "
            "commands); bytes/event: the trace on disk over them. n/a: nothing to count (no "
            "trace); n/r: the tool does not report lost events."]
    return "\n".join(out) + "\n"


def summary_table(table, tools):
    """Net CPU ns added per call, tools by workloads: the figure to compare at a glance."""
    wls = [w for w in table if w != "startup"]
    out = ["", "## Net CPU ns added per pthread call (median; see the tables below)", "",
           "| tool | fixed CPU ms | " + " | ".join(wls) + " |",
           "|---|---|" + "---|" * len(wls)]
    for t in tools:
        if t == "native":
            continue
        st = table.get("startup", {}).get(t, {})
        nat = table.get("startup", {}).get("native", {})
        fixed = f"{(st['cpu'] - nat['cpu']) * 1e3:.0f}" if "cpu" in st and "cpu" in nat else "n/a"
        cells = []
        for w in wls:
            s = table[w].get(t, {})
            cells.append("timed out" if s.get("timed_out") and not s.get("runs") else
                         fmt_num(s.get("net_ns_per_call"), 0) if "net_ns_per_call" in s else "n/a")
        out.append(f"| {t} | {fixed} | " + " | ".join(cells) + " |")
    return out


def parse_floor(out):
    ev = re.search(r"store event: ([\d.]+) ns", out)
    pair = re.search(r"lock\+unlock pair: ([\d.]+) ns", out)
    return (float(ev.group(1)) if ev else None, float(pair.group(1)) if pair else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 run each, small sizes")
    ap.add_argument("--runs", type=int, default=None, help="runs per (workload, tool); 5")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--md", default=os.path.join(ROOT, "bench", "results", "peers.md"))
    ap.add_argument("--json", default=None, help="default: the --md file with .json")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--before", metavar="BUILD", help="also ptt trace of this other build "
                    "(tool ptt-before, run beside ptt)")
    ap.add_argument("--workloads", default=",".join(SIZES))
    ap.add_argument("--floor", default=os.path.join(os.path.dirname(ROOT), "shared", "bench",
                                                    "floor.c"))
    ap.add_argument("--timeout", type=float, default=60, help="per run, seconds")
    ap.add_argument("--drd-timeout", type=float, default=30, help="per DRD run, seconds")
    ap.add_argument("--render", metavar="JSON", help="write the Markdown of an earlier run's "
                    "JSON to --md, measuring nothing")
    a = ap.parse_args()
    if a.render:
        with open(a.render) as f:
            d = json.load(f)
        tools = d["meta"].get("tools") or [t for t in d["meta"]["commands"]]
        with open(a.md, "w") as f:
            f.write(markdown(d["meta"], d["results"], d["calls"], tools))
        return 0
    runs = a.runs or (1 if a.quick else 5)
    if not os.path.exists(a.floor) and os.path.exists("/work/shared/bench/floor.c"):
        a.floor = "/work/shared/bench/floor.c"
    build_dir = os.path.abspath(a.build)
    all_tools = {"native": Native(), "ptt": Ptt(build_dir), "ptt-stopped": PttStopped(build_dir),
                 "preload": Preload(build_dir), "lttng": Lttng(), "uftrace": Uftrace(),
                 "eztrace": Eztrace(), "strace": Strace(), "drd": Drd()}
    names = [t for t in a.tools.split(",") if t]
    wls = [w for w in a.workloads.split(",") if w]
    if a.before:
        all_tools["ptt-before"] = PttBefore(os.path.abspath(a.before))
        if "ptt-before" not in names:
            names.insert(names.index("ptt") + 1 if "ptt" in names else len(names), "ptt-before")
    for n in names:
        if n not in all_tools:
            sys.exit(f"bench/peers: unknown tool {n} (tools: {', '.join(TOOLS)})")
    for w in wls:
        if w not in SIZES:
            sys.exit(f"bench/peers: unknown workload {w} (workloads: {', '.join(SIZES)})")
    if "native" not in names:
        names.insert(0, "native")

    tmp = tempfile.mkdtemp(prefix="ptt-peers-")
    runner = Runner(a.timeout)
    tools, skipped = [], {}

    def on_signal(signum, frame):
        raise KeyboardInterrupt

    # Set both: a job started in the background of a shell inherits SIGINT ignored.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        return measure(a, runs, names, wls, all_tools, tools, skipped, tmp, runner)
    except KeyboardInterrupt:
        print("bench/peers: interrupted; cleaning up", file=sys.stderr)
        return 130
    finally:
        runner.kill_child()
        runner.group.remove()
        for t in tools:
            try:
                t.teardown()
            except Exception as e:  # cleanup goes on whatever one tool says
                print(f"bench/peers: {t.name} teardown: {e}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)


def measure(a, runs, names, wls, all_tools, tools, skipped, tmp, runner):
    quick = 1 if a.quick else 0
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "quick": a.quick,
            "runs": runs, "load_before": loadavg(), "versions": {}, "commands": {},
            "workloads": {}, "floor": {"event_ns": [], "pair_ns": []}}
    meta["machine"] = f"{os.cpu_count()} CPUs, {cpu_model()}, Linux {platform.release()}"
    g = runner.group
    meta["cpu_method"] = (f"a cgroup per run ({os.path.dirname(g.path)}, {g.usage}): every process "
                          "of the run, ptt's guardian included, until the last has ended"
                          if g.path else
                          "wait4: the process started and the descendants it waited for "
                          "(not ptt's guardian)")
    wl_bin, floor_bin = build(tmp, a.floor)
    meta["floor_source"] = a.floor
    for n in names:
        t = all_tools[n]
        try:
            meta["versions"][n] = t.version()
            t.setup(tmp)
            tools.append(t)
        except Skip as e:
            skipped[n] = str(e)
            meta["versions"][n] = f"skipped: {e}"
        meta["commands"][n] = t.command
    gcc = first_line(["gcc", "--version"])
    meta["versions"]["workloads"] = f"{gcc}, -O2 -pthread"
    argvs = {}
    for w in wls:
        if w == "pigz":
            if not shutil.which("pigz"):
                skipped_wl = "pigz not installed"
                print(f"bench/peers: {skipped_wl}", file=sys.stderr)
                continue
            inp = os.path.join(tmp, "input.txt")
            make_input(inp, SIZES[w][quick])
            argvs[w] = ["pigz", "-p", "4", "-c", inp]
            meta["workloads"][w] = ["pigz", "-p", "4", "-c", f"INPUT({SIZES[w][quick]} MiB text)"]
            meta["versions"]["pigz"] = first_line(["pigz", "--version"])
        else:
            argvs[w] = [wl_bin] + SIZES[w][quick]
            meta["workloads"][w] = ["workloads"] + SIZES[w][quick]
    results = {w: {t.name: {"wall": [], "cpu": [], "events": [], "bytes": [], "lost": [],
                            "notes": [], "timed_out": 0, "status": []} for t in tools}
               for w in argvs}
    for w in argvs:
        for n, why in skipped.items():
            results[w][n] = {"wall": [], "cpu": [], "events": [], "bytes": [], "lost": [],
                             "notes": [why], "timed_out": 0, "status": []}
    calls = {}
    give_up = set()
    n = 0
    for rnd in range(runs):
        out = sh([floor_bin, "10000000"])[1]
        ev, pair = parse_floor(out)
        if ev:
            meta["floor"]["event_ns"].append(ev)
        if pair:
            meta["floor"]["pair_ns"].append(pair)
        for w, argv in argvs.items():
            order = tools[rnd % len(tools):] + tools[:rnd % len(tools)]
            for t in order:
                if (w, t.name) in give_up:
                    continue
                n += 1
                rundir = os.path.join(tmp, f"run{n}")
                os.makedirs(rundir)
                r = results[w][t.name]
                try:
                    one_run(a, t, w, argv, rundir, runner, r, calls, give_up)
                except RuntimeError as e:
                    r["notes"].append(str(e)[:200])
                shutil.rmtree(rundir, ignore_errors=True)
                print(f"bench/peers: round {rnd + 1}/{runs} {w:14} {t.name:12} "
                      f"{r['status'][-1] if r['status'] else ''}", file=sys.stderr, flush=True)
    meta["load_after"] = loadavg()
    floor_ns = med(meta["floor"]["event_ns"])
    table = summarise(results, calls, floor_ns)
    names_run = [t.name for t in tools] + list(skipped)
    meta["tools"] = [x for x in names if x in names_run]
    md = markdown(meta, table, calls, meta["tools"])
    os.makedirs(os.path.dirname(os.path.abspath(a.md)), exist_ok=True)
    with open(a.md, "w") as f:
        f.write(md)
    jpath = a.json or os.path.splitext(a.md)[0] + ".json"
    with open(jpath, "w") as f:
        json.dump({"meta": meta, "calls": calls, "results": table, "raw": results}, f, indent=1)
    sys.stdout.write(md)
    print(f"bench/peers: wrote {a.md} and {jpath}", file=sys.stderr)
    return 0


def one_run(a, t, w, argv, rundir, runner, r, calls, give_up):
    prefix, extra = t.prefix(rundir)
    env = dict(os.environ, **extra)
    callsfile = os.path.join(rundir, "calls")
    env["PEERS_CALLS"] = callsfile
    t.before_run()
    timeout = a.drd_timeout if t.name == "drd" else a.timeout
    wall, cpu, code, err = runner.run(prefix + argv, env, rundir, timeout)
    info = t.after_run(rundir, err)
    r["status"].append(code)
    if code == "timed out":
        r["timed_out"] += 1
        r["notes"].append(f"timed out after {timeout:g} s (later runs skipped)")
        give_up.add((w, t.name))
        return
    if code != 0:
        r["notes"].append(f"exit status {code}: {err.strip()[-160:]}")
        return
    r["wall"].append(wall)
    r["cpu"].append(cpu + t.daemon_cpu())
    for k in ("events", "bytes", "lost"):
        r[k].append(info.get(k))
    if "note" in info:
        r["notes"].append(str(info["note"]))
    if w not in calls and os.path.exists(callsfile):
        with open(callsfile) as f:
            calls[w] = int(f.read())
    if w == "pigz" and w not in calls and t.name == "ptt" and info.get("events"):
        calls[w] = t.calls(os.path.join(rundir, "t.ptt"))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
        return m.group(1).strip() if m else platform.machine()
    except OSError:
        return platform.machine()


if __name__ == "__main__":
    sys.exit(main())
