"""ptt export --format=tables: the files are gzip-compressed CSV with the header schema.sql
declares; the events and their fields are ptt view's; the waits and holds add up to ptt stat's
numbers exactly, summed here and by the queries of docs/export.md run in DuckDB (through Node's
@duckdb/node-api, installed into BUILD/npm by scripts/test-deps); bad output, --help."""

import collections
import csv
import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import BUILD, PTT, SOURCE, parse_raw, prog, ptt_trace, run, trace_prog, view
from names_util import ptt_usage_error, stat_json

NPM = BUILD / "npm"
RUNNER = Path(__file__).resolve().parent / "duckdb_run.cjs"
STAT_KINDS = {"mutex", "rwlock", "spin", "sem", "cond", "barrier"}


def export(trace, out):
    p = run([PTT, "export", "--format=tables", trace, "-o", out])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    return out


@pytest.fixture(scope="module", params=["contend", "report_mix"])
def traced(request, tmp_path_factory):
    """A program with contention traced (contend: a mutex, a rwlock, a barrier, a semaphore;
    report_mix: every kind of wait), its tables and ptt stat's JSON."""
    d = tmp_path_factory.mktemp(request.param)
    if request.param == "contend":
        t = trace_prog(d, "contend", 5, 20)
    else:
        t = ptt_trace(d, [prog("report_mix"), "10"])
    return t, export(t.path, d / "tables"), stat_json(t.path)


def schema(out):
    """{table: (file, [(column, type)])} as schema.sql declares them."""
    text = (out / "schema.sql").read_text()
    tables = {}
    for m in re.finditer(r"CREATE OR REPLACE VIEW (\w+) AS SELECT \* FROM read_csv\('([^']+)',"
                         r"(.*?)\}\);", text, re.S):
        tables[m[1]] = (m[2], re.findall(r"'(\w+)': '(\w+)'", m[3]))
    assert tables, text
    return tables


INT_TYPES = {"BIGINT", "INTEGER", "UBIGINT"}


def table(out, name):
    """The rows of a table as dicts, typed as schema.sql says (an empty value: None)."""
    file, cols = schema(out)[name]
    with gzip.open(out / file, "rt", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == [c for c, _ in cols], (name, rows[0])
    typed = []
    for r in rows[1:]:
        assert len(r) == len(cols), (name, r)
        row = {}
        for (c, t), v in zip(cols, r):
            if t in INT_TYPES:
                row[c] = int(v) if v != "" else None
            elif t == "BOOLEAN":
                assert v in ("true", "false"), (name, c, v)
                row[c] = v == "true"
            else:
                row[c] = v
        typed.append(row)
    return typed


def test_files(traced):
    """Every table of schema.sql is its gzip-compressed CSV file, with the header of the
    documented columns; DIR holds nothing else."""
    _, out, _ = traced
    tables = schema(out)
    assert list(tables) == ["events", "fields", "threads", "processes", "objects", "sites",
                            "waits", "holds"]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f for f, _ in tables.values()] + ["schema.sql"])
    doc = (SOURCE / "docs" / "export.md").read_text()
    for name, (file, cols) in tables.items():
        assert file == f"{name}.csv.gz"
        assert (out / file).read_bytes()[:2] == b"\x1f\x8b", file
        header = gzip.decompress((out / file).read_bytes()).decode().split("\n", 1)[0]
        assert header == ",".join(c for c, _ in cols)
        for c, _ in cols:  # docs/export.md names every column of the table
            row = next(line for line in doc.splitlines() if line.startswith(f"| `{name}` |"))
            assert f"`{c}`" in row, (name, c)


def test_events_are_views(traced):
    """The events are ptt view's, in its order, with its times, pids, tids, names; their
    fields are its raw fields."""
    t, out, _ = traced
    raw = parse_raw(view("--format=raw", t.path), keep_machine=True)
    events = table(out, "events")
    assert [(e["event_id"], e["ns"], e["event"], e["pid"], e["tid"]) for e in events] == [
        (i, r.ns, r.name, r.pid, r.tid) for i, r in enumerate(raw)]
    fields = collections.defaultdict(list)
    for f in table(out, "fields"):
        fields[f["event_id"]].append((f["position"], f["value"]))
    for i, r in enumerate(raw):
        got = sorted(fields.get(i, []))
        assert [p for p, _ in got] == list(range(len(got)))
        assert tuple(v for _, v in got) == r.fields, (r, got)
    locks = [e for e in events if e["event"] == "MUTEX_LOCK_IN"]
    assert locks and all(e["object"] and e["site"] and e["class"] == "mutex" and
                         e["routine"] == "pthread_mutex_lock" and e["kind"] == "IN"
                         for e in locks)
    assert all(e["ret"] is not None for e in events if e["event"] == "MUTEX_LOCK_OUT")


