"""Bit-reproducible MLP training on CPU with torch, every random number from ascend_rand.

The same small MLP is trained three times on synthetic data, and each run prints a
SHA-256 of its final weights; the three digests are equal:

1. uninterrupted, torch and ascend_rand on 1 thread;
2. uninterrupted, on 2 threads;
3. to half-way on 2 threads, checkpointed to disk (model, optimizer and the
   SeedManager's stream positions), then resumed on 1 thread in new objects, as
   a restarted process would, for the second half only.

Every random number comes from one ``ascend_rand.SeedManager(seed, mode="sync")``,
one named stream per use, so that drawing from one never shifts another:

- "data": the synthetic data set (cluster centres, cluster of each sample, noise);
- "init": the weights (He-scaled truncated normals; biases start at zero);
- "shuffle": the order of the samples in each epoch (a permutation per epoch);
- "dropout": the dropout masks, in the packed format of Ascend's
  DropOutGenMask, applied as in DropOutDoMask (``x * fl32(1 / (1 - p))`` where kept).

torch's own generator is never used: each run seeds it with a different value
and checks at the end that its state has not moved.

Why 1 and 2 threads give the same bits (checked at run time: the script exits 1
when the digests differ):

- ascend_rand's draws are the same at any thread count by design;
- the matrix products (``F.linear`` forward and backward) run in MKL's sgemm.
  MKL may split a product's inner dimension between threads, which changes the
  order of the sums; the weight gradients, sums over the 1024 samples of a
  batch for as few as 4 x 64 outputs, are such products.  With the strict mode
  off (``MKL_CBWR= python examples/train_mlp.py``) runs 1 and 2 differ on the
  machine this was written on (Xeon, AVX-512, MKL 2024.2).  MKL's *strict*
  conditional numerical reproducibility mode (``MKL_CBWR=AUTO,STRICT``) makes
  ?gemm bitwise reproducible whatever the thread count; MKL reads it when it
  loads, so this script sets it (unless already set) before importing torch;
- torch splits any other operation between threads only from 32768 elements
  (``at::internal::GRAIN_SIZE``); below that it runs on one thread exactly as
  with 1 thread set.  Above it here are only the (1024 x 64) hidden
  activations and their gradients: ReLU, the dropout product and their
  backward passes, correctly rounded elementwise operations whose value does
  not depend on which thread (or which vector or scalar loop) computes it, and
  the bias gradients, column sums that torch's reductions split by columns
  only, so that each column is still summed whole by one thread.  exp and log
  (the softmax of 1024 x 4 logits), the loss's mean and Adam's updates (at most
  4096 elements per parameter) stay below the grain.

Run:  python examples/train_mlp.py [--steps N | --quick] [--seed S] [--json]
"""

import os

# Both before torch is imported: MKL and OpenMP read them once, when they load.
# Strict CNR: MKL's products give the same bits at any thread count (see above).
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")
# Speed only, never results: idle OpenMP threads sleep instead of spinning, so that on
# a small or shared machine a spinning thread does not hold the core the other one
# needs (on 2 busy cores, run 2 took 10-30 s spinning and 0.2-2 s passive).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import ascend_rand  # noqa: E402

FULL_STEPS = 600
QUICK_STEPS = 40
# The three runs: (name, thread count per phase); phases other than the first
# start from the checkpoint the previous phase wrote.
RUNS = {
    "1-thread": (1,),
    "2-threads": (2,),
    "resumed": (2, 1),
}


@dataclasses.dataclass(frozen=True)
class Config:
    """The experiment: data set, model and optimiser sizes.

    Sizes are chosen so that 2 threads really run in run 2: hidden
    activations hold batch * hidden = 65536 elements, above torch's 32768
    grain; the data set's 524288 normals are above ascend_rand's per-thread
    minimum; and the weight gradients' long sums over the batch are what MKL
    splits between threads when its strict mode is off.
    """

    n_samples: int = 16384
    n_features: int = 32
    n_classes: int = 4
    clusters_per_class: int = 2
    centre_scale: float = 0.4  # centres' spread in units of the noise: classes overlap
    hidden: int = 64
    batch: int = 1024
    p_drop: float = 0.1
    lr: float = 1e-3

    @property
    def steps_per_epoch(self):
        return self.n_samples // self.batch


