"""Long runs: ptt trace --max-size=SIZE [--max-files=N] (docs/trace.md, "Long runs: rotation").
The trace is written into the parts FILE.1, FILE.2, ..., each a whole trace of at most SIZE plus
one sub-buffer and 104 bytes; every reader given FILE reads the parts as one trace: the same
events as a trace of one file; with --max-files only the last N parts are kept, and the carried
state at the start of each part still names the threads, objects and lines."""

import collections
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (ATTACKER, PTT, SOURCE, SUMMARY_RE, TIMEOUT, VICTIM, parse_raw, prog,
                      require_build, run, sticky_dir, summary_counts)

SUBBUFFER = 32 << 10  # ptt trace's default --subbuffer
SIZE = 4 * SUBBUFFER  # the smallest --max-size: four sub-buffers
BOUND = SIZE + SUBBUFFER + 104  # a part's largest size (docs/trace.md)
CHUNK_DAEMON, CHUNK_CARRY = 1, 2


def read_part(path):
    """The records of a trace file: its INFO keys, its chunks (pid, tid, serial, seq, nevents,
    flags, offset, size), its END record's events (None without one)."""
    data = path.read_bytes()
    magic, major, minor, off = struct.unpack_from("<8sHHI", data, 0)
    assert (magic, major, minor) == (b"PTTRACE\0", 2, 2)
    info, chunks, end = {}, [], None
    while off < len(data):
        rtype, size = struct.unpack_from("<II", data, off)
        assert size >= 8 and off + size <= len(data), f"{path}: bad record at {off}"
        if rtype == 1:
            for line in data[off + 8:off + size].rstrip(b"\0").decode().splitlines():
                key, _, value = line.partition("=")
                info.setdefault(key, value)
        elif rtype == 3:
            chunks.append(struct.unpack_from("<iiII", data, off + 8) +
                          struct.unpack_from("<II", data, off + 32) + (off, size))
        elif rtype == 4:
            end = struct.unpack_from("<Q", data, off + 8)[0]
        off += size
    return info, chunks, end


def parts_of(base):
    """FILE.N next to base, by N."""
    found = [p for p in base.parent.iterdir() if re.fullmatch(re.escape(base.name) + r"\.[1-9]\d*",
                                                              p.name)]
    return sorted(found, key=lambda p: int(p.name.rsplit(".", 1)[1]))


def events_in(chunks, carried):
    """The events of chunks: the program's (not carried), or the carried ones."""
    return sum(c[4] for c in chunks if bool(c[5] & CHUNK_CARRY) == carried)


def trace(tmp_path, argv, opts=(), name="t.ptt", rc=0):
    """ptt trace -o tmp_path/name OPTS -- ARGV: (the process, the summary line's match)."""
    require_build()
    p = run([PTT, "trace", "-q", "-o", tmp_path / name, *opts, "--", *argv], cwd=tmp_path)
    assert p.returncode == rc, p.stderr
    m = SUMMARY_RE.match(p.stderr.splitlines()[-1])
    assert m, p.stderr
    return p, m


def counts(path):
    """ptt view --summary's counts per event name (its stderr may hold the notice of missing
    parts)."""
    out = read("--summary", path).stdout
    return collections.Counter({m[1]: int(m[2])
                                for m in re.finditer(r"^  (\w+) +(\d+)$", out, re.M)})


def recorded(path):
    """The events ptt view reads in path, but those it makes up: the calls a thread had not left
    where the file ends (TRACE_UNFINISHED)."""
    c = counts(path)
    return sum(c.values()) - c["TRACE_UNFINISHED"] - c["THREAD_CANCELLED"]


def read(*args, rc=0):
    """ptt view ARGS (stderr may hold the notice of missing parts)."""
    p = run([PTT, "view", *args])
    assert p.returncode == rc, p.stderr
    return p


