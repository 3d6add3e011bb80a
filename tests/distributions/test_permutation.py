"""Permutations, shuffle and choice (docs/spec.md sections 4 and 4A).

The reference is written here: element i's key is ``(word 2i << 32) | word
2i+1`` (the raw uint64 draw), and the permutation is the order of the pairs
(key, i), sorted in plain Python.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import ascend_rand
from ascend_rand import stateless
from ascend_rand.fallback import detmath

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE_OK = peers.NATIVE_OK
needs_native = peers.needs_native  # skipped without the core, an error in CI

TOP = (1 << 64) - 1
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
u64 = st.one_of(st.integers(0, TOP), st.integers(TOP - 40, TOP), st.integers(0, 40))
counters = st.tuples(u64, u64)


def spec_permutation(n, key, counter):
    keys = stateless.raw(n, key, counter, dtype="uint64", backend="numpy").tolist()
    return np.array(sorted(range(n), key=lambda i: (keys[i], i)), dtype=np.int64)


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def twin(backend, seed=1234):
    """Two generators in the same state."""
    return ascend_rand.Generator(seed, backend=backend), ascend_rand.Generator(seed, backend=backend)


# -- the permutation --------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 257, 5000])
def test_permutation_is_the_order_of_the_keys(backend, n):
    key, counter = 0xDEADBEEF, (TOP - 2, 3)
    perm = stateless.permutation(n, key, counter, backend=backend)
    assert perm.dtype == np.int64 and perm.shape == (n,)
    assert same(np.sort(perm), np.arange(n, dtype=np.int64))
    assert same(perm, spec_permutation(n, key, counter))


def test_permutation_of_arrays(backend):
    g, h = twin(backend)
    x = np.arange(24).reshape(6, 4)
    y = g.permutation(x)
    assert same(y, x[h.permutation(6)]) and y is not x
    assert same(x, np.arange(24).reshape(6, 4))  # the input is untouched
    assert same(g.permutation([3, 1, 2]), np.array([3, 1, 2])[h.permutation(3)])
    assert g.offset == h.offset == 2


def test_shuffle_in_place(backend):
    g, h = twin(backend)
    x = np.arange(30.0).reshape(10, 3)
    x_before = x.copy()
    assert g.shuffle(x) is None
    assert same(x, x_before[h.permutation(10)])
    view = np.arange(10)[::2]  # a non-contiguous view is shuffled in place too
    g.shuffle(view)
    assert same(np.sort(view), np.arange(0, 10, 2))
    assert g.offset == 2
    z = np.arange(5)
    stateless.shuffle(z, 9, (1, 1), backend=backend)
    assert same(z, np.arange(5)[stateless.permutation(5, 9, (1, 1), backend=backend)])


def test_empty_draws_use_an_offset(backend):
    g = ascend_rand.Generator(3, backend=backend)
    assert same(g.permutation(0), np.empty(0, np.int64))
    g.shuffle(np.empty(0))
    assert g.choice(5, 0).shape == (0,)
    assert g.choice(0, 0, replace=False).shape == (0,)
    assert g.choice(4, (2, 0), replace=False, p=[0.25] * 4).shape == (2, 0)
    assert g.offset == 5


# -- choice -------------------------------------------------------------------------------------------

def test_choice_without_replacement_is_a_prefix_of_the_permutation(backend):
    # docs/spec.md 4A.2: with 8 k > n the first k entries of the permutation
    for n, k in [(10, 3), (10, 10), (1000, 126), (5, 0), (31, 4)]:
        g, h = twin(backend, seed=n + k)
        assert same(g.choice(n, k, replace=False), h.permutation(n)[:k])
    g, h = twin(backend)
    pop = np.array(list("abcdefgh"))
    assert same(g.choice(pop, (2, 3), replace=False), pop[h.permutation(8)[:6]].reshape(2, 3))


def test_choice_with_replacement_is_integers(backend):
    g, h = twin(backend)
    assert same(g.choice(7, (3, 5)), h.integers(0, 7, (3, 5)))
    pop = np.array([1.5, 2.5, 3.5])
    assert same(g.choice(pop, 20), pop[h.integers(0, 3, 20)])
    big = (1 << 33) + 5  # 4 words per element, like integers
    assert same(g.choice(big, 4), h.integers(0, big, 4))
    one = g.choice(9)
    assert isinstance(one, np.int64) and one == h.integers(0, 9)


def test_choice_with_p_is_the_inverse_cdf(backend):
    g, h = twin(backend)
    p = np.array([0.1, 0.0, 0.35, 0.05, 0.5])
    got = g.choice(5, 1000, p=p)
    u = h.random(1000, dtype="float64")
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    assert same(got, np.searchsorted(cdf, u, side="right").astype(np.int64))
    assert not (got == 1).any()
    freq = np.bincount(g.choice(5, 100_000, p=p), minlength=5) / 100_000
    assert np.allclose(freq, p, atol=0.006)


def test_choice_with_p_without_replacement(backend):
    g, h = twin(backend)
    p = np.array([0.2, 0.0, 0.3, 0.1, 0.4])
    got = g.choice(5, 3, replace=False, p=p)
    keys = h.raw(5, dtype="uint64")
    u = ((keys >> np.uint64(12)) * np.uint64(2) + np.uint64(1)).astype(np.float64) * 2.0 ** -53
    es = [(-detmath.log_f64(u)[i] / p[i] if p[i] > 0 else math.inf, i) for i in range(5)]
    assert same(got, np.array([i for _, i in sorted(es)[:3]], dtype=np.int64))
    assert len(set(got.tolist())) == 3 and 1 not in got
    # every non-zero entry when size equals their number
    assert set(g.choice(5, 4, replace=False, p=p).tolist()) == {0, 2, 3, 4}
    # the first pick follows p (successive sampling)
    firsts = np.array([stateless.choice(5, 7, (0, j), 1, False, p, backend=backend)[0]
                       for j in range(4000)])
    assert np.allclose(np.bincount(firsts, minlength=5) / 4000, p, atol=0.03)


def test_choice_scalars_and_dtypes(backend):
    g = ascend_rand.Generator(1, backend=backend)
    assert isinstance(g.choice(5, replace=False), np.int64)
    assert isinstance(g.choice(np.array([1.0, 2.0])), np.float64)
    assert g.choice(np.array([1, 2], dtype=np.int8), 3).dtype == np.int8
    assert g.choice(5, 3, p=[0.2] * 5).dtype == np.int64


def test_position_values_are_uniform():
    """Chi-square: every position of a permutation of 5 takes each value 1/5 of the time."""
    n, trials = 5, 20000
    perms = np.array([stateless.permutation(n, 20240601, (0, j)) for j in range(trials)])
    for pos in range(n):
        counts = np.bincount(perms[:, pos], minlength=n)
        assert stats.chisquare(counts).pvalue > 1e-4, (pos, counts)
    # and all 120 orderings appear about equally often
    codes = (perms * (n ** np.arange(n))).sum(axis=1)
    _, counts = np.unique(codes, return_counts=True)
    assert counts.size == 120 and stats.chisquare(counts).pvalue > 1e-4


# -- backends and threads ---------------------------------------------------------------------------

@needs_native
@SETTINGS
@given(n=st.integers(0, 3000), key=u64, counter=counters, data=st.data())
def test_backends_agree(n, key, counter, data):
    a = stateless.permutation(n, key, counter, backend="native")
    assert same(a, stateless.permutation(n, key, counter, backend="numpy"))
    if n == 0:
        return
    k = data.draw(st.integers(0, n))
    replace = data.draw(st.booleans())
    p = None
    if data.draw(st.booleans()):
        w = np.random.default_rng(data.draw(st.integers(0, 2 ** 32))).random(n)
        w[w < 0.1] = 0.0
        if w.sum() == 0:
            w[0] = 1.0
        p = w / w.sum()
        if not replace:
            k = min(k, int(np.count_nonzero(p)))
    args = dict(key=key, counter=counter, size=k, replace=replace, p=p)
    assert same(stateless.choice(n, backend="native", **args),
                stateless.choice(n, backend="numpy", **args))


@needs_native
def test_thread_count_does_not_matter(restore_threads):
    n = 3 * (1 << 16) + 4321
    key, counter = 77, (TOP, TOP)
    results = []
    for threads in (1, 3):
        ascend_rand.set_num_threads(threads)
        results.append((stateless.permutation(n, key, counter, backend="native"),
                        stateless.choice(n, key, counter, 1000, False, backend="native")))
    assert same(results[0][0], results[1][0]) and same(results[0][1], results[1][1])
    assert same(results[0][0], stateless.permutation(n, key, counter, backend="numpy"))
    # 8 * 1000 <= n: the sparse rule of docs/spec.md 4A.2, the same on NumPy
    assert same(results[0][1], stateless.choice(n, key, counter, 1000, False, backend="numpy"))


# -- bad input ------------------------------------------------------------------------------------

def test_bad_permutation_arguments():
    g = ascend_rand.Generator(0)
    with pytest.raises(ValueError, match=">= 0"):
        g.permutation(-1)
    with pytest.raises(TypeError):
        g.permutation(2.5)
    with pytest.raises(TypeError):
        g.permutation(True)
    with pytest.raises(TypeError, match="ndarray"):
        g.shuffle([1, 2, 3])
    with pytest.raises(ValueError, match="dimension"):
        g.shuffle(np.array(3))
    ro = np.arange(4)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        g.shuffle(ro)
    assert g.offset == 0


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(a=-1), ValueError, ">= 0"),
    (dict(a=0), ValueError, "empty"),
    (dict(a=[]), ValueError, "empty"),
    (dict(a=2.5), TypeError, "integer"),
    (dict(a=np.ones((2, 2))), ValueError, "1-dimensional"),
    (dict(a=5, size=6, replace=False), ValueError, "larger sample"),
    (dict(a=3, replace=None), TypeError, "replace"),
    (dict(a=3, p=[0.5, 0.5]), ValueError, "same size"),
    (dict(a=3, p=[[0.5, 0.25, 0.25]]), ValueError, "1-dimensional"),
    (dict(a=3, p=[0.5, 0.6, -0.1]), ValueError, "non-negative"),
    (dict(a=3, p=[0.5, np.nan, 0.5]), ValueError, "finite"),
    (dict(a=3, p=[0.5, 0.4, 0.0]), ValueError, "sum to 1"),
    (dict(a=3, size=3, replace=False, p=[0.5, 0.5, 0.0]), ValueError, "non-zero"),
    (dict(a=3, size=-1), ValueError, ">= 0"),
])
def test_bad_choice_arguments(kwargs, error, match):
    g = ascend_rand.Generator(0)
    with pytest.raises(error, match=match):
        g.choice(**kwargs)
    assert g.offset == 0


@pytest.mark.parametrize("n", [3, 64, 65, 1000])  # the list check up to 64, NumPy's above
@pytest.mark.parametrize("bad, match", [(np.nan, "finite"), (np.inf, "finite"),
                                        (-np.inf, "finite"), (-1e-300, "non-negative")])
def test_bad_probabilities_at_every_length(n, bad, match):
    """choice_probabilities checks a short p on its list of values and a long one with NumPy:
    either way one bad value anywhere is refused with the same message, and -0.0 passes."""
    g = ascend_rand.Generator(0)
    for where in (0, n // 2, n - 1):
        p = np.full(n, 1.0 / n)
        p[where] = bad
        with pytest.raises(ValueError, match=match):
            g.choice(n, p=p)
    p = np.full(n, 1.0 / (n - 1))
    p[n // 2] = -0.0
    assert 0 <= g.choice(n, p=p) < n
    assert g.offset == 1
