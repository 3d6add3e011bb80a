"""Fused dropout (backend/triton_kernels/dropout.py) under Triton's interpreter, bit for bit.

The kernel is held to the host's own functions: its packed mask to
``stateless.dropout_mask`` (docs/spec.md 4.5), y and dx to ``apply_mask``
(spec 4.7), for every float dtype, sizes 0 .. across tiles, counters whose
low words carry and wrap, and probabilities whose threshold and scale round.
``ascend_rand.torch.dropout`` with ``ASCEND_RAND_DEVICE_KERNELS=triton``
(CPU tensors through the interpreter: how the front end takes the kernels
without a device) is held to the same call on the default CPU path: y, the
mask, dx and the Generator's state afterwards.  Then what the passes cost:
one launch each, and in ``mode="regenerate"`` nothing saved but scalars.

TRITON_INTERPRET=1 is set before triton is first imported (Triton decides at
``@triton.jit``, and 3.3+ reads it again at launch: each test sets it).  With
``ASCEND_RAND_TRITON_TEST_DEVICE=cuda`` (bench/device_check.sh) the same tests
run compiled on that device: the kernels' tensors there, and the front end's
fused path is a CUDA tensor's default one, still held to the CPU path.
"""

import os
import pickle
import re
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the fused dropout kernels fill torch tensors")

import triton_support  # noqa: E402  (tests/triton_support.py, on sys.path by conftest)
from triton_support import COMPILED, DEVICE, assert_same_bits, bits  # noqa: E402
# the fixtures, used by name
from triton_support import interpret_env, launch_counter  # noqa: E402,F401

triton_support.skip_without_the_device()
with triton_support.kernel_imports():  # before triton is first imported
    triton_support.import_triton()
    from ascend_rand.backend import device_path  # noqa: E402
    from ascend_rand.backend.triton_kernels import launch  # noqa: E402

    device_path.kernels(interpret=not COMPILED)  # the kernel table (interpreted: repaired)
    from ascend_rand.backend.triton_kernels import dropout_draws as td  # noqa: E402

import ml_dtypes  # noqa: E402

import ascend_rand as ar  # noqa: E402
from ascend_rand.distributions.bernoulli import plan_dropout_mask  # noqa: E402
from ascend_rand.torch import dropout, Dropout  # noqa: E402

fdropout = sys.modules["ascend_rand.torch.dropout_core"]

# The interpreter multiplies with NumPy, which warns where a product overflows or meets a
# NaN: those are the special values under test, not a fault.  TRITON_INTERPRET=1 while each
# test runs (interpreted; compiled, the tests put their tensors on the device themselves).
pytestmark = [pytest.mark.filterwarnings("ignore:overflow encountered in multiply"),
              pytest.mark.filterwarnings("ignore:invalid value encountered in multiply"),
              pytest.mark.usefixtures("interpret_env")]

TOP = (1 << 64) - 1
DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "bfloat16": torch.bfloat16}
NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
      "bfloat16": ml_dtypes.bfloat16}
INT = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
       torch.bfloat16: torch.int16}
# p_drop whose keep threshold rounds (fl32(1 - p) is not 1 - p) and whose scale
# 1 / (1 - p) = 1 + 2**-8 + 2**-30 rounds to bfloat16's 1 + 2**-7 (docs/spec.md 4.7).
P_ROUNDS = 0.0038910515077466012
# (size, key, counter): 0, 1, 7, 8, 9, 2**k +- 1 and past the 4096 elements of a
# default tile; the counters carry from c0 into c1 (near 2**32), from the low word into
# the high one (near 2**64) and wrap at 2**128 inside the draw.
CASES = [
    (0, 5, (0, 0)),
    (1, 0x0123456789ABCDEF, (0, 0)),
    (7, TOP, ((1 << 32) - 1, 0)),
    (9, 0x9E3779B97F4A7C15, (TOP - 1, 7)),
    (129, 0, (TOP - 3, TOP)),
    (4097, 0x0123456789ABCDEF, ((1 << 32) - 700, 1 << 40)),
]


