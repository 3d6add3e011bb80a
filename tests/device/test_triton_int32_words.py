"""The Triton kernels' int32 word form (triton_kernels/wordops.py), bit for bit, interpreted.

triton-ascend (Atlas A2/A3) has no uint32 loads, stores, arithmetic, casts or
shifts, and ``tl.umulhi`` and ``>>`` for signed types only (its op tables;
docs/npu.md, "The int32 word form"), so NPU launches hold every stream word as
an int32 bit pattern: logical shifts masked from arithmetic ones, unsigned
comparisons as signed ones of ``x ^ 0x80000000``, the 16-bit-limb product.
Here ``ASCEND_RAND_TRITON_WORDS=int32`` forces that form on CPU tensors under
Triton's interpreter, and a representative set of the other Triton test files'
own checks (imported and called as they are: the same cases, references and
assertions) runs in it: raw words, uniforms of every float format, integers up
to 64- and 128-bit ranges, Bernoulli bits and packed masks, both normals on keys
that take the ziggurat's wedge and tail paths, the truncated normal by every
method, fused dropout forward and backward, and the graph-safe state form with
the advance kernel's offset carry.  Every launch is checked to have received the
int32 form.  Then the form itself: the kernels' Triton IR for sm_90 in the int32
form has no unsigned 32-bit operation (the uint32 form's has them: the check is
not empty), and the variable is validated.

No NPU here: bit-equality is verified under the interpreter only.
"""

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the Triton kernels fill torch tensors")

import triton_support  # noqa: E402  (tests/triton_support.py, on sys.path by conftest)
from triton_support import COMPILED  # noqa: E402
# the fixture, used by name
from triton_support import on_test_device, interpret_env  # noqa: E402,F401

triton_support.skip_without_the_device()
# The other Triton test files, for their cases, references and checks (each sets up the
# interpreter before its kernels are defined, as this file's imports need): this folder's
# files, by name.
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
import test_triton_kernels as K  # noqa: E402
import test_triton_normal as N  # noqa: E402
import test_triton_dropout as D  # noqa: E402

with triton_support.kernel_imports():
    from ascend_rand.backend import device_path  # noqa: E402
    from ascend_rand.backend.triton_kernels import launch  # noqa: E402

import peers  # noqa: E402

pytestmark = [peers.needs_native, pytest.mark.usefixtures("on_test_device"),
              pytest.mark.filterwarnings("ignore:overflow encountered in multiply"),
              pytest.mark.filterwarnings("ignore:invalid value encountered in multiply")]


class _Seen(list):
    """The LIMBS16 values launched; ``skipped``: the test skipped before launching."""
    skipped = False


@pytest.fixture(autouse=True)
def int32_words(monkeypatch):
    """ASCEND_RAND_TRITON_WORDS=int32 while the test runs; afterwards, every kernel it
    launched received the int32 form (its LIMBS16 constexpr), at the runtime's entry."""
    from triton.runtime import interpreter, jit

    monkeypatch.setenv(launch.WORDS_ENV, "int32")
    seen = _Seen()
    for cls, name in ((interpreter.GridExecutor, "__call__"), (jit.JITFunction, "run")):
        original = getattr(cls, name)

        def spied(self, *args, _original=original, **kwargs):
            seen.append(kwargs.get("LIMBS16"))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, name, spied)
    yield seen
    if seen.skipped:
        return
    assert seen, "the test launched no kernel"
    assert all(v == launch.INT32_WORDS for v in seen), seen


def small_tiles(monkeypatch):
    """Tiles of 4 Philox blocks (4 mask bytes for dropout) and 2 programs: grid loops."""
    monkeypatch.setattr(launch, "PROGRAMS", 2)
    for name in launch.BLOCKS:
        monkeypatch.setitem(launch.BLOCKS, name, 4)
    for name in N.nd.BLOCKS:
        monkeypatch.setitem(N.nd.BLOCKS, name, 4)
    monkeypatch.setattr(D.td, "BLOCK", 4)


# -- raw words, uniforms, integers, Bernoulli -----------------------------------------------------

@pytest.mark.parametrize("dtype", ["uint32", "uint64"])
@pytest.mark.parametrize("size, key, counter", K.CASES)
def test_raw(dtype, size, key, counter):
    K.test_raw(dtype, size, key, counter)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("size, key, counter", [K.CASES[1], K.CASES[3]])
def test_uniform_unit(dtype, size, key, counter):
    K.test_uniform_unit(dtype, size, key, counter)


@pytest.mark.parametrize("dtype, low, high", K.SCALED)
def test_uniform_scaled(dtype, low, high):
    K.test_uniform_scaled(dtype, low, high, *K.FEW[1])


@pytest.mark.parametrize("dtype, low, high", [("float16", 0.0, 2.0 ** -20),
                                              ("bfloat16", 1e-39, 3e-39)])