@pytest.fixture(scope="module")
def flood(tmp_path_factory):
    """flood 4 20000 traced twice: into one file, and rotated into parts of 128K."""
    d = tmp_path_factory.mktemp("flood")
    argv = [prog("flood"), 4, 20000]
    _, one = trace(d, argv, name="one.ptt")
    _, rot = trace(d, argv, opts=[f"--max-size={SIZE}"], name="rot.ptt")
    return d, one, rot


def test_parts_whole_and_bounded(flood):
    d, _, rot = flood
    base = d / "rot.ptt"
    parts = parts_of(base)
    assert len(parts) >= 10 and not base.exists()
    assert rot[3] == f"{base}.1 to {parts[-1]}"
    assert int(rot[2]) == sum(p.stat().st_size for p in parts)
    sets = set()
    for k, p in enumerate(parts, 1):
        assert p.name == f"rot.ptt.{k}"
        assert p.stat().st_size <= BOUND, f"{p}: {p.stat().st_size} bytes"
        assert p.stat().st_mode & 0o777 == 0o600
        info, chunks, end = read_part(p)
        assert info["part"] == str(k) and info["max_size"] == str(SIZE)
        assert info["max_files"] == "0" and info["command"].endswith("flood 4 20000")
        sets.add(info["set"])
        assert ("next_part" in info) == (k < len(parts)) and (end is not None) == (k == len(parts))
        if k == 1:  # the carried state begins the parts after the first
            assert events_in(chunks, True) == 0
        # each part reads alone, a whole trace
        head = summary_counts(p)[1]
        assert head["parts"].startswith(f"{k} of set {info['set']}")
        assert head.get("end", "") == ("" if k == len(parts) else "in a later part (not read)")
    assert len(sets) == 1


def test_set_is_the_trace(flood):
    """The set read as one trace: exactly the events of the trace of one file. But for ptt's own
    waits for a free sub-buffer (TRACE_BUFFER_WAIT), which the machine's load decides: two CI
    runs under the sanitizers had 2 in one of the two traces."""
    d, one, rot = flood
    c1, c2 = counts(d / "one.ptt"), counts(d / "rot.ptt")
    waits1, waits2 = c1.pop("TRACE_BUFFER_WAIT", 0), c2.pop("TRACE_BUFFER_WAIT", 0)
    assert int(one[1]) - waits1 == int(rot[1]) - waits2  # events written
    assert c1 == c2 and c1["MUTEX_LOCK_IN"] == 80000
    head = summary_counts(d / "rot.ptt")[1]
    assert head["parts"] == f"1-{len(parts_of(d / 'rot.ptt'))} of set {read_part(d / 'rot.ptt.1')[0]['set']}"
    # per thread, the same events in the same order (times and addresses left out)
    def by_thread(path):
        ev = [e for e in parse_raw(read("--format=raw", path).stdout)
              if e.name != "TRACE_BUFFER_WAIT"]
        tids = sorted({e.tid for e in ev})
        return sorted(tuple(e.name for e in ev if e.tid == t) for t in tids)
    assert by_thread(d / "one.ptt") == by_thread(d / "rot.ptt")

    def stat(path, waits):
        p = run([PTT, "stat", "--format=json", path])
        assert p.returncode == 0, p.stderr
        s = json.loads(p.stdout)
        return s["events"] - waits, sorted((o["kind"], o["name"], o["acquisitions"],
                                            o["contended"], o["wait_ns"]["count"],
                                            o["hold_ns"]["count"]) for o in s["objects"])
    assert stat(d / "one.ptt", waits1) == stat(d / "rot.ptt", waits2)


def test_parts_add_up(flood):
    """The program's events of every part add up to the trace's, and to END's count."""
    d, _, rot = flood
    parts = parts_of(d / "rot.ptt")
    total, carried, alone = 0, 0, 0
    for p in parts:
        _, chunks, end = read_part(p)
        total += events_in(chunks, False)
        carried += events_in(chunks, True)
        alone += recorded(p)
    assert total == int(rot[1]) == end
    assert int(summary_counts(d / "rot.ptt", keep_machine=True)[1]["events"]) == total
    assert alone == total + carried  # a part read alone has its carried state too


