"""The choice-without-replacement kernels, called directly on both backends.

``choice_sparse`` (the sparse Fisher-Yates of docs/spec.md section 4A.2) is
held to a per-step reference written here from that section in plain Python
ints, on the words of the test suite's own Philox reference (``Ref.words``);
``weighted_choice`` (the Efraimidis-Spirakis order of section 4A.2) to the
prefix of ``fallback.permutation.weighted_order``, which is what the Python
front end computed before the kernel existed.
"""

from itertools import permutations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import ascend_rand
from ascend_rand.fallback import kernels as numpy_kernels
from ascend_rand.distributions import permutation as dperm
from ascend_rand.fallback import permutation as fperm

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE_OK = peers.NATIVE_OK
needs_native = peers.needs_native  # skipped without the core, an error in CI
if NATIVE_OK:
    from ascend_rand import _native
KERNELS = {"numpy": numpy_kernels, "native": _native if NATIVE_OK else None}
BACKENDS = ["numpy", pytest.param("native", marks=needs_native)]

TOP = (1 << 64) - 1
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
u64 = st.one_of(st.integers(0, TOP), st.integers(TOP - 40, TOP), st.integers(0, 40))
counters = st.tuples(u64, u64)
# Populations: small, around the 2- / 4-word boundary 2**32, and large (int64 results).
populations = st.one_of(
    st.integers(1, 2000),
    st.integers((1 << 32) - 300, (1 << 32) + 300),
    st.integers(1, 1 << 63),
)


def words_per_step(n):
    """docs/spec.md 4A.2: every step reads 2 words when n <= 2**32, else 4 (decided by n)."""
    return 2 if n <= 1 << 32 else 4


def spec_choice_sparse(n, k, words):
    """docs/spec.md 4A.2, step by step: r_j = j + floor(u_j (n - j) / 2**b), swap A[j], A[r_j]."""
    per = words_per_step(n)
    b = 32 * per
    a = {}  # the virtual array A: only displaced positions
    sample = []
    for j in range(k):
        u = 0
        for w in words[per * j:per * j + per]:  # the first word is the most significant
            u = (u << 32) | w
        r = j + (u * (n - j) >> b)
        assert j <= r < n
        a[j], a[r] = a.get(r, r), a.get(j, j)
        sample.append(a[j])
    return sample


def run(backend, name, k, *args, words=None):
    out = np.empty(k, dtype=np.int64)
    getattr(KERNELS[backend], name)(out, *args, words=words)
    return out


# -- choice_sparse -----------------------------------------------------------------------------------

@SETTINGS
@given(n=populations, key=u64, counter=counters, data=st.data())
def test_choice_sparse_is_the_spec_on_both_backends(ref, n, key, counter, data):
    k = data.draw(st.integers(0, min(n, 200)))
    expected = spec_choice_sparse(n, k, ref.words(key, counter, words_per_step(n) * k))
    for backend in ref.BACKEND_NAMES:
        got = run(backend, "choice_sparse", k, key, *counter, n)
        assert got.tolist() == expected, backend


@SETTINGS
@given(n=populations, seed=st.integers(0, 2 ** 32 - 1), data=st.data())
def test_choice_sparse_reads_a_words_buffer(ref, n, seed, data):
    k = data.draw(st.integers(0, min(n, 300)))
    extra = data.draw(st.integers(0, 9))
    words = np.random.default_rng(seed).integers(0, 1 << 32, words_per_step(n) * k + extra,
                                                 dtype=np.uint32)
    if words.size and data.draw(st.booleans()):  # many equal words: equal draws, repeated targets
        words[: words.size // 2] = words[0]
    expected = spec_choice_sparse(n, k, words.tolist())
    for backend in ref.BACKEND_NAMES:
        # The Philox stream arguments are ignored when a buffer is given.
        got = run(backend, "choice_sparse", k, 12345, 6, 7, n, words=words)
        assert got.tolist() == expected, backend


@needs_native
@SETTINGS
@given(n=populations, key=u64, counter=counters, data=st.data())
def test_choice_sparse_backends_agree(n, key, counter, data):
    k = data.draw(st.integers(0, min(n, 5000)))
    a = run("native", "choice_sparse", k, key, *counter, n)
    assert np.array_equal(a, run("numpy", "choice_sparse", k, key, *counter, n))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 2, 7, 100, 4096, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, 10 ** 12])
