"""Helpers of the robustness tests (processes, crashes, hangs, live control, flight recorder,
sessions): a ptt trace that runs while the test watches the program's output and acts on it,
a reader of the trace file's INFO records, and event counts that stream ptt view's raw output
(traces of millions of events, too many for conftest.parse_raw's objects).
"""

import collections
import os
import queue
import re
import signal
import struct
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import MACHINE_EVENTS, PTT, RUN_FIELDS, SUMMARY_RE, TIMEOUT, prog, ptt_trace, \
    require_build

SESSION_RE = re.compile(r"^ptt: session (ptt-(\d+)-(\d+)) records into (.+)$")


class Live:
    """ptt trace OPTS -o PATH -- ARGV running in the background, its stdout and stderr read by
    threads, line by line, so that the test can wait for the program's progress lines."""

    def __init__(self, argv, path=None, opts=(), env=None, cwd=None, stdin=True, preexec=None,
                 tool=None):
        require_build()
        self.path = Path(path) if path else None
        cmd = [str(c) for c in (tool or [PTT, "trace"])]
        if path:
            cmd += ["-o", str(path)]
        self.cmd = cmd + [str(o) for o in opts] + ["--"] + [str(a) for a in argv]
        # A process group of its own: a test that fails midway ends all of it (kill_all), not
        # ptt trace alone, whose program would hang on with the test's pipes open.
        self.p = subprocess.Popen(self.cmd, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env, cwd=cwd, preexec_fn=preexec, start_new_session=True)
        self.pid = self.p.pid
        Live.started.append(self)
        self.out, self.err = [], []
        self._q = {"out": queue.Queue(), "err": queue.Queue()}
        self._threads = [threading.Thread(target=self._read, args=(f, lines, q), daemon=True)
                         for f, lines, q in ((self.p.stdout, self.out, self._q["out"]),
                                             (self.p.stderr, self.err, self._q["err"]))]
        for t in self._threads:
            t.start()
        self.session = None

    @staticmethod
    def _read(f, lines, q):
        for line in f:
            line = line.rstrip("\n")
            lines.append(line)
            q.put(line)
        q.put(None)

    def wait_line(self, pred, stream="out", timeout=TIMEOUT):
        """The first line (from now on) of stdout or stderr for which pred (a predicate, or a
        prefix) holds; fails the test when the stream ends or after timeout seconds."""
        test = pred if callable(pred) else (lambda s: s.startswith(pred))
        q, deadline = self._q[stream], time.monotonic() + timeout
        while True:
            try:
                line = q.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                pytest.fail(f"{self.cmd}: no {stream} line as expected in {timeout} s; "
                            f"stdout {self.out[-5:]}, stderr {self.err}")
            if line is None:
                q.put(None)
                pytest.fail(f"{self.cmd}: {stream} ended without the line expected; "
                            f"stdout {self.out[-5:]}, stderr {self.err}")
            if test(line):
                return line

    def value(self, key, timeout=TIMEOUT):
        """The value of the program's line "@key=value" or "key=value"."""
        line = self.wait_line(lambda s: s.split("=", 1)[0].lstrip("@") == key, timeout=timeout)
        return line.split("=", 1)[1]

    def wait_session(self, timeout=TIMEOUT):
        """The session name from ptt trace's first line."""
        m = SESSION_RE.match(self.wait_line(SESSION_RE.match, "err", timeout))
        self.session = m[1]
        return self.session

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def finish(self, rc, timeout=TIMEOUT):
        """Wait for ptt trace to end: check its exit status and its summary line (as
        conftest.ptt_trace does) and give (events, bytes, lost) of that line."""
        if self.p.stdin:
            self.p.stdin.close()
        try:
            got = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"{self.cmd} did not end in {timeout} s")
        for t in self._threads:
            t.join(timeout=timeout)
        assert got == rc, f"{self.cmd}: exit status {got}, expected {rc}; {self.err}"
        m = SUMMARY_RE.match(self.err[-1] if self.err else "")
        assert m, f"last stderr line of ptt trace is not its summary: {self.err}"
        assert m[3] == str(self.path)
        assert self.path.stat().st_size == int(m[2])
        return int(m[1]), int(m[2]), int(m[4])

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()

    started = []

    @classmethod
    def kill_all(cls):
        """At a test's end: whatever is left of each session's process group."""
        for live in cls.started:
            live.kill()
            try:
                os.killpg(live.pid, signal.SIGKILL)
            except OSError:
                pass
        cls.started.clear()


