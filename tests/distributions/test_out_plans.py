"""Draws into ``out=``: the plan is checked once per arguments and layout of ``out``
(distributions.cache.bound_to_out) and bound to each call's array.

The references are allocating draws of the same generator state, which take the
other path (a plan without ``out``); every ``out`` that fails a check after a
cached one of the same arguments still fails it.
"""

import gc
import weakref

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand import stateless
from ascend_rand.distributions import cache
from ascend_rand.distributions.plan import Plan

BACKENDS = [b for b in ("native", "numpy") if ar.backends()[b]["available"]]

# (method, kwargs, output dtype) of every Generator draw that takes out=
DRAWS = [
    ("raw", {"dtype": "uint32"}, np.uint32),
    ("raw", {"dtype": "uint64"}, np.uint64),
    ("random", {"dtype": "float32"}, np.float32),
    ("random", {"dtype": "float64"}, np.float64),
    ("uniform", {"low": -2.0, "high": 3.0, "dtype": "float64"}, np.float64),
    ("integers", {"low": 5, "high": 1000, "dtype": "int64"}, np.int64),
    ("integers", {"low": 0, "high": 6, "dtype": "uint8", "endpoint": True}, np.uint8),
    ("normal", {"loc": 1.0, "scale": 2.0, "dtype": "float32"}, np.float32),
    ("normal", {"dtype": "float64", "method": "box_muller"}, np.float64),
    ("standard_normal", {"dtype": "float64"}, np.float64),
    ("truncated_normal", {"a": -1.0, "b": 2.5, "dtype": "float32"}, np.float32),
    ("bernoulli", {"p": 0.3}, np.bool_),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method, kwargs, dtype", DRAWS,
                         ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(DRAWS)])
def test_repeated_out_draws_equal_allocating_draws(backend, method, kwargs, dtype):
    shape = (3, 37)
    gen, ref = ar.Generator(11, backend=backend), ar.Generator(11, backend=backend)
    for _ in range(3):  # the first call builds the plan, the next ones take it from the cache
        out = np.empty(shape, dtype)
        result = getattr(gen, method)(**kwargs, out=out)
        assert result is out
        expected = getattr(ref, method)(**kwargs, size=shape)
        assert expected.dtype == out.dtype
        np.testing.assert_array_equal(out, expected)
    assert gen.state == ref.state  # the same words reserved


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_second_array_of_the_same_layout_gets_its_own_values(backend):
    gen = ar.Generator(3, backend=backend)
    first, second = np.empty(64, np.float32), np.empty(64, np.float32)
    gen.random(out=first)
    gen.random(out=second)
    ref = ar.Generator(3, backend=backend)
    np.testing.assert_array_equal(first, ref.random(64))
    np.testing.assert_array_equal(second, ref.random(64))
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_outs_fail_after_a_good_one_of_the_same_arguments(backend):
    gen = ar.Generator(5, backend=backend)
    gen.random(dtype="float64", out=np.empty(8))  # cached for a writable contiguous (8,)
    read_only = np.empty(8)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="out is not writable"):
        gen.random(dtype="float64", out=read_only)
    with pytest.raises(ValueError, match="C-contiguous"):
        gen.random(dtype="float64", out=np.empty(16)[::2])
    with pytest.raises(TypeError, match="out has dtype float32, expected float64"):
        gen.random(dtype="float64", out=np.empty(8, np.float32))
    with pytest.raises(TypeError, match="out has dtype >f8, expected float64"):
        gen.random(dtype="float64", out=np.empty(8, ">f8"))
    gen.random(size=8, dtype="float64", out=np.empty(8))
    with pytest.raises(ValueError, match=r"out has shape \(9,\), expected \(8,\)"):
        gen.random(size=8, dtype="float64", out=np.empty(9))
    gen.bernoulli(0.5, size=200, packed=True, out=np.empty(32, np.uint8))
    with pytest.raises(ValueError, match="a packed out must be 1-D"):
        gen.bernoulli(0.5, size=200, packed=True, out=np.empty((2, 16), np.uint8))
    assert gen.state["offset"] == 3  # the three draws that were not refused


class Subclass(np.ndarray):
    pass


def test_subclasses_and_odd_addresses_still_take_the_checked_path():
    gen, ref = ar.Generator(9), ar.Generator(9)
    out = np.empty(10).view(Subclass)
    assert gen.random(dtype="float64", out=out) is out
    np.testing.assert_array_equal(np.asarray(out), ref.random(10, dtype="float64"))
    raw = np.zeros(8 * 10 + 1, np.uint8)
    odd = raw[1:].view(np.float64)  # not aligned: filled through an aligned buffer
    gen.random(dtype="float64", out=odd)
    gen.random(dtype="float64", out=odd)
    ref.random(10, dtype="float64")
    np.testing.assert_array_equal(odd, ref.random(10, dtype="float64"))


def test_stateless_out_draws_equal_allocating_draws():
    for _ in range(2):
        out = np.empty(100, np.float32)
        stateless.normal(out.shape, 7, (5, 0), out=out)
        np.testing.assert_array_equal(out, stateless.normal((100,), 7, (5, 0)))
        ints = np.empty(50, np.int64)
        stateless.integers(ints.shape, 7, 0, 10, (9, 0), out=ints)
        np.testing.assert_array_equal(ints, stateless.integers((50,), 7, 0, 10, (9, 0)))


