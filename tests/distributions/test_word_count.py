"""The plan's word count reaches the host kernels (issue 25 item 3).

``distributions/plan.py words_for`` is the words rule in Python; ``HostBackend.run``
hands its count to the kernel as ``word_count=``, and the native bindings size their
work by it instead of restating the rule.  Here, for every draw kernel of both host
tables: the plan's count draws the same bits as no count; any other count is a
ValueError naming it, raised before anything is written, even where a caller's
``words`` buffer holds only that many words (never a read past its end).
"""

import numpy as np
import pytest

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)
from ascend_rand import _dtypes
from ascend_rand.backend import resolve
from ascend_rand.distributions.bernoulli import plan_bernoulli
from ascend_rand.distributions.normal import plan_normal, plan_truncated_normal
from ascend_rand.distributions.permutation import plan_choice, plan_permutation
from ascend_rand.distributions.uniform import plan_integers, plan_raw, plan_uniform

BACKENDS = ["numpy", pytest.param("native", marks=peers.needs_native)]

KEY, COUNTER = 0x1234_5678_9ABC_DEF0, (5, 6)

PLANS = {
    "raw_u32": lambda: plan_raw(7, "uint32"),
    "raw_u64": lambda: plan_raw(7, "uint64"),
    "uniform_f64": lambda: plan_uniform(7, "float64", 0.0, 1.0),
    "uniform_bf16": lambda: plan_uniform(7, "bfloat16", -1.0, 1.0),
    "integers_wide": lambda: plan_integers(7, "int64", 0, 2**40, False),
    "normal_zig": lambda: plan_normal(7, "float32", 0.0, 1.0, "ziggurat"),
    # an odd Box-Muller draw reads its last pair whole: 8 words for 7 float32s, 16 for float64
    "normal_bm_f32": lambda: plan_normal(7, "float32", 0.0, 1.0, "box_muller"),
    "normal_bm_f64": lambda: plan_normal(7, "float64", 0.0, 1.0, "box_muller"),
    "truncated": lambda: plan_truncated_normal(7, "float64", 0.0, 1.0, -1.0, 2.0),
    "bernoulli": lambda: plan_bernoulli(0.3, 7, False),
    "bernoulli_packed": lambda: plan_bernoulli(0.3, 200, True),
    "permutation": lambda: plan_permutation(9),
}


def _run(backend, plan, **kw):
    out = np.zeros(plan.count, dtype=_dtypes.NUMPY[plan.dtype])
    bits = _dtypes.BITS_VIEW.get(plan.dtype)
    backend.kernel(plan.kernel)(out if bits is None else out.view(bits), KEY, *COUNTER,
                                *plan.params, **kw)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(PLANS))
def test_the_plans_count_draws_the_same_bits(backend, name):
    b, plan = resolve(backend), PLANS[name]()
    assert plan.words > 0
    want = _run(b, plan)
    assert _run(b, plan, word_count=plan.words).tobytes() == want.tobytes()
    # and from a buffer of exactly that many words (the stream's own)
    words = np.empty(plan.words, dtype=np.uint32)
    resolve("numpy").kernel("raw")(words, KEY, *COUNTER)
    assert _run(b, plan, words=words, word_count=plan.words).tobytes() == want.tobytes()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(PLANS))
@pytest.mark.parametrize("delta", [-1, 1])
def test_another_count_is_refused_before_any_read(backend, name, delta):
    b, plan = resolve(backend), PLANS[name]()
    wrong = plan.words + delta
    words = np.zeros(wrong, dtype=np.uint32)  # holds exactly the wrong count
    with pytest.raises(ValueError, match=f"word_count={wrong}, but the draw reads {plan.words}"):
        _run(b, plan, words=words, word_count=wrong)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_choice_kernels_take_their_count(backend):
    b = resolve(backend)
    for plan in (plan_choice(10**6, 5, False, None), plan_choice(6, 4, False, np.full(6, 1 / 6))):
        assert plan.kernel in ("choice_sparse", "weighted_choice")
        want = _run(b, plan)
        assert _run(b, plan, word_count=plan.words).tobytes() == want.tobytes()
        with pytest.raises(ValueError, match="word_count="):
            _run(b, plan, word_count=plan.words + 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mt19937_uniform_takes_its_count(backend):
    b = resolve(backend)
    words = np.arange(14, dtype=np.uint32) * np.uint32(0x9E3779B9)
    out = np.empty(7, dtype=np.float64)
    b.kernel("mt19937_uniform")(out, 0, 0, 0, "float64", 0.0, 1.0, False, words=words,
                                word_count=14)
    with pytest.raises(ValueError, match="word_count=7, but the draw reads 14"):
        b.kernel("mt19937_uniform")(out, 0, 0, 0, "float64", 0.0, 1.0, False, words=words,
                                    word_count=7)
