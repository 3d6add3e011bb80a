"""examples/ddp_dropout.py: a real 2-rank DDP run (gloo, CPU) resumes bit for bit (issue 24, item 4).

The example is run as a user runs it, in subprocesses: it launches its two
ranks itself.  Three ways in sync mode, all bit-identical in every rank's
per-step losses, dropout masks and final weights:

- straight through STEPS steps with 2 DataLoader workers;
- stopped after step STOP (each rank checkpoints model, optimizer, its
  SeedManager and its sampler) and resumed by a second invocation, in fresh
  processes;
- straight through with the ranks loading their own batches (0 workers).

Then the modes: sync gives both ranks the same masks, independent different
ones at every step.  Every run must end by itself within a minute.
"""

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import ascend_rand
import ascend_rand.data

pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ddp_dropout.py"
STEPS = 12  # 2 epochs of 6 steps per rank
STOP = 7    # mid-way through the second epoch: the sampler resumes inside it
SEED = 20240605
RUN_SECONDS = 60
# gloo's collective timeout in the example: a rank left waiting on a dead peer would
# take this long; the launcher must stop it well before.
GLOO_TIMEOUT = 30


def run_example(tmp_path, *args, expect=0):
    """Run the example; (its record when it wrote one, the process, seconds it took)."""
    env = dict(os.environ)
    package_root = str(Path(ascend_rand.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    # The launcher's job folder (rendezvous file, ranks' records) goes here, so that the
    # ranks' command lines name it (see test_a_dying_rank_stops_the_run_at_once).
    jobs = tmp_path / "jobs"
    jobs.mkdir(exist_ok=True)
    env["TMPDIR"] = str(jobs)
    out = tmp_path / "record.json"
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(EXAMPLE), "--out", str(out),
                           "--timeout", str(RUN_SECONDS), *args],
                          capture_output=True, text=True, env=env, timeout=RUN_SECONDS + 30)
    seconds = time.monotonic() - t0
    assert proc.returncode == expect, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    record = json.loads(out.read_text()) if out.exists() else None
    return record, proc, seconds


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every run of this file, each a record as the example writes it."""
    def run(name, *args):
        record, _, seconds = run_example(tmp_path_factory.mktemp(name), *args)
        assert seconds < RUN_SECONDS, f"run {name} took {seconds:.0f} s"
        return record

    checkpoint = tmp_path_factory.mktemp("checkpoint")
    return {
        "straight": run("straight", "--steps", str(STEPS)),
        "first": run("first", "--steps", str(STEPS), "--stop-at", str(STOP),
                     "--checkpoint", str(checkpoint)),
        "resumed": run("resumed", "--steps", str(STEPS), "--resume", str(checkpoint)),
        "no_workers": run("no_workers", "--steps", str(STEPS), "--workers", "0"),
        "independent": run("independent", "--steps", str(STEPS), "--mode", "independent"),
        "checkpoint": checkpoint,
    }


def _rank(record, r):
    rank = record["ranks"][r]
    assert rank["rank"] == r
    return rank


def _same_bits(a, b, what):
    """Two ranks' records agree bit for bit in losses, masks, weights and streams."""
    assert a["loss_bits"] == b["loss_bits"], what
    assert a["masks"] == b["masks"], what
    assert list(a["weights"]) == list(b["weights"])
    for name in a["weights"]:
        assert a["weights"][name] == b["weights"][name], f"{what}: {name}"
    assert a["weights_sha256"] == b["weights_sha256"], what
    assert a["dropout_state"] == b["dropout_state"], what
    assert a["sampler"] == b["sampler"], what


# -- what a straight run records ------------------------------------------------------------

def test_a_straight_run_trains_every_step_on_both_ranks(runs):
    record = runs["straight"]
    assert (record["mode"], record["workers"], record["start"], record["stop"]) == ("sync", 2, 0, STEPS)
    r0, r1 = _rank(record, 0), _rank(record, 1)
    for rank in (r0, r1):
        assert (rank["start"], rank["stop"]) == (0, STEPS)
        assert len(rank["losses"]) == len(rank["loss_bits"]) == len(rank["masks"]) == STEPS
        # The recorded bits are the float32 of the recorded loss.
        assert (np.array(rank["loss_bits"], dtype=np.uint32).view(np.float32).tolist()
                == rank["losses"])
        # One mask draw a step, and 2 epochs of the sampler, on this rank's shard.
        assert rank["dropout_state"]["offset"] == STEPS
        assert (rank["sampler"]["epoch"], rank["sampler"]["position"]) == (1, 24)
        assert rank["consistency"] == {"mode": "sync", "world_size": 2, "names": ["dropout"],
                                       "bytes_per_rank": 24}
    # DDP keeps the ranks' weights in step; their batches, and so losses, are their own.
    assert r0["weights"] == r1["weights"]
    assert r0["loss_bits"] != r1["loss_bits"]
    # Training moved the loss: the last steps' mean is below the first steps'.
    for rank in (r0, r1):
        assert np.mean(rank["losses"][-3:]) < np.mean(rank["losses"][:3])


def test_the_workers_were_seeded_by_ascend_rand(runs):
    # Worker w of rank r: torch (and every other source) seeded with derive(root, r, "worker", w).
    for r in range(2):
        seen = _rank(runs["straight"], r)["workers_seen"]
        expected = {str(w): int(np.uint64(ascend_rand.data.worker_key(SEED, r, w)).view(np.int64))
                    for w in range(2)}
        assert seen == expected
        assert _rank(runs["no_workers"], r)["workers_seen"] == {"-1": 0}  # loaded by the rank


