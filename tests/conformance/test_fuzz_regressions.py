"""Regression tests for what fuzz/fuzz_native.py and tools/sanitize.sh found.

1. The small-draw functions ``_native.stateless_draw`` / ``philox_draw`` allocated the
   output in the dtype a plan's ``native_form`` named and ran the kernel its code named,
   without checking that the two fit: a hand-made plan with an int8 dtype and the
   permutation kernel wrote 8 bytes per 1-byte element (a heap overflow AddressSanitizer
   reported), and an object dtype with the raw-words kernel wrote random bits over
   object references (a segfault when the array was read or freed).  Unknown normal /
   truncated-normal method codes reached the kernels unchecked, and a refused code
   after the reservation had already consumed a Generator offset.  Now every such plan
   is a ValueError before anything is allocated into, reserved or written.
2. A packed mask of n bits is ceil(n / 128) * 16 bytes; ``mask_bytes`` computed it as
   (n + 127) / 128 * 16, which wraps for n >= 2**64 - 127: a mask of 2**64 - 1 bits
   was "0 bytes", an empty ``out`` passed the size check, and the all-zero/all-one
   threshold path memset 2**61 bytes (a segfault; found writing the harness's edge
   values for ``_native.bernoulli_packed``).  Now such an n needs 2**61 bytes and is
   refused.
3. ``SecretReserve.take(0)`` on a reserve that never held a byte passed its null buffer
   to memcpy (undefined even for 0 bytes; UBSan reported it under tests/
   test_entropy_reserve.py).  take(0) and put(b"") now copy nothing.
5. Arrays at an odd byte offset (``np.frombuffer(buf, offset=1)``, or a view of
   ``bytes[1:]``) passed every check: the kernels then wrote int64 items through
   misaligned pointers (undefined behaviour: UBSan, ``store to misaligned address``
   in ``integers``, found by fuzz/fuzz_native.py under tools/sanitize.sh, reachable
   from ``Generator.integers(out=...)``).  Every buffer a binding reads or writes
   must now be aligned to its item size, as it must be C-contiguous.
4. ``_native.philox_bitgen`` took any 8-slot uint64 buffer, strided or reversed ones
   too, and numpy's draws through the capsule then read and wrote 8 contiguous slots
   from the first element's address: past the end of a reversed array.  Now it needs a
   C-contiguous buffer.
6.-7. ``choice`` past int64 and dtype junk numpy's parser chokes on (the tests below).
8. An output past NumPy's 2**63 - 1 byte limit reached the native binding as a word
   count past 2**64 (OverflowError); plans now refuse it (found by a 3-minute run).
9. The pybind11 kernels checked an ``out`` array's item size and alignment, not what
   its items are: ``_native.permutation`` into an 11-element dtype=object array (8-byte
   items) wrote int64 values over object references, and NumPy crashed dereferencing
   them (found by the same run).  Every binding that writes an ``out`` now refuses a
   dtype that holds Python objects.

10. ``choice(a)`` with ``size=None`` read its one element back through ``[()]``, which
   indexes the element itself when it is a str or an object: a dict in an object array
   gave KeyError, a str array TypeError (found by tools/fuzz.sh with a grown corpus).

The sanitized suite (tools/sanitize.sh) runs this file, so a reintroduced overflow is
an ASan report there even where the plain build survives it.
"""

from array import array

import numpy as np
import pytest

import ascend_rand
from ascend_rand import _extension, stateless

import peers  # tests/peers.py

NATIVE = _extension.module
pytestmark = pytest.mark.skipif(NATIVE is None, reason="needs the native core")

MASK32 = 0xFFFFFFFF


class Plan:
    """A plan as the small-draw functions read it: only its ``native_form`` attribute."""

    def __init__(self, dtype, shape, kernel, params, scalar=False, words=0):
        self.native_form = (np.dtype(dtype), shape, scalar, kernel, words, params)


# (dtype, kernel code, params): each dtype is one the kernel cannot write.
MISMATCHED = [
    (np.int8, 7, (4,)),           # permutation writes int64
    (object, 0, ()),              # raw words over object references
    (np.uint16, 0, ()),           # raw words are uint32 or uint64
    (np.float32, 0, ()),
    (np.float16, 1, (1, 0.0, 1.0, False)),     # uniform float64 into 2-byte items
    (np.float64, 1, (2, 0.0, 1.0, False)),     # uniform float16 into 8-byte items
    (object, 3, (1, 0, 0.0, 1.0, False)),      # normal float64 over object references
    (np.dtype([("a", "<u4"), ("b", "<u4")]), 2, (0, 5)),  # integers into a structured dtype
    (np.float64, 2, (0, 5)),      # integers into a float
    (np.int16, 5, (2**31,)),      # Bernoulli writes one byte
    (np.int64, 6, (16, 2**31)),   # packed mask bytes
]


