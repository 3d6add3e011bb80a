"""DistributedDataParallel with ascend_rand dropout on 2 gloo ranks, resumed bit for bit.

A small regression model, Linear -> ReLU -> ascend_rand.torch.Dropout ->
Linear, is trained with torch's DistributedDataParallel over gloo on two CPU
ranks of this machine.  Every random number comes from ascend_rand:

- ``ascend_rand.distributed.init_seeds(seed, mode)`` installs each rank's
  SeedManager; its "dropout" stream feeds the Dropout layer.  In "sync" mode
  both ranks draw the same masks, in "independent" mode each rank its own
  (docs/seeding.md, "Modes");
- a ``SeedManager(seed, mode="sync")`` of what every rank must agree on: the
  synthetic data set ("data") and the initial weights ("init", through
  ``ascend_rand.torch.init``), the same on both ranks in either mode;
- ``ascend_rand.data.DeterministicSampler`` orders and shards each epoch,
  ``ascend_rand.data.worker_init_fn`` seeds the DataLoader workers, and each
  sample's augmentation noise comes from ``ascend_rand.data.sample_generator``,
  keyed by sample and epoch, so that the batches do not depend on the number
  of workers.

The run can stop after step k (``--stop-at k``), each rank writing a
checkpoint of the model, the optimizer, its SeedManager's streams and its
sampler's position, and a later invocation resumes it in fresh processes
(``--resume DIR``).  Straight through, stopped and resumed, or with another
number of DataLoader workers, the per-step losses, the dropout masks and the
final weights are the same bits (tests/seeding/test_ddp_example.py checks it).

This script is its own launcher: it starts the two ranks as subprocesses of
itself (rendezvous through a file store in a fresh temporary folder, so no
port is chosen and none can be taken), waits for them with a deadline, and
stops every rank at once when one fails or the deadline passes.  Each rank
also exits by itself when the deadline passes or the launcher goes away.

Run:  python examples/ddp_dropout.py [--steps N] [--mode sync|independent]
          [--workers W] [--stop-at K --checkpoint DIR | --resume DIR] [--out FILE]
"""

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

WORLD = 2
# The experiment: tiny, so that process start-up (importing torch) is most of a run.
CONFIG = {
    "n_samples": 48,    # 24 per rank
    "n_features": 8,
    "hidden": 32,
    "batch": 4,         # per rank: 6 steps an epoch
    "p_drop": 0.25,
    "lr": 0.01,
    "noise": 0.1,       # the per-sample augmentation noise's standard deviation
}
PARAMS = ("0.weight", "0.bias", "3.weight", "3.bias")  # the model's state_dict order
FAILED_RANK_STATUS = 3  # a rank's exit status under --fail


# -- the launcher (no torch imported here) ---------------------------------------------------

class RunFailed(RuntimeError):
    """A rank failed or the deadline passed; the message says which and shows its stderr."""


def _stop_all(procs):
    """Kill each rank's whole process group: the rank and its DataLoader workers, which
    outlive a rank that died (its group lives on while they do)."""
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # the group is gone
            pass
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            pass


def _tail(path, lines=25):
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return "(no stderr)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty stderr)"


