"""Properties docs/spec.md promises (sections 2.2, 3.3, 3.5 and 9) beyond single formulas."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ascend_rand import stateless

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def u_view(a):
    a = np.ascontiguousarray(a)
    return a.reshape(-1).view(f"u{a.dtype.itemsize}")


KINDS = {
    "raw32": lambda shape, b: stateless.raw(shape, 9, (3, 4), backend=b),
    "raw64": lambda shape, b: stateless.raw(shape, 9, (3, 4), dtype="uint64", backend=b),
    "f32": lambda shape, b: stateless.uniform(shape, 9, (3, 4), -1.0, 3.0, backend=b),
    "f16": lambda shape, b: stateless.uniform(shape, 9, (3, 4), dtype="float16", backend=b),
    "bf16": lambda shape, b: stateless.uniform(shape, 9, (3, 4), 0.5, 8.0, dtype="bfloat16", backend=b),
    "f64": lambda shape, b: stateless.uniform(shape, 9, (3, 4), dtype="float64", backend=b),
    "int-2w": lambda shape, b: stateless.integers(shape, 9, -3, 1000, (3, 4), dtype="int16", backend=b),
    "int-4w": lambda shape, b: stateless.integers(shape, 9, 0, 1 << 40, (3, 4), dtype="uint64", backend=b),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_smaller_draw_is_a_prefix_and_shape_only_arranges(backend, kind):
    # Section 9: only the element count matters; a smaller draw is a prefix.
    draw = KINDS[kind]
    big = u_view(draw(5000, backend))
    for shape in [(1,), (7,), (3, 5), (2, 3, 4), (64,), (257,), (33, 31), (4999,)]:
        small = u_view(draw(shape, backend))
        assert np.array_equal(small, big[: small.size]), shape
    assert np.array_equal(u_view(draw((50, 100), backend)), big)
    scalar = draw(None, backend)
    assert u_view(np.asarray(scalar))[0] == big[0]


@pytest.mark.parametrize(
    "low, high",
    [(-100, 27), (0, 2), (5, 6), (0, 255), (-128, 128)],
)
def test_integers_do_not_depend_on_the_dtype(backend, low, high):
    # Section 3.5: the values depend only on low and r, never on the output width.
    results = []
    for dtype in ["int16", "int32", "int64", "uint16", "uint32", "uint64", "int8", "uint8"]:
        info = np.iinfo(dtype)
        if low < info.min or high - 1 > info.max:
            continue
        results.append((dtype, stateless.integers(3000, 77, low, high, (0, 1), dtype=dtype, backend=backend).astype(np.int64)))
    assert len(results) >= 4
    for dtype, values in results[1:]:
        assert np.array_equal(values, results[0][1]), dtype


def test_endpoint_and_high_none_fold_into_low_and_r(backend):
    a = stateless.integers(2000, 5, 0, 10, backend=backend)
    assert np.array_equal(stateless.integers(2000, 5, 10, backend=backend), a)
    assert np.array_equal(stateless.integers(2000, 5, 0, 9, endpoint=True, backend=backend), a)


def test_highs_that_round_alike_give_the_same_numbers(backend):
    # Section 9: uniform depends on low_T and span_T only.
    a = stateless.uniform(4000, 5, low=1.0, high=2.0, dtype="float16", backend=backend)
    b = stateless.uniform(4000, 5, low=1.0, high=2.0 + 2.0 ** -12, dtype="float16", backend=backend)
    assert np.array_equal(u_view(a), u_view(b))
    c = stateless.uniform(4000, 5, low=1.0, high=2.0 + 2.0 ** -8, dtype="float16", backend=backend)
    assert not np.array_equal(u_view(a), u_view(c))


@SETTINGS
@given(
    dtype=st.sampled_from(["float32", "float16", "bfloat16", "float64"]),
    low=st.floats(-1e4, 1e4),
    width=st.floats(1e-3, 1e4),
    key=st.integers(0, (1 << 64) - 1),
    backend=st.sampled_from(["numpy", "native"]),
)
def test_uniform_stays_in_low_t_high_t(ref, dtype, low, width, key, backend):
    # Section 3.3: every result lies in [low_T, high_T] (it can equal high_T).
    assume(backend in ref.BACKEND_NAMES)
    high = low + width
    try:
        x = stateless.uniform(3000, key, (0, 0), low=low, high=high, dtype=dtype, backend=backend)
    except ValueError:
        assume(False)
    v = x.astype(np.float64)
    assert v.min() >= float(ref.round_to(low, dtype))
    assert v.max() <= float(ref.round_to(high, dtype))


UNALIGNED = """
import json, numpy as np
from ascend_rand import stateless as s
calls = {
    "uint32": lambda out, b: s.raw(None, 3, (1, 2), out=out, backend=b),
    "uint64": lambda out, b: s.raw(None, 3, (1, 2), dtype="uint64", out=out, backend=b),
    "float32": lambda out, b: s.uniform(None, 3, (1, 2), low=-1, high=2, out=out, backend=b),
    "float64": lambda out, b: s.uniform(None, 3, (1, 2), dtype="float64", out=out, backend=b),
    "float16": lambda out, b: s.uniform(None, 3, (1, 2), -4, 4, dtype="float16", out=out, backend=b),
    "int64": lambda out, b: s.integers(None, 3, -5, 10**15, (1, 2), out=out, backend=b),
    "int16": lambda out, b: s.integers(None, 3, -5, 1000, (1, 2), dtype="int16", out=out, backend=b),
}
result = {}
n = 200_001
for backend in BACKENDS:
    for dt, fn in calls.items():
        size = np.dtype(dt).itemsize
        out = np.frombuffer(bytearray(n * size + 1), dtype=dt, offset=1, count=n)
        assert not out.flags.aligned and out.flags.writeable and out.flags.c_contiguous
        got = fn(out, backend)
        want = fn(np.empty(n, dt), backend)
        result[backend + "-" + dt] = bool(got is out) and bool(np.array_equal(got.view("u%d" % size), want.view("u%d" % size)))
print(json.dumps(result))
"""


def test_unaligned_out_gives_the_same_bits(ref):
    # Section 9: results never depend on memory alignment.  Run in a child process:
    # a misaligned vector store would crash the interpreter, not fail an assert.
    backends = ref.BACKEND_NAMES
    code = textwrap.dedent(UNALIGNED).replace("BACKENDS", repr(backends))
    proc = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(result) == 7 * len(backends)
    assert all(result.values()), result