def test_filters_across_parts(flood):
    """--from/--to over the set: what view --format=raw of the whole set has in that span."""
    d, _, _ = flood
    base = d / "rot.ptt"
    lines = read("--format=raw", base).stdout.splitlines()
    times = [int(t.split(":")[0].replace(".", "")) for t in lines]
    lo, hi = times[len(times) // 4], times[3 * len(times) // 4]
    span = [f"--from={lo / 1e9:.9f}", f"--to={hi / 1e9:.9f}"]
    got = read("--format=raw", *span, base).stdout.splitlines()
    want = [line for line, t in zip(lines, times) if lo <= t <= hi]
    assert got == want and len(got) > len(lines) // 3
    # the span covers several parts
    _, chunks, _ = read_part(parts_of(base)[1])
    assert len(want) > 2 * sum(c[4] for c in chunks)


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    """rotate_names 3 40000 with --max-files=2."""
    d = tmp_path_factory.mktemp("kept")
    p, m = trace(d, [prog("rotate_names"), 3, 40000], opts=[f"--max-size={SIZE}", "--max-files=2"])
    tids = {k[len("@tid_"):]: int(v) for k, v in
            (line.split("=") for line in p.stdout.splitlines()) if k.startswith("@tid_")}
    return d, m, tids


def test_max_files(kept):
    d, m, _ = kept
    base = d / "t.ptt"
    parts = parts_of(base)
    last = int(parts[-1].name.rsplit(".", 1)[1])
    assert [p.name for p in parts] == [f"t.ptt.{last - 1}", f"t.ptt.{last}"] and last > 10
    assert m[3] == f"{base}.1 to {parts[-1]} (parts 1-{last - 2} deleted: --max-files=2)"
    p = read("--summary", base)
    assert p.stderr == (f"ptt view: {base}: parts 1-{last - 2} are missing (deleted: "
                        f"--max-files=2): reading parts {last - 1}-{last}\n")
    # the events read: those of the two parts, the first one's carried state with them
    first, second = read_part(parts[0])[1], read_part(parts[1])[1]
    want = events_in(first, False) + events_in(first, True) + events_in(second, False)
    assert recorded(base) == want
    assert re.search(rf"^parts: +{last - 1}-{last} of set \w+ \(1-{last - 2} missing\)$", p.stdout,
                     re.M)
    assert re.search(r"^exit: +0$", p.stdout, re.M)  # END's figures, from the last part
    assert read_part(parts[1])[2] == int(m[1])


def test_names_from_carried_state(kept):
    """The threads' starts and names, the objects' names and the modules are in deleted parts:
    the carried state names them still, and the lines of the calls."""
    d, _, tids = kept
    line = next(n for n, text in enumerate((SOURCE / "tests" / "progs" / "rotate_names.c")
                                          .read_text().splitlines(), 1) if "/* site:last */" in text)
    human = read(d / "t.ptt").stdout.splitlines()
    raw = parse_raw(read("--format=raw", d / "t.ptt").stdout)
    workers = {f"w{k}": tids[f"w{k}"] for k in range(3)}
    seen = 0
    for name, tid in workers.items():
        mine = [h for h in human if f"({tid})" in h]
        if not mine:
            continue
        # Its start is in a kept part when its first sub-buffer was handed over late (the thread
        # ran little at first): if it began before main named it, that line names it by its
        # start routine, as without rotation (worker, worker#2...: numbered in their order).
        started = re.compile(rf"Thread worker(#\d+)? \({tid}\) starts user function worker ")
        rest = [h for h in mine if not started.search(h)]
        assert len(mine) - len(rest) <= 1
        assert all(f"Thread {name} ({tid})" in h for h in rest), rest[:3]
        k = name[1:]
        if any(e.tid == tid and e.name == "MUTEX_LOCK_IN" for e in raw):
            assert any(f"Thread {name} ({tid}) enters function pthread_mutex_lock (mutex own[{k}])"
                       f" at rotate_names.c:" in h for h in mine)
        final = [h for h in mine if f"(mutex last{k})" in h]
        if final:
            seen += 1
            assert f"enters function pthread_mutex_lock (mutex last{k}) at rotate_names.c:{line}." \
                in final[0]
    assert seen >= 1  # the last thread to end has its last lock in the last part
    # nothing of the carried state is shown twice: one start per thread, one name per object
    c = counts(d / "t.ptt")
    assert c["PROCESS_START"] == 1 and c["OBJECT_NAME"] == 3
    assert c["THREAD_START"] == len([t for t in workers.values() if any(e.tid == t for e in raw)])


def test_part_alone_named(kept):
    """A part read alone names things from its own carried state: the one before the last,
    full of the workers' events (the last may hold the end of main alone)."""
    d, _, tids = kept
    part = parts_of(d / "t.ptt")[0]
    assert {c[1] for c in read_part(part)[1] if not c[5] & (CHUNK_DAEMON | CHUNK_CARRY)} & set(tids.values())
    human = read(part).stdout
    assert "Thread main (" in human and re.search(r"Thread w\d \(", human)
    assert not re.search(r"Thread \d+ ", human)


def test_check_on_set(kept, tmp_path):
    d, _, _ = kept
    base = d / "t.ptt"
    parts = parts_of(base)
    last = int(parts[-1].name.rsplit(".", 1)[1])
    p = run([PTT, "check", base])
    assert p.returncode == 0, p.stderr
    assert re.fullmatch(rf"{re.escape(str(base))}: \d+ events, nothing found\n", p.stdout)
    lines = p.stderr.splitlines()
    assert len(lines) == 2 and "parts 1-" in lines[0]
    assert lines[1] == (f"ptt check: {base}: without parts 1-{last - 2} of the trace, the rules "
                        "that need every event are off (unlocks of locks not held, uses of objects "
                        "never initialised, condvar waits without their mutex)")
    # the whole set: every rule on, no line
    p, _ = trace(tmp_path, [prog("rotate_names"), 2, 20000], opts=[f"--max-size={SIZE}"])
    p = run([PTT, "check", tmp_path / "t.ptt"])
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_trace_check_rotated(tmp_path):
    """ptt trace --check reads the rotated session's parts."""
    p = run([PTT, "trace", "-q", "-o", tmp_path / "t.ptt", f"--max-size={SIZE}", "--max-files=3",
             "--check", "--", prog("rotate_names"), 2, 40000])
    assert p.returncode == 0, p.stderr
    err = p.stderr.splitlines()
    assert SUMMARY_RE.match(err[-4]) and "(deleted: --max-files=3)" in err[-3]
    assert "the rules that need every event are off" in err[-2]
    assert re.fullmatch(rf"{re.escape(str(tmp_path / 't.ptt'))}: \d+ events, nothing found",
                        err[-1])


def copy_set(src, dst):
    dst.mkdir()
    for p in parts_of(src):
        shutil.copy(p, dst / p.name)
    return dst / src.name


def test_missing_middle_part(flood, tmp_path):
    """A part missing between two: what can be read is, then one line, exit status 2."""
    d, _, rot = flood
    base = copy_set(d / "rot.ptt", tmp_path / "gap")
    third = base.parent / "rot.ptt.3"
    lost = events_in(read_part(third)[1], False)
    third.unlink()
    p = read("--format=raw", base, rc=2)
    read_back = [line for line in p.stdout.splitlines() if ":TRACE_UNFINISHED :" not in line]
    assert len(read_back) == int(rot[1]) - lost
    assert p.stderr == (f"ptt view: {base}: part 3 is missing: the events it held are not "
                        "read\n")
    p = run([PTT, "stat", base])
    assert p.returncode == 2 and p.stderr.splitlines()[-1].endswith("part 3 is missing: the "
                                                                    "events it held are not read")


def renumber(src, dst, number):
    """A copy of the part src saved as dst, its INFO key part made number (the record keeps its
    size: its key max_size, which no reader uses, makes room)."""
    data = bytearray(src.read_bytes())
    off = struct.unpack_from("<I", data, 12)[0]
    rtype, size = struct.unpack_from("<II", data, off)
    assert rtype == 1
    keys = [k for k in data[off + 8:off + size].rstrip(b"\0").split(b"\n")
            if k and not k.startswith(b"max_size=")]
    text = b"".join((b"part=%d" % number if k.startswith(b"part=") else k) + b"\n" for k in keys)
    assert len(text) < size - 8
    data[off + 8:off + size] = text.ljust(size - 8, b"\0")
    dst.write_bytes(bytes(data))


def test_huge_gap(flood, tmp_path):
    """Parts 1 and 1073741825 of a set: the billion parts between them are said as one range,
    none is looked for one by one."""
    d, _, _ = flood
    (tmp_path / "big").mkdir()
    base = tmp_path / "big" / "rot.ptt"
    shutil.copy(d / "rot.ptt.1", tmp_path / "big" / "rot.ptt.1")
    renumber(d / "rot.ptt.2", tmp_path / "big" / "rot.ptt.1073741825", 1073741825)
    p = run([PTT, "stat", base], timeout=30)
    assert p.returncode == 2 and p.stderr.splitlines()[-1].endswith(
        f"{base}: parts 2-1073741824 are missing: the events they held are not read"), p.stderr
    p = read("--summary", base, rc=2)
    assert re.search(r"^parts: +1, 1073741825 of set \w+ \(2-1073741824 missing\); the later ones "
                     "not read$", p.stdout, re.M), p.stdout


def test_lone_high_part(flood, tmp_path):
    """A lone part 3000000000: the parts before it are said deleted in one line, it is read."""
    d, _, _ = flood
    (tmp_path / "high").mkdir()
    base = tmp_path / "high" / "rot.ptt"
    renumber(d / "rot.ptt.2", tmp_path / "high" / "rot.ptt.3000000000", 3000000000)
    p = run([PTT, "view", "--summary", base], timeout=30)
    assert p.returncode == 0, p.stderr
    assert p.stderr == (f"ptt view: {base}: parts 1-2999999999 are missing (deleted): reading "
                        "part 3000000000\n")
    assert re.search(r"^parts: +3000000000 of set \w+ \(1-2999999999 missing\); the later ones "
                     "not read$", p.stdout, re.M), p.stdout


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_part_not_a_regular_file(flood, tmp_path, kind):
    """A FIFO (no one writes to) or a symbolic link named as the last part: not waited for, not
    followed; the other parts are read, then one line, exit status 2."""
    d, _, _ = flood
    base = copy_set(d / "rot.ptt", tmp_path / "set")
    last = parts_of(base)[-1]
    odd = base.parent / f"rot.ptt.{int(last.name.rsplit('.', 1)[1]) + 1}"
    if kind == "fifo":
        os.mkfifo(odd)
        why = "not a regular file, not a part"
    else:
        renumber(last, tmp_path / odd.name, int(odd.name.rsplit(".", 1)[1]))
        odd.symlink_to(tmp_path / odd.name)
        why = "a symbolic link, not a part"
    for cmd in ("stat", "view"):
        p = run([PTT, cmd, base], timeout=30)
        assert p.returncode == 2 and p.stderr == f"ptt {cmd}: {base}: {odd}: {why}\n", p.stderr
        assert p.stdout


def test_corrupt_middle_part(flood, tmp_path):
    """A part damaged in the middle: its events before the damage and the other parts' are
    read, then one line naming it, exit status 2."""
    d, _, rot = flood
    base = copy_set(d / "rot.ptt", tmp_path / "bad")
    third = base.parent / "rot.ptt.3"
    data = bytearray(third.read_bytes())
    _, chunks, _ = read_part(third)
    # the middle of the events of the part's last chunk: its thread is cut there, in this part
    last = chunks[-1]
    off = last[6] + 40 + (last[7] - 40) // 16 * 8
    data[off:off + 64] = b"\xff" * 64
    third.write_bytes(bytes(data))
    p = read("--format=raw", base, rc=2)
    n = len([line for line in p.stdout.splitlines() if ":TRACE_UNFINISHED :" not in line])
    assert int(rot[1]) - events_in(chunks, False) < n < int(rot[1])
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ptt view: {base}: {third}: corrupt ")


@pytest.fixture(scope="module")
def kept4(tmp_path_factory):
    """rotate_names 3 40000 with --max-files=4: the first two parts kept are before the last, so
    the threads go on through them (with --max-files=2, the second is the last, where they may
    all have ended already)."""
    d = tmp_path_factory.mktemp("kept4")
    trace(d, [prog("rotate_names"), 3, 40000], opts=[f"--max-size={SIZE}", "--max-files=4"])
    return d


def test_corrupt_first_carried_record(kept4, tmp_path):
    """The first record of a thread's carried state in the first part read is corrupt, and the
    thread goes on in the next part: the reader leaves that part for the next, and the events
    still come in time order (a reader that waited with the thread until the corrupt record's
    time gave the next part's events of it last)."""
    base = copy_set(kept4 / "t.ptt", tmp_path / "bad")
    parts = parts_of(base)
    assert len(parts) == 4
    first, second = parts[:2]
    data = bytearray(first.read_bytes())
    later = {(c[0], c[2]) for c in read_part(second)[1] if not c[5] & CHUNK_CARRY}
    carried = [c for c in read_part(first)[1]
               if c[5] & CHUNK_CARRY and c[2] and (c[0], c[2]) in later]
    assert carried
    at = carried[0][6] + 40  # its first record, format 1: id, size, dts (then an ABS time)
    event_id = struct.unpack_from("<H", data, at)[0]
    struct.pack_into("<HHIQ", data, at, event_id | 0x8000, 81, 0, 1 << 62)
    first.write_bytes(bytes(data))
    p = read("--format=raw", base, rc=2)
    assert "corrupt event" in p.stderr
    times = [e.ns for e in parse_raw(p.stdout)]
    assert len(times) > 1000 and times == sorted(times)


def test_previous_run_kept(tmp_path):
    """The previous run's parts become FILE.old.N, as a single FILE becomes FILE.old; --force
    removes them; a program that cannot run gives them back."""
    base = tmp_path / "t.ptt"
    flood = [prog("flood"), 2, 10000]
    trace(tmp_path, [prog("flood"), 1, 10])
    trace(tmp_path, flood, opts=[f"--max-size={SIZE}"])
    first = sorted(p.name for p in parts_of(base))
    assert not base.exists() and (tmp_path / "t.ptt.old").exists()
    trace(tmp_path, flood, opts=[f"--max-size={SIZE}"])
    old = sorted(p.name for p in parts_of(tmp_path / "t.ptt.old"))
    assert old == [n.replace("t.ptt.", "t.ptt.old.") for n in first]
    assert not (tmp_path / "t.ptt.old").exists()  # the set is the previous run: FILE.old reads it
    assert summary_counts(tmp_path / "t.ptt.old")[1]["parts"].startswith("1-")
    trace(tmp_path, [prog("flood"), 1, 10])  # one file again: the set becomes FILE.old.N
    assert base.exists() and not parts_of(base) and len(parts_of(tmp_path / "t.ptt.old")) > 1
    trace(tmp_path, flood, opts=[f"--max-size={SIZE}", "--force"])
    assert not base.exists() and len(parts_of(tmp_path / "t.ptt.old")) > 1
    before = sorted(p.name for p in tmp_path.iterdir())
    p = run([PTT, "trace", "-q", "-o", base, f"--max-size={SIZE}", "--", tmp_path / "none"])
    assert p.returncode == 127
    assert p.stderr.endswith("cannot run '" + str(tmp_path / "none") + "': No such file or "
                             "directory\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [n for n in before
                                                          if not n.startswith("t.ptt.old")]


@pytest.mark.parametrize("opts,line", [
    (["--max-size=64K"], "--max-size=64K: give at least 4 sub-buffers (4 x 32768 = 131072 "
                         "bytes), e.g. 64M"),
    (["--max-size=1M", "--subbuffer=512K"], "--max-size=1M: give at least 4 sub-buffers (4 x "
                                            "524288 = 2097152 bytes), e.g. 64M"),
    (["--max-files=2"], "--max-files=2 needs --max-size=SIZE"),
    (["--max-size=1M", "--max-files=0"], "--max-files=0: give a number of parts from 1 to "
                                         "1000000"),
    (["--max-size=1M", "--flight-recorder=1M"], "--max-size and --flight-recorder exclude each "
     "other: keep the newest events on disk with --max-size=SIZE --max-files=N"),
])
def test_bad_options(tmp_path, opts, line):
    require_build()
    p = run([PTT, "trace", "-o", tmp_path / "t.ptt", *opts, "--", "true"])
    assert p.returncode == 125 and p.stderr == f"ptt trace: {line}\n"
    assert not list(tmp_path.iterdir())


def test_not_a_regular_file(tmp_path):
    fifo = tmp_path / "t.ptt"
    os.mkfifo(fifo)
    p = run([PTT, "trace", "-o", fifo, f"--max-size={SIZE}", "--", "true"])
    assert p.returncode == 125
    assert p.stderr.startswith(f"ptt trace: {fifo} is not a regular file: --max-size writes the "
                               f"parts {fifo}.1, {fifo}.2, ...")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.ptt"]


@pytest.fixture
def sticky():
    with sticky_dir("ptt-sticky-", "runs ptt trace as two other users") as dirs:
        yield dirs


def as_uid(uid, *cmd):
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--",
            *[str(c) for c in cmd]]


