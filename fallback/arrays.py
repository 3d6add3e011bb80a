"""The array namespace that fallback/'s algorithms are written over: NumPy or torch.

Every algorithm in fallback/ is written once, for "an array library": the NumPy
backend runs it on host arrays, the torch backend's mirror path on tensors of any
device (docs/architecture.md, "One array implementation").  The two libraries agree
on operators (``+ - * // % & | ^ << >>`` and comparisons on int64 and float arrays,
slicing, boolean masks, ``reshape``); what they spell differently is here, as two
small namespaces with one set of names.  ``namespace(x)`` gives an array's.

Conventions every algorithm keeps, so that one source gives the same bits on both:

- 32-bit stream words are int64 values in [0, 2**32); 64-bit quantities travel as
  32-bit halves, or as the int64 holding a uint64's bit pattern (``join64``).  No
  step needs an unsigned dtype, which torch lacks on most devices.
- Integer outputs are written through a signed view of the same width
  (``bits_view``) with values already reduced to that width, so no kernel depends
  on how a library casts an out-of-range value.
- Float formulas take one rounding per operation, with the operand dtypes written
  out: Python scalars combine with an array of a float dtype in that dtype on both
  libraries (NumPy 2's NEP 50 promotion, torch's scalar rule), never a 0-d array.

The array API standard, and ``array-api-compat`` that bridges NumPy and torch to it,
covers creation and element-wise functions but not the bit reinterpretations
(``bitcast``) and wrapping 64-bit products that these algorithms are made of, nor
devices such as ``npu``; the namespaces below are the dozen names the algorithms use.

>>> import numpy as np
>>> xp = namespace(np.zeros(2))
>>> xp.name, bitcast(xp.asarray([0x3F800000], xp.int32), xp.float32).tolist()
('numpy', [1.0])
"""

import sys

import numpy as np

# Words a kernel produces per chunk.  NumPy: 2**16, so that the temporaries (about a
# dozen int64 arrays of one element per block) stay in cache and in malloc's heap
# (measured: Philox words at 2**16 in about half the time of 2**18).  torch, on every
# device: 2**22, which amortises the ~150 operations of a chunk, each a kernel launch
# on an accelerator; on CPU tensors it is as fast as any smaller chunk (measured, 10**6
# and 2**23 words), and there the launch counts are a device's (benchmarks/launches.py).
# Results never depend on it (tests/device/test_torch_kernels_words.py draws across chunk
# boundaries).
HOST_CHUNK_WORDS = 1 << 16
DEVICE_CHUNK_WORDS = 1 << 22
# Which int32 of an int64's two in memory holds its low half (NumPy's views follow the host).
_LOW_HALF = 0 if sys.byteorder == "little" else 1


