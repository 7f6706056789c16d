"""ptt report: the self-contained HTML page (docs/report.md).

The page is opened in headless Chromium: --dump-dom shows what its script built (the timeline's
rows, the tables, which must say what ptt stat --format=json says), --screenshot that it draws
something. Without Chromium the browser tests fail when $CI is set, and are skipped otherwise.
"""

import html.parser
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import PTT, prog, ptt_trace, run
from palette_util import by_name

BROWSER_TIMEOUT = 60  # seconds for one Chromium run; the tests assert much less for the page


def chromium_path():
    return shutil.which("chromium") or shutil.which("chromium", path="/usr/bin")


@pytest.fixture
def chromium():
    path = chromium_path()
    if not path:
        if os.environ.get("CI"):
            pytest.fail("chromium is needed for the report tests (Debian: apt-get install chromium)")
        pytest.skip("chromium is not installed")
    return path


def browse(chromium, page, tmp_path, *args, url=None):
    """Run headless Chromium on the file page (or url) with args (--dump-dom, --screenshot=...):
    (stdout, seconds it took)."""
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", f"--user-data-dir={tmp_path / 'chromium-profile'}", *args,
           url or page.resolve().as_uri()]
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=BROWSER_TIMEOUT,
                       stdin=subprocess.DEVNULL)
    took = time.monotonic() - start
    assert p.returncode == 0, f"chromium failed ({p.returncode}): {p.stderr[-2000:]}"
    return p.stdout, took


def report(trace, out, *opts, rc=0):
    p = run([PTT, "report", *opts, trace, "-o", out])
    assert p.returncode == rc, f"ptt report: exit {p.returncode}: {p.stderr}"
    return p


def stat_json(trace, *opts):
    p = run([PTT, "stat", "--format=json", *opts, trace])
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def page_data(text):
    """The data ptt report wrote into the page for its script."""
    m = re.search(r'<script type="application/json" id="ptt-data">(.*?)</script>', text, re.S)
    assert m, "no #ptt-data in the page"
    return json.loads(m[1])


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Page(html.parser.HTMLParser):
    """Elements (tag, attributes, ancestors' tags), and the text of each element with an id.
    Checks that tags nest (script and style contents are text, as in a browser)."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.elements, self.stack, self.texts, self.errors = [], [], {}, []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a, tuple(t for t, _ in self.stack)))
        if tag not in VOID:
            self.stack.append((tag, a.get("id")))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), tuple(t for t, _ in self.stack)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            # The HTML parser of a browser closes p, li, td... implicitly: only SVG and the
            # elements the page's structure rests on must close in order.
            if tag in ("svg", "g", "table", "section", "script", "style", "main", "header"):
                self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            while self.stack and self.stack[-1][0] != tag:
                self.stack.pop()
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        for tag, ident in self.stack:
            if ident:
                self.texts[ident] = self.texts.get(ident, "") + data

    def find(self, tag, cls=None, inside=None):
        return [a for t, a, anc in self.elements
                if t == tag and (cls is None or cls in a.get("class", "").split())
                and (inside is None or inside in anc)]


def check_self_contained(text):
    """Nothing in the page comes from elsewhere: no URL, no src or href, no @import."""
    low = text.lower()
    for bad in ("http://", "https://", "//cdn", "@import", "<link", "<iframe", "<img", "url("):
        assert bad not in low, f"the page refers to something outside it: {bad!r}"
    page = Page(text)
    assert not page.errors, page.errors
    for tag, attrs, _ in page.elements:
        for name in ("src", "href", "xlink:href", "srcset", "action"):
            assert name not in attrs, f"<{tag} {name}=...> in the page"
    return page


@pytest.fixture(scope="module")
def mix(tmp_path_factory):
    """report_mix traced, its report and ptt stat's JSON."""
    tmp = tmp_path_factory.mktemp("mix")
    t = ptt_trace(tmp, [prog("report_mix"), "30"])
    out = tmp / "mix.html"
    report(t.path, out)
    return t, out, stat_json(t.path)


def test_report_self_contained(mix):
    t, out, stat = mix
    text = out.read_text()
    page = check_self_contained(text)
    assert text.startswith("<!DOCTYPE html>")
    assert len(page.find("script")) == 2 and len(page.find("style")) == 1
    # The header, readable without the script.
    assert str(prog("report_mix")) in page.texts["info"]
    assert page.texts["events"] == str(stat["events"])
    assert page.texts["nthreads"] == str(len(stat["threads"]))
    assert page.texts["duration"] == f"{stat['duration_ns'] / 1e9:.6f} s"
    assert "error" not in page.texts
    data = page_data(text)
    assert data["info"]["events"] == stat["events"]
    assert data["info"]["duration_ns"] == stat["duration_ns"]
    assert data["info"]["exit"] == 0 and data["info"]["lost"] == 0
    assert {r["n"] for r in data["rows"]} == {th["name"] for th in stat["threads"]}


