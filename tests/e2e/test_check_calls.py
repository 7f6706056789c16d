"""The harness's own check of a trace's calls (conftest.check_calls), on made-up event lists:
what it must accept, and what it must reject."""

import pytest

from conftest import Event, check_calls


def events(*spec):
    """Events from (tid, NAME, field, ...) tuples, one nanosecond apart, all of process 1."""
    return [Event(i, s[1], 1, s[0], tuple(str(f) for f in s[2:])) for i, s in enumerate(spec)]


ONCE = [(1, "THREAD_ONCE_IN", "0x10", "0x20", 0), (1, "ONCE_RUN", "0x10", "0x20")]
LOCK = [(1, "MUTEX_LOCK_IN", "0x30"), (1, "MUTEX_LOCK_OUT", 0)]

GOOD = {
    "calls": [(1, "THREAD_START", "0x1", "0x0", 1, "0x2"), *LOCK,
              (1, "SEM_WAIT_IN", "0x40", 0), (1, "SEM_BLOCK", "0x40"), (1, "SEM_ACQUIRED", "0x40"),
              (1, "SEM_WAIT_OUT", 0, 0, 0), (1, "THREAD_END", "0x0", "return")],
    "once": [*ONCE, *LOCK, (1, "ONCE_DONE", "0x10"), (1, "THREAD_ONCE_OUT", 0, 1)],
    "nested_once": [*ONCE, (1, "THREAD_ONCE_IN", "0x11", "0x21", 0),
                    (1, "ONCE_RUN", "0x11", "0x21"),
                    (1, "ONCE_DONE", "0x11"), (1, "THREAD_ONCE_OUT", 0, 1),
                    (1, "ONCE_DONE", "0x10"), (1, "THREAD_ONCE_OUT", 0, 1)],
    "signal_in_call": [(1, "SEM_WAIT_IN", "0x40", 0), (1, "SEM_BLOCK", "0x40"),
                       (1, "SIGNAL_DELIVERED", 10, -6, 1), (1, "SEM_POST_IN", "0x40", 0),
                       (1, "SEM_POST_OUT", 0, 0, 1), (1, "SIGNAL_HANDLED", 10),
                       (1, "SEM_ACQUIRED", "0x40"), (1, "SEM_WAIT_OUT", 0, 0, 0)],
    "signal_between_calls": [*LOCK, (1, "SIGNAL_DELIVERED", 10, 0, 1),
                             (1, "SIGNAL_DELIVERED", 12, 0, 1), (1, "SIGNAL_HANDLED", 12),
                             (1, "SIGNAL_HANDLED", 10), *LOCK],
    "cancelled": [(1, "COND_WAIT_IN", "0x50", "0x30"), *ONCE, (1, "ONCE_DONE", "0x10"),
                  (1, "THREAD_ONCE_OUT", 0, 1), (1, "MUTEX_UNLOCK_IN", "0x30"),
                  (1, "MUTEX_UNLOCK_OUT", 0), (2, "MUTEX_LOCK_IN", "0x31"),
                  (1, "THREAD_CANCELLED", "COND_WAIT_IN"), (2, "MUTEX_LOCK_OUT", 0),
                  (1, "THREAD_END", "0xffffffffffffffff", "cancel")],
    "cancelled_in_once": [*ONCE, (1, "THREAD_TESTCANCEL_IN"), *LOCK,
                          (1, "THREAD_CANCELLED", "THREAD_TESTCANCEL_IN"),
                          (1, "THREAD_END", "0xffffffffffffffff", "cancel")],
    "timer": [(3, "TIMER_THREAD_START", "0x7", "0x8", "0x9"), *[(3,) + e[1:] for e in LOCK],
              (3, "TIMER_THREAD_END", "0x7")],
    "unfinished": [(1, "SEM_WAIT_IN", "0x40", 0), (1, "SEM_BLOCK", "0x40"),
                   (1, "TRACE_UNFINISHED", "SEM_WAIT_IN")],
    "lost_in_call": [(1, "SEM_WAIT_IN", "0x40", 0), (1, "TRACE_LOST", 4),
                     (1, "SEM_WAIT_OUT", 0, 0, 0), (1, "TRACE_LOST", 1)],
    "noreturn": [(1, "THREAD_EXIT_IN", "0x0"), *ONCE, (1, "ONCE_DONE", "0x10"),
                 (1, "THREAD_ONCE_OUT", 0, 1), (1, "THREAD_END", "0x0", "exit")],
}

