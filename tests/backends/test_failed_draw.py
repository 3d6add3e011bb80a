"""A draw that fails reserves nothing (docs/spec.md 2.2), on every backend and engine.

Found by hostile probing (issue 22, defect 7): ``g.random(2**38)`` raised
MemoryError and moved the offset on the native and NumPy backends (and for
MT19937 everywhere) but not on torch, so a retried draw differed by backend.
Now a draw allocates before it reserves, and a Philox reservation is given back
when the run fails after it.  The sizes here fail at once, in the allocator,
without touching memory (1 TiB and more).
"""

import sys
import threading

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand.backend import resolve

import peers

torch = pytest.importorskip("torch")
# ascend_rand.torch reaches triton through torch (its triton_op operators): triton imported
# interpreted first, as the Triton test files do (Triton decides at its first import).
import triton_support  # noqa: E402  (tests/triton_support.py, on sys.path by conftest)

triton_support.import_interpreted()

from ascend_rand.backend.torch import TorchBackend  # noqa: E402
from ascend_rand.backend.torch_arrays import as_numpy  # noqa: E402
from ascend_rand.torch import dropout  # noqa: E402

HUGE = 2**38  # elements: 1 TiB of float32, refused by the allocator at once


def _backends():
    """Every backend that takes Generator draws here: by name, and the torch backend's
    device path (its torch operations) run on the CPU."""
    return ["numpy", pytest.param("native", marks=peers.needs_native), "torch",
            pytest.param("torch-ops", id="torch-ops")]


def make(backend, engine, seed=3):
    b = TorchBackend("cpu", "torch") if backend == "torch-ops" else backend
    return ar.Generator(seed, engine=engine, backend=b)