@pytest.mark.parametrize("dtype,kernel,params", MISMATCHED)
def test_stateless_draw_refuses_a_dtype_the_kernel_cannot_write(dtype, kernel, params):
    plan = Plan(dtype, (4,) if kernel != 6 else (16,), kernel, params)
    with pytest.raises(ValueError, match=f"kernel code {kernel} cannot write dtype"):
        NATIVE.stateless_draw(7, (0, 0), plan)


@pytest.mark.parametrize("kernel,params,message", [
    (3, (0, 2, 0.0, 1.0, False), "unknown normal method code"),
    (3, (0, 99, 0.0, 1.0, False), "unknown normal method code"),
    (4, (0, 0.0, 1.0, False, 3, -2.0, 2.0, 4.0, 0.0, 0.0, False), "unknown truncated normal method"),
    (1, (4, 0.0, 1.0, False), "unknown float format code"),
    (5, (2**32 + 1,), "threshold must be <= 2\\*\\*32"),
])
def test_stateless_draw_refuses_unknown_codes(kernel, params, message):
    with pytest.raises(ValueError, match=message):
        NATIVE.stateless_draw(7, (0, 0), Plan(np.float32 if kernel != 5 else np.bool_, (3,),
                                              kernel, params))


def test_philox_draw_refusing_a_plan_reserves_no_offset():
    slots = np.zeros(8, np.uint64)
    slots[1] = 41  # offset 41, the common case otherwise
    calls = []

    def acquire():
        calls.append("acquire")

    for plan in (Plan(np.int8, (4,), 7, (4,)), Plan(object, (2,), 0, ()),
                 Plan(np.float32, (2,), 3, (0, 5, 0.0, 1.0, False))):
        with pytest.raises(ValueError):
            NATIVE.philox_draw(slots, acquire, acquire, plan)
    assert int(slots[1]) == 41 and calls == []


def test_a_fitting_hand_made_plan_still_draws_the_stream(ref):
    # The raw-words kernel into uint32 and uint64: words of the stream (key, (lo, hi)) by
    # the reference Philox written from docs/spec.md in tests/conftest.py.
    key, lo, hi = 0x0123456789ABCDEF, 2**64 - 1, 5
    words = ref.words(key, (lo, hi), 10)
    got32 = NATIVE.stateless_draw(key, (lo, hi), Plan(np.uint32, (10,), 0, (), words=10))
    assert got32.dtype == np.uint32 and got32.tolist() == words
    got64 = NATIVE.stateless_draw(key, (lo, hi), Plan(np.uint64, (5,), 0, (), words=10))
    # uint64 raw words: two words per element, the first the high half (docs/spec.md).
    assert got64.tolist() == ref.raw_u64(words, 5)
    # A permutation into int64 still passes the new checks: a permutation of range(6).
    perm = NATIVE.stateless_draw(key, (0, 0), Plan(np.int64, (6,), 7, (6,), words=12))
    assert sorted(perm.tolist()) == list(range(6))


@pytest.mark.parametrize("bits", [2**64 - 1, 2**64 - 64, 2**64 - 127])
@pytest.mark.parametrize("threshold", [0, 2**31, 2**32])
def test_bernoulli_packed_refuses_a_bit_count_whose_mask_size_wrapped(bits, threshold):
    with pytest.raises(ValueError, match="bernoulli_packed: out has 0 items, expected 2305843009213693952"):
        NATIVE.bernoulli_packed(np.empty(0, np.uint8), 1, 0, 0, bits, threshold, None)
    with pytest.raises(ValueError, match="does not hold the mask of that many bits"):
        NATIVE.stateless_draw(1, (0, 0), Plan(np.uint8, (0,), 6, (bits, threshold)))


