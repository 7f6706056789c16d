"""Producers and consumers over a bounded queue guarded by a mutex and two condvars: the exact
numbers of lock, unlock and signal events, and as many condvar waits as the program made."""

import collections

import pytest

from conftest import trace_prog


@pytest.mark.parametrize("producers,consumers,items,size", [(1, 1, 3000, 1), (2, 2, 2000, 4),
                                                            (3, 1, 1000, 2)])
def test_prodcons(tmp_path, producers, consumers, items, size):
    t = trace_prog(tmp_path, "prodcons", producers, consumers, items, size)
    o = t.out
    total = producers * items
    assert o["sum"] == str(total * (total + 1) // 2)
    m, not_full, not_empty = o["m"], o["not_full"], o["not_empty"]
    waits_full, waits_empty = int(o["waits_full"]), int(o["waits_empty"])
    nthreads = producers + consumers
    c = t.counts()
    ev = t.events
    # Each item: one lock, signal and unlock by its producer, and the same by its consumer.
    for name in ("MUTEX_LOCK_IN", "MUTEX_LOCK_OUT", "MUTEX_UNLOCK_IN", "MUTEX_UNLOCK_OUT",
                 "COND_SIGNAL_IN", "COND_SIGNAL_OUT"):
        assert c[name] == 2 * total, name
    waits = waits_full + waits_empty
    assert c["MUTEX_WAIT"] == c["MUTEX_ACQUIRED"]
    assert c == collections.Counter({
        "PROCESS_START": 1, "PROCESS_EXIT": 1,
        "THREAD_CREATE_IN": nthreads, "THREAD_CREATE_OUT": nthreads, "THREAD_START": nthreads,
        "THREAD_END": nthreads, "THREAD_JOIN_IN": nthreads, "THREAD_JOIN_OUT": nthreads,
        "MUTEX_LOCK_IN": 2 * total, "MUTEX_LOCK_OUT": 2 * total,
        "MUTEX_UNLOCK_IN": 2 * total, "MUTEX_UNLOCK_OUT": 2 * total,
        "MUTEX_WAIT": c["MUTEX_WAIT"], "MUTEX_ACQUIRED": c["MUTEX_WAIT"],
        "COND_SIGNAL_IN": 2 * total, "COND_SIGNAL_OUT": 2 * total,
        "COND_WAIT_IN": waits, "COND_WAIT_OUT": waits, "COND_WOKEN": waits,
    })
    signals = collections.Counter(e.fields[0] for e in ev if e.name == "COND_SIGNAL_IN")
    assert signals == {not_empty: total, not_full: total}
    wait_ins = collections.Counter(e.fields for e in ev if e.name == "COND_WAIT_IN")
    assert wait_ins == collections.Counter({(not_full, m): waits_full,
                                            (not_empty, m): waits_empty})
    assert all(e.fields[0] == m for e in ev if e.name.startswith("MUTEX_") and
               e.name.endswith("_IN"))
    assert all(e.fields[0] == "0" for e in ev if e.name.endswith("_OUT") and
               not e.name.startswith("THREAD_CREATE"))
    # Per thread: a producer locks once per item it puts, waits on not_full only, signals
    # not_empty; a consumer the other way round.
    role = {e.tid: e.fields[0] for e in ev if e.name == "THREAD_START"}
    assert sorted(role.values()) == sorted([o["producer"]] * producers +
                                           [o["consumer"]] * consumers)
    for tid, fn in role.items():
        mine = [e for e in ev if e.tid == tid]
        producer = fn == o["producer"]
        assert sum(e.name == "MUTEX_LOCK_IN" for e in mine) == \
            (items if producer else total // consumers)
        assert {e.fields[0] for e in mine if e.name == "COND_SIGNAL_IN"} == \
            {not_empty if producer else not_full}
        assert {e.fields[0] for e in mine if e.name in ("COND_WAIT_IN", "COND_WOKEN")} <= \
            {not_full if producer else not_empty}
        assert all(e.fields == (not_full if producer else not_empty, m, "0")
                   for e in mine if e.name == "COND_WOKEN")
