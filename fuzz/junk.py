"""Structured junk for the native-layer fuzzer (fuzz/fuzz_native.py).

Every value is built from a byte source so that libFuzzer's mutations of the
input steer it: sizes (small, zero, negative, huge, float, bool, None, odd
sequences), dtypes (valid, wrong, object), NumPy arrays of any dtype, shape
and layout (strided, reversed, read-only, zero-size), keys and counters at
the edges of [0, 2**64), and plain Python junk.

``SANE_BYTES`` bounds every "sane" request a value stands for: a MemoryError on
a draw whose output is below it is a failure, above it an accepted answer.
"""

import math

import ml_dtypes
import numpy as np

# A request whose output stays below this is sane: it must never raise MemoryError.
SANE_BYTES = 1 << 24
# The element count of a sane array built here (small: the harness runs thousands a second).
SMALL = 64

DTYPE_NAMES = [
    "float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
    "uint16", "uint32", "uint64", "bool", "complex64", "object", "U3", "V8", "f", "<i4", ">f4",
    "", "float128", "float31", None,
]
NUMPY_DTYPES = [
    np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int8, np.int16, np.int32,
    np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, np.complex64, object,
    np.dtype([("a", "<u4"), ("b", "<u4")]), np.dtype("V8"), np.dtype(">u4"), np.dtype(">f8"),
]
EDGE_INTS = [0, 1, 2, 3, 7, 8, 31, 32, 33, 255, 256, 624, 625, 2**31 - 1, 2**31, 2**32 - 1,
             2**32, 2**53, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**66, 2**100, -1, -2,
             -(2**63), -(2**64)]
EDGE_FLOATS = [0.0, -0.0, 0.5, 1.0, -1.0, 1e-300, 5e-324, 1e300, 65504.0, 1e5, 3.4e38,
               float("inf"), float("-inf"), float("nan"), 2.0**64, -(2.0**63), 0.1, 0.9999999]