def test_choice_sparse_values_are_distinct_and_in_range(backend, n):
    k = min(n, 3000)
    got = run(backend, "choice_sparse", k, 99, 1, 2, n)
    assert got.min() >= 0 and got.max() < n
    assert np.unique(got).size == k
    if k == n:  # the whole draw is a permutation
        assert np.array_equal(np.sort(got), np.arange(n))


@pytest.mark.parametrize("backend", BACKENDS)
def test_choice_sparse_is_cheap_for_a_huge_population(backend):
    # 3 of 10**10 reads 12 words: milliseconds and a few bytes, not O(n) (the issue's
    # choice(10**9, 3, replace=False) took 41 s and 15.7 GB).
    got = run(backend, "choice_sparse", 3, 2024, 0, 5, 10 ** 10)
    assert np.unique(got).size == 3 and got.min() >= 0 and got.max() < 10 ** 10


@pytest.mark.parametrize("n, k", [(5, 3), (4, 4)])
def test_choice_sparse_is_uniform_over_ordered_samples(n, k):
    """Chi-square over every ordered k-subset: 60 of (5, 3), all 24 orders of (4, 4).

    Fixed key and counters (0, j), j < trials, so the test is deterministic; it
    would fail (p <= 1e-4) with probability 1e-4 for a uniform sampler.  The
    native backend when present (the backends agree bit for bit, tested above).
    """
    backend = "native" if NATIVE_OK else "numpy"
    cells = list(permutations(range(n), k))
    trials = 400 * len(cells)
    index = {c: i for i, c in enumerate(cells)}
    counts = np.zeros(len(cells), dtype=np.int64)
    out = np.empty(k, dtype=np.int64)
    kernel = KERNELS[backend].choice_sparse
    for j in range(trials):
        kernel(out, 20240601, 0, j, n)
        counts[index[tuple(out.tolist())]] += 1
    assert counts.min() > 0
    assert stats.chisquare(counts).pvalue > 1e-4, counts


@needs_native
def test_choice_sparse_thread_count_does_not_matter(restore_threads):
    n, k = 10 ** 9, 3 * (1 << 16) + 321  # the targets are computed in parallel pieces
    results = []
    for threads in (1, 3):
        ascend_rand.set_num_threads(threads)
        results.append(run("native", "choice_sparse", k, 77, TOP, TOP, n))
    assert np.array_equal(results[0], results[1])
    assert np.array_equal(results[0], run("numpy", "choice_sparse", k, 77, TOP, TOP, n))


def test_use_sparse_choice_rule():
    # docs/spec.md 4A.2: the sparse draw exactly when 8 k <= n.
    rule = dperm.use_sparse_choice
    assert rule(8, 1) and not rule(7, 1)
    assert rule(800, 100) and not rule(799, 100)
    assert rule(10 ** 10, 3) and rule(0, 0)
    assert not rule(10, 10)


# -- weighted_choice ---------------------------------------------------------------------------------

def weighted_reference(key, counter, p, k, words=None):
    """The prefix the front end took before the kernel: weighted_order of the raw keys."""
    keys = fperm.sort_keys(key, *counter, p.size, words)
    return fperm.weighted_order(keys, p)[:k].astype(np.int64)


@st.composite
def weights(draw):
    n = draw(st.integers(1, 1500))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    kind = draw(st.sampled_from(["random", "zeros", "ties", "extreme", "one"]))
    p = rng.random(n)
    if kind == "zeros":
        p[rng.random(n) < 0.5] = 0.0
    elif kind == "ties":  # few distinct weights
        p = rng.integers(0, 4, n).astype(np.float64)
    elif kind == "extreme":  # e = -log(v) / p overflows to inf for the tiny ones
        p = rng.choice([0.0, 5e-324, 1e-300, 1e-10, 1.0, 1e300], n)
    elif kind == "one":
        p = np.zeros(n)
        p[rng.integers(0, n)] = 1.0
    if not (p > 0).any():
        p[0] = 1.0
    if kind != "extreme" and draw(st.booleans()):
        p = p / p.sum()
    return p


@SETTINGS
@given(p=weights(), key=u64, counter=counters, data=st.data())
def test_weighted_choice_is_the_weighted_order_prefix(ref, p, key, counter, data):
    k = data.draw(st.integers(0, p.size))
    expected = weighted_reference(key, counter, p, k)
    for backend in ref.BACKEND_NAMES:
        got = run(backend, "weighted_choice", k, key, *counter, p)
        assert np.array_equal(got, expected), backend