def read_info(path):
    """The key=value lines of every INFO record of a trace file (docs/format.md)."""
    info = {}
    with open(path, "rb") as f:
        head = f.read(16)
        assert head[:8] == b"PTTRACE\0", f"{path} is not a trace file"
        f.seek(struct.unpack_from("<I", head, 12)[0])
        while True:
            rec = f.read(8)
            if len(rec) < 8:
                break
            rtype, size = struct.unpack("<II", rec)
            assert size >= 8 and size % 8 == 0, f"{path}: bad record size {size}"
            body = f.read(size - 8)
            if rtype == 1:
                for line in body.rstrip(b"\0").decode().splitlines():
                    if not line:
                        continue  # the flight recorder's INFO has a blank line
                    key, sep, value = line.partition("=")
                    assert sep, f"{path}: malformed INFO line {line!r}"
                    info[key] = value
    return info


def raw_lines(path, extra=()):
    """ptt view --format=raw [EXTRA] PATH, streamed: yields (name, pid, tid, fields) for each
    event but the machine's (MODULE_LOAD), without the site fields (as conftest.parse_raw);
    ptt view must end with status 0, no stderr."""
    p = subprocess.Popen([str(PTT), "view", "--format=raw", *extra, str(path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stdout:
        rest = line[line.index(":") + 1:].rstrip("\n")
        parts = rest.split(" : ")
        if parts[0] in MACHINE_EVENTS:
            continue
        fields = parts[3:]
        if parts[0] in RUN_FIELDS:
            fields = [f for i, f in enumerate(fields) if i not in RUN_FIELDS[parts[0]]]
        yield parts[0], int(parts[1]), int(parts[2]), fields
    err = p.stderr.read()
    assert p.wait() == 0 and err == "", f"ptt view {path}: status {p.returncode}, {err}"


def counts_by_tid(path):
    """Counter of (event name, tid) over the whole trace (streamed)."""
    c = collections.Counter()
    for name, _pid, tid, _f in raw_lines(path):
        c[name, tid] += 1
    return c


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_until(cond, timeout=TIMEOUT, what="condition"):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not reached in {timeout} s")
        time.sleep(0.01)


def ctl(*args, env=None, preexec=None):
    """ptt ctl ARGS: CompletedProcess."""
    return subprocess.run([str(PTT), "ctl", *[str(a) for a in args]], capture_output=True,
                          text=True, timeout=TIMEOUT, env=env, preexec_fn=preexec)


def ctl_ok(*args, env=None):
    p = ctl(*args, env=env)
    assert p.returncode == 0 and p.stderr == "", f"ptt ctl {args}: {p.returncode} {p.stderr}"
    return p.stdout


def status_fields(text):
    """The lines of ptt ctl SESSION status: {field: value}."""
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        out[key] = value
    return out



def session_pools(session):
    """The pools in /dev/shm of session ptt-UID-PID: its name has a random part,
    /dev/shm/ptt-UID-PID-RAND (docs/security.md)."""
    import glob
    return glob.glob(f"/dev/shm/{session}-*") + glob.glob(f"/dev/shm/{session}")


DEADLOCK_REPORT = "ptt: hang: deadlock in pid "


def abba_gone_quiet(tmp_path, opts, rc, tries=3):
    """ptt trace OPTS -- abba, whose hang is reported as the program gone quiet: abba's main
    enters its join once its two threads are blocked, and a machine so loaded that the join
    comes a whole timeout later sees the deadlock report first (right too, docs/trace.md), a
    report the tests of the quiet one do not expect: that run is made again."""
    for k in range(tries):
        t = ptt_trace(tmp_path, [prog("abba")], opts=opts, rc=rc, name=f"t{k}.ptt")
        if DEADLOCK_REPORT not in t.stderr:
            return t
    pytest.fail(f"abba was reported as a deadlock {tries} times, never as gone quiet")
