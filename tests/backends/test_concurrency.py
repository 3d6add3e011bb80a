"""Threads sharing one Generator or engine, and the native thread pool across fork.

Sharing: 8 threads make their calls at once on one Generator (or engine).  Every call
is recorded with its kind, and the serial run of the same kinds is built on a fresh
Generator: the table of what each kind gives at each offset (or, for an MT19937
engine, at each block of its words).  Then every concurrent result must be one of
that kind's serial results, at an offset (block) no other call got, the offsets must
be exactly 0 .. N-1 (no overlap, no gap: no lost update), and the shared Generator's
final state must be the serial run's.  So the multiset of results is the serial run's
(docs/spec.md sections 2.4 and 6.9: a call owns the next offset, or the next words).

Fork: the native core splits large draws over a persistent thread pool
(csrc/cpu/parallel.h); a forked child has none of the parent's threads and must build
its own.  A child draws again (large, on 2 threads) and compares its bits with the
parent's; a deadlock fails the test after a timeout instead of hanging the run.
"""

import os
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand import stateless

NATIVE_OK = ar.backends()["native"]["available"]
needs_native = pytest.mark.skipif(not NATIVE_OK, reason="needs the native backend")

THREADS = 8
SEED = 0x5EED_C0DE


@pytest.fixture
def busy_switching():
    """Switch the GIL between threads every 5 us (default 5 ms) so that a Python-level
    race in reserving offsets or words has a real chance to show."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(5e-6)
    yield
    sys.setswitchinterval(before)


@pytest.fixture
def two_threads():
    """The native core on 2 threads for the test, restored afterwards."""
    before = ar.get_num_threads()
    ar.set_num_threads(2)
    yield
    ar.set_num_threads(before)


def run_threads(calls_per_thread, kinds, target):
    """Each of THREADS threads makes ``calls_per_thread`` calls of kinds chosen by its own
    seeded schedule; returns [(kind, bytes)] of every call, in no particular order."""
    barrier = threading.Barrier(THREADS)
    results = [None] * THREADS
    errors = []

    def worker(t):
        try:
            schedule = np.random.default_rng(t).integers(0, len(kinds), calls_per_thread)
            names = list(kinds)
            mine = []
            barrier.wait()
            for k in schedule:
                name = names[k]
                mine.append((name, np.ascontiguousarray(kinds[name](target)).tobytes()))
            results[t] = mine
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert not any(w.is_alive() for w in workers), "a thread hung"
    assert not errors, errors
    return [call for mine in results for call in mine]


def serial_tables(kinds, make, count):
    """{kind: {bytes: position}}: what each kind gives as call 0 .. count-1 of a fresh
    target made by ``make()`` (every call of the serial run being that kind)."""
    tables = {}
    for name, call in kinds.items():
        target = make()
        table = {}
        for position in range(count):
            table[np.ascontiguousarray(call(target)).tobytes()] = position
        # distinct results per position, so a result names its position unambiguously
        assert len(table) == count, f"{name}: repeated results make the check ambiguous"
        tables[name] = table
    return tables


def positions_of(calls, tables):
    """The serial position each concurrent result equals (a KeyError-free lookup)."""
    found = []
    for name, data in calls:
        position = tables[name].get(data)
        assert position is not None, f"a {name} call returned a result no serial call gives"
        found.append(position)
    return found


def assert_same_state(got, expected):
    """Engine states (dicts that may hold arrays) are equal."""
    assert sorted(got) == sorted(expected)
    for key in expected:
        assert np.array_equal(np.asarray(got[key]), np.asarray(expected[key])), key


def assert_one_each(positions, count):
    """Each position 0 .. count-1 exactly once: no two calls shared words, none was lost."""
    assert len(positions) == count
    counts = np.bincount(np.asarray(positions), minlength=count)
    shared = np.flatnonzero(counts > 1)
    assert shared.size == 0, f"offsets/blocks {shared[:5].tolist()} were given to several calls"
    assert counts.min() == 1, "some offsets were skipped"


# -- Philox Generators ---------------------------------------------------------------------------

PHILOX_KINDS = {
    "random": lambda g: g.random(4),
    "normal": lambda g: g.normal(0.0, 1.0, 4),
    "integers": lambda g: g.integers(0, 1 << 40, 3),
    "dropout_mask": lambda g: g.dropout_mask(256, 0.5),
    # with out= the native backend's one-call draw declines: the offset is reserved by
    # Philox.reserve in Python under the engine's lock (the numpy backend's only path)
    "raw_out": lambda g: g.raw(out=np.empty(4, np.uint32)),
}
# The serial run of raw_out: the same bits by the one-call path (10x faster).
PHILOX_SERIAL = dict(PHILOX_KINDS, raw_out=lambda g: g.raw(4))


@pytest.mark.parametrize("backend, calls", [
    pytest.param("native", 10_000, marks=needs_native),
    # the NumPy backend takes ~0.3 ms a call: fewer calls, the same interleavings
    ("numpy", 300),
])
def test_threads_sharing_a_philox_generator(backend, calls, busy_switching):
    g = ar.Generator(SEED, backend=backend)
    total = THREADS * calls
    got = run_threads(calls, PHILOX_KINDS, g)
    assert g.state == {"engine": "philox", "seed": SEED, "offset": total}
    # The serial run (on the native backend where built: the same bits, much faster).
    serial_backend = "native" if NATIVE_OK else "numpy"
    tables = serial_tables(PHILOX_SERIAL, lambda: ar.Generator(SEED, backend=serial_backend), total)
    assert_one_each(positions_of(got, tables), total)


# -- MT19937 Generators and engines --------------------------------------------------------------

def mt_kinds(words):
    """Generator calls that each read ``words`` engine words, so call k of any serial run
    reads words k*words .. (k+1)*words - 1 and its retry region is counter (0, k): a
    kind's serial table is indexed by k alone.  From 4096 words on, the native fill
    releases the GIL while the engine's lock is held."""
    return {
        "raw": lambda g: g.raw(words),
        "random": lambda g: g.random(words),
        "integers": lambda g: g.integers(0, 1000, words // 2),   # two words per element
        "normal": lambda g: g.normal(0.0, 1.0, words),            # retries read (0, offset)
        "dropout_mask": lambda g: g.dropout_mask(words, 0.5),     # one word per bit
    }


@pytest.mark.parametrize("backend, words, calls", [
    pytest.param("native", 64, 1500, marks=needs_native),
    pytest.param("native", 32768, 20, marks=needs_native),  # fills without the GIL
    ("numpy", 64, 150),
])
def test_threads_sharing_an_mt19937_generator(backend, words, calls, busy_switching):
    kinds = mt_kinds(words)
    total = THREADS * calls
    g = ar.Generator(SEED, engine="mt19937", backend=backend)
    got = run_threads(calls, kinds, g)
    serial_backend = "native" if NATIVE_OK else "numpy"
    make = lambda: ar.Generator(SEED, engine="mt19937", backend=serial_backend)  # noqa: E731
    assert_one_each(positions_of(got, serial_tables(kinds, make, total)), total)
    serial = make()
    serial.raw(words * total)  # the same words in one draw; the offset counts draws
    assert_same_state(g.state, dict(serial.state, offset=total))


# The engine's own methods (float64: two words per value), each reading ``words`` words.
def mt_engine_kinds(words):
    return {
        "raw": lambda e: e.raw(words),
        "random_raw": lambda e: e.random_raw(words),
        "random64": lambda e: e.random(words // 2),
        "random32": lambda e: e.random(words, "float32"),
        "raw64": lambda e: e.raw(words // 2, "uint64"),
    }


# streams divide the block: each call starts at stream 0, as the serial draw's blocks do
@pytest.mark.parametrize("streams, words, calls", [(1, 32, 1000), (4, 32, 1000), (1, 32768, 20)])
def test_threads_sharing_an_mt19937_engine(streams, words, calls, busy_switching):
    total = THREADS * calls
    engine = ar.MT19937(SEED, streams=streams)
    got = run_threads(calls, mt_engine_kinds(words), engine)
    # Serially, call k reads words k*words ..: one draw of all of them, cut into
    # blocks, and the conversions of docs/spec.md 6.3 give every kind's table at once.
    w = ar.MT19937(SEED, streams=streams).raw(words * total).reshape(total, words)
    res53 = ((w[:, 0::2] >> 5).astype(np.float64) * 67108864.0
             + (w[:, 1::2] >> 6)) / 2.0**53                       # numpy's genrand_res53
    columns = {
        "raw": w, "random_raw": w, "random64": res53,
        "random32": (w >> 8).astype(np.float32) * np.float32(2.0**-24),
        "raw64": (w[:, 0::2].astype(np.uint64) << np.uint64(32)) | w[:, 1::2],
    }
    tables = {name: {np.ascontiguousarray(row).tobytes(): k for k, row in enumerate(column)}
              for name, column in columns.items()}
    assert all(len(t) == total for t in tables.values())
    assert_one_each(positions_of(got, tables), total)
    serial = ar.MT19937(SEED, streams=streams)
    serial.raw(words * total)
    assert_same_state(engine.state, serial.state)


def test_threads_sharing_a_philox_engine_word_interface(busy_switching):
    """random_raw reads the engine's word stream from (0, 0) on: call k of n words serially
    reads words kn .. kn+n-1 of stateless.raw(key=SEED)."""
    calls, n = 1000, 24
    total = THREADS * calls
    engine = ar.Philox(SEED)
    got = run_threads(calls, {"random_raw": lambda e: e.random_raw(n)}, engine)
    words = stateless.raw(n * total, SEED, (0, 0), "uint32").reshape(total, n)
    table = {row.tobytes(): k for k, row in enumerate(words)}
    assert len(table) == total
    assert_one_each(positions_of(got, {"random_raw": table}), total)
    assert engine.state == {"engine": "philox", "seed": SEED, "offset": 0, "words": n * total,
                            "bit_generator": "Philox"}


# -- fork and the native thread pool -------------------------------------------------------------

BIG = 3 * (1 << 17)  # 393,216 elements: two pieces of > 2**16 on two threads


def big_draws(key):
    """Large draws that run on the pool (raw, uniform, ziggurat normal, dropout mask)."""
    return [
        stateless.raw(BIG, key, (0, 7), backend="native"),
        stateless.uniform(BIG, key, (1, 7), -1.0, 3.0, "float32", backend="native"),
        stateless.normal(BIG, key, (2, 7), backend="native"),
        stateless.dropout_mask(BIG, key, 0.1, (3, 7), backend="native"),
        ar.Generator(key, backend="native").normal(0.5, 2.0, BIG, "float64"),
    ]


def as_bytes(arrays):
    return b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)


def thread_count():
    """Threads of this process (Linux), or None where /proc does not tell."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def fork_and_draw(key, expected, timeout=30.0):
    """Fork a child that draws ``big_draws(key)`` and reports whether its bits are
    ``expected`` and how many threads it ran; a child still running after ``timeout``
    seconds is killed and the test fails (a deadlock)."""
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():  # Python 3.12+ warns about fork in a threaded process
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 1
        try:
            os.close(read_end)
            before = thread_count()
            ok = as_bytes(big_draws(key)) == expected
            report = f"{'same' if ok else 'DIFFERENT'} {before} {thread_count()}"
            os.write(write_end, report.encode())
            status = 0
        except BaseException as exc:
            try:
                os.write(write_end, f"ERROR {type(exc).__name__}: {exc}".encode())
            except OSError:
                pass
        finally:
            os._exit(status)
    os.close(write_end)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(read_end)
            pytest.fail(f"the forked child did not finish its draws in {timeout} s (deadlock)")
        time.sleep(0.01)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read().decode()
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, report
    verdict, before, after = report.split()
    assert verdict == "same", "the child's draws differ from the parent's"
    if before != "None":  # Linux: the child starts with one thread and builds its own pool
        assert int(before) == 1 and int(after) >= 2, report


fork_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


@fork_only
@needs_native
def test_forked_child_draws_on_its_own_pool(two_threads):
    key = 0xF0F0_1234
    expected = as_bytes(big_draws(key))  # the parent's pool is now running
    assert ar.get_num_threads() == 2
    # the same bits as one thread (the split never matters), computed before the fork
    ar.set_num_threads(1)
    assert as_bytes(big_draws(key)) == expected
    ar.set_num_threads(2)
    for _ in range(2):  # a child of a parent whose pool already served a child
        fork_and_draw(key, expected)
    assert as_bytes(big_draws(key)) == expected  # the parent's pool still works


@fork_only
@needs_native
def test_fork_while_another_thread_draws(two_threads):
    key = 0xABCD_0042
    expected = as_bytes(big_draws(key))
    stop = threading.Event()
    started = threading.Event()
    drawn = []

    def keep_drawing():
        g = ar.Generator(99, backend="native")
        while not stop.is_set():
            drawn.append(g.normal(0.0, 1.0, 4 * BIG)[-1])  # ~10 ms each, GIL released
            started.set()

    other = threading.Thread(target=keep_drawing)
    other.start()
    try:
        assert started.wait(30)
        for _ in range(3):  # the other thread is inside a pooled draw most of the time
            fork_and_draw(key, expected)
    finally:
        stop.set()
        other.join(60)
    assert not other.is_alive()
    assert len(drawn) >= 1
    assert as_bytes(big_draws(key)) == expected


# -- the checks above can fail -------------------------------------------------------------------

class RacyPhilox(ar.Philox):
    """A Philox engine whose reserve reads the offset, lets other threads run, then
    writes it back plus one, without the lock: the lost update the checks look for."""

    def reserve(self, plan, backend):
        offset = self._slots[1]   # OFFSET
        time.sleep(0)             # the GIL goes to another thread here
        self._slots[1] = offset + 1
        return self.seed, (0, offset), None


def test_the_checks_catch_a_racy_reserve(busy_switching):
    g = ar.Generator(engine=RacyPhilox(SEED), backend="numpy")
    calls = 40
    got = run_threads(calls, {"random": lambda g: g.random(4)}, g)
    tables = serial_tables({"random": lambda g: g.random(4)},
                           lambda: ar.Generator(SEED, backend="numpy"), THREADS * calls)
    with pytest.raises(AssertionError, match="several calls|skipped"):
        assert_one_each(positions_of(got, tables), THREADS * calls)
    assert g.offset < THREADS * calls  # updates were lost
