"""A trace over 4 GiB (64-bit offsets all the way): threads record large events as fast as they
can (tests/progs/setname_flood.c: pthread_setname_np with a 200-byte name that changes at every
call, 268 bytes of records per call) until the file passes 4.5 GiB, and ptt view --summary reads it all back with exact
counts. Minutes and 12 GiB of disk: only with PTT_LARGE_TESTS=1."""

import os
import shutil
import time
import warnings

import pytest

from conftest import parse_output, prog, ptt_trace, summary_counts
from test_readahead import sanitized

# The marker selects or leaves out the test (-m large, -m "not large"); conftest.py, which
# would register it, is not ours: no warning that it is unknown.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
    LARGE = pytest.mark.large

pytestmark = [
    LARGE,
    pytest.mark.skipif(os.environ.get("PTT_LARGE_TESTS") != "1",
                       reason="a trace over 4 GiB (minutes, 12 GiB of disk): run it with "
                       "PTT_LARGE_TESTS=1 (e.g. PTT_LARGE_TESTS=1 ctest -R e2e_large "
                       "--output-on-failure)"),
    # Under the sanitizers it took 130 s of make check's 15 minutes, to run code the plain build
    # runs here and the smaller tests and fuzz targets run under the sanitizers.
    pytest.mark.skipif(sanitized(), reason="the plain build runs it: over 2 minutes under the "
                       "sanitizers"),
]

GIB = 1 << 30
THREADS = 2
# THREAD_SETNAME_NP_IN with the name and its OUT in the compact encoding (format 2.0): every
# word of the name new, each written out (measured: 268.1)
CALL_BYTES = 268
CALLS = (4 * GIB + GIB // 2) // CALL_BYTES // THREADS  # per thread


def test_trace_over_4gib(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    if free < 12 * GIB:
        pytest.skip(f"{tmp_path}: {free / GIB:.1f} GiB free, 12 needed")
    t0 = time.monotonic()
    t = ptt_trace(tmp_path, [prog("setname_flood"), THREADS, CALLS], name="large.ptt")
    t1 = time.monotonic()
    total = THREADS * CALLS
    assert parse_output(t.stdout)[0] == {"calls": str(total), "erange": str(total)}
    size = t.path.stat().st_size
    assert size > 4 * GIB and t.lost == 0
    counts, head = summary_counts(t.path)
    t2 = time.monotonic()
    assert counts["THREAD_SETNAME_NP_IN"] == counts["THREAD_SETNAME_NP_OUT"] == total
    assert counts["THREAD_START"] == counts["THREAD_END"] == THREADS
    assert int(head["events"]) == t.nevents and head["exit"] == "0" and head["lost"] == "0"
    print(f"\n{size} bytes ({size / GIB:.2f} GiB), {t.nevents} events: traced in {t1 - t0:.1f} s, "
          f"read back in {t2 - t1:.1f} s")
    t.path.unlink()