def test_uniform_subnormal_products(dtype, low, high):
    """The 16-bit subnormal roundings (the int32 form rounds them in float32)."""
    K.test_uniform_subnormal_products_are_taken(dtype, low, high)


@pytest.mark.parametrize("dtype, low, high, endpoint", K.INTEGER_CASES)
def test_integers(dtype, low, high, endpoint):
    K.test_integers(dtype, low, high, endpoint)


@pytest.mark.parametrize("dtype, low, high", [("int64", -(1 << 63), 1 << 62),
                                              ("uint64", 3, (1 << 64) - 1)])
@pytest.mark.parametrize("size, key, counter", [K.CASES[1], K.CASES[3]])
def test_integers_four_words(dtype, low, high, size, key, counter):
    K.test_integers_four_words(dtype, low, high, size, key, counter)


@pytest.mark.parametrize("p", K.PROBABILITIES)
@pytest.mark.parametrize("packed", [False, True])
def test_bernoulli_scalar_p(p, packed):
    K.test_bernoulli_scalar_p(p, packed)


@pytest.mark.parametrize("packed", [False, True])
def test_bernoulli_per_element_p(packed):
    K.test_bernoulli_per_element_p(packed)


@pytest.mark.parametrize("size", [9, 129])
def test_dropout_mask_sizes(size):
    K.test_dropout_mask_sizes(size)


@pytest.mark.parametrize("name, plan, expected", K.GRID_PLANS, ids=[g[0] for g in K.GRID_PLANS])
def test_grid_loop(name, plan, expected, monkeypatch):
    """Several tiles per program, the counter carrying inside the draw."""
    small_tiles(monkeypatch)
    plan = plan()
    key, counter = K.KEYS[3], ((1 << 32) - 9, K.TOP)
    K.assert_bits_equal(plan, key, counter, expected(key, counter))


# -- normals and the truncated normal -------------------------------------------------------------

@pytest.mark.parametrize("dtype", N.FLOATS)
def test_ziggurat_wedge_tail_and_repeated_tail_slots(monkeypatch, dtype):
    """The keys whose elements take the wedge, the tail and repeated tail slots (asserted
    taken by the reused test), every float format."""
    N.test_ziggurat_wedge_tail_and_repeated_tail_slots(monkeypatch, dtype)


@pytest.mark.parametrize("dtype", N.FLOATS)
def test_box_muller(dtype):
    for size, key, counter in N.CASES[:5]:
        plan = N.plan_normal(size, dtype, 3.5, 2.25, "box_muller")
        N.check_plan(plan, key, counter, f"box_muller {dtype} n={size}")


# One interval per method (and the mirrored exponential), float32-working and float64.
TRUNC = [((-2.0, 2.0), "float16"), ((-0.5, 0.3), "float32"), ((1.0, 1.5), "bfloat16"),
         ((3.0, N.INF), "float32"), ((-6.0, -2.5), "float16"),
         ((-2.0, 2.0), "float64"), ((0.1, 0.6), "float64"), ((-N.INF, -4.0), "float64")]