@SETTINGS
@given(p=weights(), seed=st.integers(0, 2 ** 32 - 1), data=st.data())
def test_weighted_choice_ties_and_words_buffer(ref, p, seed, data):
    """Equal words give equal keys: equal weights then tie, and the order is by index."""
    k = data.draw(st.integers(0, p.size))
    words = np.random.default_rng(seed).integers(0, 1 << 32, 2 * p.size + 3, dtype=np.uint32)
    if data.draw(st.booleans()):
        words[: 2 * p.size] = np.tile(words[:2], p.size)  # every key the same
    expected = weighted_reference(0, (0, 0), p, k, words)
    for backend in ref.BACKEND_NAMES:
        got = run(backend, "weighted_choice", k, 5, 6, 7, p, words=words)
        assert np.array_equal(got, expected), backend


@pytest.mark.parametrize("backend", BACKENDS)
def test_weighted_choice_zero_weights_come_last(backend):
    p = np.array([0.0, 0.5, 0.0, 0.25, 0.25, 0.0])
    got = run(backend, "weighted_choice", 6, 3, 1, 4, p)
    assert sorted(got[:3].tolist()) == [1, 3, 4] and got[3:].tolist() == [0, 2, 5]


@needs_native
def test_weighted_choice_large_partial_selection(restore_threads):
    """n over several threads' pieces, k small (nth_element) and large."""
    rng = np.random.default_rng(5)
    n = 3 * (1 << 16) + 4321
    p = rng.random(n)
    p[rng.random(n) < 0.2] = 0.0
    for k in (0, 1, 17, 5000, int(np.count_nonzero(p)), n):
        expected = weighted_reference(8, (TOP, 1), p, k)
        for threads in (1, 3):
            ascend_rand.set_num_threads(threads)
            assert np.array_equal(run("native", "weighted_choice", k, 8, TOP, 1, p), expected), (k, threads)
        assert np.array_equal(run("numpy", "weighted_choice", k, 8, TOP, 1, p), expected), k


# -- buffer guards -----------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_short_words_buffers_are_refused(backend):
    kernels = KERNELS[backend]
    out = np.empty(3, dtype=np.int64)
    with pytest.raises(ValueError, match="words"):
        kernels.choice_sparse(out, 0, 0, 0, 100, words=np.zeros(5, dtype=np.uint32))
    with pytest.raises(ValueError, match="words"):  # 4 words a step above 2**32
        kernels.choice_sparse(out, 0, 0, 0, (1 << 32) + 1, words=np.zeros(11, dtype=np.uint32))
    with pytest.raises(ValueError, match="words"):  # all n keys, whatever k >= 1
        kernels.weighted_choice(out, 0, 0, 0, np.full(10, 0.1), words=np.zeros(19, dtype=np.uint32))
    with pytest.raises(ValueError):
        kernels.choice_sparse(np.empty(5, dtype=np.int64), 0, 0, 0, 4)
    # k = 0 draws nothing, so it needs no words
    empty, no_words = np.empty(0, dtype=np.int64), np.zeros(0, dtype=np.uint32)
    kernels.choice_sparse(empty, 0, 0, 0, 100, words=no_words)
    kernels.weighted_choice(empty, 0, 0, 0, np.full(10, 0.1), words=no_words)


@needs_native
def test_native_buffer_checks():
    out = np.empty(3, dtype=np.int64)
    with pytest.raises(TypeError, match="float64"):
        _native.weighted_choice(out, 0, 0, 0, np.full(10, 0.1, dtype=np.float32))
    with pytest.raises(ValueError, match="longer"):
        _native.weighted_choice(np.empty(11, dtype=np.int64), 0, 0, 0, np.full(10, 0.1))
    with pytest.raises(ValueError, match="C-contiguous"):
        _native.weighted_choice(out, 0, 0, 0, np.full(20, 0.1)[::2])
    with pytest.raises(TypeError, match="item size"):
        _native.choice_sparse(np.empty(3, dtype=np.int32), 0, 0, 0, 100)
    with pytest.raises(TypeError, match="uint32"):
        _native.choice_sparse(out, 0, 0, 0, 100, words=np.zeros(6, dtype=np.int64))