def test_kernels_in_the_mode_asked():
    assert launch.is_interpreted(td.dropout_kernel) is not COMPILED


@pytest.fixture
def small_tiles(monkeypatch):
    """Tiles of 4 mask bytes (32 elements) and a grid of 2 programs: a draw of a few
    hundred elements takes many tiles, and each program loops over several."""
    monkeypatch.setattr(td, "BLOCK", 4)
    monkeypatch.setattr(launch, "PROGRAMS", 2)


def as_numpy(t, name):
    """The tensor's values as a NumPy array of ascend_rand's dtype (bfloat16 by its bits)."""
    return t.detach().reshape(-1).cpu().view(INT[t.dtype]).numpy().view(NP[name])


def values(n, name, seed):
    """n values of every sign and size, some subnormal and some at the top of the format."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))
    return torch.from_numpy(x).to(DTYPES[name])


def dev(t):
    """A CPU tensor on the device the kernels run for (CPU when interpreted)."""
    return t.to(DEVICE)


def scale_of(p, name):
    return fdropout._scale(p, name)


# -- the kernel entry points against the host's functions -----------------------------------------

# float32 over every case; the other formats (whose code differs only in how an element
# is scaled) over the carry into c1 and the wrap at 2**128.
KERNEL_CASES = [("float32", *c) for c in CASES] + \
    [(name, *CASES[i]) for name in ("float64", "float16", "bfloat16") for i in (2, 4)]


@pytest.mark.parametrize("name, size, key, counter", KERNEL_CASES,
                         ids=[f"{c[0]}-n{c[1]}" for c in KERNEL_CASES])
def test_kernel_bits(name, size, key, counter):
    """Forward (mask written), backward from that mask and backward drawn again: the mask
    is stateless.dropout_mask's, y and dx are apply_mask's, bit for bit."""
    p = 0.3
    threshold = plan_dropout_mask((size,), p).params[1]
    scale = scale_of(p, name)
    x, g = dev(values(size, name, 1)), dev(values(size, name, 2))
    y, dx, dx2 = torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)
    mask = dev(torch.full((td.mask_bytes(size),), 0xAB, dtype=torch.uint8))  # padding: 0
    td.forward(y, x, mask, key, *counter, threshold, scale)
    want_mask = ar.stateless.dropout_mask(size, key, p, counter, backend="numpy")
    assert_same_bits(mask, want_mask, "mask")
    assert_same_bits(y, ar.apply_mask(as_numpy(x, name), want_mask, p), "y")
    want_dx = ar.apply_mask(as_numpy(g, name), want_mask, p)
    td.backward_from_mask(dx, g, mask, scale)
    assert_same_bits(dx, want_dx, "dx from the mask")
    td.backward_regenerate(dx2, g, key, *counter, threshold, scale)
    assert_same_bits(dx2, want_dx, "dx drawn again")


@pytest.mark.parametrize("p", [0.0, 1e-12, 2.0 ** -25, 2.0 ** -24, 0.1, 0.5, P_ROUNDS,
                               1 - 2.0 ** -30, 1.0])
def test_kernel_probabilities(p):
    """Thresholds 2**32 (p32 = 1: every bit kept, from p = 2**-25, the midpoint), ones
    that round, 1 and 0 (p = 1: no bit kept, the scale unused); the y drawn without the
    mask equals the one written with it."""
    size, key, counter = 300, 0x9E3779B97F4A7C15, ((1 << 32) - 5, 3)
    threshold = plan_dropout_mask((size,), p).params[1]
    scale = scale_of(p, "bfloat16") if p < 1 else 1.0
    x = dev(values(size, "bfloat16", 3))
    y, y2 = torch.empty_like(x), torch.empty_like(x)
    mask = torch.empty(td.mask_bytes(size), dtype=torch.uint8, device=DEVICE)
    td.forward(y, x, mask, key, *counter, threshold, scale)
    want_mask = ar.stateless.dropout_mask(size, key, p, counter, backend="numpy")
    assert_same_bits(mask, want_mask, "mask")
    assert_same_bits(y, ar.apply_mask(as_numpy(x, "bfloat16"), want_mask, p), "y")
    td.forward(y2, x, None, key, *counter, threshold, scale)
    assert_same_bits(y2, y, "y without the mask")
    kept = int(np.unpackbits(want_mask, count=size, bitorder="little").sum())
    # p <= 2**-25 keeps all (fl32(1 - p) = 1, spec 4.3); 1 - 2**-24 is a float32 below 1
    assert kept == {0.0: size, 1e-12: size, 2.0 ** -25: size, 1.0: 0}.get(p, kept)
    if p == 2.0 ** -24:
        assert threshold < 1 << 32


def test_kernel_grid_loop(small_tiles):
    """Several tiles per program (BLOCK of 4 bytes, 2 programs): 150 elements in 5 tiles,
    the mask's 32 bytes in 8, 3 of them padding."""
    size, key, counter, p = 150, 7, (TOP, 1), 0.5
    threshold = plan_dropout_mask((size,), p).params[1]
    x = dev(values(size, "float32", 4))
    y, dx = torch.empty_like(x), torch.empty_like(x)
    mask = dev(torch.full((td.mask_bytes(size),), 0xFF, dtype=torch.uint8))
    td.forward(y, x, mask, key, *counter, threshold, 2.0)
    want_mask = ar.stateless.dropout_mask(size, key, p, counter, backend="numpy")
    assert_same_bits(mask, want_mask, "mask")
    assert_same_bits(y, ar.apply_mask(as_numpy(x, "float32"), want_mask, p), "y")
    td.backward_regenerate(dx, x, key, *counter, threshold, 2.0)
    assert_same_bits(dx, y, "dx drawn again")