def test_report_dom(mix, chromium, tmp_path):
    """The script built one timeline row per thread, the tables say what ptt stat says."""
    t, out, stat = mix
    dom, took = browse(chromium, out, tmp_path, "--dump-dom", "--window-size=1400,1200")
    assert took < 20
    page = Page(dom)
    rows = page.find("g", "row", inside="svg")
    names = [r["data-name"] for r in rows]
    assert sorted(names) == sorted(th["name"] for th in stat["threads"])
    for th in ("main", "locker-1", "locker-2", "locker-3", "reader-1", "reader-2", "writer",
               "producer", "consumer"):
        assert th in names
    # Drawn: bins coloured by state (running, and blocked on a mutex, rwlock, barrier, join...).
    states = page_data(out.read_text())["states"]
    drawn = {c for p in page.find("path", inside="svg") for c in p.get("class", "").split()}
    for s in ("running", "mutex", "rwlock", "barrier", "join", "sem"):
        assert f"s{states.index(s)}" in drawn, f"no {s} span drawn: {drawn}"
    # The axis has ticks.
    assert len(page.find("line", inside="svg")) > 3
    # Objects: the first ones of ptt stat, with the same counts.
    objs = page.find("tr", "obj")
    assert objs and len(objs) == min(len(stat["objects"]), 25)
    for tr, o in zip(objs, stat["objects"]):
        assert (tr["data-name"], tr["data-kind"]) == (o["name"], o["kind"])
        assert int(tr["data-acquisitions"]) == o["acquisitions"]
        assert int(tr["data-contended"]) == o["contended"]
        assert int(tr["data-wait"]) == o["wait_ns"]["total"]
    kinds = {o["kind"] for o in stat["objects"]}
    assert {"mutex", "rwlock", "spin", "cond", "barrier", "sem"} <= kinds
    # Each object waited for has its histogram: bars whose counts add up to its waits.
    hists = page.find("svg", "hist")
    assert len(hists) == sum(1 for o in stat["objects"][:25] if o["wait_ns"]["count"])
    # Threads: the table in ptt stat's order, and a bar per blocked thread.
    thr = page.find("tr", "thr")
    assert [(r["data-name"], int(r["data-blocked"])) for r in thr] == \
        [(th["name"], th["blocked_ns"]) for th in stat["threads"]]
    bars = page.find("g", "bar", inside="svg")
    blocked = [th for th in stat["threads"] if th["blocked_ns"]]
    assert [b["data-name"] for b in bars] == [th["name"] for th in blocked[:30]]


def test_report_screenshot(mix, chromium, tmp_path):
    from PIL import Image

    t, out, stat = mix
    png = tmp_path / "report.png"
    _, took = browse(chromium, out, tmp_path, f"--screenshot={png}", "--window-size=1400,1100",
                     "--hide-scrollbars")
    assert took < 20
    img = Image.open(png).convert("RGB")
    assert img.size == (1400, 1100)
    colors = img.getcolors(maxcolors=1 << 22)
    assert colors, "too many colours to count"
    total = img.size[0] * img.size[1]
    white = sum(n for n, c in colors if min(c) >= 245)
    assert white < 0.95 * total, "the page is (almost) blank"
    many = [c for n, c in colors if n >= 40]
    assert len(many) >= 12, f"few distinct colours: {len(many)}"
    # The timeline's states, in the colours of the table (src/analysis/states.def).
    table = by_name()
    palette = {s: table[s].rgb for s in ("running", "mutex", "rwlock", "barrier", "join", "sem")}
    counts = {c: n for n, c in colors}
    seen = [s for s, rgb in palette.items() if counts.get(rgb, 0) >= 100]
    assert len(seen) >= 5, f"state colours seen: {seen}"


def test_report_zoomed(mix, chromium, tmp_path):
    """Zoomed in (the view comes from the address: #t=FROM,TO), the longest blocked spans are
    drawn exactly over the bins."""
    t, out, stat = mix
    data = page_data(out.read_text())
    row, state, start, length = max(data["spans"], key=lambda s: s[3])[:4]
    page = out.with_name("zoom.html")
    page.write_text(out.read_text())
    url = page.resolve().as_uri() + f"#t={start},{start + 100000}"
    dom, took = browse(chromium, page, tmp_path, "--dump-dom", "--window-size=1400,900",
                       url=url)
    assert took < 20
    p = Page(dom)
    assert "100.0 \u00b5s shown" in p.texts["range"]
    spans = [a for a in p.find("path", "span", inside="svg")]
    assert any(f"s{state}" in a["class"].split() for a in spans)
    rows = p.find("g", "row", inside="svg")
    assert len(rows) == len(data["rows"])


