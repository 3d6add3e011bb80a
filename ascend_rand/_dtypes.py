"""The output dtypes ascend_rand draws, by name."""

import ml_dtypes
import numpy as np

FLOAT_DTYPES = {
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float64": np.dtype(np.float64),
}

INT_DTYPES = {
    name: np.dtype(name)
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
}

RAW_DTYPES = {"uint32": np.dtype(np.uint32), "uint64": np.dtype(np.uint64)}

_ALL = {**FLOAT_DTYPES, **INT_DTYPES}

# Every dtype a plan names, to NumPy (bool: Bernoulli bits).
NUMPY = {**_ALL, "bool": np.dtype(np.bool_)}

# The unsigned view a backend writes into, for the dtypes whose kernels write bits
# (16-bit floats, signed integers); the other dtypes are written as they are.
BITS_VIEW = {
    "float16": np.dtype(np.uint16),
    "bfloat16": np.dtype(np.uint16),
    **{name: np.dtype(f"uint{dt.itemsize * 8}") for name, dt in INT_DTYPES.items()
       if dt.kind == "i"},
}


def dtype_name(dtype):
    """The canonical name of ``dtype`` (a string, NumPy dtype or scalar type), or None."""
    if isinstance(dtype, str):
        return dtype if dtype in _ALL else None
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError, SyntaxError, KeyError, OverflowError):
        # np.dtype parses strings it is handed inside bytes and other objects: junk such
        # as b"(," gets a SyntaxError from its comma-string parser (found by the fuzzer)
        return None
    for name, known in _ALL.items():
        if dt == known:
            return name
    return None


def resolve(dtype, allowed, what):
    """Canonical name of ``dtype`` if it is one of ``allowed``; TypeError naming it otherwise."""
    name = dtype_name(dtype)
    if name is None or name not in allowed:
        raise TypeError(
            f"{what}: unsupported dtype {dtype!r}; expected one of {', '.join(allowed)}"
        )
    return name