@pytest.mark.parametrize("limbs16", [False, True], ids=["umulhi", "limbs16"])
def test_kernel_high_word_products(limbs16, monkeypatch):
    """The 16-bit-limb high word (targets without a vector umulhi) gives the same bits."""
    monkeypatch.setattr(launch, "MULHI_LIMBS16", limbs16)
    size, key, counter, p = 77, TOP, (TOP, TOP), 0.25
    x = dev(values(size, "float16", 5))
    y = torch.empty_like(x)
    mask = torch.empty(td.mask_bytes(size), dtype=torch.uint8, device=DEVICE)
    td.forward(y, x, mask, key, *counter, plan_dropout_mask((size,), p).params[1],
               scale_of(p, "float16"))
    want_mask = ar.stateless.dropout_mask(size, key, p, counter, backend="numpy")
    assert_same_bits(mask, want_mask, "mask")
    assert_same_bits(y, ar.apply_mask(as_numpy(x, "float16"), want_mask, p), "y")


# Bits of special values, by format: NaNs (quiet, signalling, with payloads, negative),
# infinities, zeros of both signs, the smallest subnormal, a negative, the largest finite
# value (its product with the scale overflows to infinity).
SPECIALS = {
    "float32": [0x7FC00000, 0x7F800001, 0xFFC12345, 0x7FBFFFFF, 0x7F800000, 0xFF800000, 0,
                0x80000000, 1, 0xBF800000, 0x7F7FFFFF],
    "float64": [0x7FF8000000000000, 0x7FF0000000000001, 0xFFF8000000000123, 0x7FF0000000000000,
                0xFFF0000000000000, 0, 0x8000000000000000, 1, 0xBFF0000000000000,
                0x7FEFFFFFFFFFFFFF],
    "float16": [0x7E00, 0x7C01, 0xFE05, 0x7DFF, 0x7C00, 0xFC00, 0, 0x8000, 1, 0xBC00, 0x7BFF],
    "bfloat16": [0x7FC0, 0x7F81, 0xFFC1, 0x7FBF, 0x7F80, 0xFF80, 0, 0x8000, 1, 0xBF80, 0x7F7F],
}
_UINT = {"float32": np.uint32, "float64": np.uint64, "float16": np.uint16, "bfloat16": np.uint16}


