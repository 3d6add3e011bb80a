"""examples/train_mlp.py: three trainings (1 thread, 2 threads, resumed) give the same weights.

The example runs in a subprocess, as a user runs it (its MKL setting must come
before torch is imported).  The digests it prints are recomputed here from the
weights it saves, and compared across runs and against another seed.
"""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ascend_rand

torch = pytest.importorskip("torch")
if not torch.backends.mkl.is_available():
    # The example's thread-count claim rests on MKL's strict reproducibility mode.
    pytest.skip("torch is built without MKL", allow_module_level=True)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_mlp.py"
STEPS = 40  # the example's --quick; half-way (20) falls inside an epoch of 16 steps
SEED = 20240605
OTHER_SEED = 7


def run_example(tmp_dir, *args):
    """Run the example with --json; returns (parsed JSON, directory of saved weights)."""
    env = dict(os.environ)
    # The subprocess imports the same ascend_rand as this test process.
    package_root = str(Path(ascend_rand.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    env.pop("MKL_CBWR", None)  # what a user gets: the example's own setting
    weights = Path(tmp_dir) / "weights"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--quick", "--json", "--save-weights", str(weights), *args],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout), weights


def sha256_of(npz_path, order):
    """The digest the example documents: float32 little-endian bytes of each parameter, in order."""
    with np.load(npz_path) as arrays:
        assert sorted(arrays.files) == sorted(order)
        h = hashlib.sha256()
        for name in order:
            assert arrays[name].dtype == np.float32
            h.update(arrays[name].astype("<f4").tobytes())
        return h.hexdigest(), {name: arrays[name].copy() for name in order}


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    return run_example(tmp_path_factory.mktemp("train"), "--seed", str(SEED))


def test_the_three_runs_are_what_they_claim(three_runs):
    out, _ = three_runs
    assert out["steps"] == STEPS and out["half"] == STEPS // 2
    runs = {r["name"]: r for r in out["runs"]}
    assert list(runs) == ["1-thread", "2-threads", "resumed"]
    # Thread counts while training, read back from torch and ascend_rand.
    assert [r["threads"] for r in out["runs"]] == [[1], [2], [2, 1]]
    assert [r["ascend_rand_threads"] for r in out["runs"]] == [[1], [2], [2, 1]]
    # The resumed run trained the second half only, from the checkpoint.
    assert runs["1-thread"]["steps_run"] == [STEPS]
    assert runs["2-threads"]["steps_run"] == [STEPS]
    assert runs["resumed"]["steps_run"] == [STEPS // 2, STEPS - STEPS // 2]
    assert out["mkl_cbwr"] == "AUTO,STRICT" and out["mkl"] is True


def test_digests_are_of_the_trained_weights(three_runs):
    out, weights = three_runs
    for r in out["runs"]:
        digest, _ = sha256_of(weights / f"{r['name']}.npz", out["param_order"])
        assert digest == r["sha256"], r["name"]
        # Training moved the weights away from their initial values and lowered the loss.
        assert r["init_sha256"] != r["sha256"]
        assert r["loss"]["end"] < r["loss"]["start"]


def test_all_three_runs_bit_identical(three_runs):
    out, weights = three_runs
    assert out["all_equal"] is True
    assert len({r["sha256"] for r in out["runs"]}) == 1
    assert len({r["init_sha256"] for r in out["runs"]}) == 1
    arrays = [sha256_of(weights / f"{r['name']}.npz", out["param_order"])[1]
              for r in out["runs"]]
    for other in arrays[1:]:
        for name in out["param_order"]:
            # As bit patterns: equal values with different signs of zero would not pass.
            assert np.array_equal(arrays[0][name].view(np.uint32), other[name].view(np.uint32)), name
    # The losses too, including the resumed run's first step after the restart.
    losses = [r["loss"] for r in out["runs"]]
    assert all(lo == losses[0] for lo in losses[1:])
    assert len({r["accuracy"] for r in out["runs"]}) == 1


def test_another_seed_gives_other_weights(three_runs, tmp_path):
    out, _ = three_runs
    other, _ = run_example(tmp_path, "--seed", str(OTHER_SEED), "--runs", "1-thread")
    assert [r["name"] for r in other["runs"]] == ["1-thread"]
    assert other["runs"][0]["init_sha256"] != out["runs"][0]["init_sha256"]
    assert other["runs"][0]["sha256"] != out["runs"][0]["sha256"]


# -- in-process: the example's dropout against ascend_rand.apply_mask -----------------------

@pytest.fixture(scope="module")
def example_module():
    before = os.environ.get("MKL_CBWR")
    spec = importlib.util.spec_from_file_location("train_mlp_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:  # the example sets MKL_CBWR for its own process; keep this one's as it was
        if before is None:
            os.environ.pop("MKL_CBWR", None)
        else:
            os.environ["MKL_CBWR"] = before
    return module


def test_dropout_is_ascend_do_mask(example_module):
    module = example_module
    p = 0.3
    x = ascend_rand.Generator(11).normal(size=(8, 300), dtype="float32")
    h = torch.from_numpy(x.copy()).requires_grad_(True)
    got = module.dropout(h, ascend_rand.Generator(5), p)
    mask = ascend_rand.Generator(5).dropout_mask(x.size, p)  # the same draw, made again
    expected = ascend_rand.apply_mask(x, mask, p)
    # Equal values; a dropped negative element is -0 in torch's product and +0 in
    # DropOutDoMask, which only the sign of zero tells apart.
    np.testing.assert_array_equal(got.detach().numpy(), expected)
    keep = np.unpackbits(mask, count=x.size, bitorder="little").reshape(x.shape).astype(bool)
    assert 0.6 < keep.mean() < 0.8
    # The gradient flows through the kept elements only, scaled by fl32(1 / (1 - p)).
    got.sum().backward()
    scale = np.float32(1.0 / (1.0 - p))
    np.testing.assert_array_equal(h.grad.numpy(), np.where(keep, scale, np.float32(0)))


def test_bad_arguments_refused(example_module):
    module = example_module
    with pytest.raises(ValueError, match="steps must be >= 2"):
        module.experiment(SEED, 1)
    with pytest.raises(ValueError, match="unknown runs"):
        module.experiment(SEED, 4, runs=("3 threads",))
    for bad in (["--seed", "-1"], ["--seed", str(2 ** 64)], ["--seed", "x"], ["--steps", "1"],
                ["--runs", "3-threads"]):
        with pytest.raises(SystemExit) as exc:
            module.main(bad)
        assert exc.value.code == 2, bad  # argparse's usage error, before any training