PROBE = """<script>
(function () {
    var out = [], sc = document.getElementById('tl-scroll'), r = sc.getBoundingClientRect();
    var x = r.left + 700, y = r.top + 8;
    function view(what) { out.push(what + ' ' + location.hash); }
    document.getElementById('z-in').click(); view('button+');
    document.getElementById('z-fit').click(); view('fit');
    sc.dispatchEvent(new WheelEvent('wheel', {deltaY: -400, ctrlKey: true, clientX: x,
        clientY: y, bubbles: true, cancelable: true})); view('wheel');
    sc.dispatchEvent(new MouseEvent('mousedown', {button: 0, clientX: x, clientY: y,
        bubbles: true}));
    window.dispatchEvent(new MouseEvent('mousemove', {clientX: x - 300, clientY: y}));
    window.dispatchEvent(new MouseEvent('mouseup', {})); view('drag');
    document.dispatchEvent(new KeyboardEvent('keydown', {key: '-'})); view('key-');
    document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowLeft'})); view('left');
    document.getElementById('tl').dispatchEvent(new MouseEvent('mousemove', {clientX: x,
        clientY: y, bubbles: true}));
    out.push('tip ' + document.getElementById('tip').textContent.replace(/\\n/g, ' | '));
    var pre = document.createElement('pre');
    pre.id = 'probe';
    pre.textContent = out.join('\\n');
    document.body.appendChild(pre);
})();
</script>
"""


def test_report_interactions(mix, chromium, tmp_path):
    """Buttons, Ctrl+wheel, drag and keys zoom and pan (the view is in the address), the pointer
    over a row tells about its thread: synthetic events, then what they did."""
    t, out, stat = mix
    page = tmp_path / "probe.html"
    page.write_text(out.read_text().replace("</body>", PROBE + "</body>"))
    dom, _ = browse(chromium, page, tmp_path, "--dump-dom", "--window-size=1400,1000")
    lines = dict(line.split(" ", 1) for line in Page(dom).texts["probe"].splitlines())
    dur = page_data(out.read_text())["info"]["duration_ns"]

    def view(what):
        m = re.fullmatch(r"#t=(\d+),(\d+)", lines[what])
        assert m, f"{what}: {lines[what]!r}"
        return int(m[1]), int(m[2])

    def width(what):
        a, b = view(what)
        return b - a

    assert abs(width("button+") - dur / 2) <= dur / 1000 + 1
    assert view("fit") == (0, dur)
    assert 0 < width("wheel") < 0.6 * dur  # exp(-0.8): zoomed in around the pointer
    (a, b), (c, d) = view("wheel"), view("drag")
    assert c > a and abs((d - c) - (b - a)) <= 2  # dragged left: later times, same width
    assert abs(width("key-") - 2 * width("drag")) <= 2 or view("key-")[1] == dur
    assert view("left")[0] < view("key-")[0] or view("key-")[0] == 0
    first = page_data(out.read_text())["rows"][0]["n"]
    assert lines["tip"].startswith(first + "  (pid") and "alive" in lines["tip"]


def test_report_names_escaped(tmp_path, chromium):
    """Names are text, never markup: a name that would end the script is shown as it is."""
    t = ptt_trace(tmp_path, [prog("report_mix"), "3"])
    evil = "</script><script>document.title='owned'</script>&amp;<b>\"x'"
    names = tmp_path / "names.txt"
    names.write_text(f"big_lock {evil}\n")
    out = tmp_path / "r.html"
    report(t.path, out, f"--names={names}")
    stat = stat_json(t.path, f"--names={names}")
    text = out.read_text()
    check_self_contained(text)
    assert evil not in text
    dom, _ = browse(chromium, out, tmp_path, "--dump-dom")
    page = Page(dom)
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title and title[1].startswith("ptt report"), "a script in a name ran"
    objs = page.find("tr", "obj")
    assert [o["data-name"] for o in objs] == [o["name"] for o in stat["objects"]]
    if any(o["name"] == evil for o in stat["objects"]):  # symbols were found (libdw)
        assert evil in [o["data-name"] for o in objs]


