"""ptt export --format=ctf: a CTF 1.8 trace that babeltrace2 reads back event by event as ptt
view --format=raw shows the trace (names, pid, tid, time, every field), whose metadata declares
every event of the table, and whose clock starts at the trace's real start time."""

import collections
import datetime
import re
import subprocess

import pytest

from conftest import PTT, TIMEOUT, parse_raw, prog, ptt_trace, run, view
from export_util import FIELDS, require_tool, same_value

LINE_RE = re.compile(r"^\[(\d+)\] (?:\S+ )?(\w+): (.*)$")


def parse_value(s, i):
    """One value of babeltrace2's text output at s[i:]: (value, next index). Structures are
    lists of (name, value), arrays and sequences lists, enumerations ("enum", label, number)."""
    while s[i] == " ":
        i += 1
    c = s[i]
    if c == "{" or c == "[":
        close = "}" if c == "{" else "]"
        items, i = [], i + 1
        while True:
            while s[i] in " ,":
                i += 1
            if s[i] == close:
                return items, i + 1
            m = re.compile(r"(\[\d+\]|\w+) = ").match(s, i)
            assert m, f"cannot parse {s[i:]!r}"
            value, i = parse_value(s, m.end())
            items.append(value if c == "[" else (m[1], value))
    if c == "(":  # ( "LABEL" : container = N ) or ( <unknown> : container = N )
        m = re.compile(r'\( (?:"((?:[^"\\]|\\.)*)"|<unknown>) : container = (-?\d+) \)').match(s, i)
        assert m, f"cannot parse an enumeration at {s[i:]!r}"
        return ("enum", m[1], int(m[2])), m.end()
    if c == '"':
        out, i = [], i + 1
        while s[i] != '"':
            if s[i] == "\\":
                i += 1
                out.append({"n": "\n", "t": "\t", "r": "\r"}.get(s[i], s[i]))
            else:
                out.append(s[i])
            i += 1
        return "".join(out), i + 1
    m = re.compile(r"-?(0x[0-9A-Fa-f]+|\d+)").match(s, i)
    assert m, f"cannot parse a number at {s[i:]!r}"
    return int(m[0], 0) if not re.fullmatch(r"-?0\d+", m[0]) else int(m[0], 8), m.end()


def babeltrace(path):
    """babeltrace2 --clock-cycles PATH: [(ns, name, pid, tid, [(field, value)...])]."""
    bt = require_tool("babeltrace2")
    p = subprocess.run([bt, "--clock-cycles", "--no-delta", str(path)], capture_output=True,
                       text=True, errors="backslashreplace", timeout=TIMEOUT)
    assert p.returncode == 0, f"babeltrace2 {path} failed: {p.stderr}"
    events = []
    for line in p.stdout.splitlines():
        m = LINE_RE.match(line)
        assert m, f"unexpected babeltrace2 line: {line!r}"
        structs, i = [], 0
        rest = m[3]
        while i < len(rest):
            v, i = parse_value(rest, i)
            structs.append(v)
            while i < len(rest) and rest[i] in ", ":
                i += 1
        context = dict(structs[0])
        payload = structs[1] if len(structs) > 1 else []
        events.append((int(m[1]), m[2], context["pid"], context["tid"], payload))
    return events


def check_event(raw, bt):
    """A babeltrace2 event says what the raw event says."""
    ns, name, pid, tid, payload = bt
    assert (name, pid, tid, ns) == (raw.name, raw.pid, raw.tid, raw.ns), (raw, bt)
    _, nargs, fields = FIELDS[name]
    values = dict(payload)
    # babeltrace2 drops the leading '_' of our field names; a sequence's count is its own field.
    assert [k for k, _ in payload if not k.endswith("_count")] == [f for f, _ in fields], bt
    assert len(raw.fields) <= len(fields)
    for (field, ftype), text in zip(fields, raw.fields):
        assert same_value(ftype, text, values[field]), f"{name}.{field}: {text} vs {values[field]}"


@pytest.fixture(scope="module")
def mix(tmp_path_factory):
    d = tmp_path_factory.mktemp("mix")
    return ptt_trace(d, [prog("export_mix"), 20])


def export(trace, out, rc=0):
    p = run([PTT, "export", "--format=ctf", trace, "-o", out])
    assert p.returncode == rc, p.stderr
    return p


