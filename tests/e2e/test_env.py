"""ptt trace's environment: PTT_DIR (where ptt.data goes without -o), PTT_BUFFER (the pool's
size, as the file's INFO records it), PTT_EVENTS (the classes); the options override them."""

import collections
import os
import subprocess

import pytest

from conftest import PTT, SUMMARY_RE, TIMEOUT, parse_raw, prog, ptt_trace, run, view
from robust_util import read_info


def env_with(**kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTT_") or k in (
        "PTT_BUILD", "PTT_SOURCE")}
    env.update(kw)
    return env


@pytest.mark.parametrize("use_dir", [True, False])
def test_default_file_name(tmp_path, use_dir):
    """Without -o: ptt.data in $PTT_DIR, else in the current directory; the readers read it
    when given no file."""
    d, cwd = tmp_path / "traces", tmp_path / "cwd"
    d.mkdir()
    cwd.mkdir()
    env = env_with(PTT_DIR=str(d)) if use_dir else env_with()
    p = subprocess.Popen([PTT, "trace", "--", prog("idle_sleep"), "0"], env=env, cwd=cwd,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = p.communicate(timeout=TIMEOUT)
    assert p.returncode == 0 and stdout == "slept=0\n", stderr
    shown = f"{d}/ptt.data" if use_dir else "ptt.data"
    lines = stderr.splitlines()
    assert lines[0] == f"ptt: session ptt-{os.getuid()}-{p.pid} records into {shown}"
    m = SUMMARY_RE.match(lines[-1])
    assert m and m[3] == shown
    path = (d if use_dir else cwd) / "ptt.data"
    assert sorted(os.listdir(d)) == ([path.name] if use_dir else [])
    assert sorted(os.listdir(cwd)) == ([] if use_dir else [path.name])
    assert path.stat().st_size == int(m[2])
    assert [e.name for e in parse_raw(view("--format=raw", path))].count("MUTEX_LOCK_IN") == 2
    r = subprocess.run([PTT, "view", "--format=raw"], env=env, cwd=cwd, capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert r.returncode == 0 and r.stdout == view("--format=raw", path)


def pool_info(tmp_path, name, opts=(), **env):
    t = ptt_trace(tmp_path, [prog("idle_sleep"), 0], opts=opts, name=name, env=env_with(**env))
    info = read_info(t.path)
    return int(info["pool_size"]), int(info["subbuffers"]), int(info["subbuffer_size"])


def test_ptt_buffer(tmp_path):
    env2 = pool_info(tmp_path, "e2.ptt", PTT_BUFFER="2M")
    opt2 = pool_info(tmp_path, "o2.ptt", opts=["--buffer=2M"])
    env4 = pool_info(tmp_path, "e4.ptt", PTT_BUFFER="4M")
    over = pool_info(tmp_path, "ov.ptt", opts=["--buffer=2M"], PTT_BUFFER="4M")
    assert env2 == opt2 == over  # the option wins over the environment
    size, n, sub = env2
    assert sub == 32768 and n * sub < size <= 2 << 20 and n >= (2 << 20) // sub - 2
    assert env4[1] > 2 * n - 2 and size < env4[0] <= 4 << 20
    p = run([PTT, "trace", "-o", tmp_path / "x.ptt", "--", prog("idle_sleep"), 0],
            env=env_with(PTT_BUFFER="12q"))
    assert p.returncode == 125 and p.stdout == "" and len(p.stderr.splitlines()) == 1
    assert "PTT_BUFFER" in p.stderr and not (tmp_path / "x.ptt").exists()


def test_ptt_events(tmp_path):
    t = ptt_trace(tmp_path, [prog("idle_sleep"), 0], env=env_with(PTT_EVENTS="mutex"))
    assert read_info(t.path)["events"] == "mutex"
    lock = ["MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT"]
    assert collections.Counter(e.name for e in t.events) == collections.Counter(
        ["PROCESS_START", "PROCESS_EXIT"] + lock * 2)
    t = ptt_trace(tmp_path, [prog("idle_sleep"), 0], opts=["--events=thread"], name="o.ptt",
                  env=env_with(PTT_EVENTS="mutex"))
    assert read_info(t.path)["events"] == "thread"
    assert collections.Counter(e.name for e in t.events) == collections.Counter(
        ["PROCESS_START", "PROCESS_EXIT", "THREAD_CREATE_IN", "THREAD_CREATE_OUT",
         "THREAD_START", "THREAD_END", "THREAD_JOIN_IN", "THREAD_JOIN_OUT"])
    p = run([PTT, "trace", "-o", tmp_path / "x.ptt", "--", prog("idle_sleep"), 0],
            env=env_with(PTT_EVENTS="mutex,nosuch"))
    assert p.returncode == 125 and len(p.stderr.splitlines()) == 1 and "nosuch" in p.stderr
