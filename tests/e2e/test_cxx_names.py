"""Names of a C++ program (tests/progs/cxx_names.cc, built when CMake finds a C++ compiler):
demangled names of members, static locals (f1::lock) and functions; std::threads named after the
lambda or class they run, or the function given as a pointer (without arguments, with arguments,
a static member function, a member function, an extern "C" function); the program's own line for calls that libstdc++'s
inline wrappers make (std::lock_guard, std::unique_lock), with the header's line as detail;
objects that come to the same name numbered (#2, #3); stat's thread table with the tids. The
same program without debug information, stripped, and stripped with its debug information in a
separate file found through .gnu_debuglink."""

import re

import pytest

from conftest import PROGS, trace_prog, view
from names_util import PROGS_SRC, ptt_ok, stat_json, view_json

SRC = "cxx_names.cc"
if not (PROGS / "cxx_names").exists():
    pytest.skip("no C++ compiler: cxx_names was not built", allow_module_level=True)


def lines():
    """{KEY: line} of the comments "site:KEY" of cxx_names.cc."""
    out = {}
    for no, text in enumerate((PROGS_SRC / SRC).read_text().splitlines(), 1):
        for key in re.findall(r"/\* site:(\w+) \*/", text):
            out[key] = no
    return out


L = lines()
THREADS = {"tid_main": "main", "tid_taker": "main::{lambda()#1}",
           "tid_putter": "main::{lambda()#2}", "tid_worker": "worker",
           "tid_functor": "Depositor", "tid_paid": "paid", "tid_logged": "logged",
           "tid_open": "Teller::open", "tid_c_worker": "c_worker", "tid_serve": "Teller::serve",
           # std::async's thread runs its state's _M_run (before: named by that member
           # function's pointer type, whose "(*)(" of int (*)(int) was taken for its own)
           "tid_async": "std::__future_base::_Async_state_impl<std::thread::_Invoker<"
                        "std::tuple<int (*)(int), int> >, int>::_M_run"}
HEAP = f"mutex@{SRC}:{L['deposit_lock']}"
OBJECTS = {"account": "account.m", "box_m": "box.m", "box_cv": "box.cv", "f1_lock": "f1::lock",
           "f2_lock": "f2::lock", "heap0": HEAP, "heap1": HEAP + "#2", "heap2": HEAP + "#3",
           "vault": "bank::(anonymous namespace)::vault"}  # not bank::::vault
# (event, object key, thread key) -> the site:KEY of the program's line
CALLS = {
    ("MUTEX_LOCK_IN", "box_m", "tid_taker"): "take_lock",
    ("COND_WAIT_IN", "box_cv", "tid_taker"): "take_wait",
    ("MUTEX_LOCK_IN", "box_m", "tid_putter"): "put_lock",
    ("COND_SIGNAL_IN", "box_cv", "tid_putter"): "put_notify",
    ("MUTEX_LOCK_IN", "account", "tid_worker"): "deposit_lock",
    ("MUTEX_LOCK_IN", "f1_lock", "tid_worker"): "f1_lock",
    ("MUTEX_LOCK_IN", "f2_lock", "tid_worker"): "f2_lock",
    ("MUTEX_UNLOCK_IN", "f2_lock", "tid_worker"): "f2_unlock",
    ("MUTEX_LOCK_IN", "account", "tid_functor"): "deposit_lock",
    ("MUTEX_LOCK_IN", "heap0", "tid_main"): "deposit_lock",
    ("MUTEX_LOCK_IN", "heap2", "tid_main"): "deposit_lock",
}


def traced_as(tmp_path_factory, name):
    t = trace_prog(tmp_path_factory.mktemp(name), name)
    return t, view_json(t.path)


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    return traced_as(tmp_path_factory, "cxx_names")


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    return traced_as(tmp_path_factory, "cxx_names_split")


def check_names(t, events):
    """Thread and object names, sites and their header detail, as the full build gives them."""
    out = t.out
    tids = {int(out[k]): v for k, v in THREADS.items()}
    keys = {out[k]: k for k in OBJECTS}
    thread_key = {int(out[k]): k for k in THREADS}
    found = set()
    for e in events:
        assert e["thread"] == tids[e["tid"]], e
        f = next((k for k in ("cond", "mutex") if k in e["fields"]), None)
        if f and e["fields"][f] in keys:
            assert e["names"][f] == OBJECTS[keys[e["fields"][f]]], e
        call = (e["event"], keys.get(e["fields"].get(f or "")), thread_key[e["tid"]])
        if call in CALLS:
            assert e["names"]["site"] == f"{SRC}:{L[CALLS[call]]}", e
            if e["event"].startswith("MUTEX_"):  # inlined from gthr-default.h
                assert re.fullmatch(r"gthr-default\.h:\d+", e["names"]["site_detail"]), e
            found.add(call)
    assert found == set(CALLS)