def test_parts_of_another_user(flood, sticky):
    """Parts of a higher number that another user put beside the user's own (in /tmp, say) are
    left out, in one line; a reader whose parts are all another's reads them, but refuses parts
    of several owners, none of them its own."""
    d, _, _ = flood
    tmp_path = pathlib.Path(sticky[0]) / "parts"  # a directory every uid can cross
    tmp_path.mkdir(mode=0o755)
    parts = sorted(d.glob("rot.ptt.*"), key=lambda f: int(f.suffix[1:]))
    n = len(parts)
    for f in parts:
        shutil.copy(f, tmp_path / f.name)
    for k in (1, 2):  # the same set, so that read they would count twice
        renumber(parts[k - 1], tmp_path / f"rot.ptt.{n + k}", n + k)
    for f in tmp_path.iterdir():  # readable by VICTIM, who reads another's trace below
        f.chmod(0o644)
    # What would stop the reading if it were read: unreadable junk, a FIFO, a link.
    (tmp_path / f"rot.ptt.{n + 3}").write_text("junk")
    os.mkfifo(tmp_path / f"rot.ptt.{n + 4}")
    os.symlink("/etc/passwd", tmp_path / f"rot.ptt.{n + 5}")
    for k in range(1, 6):
        os.chown(tmp_path / f"rot.ptt.{n + k}", ATTACKER, ATTACKER, follow_symlinks=False)
    (tmp_path / f"rot.ptt.{n + 3}").chmod(0o600)
    base = tmp_path / "rot.ptt"
    p = read("--summary", base)
    assert p.stderr == (f"ptt view: {base}: 5 parts of another user left out ({base}.{n + 1}, "
                        f"uid {ATTACKER})\n")
    assert counts(base) == counts(d / "rot.ptt")
    p = run(as_uid(VICTIM, PTT, "view", "--summary", base))
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == (f"ptt view: {base}: its parts {base}.N belong to different users, none "
                        "of them you: give the name of one part\n")
    for k in range(1, 6):
        os.unlink(tmp_path / f"rot.ptt.{n + k}")
    p = run(as_uid(VICTIM, PTT, "view", "--summary", base))
    assert p.returncode == 0 and p.stderr == "", p.stderr


