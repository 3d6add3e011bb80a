"""``derive``: the one step of every seed path (docs/spec.md section 7).

``derive(seed, tag) = mix64(seed ^ mix64(tag ^ 0x9E3779B97F4A7C15))`` with
SplitMix64's finaliser ``mix64``; a string tag is first the little-endian
uint64 of the first 8 bytes of the SHA-256 of its UTF-8 encoding, and a path
of tags folds from the left.  For a fixed tag it is a bijection of ``seed``,
so distinct parents never share a child under one tag, and small seeds never
collide across small tags (unlike ``seed + rank``).  The step runs as the
backend's ``derive`` kernel (csrc/core/derive.h, fallback/derive.py).
"""

import hashlib

import numpy as np

from .. import _validate
from ..backend import resolve as resolve_backend


def string_tag(tag):
    """The uint64 a string tag stands for: SHA-256 of its UTF-8, first 8 bytes, little-endian.

    >>> import hashlib
    >>> from ascend_rand.seeding import string_tag
    >>> string_tag("dropout")
    13348609076478233627
    >>> string_tag("dropout") == int.from_bytes(hashlib.sha256(b"dropout").digest()[:8], "little")
    True
    >>> import ascend_rand as ar
    >>> ar.derive(7, "dropout") == ar.derive(7, string_tag("dropout"))
    True
    """
    return int.from_bytes(hashlib.sha256(tag.encode("utf-8")).digest()[:8], "little")


def tag_value(tag, name="tag"):
    """A tag as a uint64: a str (hashed) or an integer in [0, 2**64)."""
    if isinstance(tag, str):
        return string_tag(tag)
    if isinstance(tag, (bytes, bytearray)):
        raise TypeError(f"{name} must be a str or an integer, got the bytes {tag!r}")
    try:
        return _validate.uint64(tag, name)
    except TypeError:
        raise TypeError(f"{name} must be a str or an integer in [0, 2**64), got {tag!r}") from None


def _u64_array(value, name):
    """An integer array with every entry in [0, 2**64), as uint64."""
    a = np.asarray(value)
    if a.dtype == object:
        flat = [_validate.uint64(v, name) if not isinstance(v, str) else string_tag(v)
                for v in a.reshape(-1)]
        return np.array(flat, dtype=np.uint64).reshape(a.shape)
    if a.dtype.kind == "U":
        return np.vectorize(string_tag, otypes=[np.uint64])(a)
    if a.dtype == np.bool_ or a.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers (or strings, for a tag), got dtype {a.dtype}")
    if a.dtype.kind == "i" and a.size and a.min() < 0:
        raise ValueError(f"{name} must be in [0, 2**64), got {a.min()}")
    return a.astype(np.uint64)


def derive(seed, *tags, backend="auto"):
    """The key at the end of the path ``tags`` from ``seed``: ``derive(derive(seed, a), b)``.

    ``seed`` is a uint64; each tag a str or a uint64.  Arrays (of integers;
    of strings for tags) broadcast and return a uint64 array; otherwise a
    Python int.  ``derive(seed)`` is ``seed``.

    >>> import ascend_rand as ar
    >>> ar.derive(0, 0)
    5197578548964807871
    >>> ar.derive(ar.derive(7, "rank"), 3) == ar.derive(7, "rank", 3)
    True
    """
    arrays = isinstance(seed, (np.ndarray, list, tuple)) or any(
        isinstance(t, (np.ndarray, list, tuple)) for t in tags)
    if not arrays:
        value = _validate.uint64(seed, "seed")
        steps = [tag_value(t, f"tags[{i}]") for i, t in enumerate(tags)]
        if not steps:
            return value
        out = np.array([value], dtype=np.uint64)
        kernel = resolve_backend(backend).kernel("derive")
        for t in steps:
            kernel(out, out, np.array([t], dtype=np.uint64))
        return int(out[0])
    seeds = (_u64_array(seed, "seed") if isinstance(seed, (np.ndarray, list, tuple))
             else np.uint64(_validate.uint64(seed, "seed")))
    steps = [_u64_array(t, f"tags[{i}]") if isinstance(t, (np.ndarray, list, tuple))
             else np.uint64(tag_value(t, f"tags[{i}]")) for i, t in enumerate(tags)]
    shape = np.broadcast_shapes(np.shape(seeds), *(np.shape(t) for t in steps))
    out = np.array(np.broadcast_to(seeds, shape), dtype=np.uint64, order="C")
    flat = out.reshape(-1)
    kernel = resolve_backend(backend).kernel("derive")
    for t in steps:
        kernel(flat, flat, np.ascontiguousarray(np.broadcast_to(t, shape), dtype=np.uint64).reshape(-1))
    return out