@pytest.mark.parametrize("name", list(DTYPES))
def test_kernel_special_values(name):
    """inf, NaN, -0, negatives, subnormals and overflow exactly as apply_mask gives them:
    a kept NaN quieted (bfloat16: 0x7FC0 with its sign), every dropped element +0.  Each
    value appears 24 times, so that it is both kept and dropped (asserted)."""
    size, key, counter, p = 24 * len(SPECIALS[name]), 3, (11, 0), 0.5
    x_np = np.tile(np.array(SPECIALS[name], dtype=_UINT[name]), 24)
    x = dev(torch.from_numpy(x_np.view({2: np.int16, 4: np.int32, 8: np.int64}[x_np.itemsize])
                             .copy()).view(DTYPES[name]))
    y = torch.empty_like(x)
    mask = torch.empty(td.mask_bytes(size), dtype=torch.uint8, device=DEVICE)
    td.forward(y, x, mask, key, *counter, plan_dropout_mask((size,), p).params[1],
               scale_of(p, name))
    want_mask = ar.stateless.dropout_mask(size, key, p, counter, backend="numpy")
    keep = np.unpackbits(want_mask, count=size, bitorder="little").reshape(24, -1)
    assert keep.any(axis=0).all() and (~keep.astype(bool)).any(axis=0).all()
    want = ar.apply_mask(x_np.view(NP[name]), want_mask, p)
    assert_same_bits(y, want, "y")
    got = bits(y).reshape(24, -1)
    assert (got[keep == 0] == 0).all()  # +0, whatever x held
    # the largest finite value times 2 is infinity; a kept quiet NaN keeps its bits
    assert (got[:, -1][keep[:, -1] == 1] == bits(np.array([np.inf], NP[name]))[0]).all()
    assert (got[:, 0][keep[:, 0] == 1] == SPECIALS[name][0]).all()


def test_kernel_refuses_bad_arguments():
    x = torch.zeros(10)
    mask = torch.empty(16, dtype=torch.uint8)
    with pytest.raises(TypeError, match="float32, float64, float16 or bfloat16"):
        td.forward(torch.zeros(10, dtype=torch.int32), torch.zeros(10, dtype=torch.int32),
                   mask, 0, 0, 0, 1 << 31, 2.0)
    with pytest.raises(ValueError, match="must match out"):
        td.forward(torch.zeros(11), x, mask, 0, 0, 0, 1 << 31, 2.0)
    with pytest.raises(ValueError, match="flat contiguous"):
        td.forward(torch.zeros(10, 2)[:, 0], x, mask, 0, 0, 0, 1 << 31, 2.0)
    with pytest.raises(ValueError, match=r"mask_bytes\(10\) = 16"):
        td.forward(torch.zeros(10), x, torch.empty(2, dtype=torch.uint8), 0, 0, 0, 1 << 31, 2.0)
    with pytest.raises(ValueError, match="threshold must be an int"):
        td.forward(torch.zeros(10), x, mask, 0, 0, 0, (1 << 32) + 1, 2.0)
    with pytest.raises(ValueError, match="key must be in"):
        td.forward(torch.zeros(10), x, mask, 1 << 64, 0, 0, 1 << 31, 2.0)
    with pytest.raises(TypeError, match="needs the packed mask"):
        td.backward_from_mask(torch.zeros(10), x, None, 2.0)


# -- ascend_rand.torch.dropout on the fused path, against the default CPU path --------------------

def take_fused_path(monkeypatch):
    """The front end's fused path from now on: forced for CPU tensors (interpreted), a
    CUDA tensor's own (compiled)."""
    if COMPILED:
        monkeypatch.delenv(device_path.ENV, raising=False)
    else:
        monkeypatch.setenv(device_path.ENV, "triton")


def run(x, p, mode, grad, monkeypatch, fused, engine=ar.Philox, seed=11):
    """dropout(x, p, mode) forward and backward from a fresh Generator; the default CPU path
    (fused=False) or the fused one (``take_fused_path``: the Triton kernels for a Philox
    Generator; MT19937's draws are words, not a (key, counter), and are not fused)."""
    if fused:
        take_fused_path(monkeypatch)
        x, grad = dev(x), dev(grad)
    else:
        monkeypatch.delenv(device_path.ENV, raising=False)
    g = ar.Generator(engine=engine(seed))
    leaf = x.detach().clone().requires_grad_()
    y = dropout(leaf, p, generator=g, mode=mode)
    mask = None
    if y.grad_fn is not None:
        assert (y.grad_fn.fused is not None) == (fused and engine is not ar.MT19937)
        saved = y.grad_fn.saved_tensors
        mask = saved[0] if saved else None
        y.backward(grad)
    return y.detach(), mask, leaf.grad, g.state


