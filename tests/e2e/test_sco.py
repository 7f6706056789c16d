"""ptt export --format=sco: the per-thread files of the SCO OpenServer Threads Library, merged
and translated with the very commands of SCO's "Tracing multithreaded programs" (its sort -m
merge and its awk script, run through sh), compared with the events ptt view prints."""

import collections
import re

import pytest

from conftest import NORETURN, EVENTS, PTT, SOURCE, parse_raw, run, trace_prog, view

# The SCO document's merge, word for word ("+0 -4": the obsolete key syntax of sort(C), which
# GNU sort still takes: the same as -k 1,4).
SCO_MERGE = "sort -m -n -o mergefile -t: +0 -4 tr.*"

# The SCO document's translation script, word for word but MAPPING (pointing to our map) and,
# as the document says, its "print" line and the line after it as one line, without backslash.
SCO_TRANSLATE = r"""MAPPING=@MAP@
awk '
BEGIN { FS=":"
	OFS=":"
}
FILENAME == ARGV[1] {
	map[$1]=$2
	next
}
{	OUT=map[$6+0"_"$7+0]
	print $1" "$2" "$3" "$4" "$5" "OUT" "$8" "$9" "$10" "$11" "$12" "$13
}' $MAPPING $1 > $2
"""

RECORD_RE = re.compile(r"^(\d+):(\d{9}):(\d+):(\d+):(\d+):(\d+):(\d+):([012])((?::[^:\s]*){5})$")


def table_ids():
    """Event ids by name, from common/events.def."""
    text = (SOURCE / "common" / "events.def").read_text()
    return {m[1]: int(m[2], 16) for m in re.finditer(
        r"^PTT_EVENT\((\w+),\s*0x([0-9a-fA-F]+),", text, re.M)}


def export(tmp_path, trace, out="sco"):
    d = tmp_path / out
    p = run([PTT, "export", "--format=sco", trace, "-o", d])
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    return d


def sanitized(field):
    """A raw field as a record holds it: what would split the record turned into '_'."""
    return re.sub(r"[:\s\x7f]", "_", field)


def which(name):
    info = EVENTS[name]
    if info.kind == "IN" and name not in NORETURN:
        return "1"
    return "2" if info.kind == "OUT" else "0"


@pytest.mark.parametrize("producers,consumers,items,size", [(2, 2, 500, 4)])
def test_sco_prodcons(tmp_path, producers, consumers, items, size):
    t = trace_prog(tmp_path, "prodcons", producers, consumers, items, size)
    ev = parse_raw(view("--format=raw", t.path), keep_machine=True)
    d = export(tmp_path, t.path)
    ids = table_ids()

    # The map: every event of the table, by id, CLASS_NUMBER:NAME.
    assert (d / "tracemap.h").read_text().splitlines() == [
        f"{i >> 8}_{i & 0xff}:{n}" for n, i in sorted(ids.items(), key=lambda x: x[1])]

    # A file per thread, with one record per event of the thread, in order.
    per_thread = collections.defaultdict(list)
    for e in ev:
        per_thread[(e.pid, e.tid)].append(e)
    nthreads = producers + consumers + 1
    assert len(per_thread) == nthreads
    files = {f"tr.{pid & 0xfffffff:07x}.{tid & 0xfff:03x}": (pid, tid) for pid, tid in per_thread}
    assert sorted(p.name for p in d.iterdir()) == sorted([*files, "tracemap.h"])
    serials = {}
    for fname, (pid, tid) in files.items():
        mine = per_thread[(pid, tid)]
        lines = (d / fname).read_text().splitlines()
        assert len(lines) == len(mine), fname
        for line, e in zip(lines, mine):
            m = RECORD_RE.match(line)
            assert m, f"{fname}: malformed record {line!r}"
            assert int(m[1]) * 10**9 + int(m[2]) == e.ns
            assert (int(m[3]), int(m[4])) == (e.tid, e.pid)
            i = ids[e.name]
            assert (int(m[6]), int(m[7])) == (i >> 8, i & 0xff), line
            assert m[8] == which(e.name), line
            args = m[9][1:].split(":")
            assert args == [sanitized(f) for f in e.fields[:5]] + [""] * (5 - len(e.fields[:5]))
            # tid: the thread's number in its process; 0 for what ptt trace itself wrote.
            if e.name != "PROCESS_EXIT":
                serials.setdefault(e.tid, set()).add(int(m[5]))
            else:
                assert m[5] == "0"
    assert sorted(s for v in serials.values() for s in v) == list(range(1, nthreads + 1))
    assert serials[t.events[0].tid] == {1}  # the main thread

    # The SCO merge: one file of every record, chronological.
    p = run(["sh", "-c", SCO_MERGE], cwd=d)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    merged = (d / "mergefile").read_text().splitlines()
    assert len(merged) == len(ev)
    times = [int(r.split(":")[0]) * 10**9 + int(r.split(":")[1]) for r in merged]
    assert times == sorted(times)
    assert sorted(times) == sorted(e.ns for e in ev)

    # The SCO translation: event numbers to names, with the map ptt wrote.
    script = d / "translate.sh"
    script.write_text(SCO_TRANSLATE.replace("@MAP@", str(d / "tracemap.h")))
    p = run(["sh", script, "mergefile", "translated"], cwd=d)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    out = (d / "translated").read_text().splitlines()
    assert len(out) == len(ev)
    got = collections.defaultdict(list)
    for line in out:
        w = line.split(" ")
        assert len(w) == 12, line  # event1 and event2 became one name
        assert w[5] in EVENTS, f"untranslated: {line!r}"
        got[(int(w[3]), int(w[2]))].append((w[5], w[6], *[a for a in w[7:] if a]))
    for k, mine in per_thread.items():
        assert got[k] == [(e.name, which(e.name), *[sanitized(f) for f in e.fields[:5] if f])
                          for e in mine]
    names = collections.Counter(line.split(" ")[5] for line in out)
    total = producers * items
    for n in ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "COND_SIGNAL_IN"):
        assert names[n] == 2 * total
    assert names["THREAD_START"] == names["THREAD_END"] == producers + consumers
    assert names["PROCESS_START"] == names["PROCESS_EXIT"] == 1


def test_sco_bad_input(tmp_path):
    """Not a trace: an error, and nothing written."""
    bad = tmp_path / "bad.ptt"
    bad.write_bytes(b"not a trace\n" * 10)
    p = run([PTT, "export", "--format=sco", bad, "-o", tmp_path / "out"])
    assert p.returncode == 2 and p.stderr.startswith("ptt export: ")
    assert not (tmp_path / "out").exists()


def test_sco_truncated(tmp_path):
    """A truncated trace: the records of what could be read, and an error."""
    t = trace_prog(tmp_path, "prodcons", 1, 1, 3000, 2)
    data = t.path.read_bytes()
    cut = tmp_path / "cut.ptt"
    cut.write_bytes(data[:len(data) * 2 // 3])
    p = run([PTT, "export", "--format=sco", cut, "-o", tmp_path / "out"])
    assert p.returncode == 2 and "ptt export: " in p.stderr
    records = sum(len(f.read_text().splitlines()) for f in (tmp_path / "out").glob("tr.*"))
    assert 0 < records < len(t.events)
    assert (tmp_path / "out" / "tracemap.h").exists()
