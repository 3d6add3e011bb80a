"""fallback/arrays.py: the namespace the one Python implementation is written over.

Each primitive is held to Python's integers (the bit patterns written out here), on
NumPy arrays and on torch tensors alike: what the algorithms assume of the two
libraries is exactly what these check.
"""

import numpy as np
import pytest

from ascend_rand.fallback import arrays

torch = pytest.importorskip("torch")

TOP = (1 << 64) - 1
# int64 bit patterns that exercise the sign bit and both halves.
PATTERNS = [0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32, (1 << 63) - 1, 1 << 63,
            TOP, 0xDEADBEEF12345678, 0x8000000000000001]


def signed(u):
    return u - (1 << 64) if u >> 63 else u


def both(values, dtype="int64"):
    """The same values as a NumPy array and a CPU tensor."""
    a = np.array(values, dtype=dtype)
    return [a, torch.from_numpy(a.copy())]


def test_namespace_of_each_library_and_a_clear_error_otherwise():
    assert arrays.namespace(np.zeros(1)) is arrays.NUMPY
    assert arrays.namespace(torch.zeros(1)).name == "torch"
    with pytest.raises(TypeError, match="got list"):
        arrays.namespace([1, 2])
    assert arrays.is_tensor(torch.zeros(1)) and not arrays.is_tensor(np.zeros(1))


@pytest.mark.parametrize("n", [1, 7, 32, 63])
def test_shr_is_the_logical_shift_of_the_bit_pattern(n):
    want = [signed(u >> n) for u in PATTERNS]
    for x in both([signed(u) for u in PATTERNS]):
        xp = arrays.namespace(x)
        assert xp.shr(x, n).tolist() == want


def test_low32_and_bitcast():
    values = [0, 1, -1, 2**31 - 1, -(2**31), 12345]
    for x in both(values):
        xp = arrays.namespace(x)
        low = xp.low32(x)
        assert low.dtype == xp.int32 and low.tolist() == values
        one = xp.bitcast(xp.asarray([0x3F800000], xp.int32), xp.float32)
        assert one.tolist() == [1.0]


def test_le_int64_reads_eight_bytes_little_endian_on_any_host():
    raw = bytes(range(1, 17))
    want = [int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little")]
    for v in both(list(raw), "uint8"):
        xp = arrays.namespace(v)
        assert xp.le_int64(v).tolist() == want
    # NumPy states the order in the dtype, so a big-endian host reads the same values.
    assert arrays.NUMPY.le_int64(np.frombuffer(raw, np.uint8)).dtype == np.dtype("<i8")


def test_bits_view_to_signed_and_join64():
    for width, dtype in [(8, "uint8"), (16, "uint16"), (32, "uint32")]:
        out = np.zeros(3, dtype=dtype)
        values = np.array([0, 1 << (width - 1), (1 << width) - 1])
        arrays.bits_view(out)[:] = arrays.to_signed(values, width)
        assert out.tolist() == [0, 1 << (width - 1), (1 << width) - 1]
    hi = [0, 0xFFFFFFFF, 0x80000000]
    lo = [0xFFFFFFFF, 1, 0]
    want = [signed((h << 32) | l) for h, l in zip(hi, lo)]
    for h, l in zip(both(hi), both(lo)):
        assert arrays.join64(h, l).tolist() == want


def test_chunks_are_small_on_the_host_and_large_for_tensors():
    assert arrays.NUMPY.chunk_words() == arrays.HOST_CHUNK_WORDS == 1 << 16
    assert arrays.torch_namespace().chunk_words("cpu") == arrays.DEVICE_CHUNK_WORDS == 1 << 22


def test_from_host_copies_a_read_only_view_once_and_keeps_values():
    base = np.arange(6, dtype=np.int64)
    view = np.broadcast_to(base[:1], (4,))  # read-only, stride 0
    t = arrays.torch_namespace().from_host(view, "cpu")
    assert t.tolist() == [0, 0, 0, 0]
    assert arrays.NUMPY.from_host(base) is base  # contiguous: no copy


@pytest.mark.parametrize("words", [np.zeros(8, np.int64), np.zeros(8, np.float64),
                                   np.zeros(8, np.int32), list(range(8))])
def test_engine_words_of_another_kind_are_refused_as_the_native_kernels_refuse_them(words):
    """A host kernel's ``words`` are the engine's uint32 words; anything else is a TypeError
    naming what it got, from the NumPy table as from the native one (not a ufunc error)."""
    from ascend_rand.fallback import kernels as numpy_kernels
    out = np.empty(4, np.float32)
    with pytest.raises(TypeError, match="uint32"):
        numpy_kernels.mt19937_uniform(out, 0, 0, 0, "float32", 0.0, 1.0, False, words=words)
    with pytest.raises(TypeError, match="uint32"):
        numpy_kernels.raw(np.empty(4, np.uint32), 0, 0, 0, words=words)
    native = peers_native()
    if native is not None:
        with pytest.raises(TypeError, match="uint32"):
            native.raw(np.empty(4, np.uint32), 0, 0, 0, words=words)


def peers_native():
    from ascend_rand import _extension
    return _extension.module


def test_engine_words_of_any_shape_are_read_in_memory_order_as_native_reads_them():
    from ascend_rand.fallback import kernels as numpy_kernels
    words = np.arange(1, 9, dtype=np.uint32).reshape(2, 4)
    out = np.empty(8, np.uint32)
    numpy_kernels.raw(out, 0, 0, 0, words=words)
    assert out.tolist() == list(range(1, 9))
    native = peers_native()
    if native is not None:
        got = np.empty(8, np.uint32)
        native.raw(got, 0, 0, 0, words=words)
        assert got.tolist() == out.tolist()