@pytest.mark.parametrize("bits", [0, 1, 127, 128, 129, 1000, 2**16 + 1])
def test_packed_mask_sizes_are_whole_128_bit_groups(bits):
    # ceil(bits / 128) groups of 16 bytes, in Python ints.
    nbytes = -(-bits // 128) * 16
    out = np.full(nbytes, 0xAA, np.uint8)
    NATIVE.bernoulli_packed(out, 3, 0, 0, bits, 0, None)
    assert out.tolist() == [0] * nbytes
    ones = np.zeros(nbytes, np.uint8)
    NATIVE.bernoulli_packed(ones, 3, 0, 0, bits, 2**32, None)
    # All bits set up to `bits`, zero padding after (a threshold of 2**32 keeps every bit).
    want = [0xFF] * (bits // 8) + ([(1 << bits % 8) - 1] if bits % 8 else [])
    assert ones.tolist() == want + [0] * (nbytes - len(want))
    with pytest.raises(ValueError, match=f"expected {nbytes}"):
        NATIVE.bernoulli_packed(np.empty(nbytes + 16, np.uint8), 3, 0, 0, bits, 0, None)


def test_reserve_takes_and_puts_zero_bytes_without_a_buffer():
    r = NATIVE.SecretReserve()
    assert r.take(0) == b"" and r.available == 0 and r.taken == 0
    r.put(b"")
    r.put(bytearray())
    assert r.available == 0 and r.take(0) == b""
    r.put(b"abc")
    assert r.take(0) == b"" and r.take(3) == b"abc" and r.taken == 3
    assert r.take(0) == b"" and r.take(1) is None


# np.ulonglong: the buffer format "Q" the engine's array("Q") slots export (np.uint64's
# is "L" on Linux, refused already by its format).
@pytest.mark.parametrize("make", [
    lambda: np.zeros(8, np.ulonglong)[::-1],
    lambda: np.zeros(16, np.ulonglong)[::2],
    lambda: np.zeros((2, 8), np.ulonglong)[:, :4],
    lambda: np.zeros(65, np.uint8)[1:].view(np.ulonglong),
])
def test_philox_bitgen_refuses_a_strided_buffer(make):
    with pytest.raises(ValueError, match="C-contiguous, aligned buffer of 8 uint64 slots"):
        NATIVE.philox_bitgen(make())


@pytest.mark.parametrize("make", [
    lambda: array("Q", range(8)),
    lambda: np.arange(8, dtype=np.ulonglong),
    lambda: np.arange(8, dtype=np.ulonglong).reshape(2, 4),
])
def test_philox_bitgen_accepts_contiguous_slots(make):
    capsule = NATIVE.philox_bitgen(make())
    assert type(capsule).__name__ == "PyCapsule"


def misaligned(dtype, n):
    """n items of dtype one byte into a byte buffer: C-contiguous, not aligned."""
    dtype = np.dtype(dtype)
    a = np.zeros(n * dtype.itemsize + 1, np.uint8)[1:].view(dtype)
    assert a.flags.c_contiguous and not a.flags.aligned
    return a


@pytest.mark.parametrize("call", [
    lambda: NATIVE.integers(misaligned(np.int64, 9), 1, 0, 0, 0, 5, None),
    lambda: NATIVE.raw(misaligned(np.uint32, 9), 1, 0, 0, None),
    lambda: NATIVE.uniform(misaligned(np.float64, 9), 1, 0, 0, "float64", 0.0, 1.0, False, None),
    lambda: NATIVE.normal(misaligned(np.float32, 9), 1, 0, 0, "float32", "ziggurat", 0.0, 1.0,
                          False, None),
    lambda: NATIVE.permutation(misaligned(np.int64, 4), 1, 0, 0, 4, None),
    lambda: NATIVE.raw(np.zeros(4, np.uint32), 1, 0, 0, misaligned(np.uint32, 4)),
    lambda: NATIVE.mt19937_fill(np.zeros(4, np.uint32), misaligned(np.uint32, 624),
                                np.zeros(1, np.int64)),
    lambda: NATIVE.derive(misaligned(np.uint64, 3), np.zeros(3, np.uint64), np.zeros(3, np.uint64)),
    lambda: NATIVE.apply_mask(misaligned(np.float32, 8), np.ones(8, np.float32),
                              np.full(1, 255, np.uint8), 2.0),
    lambda: NATIVE.philox_draw(misaligned(np.uint64, 8), None, None, None),
])
def test_bindings_refuse_misaligned_buffers(call):
    # (derive's wrong-buffer error has always been a TypeError; the others ValueError.)
    with pytest.raises((ValueError, TypeError), match="aligned"):
        call()


def test_generator_integers_into_a_misaligned_out_gets_the_aligned_draws_bits():
    # The kernel refuses misaligned memory (the raw-kernel tests above); the public API
    # fills such an out through an aligned buffer (backend/base.py), so the int64 stores
    # UBSan caught never happen, and spec 9 holds: the bits do not depend on alignment.
    import ascend_rand

    out = misaligned(np.int64, 9)
    assert not out.flags.aligned
    got = ascend_rand.Generator(3, backend="native").integers(0, 5, out=out)
    assert got is out
    ok = np.empty(9, np.int64)
    ascend_rand.Generator(3, backend="native").integers(0, 5, out=ok)
    assert ok.min() >= 0 and ok.max() < 5 and out.tolist() == ok.tolist()
    assert ascend_rand.Generator(3, backend="numpy").integers(0, 5, size=9).tolist() == ok.tolist()


@pytest.mark.parametrize("backend", ["numpy", pytest.param("native", marks=peers.needs_native)])
@pytest.mark.parametrize("replace", [False, True])
def test_choice_population_beyond_int64_indices_is_refused(backend, replace):
    # Found by the fuzzer (choice(2**64 + 1, replace=False) reached the NumPy sparse kernel:
    # OverflowError); choice(2**64 - 1) returned negative int64 "indices".  n <= 2**63.
    import ascend_rand

    g = ascend_rand.Generator(3, backend=backend)
    for n in (2**63 + 1, 2**64 - 1, 2**64 + 1, 10**30):
        with pytest.raises(ValueError, match=rf"a = {n} .*a <= 2\*\*63"):
            g.choice(n, size=126, replace=replace)
        with pytest.raises(ValueError, match=rf"a = {n} "):
            ascend_rand.stateless.choice(n, 1, size=3, replace=replace, backend=backend)
    top = g.choice(2**63, size=5, replace=replace)
    assert top.dtype == np.int64 and (top >= 0).all()


@pytest.mark.parametrize("junk", [b"(,", b"i4,", b"(2,)f4,,", "i4, f8".encode()])
def test_dtype_junk_that_numpy_parses_is_a_type_error(junk):
    # Found by the fuzzer: np.dtype(b"(,") raises SyntaxError from its comma-string
    # parser; every dtype the library does not know is a TypeError naming it.
    import ascend_rand

    with pytest.raises(TypeError, match="unsupported dtype"):
        ascend_rand.Generator(1).truncated_normal(size=3, dtype=junk)
    with pytest.raises(TypeError, match="unsupported dtype"):
        ascend_rand.stateless.uniform(3, 1, dtype=junk)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("native", marks=peers.needs_native)])
