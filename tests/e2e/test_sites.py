"""Call sites: the site field (the return address) of lock, unlock, wait, post, signal, init,
destroy, create and join _IN events, named file:line by ptt view (human: "... at
names_prog.c:LINE", JSON: under "names"), LINE that of the call in the source (tests/progs/names_prog.c marks each with a
comment "site:KEY"); in the forked child too. name_api.c: sites of calls in main."""

import re

import pytest

from conftest import SITES, parse_raw, trace_prog, view
from names_util import PROGS_SRC, site_lines, view_json

L = site_lines("names_prog")
SRC = "names_prog.c"
THREADS = {"tid_main": "main", "tid_producer0": "producer", "tid_producer1": "producer",
           "tid_consumer": "consumer", "tid_idle": "idle"}
# (event, object (the key of its printed address), thread) -> the call's site:KEY
CALLS = {
    ("MUTEX_INIT_IN", "shard", "main"): "shard_init",
    ("SEM_INIT_IN", "items", "main"): "items_init",
    ("MUTEX_INIT_IN", "heap", "main"): "heap_init",
    ("MUTEX_INIT_IN", "job", "main"): "job_init",
    ("BARRIER_INIT_IN", "gate", "main"): "gate_init",
    ("MUTEX_LOCK_IN", "heap", "main"): "main_lock_heap",
    ("MUTEX_LOCK_IN", "fresh", "main"): "main_lock_fresh",
    ("MUTEX_LOCK_IN", "job", "main"): "main_lock_job",
    ("MUTEX_LOCK_IN", "renamed", "main"): "main_lock_renamed",
    ("BARRIER_WAIT_IN", "gate", "main"): "main_gate_wait",
    ("MUTEX_LOCK_IN", "queue_lock", "producer"): "producer_lock",
    ("SEM_POST_IN", "items", "producer"): "producer_post",
    ("MUTEX_LOCK_IN", "locks2", "producer"): "producer_lock_locks2",
    ("MUTEX_LOCK_IN", "shard1", "producer"): "producer_lock_shard",
    ("MUTEX_LOCK_IN", "cache_lock", "producer"): "producer_lock_cache",
    ("COND_SIGNAL_IN", "cache_cond", "producer"): "producer_signal",
    ("SEM_WAIT_IN", "items", "consumer"): "consumer_wait",
    ("MUTEX_LOCK_IN", "cache_lock", "consumer"): "consumer_lock_cache",
    ("COND_WAIT_IN", "cache_cond", "consumer"): "consumer_cond_wait",
    ("BARRIER_WAIT_IN", "gate", "consumer"): "consumer_gate_wait",
    ("MUTEX_LOCK_IN", "addr_named", "idle"): "idle_lock_addr",
    ("MUTEX_LOCK_IN", "symbol_named", "idle"): "idle_lock_symbol",
    ("MUTEX_LOCK_IN", "queue_lock", "child"): "child_lock",
    ("MUTEX_UNLOCK_IN", "queue_lock", "producer"): "producer_unlock",
    ("MUTEX_UNLOCK_IN", "locks2", "producer"): "producer_unlock_locks2",
    ("MUTEX_UNLOCK_IN", "shard1", "producer"): "producer_unlock_shard",
    ("MUTEX_UNLOCK_IN", "cache_lock", "producer"): "producer_unlock_cache",
    ("MUTEX_UNLOCK_IN", "cache_lock", "consumer"): "consumer_unlock_cache",
    ("MUTEX_UNLOCK_IN", "addr_named", "idle"): "idle_unlock_addr",
    ("MUTEX_UNLOCK_IN", "symbol_named", "idle"): "idle_unlock_symbol",
    ("MUTEX_UNLOCK_IN", "heap", "main"): "main_unlock_heap",
    ("MUTEX_UNLOCK_IN", "fresh", "main"): "main_unlock_fresh",
    ("MUTEX_UNLOCK_IN", "job", "main"): "main_unlock_job",
    ("MUTEX_UNLOCK_IN", "renamed", "main"): "main_unlock_renamed",
    ("MUTEX_UNLOCK_IN", "queue_lock", "child"): "child_unlock",
}
# How many times each marked call runs (the cond wait: once, or more on a spurious wake-up).
RUNS = {"shard_init": 3, "consumer_wait": 2, "create_producer": 2, "join_producer": 2,
        "producer_lock": 2, "producer_post": 2, "producer_lock_locks2": 2,
        "producer_lock_shard": 2, "producer_unlock": 2, "producer_unlock_locks2": 2,
        "producer_unlock_shard": 2}


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    t = trace_prog(tmp_path_factory.mktemp("sites"), "names_prog")
    return t, view_json(t.path)