def test_planted_link_at_next_part(sticky):
    """Another user plants a link where the next part goes while the session runs: it is refused
    in one line, nothing is written through it, the trace ends whole with the part before (its
    END record has the true figures), exit status 125."""
    base, shared, victim_file = sticky
    out = os.path.join(shared, "t.ptt")
    go = os.path.join(base, "go")
    script = f"while [ ! -e {go} ]; do sleep 0.02; done; exec {prog('flood')} 2 50000"
    p = subprocess.Popen(as_uid(VICTIM, PTT, "trace", "-q", "-o", out, f"--max-size={SIZE}", "--",
                                "sh", "-c", script),
                         cwd=base, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not os.path.exists(out + ".1") and time.monotonic() < deadline:
            time.sleep(0.01)
        link = subprocess.run(as_uid(ATTACKER, "ln", "-s", victim_file, out + ".2"),
                              capture_output=True, text=True)
        assert link.returncode == 0, link.stderr
        open(go, "w").close()
        stdout, stderr = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 125, stderr
    assert stdout == "done=100000\n"
    lines = stderr.splitlines()
    assert len(lines) == 2, stderr
    assert lines[0].startswith(f"ptt trace: refusing to write {out}.2: a symbolic link of uid "
                               f"{ATTACKER} is there already, which this session did not make "
                               f"(nothing is written through it); the trace ends with {out}.1")
    m = SUMMARY_RE.match(lines[1])
    assert m and int(m[5]) > 0 and m[6] == "0" and m[3] == f"{out}.1"
    with open(victim_file) as f:
        assert f.read() == "precious\n"
    assert os.readlink(out + ".2") == victim_file and os.lstat(out + ".2").st_uid == ATTACKER
    assert sorted(os.listdir(shared)) == ["t.ptt.1", "t.ptt.2"]
    info, chunks, end = read_part(Path(out + ".1"))
    assert end == int(m[1]) == events_in(chunks, False) and "write_error" in info


@pytest.mark.parametrize("force", [False, True])
def test_planted_link_at_first_part(sticky, force):
    """A link another user planted where the first part goes is neither followed, moved nor
    removed: ptt trace refuses to start, in one line."""
    base, shared, victim_file = sticky
    out = os.path.join(shared, "t.ptt")
    p = run(as_uid(ATTACKER, "ln", "-s", victim_file, out + ".1"))
    assert p.returncode == 0, p.stderr
    p = run(as_uid(VICTIM, PTT, "trace", "-o", out, f"--max-size={SIZE}",
                   *(["--force"] if force else []), "--", "true"), cwd=base)
    assert p.returncode == 125, p.stderr
    want = (f"ptt trace: cannot remove the existing {out}.1: Operation not permitted" if force else
            f"ptt trace: cannot keep the existing {out}.1 as {out}.old.1: Operation not permitted "
            "(--force removes it)")
    assert p.stderr == want + "\n"
    with open(victim_file) as f:
        assert f.read() == "precious\n"
    assert os.readlink(out + ".1") == victim_file and sorted(os.listdir(shared)) == ["t.ptt.1"]