def test_outputs_past_numpys_byte_limit_are_refused_before_a_backend(backend):
    # Found by the fuzzer (seed 99): integers(2**63, size=2**62) reads 4 words an element,
    # 2**64 words, which the native binding met as an OverflowError.  Any output past
    # 2**63 - 1 bytes is a ValueError naming its shape, and no offset is reserved.
    import ascend_rand

    g = ascend_rand.Generator(5, backend=backend)
    cases = [
        (lambda: g.integers(2**63, size=2**62), r"integers: shape \(4611686018427387904,\) of int64 is 36893488147419103232 bytes"),
        (lambda: g.integers(10, size=(2**31, 2**31), dtype="int32"), r"shape \(2147483648, 2147483648\) of int32 is 18446744073709551616 bytes"),
        (lambda: g.random(size=2**61, dtype="float32"), r"uniform: shape \(2305843009213693952,\) of float32 is 9223372036854775808 bytes"),
        (lambda: g.standard_normal(size=2**60, dtype="float64"), r"of float64 is 9223372036854775808 bytes"),
        (lambda: g.permutation(2**62), r"permutation: shape \(4611686018427387904,\) of int64"),
        (lambda: ascend_rand.stateless.raw(2**62, 1, dtype="uint64", backend=backend), r"raw: shape"),
    ]
    for draw, message in cases:
        with pytest.raises(ValueError, match=message + r".*at most 2\*\*63 - 1 bytes"):
            draw()
    assert g.state["offset"] == 0
    # The limit itself: 2**63 - 1 bytes is a plan (no allocation tried here: under ASan a
    # failed 8 EiB malloc is a report), one byte more is not.
    from ascend_rand.distributions.plan import Plan

    assert Plan("bernoulli", (2**63 - 1,), "bool", (1, None), 2**63 - 1).count == 2**63 - 1
    with pytest.raises(ValueError, match=r"bernoulli: shape \(9223372036854775808,\) of bool"):
        Plan("bernoulli", (2**63,), "bool", (1, None), 2**63)
    assert Plan("normal", (2**60 - 1,), "float64", (), 0).count == 2**60 - 1
    with pytest.raises(ValueError, match="of float64 is 9223372036854775808 bytes"):
        Plan("normal", (2**60,), "float64", (), 0)


