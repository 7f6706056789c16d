"""Producers and consumers over a bounded queue guarded by semaphores only (the paper's own
self-test; tests/e2e/test_prodcons.py has the condvar version): the exact numbers of waits and
posts, on each semaphore, by each thread; each wait that blocks acquires in the end."""

import collections

import pytest

from conftest import trace_prog


@pytest.mark.parametrize("producers,consumers,items,size", [(1, 1, 3000, 1), (2, 2, 2000, 4),
                                                            (3, 1, 1000, 2)])
def test_prodcons_sem(tmp_path, producers, consumers, items, size):
    t = trace_prog(tmp_path, "prodcons_sem", producers, consumers, items, size)
    o = t.out
    total = producers * items
    assert o["sum"] == str(total * (total + 1) // 2)
    empty, full, lock = o["empty"], o["full"], o["lock"]
    nthreads = producers + consumers
    c = t.counts()
    ev = t.events
    # Each item: its producer waits on empty and lock, posts lock and full; its consumer waits
    # on full and lock, posts lock and empty.
    blocks = c["SEM_BLOCK"]
    assert c == collections.Counter({
        "PROCESS_START": 1, "PROCESS_EXIT": 1,
        "SEM_INIT_IN": 3, "SEM_INIT_OUT": 3, "SEM_DESTROY_IN": 3, "SEM_DESTROY_OUT": 3,
        "THREAD_CREATE_IN": nthreads, "THREAD_CREATE_OUT": nthreads, "THREAD_START": nthreads,
        "THREAD_END": nthreads, "THREAD_JOIN_IN": nthreads, "THREAD_JOIN_OUT": nthreads,
        "SEM_WAIT_IN": 4 * total, "SEM_WAIT_OUT": 4 * total,
        "SEM_POST_IN": 4 * total, "SEM_POST_OUT": 4 * total,
        "SEM_BLOCK": blocks, "SEM_ACQUIRED": blocks,
    })
    by_sem = collections.Counter((e.name, e.fields[0]) for e in ev
                                 if e.name in ("SEM_WAIT_IN", "SEM_POST_IN"))
    assert by_sem == {("SEM_WAIT_IN", empty): total, ("SEM_WAIT_IN", full): total,
                      ("SEM_WAIT_IN", lock): 2 * total, ("SEM_POST_IN", empty): total,
                      ("SEM_POST_IN", full): total, ("SEM_POST_IN", lock): 2 * total}
    assert sorted(e.fields for e in ev if e.name == "SEM_INIT_IN") == \
        sorted([(empty, "0", str(size)), (full, "0", "0"), (lock, "0", "1")])
    # Every wait and post succeeded; the values stay within the semaphores' bounds: lock is 0
    # while held (only its holder posts it), the others between 0 and the queue's size.
    assert all(e.fields[:2] == ("0", "0") for e in ev
               if e.name in ("SEM_WAIT_OUT", "SEM_POST_OUT", "SEM_INIT_OUT", "SEM_DESTROY_OUT"))
    bound = {empty: size, full: size, lock: 1}
    assert all(0 <= int(e.fields[1]) <= bound[e.fields[0]] for e in ev
               if e.name in ("SEM_WAIT_IN", "SEM_POST_IN"))
    assert all(e.fields[1] == "0" for e in ev if e.name == "SEM_POST_IN" and e.fields[0] == lock)
    # Per thread: a producer waits on empty and lock, posts lock and full, once per item; a
    # consumer the other way round; its blocks are on the semaphores it waits on.
    role = {e.tid: e.fields[0] for e in ev if e.name == "THREAD_START"}
    assert sorted(role.values()) == sorted([o["producer"]] * producers +
                                           [o["consumer"]] * consumers)
    for tid, fn in role.items():
        mine = [e for e in ev if e.tid == tid]
        producer = fn == o["producer"]
        n = items if producer else total // consumers
        waits = collections.Counter(e.fields[0] for e in mine if e.name == "SEM_WAIT_IN")
        posts = collections.Counter(e.fields[0] for e in mine if e.name == "SEM_POST_IN")
        assert waits == {empty if producer else full: n, lock: n}
        assert posts == {full if producer else empty: n, lock: n}
        assert {e.fields[0] for e in mine if e.name in ("SEM_BLOCK", "SEM_ACQUIRED")} <= \
            set(waits)