def same_state(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


CALLS = {
    "random": lambda g, n: g.random(n),
    "float64": lambda g, n: g.random(n, dtype="float64"),
    "uniform": lambda g, n: g.uniform(-1.0, 1.0, size=(n, 2)),
    "integers": lambda g, n: g.integers(0, 10, size=n),
    "normal": lambda g, n: g.normal(size=n),
    "truncated": lambda g, n: g.truncated_normal(size=n),
    "bernoulli": lambda g, n: g.bernoulli(0.5, size=n),
    "mask": lambda g, n: g.dropout_mask(n * 8, 0.5),
    "permutation": lambda g, n: g.permutation(n),
    "raw": lambda g, n: g.raw(n, dtype="uint64"),
}


@pytest.mark.parametrize("engine", ["philox", "mt19937"])
@pytest.mark.parametrize("backend", _backends())
def test_a_draw_that_cannot_be_allocated_reserves_nothing(backend, engine):
    """The reproducer, for every kind of draw, twice (the second time its plan is cached
    and the one-call path takes it): the state is unchanged and a retry draws what the
    failed draw would have."""
    g = make(backend, engine)
    g.random(5)  # not at the start of the stream
    before = g.state
    for name, call in CALLS.items():
        for _ in range(2):
            with pytest.raises(MemoryError):
                call(g, HUGE)
            assert same_state(g.state, before), (name, g.state)
    retry = as_numpy(g.random(4))
    twin = make(backend, engine)
    twin.random(5)
    assert retry.tolist() == as_numpy(twin.random(4)).tolist()


@pytest.mark.parametrize("engine", ["philox", "mt19937"])
def test_the_retry_is_the_same_on_every_backend(engine):
    """What F04 showed differing: native and numpy moved on, torch did not."""
    retries = []
    for backend in ["numpy", "torch", "torch-ops"] + (["native"] if peers.NATIVE_OK else []):
        g = make(backend, engine, seed=1)
        with pytest.raises(MemoryError):
            g.random(HUGE)
        assert g.offset == 0
        retries.append(as_numpy(g.random(3)).tolist())
    assert all(r == retries[0] for r in retries)
    assert retries[0] == as_numpy(ar.Generator(1, engine=engine).random(3)).tolist()


class Failing:
    """Makes ``backend.run`` fail after the reservation (a kernel's own allocation, a
    device running out of memory), optionally letting another draw happen first."""

    def __init__(self, monkeypatch, backend, meanwhile=None):
        self.real = backend.run
        self.meanwhile = meanwhile
        monkeypatch.setattr(backend, "run", self)

    def __call__(self, *args, **kwargs):
        if self.meanwhile is not None:
            self.meanwhile()
        raise MemoryError("out of memory inside the kernel")


@pytest.mark.parametrize("backend", ["numpy", pytest.param("native", marks=peers.needs_native),
                                     "torch"])
def test_a_philox_draw_failing_after_its_reservation_gives_the_offset_back(backend, monkeypatch):
    g = ar.Generator(6, backend=backend)
    g.random(3)
    before = g.state
    Failing(monkeypatch, resolve(backend))
    with pytest.raises(MemoryError, match="inside the kernel"):
        g.choice(10, size=4)  # the general path (a finishing step)
    assert g.state == before == {"engine": "philox", "seed": 6, "offset": 1}


@pytest.mark.parametrize("backend", ["numpy", pytest.param("native", marks=peers.needs_native)])
def test_the_retry_after_a_late_failure_equals_the_failed_draw(backend, monkeypatch):
    g = ar.Generator(6, backend=backend)
    expected = ar.Generator(6, backend=backend)
    expected.random(3)
    want = expected.choice(10, size=6).tolist()
    g.random(3)
    Failing(monkeypatch, resolve(backend))
    with pytest.raises(MemoryError):
        g.choice(10, size=6)
    monkeypatch.undo()
    assert g.choice(10, size=6).tolist() == want
    assert g.offset == expected.offset == 2


def test_an_offset_is_never_given_back_once_a_later_draw_holds_the_next(monkeypatch):
    """Another draw on the same engine after the failed one's reservation: giving the
    failed offset back then could hand the later one out twice, so it stays spent."""
    engine = ar.Philox(8)
    g, other = ar.Generator(engine=engine, backend="numpy"), ar.Generator(engine=engine)
    seen = []
    Failing(monkeypatch, resolve("numpy"),
            meanwhile=lambda: seen.append(other.engine.reserve(_plan(), resolve("numpy"))[1]))
    with pytest.raises(MemoryError):
        g.choice(10, size=4)
    assert seen == [(0, 1)] and engine.offset == 2  # offset 0 spent, 1 the other's
    monkeypatch.undo()
    assert engine.reserve(_plan(), resolve("numpy"))[1] == (0, 2)


def _plan():
    from ascend_rand.distributions.uniform import plan_uniform
    return plan_uniform(4, "float32", 0.0, 1.0)


def test_a_failure_after_word_reads_keeps_nothing_twice(monkeypatch):
    """After the word interface read part of subsequence 0, a draw reserves offset 1;
    failing, it leaves the engine at offset 1, which the retry takes, as the failed
    draw did (the rest of subsequence 0 is passed over as by any draw)."""
    e = ar.Philox(5)
    e.random_raw(3)
    g = ar.Generator(engine=e, backend="numpy")
    Failing(monkeypatch, resolve("numpy"))
    with pytest.raises(MemoryError):
        g.choice(10, size=4)
    monkeypatch.undo()
    assert e.state == {"engine": "philox", "seed": 5, "offset": 1, "bit_generator": "Philox"}
    twin = ar.Philox(5)
    twin.random_raw(3)
    assert g.choice(10, size=4).tolist() == ar.Generator(engine=twin).choice(10, size=4).tolist()


def test_mt19937_words_once_made_stay_spent(monkeypatch):
    """MT19937 cannot step back: a failure after its words were made (inside a kernel)
    leaves them used, never handed out twice; everything the library allocates itself
    comes before them (the test above)."""
    g = ar.Generator(3, engine="mt19937", backend="numpy")
    Failing(monkeypatch, resolve("numpy"))
    with pytest.raises(MemoryError):
        g.random(5)
    monkeypatch.undo()
    twin = ar.MT19937(3)
    twin.random_raw(5)
    assert g.offset == 1 and same_state(g.engine.state, {**twin.state, "offset": 1})


def test_concurrent_failures_and_draws_never_repeat_an_offset(monkeypatch):
    """Threads drawing on one engine while others fail after their reservations: every
    successful draw has its own offset."""
    engine = ar.Philox(11)
    backend = resolve("numpy")
    real = backend.run
    lock = threading.Lock()
    counters = []

    def run(plan, key, counter, words=None, output=None):
        if plan.count == 3:  # every choice of 3 fails after its reservation
            raise MemoryError("late")
        with lock:
            counters.append(counter)
        return real(plan, key, counter, words, output)

    monkeypatch.setattr(backend, "run", run)

    def work(i):
        g = ar.Generator(engine=engine, backend="numpy")
        for _ in range(200):
            try:
                g.choice(10, size=3) if i % 2 else g.choice(10, size=4)
            except MemoryError:
                pass

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(counters) == 400 and len(set(counters)) == 400


def test_a_failed_regenerating_dropout_gives_its_offset_back(monkeypatch):
    g = ar.Generator(2)
    module = sys.modules["ascend_rand.torch.dropout_core"]

    def fail(*args, **kwargs):
        raise MemoryError("no memory for the mask")

    # The forward's mask: drawn by the host kernels for a CPU x (_host_mask), by the
    # Generator's backend elsewhere (_regenerate_mask); either failing gives the offset back.
    monkeypatch.setattr(module, "_regenerate_mask", fail)
    monkeypatch.setattr(module, "_host_mask", fail)
    with pytest.raises(MemoryError):
        dropout(torch.ones(10), 0.5, generator=g, mode="regenerate")
    assert g.offset == 0
    monkeypatch.undo()
    y = dropout(torch.ones(10), 0.5, generator=g, mode="regenerate")
    assert y.tolist() == dropout(torch.ones(10), 0.5, generator=ar.Generator(2)).tolist()
