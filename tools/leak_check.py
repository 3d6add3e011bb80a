"""Exercise every native entry point of ascend_rand many times, for a leak check.

tools/leak_check.sh runs this under valgrind (``--leak-check=full``); run alone it is
its own check too: each workload runs ROUNDS rounds, and after a warm-up round the
process's Python allocations (tracemalloc: objects and NumPy buffers) and resident
memory (C++ heap included) must stop growing.  A reference leaked on a success or
an error path of the raw CPython functions, an engine or capsule never freed, or a
reserve never unmapped shows as growth here, and as a definite loss under valgrind.

    python tools/leak_check.py [--rounds N] [--scale K]

Exit status 1 (and a line per workload) when something grew.
"""

import argparse
import gc
import os
import pickle
import sys
import threading
import tracemalloc

import numpy as np

import ascend_rand
from ascend_rand import stateless
from ascend_rand import _extension

NATIVE = _extension.module


def draws(k):
    """Every Generator draw on both engines, native backend, small (fast path) and large
    (the thread pool) sizes, out= arrays, and stateless draws."""
    for engine in ("philox", "mt19937"):
        g = ascend_rand.Generator(k, engine=engine, backend="native")
        for size in (None, 3, 17, 5000):
            g.raw(size)
            g.raw(size, dtype="uint64")
            g.random(size)
            g.random(size, dtype="float64")
            g.uniform(-1.0, 2.0, size, dtype="bfloat16")
            g.integers(0, 1000, size)
            g.integers(-5, 2**40, size, dtype="int64")
            g.normal(0.0, 2.0, size)
            g.normal(0.0, 2.0, size, method="box_muller", dtype="float64")
            g.truncated_normal(0.0, 1.0, -1.0, 3.0, size)
            g.bernoulli(0.3, size)
            g.bernoulli(0.3, size or 1, packed=True)
            g.dropout_mask(size or 1, 0.1)
        g.permutation(100)
        g.permutation(np.arange(50.0))
        g.choice(1000, size=10, replace=False)
        g.choice(20, size=7, p=np.full(20, 0.05))
        x = np.arange(64.0)
        g.shuffle(x)
        g.random(out=np.empty(300, np.float32))
        g.integers(0, 7, dtype="int16", out=np.empty(300, np.int16))
    for key in (k, 2**64 - 1):
        stateless.raw(100, key, (2**64 - 1, 7))
        stateless.normal(33, key, (1, 2), dtype="float16")
        stateless.uniform(6000, key, (0, 0))
        stateless.integers(10, key, 0, 3)


def errors(k):
    """The error paths: refused arguments at every layer, raw functions included."""
    g = ascend_rand.Generator(k, backend="native")
    bad = [
        lambda: g.random(-1), lambda: g.random(2.5), lambda: g.random(3, dtype="int8"),
        lambda: g.random(out=np.empty(3, np.float64)[::2]), lambda: g.integers(5, 1),
        lambda: g.normal(size=3, method="polar"), lambda: g.bernoulli(1.5, 3),
        lambda: g.set_state({"engine": "philox"}), lambda: stateless.raw(3, -1),
        lambda: NATIVE.raw(np.empty(4, np.int8), 1, 2, 3),
        lambda: NATIVE.uniform(np.empty(4, np.float32), 1, 2, 3, "float31", 0.0, 1.0, False),
        lambda: NATIVE.raw(np.empty(4, np.uint32), 1, 2, 3, np.zeros(2, np.uint32)),
        lambda: NATIVE.permutation(np.empty(4, np.int64), 1, 2, 3, 2),
        lambda: NATIVE.mt19937_fill(np.empty(4, np.uint32), np.zeros(5, np.uint32),
                                    np.zeros(1, np.int64)),
        lambda: NATIVE.mt19937_xpow_mod([1], "none"),
        lambda: NATIVE.philox_bitgen(np.zeros(7, np.uint64)),
        lambda: NATIVE.philox_draw(np.zeros(7, np.uint64), None, None, None),
        lambda: NATIVE.stateless_draw(1, (0, 0), _Plan((np.dtype(np.float32), (2,), False, 99, 2, ()))),
        lambda: NATIVE.stateless_draw(1, (0, 0), _Plan((np.dtype(np.float32), (-2,), False, 1, 2, ()))),
        lambda: NATIVE.plan_get({}, [1]),
        lambda: NATIVE.SecretReserve().take(-1), lambda: NATIVE.SecretReserve(1),
        lambda: NATIVE.SecretReserve().put(object()),
    ]
    for call in bad:
        try:
            call()
        except (ValueError, TypeError, OverflowError, BufferError):
            pass
        else:
            raise AssertionError(f"leak_check: expected an error from {call}")


