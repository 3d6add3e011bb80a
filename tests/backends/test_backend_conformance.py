"""One conformance suite for every registered backend (docs/architecture.md, "Backends").

Each backend must: provide every kernel of the shared table; fill every plan
with the bits of the NumPy fallback and of the native core (they are held to the
independent references elsewhere: Random123, TensorFlow, the spec formulas in
tests/conftest.py); read exactly ``plan.words`` words when given an engine's
word buffer (the rule of distributions/plan.py), producing what the Philox
stream gives; refuse a buffer one word short; and never call another
backend's code.
"""

import numpy as np
import pytest

import ascend_rand
from ascend_rand import backend as backend_registry
from ascend_rand import stateless
from ascend_rand.backend import KERNEL_NAMES, base
from ascend_rand.backend.torch_arrays import as_numpy
from ascend_rand.distributions import bernoulli, normal, permutation, uniform

AVAILABLE = [name for name, info in ascend_rand.backends().items() if info["available"]]
# Backends whose arrays are torch tensors (their kernels take the plan's own dtype).
TENSOR_BACKENDS = ("torch", "npu")
KEY = 0x0123456789ABCDEF
COUNTER = (2**64 - 37, 11)  # the draw's own words carry into the high half

PLANS = {
    "raw32": lambda n: uniform.plan_raw(n, "uint32"),
    "raw64": lambda n: uniform.plan_raw(n, "uint64"),
    "uniform32": lambda n: uniform.plan_uniform(n, "float32", -2.0, 3.0),
    "uniform64": lambda n: uniform.plan_uniform(n, "float64", 0.0, 1.0),
    "uniform_bf16": lambda n: uniform.plan_uniform(n, "bfloat16", 1.0, 9.0),
    "uniform_f16": lambda n: uniform.plan_uniform(n, "float16", 0.0, 1.0),
    "integers_small": lambda n: uniform.plan_integers(n, "int32", -5, 17, False),
    "integers_wide": lambda n: uniform.plan_integers(n, "uint64", 0, 2**63 + 5, False),
    "ziggurat32": lambda n: normal.plan_normal(n, "float32", 0.5, 2.0, "ziggurat"),
    "ziggurat64": lambda n: normal.plan_normal(n, "float64", 0.0, 1.0, "ziggurat"),
    "ziggurat_bf16": lambda n: normal.plan_normal(n, "bfloat16", 0.0, 1.0, "ziggurat"),
    "box_muller16": lambda n: normal.plan_normal(n, "float16", 0.0, 1.0, "box_muller"),
    "box_muller64": lambda n: normal.plan_normal(n, "float64", 0.0, 1.0, "box_muller"),
    "truncated32": lambda n: normal.plan_truncated_normal(n, "float32", 0.0, 1.0, -2, 2),
    "truncated_narrow": lambda n: normal.plan_truncated_normal(n, "float32", 0.0, 1.0, 0.5, 1.0),
    "truncated_tail64": lambda n: normal.plan_truncated_normal(n, "float64", 0, 1, 3, np.inf),
    "bernoulli": lambda n: bernoulli.plan_bernoulli(0.3, n, False),
    "bernoulli_probs": lambda n: bernoulli.plan_bernoulli(np.linspace(0, 1, n), n, False),
    "bernoulli_packed": lambda n: bernoulli.plan_bernoulli(0.7, n, True),
    "dropout_mask": lambda n: bernoulli.plan_dropout_mask(n, 0.1),
    "permutation": lambda n: permutation.plan_permutation(n),
    "choice_prefix": lambda n: permutation.plan_choice(n, n // 2, False, None),
    "choice_sparse": lambda n: permutation.plan_choice(n * 1000, 5, False, None),
    "choice_weighted": lambda n: permutation.plan_choice(
        n, min(n, 3), False, np.arange(1, n + 1) / (n * (n + 1) / 2)),
}


def result_bytes(x):
    return np.ascontiguousarray(as_numpy(x)).tobytes()


def test_kernel_tables_agree_name_for_name():
    from ascend_rand.fallback import kernels as numpy_kernels
    assert sorted(numpy_kernels.__all__) == sorted(KERNEL_NAMES)
    if "native" in AVAILABLE:
        native = backend_registry.resolve("native").module
        infrastructure = {"set_num_threads", "get_num_threads", "build_info", "simd_levels",
                          "philox_bitgen", "mt19937_bitgen", "mt19937_xpow_mod", "philox_draw",
                          "philox_lock",  # a Philox engine's lock (docs/spec.md 2.6)
                          "stateless_draw", "plan_get",
                          "mt19937_square_kernel",
                          # CPU hardware entropy (csrc/entropy/, ascend_rand/entropy/sources.py)
                          "hw_entropy_available", "rdseed64", "rdrand64", "rndrrs64",
                          # the entropy pool's output buffer (ascend_rand/entropy/reserve.py)
                          "SecretReserve", "fork_generation",
                          # the shared constants as compiled (tests/conformance/test_constants_generated.py)
                          "constants"}
        exported = {n for n in dir(native) if not n.startswith("_") and callable(getattr(native, n))}
        assert exported - infrastructure == set(KERNEL_NAMES)


@pytest.mark.parametrize("name", AVAILABLE)
def test_backend_implements_the_protocol(name):
    b = backend_registry.resolve(name)
    assert isinstance(b, base.Backend) and b.name == name and b.available and b.reason is None
    for kernel in KERNEL_NAMES:
        assert callable(b.kernel(kernel)), kernel
    a = b.allocate((2, 3), "bfloat16")
    assert a.shape == (2, 3) and b.check_out(a, None, "bfloat16", "t") == (2, 3)
    with pytest.raises(TypeError, match="float32"):
        b.check_out(a, (2, 3), "float32", "t")
    with pytest.raises(ValueError, match="device"):
        b.allocate(3, "float32", device="npu")
    assert b.words(5).dtype == np.uint32
    report = ascend_rand.backends()[name]
    assert report["available"] is True and report["reason"] is None


@pytest.mark.parametrize("plan_name", sorted(PLANS))
@pytest.mark.parametrize("n", [1, 7, 1031])
def test_backends_agree_and_read_exactly_plan_words(plan_name, n):
    results = {}
    for name in AVAILABLE:
        b = backend_registry.resolve(name)
        from_stream = b.run(PLANS[plan_name](n), KEY, COUNTER)
        plan = PLANS[plan_name](n)
        words = stateless.raw(plan.words, KEY, COUNTER, backend="numpy")
        from_buffer = b.run(plan, KEY, COUNTER, words=words)
        assert result_bytes(from_buffer) == result_bytes(from_stream), (name, plan_name)
        if plan.count:
            # one word short: the kernel itself must refuse (it never reads past a buffer)
            out = b.allocate(plan.shape, plan.dtype)
            view = out.reshape(-1)
            bits = ascend_rand._dtypes.BITS_VIEW.get(plan.dtype)
            if name not in TENSOR_BACKENDS:  # torch kernels take the plan's own dtype
                view = view if bits is None else view.view(bits)
            short = words[:-1]
            if name in TENSOR_BACKENDS:
                import torch
                short = torch.from_numpy(short.astype(np.int64))
            with pytest.raises(ValueError):
                b.kernel(plan.kernel)(view, KEY, *COUNTER, *plan.params, words=short)
        results[name] = result_bytes(from_stream)
    assert len(set(results.values())) == 1, plan_name


def test_torch_device_path_on_cpu_agrees_with_the_native_core():
    """The torch backend's device path (torch operations), run on CPU tensors, for every
    plan: the same bits as the host backend, from the stream and from engine words."""
    torch_backend = pytest.importorskip("ascend_rand.backend.torch")
    pytest.importorskip("torch")
    ops = torch_backend.TorchBackend("cpu", cpu_kernels="torch")
    host = backend_registry.resolve("auto")
    for plan_name in sorted(PLANS):
        for n in (1, 7, 1031):
            want = result_bytes(host.run(PLANS[plan_name](n), KEY, COUNTER))
            assert result_bytes(ops.run(PLANS[plan_name](n), KEY, COUNTER)) == want, plan_name
            plan = PLANS[plan_name](n)
            words = stateless.raw(plan.words, KEY, COUNTER, backend="numpy")
            assert result_bytes(ops.run(plan, KEY, COUNTER, words=words)) == want, plan_name


class _Forbidden:
    """A kernel table whose every entry fails: proof that a backend was not used."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        def fail(*args, **kwargs):
            raise AssertionError(f"the {self._name} backend's {attr} ran")
        return fail


def _every_operation(backend):
    g = ascend_rand.Generator(3, backend=backend)
    m = ascend_rand.Generator(3, engine="mt19937", backend=backend, streams=2)
    out = []
    for gen in (g, m):
        out += [gen.raw(9, "uint64"), gen.random(9), gen.uniform(1, 2, 9, "bfloat16"),
                gen.integers(0, 7, 9), gen.normal(size=99), gen.normal(size=9, method="box_muller"),
                gen.truncated_normal(size=99), gen.truncated_normal(a=3, b=np.inf, size=9),
                gen.bernoulli(0.5, 9), gen.bernoulli(np.full(9, 0.5)), gen.dropout_mask(99, 0.1),
                gen.permutation(9), gen.permutation(np.arange(9)), gen.choice(9, 3),
                gen.choice(9, 3, replace=False), gen.choice(10**12, 3, replace=False),
                gen.choice(5, 9, p=[0.1, 0.2, 0.3, 0.2, 0.2]),
                gen.choice(5, 3, replace=False, p=[0.1, 0.2, 0.3, 0.2, 0.2])]
    out.append(ascend_rand.MT19937(5, backend=backend).random(9))
    out.append(ascend_rand.MT19937(5, streams=3, backend=backend).advance(10**40).random_raw(9))
    out.append(stateless.normal(9, 1, backend=backend))
    return out


@pytest.mark.parametrize("name", AVAILABLE)
def test_an_operation_runs_wholly_on_its_backend(name, monkeypatch):
    """Every other backend's kernel table is replaced by one that fails when used.

    The torch backend's CPU path runs the host kernels by design (a CPU tensor is
    filled in place by the native core): there, the host backend "auto" picks is
    its own, and only the other host backend is forbidden."""
    want = [result_bytes(x) for x in _every_operation(name)]
    own = {name}
    if name in TENSOR_BACKENDS:
        own.add(backend_registry.default_backend())
    for other in AVAILABLE:
        if other not in own and other not in TENSOR_BACKENDS:
            b = backend_registry.resolve(other)
            monkeypatch.setattr(b, "_table", lambda o=other: _Forbidden(o))
            monkeypatch.setattr(b, "_fns", {})
    got = [result_bytes(x) for x in _every_operation(name)]
    assert got == want