class Junk:
    """Draws junk values from a ``atheris.FuzzedDataProvider``-like byte source."""

    def __init__(self, fdp):
        self.fdp = fdp
        # Every size and integer handed out: a MemoryError is an answer only when one of
        # them asks for more than SANE_BYTES (fuzz_native.judge).
        self.sizes = []

    # -- primitives ---------------------------------------------------------------------------
    def pick(self, seq):
        return seq[self.fdp.ConsumeIntInRange(0, len(seq) - 1)]

    def small(self, hi=SMALL):
        return self.fdp.ConsumeIntInRange(0, hi)

    def chance(self):
        return self.fdp.ConsumeBool()

    def u64(self):
        """A key or counter word: mostly edges of [0, 2**64), sometimes just outside."""
        k = self.small(3)
        if k == 0:
            return self.pick(EDGE_INTS)
        return self.fdp.ConsumeIntInRange(0, 2**64 - 1)

    def counter(self):
        k = self.small(6)
        if k == 0:
            return self.value(depth=1)
        if k == 1:
            return (self.u64(),)
        if k == 2:
            return [self.u64(), self.u64()]
        if k == 3:
            return np.array([self.small(), self.small()], dtype=self.pick(NUMPY_DTYPES[:13]))
        return (self.u64(), self.u64())

    def integer(self):
        k = self.small(3)
        if k == 0:
            value = self.pick(EDGE_INTS)
        elif k == 1:
            value = self.fdp.ConsumeIntInRange(-(2**70), 2**70)
        else:
            value = self.small(1000)
        self.sizes.append(value)
        return value

    def number(self):
        k = self.small(5)
        if k == 0:
            return self.pick(EDGE_FLOATS)
        if k == 1:
            return self.fdp.ConsumeFloat()
        if k == 2:
            return self.integer()
        if k == 3:
            return self.fdp.ConsumeProbability()
        if k == 4:
            return np.float16(self.fdp.ConsumeRegularFloat())
        return self.fdp.ConsumeRegularFloat()

    def probability(self):
        k = self.small(3)
        if k == 0:
            return self.number()
        if k == 1:
            return self.value(depth=1)
        return self.fdp.ConsumeProbability()

    # -- sizes and dtypes ---------------------------------------------------------------------
    def size(self):
        """A size argument: None, an int, a shape (sane mostly, huge or junk sometimes)."""
        value = self._size()
        self.sizes.append(value)
        return value

    def _size(self):
        k = self.small(12)
        if k == 0:
            return None
        if k <= 3:
            return self.small()
        if k <= 6:
            return tuple(self.small(8) for _ in range(self.small(4)))
        if k == 7:
            return self.pick([-1, 2**40, 2**62, 2**63 - 1, 2**63, 2**64 + 1, (2**32, 2**32),
                              (0, 2**70), (2**31, 2**31, 4), (3, -1), (2**21, 2**21)])
        if k == 8:
            return self.pick([1.0, 2.5, float("nan"), True, False, "3", b"3", [2, "a"], (2.0,),
                              np.int64(5), np.array([2, 3]), np.array(3.0), [[2]], {3: 4}])
        if k == 9:
            return [self.small(5) for _ in range(self.small(3))]
        if k == 10:
            return np.uint8(self.small(255))
        return self.value(depth=1)

    def dtype(self):
        k = self.small(3)
        if k == 0:
            return self.pick(NUMPY_DTYPES)
        if k == 1:
            return self.value(depth=1)
        return self.pick(DTYPE_NAMES)

    # -- arrays -------------------------------------------------------------------------------
    def array(self, dtype=None, n=None):
        """An array of any dtype, shape and layout (strided, reversed, read-only, empty)."""
        dtype = np.dtype(self.pick(NUMPY_DTYPES) if dtype is None else dtype)
        n = self.small() if n is None else n
        layout = self.small(7)
        if dtype.hasobject:
            base = np.array([self.value(depth=1) for _ in range(min(n, 4))] + [0] * max(n - 4, 0),
                            dtype=object)
        else:
            raw = self.fdp.ConsumeBytes(n * dtype.itemsize)
            raw = raw + bytes(n * dtype.itemsize - len(raw))
            base = np.frombuffer(raw, dtype=dtype).copy()
        if layout == 0:
            return base[::2]  # non-contiguous
        if layout == 1:
            return base[::-1]  # negative stride
        if layout == 2:
            base.flags.writeable = False
            return base
        if layout == 3 and n % 2 == 0 and n:
            return base.reshape(2, n // 2).T  # Fortran order, 2-D
        if layout == 4:
            return base.reshape(1, n, 1)
        if layout == 5:  # misaligned: a view one byte into a byte buffer
            buf = np.zeros(n * dtype.itemsize + 1, dtype=np.uint8)
            if dtype.hasobject:
                return base
            return buf[1:].view(dtype)
        return base

    def out(self, n=None):
        """An out= argument: None mostly, an array of any kind, or junk."""
        k = self.small(4)
        if k == 0:
            return self.array(n=n)
        if k == 1:
            return self.value(depth=1)
        return None

    # -- anything -----------------------------------------------------------------------------
    def value(self, depth=0):
        k = self.small(14 if depth < 2 else 9)
        if k == 0:
            return None
        if k == 1:
            return self.chance()
        if k == 2:
            return self.integer()
        if k == 3:
            return self.number()
        if k == 4:
            return self.fdp.ConsumeUnicodeNoSurrogates(self.small(8))
        if k == 5:
            return self.fdp.ConsumeBytes(self.small(8))
        if k == 6:
            return self.pick([object(), math, np.float64, Ellipsis, slice(1), 1j, np.nan])
        if k == 7:
            return np.int64(self.small()) if self.chance() else np.float32(self.number())
        if k == 8:
            return self.pick(EDGE_INTS)
        if k == 9:
            return self.array()
        if k == 10:
            return tuple(self.value(depth + 1) for _ in range(self.small(3)))
        if k == 11:
            return [self.value(depth + 1) for _ in range(self.small(3))]
        if k == 12:
            return {self.pick(["engine", "seed", "offset", "key", "pos", "streams", 1]):
                    self.value(depth + 1) for _ in range(self.small(3))}
        return self.array(n=self.small(4))
