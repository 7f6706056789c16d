"""One palette for the states of a thread: the Pajé trace (its entity values of the thread state),
the HTML report (its style sheet's state classes) and the Chrome JSON (the cname of each blocked
span) colour each state as ptt's one table says (src/analysis/states.def, read by palette_util), for a
program that blocks in many ways (report_mix: a mutex, a rwlock, a condvar, a barrier, a
semaphore, joins); the docs list the table's colours and names."""

import colorsys
import itertools
import json
import re

import pytest

from conftest import PTT, SOURCE, prog, ptt_trace, run
from palette_util import by_name, states

# What report_mix blocks in, at least once whatever the scheduling (tests/progs/report_mix.c).
BLOCKED = {"mutex", "rwlock", "cond", "barrier", "sem", "join"}

# The colour names the Chrome trace viewer reserves (catapult's tracing/base/color_scheme.html):
# chrome://tracing takes no other cname.
RESERVED = {
    "thread_state_uninterruptible", "thread_state_iowait", "thread_state_running",
    "thread_state_runnable", "thread_state_sleeping", "thread_state_unknown",
    "background_memory_dump", "light_memory_dump", "detailed_memory_dump",
    "vsync_highlight_color", "generic_work", "good", "bad", "terrible", "black", "grey", "white",
    "yellow", "olive", "rail_response", "rail_animation", "rail_idle", "rail_load", "startup",
    "heap_dump_stack_frame", "heap_dump_object_type", "heap_dump_child_node_arrow",
    "cq_build_running", "cq_build_passed", "cq_build_failed", "cq_build_abandoned",
    "cq_build_attempt_runnig", "cq_build_attempt_passed", "cq_build_attempt_failed",
}


@pytest.fixture(scope="module")
def mix(tmp_path_factory):
    """report_mix traced; its Pajé trace, report and Chrome JSON."""
    d = tmp_path_factory.mktemp("palette")
    t = ptt_trace(d, [prog("report_mix"), "10"])
    out = {}
    for name, args in (("paje", ["paje"]), ("report", ["report"]),
                       ("chrome", ["export", "--format=chrome"])):
        out[name] = d / name
        p = run([PTT, *args, t.path, "-o", out[name]])
        assert p.returncode == 0 and p.stderr == "", p.stderr
    return out


def lab(rgb):
    """CIE L*a*b* (D65) of an sRGB colour."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
           for c in (v / 255 for v in rgb)]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_table():
    """The table: the states the timeline knows, named once, running a neutral grey, the
    program's waits warm (red to yellow, pink to purple, browns), ptt's own wait for its buffer
    cool (blue), all told apart (CIE76 distance 20 at least), each with its own reserved Chrome
    colour name."""
    rows = states()
    names = [s.name for s in rows]
    assert names == ["running", "mutex", "rwlock", "spin", "cond", "barrier", "sem", "join",
                     "once", "signal", "mq", "ptt_buffer"]
    assert len({s.rgb for s in rows}) == len({s.cname for s in rows}) == len(rows)
    assert {s.cname for s in rows} <= RESERVED
    for s in rows:
        h, sat, _ = colorsys.rgb_to_hsv(*(c / 255 for c in s.rgb))
        if s.name == "running":
            assert sat <= 0.1, f"running is not neutral: {s.rgb}"
        elif s.name == "ptt_buffer":
            assert sat >= 0.2 and 180 <= h * 360 <= 240, f"{s.name} is not blue"
        else:
            assert sat >= 0.2 and (h * 360 <= 60 or h * 360 >= 280), f"{s.name} is not warm"
    for a, b in itertools.combinations(rows, 2):
        d = sum((p - q) ** 2 for p, q in zip(lab(a.rgb), lab(b.rgb))) ** 0.5
        assert d >= 20, f"{a.name} and {b.name} look alike: {a.rgb} {b.rgb}"


def test_paje_colours(mix):
    """Each state is a value of the thread state type (TS), in the table's colour; the thread
    states the file sets are those values."""
    text = mix["paje"].read_text()
    values = re.findall(r'^5 (\S+) TS (\S+) "([0-9.]+) ([0-9.]+) ([0-9.]+)"$', text, re.M)
    assert [v[0] for v in values] == [s.name for s in states()]
    table = by_name()
    for alias, name, *rgb in values:
        assert name == alias
        assert tuple(round(float(c) * 255) for c in rgb) == table[alias].rgb, alias
    assert len(re.findall(r"^5 \S+ TS ", text, re.M)) == len(values)
    used = set(re.findall(r"^1[12] \S+ \S+ TS (\S+)$", text, re.M))
    assert BLOCKED | {"running"} <= used <= set(table)


def test_report_colours(mix):
    """The page's style sheet colours each state's class (s0, s1... in the order of the data's
    states) in the table's colour, once: no other list of state colours."""
    text = mix["report"].read_text()
    style = re.sub(r"/\*.*?\*/", "", re.search(r"<style>(.*?)</style>", text, re.S)[1], flags=re.S)
    data = json.loads(re.search(r'<script type="application/json" id="ptt-data">(.*?)</script>',
                                text, re.S)[1])
    assert data["states"] == [s.name for s in states()]
    rules = re.findall(r"^\.s(\d+) \{ fill: #([0-9a-f]{6}); background: #([0-9a-f]{6}); \}$",
                       style, re.M)
    assert len(re.findall(r"\.s\d+\b", style)) == len(rules) == len(data["states"])
    for s in states():
        fill, background = [r[1:] for r in rules if int(r[0]) == s.index][0]
        assert fill == background == "%02x%02x%02x" % s.rgb, s.name
    # The states the timeline draws are those classes.
    drawn = {data["states"][span[1]] for span in data["spans"]}
    assert BLOCKED <= drawn


def test_chrome_colours(mix):
    """Each blocked span carries its state's reserved colour name; nothing else has a cname
    (calls keep the viewer's colour per name)."""
    events = json.loads(mix["chrome"].read_text())["traceEvents"]
    table = by_name()
    seen = set()
    for e in events:
        if e.get("cat") == "blocked":
            state = e["args"]["state"]
            assert e["name"] == ("waiting for ptt's buffer" if state == "ptt_buffer"
                                 else f"blocked on {state}")
            assert e.get("cname") == table[state].cname, e
            seen.add(state)
        else:
            assert "cname" not in e, e
    assert BLOCKED <= seen and "running" not in seen


def test_docs():
    """docs/paje.md lists each state in the table's colour, docs/export.md its cname."""
    paje = (SOURCE / "docs" / "paje.md").read_text()
    rows = re.findall(r"^  \| `(\w+)` \| [\w -]+ `#([0-9a-f]{6})` \|", paje, re.M)
    assert rows == [(s.name, "%02x%02x%02x" % s.rgb) for s in states()]
    export = " ".join((SOURCE / "docs" / "export.md").read_text().split())
    for s in states()[1:]:  # running has no blocked span
        assert f"`{s.name}` `{s.cname}`" in export, s.name
