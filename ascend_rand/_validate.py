"""Argument checks, made once in Python before any backend runs.

Every backend sees only valid input; every bad value gets a ValueError or
TypeError that names it.
"""

import math
import operator
from collections.abc import Sequence

import numpy as np

U64_LIMIT = 1 << 64
# The largest element count a NumPy array (and a signed 64-bit size) can have.
MAX_ELEMENTS = (1 << 63) - 1


def integer(value, name):
    """``value`` as a Python int; TypeError for floats, bools, strings and arrays."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got the bool {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r}") from None


def uint64(value, name):
    """An integer in [0, 2**64)."""
    v = integer(value, name)
    if not 0 <= v < U64_LIMIT:
        raise ValueError(f"{name} must be in [0, 2**64), got {v}")
    return v


def shape(value):
    """A shape tuple from None (a scalar draw), an int or a sequence of ints."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes)):
        raise TypeError(f"shape must be an int or a sequence of ints, got {value!r}")
    if isinstance(value, Sequence) or (isinstance(value, np.ndarray) and value.ndim == 1):
        entries = tuple(value)
    else:
        entries = (value,)
    dims = []
    for i, entry in enumerate(entries):
        try:
            dim = integer(entry, f"shape[{i}]")
        except TypeError:
            raise TypeError(
                f"shape entries must be integers, got {entry!r} at position {i} of {value!r}"
            ) from None
        if dim < 0:
            raise ValueError(f"shape entries must be >= 0, got {dim} at position {i} of {value!r}")
        if dim > MAX_ELEMENTS:
            raise ValueError(
                f"shape entry {dim} at position {i} of {value!r} overflows the 64-bit "
                f"element count (at most 2**63 - 1)"
            )
        dims.append(dim)
    if 0 not in dims and math.prod(dims) > MAX_ELEMENTS:
        raise ValueError(
            f"shape {tuple(dims)} has {math.prod(dims)} elements, which overflows the "
            f"64-bit element count (at most 2**63 - 1)"
        )
    return tuple(dims)


def elements(shape):
    """The element count of a checked shape."""
    return math.prod(shape)


def counter(value):
    """A Philox counter ``(lo64, hi64)``, each half in [0, 2**64)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"counter must be a pair (lo, hi) of integers, got {value!r}")
    parts = tuple(value)
    if len(parts) != 2:
        raise ValueError(f"counter must have exactly 2 entries (lo, hi), got {value!r}")
    return uint64(parts[0], "counter[0] (low 64 bits)"), uint64(parts[1], "counter[1] (high 64 bits)")


def real(value, name):
    """``value`` as a Python float; TypeError for non-numbers, ValueError if it overflows."""
    if isinstance(value, (str, bytes)):  # float("1.5") parses; a string is still no number
        raise TypeError(f"{name} must be a real number, got the string {value!r}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name}={value!r} is too large for a float64") from None
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {value!r}") from None


def finite_float(value, name):
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number, got the bool {value!r}")
    v = real(value, name)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def flag(value, name, what):
    """A bool flag: TypeError for anything but True/False."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what}: {name} must be a bool, got {value!r}")
    return bool(value)