# -- data and model --------------------------------------------------------------------------

def make_dataset(gen, cfg):
    """A Gaussian-mixture classification set drawn from the Generator ``gen``.

    Each class owns ``clusters_per_class`` centres; a sample is a random
    centre plus unit normal noise, labelled with the centre's class, so the
    classes are not linearly separable.  Returns float32 inputs (n, features)
    and int64 labels (n,).
    """
    n_centres = cfg.n_classes * cfg.clusters_per_class
    centres = gen.normal(0.0, cfg.centre_scale, size=(n_centres, cfg.n_features), dtype="float32")
    cluster = gen.integers(0, n_centres, size=cfg.n_samples, dtype="int64")
    noise = gen.normal(0.0, 1.0, size=(cfg.n_samples, cfg.n_features), dtype="float32")
    x = centres[cluster] + noise  # elementwise: one rounding per element
    y = cluster // cfg.clusters_per_class
    return x, y


class MLP(torch.nn.Module):
    """features -> hidden -> hidden -> classes, ReLU, dropout after each hidden layer.

    Weights are truncated normals (2 sigma) with He's std sqrt(2 / fan_in) drawn
    from ``init_gen`` layer by layer; biases start at zero.  torch's own
    initialisers (and so its generator) are never called: the parameters are
    made from ascend_rand's arrays.
    """

    PARAMS = ("w1", "b1", "w2", "b2", "w3", "b3")  # the order the digest reads them in

    def __init__(self, cfg, init_gen):
        super().__init__()
        shapes = [(cfg.hidden, cfg.n_features), (cfg.hidden, cfg.hidden),
                  (cfg.n_classes, cfg.hidden)]
        for i, (fan_out, fan_in) in enumerate(shapes, start=1):
            w = init_gen.truncated_normal(0.0, math.sqrt(2.0 / fan_in), -2.0, 2.0,
                                          size=(fan_out, fan_in), dtype="float32")
            setattr(self, f"w{i}", torch.nn.Parameter(torch.from_numpy(w)))
            setattr(self, f"b{i}", torch.nn.Parameter(torch.zeros(fan_out)))
        self.p_drop = cfg.p_drop

    def forward(self, x, dropout_gen=None):
        """Logits; with ``dropout_gen`` (training) each hidden layer gets a fresh mask."""
        h = F.relu(F.linear(x, self.w1, self.b1))
        if dropout_gen is not None:
            h = dropout(h, dropout_gen, self.p_drop)
        h = F.relu(F.linear(h, self.w2, self.b2))
        if dropout_gen is not None:
            h = dropout(h, dropout_gen, self.p_drop)
        return F.linear(h, self.w3, self.b3)


def dropout(h, gen, p_drop):
    """Ascend-style dropout of the float32 tensor ``h`` with a mask from ``gen``.

    The mask is DropOutGenMask's packed keep mask (bit i keeps element i of
    ``h`` in row-major order); kept elements become fl32(h * fl32(1 / (1 - p))),
    as DropOutDoMask and ``ascend_rand.apply_mask`` compute them, dropped ones 0
    (-0 where h < 0, which only the sign of zero tells from DropOutDoMask's +0).
    The multiplication by a constant tensor lets autograd carry the same
    mask into the backward pass.
    """
    mask = gen.dropout_mask(h.numel(), p_drop)
    keep = ascend_rand.unpack_mask(mask, tuple(h.shape))  # bool, h's shape
    scale = np.float32(1.0 / (1.0 - p_drop))  # the division in float64, rounded once
    return h * torch.from_numpy(keep.astype(np.float32) * scale)


def weights_sha256(model):
    """SHA-256 (hex) of the parameters' float32 little-endian bytes, in ``MLP.PARAMS`` order."""
    h = hashlib.sha256()
    for name in MLP.PARAMS:
        h.update(getattr(model, name).detach().numpy().astype("<f4", copy=False).tobytes())
    return h.hexdigest()


# -- training --------------------------------------------------------------------------------