@pytest.mark.parametrize("bounds, dtype", TRUNC, ids=str)
def test_truncated_normal(monkeypatch, bounds, dtype):
    assert {N.INTERVALS[b][0] for b, _ in TRUNC} == {N.TRUNC_ZIGGURAT, N.TRUNC_UNIFORM,
                                                    N.TRUNC_EXPONENTIAL}
    N.test_truncated_normal(monkeypatch, bounds, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_truncated_ziggurat_tail(monkeypatch, dtype):
    N.test_truncated_ziggurat_tail(monkeypatch, dtype)


# -- fused dropout --------------------------------------------------------------------------------

@pytest.mark.parametrize("name, size, key, counter",
                         [("float32", *D.CASES[i]) for i in (1, 2, 4)] +
                         [(name, *D.CASES[4]) for name in ("float64", "float16", "bfloat16")],
                         ids=str)
def test_dropout_kernel_bits(name, size, key, counter):
    """Forward (mask written), backward from the mask and backward drawn again."""
    D.test_kernel_bits(name, size, key, counter)


@pytest.mark.parametrize("name", list(D.DTYPES))
def test_dropout_special_values(name):
    D.test_kernel_special_values(name)


def test_dropout_grid_loop(monkeypatch):
    small_tiles(monkeypatch)
    D.test_kernel_grid_loop(None)


# -- the graph-safe state form and the advance kernel ---------------------------------------------

@pytest.fixture
def state_tests(monkeypatch):
    if COMPILED:
        pytest.skip("the state tests run on CPU tensors (interpreted)")
    import test_triton_state as S

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv(device_path.ENV, "triton")
    return S


@pytest.mark.parametrize("name", ["raw uint64", "uniform bfloat16", "integers int64 wide",
                                  "bernoulli probs", "dropout mask", "ziggurat float32",
                                  "box_muller float64", "truncated exponential mirrored"])
def test_draws_through_the_state(state_tests, name):
    """Two draws through the device state (the offset carrying into its high half
    between them) are the host Generator's."""
    state_tests.test_draws_through_the_state_are_the_hosts(name)


@pytest.mark.parametrize("offset", [2**32 - 1, 2**63 - 1, 2**64 - 2])
def test_the_advance_kernel_carries(state_tests, offset):
    state_tests.test_the_advance_kernel_carries(offset)


def test_the_last_offset_and_draws_past_the_end(state_tests):
    """EXHAUSTED set on the wrap, the past-end count in FLAGS' high word."""
    state_tests.test_the_last_offset_and_a_draw_past_the_end()


# -- the form itself ------------------------------------------------------------------------------

def test_the_variable_is_validated_and_the_npu_takes_int32(int32_words, monkeypatch):
    npu, cuda = types.SimpleNamespace(type="npu"), types.SimpleNamespace(type="cuda")
    assert launch.word_form(cuda) == launch.INT32_WORDS  # forced
    monkeypatch.setenv(launch.WORDS_ENV, "uint32")
    assert launch.word_form(npu) == launch.MULHI_LIMBS16  # forced the other way
    monkeypatch.delenv(launch.WORDS_ENV)
    assert launch.word_form(npu) == launch.INT32_WORDS
    assert launch.word_form(cuda) == launch.MULHI_LIMBS16
    monkeypatch.setenv(launch.WORDS_ENV, "uint64")
    out = torch.empty(8, dtype=torch.float32)
    with pytest.raises(ValueError, match="ASCEND_RAND_TRITON_WORDS.*'uint64'"):
        K.tk.fill(K.duni.plan_uniform(8, "float32", 0.0, 1.0, backend=K.NATIVE), out, 1, (0, 0))
    monkeypatch.setenv(launch.WORDS_ENV, "int32")
    K.test_raw("uint32", *K.CASES[1])  # a launch, for the fixture's check


# Triton IR of the kernels that run on an NPU (no float64 ones, spec A.6) for sm_90, both
# forms, from the frontend (ASTSource.make_ir: no backend pass has run, nothing needs
# ptxas).  MLIR integers are signless, so a uint32 value shows in the operations chosen for
# it: unsigned shifts, comparisons, min/max, division, conversions, umulhi.
_TTIR_SCRIPT = r"""
import inspect, json, re, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, make_backend
from triton._C.libtriton import ir
from ascend_rand.backend.triton_kernels import (bernoulli as B, dropout as D, integers as I,
    normal as N, rejection as R, state as S, uniform as U, words as W)
form = int(sys.argv[1])
s = {"n": "i32", **{k: "i32" for k in ("key_lo", "key_hi", "ctr0", "ctr1", "ctr2", "ctr3")}}
f = lambda *names: {k: "fp32" for k in names}
i = lambda *names: {k: "i32" for k in names}
t32 = {"W": "*fp32", "K": "*i32" if form == 2 else "*i64", "F": "*fp32"}  # joined in uint32 words
cases = {
    "raw": (W.raw_kernel, {"out_ptr": "*i32", **s}, dict(SWAP_HALVES=True)),
    "uniform f32": (U.uniform_f32_kernel, {"out_ptr": "*fp32", **s, **f("low", "span")},
                    dict(SCALED=True)),
    "uniform f16": (U.uniform_16_kernel, {"out_ptr": "*i16", **s, **f("low", "span")},
                    dict(SCALED=True, FP16=True)),
    "integers 64": (I.integers_64_kernel, {"out_ptr": "*i32", **s, **i("low_hi", "low_lo", "rm1")},
                    dict(WIDTH=64)),
    "integers 128": (I.integers_128_kernel,
                     {"out_ptr": "*i32", **s, **i("low_hi", "low_lo", "r_hi", "r_lo")},
                     dict(FULL=False)),
    "bernoulli probs": (B.bernoulli_kernel, {"out_ptr": "*u8", **s, **i("t_minus_1", "t_nonzero"),
                                             "probs_ptr": "*fp32"}, dict(HAS_PROBS=True)),
    "packed mask": (B.bernoulli_packed_kernel,
                    {"out_ptr": "*u8", **s, **i("nbytes", "t_minus_1", "t_nonzero"),
                     "probs_ptr": "*fp32"}, dict(HAS_PROBS=False)),
    "ziggurat bf16": (R.ziggurat_kernel,
                      {"out_ptr": "*i16", **s, **f("loc", "scale", "lo", "hi"), **t32,
                       "scratch": "*i32"},
                      dict(BOUNDED=True, SCALED=True, OUT16=True, FP16=False, CAP=512)),
    "box_muller f32": (N.box_muller_kernel, {"out_ptr": "*fp32", **s, **f("loc", "scale")},
                       dict(SCALED=True, OUT16=False, FP16=False)),
    "proposal f16": (R.proposal_kernel,
                     {"out_ptr": "*i16", **s, **f("a", "b", "width", "m2", "lam", "loc", "scale"),
                      "scratch": "*i32"},
                     dict(EXPONENTIAL=True, MIRROR=True, SCALED=True, OUT16=True, FP16=True,
                          CAP=512)),
    "dropout f16": (D.dropout_kernel,
                    {"out_ptr": "*i16", "in_ptr": "*i16", "mask_ptr": "*u8", **s,
                     **i("nbytes", "t_minus_1", "t_nonzero"), **f("scale32"),
                     **i("scale_hi", "scale_lo")}, dict(FMT=2, DRAW=True, WRITE_MASK=True)),
    "uniform f32 state": (U.uniform_f32_kernel,
                          {"out_ptr": "*fp32", "n": "i32", "key_lo": "*i32",
                           **{k: "i32" for k in ("key_hi", "ctr0", "ctr1", "ctr2", "ctr3")},
                           **f("low", "span")}, dict(SCALED=True)),
    "advance": (S.advance_kernel, {"state_ptr": "*i32"}, dict()),
}
word = "constants" if "constants" in inspect.signature(ASTSource.__init__).parameters \
    else "constexprs"
target = GPUTarget("cuda", 90, 32)
out = {}
try:
    backend = make_backend(target)
    options = backend.parse_options({"enable_fp_fusion": False})
    for name, (kernel, signature, constants) in cases.items():
        constants = dict(constants, LIMBS16=form)
        if kernel is not S.advance_kernel:
            constants["BLOCK"] = 64
        signature = dict(signature, **{k: "constexpr" for k in constants})
        src = ASTSource(fn=kernel, signature=signature, **{word: constants})
        context = ir.context()
        ir.load_dialects(context)
        backend.load_dialects(context)
        module = src.make_ir(options, backend.get_codegen_implementation(),
                             backend.get_module_map(), context)
        out[name] = str(module)
except triton.compiler.errors.CompilationError as exc:  # the kernel's own fault: fail
    print(json.dumps({"compile_error": f"{name}: {exc}"[-3000:]}))
    sys.exit(0)
except Exception as exc:  # no NVIDIA backend here
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:500]}))
    sys.exit(0)
print(json.dumps(out))
"""

# Operations on unsigned integers; an extui (zero extension) of a bool (i1) or a byte
# (i8: the uint8 masks and bool outputs, which triton-ascend has) is not one of a word.
_UNSIGNED = [r"\barith\.(shrui|divui|remui|ceildivui|maxui|minui|uitofp|fptoui)\b",
             r"\barith\.cmpi (ult|ule|ugt|uge)\b", r"\btt\.mulhiui\b",
             r"\barith\.extui %\S+ : (tensor<\d+x)?i(16|32)\b"]


def _ttir(form):
    import re  # noqa: F401  (the patterns are applied by the caller)

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.pop(launch.WORDS_ENV, None)
    done = subprocess.run([sys.executable, "-c", _TTIR_SCRIPT, str(form)], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "compile_error" not in result, result.get("compile_error")
    if "error" in result:
        pytest.skip(f"this Triton cannot build IR for CUDA here: {result['error']}")
    return result


def test_the_int32_form_has_no_unsigned_word(int32_words):
    """In the int32 form, the Triton IR of every kernel that runs on an NPU (scalar and
    state forms, the advance kernel; their arguments typed as the launches pass them: int32
    scalars, int32, float, int16 and uint8 pointers) has no unsigned operation on a word;
    the uint32 form's IR has them (umulhi, unsigned shifts and comparisons), so the check
    can fail (it found a log_f32 left in the uint32 form while this form was written)."""
    import re

    try:
        int32_form, uint32_form = _ttir(launch.INT32_WORDS), _ttir(0)  # 0: uint32, tl.umulhi
    except pytest.skip.Exception:
        int32_words.skipped = True  # (no launch to check: nothing ran)
        raise
    for name, text in int32_form.items():
        found = [m.group(0) for p in _UNSIGNED for m in re.finditer(p, text)]
        assert not found, f"{name}: the int32 form has unsigned operations {sorted(set(found))}"
    for name, text in uint32_form.items():
        if name != "advance":  # (its one unsigned step is a compare for equality)
            assert any(re.search(p, text) for p in _UNSIGNED), name
    assert re.search(r"\btt\.mulhiui\b", uint32_form["raw"])
    K.test_raw("uint32", *K.CASES[1])  # a launch, for the fixture's check
