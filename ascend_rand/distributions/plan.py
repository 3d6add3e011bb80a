"""A plan: one checked draw, named without any array library.

A distribution checks its arguments once and returns a ``Plan``: the kernel
that fills the output, its shape and dtype name, the kernel's parameters
(plain Python values, or host arrays for per-element inputs), and how many
stream words it reads.  A backend runs it (``Backend.run``); a Generator
reserves its offset only for a plan that will run.  The words-per-element rule
lives here, in ``words_for``, and nowhere else in Python; the test suite checks
that every backend's kernels read exactly that many words.
"""

import math

# Bytes per output item of every dtype a plan names (ascend_rand._dtypes.NUMPY).
ITEM_BYTES = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2,
              "bfloat16": 2, "int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8,
              "float64": 8}
# The largest array NumPy (and so any backend's host copy) can hold, in bytes.
MAX_BYTES = (1 << 63) - 1


class Plan:
    """What to fill, by which kernel, from how many of the stream's 32-bit words.

    ``count`` is the number of output items the kernel writes (0: no kernel
    call); ``finish(backend, out)`` turns the filled array into the result
    (permutations index with it, for example); ``scalar`` returns ``out[()]``.
    ``out`` is a caller's array, already checked by the backend.
    """

    __slots__ = ("kernel", "shape", "dtype", "params", "count", "words", "scalar", "out",
                 "finish", "reshape", "native_form")

    def __init__(self, kernel, shape, dtype, params, words, *, scalar=False, out=None,
                 finish=None):
        self.kernel = kernel
        self.shape = shape
        self.dtype = dtype
        self.params = params
        self.count = math.prod(shape)
        if self.count * ITEM_BYTES[dtype] > MAX_BYTES:
            # Checked before a backend runs: a native binding would meet a word count past
            # 2**64 (OverflowError) and NumPy a size it cannot allocate (docs/spec.md 2.1).
            raise ValueError(
                f"{kernel}: shape {tuple(shape)} of {dtype} is {self.count * ITEM_BYTES[dtype]} "
                f"bytes, more than an array can hold (at most 2**63 - 1 bytes)")
        self.words = words if self.count else 0  # an empty draw reads nothing
        self.scalar = scalar
        self.out = out
        self.finish = finish
        self.reshape = len(shape) != 1  # a result other than 1-D: the flat output is reshaped
        # The native backend's form of this plan for its one-call draws (backend/native.py
        # ``adopt``): None until made, False for a plan they do not take.
        self.native_form = None

    def _copy(self):
        # every slot spelled out: a loop of getattr / setattr took 1.5 us of a 5 us draw
        twin = Plan.__new__(Plan)
        twin.kernel, twin.shape, twin.dtype = self.kernel, self.shape, self.dtype
        twin.params, twin.count, twin.words = self.params, self.count, self.words
        twin.scalar, twin.out, twin.finish = self.scalar, self.out, self.finish
        twin.reshape, twin.native_form = self.reshape, self.native_form
        return twin

    def with_kernel(self, kernel):
        """This plan run by another kernel of the same parameters (an engine's own conversion)."""
        twin = self._copy()
        twin.kernel = kernel
        return twin

    def with_out(self, out):
        """This plan filling ``out``, an array of the layout this plan's ``out`` was checked for."""
        twin = self._copy()
        twin.out = out
        return twin

    def __repr__(self):
        return (f"Plan({self.kernel!r}, shape={self.shape}, dtype={self.dtype!r}, "
                f"params={self.params!r}, words={self.words})")


# Element i of these reads words 2i and 2i+1 (docs/spec.md section 2.2).
_TWO_WORD_DTYPES = ("float64", "uint64")


def words_for(kernel, elements, dtype=None, *, range_minus_1=0, method=None, population=0):
    """Stream words a draw of ``elements`` reads (docs/spec.md sections 2.2, 3, 4, 4A, 5).

    The one statement of the rule in Python: raw/uniform/truncated normal read
    one word per element (two for 64-bit dtypes); integers two per element
    (four when the range exceeds 2**32); Box-Muller whole pairs; Bernoulli
    one per bit; a permutation (or weighted choice) of ``population`` two per
    member; a sparse choice from ``population`` an integer per element.
    """
    if kernel in ("raw", "uniform", "truncated_normal"):
        return elements * (2 if dtype in _TWO_WORD_DTYPES else 1)
    if kernel == "integers":
        return elements * (2 if range_minus_1 <= 0xFFFFFFFF else 4)
    if kernel == "normal":
        pairs = elements + elements % 2 if method == "box_muller" else elements
        return pairs * (2 if dtype == "float64" else 1)
    if kernel in ("bernoulli", "bernoulli_packed"):
        return elements
    if kernel in ("permutation", "weighted_choice"):
        return 2 * population
    if kernel == "choice_sparse":
        return elements * (2 if population <= 1 << 32 else 4)
    raise ValueError(f"words_for: unknown kernel {kernel!r}")
