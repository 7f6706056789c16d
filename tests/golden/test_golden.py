"""Golden outputs: what every reader prints of the traces in traces/ (recorded once by
make_traces.sh, MODULE_LOAD events padded so that code stays addresses on every machine) must
be what expected/ holds, byte for byte. A change of behaviour shows here as a diff; an intended
one is written with PTT_GOLDEN_UPDATE=1 and committed with the change that makes it.

Compared for each trace: view (human, raw, JSON, summary), stat (text, JSON, CSV), the Pajé
trace, the Chrome JSON, the CTF metadata and a digest of its streams, the SCO files, the data of
the HTML report, and each command's exit status and stderr (commands.txt)."""

import difflib
import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("PTT_BUILD") or HERE.parents[1] / "build")
PTT = BUILD / "bin" / "ptt"
TRACES = sorted((HERE / "traces").glob("*.ptt"))
UPDATE = os.environ.get("PTT_GOLDEN_UPDATE") == "1"
TIMEOUT = 60

# name in expected/TRACE/ -> (arguments, output file or None for stdout)
COMMANDS = {
    "view.txt": (["view"], None),
    "view-raw.txt": (["view", "--format=raw"], None),
    "view.jsonl": (["view", "--format=json"], None),
    "summary.txt": (["view", "--summary"], None),
    "stat.txt": (["stat"], None),
    "stat.json": (["stat", "--format=json"], None),
    "stat.csv": (["stat", "--format=csv"], None),
    "check.txt": (["check"], None),
    "check.json": (["check", "--format=json"], None),
    "paje.paje": (["paje"], "out.paje"),
    "chrome.json": (["export", "--format=chrome"], "out.json"),
    "ctf": (["export", "--format=ctf"], "ctf"),
    "sco": (["export", "--format=sco"], "sco"),
    "report": (["report"], "out.html"),
}


def run(args, trace, out, tmp):
    """Run ptt in the traces' directory (the file name as given shows in some outputs)."""
    cmd = [str(PTT), *args, trace.name] + (["-o", str(tmp / out)] if out else [])
    p = subprocess.run(cmd, cwd=trace.parent, capture_output=True, timeout=TIMEOUT)
    return p


def collect(name, out, p, tmp):
    """The files to compare for one command: {expected file name: bytes}."""
    if out is None:
        return {name: p.stdout}
    path = tmp / out
    if name == "ctf":
        files = {"ctf-metadata.txt": (path / "metadata").read_bytes()}
        digests = "".join(f"{hashlib.sha256(f.read_bytes()).hexdigest()}  {f.name}\n"
                          for f in sorted(path.iterdir()) if f.name != "metadata")
        files["ctf-streams.sha256"] = digests.encode()
        return files
    if name == "sco":
        text = b"".join(b"== %s ==\n" % f.name.encode() + f.read_bytes()
                        for f in sorted(path.iterdir()))
        return {"sco.txt": text}
    if name == "report":
        html = path.read_text()
        m = re.search(r'<script type="application/json" id="ptt-data">(.*?)</script>', html, re.S)
        assert m, "the report has no data element"
        return {"report-data.json": m.group(1).encode()}
    return {name: path.read_bytes()}


def outputs(trace, tmp):
    files, log = {}, []
    for name, (args, out) in COMMANDS.items():
        p = run(args, trace, out, tmp)
        log.append(f"$ ptt {' '.join(args)} {trace.name}{' -o OUT' if out else ''}\n"
                   f"exit {p.returncode}\n{p.stderr.decode(errors='replace')}")
        if p.returncode == 0 or (out is None and p.stdout):
            files.update(collect(name, out, p, tmp))
    files["commands.txt"] = "".join(log).encode()
    return files


def show_diff(name, want, got):
    lines = list(difflib.unified_diff(want.decode(errors="replace").splitlines(),
                                      got.decode(errors="replace").splitlines(),
                                      f"expected/{name}", f"now/{name}", lineterm="", n=1))
    return "\n".join(lines[:80]) + ("\n..." if len(lines) > 80 else "")


@pytest.mark.parametrize("trace", TRACES, ids=[t.stem for t in TRACES])
def test_golden(trace, tmp_path):
    expected = HERE / "expected" / trace.stem
    got = outputs(trace, tmp_path)
    if UPDATE:
        expected.mkdir(parents=True, exist_ok=True)
        for f in expected.iterdir():
            f.unlink()
        for name, data in got.items():
            (expected / name).write_bytes(data)
        return
    have = {f.name for f in expected.iterdir()} if expected.is_dir() else set()
    assert have == set(got), f"outputs differ in kind: expected {sorted(have)}, now {sorted(got)}"
    diffs = [show_diff(n, (expected / n).read_bytes(), got[n]) for n in sorted(got)
             if (expected / n).read_bytes() != got[n]]
    assert not diffs, "\n\n".join(diffs)


def test_traces_present():
    assert len(TRACES) >= 7, f"tests/golden/traces holds {len(TRACES)} traces"