class Trainer:
    """Everything one training process holds: seeds, data, model, optimiser, position.

    A new Trainer is what a fresh process builds: a new SeedManager for
    ``seed``, the data set regenerated from its "data" stream, a freshly
    initialised model and a new Adam.  ``load`` then moves it to a checkpoint.
    """

    def __init__(self, cfg, seed):
        self.cfg = cfg
        self.seeds = ascend_rand.SeedManager(seed, mode="sync")
        # Data and init are drawn before any checkpoint is loaded: they must come
        # from the streams' starts, and loading moves the streams past them.
        x, y = make_dataset(self.seeds.generator("data"), cfg)
        self.x, self.y = torch.from_numpy(x), torch.from_numpy(y)
        self.model = MLP(cfg, self.seeds.generator("init"))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=cfg.lr, foreach=False)
        self.step = 0
        self.order = None  # this epoch's sample order (a permutation of the data set)
        self.losses = {}  # step -> training loss of that step's batch

    def train_until(self, stop):
        """Run steps ``self.step .. stop - 1``; returns how many ran."""
        cfg = self.cfg
        shuffle, drop = self.seeds.generator("shuffle"), self.seeds.generator("dropout")
        self.model.train()
        start = self.step
        while self.step < stop:
            pos = self.step % cfg.steps_per_epoch
            if pos == 0:
                self.order = torch.from_numpy(shuffle.permutation(cfg.n_samples))
            idx = self.order[pos * cfg.batch:(pos + 1) * cfg.batch]
            loss = F.cross_entropy(self.model(self.x[idx], drop), self.y[idx])
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            self.losses[self.step] = loss.item()
            self.step += 1
        return self.step - start

    def accuracy(self):
        """Fraction of the training set classified right (no dropout)."""
        self.model.eval()
        with torch.no_grad():
            return (self.model(self.x).argmax(1) == self.y).double().mean().item()

    def save(self, path):
        """Checkpoint: weights, Adam's moments, the streams' exact positions, the epoch order."""
        torch.save({"step": self.step, "model": self.model.state_dict(),
                    "optimizer": self.opt.state_dict(), "seeds": self.seeds.state_dict(),
                    "order": self.order, "losses": self.losses}, path)

    def load(self, path):
        """Continue from the checkpoint ``save`` wrote: state, stream positions and step."""
        ckpt = torch.load(path, weights_only=True)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["optimizer"])
        self.seeds.load_state_dict(ckpt["seeds"])
        # The epoch in progress keeps its order: its permutation was drawn before the save.
        self.order = ckpt["order"]
        self.step = ckpt["step"]
        self.losses = dict(ckpt["losses"])


def set_threads(n):
    """Threads for torch (intra-op: OpenMP and MKL) and for ascend_rand's draws."""
    torch.set_num_threads(n)
    ascend_rand.set_num_threads(n)


def run(name, phases, cfg, seed, steps, workdir, torch_seed):
    """One training run from scratch; ``phases`` lists the thread count of each phase.

    With two phases, the first trains to ``steps // 2`` and saves a checkpoint
    under ``workdir``; the second builds a new Trainer, loads it and trains to
    ``steps``.  Returns a dict of what happened.
    """
    # A different torch seed per run: if anything drew from torch's generator
    # the digests would differ, and the state check below would fail.
    torch.manual_seed(torch_seed)
    torch_rng = torch.get_rng_state()
    half = steps // 2
    stops = [steps] if len(phases) == 1 else [half, steps]
    steps_run, threads_seen, rand_threads = [], [], []
    trainer, init_sha256 = None, None
    checkpoint = Path(workdir) / f"{name}.pt"
    for i, (threads, stop) in enumerate(zip(phases, stops)):
        set_threads(threads)
        trainer = Trainer(cfg, seed)  # a fresh process's objects
        if i == 0:
            init_sha256 = weights_sha256(trainer.model)
        else:
            trainer.load(checkpoint)
        steps_run.append(trainer.train_until(stop))
        # Read back, not the request: what torch and ascend_rand were set to while training.
        threads_seen.append(torch.get_num_threads())
        rand_threads.append(ascend_rand.get_num_threads())
        if stop < steps:
            trainer.save(checkpoint)
    if not torch.equal(torch.get_rng_state(), torch_rng):
        raise RuntimeError(f"run {name!r} drew from torch's generator")
    losses = trainer.losses
    return {
        "name": name,
        "threads": threads_seen,
        "ascend_rand_threads": rand_threads,
        "steps_run": steps_run,
        "loss": {"start": losses[0], "half": losses[half], "end": losses[steps - 1]},
        "accuracy": trainer.accuracy(),
        "init_sha256": init_sha256,
        "sha256": weights_sha256(trainer.model),
        "weights": {n: getattr(trainer.model, n).detach().numpy().copy() for n in MLP.PARAMS},
    }