def call_of(e, out):
    """The site:KEY of the call of a JSON _IN event of names_prog."""
    if e["pid"] == int(out["child"]):
        role = "child"
    else:
        role = next(r for k, r in THREADS.items() if int(out[k]) == e["tid"])
    first = next(iter(e["fields"].values()))
    obj = next((k for k in ("queue_lock", "cache_lock", "cache_cond", "locks2", "shard1",
                            "addr_named", "symbol_named", "renamed", "items", "heap", "fresh",
                            "job", "gate") if out[k] == first), None)
    if e["event"] == "MUTEX_INIT_IN" and role == "main" and obj in (None, "shard1"):
        obj = "shard"  # shards[0..2].lock
    return CALLS[(e["event"], obj, role)]


def test_sites_json(traced):
    """Every event with a site names it names_prog.c:LINE, LINE the call's, by order for the
    creates and joins; every marked call is seen, as many times as it runs."""
    t, events = traced
    out = t.out
    creates = iter(["create_producer", "create_producer", "create_consumer", "create_idle"])
    joins = iter(["join_producer", "join_producer", "join_consumer", "join_idle"])
    runs = {}
    for e in events:
        if "site" not in e["fields"]:
            continue
        assert e["event"] in SITES and e["kind"] == "IN", e
        if e["event"] == "THREAD_CREATE_IN":
            key = next(creates)
        elif e["event"] == "THREAD_JOIN_IN":
            key = next(joins)
        else:
            key = call_of(e, out)
        assert e["names"]["site"] == f"{SRC}:{L[key]}", (key, e)
        assert re.fullmatch(r"0x[0-9a-f]+", e["fields"]["site"])
        runs[key] = runs.get(key, 0) + 1
    assert set(runs) == set(L), set(L) ^ set(runs)
    for key, n in runs.items():
        want = RUNS.get(key, 1)
        assert n == want or (key == "consumer_cond_wait" and n >= 1), (key, n)


def test_sites_human(traced):
    """The human format ends each _IN line that has a site with " at names_prog.c:LINE.", and
    says it nowhere else; the raw format prints the return address, the JSON's."""
    t, events = traced
    human = view(t.path).splitlines()
    raw = parse_raw(view("--format=raw", t.path), keep_machine=True)
    assert len(human) == len(raw) == len(events)
    n = 0
    for h, r, e in zip(human, raw, events):
        if "site" in e["fields"]:
            assert h.endswith(f" at {e['names']['site']}."), h
            assert r.fields[SITES[r.name][0]] == e["fields"]["site"]
            n += 1
        else:
            assert f" at {SRC}:" not in h, h
    assert n >= len(L)


def test_sites_name_api(tmp_path):
    """name_api.c: each call's site is the line that makes it."""
    t = trace_prog(tmp_path, "name_api")
    src = (PROGS_SRC / "name_api.c").read_text().splitlines()
    line_of = {}
    for no, text in enumerate(src, 1):
        m = re.search(r'CALL\("(\w+)", (\w+)\(', text)
        if m:
            line_of[m[2]] = no
    routine = {"MUTEX_INIT_IN": "pthread_mutex_init", "COND_INIT_IN": "pthread_cond_init",
               "SEM_INIT_IN": "sem_init", "RWLOCK_INIT_IN": "pthread_rwlock_init",
               "MUTEX_LOCK_IN": "pthread_mutex_lock", "COND_SIGNAL_IN": "pthread_cond_signal",
               "SEM_WAIT_IN": "sem_wait", "SEM_POST_IN": "sem_post",
               "RWLOCK_WRLOCK_IN": "pthread_rwlock_wrlock",
               "MUTEX_UNLOCK_IN": "pthread_mutex_unlock",
               "RWLOCK_UNLOCK_IN": "pthread_rwlock_unlock",
               "MUTEX_DESTROY_IN": "pthread_mutex_destroy"}
    seen = set()
    for e in view_json(t.path):
        if "site" in e["fields"]:
            assert e["names"]["site"] == f"name_api.c:{line_of[routine[e['event']]]}", e
            seen.add(e["event"])
    assert seen == set(routine)