def test_events_match_view(mix, tmp_path):
    out = tmp_path / "ctf"
    export(mix.path, out)
    raw = parse_raw(view("--format=raw", mix.path), keep_machine=True)
    bt = babeltrace(out)
    assert len(bt) == len(raw)
    assert [e[0] for e in bt] == sorted(e[0] for e in bt), "babeltrace2's times go back"
    # One stream per process: its events in ptt view's order (across processes, babeltrace2
    # orders events of the same nanosecond its own way).
    for pid in {e.pid for e in raw}:
        mine = [e for e in raw if e.pid == pid]
        theirs = [e for e in bt if e[2] == pid]
        assert len(mine) == len(theirs)
        for r, b in zip(mine, theirs):
            check_event(r, b)
    names = collections.Counter(e[1] for e in bt)
    for name in ("THREAD_CANCELLED", "SEM_OPEN_IN", "SIGNAL_DELIVERED",
                 "MUTEX_WAIT", "THREAD_SETNAME_NP_IN", "MODULE_LOAD"):
        assert names[name] >= 1, name


def test_metadata(mix, tmp_path):
    out = tmp_path / "ctf"
    export(mix.path, out)
    meta = (out / "metadata").read_text()
    assert meta.startswith("/* CTF 1.8 */")
    assert "major = 1;" in meta and "minor = 8;" in meta
    # Every event of the table, with its id and its fields.
    for name, (evid, _, fields) in FIELDS.items():
        m = re.search(r'event \{\n\tname = "%s";\n\tid = (\d+);\n\tstream_id = 0;\n'
                      r'\tfields := struct \{\n(.*?)\t\};' % name, meta, re.S)
        assert m and int(m[1]) == evid, name
        declared = re.findall(r"\s_([^_\W]\w*)(?:\[|;)", m[2])
        assert declared == [f for f, _ in fields], name
        for f, t in fields:
            if t == "str":
                assert f"string _{f};" in m[2]
    # The clock counts nanoseconds from the trace's real start (start_time: to the second).
    uuid = re.search(r'trace \{.*?uuid = "([0-9a-f-]{36})";', meta, re.S)[1]
    clock = re.search(r"clock \{(.*?)\};", meta, re.S)[1]
    assert "freq = 1000000000;" in clock
    offset_s = int(re.search(r"offset_s = (\d+);", clock)[1])
    start = datetime.datetime.strptime(mix.head["start_time"], "%Y-%m-%dT%H:%M:%S%z")
    assert abs(offset_s - start.timestamp()) <= 2
    assert re.search(r'hostname = "%s";' % re.escape(mix.head["host"]), meta)
    # Streams: one per process, packets with the magic number and the trace's uuid.
    streams = sorted(p.name for p in out.iterdir() if p.name != "metadata")
    assert streams == sorted(f"pid_{pid}" for pid in {e.pid for e in mix.events})
    for s in streams:
        data = (out / s).read_bytes()
        assert data[:4] == bytes.fromhex("c11ffcc1")
        assert data[4:20].hex() == uuid.replace("-", "")


def test_reexport_and_foreign_directory(mix, tmp_path):
    out = tmp_path / "ctf"
    export(mix.path, out)
    export(mix.path, out)  # its own earlier export is replaced
    assert len(babeltrace(out)) == len(parse_raw(view("--format=raw", mix.path), keep_machine=True))
    (out / "notes.txt").write_text("mine")
    p = export(mix.path, out, rc=2)
    assert "not empty" in p.stderr
    assert (out / "notes.txt").exists()


def test_truncated_trace(mix, tmp_path):
    """A trace cut short: the export writes what could be read, and says what went wrong."""
    cut = tmp_path / "cut.ptt"
    data = mix.path.read_bytes()
    cut.write_bytes(data[:len(data) * 2 // 3])
    out = tmp_path / "ctf"
    p = export(cut, out, rc=2)
    assert "truncated" in p.stderr or "corrupt" in p.stderr, p.stderr
    v = run([PTT, "view", "--format=raw", cut])
    assert v.returncode != 0
    raw = parse_raw(v.stdout, keep_machine=True)
    bt = babeltrace(out)
    assert len(bt) == len(raw) > 0


def test_not_a_trace(tmp_path):
    bad = tmp_path / "bad.ptt"
    bad.write_bytes(b"not a trace at all")
    p = export(bad, tmp_path / "ctf", rc=2)
    assert "not a ptt trace" in p.stderr
    assert not (tmp_path / "ctf").exists()