class _Plan:
    def __init__(self, fast):
        self.native_form = fast


def engines(k):
    """Engines and generators created, spawned, pickled, copied and dropped; numpy draws
    through their bitgen capsules; MT19937 jumps and state round trips."""
    for _ in range(3):
        p = ascend_rand.Philox(k)
        m = ascend_rand.MT19937(k, streams=3)
        one = ascend_rand.MT19937(k)
        for engine in (p, one):
            np.random.Generator(engine).random(10)
            np.random.Generator(engine).integers(0, 5, 7)
        for engine in (p, one, m):
            engine.spawn(2)
            engine.set_state(engine.state)
            pickle.loads(pickle.dumps(engine))
        m.advance(12345)
        m.jumped()
        p.advance(2**70)
        g = ascend_rand.Generator(engine=m, backend="native")
        pickle.loads(pickle.dumps(g)).random(5)
        ascend_rand.MT19937.from_numpy(np.random.MT19937(k).state)
        # the end of a Philox stream through numpy (the capsule's filler words, then the
        # lock's OverflowError: docs/spec.md 2.6) and numpy's protocol around the words
        end = ascend_rand.Philox(k).advance(2**130 - 2)
        try:
            np.random.Generator(end).integers(0, 2**32, 4, dtype=np.uint32)
        except OverflowError:
            pass
        for engine in (p, one):
            engine.ctypes.next_uint64(engine.ctypes.state)
            pickle.loads(pickle.dumps(np.random.Generator(engine))).random(3)
            pickle.loads(pickle.dumps(np.random.RandomState(engine))).random_sample(3)
    key = np.zeros(624, np.uint32)
    NATIVE.mt19937_seed(key, k)
    NATIVE.mt19937_seed_by_array(key, np.arange(5, dtype=np.uint32))
    NATIVE.mt19937_xpow_mod([k, 1])
    ascend_rand.derive(k, "layer", np.arange(100, dtype=np.uint64))


def reserve(k):
    """SecretReserve: put, take, clear, dropped with bytes still held."""
    for _ in range(5):
        r = NATIVE.SecretReserve()
        r.put(os.urandom(5000))
        r.take(32)
        r.put(bytearray(100))
        r.take(4000)
        r.take(10**6)
        if k % 2:
            r.clear()


def threads(k):
    """Eight Python threads sharing one Generator, and draws large enough for the pool."""
    g = ascend_rand.Generator(k, backend="native")

    def work():
        for _ in range(20):
            g.random(16)
            g.normal(size=70000)

    pool = [threading.Thread(target=work) for _ in range(8)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()


def masks(k):
    g = ascend_rand.Generator(k, backend="native")
    mask = g.dropout_mask(1000, 0.25)
    for dtype in (np.float32, np.float64):
        ascend_rand.apply_mask(np.ones(1000, dtype), mask, 0.25)
    ascend_rand.unpack_mask(mask, 1000)


WORKLOADS = [draws, errors, engines, reserve, threads, masks]


def rss_kb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--scale", type=int, default=4, help="calls of each workload per round")
    ap.add_argument("--no-growth-check", action="store_true",
                    help="only run (valgrind judges: its slowness makes RSS numbers noisy)")
    args = ap.parse_args(argv)
    if NATIVE is None:
        sys.exit("leak_check: the native extension is not available")
    print(f"leak_check: {NATIVE.__file__}", flush=True)
    if not args.no_growth_check:  # (under valgrind its own tracebacks are lost blocks)
        tracemalloc.start()
    failed = []
    for work in WORKLOADS:
        sizes = []
        for r in range(args.rounds):
            for i in range(args.scale):
                work(1000 * r + i + 1)
            gc.collect()
            sizes.append((tracemalloc.get_traced_memory()[0], rss_kb()))
        # Growth from the second round (the first fills caches: plans, tables, the pool).
        py_growth = sizes[-1][0] - sizes[1][0]
        rss_growth = sizes[-1][1] - sizes[1][1]
        line = (f"{work.__name__:8s} python +{py_growth / 1024:.1f} KiB, resident "
                f"+{rss_growth} KiB over {args.rounds - 2} rounds")
        print("leak_check:", line, flush=True)
        # A leak of one small object per call is args.scale * (rounds - 2) objects: > 4 KiB.
        if not args.no_growth_check and (py_growth > 64 * 1024 or rss_growth > 8 * 1024):
            failed.append(line)
    if failed:
        print("leak_check: memory grew:\n  " + "\n  ".join(failed))
        return 1
    print("leak_check: no growth")
    return 0


if __name__ == "__main__":
    sys.exit(main())
