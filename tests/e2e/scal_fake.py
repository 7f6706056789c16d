#!/usr/bin/env python3
"""A deterministic COMMAND for ptt scal's tests (test_scal.py): scal_fake.py MODEL [--]N prints
$PTT_SCAL_ITERATIONS durations of a known model of N, with a deterministic noise of at most 1%;
the first $PTT_SCAL_WARMUP are a huge 1 s, which ptt scal must leave out. It checks that N came
both as its argument (ptt scal's {}, after any '=') and as $PTT_SCAL_N; with $SCAL_LOG, appends N
to that file.

MODEL: constant, log, linear, quadratic, scatter, flat (durations; flat: all the same), or, to test failures: 'exit3'
(exits with status 3), 'garbage', 'hex', 'nan' (print a line that is no duration: 12.5
parsecs, 0x10, nan), 'few' (prints the warm-up only), 'hang' (writes its pid and a child's to
$SCAL_PIDS, then sleeps)."""
import math
import os
import subprocess
import sys
import time


def duration(model, n, i):
    if model == "flat":
        return 5000.0
    if model == "scatter":  # 200, 500 or 800 ns by N, the same in every iteration: a wide CI
        return 500.0 + 300.0 * ((n // 10) % 3 - 1)
    y = {"constant": 5000.0,
         "log": 2000.0 + 800.0 * math.log(n),
         "linear": 3000.0 + 7.0 * n,
         "quadratic": 3000.0 + 2.0 * n + 0.01 * n * n}[model]
    noise = ((n * 7919 + i * 104729) % 201 - 100) / 100.0  # in [-1, 1]
    return y * (1 + 0.01 * noise)


def samples(model, n, iterations, warmup):
    """What the command prints after its warm-up, in nanoseconds: what ptt scal must keep."""
    return [duration(model, n, i) for i in range(warmup, iterations)]


def main():
    model, arg = sys.argv[1], sys.argv[2]
    n = int(arg.split("=")[-1])
    if os.environ.get("PTT_SCAL_N") != str(n):
        sys.exit(f"scal_fake: $PTT_SCAL_N is {os.environ.get('PTT_SCAL_N')}, not {n}")
    if os.environ.get("SCAL_LOG"):  # the order of the runs
        with open(os.environ["SCAL_LOG"], "a") as f:
            f.write(f"{n}\n")
    iterations = int(os.environ["PTT_SCAL_ITERATIONS"])
    warmup = int(os.environ["PTT_SCAL_WARMUP"])
    if model == "exit3":
        sys.exit(3)
    if model in ("garbage", "hex", "nan"):  # none is a duration
        print({"garbage": "12.5 parsecs", "hex": "0x10", "nan": "nan"}[model])
        return
    if model == "hang":
        child = subprocess.Popen(["sleep", "60"])
        with open(os.environ["SCAL_PIDS"], "w") as f:
            f.write(f"{os.getpid()} {child.pid}\n")
        time.sleep(60)
        return
    if model == "few":
        iterations = warmup
    print("# scal_fake", model, n)
    for i in range(iterations):
        if i < warmup:
            print("1s")
            continue
        y = duration(model, n, i)
        # ns, us, ms: ptt scal reads every unit; blank lines are skipped
        print(f"{y:.6f}" if i % 3 == 0 else f"{y / 1e3:.9f}us" if i % 3 == 1 else
              f"  {y / 1e6:.12f} ms")
        if i % 4 == 0:
            print()


if __name__ == "__main__":
    main()