BAD = {
    "call_in_call": [(1, "MUTEX_LOCK_IN", "0x30"), *LOCK, (1, "MUTEX_LOCK_OUT", 0)],
    "out_without_in": [(1, "MUTEX_LOCK_OUT", 0)],
    "out_of_another": [(1, "MUTEX_LOCK_IN", "0x30"), (1, "MUTEX_UNLOCK_OUT", 0)],
    "out_on_other_thread": [(1, "MUTEX_LOCK_IN", "0x30"), (2, "MUTEX_LOCK_OUT", 0)],
    "state_outside": [(1, "SEM_BLOCK", "0x40")],
    "state_in_other_call": [(1, "MUTEX_LOCK_IN", "0x30"), (1, "SEM_BLOCK", "0x40"),
                            (1, "MUTEX_LOCK_OUT", 0)],
    "state_in_handler": [(1, "SEM_WAIT_IN", "0x40", 0), (1, "SIGNAL_DELIVERED", 10, 0, 1),
                         (1, "SEM_BLOCK", "0x40"), (1, "SIGNAL_HANDLED", 10),
                         (1, "SEM_WAIT_OUT", 0, 0, 0)],
    "once_run_outside": [(1, "ONCE_RUN", "0x10", "0x20")],
    "once_run_other_once": [(1, "THREAD_ONCE_IN", "0x10", "0x20", 0),
                            (1, "ONCE_RUN", "0x11", "0x20")],
    "once_done_other": [*ONCE, (1, "ONCE_DONE", "0x11"), (1, "THREAD_ONCE_OUT", 0, 1)],
    "once_out_in_init": [*ONCE, (1, "THREAD_ONCE_OUT", 0, 1)],
    "handled_without_delivered": [(1, "SIGNAL_HANDLED", 10)],
    "handled_other_signal": [(1, "SIGNAL_DELIVERED", 10, 0, 1), (1, "SIGNAL_HANDLED", 12)],
    "handler_left_open": [(1, "SIGNAL_DELIVERED", 10, 0, 1)],
    "call_open_at_handled": [(1, "SIGNAL_DELIVERED", 10, 0, 1), (1, "MUTEX_LOCK_IN", "0x30"),
                             (1, "SIGNAL_HANDLED", 10)],
    "timer_in_call": [(1, "MUTEX_LOCK_IN", "0x30"), (1, "TIMER_THREAD_START", "0x7", "0x8", "0x9")],
    "timer_end_other": [(3, "TIMER_THREAD_START", "0x7", "0x8", "0x9"),
                        (3, "TIMER_THREAD_END", "0x6")],
    "cancelled_not_innermost": [*ONCE, (1, "THREAD_TESTCANCEL_IN"),
                                (1, "THREAD_CANCELLED", "THREAD_ONCE_IN"),
                                (1, "THREAD_END", "0xffffffffffffffff", "cancel")],
    "cancelled_outside": [(1, "THREAD_CANCELLED", "MUTEX_LOCK_IN"),
                          (1, "THREAD_END", "0xffffffffffffffff", "cancel")],
    "cancelled_then_more": [(1, "MUTEX_LOCK_IN", "0x30"), (1, "THREAD_CANCELLED", "MUTEX_LOCK_IN"),
                            *LOCK],
    "cancelled_end_return": [(1, "MUTEX_LOCK_IN", "0x30"),
                             (1, "THREAD_CANCELLED", "MUTEX_LOCK_IN"),
                             (1, "THREAD_END", "0x0", "return")],
    # A call nested in a call the thread was not cancelled in.
    "nested_before_cancel": [(1, "COND_WAIT_IN", "0x50", "0x30"), *LOCK,
                             (1, "COND_WAIT_OUT", 0), (1, "THREAD_TESTCANCEL_IN"),
                             (1, "THREAD_CANCELLED", "THREAD_TESTCANCEL_IN"),
                             (1, "THREAD_END", "0xffffffffffffffff", "cancel")],
    "end_in_call": [(1, "MUTEX_LOCK_IN", "0x30"), (1, "THREAD_END", "0x0", "return")],
    "start_in_call": [(1, "MUTEX_LOCK_IN", "0x30"), (1, "THREAD_START", "0x1", "0x0", 1, "0x2")],
    "unfinished_wrong": [(1, "SEM_WAIT_IN", "0x40", 0), (1, "TRACE_UNFINISHED", "SEM_POST_IN")],
    "never_closed": [(1, "MUTEX_LOCK_IN", "0x30")],
    "process_start_in_call": [(1, "MUTEX_LOCK_IN", "0x30"), (1, "PROCESS_START", 1, 2)],
    "unknown": [(1, "MUTEX_FROBNICATE", "0x30")],
}


@pytest.mark.parametrize("case", GOOD)
def test_accepts(case):
    check_calls(events(*GOOD[case]))


@pytest.mark.parametrize("case", BAD)
def test_rejects(case):
    with pytest.raises(AssertionError):
        check_calls(events(*BAD[case]))
