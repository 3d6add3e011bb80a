"""ascend_rand.manual_seed and the default Generator.

Expected draws come from each library's own objects seeded the documented way
(random.Random(s), numpy.random.RandomState, torch.Generator().manual_seed(s),
ascend_rand.Generator(s)); "the untouched state" is saved and replayed with each
library's own state API.
"""

import os
import random
import subprocess
import sys
import types

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand.seeding import manual

torch = pytest.importorskip("torch")

CUBLAS = "CUBLAS_WORKSPACE_CONFIG"


@pytest.fixture(autouse=True)
def global_state(monkeypatch):
    """Put every global source and setting back however a test ends."""
    saved = (random.getstate(), np.random.get_state(), torch.get_rng_state(),
             ar.default_generator().state, manual.root_seed(),
             torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    monkeypatch.delenv(CUBLAS, raising=False)  # monkeypatch restores the variable
    yield
    random.setstate(saved[0])
    np.random.set_state(saved[1])
    torch.set_rng_state(saved[2])
    ar.default_generator().set_state(saved[3])
    monkeypatch.setattr(manual, "_root", saved[4])
    torch.use_deterministic_algorithms(saved[5], warn_only=saved[6])
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved[7], saved[8]


def numpy_reference(seed):
    """numpy's legacy state for ``seed``: the int below 2**32, its two 32-bit halves above."""
    return np.random.RandomState(seed if seed < 2**32 else [seed & 0xFFFFFFFF, seed >> 32])


def global_draws():
    return (
        [random.random() for _ in range(3)],
        np.random.random_sample(3).tolist(),
        torch.rand(3).tolist(),
        ar.default_generator().random(3).tobytes(),
    )


def reference_draws(seed):
    py = random.Random(seed)
    tg = torch.Generator().manual_seed(seed)
    return (
        [py.random() for _ in range(3)],
        numpy_reference(seed).random_sample(3).tolist(),
        torch.rand(3, generator=tg).tolist(),
        ar.Generator(seed).random(3).tobytes(),
    )


@pytest.mark.parametrize("seed", [0, 5, 2**32 - 1, 2**32, 2**32 + 7, 2**64 - 1])
def test_one_call_seeds_every_source(seed):
    state = ar.manual_seed(seed)
    assert state.seeded[:4] == ("ascend_rand", "random", "numpy", "torch")
    assert ar.default_generator().state == {"engine": "philox", "seed": seed, "offset": 0}
    assert global_draws() == reference_draws(seed)
    assert manual.root_seed() == seed


def test_numpy_gets_the_seed_itself_below_2_to_32_and_its_halves_above():
    ar.manual_seed(1234)
    want = np.random.RandomState(1234).randint(0, 2**31, 4)
    assert np.random.randint(0, 2**31, 4).tolist() == want.tolist()
    ar.manual_seed(5 * 2**32 + 9)
    want = np.random.RandomState([9, 5]).randint(0, 2**31, 4)
    assert np.random.randint(0, 2**31, 4).tolist() == want.tolist()
    assert manual.numpy_seed(1234) == 1234 and manual.numpy_seed(5 * 2**32 + 9) == [9, 5]


def test_default_generator_is_reseeded_in_place():
    g = ar.default_generator()
    g.random(5)
    ar.manual_seed(77)
    assert ar.default_generator() is g
    assert g.random(4).tobytes() == ar.Generator(77).random(4).tobytes()


def untouched_reference():
    """Give every source a known, advanced state; return the draws that state would give next."""
    random.seed(11)
    np.random.seed(12)
    torch.manual_seed(13)
    ar.default_generator().set_state({"engine": "philox", "seed": 14, "offset": 3})
    global_draws()  # move each away from its seeded start
    py = random.Random()
    py.setstate(random.getstate())
    npr = np.random.RandomState()
    npr.set_state(np.random.get_state())
    tg = torch.Generator()
    tg.set_state(torch.get_rng_state())
    ag = ar.Generator(engine=ar.Philox.from_state(ar.default_generator().state))

    def draws():
        return ([py.random() for _ in range(3)], npr.random_sample(3).tolist(),
                torch.rand(3, generator=tg).tolist(), ag.random(3).tobytes())
    return draws


def test_restore_gives_the_draws_of_the_untouched_state():
    expected = untouched_reference()
    root_before = manual.root_seed()
    state = ar.manual_seed(99)
    global_draws()
    assert manual.root_seed() == 99
    state.restore()
    assert state.restored
    assert manual.root_seed() == root_before
    first = global_draws()
    assert first == expected()
    state.restore()  # a second restore does nothing: no rewind
    assert global_draws() == expected()


def test_context_manager_restores_on_exit_even_on_error():
    expected = untouched_reference()
    with pytest.raises(KeyError):
        with ar.manual_seed(5) as state:
            assert global_draws() == reference_draws(5)
            raise KeyError("inside")
    assert state.restored
    assert global_draws() == expected()


def test_deterministic_flags_are_set_and_restored():
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = False, True
    with ar.manual_seed(3, deterministic=True) as state:
        assert state.deterministic
        assert torch.are_deterministic_algorithms_enabled()
        assert not torch.is_deterministic_algorithms_warn_only_enabled()
        assert torch.backends.cudnn.deterministic is True
        assert torch.backends.cudnn.benchmark is False
        assert os.environ[CUBLAS] == ":4096:8"
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.backends.cudnn.deterministic is False
    assert torch.backends.cudnn.benchmark is True
    assert CUBLAS not in os.environ


def test_deterministic_keeps_a_users_setting_and_restores_warn_only(monkeypatch):
    monkeypatch.setenv(CUBLAS, ":16:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    with ar.manual_seed(3, deterministic=True):
        assert os.environ[CUBLAS] == ":16:8"
        assert not torch.is_deterministic_algorithms_warn_only_enabled()
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.is_deterministic_algorithms_warn_only_enabled()
    monkeypatch.setenv(CUBLAS, ":0:0")  # not a deterministic setting: replaced, then put back
    with ar.manual_seed(3, deterministic=True):
        assert os.environ[CUBLAS] == ":4096:8"
    assert os.environ[CUBLAS] == ":0:0"


def test_without_deterministic_the_flags_are_never_touched():
    torch.backends.cudnn.benchmark = False
    with ar.manual_seed(3) as state:
        assert not state.deterministic
        torch.backends.cudnn.benchmark = True  # the user's own change inside the block
    assert torch.backends.cudnn.benchmark is True
    assert CUBLAS not in os.environ


@pytest.mark.parametrize("seed, error, words", [
    (-1, ValueError, "got -1"),
    (2**64, ValueError, f"got {2**64}"),
    (True, TypeError, "the bool True"),
    (1.5, TypeError, "got 1.5"),
    ("7", TypeError, "got '7'"),
    (None, TypeError, "got None"),
])
def test_bad_seeds_are_refused_before_anything_changes(seed, error, words):
    before = (random.getstate(), ar.default_generator().state, manual.root_seed())
    with pytest.raises(error, match=words.replace("*", r"\*")):
        ar.manual_seed(seed)
    assert (random.getstate(), ar.default_generator().state, manual.root_seed()) == before


def test_deterministic_must_be_a_bool():
    with pytest.raises(TypeError, match="deterministic must be a bool, got 'yes'"):
        ar.manual_seed(1, deterministic="yes")


def test_a_failure_midway_leaves_everything_as_it_was(monkeypatch):
    expected = untouched_reference()

    def broken(seed):
        raise RuntimeError("device lost")
    monkeypatch.setattr(torch, "manual_seed", broken)
    with pytest.raises(RuntimeError, match="device lost"):
        ar.manual_seed(8, deterministic=True)
    monkeypatch.undo()
    assert not torch.are_deterministic_algorithms_enabled()
    assert CUBLAS not in os.environ
    assert global_draws() == expected()


def test_without_torch_the_rest_is_seeded_and_torch_reported(monkeypatch):
    with monkeypatch.context() as m:  # undone before the global_state fixture uses torch
        m.setitem(sys.modules, "torch", None)  # what `import torch` sees when it is absent
        with ar.manual_seed(21) as state:
            assert state.seeded == ("ascend_rand", "random", "numpy")
            assert "not importable" in state.skipped["torch"]
            py = random.Random(21)
            assert [random.random() for _ in range(2)] == [py.random() for _ in range(2)]
            assert (np.random.random_sample(2).tolist()
                    == np.random.RandomState(21).random_sample(2).tolist())
        with pytest.raises(RuntimeError, match="deterministic=True.*torch"):
            ar.manual_seed(21, deterministic=True)


class FakeDevice:
    """A torch device module as torch_npu registers it (torch.npu), on a machine without NPUs."""

    def __init__(self, bad_fork=False):
        self.states = [torch.tensor([1, 2], dtype=torch.uint8),
                       torch.tensor([3], dtype=torch.uint8)]
        self.calls = []
        self.bad_fork = bad_fork

    def is_available(self):
        return True

    def _is_in_bad_fork(self):
        return self.bad_fork

    def get_rng_state_all(self):
        return [s.clone() for s in self.states]

    def set_rng_state_all(self, states):
        self.calls.append(("set", [s.tolist() for s in states]))
        self.states = list(states)

    def manual_seed_all(self, seed):
        self.calls.append(("seed", seed))
        self.states = [torch.tensor([seed % 256], dtype=torch.uint8)] * 2


def test_npu_generators_are_seeded_and_restored(monkeypatch):
    npu = FakeDevice()
    monkeypatch.setitem(sys.modules, "torch_npu", types.ModuleType("torch_npu"))
    monkeypatch.setattr(torch, "npu", npu, raising=False)
    state = ar.manual_seed(300)
    assert "torch.npu" in state.seeded and "torch.npu" not in state.skipped
    assert npu.calls == [("seed", 300)]
    state.restore()
    assert npu.calls[-1] == ("set", [[1, 2], [3]])
    # a forked child of a process that started the NPU must not touch it
    monkeypatch.setattr(torch, "npu", FakeDevice(bad_fork=True), raising=False)
    with ar.manual_seed(300) as state:
        assert "forked" in state.skipped["torch.npu"]
        assert torch.npu.calls == []


def test_default_generator_starts_from_os_entropy_without_importing_torch():
    code = ("import sys, ascend_rand as ar; g = ar.default_generator(); "
            "assert g is ar.default_generator() and 'torch' not in sys.modules; "
            "print(g.state['seed'], g.state['offset'])")
    seeds = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        seed, offset = map(int, out.stdout.split())
        assert offset == 0
        seeds.append(seed)
    assert seeds[0] != seeds[1]  # 64 bits of entropy each: equal once in 2**64


def test_seed_state_reports_what_it_did():
    with ar.manual_seed(4) as state:
        assert state.seed == 4
        for name in ("torch.cuda", "torch.npu"):  # none on this machine, or seeded
            assert (name in state.seeded) != (name in state.skipped)
        assert "SeedState(seed=4" in repr(state)