# -- the three ways agree bit for bit --------------------------------------------------------

def test_stopped_and_resumed_in_fresh_processes_is_bit_identical(runs):
    first, resumed, straight = runs["first"], runs["resumed"], runs["straight"]
    config = json.loads((runs["checkpoint"] / "config.json").read_text())
    assert config["step"] == STOP and config["mode"] == "sync" and config["seed"] == SEED
    for r in range(2):
        a, b, s = _rank(first, r), _rank(resumed, r), _rank(straight, r)
        # The first invocation ran steps 0..STOP-1 only, the second STOP..STEPS-1 only.
        assert (a["start"], a["stop"], len(a["loss_bits"])) == (0, STOP, STOP)
        assert (b["start"], b["stop"]) == (STOP, STEPS)
        assert a["loss_bits"] == s["loss_bits"][:STOP] and a["masks"] == s["masks"][:STOP]
        assert a["dropout_state"]["offset"] == STOP
        # Stopped inside epoch 1, one batch of 4 into it.
        assert (a["sampler"]["epoch"], a["sampler"]["position"]) == (1, 4)
        # The resumed record carries the first steps from the checkpoint and its own after.
        _same_bits(b, s, f"rank {r}, resumed vs straight")


def test_another_worker_count_is_bit_identical(runs):
    assert runs["no_workers"]["workers"] == 0
    for r in range(2):
        _same_bits(_rank(runs["no_workers"], r), _rank(runs["straight"], r),
                   f"rank {r}, 0 vs 2 workers")


# -- the modes --------------------------------------------------------------------------------

def test_sync_mode_gives_both_ranks_the_same_masks(runs):
    for name in ("straight", "resumed", "no_workers"):
        r0, r1 = _rank(runs[name], 0), _rank(runs[name], 1)
        assert r0["masks"] == r1["masks"], name
        assert r0["dropout_state"] == r1["dropout_state"], name
        assert len(set(r0["masks"])) == STEPS  # a fresh mask every step


def test_independent_mode_gives_each_rank_its_own_masks(runs):
    record = runs["independent"]
    r0, r1 = _rank(record, 0), _rank(record, 1)
    assert record["mode"] == "independent"
    assert all(m0 != m1 for m0, m1 in zip(r0["masks"], r1["masks"], strict=True))
    assert r0["dropout_state"]["seed"] == ascend_rand.derive(SEED, 0, "dropout")
    assert r1["dropout_state"]["seed"] == ascend_rand.derive(SEED, 1, "dropout")
    for rank in (r0, r1):
        assert rank["consistency"]["mode"] == "independent"
    # The same data and initial weights as the sync run, other masks: other weights, still
    # in step across the ranks.
    assert r0["weights"] == r1["weights"]
    assert r0["weights"] != _rank(runs["straight"], 0)["weights"]
    assert r0["masks"] != _rank(runs["straight"], 0)["masks"]


# -- a run that cannot hang -------------------------------------------------------------------

def _processes_naming(text):
    """Pids of live processes whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in cmdline:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux's /proc")
def test_a_dying_rank_stops_the_run_at_once(tmp_path):
    # Rank 1 exits in the middle of step 2; rank 0 would wait in the gradients' all-reduce.
    _, proc, seconds = run_example(tmp_path, "--steps", str(STEPS), "--fail", "1:2", expect=1)
    assert "ddp_dropout: rank 1 exited with status 3" in proc.stderr
    assert seconds < GLOO_TIMEOUT, f"the launcher waited {seconds:.0f} s on the dead rank"
    # Nothing is left behind: neither rank 0 nor either rank's DataLoader workers.
    assert _processes_naming(str(tmp_path / "jobs")) == []
    assert not (tmp_path / "record.json").exists()


# -- arguments refused before any rank starts -------------------------------------------------

@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("ddp_dropout_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("args, message", [
    (["--steps", "0"], "--steps must be >= 1, got 0"),
    (["--workers", "-1"], "--workers must be >= 0, got -1"),
    (["--stop-at", "3"], "--stop-at and --checkpoint go together"),
    (["--stop-at", "12", "--checkpoint", "c"], "--stop-at must be in [1, --steps=12), got 12"),
    (["--seed", "-1"], "must be in [0, 2**64), got -1"),
    (["--fail", "2:1"], "rank must be in [0, 2) and step >= 0, got '2:1'"),
    (["--mode", "both"], "invalid choice: 'both'"),
    (["--resume", "/nonexistent/ckpt"], "no checkpoint there"),
])
def test_bad_arguments_are_refused_by_name(example, capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        example.main(args)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_a_checkpoint_of_another_run_is_refused(example, runs, capsys):
    checkpoint = str(runs["checkpoint"])
    for args, message in [
        (["--mode", "independent"], "mode='sync' there, 'independent' here"),
        (["--seed", "7"], f"seed={SEED} there, 7 here"),
        (["--steps", str(STOP)], f"at step {STOP}, --steps {STOP} has nothing left"),
        (["--stop-at", "5", "--checkpoint", "elsewhere"], "--stop-at 5 is not after"),
    ]:
        with pytest.raises(SystemExit) as exc:
            example.main(["--resume", checkpoint, *args])
        assert exc.value.code == 2
        assert message in capsys.readouterr().err, args