class _Numpy:
    """The NumPy namespace: host arrays, device "cpu"."""

    name = "numpy"
    int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
    uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
    float16, float32, float64 = np.float16, np.float32, np.float64
    bool = np.bool_
    ndarray = np.ndarray
    where = staticmethod(np.where)
    sqrt = staticmethod(np.sqrt)
    log = staticmethod(np.log)
    zeros_like = staticmethod(np.zeros_like)
    ones_like = staticmethod(np.ones_like)
    empty_like = staticmethod(np.empty_like)
    full_like = staticmethod(np.full_like)
    minimum = staticmethod(np.minimum)
    maximum = staticmethod(np.maximum)

    @property
    def bfloat16(self):
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)

    @staticmethod
    def clamp(x, min=None, max=None):  # noqa: A002 (torch's names)
        if min is not None:
            x = np.maximum(x, min)
        if max is not None:
            x = np.minimum(x, max)
        return x

    @staticmethod
    def empty(n, dtype, device=None):
        return np.empty(n, dtype=dtype)

    @staticmethod
    def zeros(n, dtype, device=None):
        return np.zeros(n, dtype=dtype)

    @staticmethod
    def arange(start, stop=None, dtype=np.int64, device=None):
        return np.arange(start, stop, dtype=dtype) if stop is not None else \
            np.arange(start, dtype=dtype)

    @staticmethod
    def asarray(values, dtype=None, device=None):
        return np.asarray(values, dtype=dtype)

    @staticmethod
    def from_host(array, device=None):
        """A host NumPy array as this library's array on ``device`` (a copy where needed)."""
        return np.ascontiguousarray(array)

    @staticmethod
    def to_host(x):
        return x

    @staticmethod
    def stack(xs, axis=0):
        return np.stack(xs, axis=axis)

    @staticmethod
    def concat(xs):
        return np.concatenate(xs)

    @staticmethod
    def sort(x):
        return np.sort(x, kind="stable")

    @staticmethod
    def argsort(x):
        return np.argsort(x, kind="stable")

    @staticmethod
    def searchsorted(sorted_, values, right=False):
        return np.searchsorted(sorted_, values, side="right" if right else "left")

    @staticmethod
    def nonzero(x):
        """The indices of ``x``'s true elements, 1-D int64."""
        return np.flatnonzero(x)

    @staticmethod
    def astype(x, dtype):
        return x.astype(dtype, copy=False)

    @staticmethod
    def bitcast(x, dtype):
        if x.itemsize == np.dtype(dtype).itemsize:
            return x.view(dtype)  # any strides: an element keeps its place
        return np.ascontiguousarray(x).view(dtype)

    @staticmethod
    def shr(x, n):
        """Logical shift right of int64 bit patterns: through the uint64 view (no mask)."""
        return (x.view(np.uint64) >> n).view(np.int64)

    @staticmethod
    def le_int64(v):
        """Each 8 bytes of the uint8 array ``v`` (a multiple of 8 long) as one int64 read
        little-endian, whatever the host's order (a '<i8' view)."""
        return np.ascontiguousarray(v).view("<i8")

    @staticmethod
    def low32(x):
        """int64 values in [-2**31, 2**31) as int32: the low halves' strided view, no pass."""
        return np.ascontiguousarray(x).view(np.int32)[..., _LOW_HALF::2]

    @staticmethod
    def contiguous(x):
        return np.ascontiguousarray(x)

    @staticmethod
    def numel(x):
        return x.size

    @staticmethod
    def itemsize(x):
        return x.itemsize

    @staticmethod
    def device(x):
        return "cpu"

    @staticmethod
    def chunk_words(device=None):
        return HOST_CHUNK_WORDS

    @staticmethod
    def is_array(x):
        return isinstance(x, np.ndarray)


class _Torch:
    """The torch namespace: tensors on any device."""

    name = "torch"

    def __init__(self):
        import torch

        self._torch = torch
        for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                      "uint64", "float16", "bfloat16", "float32", "float64", "bool"):
            setattr(self, dtype, getattr(torch, dtype))
        self.ndarray = torch.Tensor
        self.where = torch.where
        self.sqrt = torch.sqrt
        self.log = torch.log
        self.zeros_like = torch.zeros_like
        self.ones_like = torch.ones_like
        self.empty_like = torch.empty_like
        self.full_like = torch.full_like
        self.minimum = torch.minimum
        self.maximum = torch.maximum
        self.clamp = torch.clamp

    def empty(self, n, dtype, device=None):
        return self._torch.empty(n, dtype=dtype, device=device)

    def zeros(self, n, dtype, device=None):
        return self._torch.zeros(n, dtype=dtype, device=device)

    def arange(self, start, stop=None, dtype=None, device=None):
        dtype = self._torch.int64 if dtype is None else dtype
        if stop is None:
            return self._torch.arange(start, dtype=dtype, device=device)
        return self._torch.arange(start, stop, dtype=dtype, device=device)

    def asarray(self, values, dtype=None, device=None):
        return self._torch.as_tensor(values, dtype=dtype, device=device)

    def from_host(self, array, device=None):
        """A host NumPy array as a tensor on ``device``.

        A plan's per-element parameters may be read-only (broadcast) views, which
        torch refuses to wrap without a warning: those are copied once, on the host.
        """
        if not (array.flags.c_contiguous and array.flags.writeable):
            array = np.array(array, order="C")
        return self._torch.from_numpy(array).to(device)

    @staticmethod
    def to_host(x):
        return x.cpu().numpy()

    def stack(self, xs, axis=0):
        return self._torch.stack(xs, dim=axis)

    def concat(self, xs):
        return self._torch.cat(xs)

    def sort(self, x):
        return self._torch.sort(x, stable=True).values

    def argsort(self, x):
        return self._torch.sort(x, stable=True).indices

    def searchsorted(self, sorted_, values, right=False):
        return self._torch.searchsorted(sorted_, values, right=right)

    def nonzero(self, x):
        return self._torch.nonzero(x).reshape(-1)

    @staticmethod
    def astype(x, dtype):
        return x.to(dtype)

    @staticmethod
    def bitcast(x, dtype):
        return x.contiguous().view(dtype)

    @staticmethod
    def shr(x, n):
        """Logical shift right of int64 bit patterns (torch shifts int64 arithmetically)."""
        return (x >> n) & ((1 << (64 - n)) - 1)

    def le_int64(self, v):
        """Each 8 bytes of the uint8 tensor ``v`` as one int64 read little-endian (torch's
        views are in the host's order: every host and device torch runs on is little-endian,
        and a big-endian one is refused, not answered wrongly)."""
        if sys.byteorder != "little":
            raise NotImplementedError("the torch mirror needs a little-endian host")
        return v.contiguous().view(self.int64)

    def low32(self, x):
        """int64 values in [-2**31, 2**31) as int32 (an in-range cast: exact everywhere)."""
        return x.to(self.int32)

    @staticmethod
    def contiguous(x):
        return x.contiguous()

    @staticmethod
    def numel(x):
        return x.numel()

    @staticmethod
    def itemsize(x):
        return x.element_size()

    @staticmethod
    def device(x):
        return x.device

    @staticmethod
    def chunk_words(device=None):
        return DEVICE_CHUNK_WORDS

    def is_array(self, x):
        return isinstance(x, self._torch.Tensor)