def test_plan_item_bytes_match_numpy():
    from ascend_rand import _dtypes
    from ascend_rand.distributions.plan import ITEM_BYTES

    assert {name: dt.itemsize for name, dt in _dtypes.NUMPY.items()} == ITEM_BYTES


# 8-byte items that hold Python objects: item size and alignment alone let them through.
OBJECT_OUTS = {"object": np.empty(11, dtype=object),
               "object-3d": np.empty((1, 11, 1), dtype=object),
               "struct-O": np.empty(11, dtype=[("a", "O")])}


@pytest.mark.parametrize("kind", sorted(OBJECT_OUTS))
def test_kernels_refuse_outputs_that_hold_python_objects(kind):
    # Found by the fuzzer (seed 99): permutation(out=object array, n=29) wrote int64
    # values over the array's object references; NumPy crashed on them.
    out = OBJECT_OUTS[kind].copy()
    calls = {
        "permutation": lambda: NATIVE.permutation(out, 1, 0, 0, 29, None),
        "choice_sparse": lambda: NATIVE.choice_sparse(out, 1, 0, 0, 29, None),
        "weighted_choice": lambda: NATIVE.weighted_choice(out, 1, 0, 0, np.ones(29), None),
        "uniform": lambda: NATIVE.uniform(out, 1, 0, 0, "float64", 0.0, 1.0, False, None),
        "integers": lambda: NATIVE.integers(out, 1, 0, 0, 0, 5, None),
        "normal": lambda: NATIVE.normal(out, 1, 0, 0, "float64", "ziggurat", 0.0, 1.0, False),
        "truncated_normal": lambda: NATIVE.truncated_normal(
            out, 1, 0, 0, "float64", 0.0, 1.0, False, 0, -2.0, 2.0, 4.0, 0.0, 0.0, False),
        "mt19937_uniform": lambda: NATIVE.mt19937_uniform(
            out, 1, 0, 0, "float64", 0.0, 1.0, False, np.zeros(2 * out.size, np.uint32)),
    }
    for name, call in calls.items():
        prefix = "" if name in ("uniform", "integers", "normal", "truncated_normal") else f"{name}: "
        with pytest.raises(TypeError, match=rf"^{prefix}out must hold numbers, not Python objects"):
            call()
        # nothing was written over the references
        assert [x for x in out.reshape(-1).tolist() if x not in (None, (None,))] == [], name
    with pytest.raises(TypeError, match="raw: out must be uint32 or uint64"):
        NATIVE.raw(out, 1, 0, 0, None)


@pytest.mark.skipif(NATIVE is None, reason="no native core")
def test_a_permutation_kernel_asked_for_a_huge_population_raises_memory_error():
    """The raw permutation kernel sorts `population` 16-byte keys; a population whose key
    array cannot be sized (2**60 keys and up: 2**64 bytes) raises MemoryError at the
    allocation, writing nothing (the fuzzer's harness once called it a violation: seed
    12, 60 s; the Python layer never asks, as its plans cap the output and take the
    sparse kernel for a small choice from a large population)."""
    out = np.full(7, -1, np.int64)
    for population in (2**60, 2**62, 2**63):
        with pytest.raises(MemoryError):
            NATIVE.permutation(out, 1, 2, 0, population, None)
    assert (out == -1).all()


@pytest.mark.parametrize("backend", ["numpy", pytest.param("native", marks=peers.needs_native)])
def test_choice_of_one_element_returns_the_element_itself(backend):
    # spec 4A.2: with replacement and no p, choice is integers(0, n) on the same words.
    objects = np.empty(3, dtype=object)
    objects[:] = [{"a": 1}, {"b": 2}, ("c", 3)]
    for a in (objects, np.array(["ab", "cd", "ef"]), np.array([1.5, 2.5, 3.5])):
        for seed in range(6):
            got = ascend_rand.Generator(seed, backend=backend).choice(a)
            i = int(ascend_rand.Generator(seed, backend=backend).integers(0, len(a)))
            assert got is a[i] if a.dtype == object else (type(got), got) == (type(a[i]), a[i])
            assert stateless.choice(a, key=seed, backend=backend) == a[
                int(stateless.integers(None, seed, 0, len(a), backend=backend))]
