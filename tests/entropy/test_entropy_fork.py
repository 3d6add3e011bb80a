"""EntropyPool and fork() while a source read is stuck in the background refill.

docs/security.md, "Fork and threads": the pool's lock is never held across a source
read, os.fork()'s before-hook waits at most FORK_LOCK_WAIT for it, and a child forked
behind Python's back (fork() from C, which runs no os.register_at_fork hook) resets the
pool before taking any of its locks.  Each test parks the background thread inside the
source's read() (a gate the parent holds shut; the child's reads pass at once), forks,
and requires that the fork returns and the child reads within bounded times, and that
the child hands out none of the bytes the parent had buffered.
"""

import ctypes
import os
import select
import threading
import time

import pytest

from ascend_rand.entropy import pool as pool_mod
from ascend_rand.entropy.pool import EntropyPool

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

STUCK_S = 30  # how long the parked read would last: far beyond every bound below
CHILD_S = 10  # the child must have read within this


class Gate:
    """os.urandom, except that in the process that made it, once ``hold`` is set, a read
    waits for ``release`` (up to STUCK_S): a source read stuck in the background thread."""

    name, sample_bits, min_entropy = "gate", 8, 8.0

    def __init__(self):
        self.home = os.getpid()
        self.hold, self.entered, self.release = threading.Event(), threading.Event(), threading.Event()

    def read(self, n):
        if os.getpid() == self.home and self.hold.is_set():
            self.entered.set()
            self.release.wait(STUCK_S)
        return os.urandom(n)


@pytest.fixture(params=["raw", "drbg"])
def stuck(request):
    """(pool, gate): the pool's background thread parked in a source read."""
    gate = Gate()
    pool = EntropyPool(gate, mode=request.param, background=True)
    pool.read(300)  # start-up, a first block, the DRBG's seed; starts the thread
    gate.hold.set()
    # Below LOW_WATER, then a read that takes the general path wakes the thread.
    pool._conditioned.take(pool._conditioned.available - (pool_mod.LOW_WATER - 1000))
    pool.read(pool_mod.SMALL_READ + 1)
    assert gate.entered.wait(CHILD_S), "the background refill never reached the source"
    yield pool, gate
    gate.release.set()
    pool.close()


def buffered(pool):
    """Every byte the parent holds, taken out: what the child must never hand out."""
    out = pool._conditioned.take(pool._conditioned.available)
    if pool._ready is not pool._conditioned:
        out += pool._ready.take(pool._ready.available)
    return out


def fork_and_read(fork, pool, n=64):
    """(child's n bytes or None if it did not finish in CHILD_S, seconds fork() took)."""
    rd, wr = os.pipe()
    start = time.monotonic()
    pid = fork()
    if pid == 0:
        try:
            os.close(rd)
            os.write(wr, pool.read(n) + repr(pool.stats()["source"]).encode())
        finally:
            os._exit(0)
    took = time.monotonic() - start
    os.close(wr)
    data = b""
    try:
        while select.select([rd], [], [], CHILD_S)[0]:
            chunk = os.read(rd, 4096)
            if not chunk:
                break
            data += chunk
        else:
            os.kill(pid, 9)  # blocked: fail below, without a stray process
            data = None
    finally:
        os.close(rd)
        os.waitpid(pid, 0)
    if data is not None:
        assert data[n:] == b"'gate'"
        data = data[:n]
    return data, took


def libc_fork():
    return ctypes.CDLL(None, use_errno=True).fork()


def test_the_parent_does_not_wait_on_the_stuck_read(stuck):
    pool, _ = stuck
    start = time.monotonic()
    stats = pool.stats()  # before the fix: blocked until the read returned
    assert len(pool.read(16)) == 16  # buffered bytes are still handed out
    assert time.monotonic() - start < 1.0 and stats["source"] == "gate"


def test_os_fork_does_not_wait_on_the_stuck_read(stuck):
    pool, _ = stuck
    child, took = fork_and_read(os.fork, pool)
    assert took < 1.0, f"os.fork() took {took:.1f} s"  # before the fix: the whole read (30 s)
    assert child is not None and len(child) == 64
    parent = pool.read(64)
    assert child != parent and child not in parent + buffered(pool)


def test_a_fork_from_c_does_not_leave_the_child_blocked(stuck):
    # fork() from C runs none of Python's fork hooks: the child finds the pool as the
    # parent left it, its locks possibly held by the parked thread, which the child lacks.
    pool, _ = stuck
    child, _ = fork_and_read(libc_fork, pool)
    assert child is not None, f"the child's read did not finish in {CHILD_S} s"
    parent = pool.read(64)
    assert len(child) == 64 and child != parent and child not in parent + buffered(pool)


def test_os_fork_waits_a_bounded_time_for_a_held_lock():
    # Even a lock held for long (it is not, in the pool's own code) delays fork() by at
    # most FORK_LOCK_WAIT; the child starts with fresh locks and reads.
    pool = EntropyPool(Gate())
    pool.read(32)
    held, done = threading.Event(), threading.Event()

    def hold():
        with pool._lock:
            held.set()
            done.wait(STUCK_S)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert held.wait(CHILD_S)
    try:
        child, took = fork_and_read(os.fork, pool, n=32)
    finally:
        done.set()
        thread.join()
    assert pool_mod.FORK_LOCK_WAIT <= took < pool_mod.FORK_LOCK_WAIT + 1.0
    assert child is not None and len(child) == 32 and child not in buffered(pool)
