"""Intel oneMKL's Philox4x32x10 through ``mkl-random``: a benchmark peer for float64 draws.

``mkl_random.MKLRandomState(seed, brng="PHILOX4X32X10")`` is the generator a
scientific user would pick instead of ascend_rand: the same Philox4x32-10
counter-based engine, with MKL's vectorised conversions.  It offers float64
only (no ``dtype`` and no ``out=``: every call allocates its result, a cost
its users pay too) and three normal methods (``NORMAL_METHODS``).

One thread: MKL reads ``MKL_NUM_THREADS`` when it is loaded, so
``import_mkl_random`` sets it to 1 before the first import; an
``mkl_random`` imported earlier under another setting is reported as a
missing peer rather than timed with unknown threads.  Without ``mkl-random``
(``pip install mkl-random``, in the ``bench`` extra; its wheels are x86-64 only) the rows say so.
"""

import os
import sys

import numpy as np

from . import harness as H

SEED = H.SEED
BRNG = "PHILOX4X32X10"
PEER = "MKL Philox4x32x10"  # the peer's name in the tables
# mkl_random's standard_normal methods (VSL_RNG_METHOD_GAUSSIAN_*).
NORMAL_METHODS = ("ICDF", "BoxMuller", "BoxMuller2")


def import_mkl_random():
    """``mkl_random`` loaded with MKL_NUM_THREADS=1, or raise ``harness.Missing``."""
    if "mkl_random" not in sys.modules:
        os.environ["MKL_NUM_THREADS"] = "1"  # read when MKL loads: before the import
    elif sys.modules["mkl_random"] is not None and os.environ.get("MKL_NUM_THREADS") != "1":
        raise H.Missing("mkl_random was imported before MKL_NUM_THREADS=1 was set "
                        f"(MKL_NUM_THREADS={os.environ.get('MKL_NUM_THREADS')!r})")
    try:  # sys.modules["mkl_random"] = None (a blocked import) raises ImportError too
        import mkl_random
    except ImportError as exc:
        raise H.Missing(f"mkl-random not installed ({exc})") from None
    return mkl_random


def _state():
    """MKLRandomState (RandomState before mkl-random 1.3.2, deprecated since) on Philox."""
    mkl_random = import_mkl_random()
    make = getattr(mkl_random, "MKLRandomState", None) or mkl_random.RandomState
    return make(SEED, brng=BRNG)


def normal(method):
    """A ``make(draw, n)`` for ``standard_normal(n, method=method)`` (float64)."""
    if method not in NORMAL_METHODS:
        raise ValueError(f"MKL normal method {method!r} is not one of {NORMAL_METHODS}")

    def make(draw, n):
        state = _state()
        return (f"standard_normal({method})",
                lambda: state.standard_normal(size=n, method=method))
    return make


def uniform(draw, n):
    """``make`` for ``uniform(0, 1, n)`` (float64); other draws are skipped (None)."""
    if draw != "uniform float64":
        return None  # mkl_random has float64 uniforms only
    state = _state()
    return "uniform(f64)", lambda: state.uniform(0.0, 1.0, size=n)


def peer_names():
    """The table names of the normal rows, one per method, e.g. 'MKL Philox4x32x10 ICDF'."""
    return [f"{PEER} {method}" for method in NORMAL_METHODS]


def resolution_bits(values):
    """The fewest b for which every value times 2**b is an integer (values in [0, 1), b <= 64).

    A float64 uniform made from a 32-bit word has b <= 32; ascend_rand's, from two
    words, has 52 (docs/spec.md 3.2).
    """
    scaled = np.asarray(values, dtype=np.float64)
    for bits in range(65):
        if np.all(scaled == np.floor(scaled)):
            return bits
        scaled = scaled * 2.0
    return None


def uniform_bits(n=1 << 16):
    """How many random bits MKL's float64 ``uniform(0, 1)`` carries (its resolution), or
    None without mkl-random."""
    try:
        state = _state()
    except H.Missing:
        return None
    return resolution_bits(state.uniform(0.0, 1.0, size=n))