def test_names(full):
    """Every event of the debug build: the names above, exactly."""
    check_names(*full)


def test_human(full):
    """ptt view's text: the thread with its tid, the program's line with the header's."""
    t, _ = full
    out = t.out
    human = view(t.path)
    tid = out["tid_worker"]
    assert (f"Thread worker ({tid}) enters function pthread_mutex_lock (mutex f1::lock) at "
            f"{SRC}:{L['f1_lock']} (via gthr-default.h:") in human


def test_stat(full):
    """ptt stat: every object under its own name (the heap ones numbered), every thread with
    its tid beside its name in the text table."""
    t, _ = full
    out = t.out
    st = stat_json(t.path)
    names = sorted(o["name"] for o in st["objects"])
    assert names == sorted(OBJECTS.values())
    assert sorted((th["tid"], th["name"]) for th in st["threads"]) == \
        sorted((int(out[k]), v) for k, v in THREADS.items())
    text = ptt_ok("stat", t.path).splitlines()
    head = next(i for i, line in enumerate(text) if line.startswith("pid ") and " tid " in line)
    rows = {}
    for line in text[head + 1:]:
        if not line.strip():
            break
        m = re.match(r"(\d+) +(\d+) +(.+?) +[\d.]+(?:ns|us|ms|s) ", line)
        assert m, line
        rows[int(m[2])] = m[3]
    assert rows == {int(out[k]): v for k, v in THREADS.items()}


def test_check(full):
    """std::mutex has no init call by design: the calls inside libstdc++'s headers are no
    misuse, now that their site is the program's line."""
    t, _ = full
    assert "nothing found" in ptt_ok("check", t.path)


def test_split_debug_file(split):
    """Stripped, with its debug information in a separate file (.gnu_debuglink): the same
    names as the debug build."""
    check_names(*split)


def test_without_debug_info(tmp_path_factory):
    """Without debug information: symbols demangled (the static locals as f1::lock), the
    threads by what they run (the symbol table names the static functions), call sites by
    function; heap objects numbered."""
    t, events = traced_as(tmp_path_factory, "cxx_names_nodebug")
    out = t.out
    want = {"account": "account", "box_m": "box", "f1_lock": "f1::lock", "f2_lock": "f2::lock",
            "heap0": "mutex@main", "heap1": "mutex@main#2", "heap2": "mutex@main#3"}
    keys = {out[k]: k for k in want}
    tids = {int(out[k]): v for k, v in THREADS.items()}
    seen = set()
    for e in events:
        assert e["thread"] == tids[e["tid"]], e
        if e["event"] == "MUTEX_LOCK_IN" and e["fields"]["mutex"] in keys:
            k = keys[e["fields"]["mutex"]]
            assert e["names"]["mutex"] == want[k], e
            seen.add(k)
    assert seen == set(want)
    sites = {e["names"]["site"] for e in events if e["event"] == "MUTEX_LOCK_IN"}
    assert {"worker", "main"} <= sites


def test_stripped(tmp_path_factory):
    """Stripped of every symbol but the dynamic ones: code as module+0xOFFSET, the offset of
    the call in the file; the heap objects still told apart."""
    t, events = traced_as(tmp_path_factory, "cxx_names_stripped")
    out = t.out
    heap = [out[f"heap{i}"] for i in range(3)]
    names = {}
    for e in events:
        if e["event"] == "MUTEX_LOCK_IN" and e["fields"]["mutex"] in heap:
            assert re.fullmatch(r"cxx_names_stripped\+0x[0-9a-f]+", e["names"]["site"]), e
            names[e["fields"]["mutex"]] = e["names"]["mutex"]
    base = names[heap[0]]
    assert re.fullmatch(r"mutex@cxx_names_stripped\+0x[0-9a-f]+", base)
    assert [names[h] for h in heap] == [base, base + "#2", base + "#3"]
