"""--events=CLASS,... (and $PTT_EVENTS): only the chosen classes are recorded, meta always."""

import collections
import os

import pytest

from conftest import (CLASSES, check_trace, class_of, expected_counts, parse_output, prog,
                      ptt_trace)

T, M, R = 3, 200, 10
ROUNDS = (M - 1) // R + 1


def only(classes):
    return collections.Counter({k: v for k, v in expected_counts(T, M, ROUNDS).items()
                                if class_of(k) in classes | {"meta"}})


@pytest.mark.parametrize("events", ["mutex", "thread,barrier", "cond", "meta", "all",
                                    "mutex,cond,barrier,thread"])
def test_events_option(tmp_path, events):
    t = ptt_trace(tmp_path, [prog("counts"), T, M, R], opts=[f"--events={events}"])
    classes = set(CLASSES) if events == "all" else set(events.split(","))
    check_trace(t)
    assert t.counts() == only(classes)
    assert parse_output(t.stdout)[0] == {"total": "0"}


def test_events_mutex(tmp_path):
    """The case of the brief: no thread, cond or barrier event; meta and mutex events, each
    call complete, on the threads that made them."""
    t = ptt_trace(tmp_path, [prog("counts"), T, M, R], opts=["--events=mutex"])
    check_trace(t)
    c = t.counts()
    assert not [n for n in c if class_of(n) not in ("meta", "mutex")]
    assert c["PROCESS_START"] == 1 and c["PROCESS_EXIT"] == 1
    assert c["MUTEX_LOCK_IN"] == T * M and c["MUTEX_UNLOCK_OUT"] == 2 * T * M
    assert len({e.tid for e in t.events if e.name == "MUTEX_LOCK_IN"}) == T


def test_events_environment(tmp_path):
    env = dict(os.environ, PTT_EVENTS="barrier")
    t = ptt_trace(tmp_path, [prog("counts"), T, M, R], env=env)
    check_trace(t)
    assert t.counts() == only({"barrier"})
