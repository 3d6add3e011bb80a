"""Normal (float32, float64), truncated normal and packed dropout mask throughput against peers.

Run with ``ascend-rand bench --only distributions [--quick] [--json PATH]``.
Same method as the uniform benchmark (harness.py): one process,
outputs preallocated where the peer accepts ``out=``, one warm-up call, the
median of several timed calls, each case bounded in time.  Ratios: normals and
the truncated normal against numpy ``Generator(PCG64).standard_normal`` of the
same dtype (the truncated normal: float32); the float64 normal also against
Intel oneMKL's Philox4x32x10 through mkl-random (mkl.py), each of its methods;
masks against numpy ``random(float32) < keep`` + ``packbits(bitorder='little')``.
A mask's samples are its bits (n elements -> n bits).  The ``native raw
(floor)`` rows time ``stateless.raw`` generating n uint32 words into a reused
4 MB buffer (so no memory traffic): every draw here reads one stream word per
element on its fast path, so that row is the most a draw can reach on the
current Philox kernel.  docs/performance.md explains the rows.
"""

import numpy as np

import ascend_rand
from ascend_rand import stateless

from . import harness as H
from . import mkl
Missing = H.Missing
SEED = H.SEED
COUNTER = (0, 7)

NORMAL = "normal float32"
NORMAL64 = "normal float64"
TRUNC = "truncated normal float32 [-2, 2]"
MASK = "dropout mask, p_drop 0.1"
DRAWS = (NORMAL, NORMAL64, TRUNC, MASK)
SIZES = (1_000_000, 50_000_000)
QUICK_SIZES = (1_000_000,)
P_DROP = 0.1
KEEP = np.float32(1 - P_DROP)
A, B = -2.0, 2.0

NORMAL_BASELINE = "numpy PCG64"  # Generator(PCG64).standard_normal(dtype=float32, out=)
MASK_BASELINE = "numpy PCG64"  # random(dtype=float32, out=) < keep, packbits(bitorder="little")
BASELINES = {NORMAL: (NORMAL, NORMAL_BASELINE), NORMAL64: (NORMAL64, NORMAL_BASELINE),
             TRUNC: (NORMAL, NORMAL_BASELINE),
             MASK: (MASK, MASK_BASELINE)}
# What each draw's peers are; harness.caption adds what the ratio column divides.
CAPTIONS = {NORMAL: "numpy PCG64: Generator(PCG64).standard_normal(float32)",
            NORMAL64: "numpy PCG64: Generator(PCG64).standard_normal(float64); MKL: "
                      "mkl-random, 1 thread, allocating",
            TRUNC: "against the untruncated numpy PCG64 row of the normal table (numpy has "
                   "no truncated normal)",
            MASK: "samples = mask bits; numpy PCG64: random(float32) < keep, "
                  "packbits(bitorder='little')"}
ZIGGURAT = "native ziggurat"
BOX_MULLER = "native Box-Muller"
MASK_NATIVE = "native mask"
FLOOR = "native raw (floor)"
TARGETS = (
    # (draw, peer, ratio, text): ratios to the draw's numpy baseline (issue 14 items 1 and 2)
    (NORMAL, ZIGGURAT, 8.0,
     "native ziggurat normal float32, 1 thread, >= 8x numpy Generator(PCG64).standard_normal"),
    (NORMAL, BOX_MULLER, 5.0,
     "native Box-Muller normal float32, 1 thread, >= 5x numpy Generator(PCG64).standard_normal"),
    (NORMAL64, ZIGGURAT, 4.0,
     "native ziggurat normal float64, 1 thread, >= 4x numpy Generator(PCG64).standard_normal"
     "(float64)"),
    (MASK, MASK_NATIVE, 5.0,
     "native packed dropout mask, 1 thread, >= 5x numpy random() < keep + packbits"),
)
MKL_NORMAL_RATIO = 2.0  # issue 14 item 2: the float64 normal against MKL's best method
MKL_NORMAL_TARGET = (f"native ziggurat normal float64, 1 thread, >= {MKL_NORMAL_RATIO:g}x the "
                     f"best {mkl.PEER} standard_normal method (mkl-random, 1 thread)")


# -- peers: make(draw, n) returns (method, zero-argument callable), or None to skip -----------

def _native(threads, fill):
    """A native ascend_rand row; ``fill(n)`` returns (method, callable)."""
    def make(draw, n):
        info = ascend_rand.backends()["native"]
        if not info["available"]:
            raise Missing(info["reason"])
        ascend_rand.set_num_threads(threads)
        return fill(n)
    return make


