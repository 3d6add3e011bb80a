"""Meta tensors: no draw and no memory; the Generator moves on as a real draw would.

Found by hostile probing (issue 22, defect 8): ``reset_parameters`` on a meta
``Linear(100000, 200000)`` (deferred initialisation) drew all 2e10 values on
the host and raised MemoryError (74.5 GiB) where torch.nn.init does nothing.
The rule now (docs/spec.md 2.4): a draw into a meta tensor computes and
allocates nothing, and moves the Generator exactly as the same draw on a real
device (one offset per draw for Philox, the draw's words for MT19937), so a
model materialised later and initialised again gets a real run's values.
"""

import tracemalloc

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ascend_rand as ar  # noqa: E402
from ascend_rand.distributions.plan import words_for  # noqa: E402
from ascend_rand.torch import dropout, init, reset_parameters  # noqa: E402

ENGINES = ["philox", "mt19937"]


def same_state(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def generator(engine, seed=12):
    if engine == "mt3":  # three interleaved streams: draws of sizes not divisible by 3
        return ar.Generator(engine=ar.MT19937(seed, streams=3))
    return ar.Generator(seed, engine=engine)


INITS = {
    "uniform_": lambda t, g: init.uniform_(t, -0.5, 2.0, generator=g),
    "normal_": lambda t, g: init.normal_(t, 1.0, 3.0, generator=g),
    "trunc_normal_": lambda t, g: init.trunc_normal_(t, 0.0, 1.0, -1.0, 1.5, generator=g),
    "xavier_uniform_": lambda t, g: init.xavier_uniform_(t, generator=g),
    "xavier_normal_": lambda t, g: init.xavier_normal_(t, generator=g),
    "kaiming_uniform_": lambda t, g: init.kaiming_uniform_(t, a=0.1, generator=g),
    "kaiming_normal_": lambda t, g: init.kaiming_normal_(t, mode="fan_out", generator=g),
    "orthogonal_": lambda t, g: init.orthogonal_(t, gain=2.0, generator=g),
    "sparse_": lambda t, g: init.sparse_(t, 0.4, 0.5, generator=g),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("engine", ENGINES + ["mt3"])
@pytest.mark.parametrize("name", sorted(INITS))
def test_an_initialiser_on_meta_moves_the_generator_as_on_the_cpu(name, engine, dtype):
    real, meta = generator(engine), generator(engine)
    cpu = torch.empty(7, 5, dtype=dtype)
    lazy = torch.empty(7, 5, dtype=dtype, device="meta")
    INITS[name](cpu, real)
    assert INITS[name](lazy, meta) is lazy and lazy.is_meta
    assert same_state(meta.state, real.state)
    assert meta.random(4).tolist() == real.random(4).tolist()  # and the next draw agrees


@pytest.mark.parametrize("engine", ENGINES)
def test_reset_parameters_on_a_huge_meta_model_draws_nothing(engine):
    """The reproducer: 2e10 weights, no MemoryError, no host memory, and the state the
    plan's words rule gives for that shape (one uniform draw for the weight, one for the
    bias: an offset each; MT19937 moves by their words)."""
    with torch.device("meta"):
        model = torch.nn.Linear(100_000, 200_000)
    g = generator(engine)
    tracemalloc.start()
    try:
        reset_parameters(model, g)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak
    assert model.weight.is_meta and model.bias.is_meta
    if engine == "philox":
        expected = {"engine": "philox", "seed": 12, "offset": 2}
    else:
        words = words_for("uniform", 100_000 * 200_000, "float32") + words_for(
            "uniform", 200_000, "float32")
        assert words == 20_000_200_000
        expected = {**ar.MT19937(12).advance(words).state, "offset": 2}
    assert same_state(g.engine.state if engine == "mt19937" else g.state, expected)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_model_materialised_later_gets_the_real_run_s_values(engine):
    """Deferred init: reset on meta (the Generator moves on), materialise, reset again from
    a fresh Generator: the values, and every later draw, are a real run's."""
    def build():
        return torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.Embedding(5, 3, padding_idx=1),
                                   torch.nn.LayerNorm(3), torch.nn.Conv1d(2, 3, 2))

    torch.manual_seed(0)
    eager = build()
    g_real = generator(engine)
    reset_parameters(eager, g_real)
    with torch.device("meta"):
        lazy = build()
    g_meta = generator(engine)
    reset_parameters(lazy, g_meta)
    assert same_state(g_meta.state, g_real.state)
    lazy.to_empty(device="cpu")
    reset_parameters(lazy, generator(engine))
    for a, b in zip(eager.parameters(), lazy.parameters()):
        assert torch.equal(a, b)
    assert g_meta.normal(size=3).tolist() == g_real.normal(size=3).tolist()


@pytest.mark.parametrize("mode", ["packed", "regenerate"])
@pytest.mark.parametrize("p", [0.3, 1.0])
def test_dropout_on_meta_makes_no_mask_and_moves_as_one_draw(mode, p):
    x = torch.empty(4, 1000, device="meta", requires_grad=True)
    g, real = ar.Generator(5), ar.Generator(5)
    y = dropout(x, p, generator=g, mode=mode)
    assert y.is_meta and y.shape == x.shape
    y.sum().backward()
    assert x.grad.is_meta and x.grad.shape == x.shape
    dropout(torch.ones(4, 1000), p, generator=real, mode=mode)
    assert g.state == real.state == {"engine": "philox", "seed": 5, "offset": 1}


def test_dropout_on_meta_with_mt19937_moves_by_the_mask_s_words():
    x = torch.empty(3001, device="meta")
    g, real = generator("mt19937"), generator("mt19937")
    dropout(x, 0.25, generator=g)
    dropout(torch.ones(3001), 0.25, generator=real)
    assert same_state(g.state, real.state)


def test_meta_draws_check_their_arguments_as_real_ones():
    g = ar.Generator(1)
    with pytest.raises(ValueError):
        init.normal_(torch.empty(3, device="meta"), 0.0, -1.0, generator=g)
    with pytest.raises(ValueError):
        init.normal_(torch.empty(3), 0.0, -1.0, generator=g)
    assert g.offset == 0