def test_report_thousand_threads(tmp_path, chromium):
    """1,000 short threads: a small page that Chromium draws quickly, a row per thread."""
    t = ptt_trace(tmp_path, [prog("report_load"), "1000", "5", "50"])
    out = tmp_path / "r.html"
    start = time.monotonic()
    report(t.path, out)
    assert time.monotonic() - start < 10
    size = out.stat().st_size
    assert size < 3 << 20, f"report of {size} bytes"
    check_self_contained(out.read_text())
    dom, took = browse(chromium, out, tmp_path, "--dump-dom", "--window-size=1400,1000")
    assert took < 20, f"chromium took {took:.1f} s"
    page = Page(dom)
    rows = page.find("g", "row", inside="svg")
    assert len(rows) == 1001
    assert sum(1 for r in rows if re.fullmatch(r"worker(#\d+)?", r["data-name"])) == 1000
    stat = stat_json(t.path)
    assert sorted(r["data-name"] for r in rows) == sorted(th["name"] for th in stat["threads"])
    assert page.find("tr", "obj")[0]["data-name"] == stat["objects"][0]["name"]
    png = tmp_path / "r.png"
    _, took = browse(chromium, out, tmp_path, f"--screenshot={png}", "--window-size=1200,900")
    assert took < 20
    from PIL import Image
    img = Image.open(png).convert("RGB")
    assert len([c for n, c in img.getcolors(maxcolors=1 << 22) if n >= 40]) >= 8


def test_report_size_bounded(tmp_path):
    """Ten times the events, hardly a bigger page: what it holds is aggregated (bins per thread,
    a bounded number of exact spans)."""
    sizes, events = [], []
    for iters in (2000, 20000):
        t = ptt_trace(tmp_path, [prog("report_load"), "8", str(iters), "8"], name=f"{iters}.ptt")
        out = tmp_path / f"{iters}.html"
        report(t.path, out)
        sizes.append(out.stat().st_size)
        events.append(page_data(out.read_text())["info"]["events"])
    assert events[1] >= 9 * events[0]
    assert sizes[1] < 1.5 * sizes[0], f"sizes {sizes} for {events} events"
    assert sizes[1] < 1 << 20


def test_report_damaged(tmp_path):
    """A truncated trace: the report shows what could be read, and says it is damaged."""
    t = ptt_trace(tmp_path, [prog("report_mix"), "5"])
    data = t.path.read_bytes()
    cut = tmp_path / "cut.ptt"
    cut.write_bytes(data[: len(data) * 2 // 3 + 5])
    out = tmp_path / "cut.html"
    p = report(cut, out, rc=2)
    assert "ptt report:" in p.stderr and "cut.ptt" in p.stderr
    text = out.read_text()
    page = check_self_contained(text)
    assert "damaged" in page.texts["error"]
    d = page_data(text)
    assert d["info"]["error"] and 0 < d["info"]["events"] < t.nevents + 100
    assert d["rows"]


def test_report_bad_input(tmp_path):
    junk = tmp_path / "junk.ptt"
    junk.write_bytes(b"not a trace at all\n" * 10)
    out = tmp_path / "junk.html"
    p = report(junk, out, rc=2)
    assert p.stderr.startswith("ptt report:")
    assert not out.exists()
    p = report(tmp_path / "missing.ptt", out, rc=2)
    assert "missing.ptt" in p.stderr
    t = ptt_trace(tmp_path, [prog("report_mix"), "2"])
    p = report(t.path, tmp_path / "no" / "such" / "dir.html", rc=2)
    assert "dir.html" in p.stderr
    p = run([PTT, "report", t.path])
    assert p.returncode == 2 and "usage" in p.stderr


def test_threads_end_with_their_process(tmp_path):
    """A process that exits with a thread blocked (exit_status exit 3 blocked): the thread's row
    ends at the process's PROCESS_EXIT, not at the end of the trace (0.3 s later: the shell
    sleeps); the first state is called what ptt knows of it, outside pthread calls, the last
    what ptt itself did, waiting for its buffer."""
    t = ptt_trace(tmp_path, ["sh", "-c", f"{prog('exit_status')} exit 3 blocked; sleep 0.3"])
    raw = run([PTT, "view", "--format=raw", "--event=PROCESS_EXIT,THREAD_START", t.path]).stdout
    lines = [l.split(" : ") for l in raw.splitlines()]
    starts = [l for l in lines if l[0].endswith(":THREAD_START")]
    assert len(starts) == 1  # the blocked thread
    pid, tid = int(starts[0][1]), int(starts[0][2])
    exit_ns = [round(float(l[0].split(":")[0]) * 1e9) for l in lines
               if l[0].endswith(":PROCESS_EXIT") and int(l[1]) == pid]
    assert len(exit_ns) == 1
    out = tmp_path / "r.html"
    report(t.path, out)
    data = page_data(out.read_text())
    row = [r for r in data["rows"] if r["p"] == pid and r["t"] == tid]
    assert len(row) == 1 and abs(row[0]["e"] - exit_ns[0]) <= 1
    assert data["info"]["duration_ns"] - row[0]["e"] > 200_000_000
    assert data["state_labels"][0] == "outside pthread calls"
    assert data["state_labels"][1:-1] == data["states"][1:-1]
    assert (data["states"][-1], data["state_labels"][-1]) == \
        ("ptt_buffer", "waiting for ptt's buffer")
