"""ascend_rand/tables/formats.py: the one rounding of a float64 to float16 / bfloat16.

One body serves a plan's scalar parameter (Python ints), NumPy arrays and torch
tensors.  Each is held to references written here: NumPy's float64 -> float16 cast
(correctly rounded) and, for bfloat16, exact rounding with Fractions from the value.
"""

import math
import struct
from fractions import Fraction

import numpy as np
import pytest

from ascend_rand.tables import formats

_F16, _BF16 = formats.FORMAT_FLOAT16, formats.FORMAT_BFLOAT16


def _edge_values():
    """Ties, near-ties, subnormal results, overflow, zeros, both signs."""
    out = [0.0, -0.0, 65504.0, 65520.0, 65519.99, 3.4e38, 3.3961e38, 1e300, 5e-324,
           2.0 ** -24, 2.0 ** -25, 2.0 ** -25 * (1 + 2 ** -40), 2.0 ** -133, 2.0 ** -134]
    for e in range(-140, 130, 3):
        for m in (1.0, 1 + 2 ** -8, 1 + 2 ** -11, 1 + 2 ** -8 + 2 ** -40, 1 + 3 * 2 ** -9,
                  1.99999999, 1 + 2 ** -12):
            out += [m * 2.0 ** e, -m * 2.0 ** e]
    return np.array(out)


def _random_values(count, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 63, count, dtype=np.int64)
    values = bits.view(np.float64) * np.where(rng.random(count) < 0.5, 1.0, -1.0)
    near = rng.standard_normal(count) * 2.0 ** rng.integers(-30, 20, count)
    values = np.concatenate([values, near])
    return values[np.isfinite(values)]


def _bf16_reference(x):
    """bfloat16 bits of the finite float64 ``x``: nearest, ties to even, by Fractions."""
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    v = Fraction(abs(x))
    if v == 0:
        return sign
    e = max(math.floor(math.log2(v)), -126)
    while Fraction(2) ** e > v:
        e -= 1
    while Fraction(2) ** (e + 1) <= v:
        e += 1
    e = max(e, -126)
    ulp = Fraction(2) ** (e - 7)
    q, rem = divmod(v, ulp)
    q = int(q)
    if rem > ulp / 2 or (rem == ulp / 2 and q % 2 == 1):
        q += 1
    value = q * ulp
    if value >= Fraction(2) ** 128:
        return sign | 0x7F80
    f32 = struct.unpack("<I", struct.pack("<f", float(value)))[0]  # exact: 8 bits
    return sign | (f32 >> 16)


@pytest.mark.parametrize("seed", [0, 1])
def test_float16_is_numpys_correctly_rounded_cast(seed):
    x = np.concatenate([_edge_values(), _random_values(200_000, seed)])
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).view(np.uint16).astype(np.int64)
    got = formats.round_bits_to_16(x.view(np.int64), _F16)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_bfloat16_is_exact_rounding():
    x = np.concatenate([_edge_values(), _random_values(3_000, 2)])
    got = formats.round_bits_to_16(x.view(np.int64), _BF16)
    want = np.array([_bf16_reference(float(v)) for v in x], dtype=np.int64)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fmt", [_F16, _BF16])
def test_one_body_for_python_ints_numpy_and_torch(fmt):
    torch = pytest.importorskip("torch")
    x = np.concatenate([_edge_values(), _random_values(20_000, 3)])
    on_numpy = formats.round_bits_to_16(x.view(np.int64), fmt)
    on_torch = formats.round_bits_to_16(torch.from_numpy(x.copy()).view(torch.int64), fmt)
    assert on_torch.dtype == torch.int64
    np.testing.assert_array_equal(on_torch.numpy(), on_numpy)
    some = x[:: max(1, x.size // 2000)]
    on_ints = [formats.round_bits_to_16(int(u), fmt) for u in some.view(np.int64)]
    np.testing.assert_array_equal(np.array(on_ints, dtype=np.int64),
                                  on_numpy[:: max(1, x.size // 2000)])


@pytest.mark.parametrize("name, value, want", [
    ("bfloat16", 0.1, 0.10009765625),
    ("float16", 0.1, 0.0999755859375),
    ("float16", 65520.0, math.inf),           # the tie above the largest float16 rounds up
    ("float16", -65519.99, -65504.0),
    ("bfloat16", 1 + 2 ** -8, 1.0),            # a tie to even
    ("bfloat16", 1 + 3 * 2 ** -8, 1 + 2 ** -6),
    ("float32", 1e39, math.inf),
    ("float64", 0.1, 0.1),
])
def test_rounded(name, value, want):
    assert formats.rounded(value, name) == want


def test_rounded_keeps_the_sign_of_zero_and_special_values():
    for name in ("float16", "bfloat16", "float32", "float64"):
        assert math.copysign(1.0, formats.rounded(-0.0, name)) == -1.0
        assert formats.rounded(math.inf, name) == math.inf
        assert formats.rounded(-math.inf, name) == -math.inf
        assert math.isnan(formats.rounded(math.nan, name))  # not infinity


def test_rounded_refuses_a_name_that_is_not_a_float_format():
    with pytest.raises(ValueError, match="'int32' is not a float format"):
        formats.rounded(1.0, "int32")