def sums(out):
    """ptt stat's numbers summed in Python from the tables: objects by (pid, address), threads
    by (pid, tid)."""
    objs = collections.defaultdict(lambda: collections.Counter(wait_max=0, hold_max=0))
    for w in table(out, "waits"):
        if not w["counted"]:
            continue
        o, d = objs[(w["pid"], w["object"])], w["end_ns"] - w["begin_ns"]
        o["acquisitions"] += w["acquired"]
        o["contended"] += w["contended"]
        o["wait_count"] += 1
        o["wait_total"] += d
        o["wait_max"] = max(o["wait_max"], d)
    for h in table(out, "holds"):
        o, d = objs[(h["pid"], h["object"])], h["end_ns"] - h["begin_ns"]
        o["hold_count"] += 1
        o["hold_total"] += d
        o["hold_max"] = max(o["hold_max"], d)
    blocked = collections.Counter()
    for w in table(out, "waits"):
        if w["blocked"]:
            blocked[(w["pid"], w["tid"])] += w["end_ns"] - w["begin_ns"]
    return objs, blocked


def stat_numbers(o):
    w, h = o["wait_ns"], o["hold_ns"]
    return (o["acquisitions"], o["contended"], w["count"], w["total"], w["mean"], w["max"],
            h["count"], h["total"], h["mean"], h["max"])