def _ziggurat(dtype):
    def fill(n):
        out = np.empty(n, dtype)
        return "normal(out=)", lambda: stateless.normal((n,), SEED, COUNTER, dtype=dtype,
                                                        out=out)
    return fill


def _box_muller(dtype):
    def fill(n):
        out = np.empty(n, dtype)
        return "normal(box_muller)", lambda: stateless.normal(
            (n,), SEED, COUNTER, dtype=dtype, method="box_muller", out=out)
    return fill


def _truncated(n):
    out = np.empty(n, np.float32)
    return "truncated_normal(out=)", lambda: stateless.truncated_normal(
        (n,), SEED, COUNTER, a=A, b=B, out=out)


def _mask(n):
    out = np.empty((n + 127) // 128 * 16, np.uint8)
    return "dropout_mask(out=)", lambda: stateless.dropout_mask((n,), SEED, P_DROP, COUNTER,
                                                                out=out)


def _bernoulli_bool(n):
    out = np.empty(n, np.bool_)
    return "bernoulli(bool, out=)", lambda: stateless.bernoulli((n,), SEED, KEEP, COUNTER,
                                                                      out=out)


FLOOR_CHUNK = 1 << 20  # words per call: a 4 MB buffer that stays in cache


def _raw_floor(n):
    """n stream words, generated into one reused 4 MB buffer: Philox alone, no memory traffic."""
    chunk = min(n, FLOOR_CHUNK)
    out = np.empty(chunk, np.uint32)
    starts = range(0, n, chunk)

    def fill():
        for k in starts:
            m = min(chunk, n - k)
            stateless.raw((m,), SEED, (COUNTER[0] + k // 4, COUNTER[1]), out=out[:m])
    return "raw(out=), 4 MB chunks", fill


def _numpy_normal(bitgen, dtype="float32"):
    def make(draw, n):
        gen = np.random.Generator(bitgen(SEED))
        out = np.empty(n, dtype)
        return (f"standard_normal(f{dtype[5:]})",
                lambda: gen.standard_normal(dtype=dtype, out=out))
    return make


def _numpy_mask(draw, n):
    gen = np.random.Generator(np.random.PCG64(SEED))
    u = np.empty(n, np.float32)
    bits = np.empty(n, np.bool_)

    def fill():
        gen.random(dtype=np.float32, out=u)
        np.less(u, KEEP, out=bits)
        return np.packbits(bits, bitorder="little")
    return "random()<keep+packbits", fill


def _torch_randn(dtype):
    def make(draw, n):
        torch = H.import_torch()
        torch.manual_seed(SEED)
        out = torch.empty(n, dtype=getattr(torch, dtype))
        return "randn(out=)", lambda: torch.randn(n, out=out)
    return make


def _torch_trunc(draw, n):
    torch = H.import_torch()
    torch.manual_seed(SEED)
    out = torch.empty(n, dtype=torch.float32)
    return "init.trunc_normal_", lambda: torch.nn.init.trunc_normal_(out, 0.0, 1.0, A, B)


def _torch_bernoulli(dtype_name):
    def make(draw, n):
        torch = H.import_torch()
        torch.manual_seed(SEED)
        out = torch.empty(n, dtype=getattr(torch, dtype_name))
        return "bernoulli_(keep)", lambda: out.bernoulli_(float(KEEP))
    return make


def peers_for(draw, cores, only=None):
    """(name, threads, make) rows of one draw's table; ``only``: names to keep."""
    natives = {
        NORMAL: [(ZIGGURAT, _ziggurat("float32")), (BOX_MULLER, _box_muller("float32")),
                 (FLOOR, _raw_floor)],
        NORMAL64: [(ZIGGURAT, _ziggurat("float64")), (BOX_MULLER, _box_muller("float64"))],
        TRUNC: [("native", _truncated)],
        MASK: [(MASK_NATIVE, _mask), ("native bool", _bernoulli_bool), (FLOOR, _raw_floor)],
    }[draw]
    rows = [(name, t, _native(t, fill)) for name, fill in natives
            for t in dict.fromkeys((1, cores))]
    rows += {
        NORMAL: [(NORMAL_BASELINE, 1, _numpy_normal(np.random.PCG64)),
                 ("numpy Philox", 1, _numpy_normal(np.random.Philox)),
                 ("torch", "torch", _torch_randn("float32"))],
        NORMAL64: [(NORMAL_BASELINE, 1, _numpy_normal(np.random.PCG64, "float64")),
                   *[(name, 1, mkl.normal(method))
                     for name, method in zip(mkl.peer_names(), mkl.NORMAL_METHODS)],
                   ("torch", "torch", _torch_randn("float64"))],
        TRUNC: [("torch", "torch", _torch_trunc)],
        MASK: [(MASK_BASELINE, 1, _numpy_mask),
                ("torch f32 (unpacked)", "torch", _torch_bernoulli("float32")),
                ("torch bool (unpacked)", "torch", _torch_bernoulli("bool"))],
    }[draw]
    if only is not None:
        rows = [r for r in rows if (r[0], r[1]) in only or r[0] in only]
    return rows


# -- measurement ------------------------------------------------------------------------------

def run(quick=False, sizes=None, reps=None, budget_s=None, log=None, draws=DRAWS, only=None):
    """Measure every (draw, size, peer); returns the JSON-ready results dict.

    ``only``: peer names (or (name, threads) pairs) to keep, e.g. the demo's short table.
    """
    sizes = tuple(sizes or (QUICK_SIZES if quick else SIZES))
    reps = reps or (5 if quick else 7)
    budget_s = budget_s if budget_s is not None else (0.2 if quick else 1.5)
    cores = H.cores()
    with H.thread_settings(cores) as torch_threads:
        rows = H.measure(draws, sizes, lambda draw: peers_for(draw, cores, only), reps, budget_s,
                         torch_threads, log)
    H.add_ratios(rows, BASELINES)
    return {"machine": H.machine_info(), "quick": quick, "reps": reps, "budget_s": budget_s,
            "torch_threads": torch_threads, "p_drop": P_DROP, "truncation": [A, B],
            "rows": rows, "captions": {d: CAPTIONS[d] for d in draws},
            "baselines": {d: list(BASELINES[d]) for d in draws},
            "targets": _targets(rows, sizes, draws)}


def _targets(rows, sizes, draws):
    """Each target read at the largest n, with the 1-thread word floor beside it."""
    n = max(sizes)
    out = []
    for draw, peer, want, text in TARGETS:
        if draw not in draws:
            continue
        hit = H.find_row(rows, draw, peer, 1, n)
        floor = H.find_row(rows, draw, FLOOR, 1, n)
        ratio = hit.get("ratio") if hit else None
        target = {"text": text, "n": n, "want": want, "ratio": ratio,
                  "met": ratio is not None and ratio >= want,
                  "ratio_label": f"{BASELINES[draw][1]}'s time / {peer}'s"}
        if floor and "ratio" in floor:
            target["floor_ratio"] = floor["ratio"]
            target["note"] = (f"the 1-thread raw-word floor: {BASELINES[draw][1]}'s time / "
                              f"its = {floor['ratio']:.2f}x")
        out.append(target)
    if NORMAL64 in draws:
        out.append(_mkl_normal_target(rows, n))
    return out


def _mkl_normal_target(rows, n):
    """The float64 ziggurat over the fastest MKL method timed at n (none timed: not measured)."""
    timed = [r for r in (H.find_row(rows, NORMAL64, name, 1, n) for name in mkl.peer_names())
             if r and "gsps" in r]
    best = max(timed, key=lambda r: r["gsps"], default=None)
    ratio = H.ratio_between(H.find_row(rows, NORMAL64, ZIGGURAT, 1, n), best)
    target = {"text": MKL_NORMAL_TARGET, "n": n, "want": MKL_NORMAL_RATIO, "ratio": ratio,
              "met": ratio is not None and ratio >= MKL_NORMAL_RATIO,
              "ratio_label": f"the best {mkl.PEER} method's time / {ZIGGURAT}'s"}
    if best is not None:
        target["note"] = f"best MKL method {best['peer'][len(mkl.PEER) + 1:]}"
    return target


DEMO_PEERS = {(ZIGGURAT, 1), (NORMAL_BASELINE, 1), (MASK_NATIVE, 1), (MASK_BASELINE, 1)}


def demo_results(log=None):
    """``ascend-rand demo``'s rows: ziggurat normal and packed mask, native, 1 thread, 1e6,
    each beside the numpy row its ratio divides by (so a reader sees what "vs numpy
    PCG64 8.82" is relative to)."""
    return run(quick=True, draws=(NORMAL, MASK), only=DEMO_PEERS, log=log)


# -- output -----------------------------------------------------------------------------------

markdown = H.markdown
print_results = H.print_results