def assert_paths_agree(x, p, mode, grad, monkeypatch, **kw):
    y0, m0, dx0, s0 = run(x, p, mode, grad, monkeypatch, False, **kw)
    y1, m1, dx1, s1 = run(x, p, mode, grad, monkeypatch, True, **kw)
    assert y1.shape == y0.shape and y1.dtype == y0.dtype
    assert_same_bits(y1, y0, "y")
    assert (m0 is None) == (m1 is None)
    if m0 is not None:
        assert_same_bits(m1, m0, "mask")
    assert (dx0 is None) == (dx1 is None)
    if dx0 is not None:
        assert_same_bits(dx1, dx0, "dx")
    assert s1 == s0, "the Generator's state afterwards"
    return y1, m1, dx1


# Every dtype at p = 0, 0.5, P_ROUNDS and 1; p = 1e-12 (every element kept, the scale 1)
# for float32 and bfloat16.
FRONT_CASES = [(p, name) for name in DTYPES for p in (0.0, 0.5, P_ROUNDS, 1.0)] + \
    [(1e-12, "float32"), (1e-12, "bfloat16")]


@pytest.mark.parametrize("mode", fdropout.MODES)
@pytest.mark.parametrize("p, name", FRONT_CASES)
def test_dropout_fused_equals_cpu_path(p, name, mode, monkeypatch):
    """y, the packed mask (the one tensor "packed" saves), dx and the Generator's state
    equal the default CPU path's, every dtype and mode; p = 0 draws nothing on either,
    p = 1 draws once and gives +0 (and dx +0)."""
    x, g = values(203, name, 6), values(203, name, 7)
    y, _, dx = assert_paths_agree(x, p, mode, g, monkeypatch)
    if p == 1.0:
        assert not bits(y).any() and not bits(dx).any()


@pytest.mark.parametrize("mode", fdropout.MODES)
@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 1023, 1025])
def test_dropout_fused_sizes(size, mode, monkeypatch):
    assert_paths_agree(values(size, "float32", size), 0.5, mode, values(size, "float32", 1),
                       monkeypatch)


@pytest.mark.parametrize("mode", fdropout.MODES)
@pytest.mark.parametrize("name", list(DTYPES))
def test_dropout_fused_special_values(name, mode, monkeypatch):
    """The special values through the front end: the same bits on both paths, and those
    of apply_mask (the default CPU path's 16-bit NaNs now are apply_mask's too)."""
    x_np = np.tile(np.array(SPECIALS[name], dtype=_UINT[name]), 24)
    x = torch.from_numpy(x_np.view({2: np.int16, 4: np.int32, 8: np.int64}[x_np.itemsize])
                         .copy()).view(DTYPES[name]).reshape(24, -1)
    y, _, _ = assert_paths_agree(x, 0.5, mode, torch.ones_like(x), monkeypatch)
    mask = ar.Generator(11).dropout_mask(x.numel(), 0.5)
    assert_same_bits(y, ar.apply_mask(x_np.view(NP[name]), mask, 0.5), "y against apply_mask")


def test_dropout_fused_layouts_and_offsets(monkeypatch):
    """A transposed x and a Generator far into its stream (offset near 2**64: the counter's
    high words), and a module: the same bits on both paths."""
    x = values(6 * 35, "float16", 8).reshape(6, 35).t()
    assert_paths_agree(x, 0.25, "packed", torch.ones(35, 6, dtype=torch.float16), monkeypatch)

    def far(seed):
        return ar.Philox(seed).advance((TOP - 3) << 66)  # offset 2**64 - 4

    assert_paths_agree(values(100, "float32", 9), 0.5, "regenerate",
                       values(100, "float32", 10), monkeypatch, engine=far)
    take_fused_path(monkeypatch)
    layer = Dropout(0.5, mode="regenerate", generator=ar.Generator(3))
    y = layer(dev(torch.ones(64)))
    assert y.grad_fn is None or getattr(y.grad_fn, "fused", None) is not None
    mask = ar.Generator(3).dropout_mask(64, 0.5)
    assert_same_bits(y, ar.apply_mask(np.ones(64, np.float32), mask, 0.5), "Dropout")