def test_sums_are_stat(traced):
    """Summed here, the waits and holds give every object's acquisitions, contended
    acquisitions, wait and hold count, total, mean and max, and every thread's blocked time, as
    ptt stat does; objects and threads are named as it names them."""
    _, out, s = traced
    objs, blocked = sums(out)
    assert set(objs) == {(o["pid"], int(o["address"], 16)) for o in s["objects"]}
    names = {(o["pid"], o["address"]): (o["kind"], o["name"]) for o in table(out, "objects")}
    assert len(s["objects"]) >= 4
    for o in s["objects"]:
        key = (o["pid"], int(o["address"], 16))
        x = objs[key]
        n = (x["acquisitions"], x["contended"], x["wait_count"], x["wait_total"],
             x["wait_total"] // x["wait_count"] if x["wait_count"] else 0, x["wait_max"],
             x["hold_count"], x["hold_total"],
             x["hold_total"] // x["hold_count"] if x["hold_count"] else 0, x["hold_max"])
        assert n == stat_numbers(o), o["name"]
        assert names[key] == (o["kind"], o["name"])
    threads = {(t["pid"], t["tid"]): t for t in table(out, "threads")}
    assert len(threads) == len(s["threads"])
    for t in s["threads"]:
        mine = threads[(t["pid"], t["tid"])]
        assert (mine["name"], mine["end_ns"] - mine["start_ns"], blocked[(t["pid"], t["tid"])]) \
            == (t["name"], t["lifetime_ns"], t["blocked_ns"])


def test_threads_processes_sites(traced):
    """The threads' creators and pthread_t, the process's exit, the call sites' lines."""
    t, out, s = traced
    threads = table(out, "threads")
    procs = table(out, "processes")
    assert len(procs) == 1 and procs[0]["exit_code"] == 0 and procs[0]["signal"] is None
    pid = procs[0]["pid"]
    workers = [x for x in threads if x["tid"] != pid]
    assert workers and all(x["creator"] == pid and x["pthread"] for x in workers)
    joins = {w["object"] for w in table(out, "waits") if w["call"] == "pthread_join"}
    assert joins and joins <= {x["pthread"] for x in workers}
    sites = table(out, "sites")
    for site in sites:
        if site["line"] is not None:
            assert site["name"] == f"{site['file']}:{site['line']}"
    # The program's own call sites, with their function (main and the thread routines).
    source = f"{Path(t.argv[t.argv.index('--') + 1]).name}.c"
    mine = [x for x in sites if x["file"] == source]
    assert mine and all(x["function"] for x in mine)
    assert "main" in {x["function"] for x in mine}


def documented_queries():
    """The SQL blocks of docs/export.md that reproduce ptt stat: {name: sql}."""
    doc = (SOURCE / "docs" / "export.md").read_text()
    queries = {m[1]: m[0] for m in re.finditer(r"-- ptt stat: ([\w ]+)\n.*?(?=\n```)", doc, re.S)}
    assert set(queries) == {"objects", "threads", "call sites"}, list(queries)
    return queries


def duckdb(out, queries):
    """Run schema.sql then queries in DuckDB, in out: {name: [row dicts]}."""
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed (Debian: nodejs; scripts/test-deps installs it)")
    if not (NPM / "node_modules" / "@duckdb" / "node-api").is_dir():
        pytest.skip(f"@duckdb/node-api is not in {NPM} (npm install --prefix {NPM} "
                    "@duckdb/node-api; scripts/test-deps does it as root)")
    job = {"dir": str(out), "setup": (out / "schema.sql").read_text(), "queries": queries}
    p = run([node, RUNNER, NPM], input=json.dumps(job))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_duckdb_queries_are_stat(traced):
    """The queries of docs/export.md, run by DuckDB over schema.sql, give ptt stat's objects
    (acquisitions, contended, wait and hold count, total, mean, max) in its order, its threads'
    lifetime and blocked time in its order, and the call sites of every object waited for from
    4 return addresses at most."""
    _, out, s = traced
    r = duckdb(out, documented_queries())
    got = [(o["kind"], o["name"], o["address"], o["pid"], int(o["acquisitions"]),
            int(o["contended"]), int(o["wait_count"]), int(o["wait_total_ns"]),
            int(o["wait_mean_ns"]), int(o["wait_max_ns"]), int(o["hold_count"]),
            int(o["hold_total_ns"]), int(o["hold_mean_ns"]), int(o["hold_max_ns"]))
           for o in r["objects"]]
    assert got == [(o["kind"], o["name"], o["address"], o["pid"]) + stat_numbers(o)
                   for o in s["objects"]]
    assert [(t["pid"], t["tid"], t["name"], int(t["lifetime_ns"]), int(t["blocked_ns"]))
            for t in r["threads"]] == [(t["pid"], t["tid"], t["name"], t["lifetime_ns"],
                                        t["blocked_ns"]) for t in s["threads"]]
    addresses = collections.defaultdict(set)
    for w in table(out, "waits"):
        if w["blocked"] and w["counted"] and w["site"]:
            addresses[w["object"]].add(w["site"])
    sites = collections.defaultdict(dict)
    for x in r["call sites"]:
        sites[x["object"]][x["site"]] = (int(x["waits"]), int(x["wait_ns"]))
    checked = 0
    for o in s["objects"]:
        if len(addresses[int(o["address"], 16)]) <= 4:
            assert sites[o["name"]] == {x["site"]: (x["waits"], x["wait_ns"])
                                        for x in o["sites"]}, o["name"]
            checked += bool(o["sites"])
    assert checked >= 2


def test_not_a_trace(tmp_path):
    """Not a trace: one line, exit status 2, DIR not made."""
    bad = tmp_path / "bad.ptt"
    bad.write_bytes(b"not a trace\n" * 10)
    ptt_usage_error("export", "--format=tables", bad, "-o", tmp_path / "out", cmd="export")
    assert not (tmp_path / "out").exists()


def test_bad_output_dir(traced, tmp_path):
    """DIR a file, or under a file: one line naming it, exit status 2."""
    t, _, _ = traced
    plain = tmp_path / "plain"
    plain.write_text("x")
    line = ptt_usage_error("export", "--format=tables", t.path, "-o", plain, cmd="export")
    assert str(plain) in line and "Not a directory" in line
    line = ptt_usage_error("export", "--format=tables", t.path, "-o", plain / "sub",
                           cmd="export")
    assert str(plain / "sub") in line
    assert plain.read_text() == "x"


def test_no_link_followed(traced, tmp_path):
    """A symbolic link planted in DIR in place of a table is not followed: one line, exit status
    2, its target untouched; DIR as a link is refused too. A new DIR and its files are private."""
    t, _, _ = traced
    victim = tmp_path / "victim"
    victim.write_text("keep")
    out = tmp_path / "planted"
    out.mkdir()
    for name in ("events.csv.gz", "events.csv"):
        (out / name).symlink_to(victim)
    line = ptt_usage_error("export", "--format=tables", t.path, "-o", out, cmd="export")
    assert "events.csv" in line
    assert victim.read_text() == "keep"
    linked = tmp_path / "linked"
    linked.symlink_to(tmp_path / "elsewhere_dir", target_is_directory=True)
    (tmp_path / "elsewhere_dir").mkdir()
    line = ptt_usage_error("export", "--format=tables", t.path, "-o", linked, cmd="export")
    assert str(linked) in line
    assert not any((tmp_path / "elsewhere_dir").iterdir())
    fresh = tmp_path / "fresh"
    export(t.path, fresh)
    assert fresh.stat().st_mode & 0o777 == 0o700
    assert {f.stat().st_mode & 0o777 for f in fresh.iterdir()} == {0o600}


def test_help_lists_tables():
    p = run([PTT, "export", "--help"])
    assert p.returncode == 0
    assert re.search(r"^\s+tables\s+relational tables for DuckDB", p.stdout, re.M), p.stdout


def test_names_not_ascii(tmp_path):
    """Names that are not ASCII, not UTF-8, or hold quotes, commas, tabs (json_names): every
    table is valid UTF-8, and the objects and threads are named as ptt stat --format=json names
    them (each ill-formed part as U+FFFD), read back by Python's csv and by DuckDB."""
    t = ptt_trace(tmp_path, [prog("json_names")])
    out = export(t.path, tmp_path / "tables")
    s = stat_json(t.path)
    for file, _ in schema(out).values():
        gzip.decompress((out / file).read_bytes()).decode("utf-8")  # strict: fails if not UTF-8
    want_objects = {(o["pid"], int(o["address"], 16)): o["name"] for o in s["objects"]}
    want_threads = {(x["pid"], x["tid"]): x["name"] for x in s["threads"]}
    assert any("\ufffd" in n for n in want_objects.values())
    assert any('"' in n for n in want_threads.values())
    objects = {(o["pid"], o["address"]): o["name"] for o in table(out, "objects")}
    threads = {(x["pid"], x["tid"]): x["name"] for x in table(out, "threads")}
    assert {k: objects[k] for k in want_objects} == want_objects
    assert threads == want_threads
    r = duckdb(out, {"objects": "SELECT pid, address, name FROM objects",
                     "threads": "SELECT pid, tid, name FROM threads"})
    assert {(o["pid"], int(o["address"])): o["name"] for o in r["objects"]} == objects
    assert {(x["pid"], x["tid"]): x["name"] for x in r["threads"]} == threads


def test_truncated(tmp_path):
    """A truncated trace: the tables hold what could be read, schema.sql is written, one line
    says what was wrong, exit status 2."""
    t = trace_prog(tmp_path, "prodcons", 1, 1, 3000, 2)
    data = t.path.read_bytes()
    cut = tmp_path / "cut.ptt"
    cut.write_bytes(data[:len(data) * 2 // 3])
    p = run([PTT, "export", "--format=tables", cut, "-o", tmp_path / "out"])
    assert p.returncode == 2 and p.stderr.startswith("ptt export: ")
    assert len(p.stderr.splitlines()) == 1
    assert 0 < len(table(tmp_path / "out", "events")) < len(t.events)


def test_window_sums_are_stat(traced, tmp_path):
    """With --from in the middle of the trace, the waits and holds still add up to what ptt stat
    counts with the same --from: a wait or a hold begun before counts from --from, in both."""
    t, _, s = traced
    middle = f"{s['duration_ns'] / 2e9:.9f}"
    out = tmp_path / "window"
    p = run([PTT, "export", "--format=tables", f"--from={middle}", t.path, "-o", out])
    assert p.returncode == 0 and p.stderr == "", p.stderr
    p = run([PTT, "stat", "--format=json", f"--from={middle}", t.path])
    assert p.returncode == 0, p.stderr
    sw = json.loads(p.stdout)
    objs, _ = sums(out)
    counted = [o for o in sw["objects"] if o["wait_ns"]["count"] or o["hold_ns"]["count"]]
    assert counted
    for o in counted:
        x = objs[(o["pid"], int(o["address"], 16))]
        n = (x["acquisitions"], x["contended"], x["wait_count"], x["wait_total"],
             x["wait_total"] // x["wait_count"] if x["wait_count"] else 0, x["wait_max"],
             x["hold_count"], x["hold_total"],
             x["hold_total"] // x["hold_count"] if x["hold_count"] else 0, x["hold_max"])
        assert n == stat_numbers(o), o["name"]
