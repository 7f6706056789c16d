"""CPython threads as ptt names them (tests/e2e/test_python_names.py): threading.Threads with
Python names, working with a lock, a condition and a queue; some give their name to the OS
thread, in the ways a Python program can: pthread_setname_np and prctl(PR_SET_NAME) through
ctypes.CDLL(None) (the process's global scope, where libptt's interposers are), and
pthread_setname_np through ctypes.CDLL("libc.so.6") (libc's own scope: libptt does not see the
call). Threads start one after the other (Thread.start returns once the thread runs). Prints
@tid_KEY=its native id (the kernel's thread id) and the results."""

import ctypes
import os
import queue
import threading
import time

GLOBAL = ctypes.CDLL(None)
LIBC = ctypes.CDLL("libc.so.6")
PR_SET_NAME = 15

items = queue.Queue(maxsize=4)
total_lock = threading.Lock()
done = threading.Condition()
total = 0
finished = 0
tids = {}
worker1_named = threading.Event()


def me(key):
    tids[key] = threading.get_native_id()


def setname(lib, name):
    """pthread_setname_np(pthread_self(), name): threading.get_ident() is the pthread_t."""
    lib.pthread_setname_np(ctypes.c_ulong(threading.get_ident()), name.encode())


def finish():
    global finished
    with done:
        finished += 1
        done.notify_all()


def producer(n):
    me("producer")
    setname(GLOBAL, threading.current_thread().name)
    for i in range(1, n + 1):
        items.put(i)
    items.put(None)
    finish()


def consumer():
    global total
    me("consumer")
    GLOBAL.prctl(PR_SET_NAME, threading.current_thread().name.encode(), 0, 0, 0)
    while (i := items.get()) is not None:
        with total_lock:
            total += i
    finish()


def worker(key):
    me(key)
    if key == "worker2":  # after worker1's: which of the two is "worker#2" is then known
        worker1_named.wait()
    setname(GLOBAL, "worker")  # two threads, one name
    if key == "worker1":
        worker1_named.set()
    with total_lock:
        pass
    finish()


def hidden():
    me("hidden")
    setname(LIBC, "hidden")  # libc's scope: past libptt
    finish()


def anonymous():
    me("anonymous")
    finish()


THREADS = [threading.Thread(target=producer, args=(20,), name="producer"),
           threading.Thread(target=consumer, name="consumer"),
           threading.Thread(target=worker, args=("worker1",), name="worker-1"),
           threading.Thread(target=worker, args=("worker2",), name="worker-2"),
           threading.Thread(target=hidden, name="hidden"),
           threading.Thread(target=anonymous)]

me("main")
for t in THREADS:
    t.start()
with done:
    done.wait_for(lambda: finished == len(THREADS))
for t in THREADS:
    t.join()
# join returns once a thread's Python part is done, before its OS thread ends (and its end is
# recorded): wait for the kernel to let them go, so that the exit does not cut them short
for key, tid in tids.items():
    while key != "main" and os.path.exists(f"/proc/self/task/{tid}"):
        time.sleep(0.001)
for key, tid in tids.items():
    print(f"@tid_{key}={tid}")
print(f"total={total}")