def test_mt19937_generator_keeps_the_host_path(monkeypatch):
    """An MT19937 Generator hands out words, not a (key, counter): not fused, same bits."""
    x = values(100, "float32", 11)
    y0, m0, _, s0 = run(x, 0.5, "packed", torch.ones(100), monkeypatch, False, engine=ar.MT19937)
    y1, m1, _, s1 = run(x, 0.5, "packed", torch.ones(100), monkeypatch, True, engine=ar.MT19937)
    assert_same_bits(y1, y0, "y")
    assert_same_bits(m1, m0, "mask")
    assert pickle.dumps(s1) == pickle.dumps(s0)  # (its key words are an array)


# -- what the passes cost -------------------------------------------------------------------------

@pytest.mark.parametrize("mode", fdropout.MODES)
def test_one_launch_each_pass(mode, monkeypatch, launch_counter, small_tiles):
    """Exactly one kernel launch forward and one backward, however many tiles (here 4 per
    pass, 2 per program; packed: 4 more for the mask's padding); p = 1 and an empty x
    launch nothing."""
    take_fused_path(monkeypatch)
    x = dev(torch.ones(100)).requires_grad_()
    before = launch.launches
    y = dropout(x, 0.5, generator=ar.Generator(1), mode=mode)
    assert launch_counter["n"] == 1 and launch.launches == before + 1
    y.backward(dev(torch.ones(100)))
    assert launch_counter["n"] == 2 and launch.launches == before + 2
    for p, n in ((1.0, 300), (0.5, 0)):
        x = dev(torch.ones(n)).requires_grad_()
        dropout(x, p, generator=ar.Generator(1), mode=mode).backward(dev(torch.ones(n)))
    assert launch_counter["n"] == 2


def _saved(x, mode):
    """(tensors autograd saved for backward, the rest of what the pass kept: its bytes)."""
    tensors = []

    def pack(t):
        tensors.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = dropout(x, 0.5, generator=ar.Generator(2), mode=mode)
    assert y.grad_fn.fused is not None
    kept = {k: v for k, v in vars(y.grad_fn).items() if k != "fused"}  # (fused: the module)
    assert not any(isinstance(v, torch.Tensor) for v in kept.values())
    return y, tensors, len(pickle.dumps(kept))