def launch(job, timeout):
    """Start WORLD ranks on ``job`` (a folder holding job.json), wait for all of them.

    Every rank runs in its own session, so that stopping it also stops its
    DataLoader workers.  The first rank to exit with an error stops the others
    at once (a rank whose peer died would otherwise wait in a collective until
    gloo's timeout); so does the deadline.  Returns each rank's record.
    """
    env = dict(os.environ)
    # One thread per rank: two ranks share this machine's cores, and every product
    # is far below the sizes torch splits between threads anyway.
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    procs, errs = [], []
    try:
        for rank in range(WORLD):
            err = Path(job) / f"rank{rank}.stderr"
            errs.append(err)
            with open(err, "wb") as f:
                procs.append(subprocess.Popen(
                    [sys.executable, os.path.abspath(__file__), "--rank", str(rank),
                     "--job", str(job)],
                    stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=env,
                    start_new_session=True))
        deadline = time.monotonic() + timeout
        while True:
            codes = [p.poll() for p in procs]
            failed = [(r, c) for r, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                _stop_all(procs)
                raise RunFailed("; ".join(f"rank {r} exited with status {c}:\n{_tail(errs[r])}"
                                          for r, c in failed))
            if all(c == 0 for c in codes):
                break
            if time.monotonic() > deadline:
                running = [r for r, c in enumerate(codes) if c is None]
                _stop_all(procs)
                raise RunFailed(f"ranks {running} were still running after {timeout} s; "
                                "stopped\n" + "\n".join(f"rank {r}:\n{_tail(errs[r])}"
                                                         for r in running))
            time.sleep(0.05)
    finally:
        _stop_all(procs)
    return [json.loads((Path(job) / f"rank{r}.json").read_text()) for r in range(WORLD)]


def _checkpoint_config(folder):
    path = Path(folder) / "config.json"
    if not path.is_file():
        raise ValueError(f"--resume {folder}: no checkpoint there ({path} is missing)")
    return json.loads(path.read_text())


def check_resume(saved, seed, mode, steps):
    """Refuse a resume that cannot continue ``saved`` (a checkpoint's config.json)."""
    wanted = {"seed": seed, "mode": mode, "world_size": WORLD, **CONFIG}
    differ = [f"{k}={saved.get(k)!r} there, {v!r} here" for k, v in wanted.items()
              if saved.get(k) != v]
    if differ:
        raise ValueError("--resume: the checkpoint is of another run: " + "; ".join(differ))
    if not saved["step"] < steps:
        raise ValueError(f"--resume: the checkpoint is at step {saved['step']}, "
                         f"--steps {steps} has nothing left to run")


def uint64(text):
    """argparse type: an integer in [0, 2**64), as init_seeds takes for a root seed."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value < 2 ** 64:
        raise argparse.ArgumentTypeError(f"must be in [0, 2**64), got {value}")
    return value


def rank_and_step(text):
    """argparse type of --fail: RANK:STEP."""
    try:
        rank, step = (int(part) for part in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected RANK:STEP, got {text!r}") from None
    if not 0 <= rank < WORLD or step < 0:
        raise argparse.ArgumentTypeError(f"rank must be in [0, {WORLD}) and step >= 0, "
                                         f"got {text!r}")
    return rank, step


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=12, help="training steps in all (default 12)")
    parser.add_argument("--mode", choices=("sync", "independent"), default="sync",
                        help="init_seeds mode: the same dropout masks on both ranks, or "
                             "each rank its own (default sync)")
    parser.add_argument("--workers", type=int, default=2,
                        help="DataLoader workers per rank (default 2; 0: load in the rank)")
    parser.add_argument("--seed", type=uint64, default=20240605, help="the root seed")
    parser.add_argument("--stop-at", type=int, metavar="K",
                        help="stop after step K, writing a checkpoint to --checkpoint")
    parser.add_argument("--checkpoint", metavar="DIR", help="where --stop-at writes")
    parser.add_argument("--resume", metavar="DIR", help="continue from the checkpoint in DIR")
    parser.add_argument("--out", metavar="FILE", help="write the run's record (JSON) here")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds before every rank is stopped (default 60)")
    parser.add_argument("--fail", type=rank_and_step, metavar="RANK:STEP",
                        help=f"rank RANK exits with status {FAILED_RANK_STATUS} before step "
                             "STEP (to see the launcher stop the other rank at once)")
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # a rank's own invocation
    parser.add_argument("--job", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rank is not None:
        return parser, args
    if args.steps < 1:
        parser.error(f"--steps must be >= 1, got {args.steps}")
    if args.workers < 0:
        parser.error(f"--workers must be >= 0, got {args.workers}")
    if not args.timeout > 0:
        parser.error(f"--timeout must be > 0, got {args.timeout}")
    if (args.stop_at is None) != (args.checkpoint is None):
        parser.error("--stop-at and --checkpoint go together")
    if args.stop_at is not None and not 0 < args.stop_at < args.steps:
        parser.error(f"--stop-at must be in [1, --steps={args.steps}), got {args.stop_at}")
    if args.resume is not None and args.checkpoint is not None and (
            Path(args.resume).resolve() == Path(args.checkpoint).resolve()):
        parser.error("--checkpoint must be another folder than --resume")
    return parser, args


def main(argv=None):
    """Launch the two ranks, merge their records; exit status 1 if a rank failed."""
    parser, args = parse(argv)
    if args.rank is not None:
        code = rank_main(args.rank, Path(args.job))
        # The rank's work is done and its record written: leave without the interpreter's
        # teardown.  There, now and then (seen in two full test-suite runs on a 2-core
        # machine, never when the example ran alone), a rank aborted after its work: a
        # C++ std::thread of a library it loaded destroyed while still joinable
        # ("terminate called without an active exception", no Python frame left), which
        # the launcher would take for a failed rank.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    start = 0
    if args.resume is not None:
        try:
            saved = _checkpoint_config(args.resume)
            check_resume(saved, args.seed, args.mode, args.steps)
        except ValueError as err:
            parser.error(str(err))
        start = saved["step"]
        if args.stop_at is not None and not start < args.stop_at:
            parser.error(f"--stop-at {args.stop_at} is not after the checkpoint's step {start}")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ddp_dropout_") as job:
        spec = {"seed": args.seed, "mode": args.mode, "world_size": WORLD, "steps": args.steps,
                "workers": args.workers, "start": start, "stop": args.stop_at or args.steps,
                "checkpoint": args.checkpoint and os.path.abspath(args.checkpoint),
                "resume": args.resume and os.path.abspath(args.resume),
                "fail": args.fail, "timeout": args.timeout, "launcher_pid": os.getpid(),
                "rendezvous": "file://" + os.path.join(job, "store"), **CONFIG}
        (Path(job) / "job.json").write_text(json.dumps(spec))
        try:
            ranks = launch(job, args.timeout)
        except RunFailed as err:
            print(f"ddp_dropout: {err}", file=sys.stderr)
            return 1
    record = {"seed": args.seed, "mode": args.mode, "world_size": WORLD, "steps": args.steps,
              "workers": args.workers, "start": start, "stop": spec["stop"],
              "config": CONFIG, "params": list(PARAMS), "seconds": time.perf_counter() - t0,
              "ranks": ranks}
    if args.out:
        Path(args.out).write_text(json.dumps(record, indent=1))
    for r in ranks:
        print(f"rank {r['rank']}: steps {r['start']}..{r['stop'] - 1}, "
              f"loss {r['losses'][-1]:.6f}, weights sha256 {r['weights_sha256'][:16]}, "
              f"masks sha256 {hashlib.sha256(''.join(r['masks']).encode()).hexdigest()[:16]}")
    print(f"{args.mode} mode, {args.workers} workers: {record['seconds']:.1f} s"
          + (f", checkpoint at step {spec['stop']} in {args.checkpoint}" if args.checkpoint else ""))
    return 0


# -- one rank --------------------------------------------------------------------------------

def _watchdog(launcher_pid, seconds):
    """Exit this rank when the launcher is gone or the deadline has passed: a rank must
    never outlive its run, whatever happened to the launcher."""
    deadline = time.monotonic() + seconds

    def watch():
        while True:
            if os.getppid() != launcher_pid:
                os._exit(125)
            if time.monotonic() > deadline:
                os._exit(124)
            time.sleep(0.2)

    threading.Thread(target=watch, daemon=True).start()


def rank_main(rank, job):
    spec = json.loads((job / "job.json").read_text())
    _watchdog(spec["launcher_pid"], spec["timeout"] + 5)
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    import ascend_rand as ar

    # Speed only (the draws are the same bits at any thread count): two ranks share
    # the machine's cores.
    torch.set_num_threads(1)
    ar.set_num_threads(1)
    # A collective that waits on a dead peer fails after this long, if the launcher
    # has not stopped this rank before.
    dist.init_process_group("gloo", init_method=spec["rendezvous"], rank=rank,
                            world_size=spec["world_size"],
                            timeout=timedelta(seconds=min(30.0, spec["timeout"])))
    try:
        record = train(spec, rank)
    finally:
        dist.destroy_process_group()
    (job / f"rank{rank}.json").write_text(json.dumps(record))
    return 0


def build(spec):
    """The parts every rank builds the same way: data set, model, loader, optimizer.

    Imported here, in the rank: the launcher never imports torch.
    """
    import numpy as np
    import torch

    import ascend_rand as ar
    import ascend_rand.data as ardata
    import ascend_rand.distributed as ardist
    import ascend_rand.torch as art

    seeds = ardist.init_seeds(spec["seed"], mode=spec["mode"])  # a collective
    # What every rank must agree on comes from a sync manager in either mode: the data
    # set and the initial weights (DDP would broadcast rank 0's weights anyway; these
    # are equal by construction).  Drawn from the streams' starts, before any
    # checkpoint is loaded.
    shared = ar.SeedManager(spec["seed"], mode="sync")
    data = shared.generator("data")
    n, f = spec["n_samples"], spec["n_features"]
    x = data.normal(0.0, 1.0, size=(n, f), dtype="float32")
    w_true = data.normal(0.0, 1.0, size=(f,), dtype="float32")
    # (x @ w_true: a NumPy product, the same on every rank of this machine)
    y = np.maximum(x @ w_true, np.float32(0)) + data.normal(0.0, 0.1, size=n, dtype="float32")
    dataset = NoisyRegression(x, y, spec["noise"])

    model = torch.nn.Sequential(
        torch.nn.Linear(f, spec["hidden"]), torch.nn.ReLU(),
        art.Dropout(spec["p_drop"], generator=seeds.generator("dropout")),
        torch.nn.Linear(spec["hidden"], 1))
    init = shared.generator("init")
    with torch.no_grad():  # torch's own initial values are all overwritten
        art.init.kaiming_normal_(model[0].weight, nonlinearity="relu", generator=init)
        art.init.uniform_(model[0].bias, -0.1, 0.1, generator=init)
        art.init.xavier_uniform_(model[3].weight, generator=init)
        art.init.uniform_(model[3].bias, -0.1, 0.1, generator=init)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.Adam(ddp.parameters(), lr=spec["lr"])

    sampler = ardata.DeterministicSampler(dataset, root_seed=seeds.root_seed, rank=seeds.rank,
                                          world_size=seeds.world_size)
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=spec["batch"], sampler=sampler, num_workers=spec["workers"],
        # Worker w of rank r: derive(root, r, "worker", w), from init_seeds' manager.
        worker_init_fn=ardata.worker_init_fn if spec["workers"] else None)
    return seeds, model, ddp, optimizer, sampler, loader


class NoisyRegression:
    """A map-style data set of (x + noise, y, loaded_by), plain NumPy (the DataLoader
    collates it into tensors).

    The noise of sample i in epoch e comes from ``sample_generator(i)``, keyed
    derive(root, "sample", e, i): the same whichever worker (or the rank itself)
    loads it.  ``loaded_by`` is (worker id, that worker's torch seed as int64 bits),
    (-1, 0) in the rank itself: what ``worker_init_fn`` seeded it with.
    """

    def __init__(self, x, y, noise):
        self.x, self.y, self.noise = x, y, noise

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        import numpy as np
        import torch

        import ascend_rand.data as ardata

        g = ardata.sample_generator(index)  # index: a SampleIndex (its epoch and root)
        x = self.x[index] + g.normal(0.0, self.noise, size=self.x.shape[1], dtype="float32")
        info = torch.utils.data.get_worker_info()
        loaded_by = (-1, 0) if info is None else (
            info.id, int(np.uint64(torch.initial_seed()).view(np.int64)))
        return x, self.y[index], np.array(loaded_by, dtype=np.int64)


class MaskRecorder:
    """Forward hooks on an ``ascend_rand.torch.Dropout`` that record a SHA-256 of each
    mask it applies.

    Before the call the Generator's state is copied; after it the mask is drawn
    again from the copy, and the layer's output is checked against
    ``ascend_rand.apply_mask`` of that mask (docs/spec.md 4.7) and the Generator
    against one draw on: the digest is of the mask really applied.
    """

    def __init__(self, layer):
        self.masks = []
        self._before = None
        layer.register_forward_pre_hook(self.pre)
        layer.register_forward_hook(self.post)

    def pre(self, layer, args):
        import ascend_rand as ar

        self._before = ar.Generator(0)
        self._before.set_state(layer.generator.state)

    def post(self, layer, args, y):
        import ascend_rand as ar

        if not layer.training:
            return
        (x,) = args
        mask = self._before.dropout_mask(x.numel(), layer.p)
        if self._before.state != layer.generator.state:
            raise RuntimeError("Dropout drew more or less than one mask")
        expected = ar.apply_mask(x.detach().numpy(), mask, layer.p)
        if y.detach().numpy().tobytes() != expected.tobytes():
            raise RuntimeError("Dropout applied another mask than its Generator's draw")
        self.masks.append(hashlib.sha256(mask.tobytes()).hexdigest())


def _bits(t):
    """A float32 tensor's values as their uint32 bit patterns (exact, signed zeros too)."""
    import numpy as np
    return np.ascontiguousarray(t.detach().numpy(), dtype="<f4").view("<u4").ravel().tolist()


def train(spec, rank):
    """Steps spec["start"] .. spec["stop"] - 1 of this rank; its record."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    import ascend_rand.distributed as ardist

    seeds, model, ddp, optimizer, sampler, loader = build(spec)
    recorder = MaskRecorder(model[2])
    steps_per_epoch = -(-sampler.num_samples // spec["batch"])  # the last batch may be short
    history = {"losses": [], "loss_bits": [], "masks": []}
    step = 0
    if spec["resume"]:
        ckpt = torch.load(Path(spec["resume"]) / f"rank{rank}.pt", weights_only=True)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        seeds.load_state_dict(ckpt["seeds"])  # the dropout Generator continues in place
        sampler.load_state_dict(ckpt["sampler"])  # the rest of the epoch in progress
        history = ckpt["history"]
        step = ckpt["step"]
        recorder.masks = list(history["masks"])
    if step != spec["start"]:
        raise RuntimeError(f"the checkpoint is at step {step}, the launcher read {spec['start']}")
    workers_seen = {}
    ddp.train()
    while step < spec["stop"]:
        epoch = step // steps_per_epoch
        sampler.set_epoch(epoch)  # keeps a loaded position in that epoch
        seen = 0  # samples this pass has given the loop (counted from where it resumed)
        for x, y, loaded_by in loader:
            if spec["fail"] and spec["fail"] == [rank, step]:
                os._exit(FAILED_RANK_STATUS)
            for w, s in loaded_by.tolist():
                workers_seen[w] = s
            loss = F.mse_loss(ddp(x).squeeze(1), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces the gradients here
            optimizer.step()
            history["losses"].append(loss.item())
            history["loss_bits"].append(_bits(loss)[0])
            seen += len(x)
            step += 1
            if step == spec["stop"]:
                break
    history["masks"] = recorder.masks
    # A collective, on every rank: the dropout streams in step (sync) or apart (independent).
    report = ardist.check_consistency()
    if spec["checkpoint"]:
        folder = Path(spec["checkpoint"])
        folder.mkdir(parents=True, exist_ok=True)
        torch.save({"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "seeds": seeds.state_dict(), "sampler": sampler.state_dict(consumed=seen),
                    "history": history}, folder / f"rank{rank}.pt")
        dist.barrier()  # config.json marks a checkpoint whose every rank's file is written
        if rank == 0:
            saved = {k: spec[k] for k in ("seed", "mode", "world_size", *CONFIG)}
            (folder / "config.json").write_text(json.dumps({**saved, "step": step}))
    state = model.state_dict()
    weights = {name: _bits(state[name]) for name in PARAMS}
    digest = hashlib.sha256()  # of the float32 little-endian bytes, in PARAMS order
    for name in PARAMS:
        digest.update(state[name].detach().numpy().astype("<f4").tobytes())
    return {"rank": rank, "start": spec["start"], "stop": step, **history,
            "weights": weights, "weights_sha256": digest.hexdigest(),
            "dropout_state": seeds.generator("dropout").state,
            "sampler": sampler.state_dict(consumed=seen),
            "workers_seen": {str(w): s for w, s in sorted(workers_seen.items())},
            "consistency": {k: list(v) if isinstance(v, tuple) else v for k, v in report.items()}}


if __name__ == "__main__":
    sys.exit(main())