def experiment(seed, steps, runs=tuple(RUNS), cfg=Config()):
    """Train every run in ``runs`` (names of RUNS) and return the results."""
    if steps < 2:
        raise ValueError(f"steps must be >= 2 (the resumed run saves at steps // 2), got {steps}")
    unknown = [r for r in runs if r not in RUNS]
    if unknown:
        raise ValueError(f"unknown runs {unknown}; choose from {list(RUNS)}")
    torch.use_deterministic_algorithms(True)  # torch raises if an op has no deterministic kernel
    results = []
    with tempfile.TemporaryDirectory(prefix="train_mlp_") as workdir:
        for torch_seed, name in enumerate(runs, start=1):
            t0 = time.perf_counter()
            r = run(name, RUNS[name], cfg, seed, steps, workdir, torch_seed)
            r["seconds"] = time.perf_counter() - t0
            results.append(r)
    return results


# -- command line ----------------------------------------------------------------------------

def table(results, steps):
    """The runs as a text table: threads, steps per phase, loss at start/half/end, digest."""
    head = f"{'run':<10} {'threads':<8} {'steps':<9} {'loss@0':>8} {'loss@' + str(steps // 2):>8} " \
           f"{'loss@' + str(steps - 1):>8} {'acc':>6} {'time':>6}  sha256[:16]"
    lines = [head, "-" * len(head)]
    for r in results:
        lo = r["loss"]
        lines.append(f"{r['name']:<10} {'->'.join(map(str, r['threads'])):<8} "
                     f"{'+'.join(map(str, r['steps_run'])):<9} {lo['start']:>8.4f} "
                     f"{lo['half']:>8.4f} {lo['end']:>8.4f} {r['accuracy']:>6.3f} "
                     f"{r['seconds']:>5.1f}s  {r['sha256'][:16]}")
    return "\n".join(lines)


def uint64(text):
    """argparse type: an integer in [0, 2**64), as SeedManager takes for a root seed."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value < 2 ** 64:
        raise argparse.ArgumentTypeError(f"must be in [0, 2**64), got {value}")
    return value


def main(argv=None):
    """Parse arguments, train, print the table (or JSON); exit status 1 if digests differ."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=uint64, default=20240605,
                        help="SeedManager root seed, an integer in [0, 2**64)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--steps", type=int, default=FULL_STEPS, help="training steps per run")
    group.add_argument("--quick", action="store_const", dest="steps", const=QUICK_STEPS,
                       help=f"short version: {QUICK_STEPS} steps")
    parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS),
                        metavar="RUN", help=f"which runs, of {list(RUNS)} (default: all)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--save-weights", metavar="DIR",
                        help="write each run's final weights to DIR/<run>.npz")
    args = parser.parse_args(argv)
    if args.steps < 2:  # checked here too for a usage message instead of a traceback
        parser.error(f"--steps must be >= 2, got {args.steps}")

    results = experiment(args.seed, args.steps, tuple(args.runs))
    if args.save_weights:
        out = Path(args.save_weights)
        out.mkdir(parents=True, exist_ok=True)
        for r in results:
            np.savez(out / f"{r['name']}.npz", **r["weights"])
    same = len({r["sha256"] for r in results}) == 1
    if args.json:
        print(json.dumps({
            "seed": args.seed, "steps": args.steps, "half": args.steps // 2,
            "param_order": list(MLP.PARAMS), "mkl_cbwr": os.environ.get("MKL_CBWR"),
            "mkl": torch.backends.mkl.is_available(), "torch": torch.__version__,
            "all_equal": same,
            "runs": [{k: v for k, v in r.items() if k != "weights"} for r in results],
        }, indent=1))
    else:
        print(f"seed {args.seed}, {args.steps} steps, checkpoint at step {args.steps // 2}, "
              f"MKL_CBWR={os.environ.get('MKL_CBWR')}")
        print(table(results, args.steps))
        print(f"final weights sha256: {results[0]['sha256']}")
        print("all runs bit-identical" if same else "RUNS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