def test_regenerate_saves_only_scalars(monkeypatch):
    """Regenerate keeps no tensor and under 1 KiB between the passes (the key, counter,
    threshold, scale and sizes); packed keeps exactly the n / 8-byte mask."""
    take_fused_path(monkeypatch)
    n = 1 << 14
    x = dev(torch.ones(n)).requires_grad_()
    y, tensors, extra = _saved(x, "regenerate")
    assert tensors == [] and extra <= 1024, (tensors, extra)
    assert y.grad_fn.saved_tensors == ()
    y.backward(dev(torch.ones(n)))
    mask = ar.Generator(2).dropout_mask(n, 0.5)
    assert_same_bits(x.grad, ar.apply_mask(np.ones(n, np.float32), mask, 0.5), "dx")
    _, tensors, extra = _saved(dev(torch.ones(n)).requires_grad_(), "packed")
    assert [(t.dtype, t.numel()) for t in tensors] == [(torch.uint8, n // 8)]
    assert extra <= 1024


def test_cpu_tensor_without_the_variable_keeps_the_host_path(monkeypatch):
    """Unset (or "torch"): CPU tensors take the host path, never the interpreter."""
    for value in (None, "torch"):
        if value is None:
            monkeypatch.delenv(device_path.ENV, raising=False)
        else:
            monkeypatch.setenv(device_path.ENV, value)
        y = dropout(torch.ones(10, requires_grad=True), 0.5, generator=ar.Generator(1))
        assert y.grad_fn.fused is None


def test_forced_kernels_with_a_bad_value_draw_nothing(monkeypatch):
    monkeypatch.setenv(device_path.ENV, "cuda")
    g = ar.Generator(1)
    before = g.state
    with pytest.raises(ValueError, match="ASCEND_RAND_DEVICE_KERNELS='cuda'"):
        dropout(torch.ones(10), 0.5, generator=g)
    assert g.state == before


# -- compiled for CUDA (no device needed): nothing that would change a bit ------------------------

_PTX_CASES = r"""
from ascend_rand.backend.triton_kernels import dropout as D
cases = {}
for fmt, ptr in ((D.F32, "*i32"), (D.F64, "*i64"), (D.BF16, "*i16")):
    signature = {"out_ptr": ptr, "in_ptr": ptr, "mask_ptr": "*u8", "n": "i32",
                 **{k: "i32" for k in ("key_lo", "key_hi", "ctr0", "ctr1", "ctr2", "ctr3",
                                       "nbytes", "t_minus_1", "t_nonzero")},
                 "scale32": "fp32", "scale_hi": "i32", "scale_lo": "i32"}
    cases[str(fmt)] = (D.dropout_kernel, signature,
                       dict(FMT=fmt, DRAW=True, WRITE_MASK=True, BLOCK=512, LIMBS16=False))
"""


def test_compiled_ptx_multiplies_in_ieee():
    """As compiled for sm_90 (PTX only, in a process without TRITON_INTERPRET): the
    product is mul.rn, no fused multiply-add, no flush of subnormals (.ftz: a subnormal x
    kept would become 0), in the formats whose operands can be subnormal (float16's are
    normal once widened to float32, its product is the same code as bfloat16's)."""
    result = triton_support.compile_to_ptx(_PTX_CASES)
    for fmt, ptx in result.items():
        width = "64" if int(fmt) == td.F64 else "32"
        assert re.search(rf"\bmul\.rn\.f{width}\b", ptx), fmt
        for banned in ("fma.rn.f", "mad.rn.f", "mad.f", ".ftz.f", "mul.approx"):
            assert banned not in ptx, f"format {fmt}: {banned} in the PTX"


# -- channel and alpha dropout: the one-pass kernel (triton_kernels/channel_dropout.py) ----------

import ascend_rand.torch as art  # noqa: E402

CHANNEL_CASES = [
    ("dropout2d", art.dropout2d, (3, 5, 4, 7)), ("dropout1d", art.dropout1d, (2, 9, 130)),
    ("dropout3d", art.dropout3d, (2, 3, 2, 3, 5)), ("alpha_dropout", art.alpha_dropout, (7, 151)),
    ("feature_alpha_dropout", art.feature_alpha_dropout, (4, 6, 45)),
]


def channel_run(fn, x, grad, p, mode, monkeypatch, fused):
    """fn forward and backward from a fresh Generator: the torch operations' path (host) or
    the kernel's; (y, dx, the Generator's state, whether the kernel ran)."""
    if fused:
        take_fused_path(monkeypatch)
        x, grad = dev(x), dev(grad)
    else:
        monkeypatch.delenv(device_path.ENV, raising=False)
    g = ar.Generator(23)
    leaf = x.detach().clone().requires_grad_()
    y = fn(leaf, p, True, generator=g, mode=mode)
    ran = y.grad_fn is not None and getattr(y.grad_fn, "kernels", None) is not None
    y.backward(grad)
    return y.detach(), leaf.grad, g.state, ran


@pytest.mark.parametrize("words", ["uint32", "int32"])
@pytest.mark.parametrize("mode", fdropout.MODES)
@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("case", CHANNEL_CASES, ids=[c[0] for c in CHANNEL_CASES])
def test_channel_kernel_equals_the_torch_operations(case, name, mode, words, monkeypatch):
    """y and dx of the kernel path equal the torch operations' path bit for bit, every
    dtype, both modes, both word forms (the NPU's int32); the Generator ends in the same
    state."""
    monkeypatch.setenv(launch.WORDS_ENV, words)
    _, fn, shape = case
    x = values(int(np.prod(shape)), name, 8).reshape(shape)
    grad = values(int(np.prod(shape)), name, 9).reshape(shape)
    y0, dx0, s0, ran0 = channel_run(fn, x, grad, 0.3, mode, monkeypatch, False)
    y1, dx1, s1, ran1 = channel_run(fn, x, grad, 0.3, mode, monkeypatch, True)
    assert not ran0 and ran1
    assert_same_bits(y1, y0, "y")
    assert_same_bits(dx1, dx0, "dx")
    assert s1 == s0


def test_channel_kernel_grid_loop_and_layouts(monkeypatch, launch_counter):
    """Tiles of 32 elements and 2 programs (many tiles each): the bits of the torch
    operations; a channels_last x comes back channels_last; one launch each pass."""
    monkeypatch.setattr(sys.modules["ascend_rand.backend.triton_kernels.dropout_draws"],
                        "CHANNEL_BLOCK", 32)
    monkeypatch.setattr(launch, "PROGRAMS", 2)
    x = values(2 * 6 * 5 * 5, "float32", 10).reshape(2, 6, 5, 5) \
        .to(memory_format=torch.channels_last)
    grad = values(300, "float32", 11).reshape(2, 6, 5, 5).to(memory_format=torch.channels_last)
    y0, dx0, _, _ = channel_run(art.dropout2d, x, grad, 0.5, "packed", monkeypatch, False)
    before = launch_counter["n"]
    y1, dx1, _, ran = channel_run(art.dropout2d, x, grad, 0.5, "packed", monkeypatch, True)
    assert ran and launch_counter["n"] - before == 2  # forward, backward (the host drew the mask)
    assert y1.is_contiguous(memory_format=torch.channels_last)
    assert_same_bits(y1, y0, "y")
    assert_same_bits(dx1, dx0, "dx")


def test_alpha_kernel_dropped_value_is_rounded_once():
    """The dropped value's bits the kernel writes: fl_T(b - alpha a) from float64, rounded
    once (here checked against the nearest of the neighbouring bfloat16 values)."""
    from ascend_rand.torch.channel_dropout import alpha_constants, dropped_bits

    for p in (0.1, 0.25, 0.5, 0.9):
        exact = alpha_constants(p)[2]
        got = np.array([dropped_bits(p, "bfloat16")], np.int16).view(ml_dtypes.bfloat16)[0]
        b = int(np.array([got]).view(np.uint16)[0])
        neighbours = np.array([b - 1, b, b + 1], np.uint16).view(ml_dtypes.bfloat16)
        errors = [abs(float(v) - exact) for v in neighbours]
        assert errors[1] == min(errors), (p, errors)


@pytest.mark.parametrize("inner", [1, 7, 25, 32, 45, 100])
def test_channel_kernel_units_across_tiles(inner, monkeypatch):
    """Tiles of 32 elements: units shorter than a tile (a division per element), exactly a
    tile and longer (a comparison: "wide"), starting anywhere inside a tile, and a last
    tile cut short; the bits of the torch operations."""
    monkeypatch.setattr(sys.modules["ascend_rand.backend.triton_kernels.dropout_draws"],
                        "CHANNEL_BLOCK", 32)
    monkeypatch.setattr(launch, "PROGRAMS", 2)
    shape = (3, 7, inner)
    x = values(int(np.prod(shape)), "float32", inner).reshape(shape)
    grad = values(int(np.prod(shape)), "float32", inner + 1).reshape(shape)
    for fn in (art.dropout1d, art.feature_alpha_dropout):
        y0, dx0, _, _ = channel_run(fn, x, grad, 0.5, "packed", monkeypatch, False)
        y1, dx1, _, ran = channel_run(fn, x, grad, 0.5, "packed", monkeypatch, True)
        assert ran
        assert_same_bits(y1, y0, "y")
        assert_same_bits(dx1, dx0, "dx")
