"""One draw path and protocols, not names (issue 25 items 1 and 2; docs/architecture.md).

Every Generator and stateless draw goes through ``distributions.dispatch.draw``; the
backend alone makes its native form of a plan; the extension is loaded by
``ascend_rand/_extension.py`` only; the front doors, the plan cache and the backend
registry compare no backend or engine name; engines are chosen through the registry.
The source checks read the installed package's files with ``ast``.
"""

import ast
from pathlib import Path

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand import engines, stateless
from ascend_rand.backend import resolve
from ascend_rand.distributions import cache, dispatch
from ascend_rand.distributions.uniform import plan_uniform

import peers

PACKAGE = Path(ar.__file__).resolve().parent
BACKEND_NAMES = {"native", "numpy", "torch", "npu"}
ENGINE_NAMES = {"philox", "mt19937"}


def _modules(*relative):
    return [PACKAGE / r for r in relative]


def _string_constants(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _name_comparisons(path, names):
    """(line, names) of every comparison in ``path`` against a string in ``names``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                hit = _string_constants(side) & names
                if hit:
                    found.append((node.lineno, sorted(hit)))
    return found


# -- one draw path -------------------------------------------------------------------------

GENERATOR_CALLS = [
    ("raw", (5,), {}), ("random", (5,), {}), ("uniform", (-1.0, 2.0, 5), {}),
    ("integers", (0, 10, 5), {}), ("integers", (0, 10, 5), {"endpoint": True}),
    ("normal", (1.0, 2.0, 5), {}), ("standard_normal", (5,), {"method": "box_muller"}),
    ("truncated_normal", (0.0, 1.0, -1.0, 1.0, 5), {}), ("bernoulli", (0.3, 9), {}),
    ("bernoulli", (0.3, 9, True), {}), ("dropout_mask", (9, 0.1), {}), ("permutation", (7,), {}),
]
STATELESS_CALLS = [
    ("raw", (5, 3), {}), ("uniform", (5, 3), {"low": -1.0}), ("integers", (5, 3, 0, 10), {}),
    ("normal", (5, 3), {}), ("truncated_normal", (5, 3), {"a": -1.0, "b": 1.0}),
    ("bernoulli", (9, 3, 0.3), {}), ("dropout_mask", (9, 3, 0.1), {}), ("permutation", (7, 3), {}),
]


@pytest.fixture
def dispatched(monkeypatch):
    """Counts the calls of the one dispatch helper (the front doors look it up per call)."""
    calls = []
    real = dispatch.draw

    def counting(key, *args, **kwargs):
        calls.append(key[0])
        return real(key, *args, **kwargs)

    monkeypatch.setattr(dispatch, "draw", counting)
    return calls


@pytest.mark.parametrize("backend", ["numpy", pytest.param("native", marks=peers.needs_native)])
@pytest.mark.parametrize("method, args, kwargs", GENERATOR_CALLS,
                         ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(GENERATOR_CALLS)])
def test_every_generator_draw_takes_the_dispatch_helper(dispatched, backend, method, args, kwargs):
    for _ in range(2):  # the first call builds the plan, the second finds it cached
        got = getattr(ar.Generator(11, backend=backend), method)(*args, **kwargs)
    assert dispatched == [method, method]
    # The stream's bits, whichever backend and path: stateless at counter (0, 0).
    assert np.asarray(got).tobytes() == np.asarray(
        getattr(ar.Generator(11, backend="numpy"), method)(*args, **kwargs)).tobytes()


@pytest.mark.parametrize("method, args, kwargs", STATELESS_CALLS,
                         ids=[m for m, _, _ in STATELESS_CALLS])
def test_every_stateless_draw_takes_the_dispatch_helper(dispatched, method, args, kwargs):
    for _ in range(2):
        got = getattr(stateless, method)(*args, **kwargs)
    assert dispatched == [method, method]
    want = getattr(stateless, method)(*args, backend="numpy", **kwargs)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_a_non_bool_flag_is_never_cached_and_reaches_the_check():
    # endpoint=1 equals True as a dict key: a cached endpoint=True plan must not let it by.
    ar.Generator(1).integers(0, 10, 3, endpoint=True)
    stateless.integers(3, 1, 0, 10, endpoint=True)
    with pytest.raises(TypeError, match="endpoint must be a bool, got 1"):
        ar.Generator(1).integers(0, 10, 3, endpoint=1)
    with pytest.raises(TypeError, match="endpoint must be a bool, got 1"):
        stateless.integers(3, 1, 0, 10, endpoint=1)
    ar.Generator(1).bernoulli(0.5, 3, packed=True)
    with pytest.raises(TypeError, match="packed"):
        ar.Generator(1).bernoulli(0.5, 3, packed=1)


# -- the backend owns its native form --------------------------------------------------------

def test_only_the_native_backend_writes_a_plans_native_form():
    writers = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Attribute) and sub.attr == "native_form":
                        writers.append(str(path.relative_to(PACKAGE)))
    assert set(writers) == {"backend/native.py", "distributions/plan.py"}, writers


@pytest.mark.parametrize("backend", ["numpy", pytest.param("native", marks=peers.needs_native)])
def test_a_cached_out_plan_carries_its_backends_form_only(monkeypatch, backend):
    monkeypatch.setattr(cache, "PLANS", {})
    b = resolve(backend)
    out = np.empty(6, np.float32)
    key = cache.cache_key("random", None, ("float32",))
    cache.bound_to_out(key, out, b, lambda: plan_uniform(None, "float32", 0.0, 1.0, out, b))
    (template,) = cache.PLANS.values()
    assert template.out is None
    if backend == "numpy":
        assert template.native_form is None  # the NumPy backend has no one-call form
    else:
        dtype, shape, scalar, code, words, params = template.native_form
        assert (dtype, shape, scalar, words) == (np.dtype(np.float32), (6,), False, 6)


# -- protocols, not names ----------------------------------------------------------------------

def test_the_extension_is_loaded_in_one_module():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "_extension.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (
                    (node.module or "").endswith("_native")
                    or any(a.name == "_native" for a in node.names)):
                offenders.append((str(path.relative_to(PACKAGE)), node.lineno))
            elif isinstance(node, ast.Import) and any(a.name.endswith("._native")
                                                      for a in node.names):
                offenders.append((str(path.relative_to(PACKAGE)), node.lineno))
            elif isinstance(node, ast.Attribute) and node.attr == "_native":
                offenders.append((str(path.relative_to(PACKAGE)), node.lineno))
    assert not offenders, offenders


@pytest.mark.parametrize("path", _modules(
    "generator.py", "stateless.py", "distributions/cache.py", "distributions/dispatch.py",
    "backend/__init__.py", "backend/base.py", "cli/selftest.py", "entropy/sources.py",
    "entropy/reserve.py", "entropy/pool.py"), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_front_doors_and_registries_compare_no_backend_name(path):
    assert _name_comparisons(path, BACKEND_NAMES) == []


@pytest.mark.parametrize("path", _modules(
    "generator.py", "stateless.py", "distributions/dispatch.py", "backend/native.py",
    "backend/base.py", "engines/base.py"), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_draw_path_compares_no_engine_name(path):
    assert _name_comparisons(path, ENGINE_NAMES) == []


def test_the_checks_see_a_name_comparison(tmp_path):
    # The scanner finds what it is for (else the two tests above could not fail).
    probe = tmp_path / "probe.py"
    probe.write_text('if backend.name in ("native", "numpy"):\n    pass\n'
                     'ok = engine.name != "philox"\n')
    assert _name_comparisons(probe, BACKEND_NAMES) == [(1, ["native", "numpy"])]
    assert _name_comparisons(probe, ENGINE_NAMES) == [(3, ["philox"])]


class _OtherCounter(ar.Philox):
    """A counter-based engine whose slots are not Philox4x32-10's words."""

    name = "philox_probe"

    @property
    def counter_state(self):
        return "threefry2x64_20", self._slots


@peers.needs_native
def test_the_native_one_call_draw_asks_the_engine_for_its_algorithm():
    native = resolve("native")
    assert callable(native.small_draw(ar.Philox(1)))
    assert native.small_draw(_OtherCounter(1)) is None  # not Philox words: the general path
    assert native.small_draw(ar.MT19937(1)) is None  # hands out words: no counter state


def test_a_registered_engine_serves_a_seed_manager(monkeypatch):
    # Engines are chosen through the registry: a new one needs no edit of the manager.
    monkeypatch.setitem(engines._REGISTRY, _OtherCounter.name, _OtherCounter)
    m = ar.SeedManager(5)
    g = m.generator("probe", engine="philox_probe")
    assert type(g.engine) is _OtherCounter
    assert g.engine.seed == m.key("probe") == m.engine_key("probe")
    shuffle = m.generator("order", engine="mt19937")
    assert m.engine_key("order") == shuffle.engine.retry_key != m.key("order")


def test_engine_conversions_are_declared_not_swapped_by_name():
    assert ar.MT19937(1).kernel("uniform") == "mt19937_uniform"
    assert ar.MT19937(1).kernel("normal") == "normal"
    assert ar.Philox(1).kernel("uniform") == "uniform"
    assert ar.MT19937.conversions == {"uniform": "mt19937_uniform"} and ar.Philox.conversions == {}