NUMPY = _Numpy()
_TORCH = []


def torch_namespace():
    """The torch namespace (imports torch on first use: torch is an optional extra)."""
    if not _TORCH:
        _TORCH.append(_Torch())
    return _TORCH[0]


def namespace(x):
    """The namespace of array ``x``: NUMPY for a NumPy array, else torch's for a tensor.

    >>> namespace(np.arange(3)).name
    'numpy'
    """
    if isinstance(x, np.ndarray):
        return NUMPY
    if is_tensor(x):
        return torch_namespace()
    raise TypeError(f"expected a NumPy array or a torch tensor, got {type(x).__name__}")


def namespace_and_device(like):
    """(namespace, device) of the array ``like``: where a kernel makes its temporaries.
    NumPy's, on the host, when ``like`` is None (a host caller with no output yet)."""
    if like is None:
        return NUMPY, None
    xp = namespace(like)
    return xp, xp.device(like)


def is_tensor(x):
    """Whether ``x`` is a torch tensor, without importing torch (where torch has not been
    imported, nothing is a tensor)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


# -- bits, the same on both ------------------------------------------------------------------------

_SIGNED = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}


def bitcast(x, dtype):
    """``x``'s bits read as ``dtype`` (of the same width): NumPy's ``view``, torch's ``view``."""
    return namespace(x).bitcast(x, dtype)


def bits_view(out):
    """``out`` viewed as the signed integer dtype of its width (int8, int16, int32, int64)."""
    xp = namespace(out)
    return out.view(getattr(xp, _SIGNED[xp.itemsize(out)]))


def to_signed(x, width):
    """The ``width``-bit pattern of ``x`` (int64, taken mod 2**width) as a signed value.

    Assigning the result to an array of the signed ``width``-bit dtype stores
    exactly those bits, with no out-of-range cast.  ``width`` < 64.

    >>> to_signed(np.array([0, 127, 128, 255, 256 + 3]), 8).tolist()
    [0, 127, -128, -1, 3]
    """
    half = 1 << (width - 1)
    return ((x + half) & ((1 << width) - 1)) - half


def join64(hi, lo):
    """(hi << 32) | lo for 32-bit ``hi``, ``lo``: the uint64's bit pattern in an int64 array.

    Both libraries shift int64 values as their bit patterns, so the top bit of
    ``hi`` lands in the sign bit (the value is the uint64's minus 2**64 there).

    >>> join64(np.array([0xFFFFFFFF]), np.array([1])).view(np.uint64).tolist()
    [18446744069414584321]
    """
    return (hi << 32) | lo