def test_only_plain_arguments_and_host_backends_are_cached(monkeypatch):
    monkeypatch.setattr(cache, "PLANS", {})
    built = []

    def build():
        built.append(1)
        return Plan("raw", (4,), "uint32", (), 4, out=out)

    out = np.empty(4, np.uint32)
    native_like = type("B", (), {"name": "numpy", "host": True, "adopt": lambda self, plan: None})()
    torch_like = type("B", (), {"name": "torch", "host": False})()
    key = cache.cache_key("raw", None, ("uint32",))
    first = cache.bound_to_out(key, out, native_like, build)
    other = np.empty(4, np.uint32)
    second = cache.bound_to_out(key, other, native_like, build)
    assert len(built) == 1 and first.out is out and second.out is other
    cache.bound_to_out(key, out, torch_like, build)  # a device backend checks every time
    cache.bound_to_out(None, out, native_like, build)  # arguments without a key
    cache.bound_to_out(key, out.view(Subclass), native_like, build)
    assert len(built) == 4


def test_the_cache_keeps_no_caller_array_alive():
    gen = ar.Generator(1)
    out = np.empty(1000, np.float32)
    alive = weakref.ref(out)
    gen.normal(out=out)
    gen.normal(out=out)
    del out
    gc.collect()
    assert alive() is None


def test_with_out_copies_every_other_slot():
    plan = Plan("normal", (2, 3), "float32", ("float32",), 6, scalar=False, out=None,
                finish=len)
    plan.native_form = "fast-form"
    out = np.empty((2, 3), np.float32)
    twin = plan.with_out(out)
    assert twin.out is out and plan.out is None
    for slot in Plan.__slots__:
        if slot != "out":
            assert getattr(twin, slot) == getattr(plan, slot), slot
    assert plan.with_kernel("normal_mt").kernel == "normal_mt"


@pytest.mark.skipif(not ar.backends()["native"]["available"], reason="no native core")
def test_the_one_call_path_fills_a_checked_out_and_declines_any_other():
    """_native.stateless_draw fills plan.out itself when it is an exact, aligned,
    writable, C-contiguous array of the plan's dtype and shape; otherwise it returns
    None having written nothing, and the general path runs."""
    from ascend_rand.backend import native
    from ascend_rand.distributions.normal import plan_normal

    nb = native.NativeBackend()
    expected = stateless.normal((4, 25), 3, (7, 0), dtype="float64")

    def plan_for(out):
        plan = plan_normal(None, "float64", 0.0, 1.0, "ziggurat", out, nb)
        plan.native_form = native.native_form(plan)
        return plan

    out = np.full((4, 25), -7.0)
    assert nb.module.stateless_draw(3, (7, 0), plan_for(out)) is out
    np.testing.assert_array_equal(out, expected)

    misaligned = np.zeros(8 * 100 + 1, np.uint8)[1:].view(np.float64).reshape(4, 25)
    plan = plan_for(misaligned)
    assert plan.native_form  # the native form is there; the array is what the call declines
    declined = [plan]
    for other in (np.full((4, 25), -7.0).view(Subclass), np.full((4, 50), -7.0)[:, ::2]):
        declined.append(plan_for(np.full((4, 25), -7.0)).with_out(other))
    read_only = np.full((4, 25), -7.0)
    twin = plan_for(np.full((4, 25), -7.0))
    read_only.flags.writeable = False
    declined.append(twin.with_out(read_only))
    declined.append(twin.with_out(np.full((4, 25), -7.0, np.float32)))  # not the plan's dtype
    declined.append(twin.with_out(np.full(100, -7.0)))  # not the plan's shape
    for p in declined:
        before = np.array(p.out, copy=True)
        assert nb.module.stateless_draw(3, (7, 0), p) is None
        np.testing.assert_array_equal(np.asarray(p.out), before)  # nothing written
    np.testing.assert_array_equal(nb.run(plan, 3, (7, 0)), expected)  # the general path


@pytest.mark.skipif(not ar.backends()["native"]["available"], reason="no native core")
def test_a_generator_fills_a_checked_out_in_one_call():
    from ascend_rand.backend import native
    from ascend_rand.distributions.uniform import plan_uniform

    gen, ref = ar.Generator(21), ar.Generator(21)
    out = np.empty(300, np.float32)
    plan = plan_uniform(None, "float32", 0.0, 1.0, out, native.NativeBackend(), "random")
    plan.native_form = native.native_form(plan)
    assert gen._small_draw(plan) is out  # philox_draw: reserved and filled in one call
    assert gen.state["offset"] == 1
    np.testing.assert_array_equal(out, ref.random(300))
    misaligned = np.zeros(4 * 300 + 1, np.uint8)[1:].view(np.float32)
    assert gen._small_draw(plan.with_out(misaligned)) is None
    assert gen.state["offset"] == 1  # a declined call reserves nothing
