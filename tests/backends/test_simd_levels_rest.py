"""The kernels vectorised after the first SIMD pass give the NumPy fallback's bits at every level.

Each supported SIMD level runs in its own interpreter (the level is chosen at import,
csrc/cpu/dispatch.h) and reports a digest per draw; the parent compares each with the
NumPy fallback's.  Covered here: the float64 ziggurat and its queued retries (with
scaling and the truncated normal's bounds), the truncated normal's uniform and
exponential methods (mirrored too) in float32 and float64, float16 uniforms scaled by
float16 and by other ranges, MT19937's uniform conversions in every format with
several streams, and MT19937 jump-ahead (the GF(2) squaring and reduction).  At
ASCEND_RAND_SIMD=scalar the squaring kernel 'auto' picks is the portable one.
"""

import hashlib

import pytest
from simd_levels import run_at_level, supported_levels  # tests/data/simd_levels.py

import ascend_rand

NATIVE_OK = ascend_rand.backends()["native"]["available"]
pytestmark = pytest.mark.skipif(not NATIVE_OK, reason="needs the native backend")

DRAWS = r'''
import numpy as np
import ascend_rand
from ascend_rand import stateless

TOP = (1 << 64) - 1
STREAMS = [(0, (0, 0)), (0x243F6A8885A308D3, (TOP - 37, 5)), (5615, (0x243F6A8885A308D3, 0x13198A2E03707344))]
LENGTHS = [1, 3, 9, 255, 1025, 4099]
# (a, b): the ziggurat method, the uniform method, the exponential method and its mirror image
BOUNDS = [(-2.0, 2.0), (0.5, 1.0), (-0.3, 0.4), (3.0, 9.0), (-9.0, -3.0), (0.0, float("inf"))]


def draws(backend):
    kw = dict(backend=backend)
    for si, (key, ctr) in enumerate(STREAMS):
        for n in LENGTHS:
            tag = f"s{si}/n{n}"
            yield f"{tag}/normal/f64", stateless.normal(n, key, ctr, 0.0, 1.0, "float64", **kw)
            yield f"{tag}/normal/f64/scaled", stateless.normal(n, key, ctr, -1.25, 0.5, "float64", **kw)
            yield f"{tag}/normal/f64/bm", stateless.normal(n, key, ctr, 0.0, 1.0, "float64", "box_muller", **kw)
            for a, b in BOUNDS:
                for dt in ("float32", "float64", "float16"):
                    yield f"{tag}/truncated/{a},{b}/{dt}", stateless.truncated_normal(
                        n, key, ctr, 0.5, 2.0, a, b, dt, **kw)
            for low, high in ((0.0, 1.0), (-3.0, 5.0), (0.001, 0.002), (60000.0, 65504.0), (0.1, 0.7)):
                yield f"{tag}/uniform/f16/{low},{high}", stateless.uniform(n, key, ctr, low, high, "float16", **kw)
    # a caller's float16 range that is not made of float16 values: the portable loop
    kernels = ascend_rand.backend.resolve(backend)
    out = np.empty(1031, np.float16)
    kernels.kernel("uniform")(out.view(np.uint16), 7, 0, 0, "float16", 0.1, 0.3, True)
    yield "uniform/f16/not-f16-range", out
    for seed in (1, 987654321):
        for streams in (1, 3):
            for dt in ("float16", "bfloat16", "float32", "float64"):
                for low, high in ((0.0, 1.0), (-3.0, 5.0), (0.001, 0.002)):
                    g = ascend_rand.Generator(seed, engine="mt19937", streams=streams, backend=backend)
                    yield f"mt/{seed}/{streams}/{dt}/{low},{high}", g.uniform(low, high, 2053, dtype=dt)
            g = ascend_rand.Generator(seed, engine="mt19937", streams=streams, backend=backend)
            g.engine.advance(10 ** 25 + 3)
            yield f"mt/{seed}/{streams}/advance", g.random(1500, dtype="float64")
'''

CHILD = r'''
import hashlib, json
import ascend_rand
from ascend_rand import _native
''' + DRAWS + r'''
print(json.dumps({
    "simd": ascend_rand.backends()["native"]["simd"],
    "square_kernel": _native.mt19937_square_kernel(),
    "digests": {name: hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
                for name, a in draws("native")},
}))
'''


@pytest.fixture(scope="module")
def reference():
    scope = {}
    exec(DRAWS, scope)
    return {name: hashlib.sha256(a.tobytes()).hexdigest() for name, a in scope["draws"]("numpy")}


@pytest.mark.parametrize("level", ["avx512", "avx2", "neon", "scalar"])
def test_level_gives_the_fallback_bits(level, reference):
    if level not in supported_levels():
        pytest.skip(f"this CPU does not run {level}")
    report = run_at_level(CHILD, level)
    assert report["simd"] == level
    assert report["digests"].keys() == reference.keys()
    wrong = sorted(name for name, digest in report["digests"].items() if digest != reference[name])
    assert not wrong, f"{level}: {len(wrong)} draws differ from the fallback, e.g. {wrong[:5]}"
    if level == "scalar":
        assert report["square_kernel"] == "portable"
