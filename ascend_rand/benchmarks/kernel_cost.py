"""What each device kernel costs by its compiled code: ``ascend-rand bench --only kernels``.

No GPU is needed.  Every Triton kernel of ``backend/triton_kernels`` is compiled here
for sm_90 (an H100/H200) with Triton's own bundled ``ptxas`` and disassembled with
its ``cuobjdump``, with the launch parameters ``launch.py`` gives it (its BLOCK, 4
warps, fusion off, the stream arguments not specialised), beside three reference
kernels compiled the same way in the same run (``kernel_refs``: the store-only
floor, ``tl.randint4x`` with a 16-byte store, inductor's per-element ``tl.rand``).

For each kernel one trip of its grid loop is read from the SASS (``sass.tile_cost``:
the way a full tile runs, a sampler's retry loop weighted by its expected passes)
and divided by the outputs a thread makes in it: instructions per output element, by
pipe, the widths of its global stores and loads, barriers, registers and spills.
The retry loops' trips come from the project's own acceptance rates: the NumPy
fallback's draws of 2**20 elements, counting the elements that reach each slot
(``retry_profile``), give P(an element needs s slots), from which ``expected_trips``
simulates a tile's queue, its chunks and their passes.

The machine model (``MODEL``, an H200): 132 SMs at 1.98 GHz; per SM per clock 128
thread-instructions issued, 64 on the integer ALU, 64 on IMAD, 16 conversions or
special functions; 4.2 TB/s for a stream of writes (and reads).  A kernel's element
rate is the lower of its issue rate (the slowest of those limits) and the memory
rate of its bytes per element; its share of the memory floor is that rate over the
memory rate.  For a float32 output the floor is then about 32 instructions per
element.  A static model, not a measurement: it ranks kernels and guards every
change (tests/device/test_kernel_cost.py holds each kernel to a budget), and
``bench/device_check.sh`` sets it beside measured times where a GPU is lent.

Run as a module (``python -m ascend_rand.benchmarks.kernel_cost [--json PATH]``) it
prints the table; ``run()`` (the bench entry) runs that in a subprocess with
``TRITON_INTERPRET`` unset, since an interpreted kernel cannot be compiled.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

from . import harness, sass

MODEL = {"sms": 132, "ghz": 1.98, "issue": 128, "alu": 64, "imad": 64, "xu": 16,
         "bytes_per_s": 4.2e12, "warps": 4}
NUM_WARPS = MODEL["warps"]
THREADS = 32 * NUM_WARPS
INT32_WORDS = 2  # launch.INT32_WORDS, the NPU's word form

_STREAM = dict(n="i32", key_lo="i32", key_hi="i32", ctr0="i32", ctr1="i32", ctr2="i32",
               ctr3="i32")


def _spec(name, module, kernel, types, constexprs, elements, bytes_per_element, retry=None,
          group=None):
    """One kernel of the table.  ``elements``: outputs per tile as a function of BLOCK;
    ``retry``: a sampler's (retry_profile's name, the slots its first phase reads for
    every element): the two-phase samplers of pending.py, whose queue holds the elements
    that need more (the ziggurat's phase 1 reads no slot, a proposal's reads R(i, 0))."""
    return dict(name=name, module=module, kernel=kernel, types=types, constexprs=constexprs,
                elements=elements, bytes=bytes_per_element, retry=retry, group=group or name)


def kernel_table():
    """The kernels measured: every draw family of the Triton package, in both word forms
    where the NPU would run it."""
    from ..backend.triton_kernels import channel_dropout as tchan
    from ..backend.triton_kernels import dropout as tdrop
    from ..backend.triton_kernels import launch, normal_draws
    from ..backend.triton_kernels.pending import ring_size

    B, NB = launch.BLOCKS, normal_draws.BLOCKS
    f32 = dict(out_ptr="*fp32", **_STREAM)
    i32 = dict(out_ptr="*i32", **_STREAM)
    i16 = dict(out_ptr="*i16", **_STREAM)
    u8 = dict(out_ptr="*u8", **_STREAM)
    f64 = dict(out_ptr="*fp64", **_STREAM)
    tm = dict(t_minus_1="i32", t_nonzero="i32")
    # the ziggurat's K: the joined W and K table (int64) in the uint32 word form, K's words
    # in the int32 form (ziggurat.layer_w)
    zig_t = dict(f32, loc="fp32", scale="fp32", lo="fp32", hi="fp32", W="*fp32", K="*i64",
                 F="*fp32", scratch="*i32")
    out = []
    for form, limbs in (("uint32", False), ("int32", INT32_WORDS)):
        suffix = "" if form == "uint32" else " [int32 words]"
        out += [
            _spec("raw uint32" + suffix, "words", "raw_kernel", i32,
                  dict(SWAP_HALVES=False, BLOCK=B["words"], LIMBS16=limbs),
                  lambda b: 4 * b, 4, group="raw"),
            _spec("uniform float32" + suffix, "uniform", "uniform_f32_kernel",
                  dict(f32, low="fp32", span="fp32"),
                  dict(SCALED=False, BLOCK=B["uniform"], LIMBS16=limbs),
                  lambda b: 4 * b, 4, group="uniform"),
            _spec("uniform float16" + suffix, "uniform", "uniform_16_kernel",
                  dict(i16, low="fp32", span="fp32"),
                  dict(SCALED=False, FP16=True, BLOCK=B["uniform"], LIMBS16=limbs),
                  lambda b: 4 * b, 2, group="uniform"),
            _spec("integers int32, range <= 2**32" + suffix, "integers", "integers_64_kernel",
                  dict(i32, low_hi="i32", low_lo="i32", rm1="i32"),
                  dict(WIDTH=32, BLOCK=B["integers"], LIMBS16=limbs),
                  lambda b: 2 * b, 4, group="integers"),
            _spec("bernoulli (bytes)" + suffix, "bernoulli", "bernoulli_kernel",
                  dict(u8, **tm), dict(probs_ptr=None, HAS_PROBS=False, BLOCK=B["bernoulli"],
                                       LIMBS16=limbs),
                  lambda b: 4 * b, 1, group="bernoulli"),
            _spec("packed mask (per bit)" + suffix, "bernoulli", "bernoulli_packed_kernel",
                  dict(u8, nbytes="i32", **tm),
                  dict(probs_ptr=None, HAS_PROBS=False, BLOCK=B["bernoulli_packed"],
                       LIMBS16=limbs),
                  lambda b: 8 * b, 1 / 8, group="mask"),
            _spec("ziggurat float32" + suffix, "rejection", "ziggurat_kernel",
                  zig_t if form == "uint32" else dict(zig_t, K="*i32"),
                  dict(BOUNDED=False, SCALED=False, OUT16=False, FP16=False,
                       BLOCK=NB["ziggurat"], CAP=ring_size(4 * NB["ziggurat"]), LIMBS16=limbs),
                  lambda b: 4 * b, 4, retry=("ziggurat", 0), group="ziggurat"),
            _spec("box-muller float32" + suffix, "normal", "box_muller_kernel",
                  dict(f32, loc="fp32", scale="fp32"),
                  dict(SCALED=False, OUT16=False, FP16=False, BLOCK=NB["box_muller"],
                       LIMBS16=limbs),
                  lambda b: 4 * b, 4, group="box_muller"),
            _spec("dropout forward float32 + mask" + suffix, "dropout", "dropout_kernel",
                  dict(out_ptr="*i32", in_ptr="*i32", mask_ptr="*u8", **_STREAM, nbytes="i32",
                       **tm, scale32="fp32", scale_hi="i32", scale_lo="i32"),
                  dict(FMT=tdrop.F32, DRAW=True, WRITE_MASK=True, BLOCK=tdrop.BLOCK,
                       LIMBS16=limbs),
                  lambda b: 8 * b, 8 + 1 / 8, group="dropout"),
        ]
    out += [
        _spec("uniform bfloat16", "uniform", "uniform_16_kernel", dict(i16, low="fp32", span="fp32"),
              dict(SCALED=False, FP16=False, BLOCK=B["uniform"], LIMBS16=False),
              lambda b: 4 * b, 2, group="uniform"),
        _spec("uniform float64", "uniform", "uniform_f64_kernel",
              dict(f64, low_hi="i32", low_lo="i32", span_hi="i32", span_lo="i32"),
              dict(SCALED=False, BLOCK=B["uniform"], LIMBS16=False),
              lambda b: 2 * b, 8, group="uniform"),
        _spec("integers int64, range > 2**32", "integers", "integers_128_kernel",
              dict(i32, low_hi="i32", low_lo="i32", r_hi="i32", r_lo="i32"),
              dict(FULL=False, BLOCK=B["integers_128"], LIMBS16=False),
              lambda b: b, 8, group="integers"),
        _spec("truncated normal float32 [-2, 2] (ziggurat)", "rejection", "ziggurat_kernel",
              zig_t, dict(BOUNDED=True, SCALED=False, OUT16=False, FP16=False,
                          BLOCK=NB["ziggurat"], CAP=ring_size(4 * NB["ziggurat"]),
                          LIMBS16=False),
              lambda b: 4 * b, 4, retry=("truncated_ziggurat", 0), group="truncated"),
    ]
    proposal_t = dict(f32, a="fp32", b="fp32", width="fp32", m2="fp32", lam="fp32", loc="fp32",
                      scale="fp32", scratch="*i32")
    for label, exponential, profile in (("[1, 1.5] (uniform proposal)", False, "truncated_uniform"),
                                        ("[2, 5] (exponential proposal)", True,
                                         "truncated_exponential")):
        out.append(_spec(f"truncated normal float32 {label}", "rejection", "proposal_kernel",
                         proposal_t,
                         dict(EXPONENTIAL=exponential, MIRROR=False, SCALED=False, OUT16=False,
                              FP16=False, BLOCK=NB["proposal"], CAP=ring_size(4 * NB["proposal"]),
                              LIMBS16=False),
                         lambda b: 4 * b, 4, retry=(profile, 1), group="truncated"))
    out += [
        _spec("dropout backward float32 (mask)", "dropout", "dropout_kernel",
              dict(out_ptr="*i32", in_ptr="*i32", mask_ptr="*u8", **_STREAM, nbytes="i32", **tm,
                   scale32="fp32", scale_hi="i32", scale_lo="i32"),
              dict(FMT=tdrop.F32, DRAW=False, WRITE_MASK=False, BLOCK=tdrop.BLOCK,
                   LIMBS16=False),
              lambda b: 8 * b, 8 + 1 / 8, group="dropout"),
        _spec("dropout backward float32 (regenerate)", "dropout", "dropout_kernel",
              dict(out_ptr="*i32", in_ptr="*i32", **_STREAM, nbytes="i32", **tm,
                   scale32="fp32", scale_hi="i32", scale_lo="i32"),
              dict(mask_ptr=None, FMT=tdrop.F32, DRAW=True, WRITE_MASK=False,
                   BLOCK=tdrop.BLOCK, LIMBS16=False),
              lambda b: 8 * b, 8, group="dropout"),
        _spec("channel dropout float32 (channels of 64)", "channel_dropout", "channel_kernel",
              dict(out_ptr="*i32", in_ptr="*i32", mask_ptr="*u8", n="i32", inner="i32",
                   scale32="fp32", scale_hi="i32", scale_lo="i32", a32="fp32", b32="fp32",
                   a_hi="i32", a_lo="i32", b_hi="i32", b_lo="i32", dropped="i32"),
              dict(FMT=tdrop.F32, MODE=0, WIDE=False, BLOCK=tchan.BLOCK, LIMBS16=False),
              lambda b: b, 8, group="dropout"),
    ]
    return out


def reference_table():
    return [
        dict(name="store-only floor (reference)", kernel="store_zeros",
             types=dict(out_ptr="*fp32", n="i32"), constexprs=dict(BLOCK=1024),
             elements=lambda b: 4 * b, bytes=4, retry=None, group="reference"),
        dict(name="tl.randint4x + 16-byte store (reference)", kernel="randint4x_store",
             types=dict(out_ptr="*i32", n="i32", seed="i32"), constexprs=dict(BLOCK=1024),
             elements=lambda b: 4 * b, bytes=4, retry=None, group="reference"),
        dict(name="inductor tl.rand per element (reference)", kernel="rand_per_element",
             types=dict(out_ptr="*fp32", n="i32", seed="i32"), constexprs=dict(BLOCK=1024),
             elements=lambda b: 4 * b, bytes=4, retry=None, group="reference"),
    ]


# -- compiling -------------------------------------------------------------------------------------

def _bin_dir():
    import triton

    return Path(triton.__file__).parent / "backends" / "nvidia" / "bin"


def compile_sass(fn, types, constexprs):
    """(SASS text, registers, spilled bytes, shared bytes) of ``fn`` compiled for sm_90."""
    import triton
    from triton.backends.compiler import AttrsDescriptor, GPUTarget
    from triton.compiler import ASTSource

    signature, constants, aligned = {}, {}, []
    for p in fn.params:
        if p.is_constexpr or p.name in constexprs:
            signature[p.name] = "constexpr"
            constants[p.name] = constexprs[p.name]
        else:
            signature[p.name] = types[p.name]
            if types[p.name].startswith("*"):
                aligned.append(p.num)  # torch's allocations: 16-byte aligned
    attrs = AttrsDescriptor.from_dict({"arg_properties": {"tt.divisibility": aligned,
                                                          "tt.equal_to": []},
                                       "cls": "AttrsDescriptor"})
    compiled = triton.compile(ASTSource(fn, signature, constants, attrs),
                              target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": NUM_WARPS, "enable_fp_fusion": False})
    cubin = compiled.asm["cubin"]
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        text = subprocess.run([str(_bin_dir() / "cuobjdump"), "-sass", f.name],
                              capture_output=True, text=True, check=True).stdout
        res = subprocess.run([str(_bin_dir() / "cuobjdump"), "-res-usage", f.name],
                             capture_output=True, text=True, check=True).stdout
    regs = _resource(res, "REG")
    spill = _resource(res, "STACK")
    return text, regs, spill, compiled.metadata.shared


def _resource(text, name):
    import re

    m = re.search(rf"\b{name}:(\d+)", text)
    return int(m.group(1)) if m else None


# -- the samplers' retry work ------------------------------------------------------------------------

PROFILE_SIZE = 1 << 20


def retry_profile(which, size=PROFILE_SIZE):
    """P(an element needs at least s + 1 slots), s = 0, 1, ..., of a sampler, from the NumPy
    fallback's draw of ``size`` elements (seed 2026): the fraction of elements that reach
    slot s (spec 5.2)."""
    import numpy as np

    from .. import Generator
    from ..fallback import normal as fbn

    counts = {}
    original = fbn.retry_blocks

    def counted(key, counter, element, attempt):
        counts[attempt] = counts.get(attempt, 0) + int(np.size(element))
        return original(key, counter, element, attempt)

    g = Generator(2026, backend="numpy")
    fbn.retry_blocks = counted
    try:
        if which == "ziggurat":
            g.standard_normal(size, dtype="float32")
        elif which == "truncated_ziggurat":
            g.truncated_normal(a=-2.0, b=2.0, size=size, dtype="float32")
        elif which == "truncated_uniform":
            g.truncated_normal(a=1.0, b=1.5, size=size, dtype="float32")
        elif which == "truncated_exponential":
            g.truncated_normal(a=2.0, b=5.0, size=size, dtype="float32")
        else:
            raise ValueError(f"retry_profile: unknown sampler {which!r}")
    finally:
        fbn.retry_blocks = original
    return [counts.get(s, 0) / size for s in range(max(counts, default=-1) + 1)]


def expected_trips(reach, retry=128, chunks=4000, seed=30):
    """(chunk trips, retry-loop trips) per queued element of the two-phase samplers
    (backend/triton_kernels/pending.py), by simulation from ``reach`` (retry_profile): a
    queued element needs s + 1 or more slots with probability reach[s] / reach[0]; the
    queue is retried ``retry`` at a time, a chunk's loop running as many passes as its
    longest element.  Multiply by the elements queued per tile (reach[0] * tile)."""
    import numpy as np

    if not reach or reach[0] == 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    cond = np.asarray(reach, dtype=float) / reach[0]  # P(K >= s + 1 | queued)
    u = rng.random((chunks, retry))
    slots = np.maximum(np.searchsorted(-cond, -u, side="left"), 1)  # K, drawn by inversion
    return 1.0 / retry, float(slots.max(axis=1).mean()) / retry


# -- the model --------------------------------------------------------------------------------------

def predict(per_element, bytes_per_element):
    """(issue-bound elements/s, memory-bound elements/s, share of the memory floor) of a
    kernel whose per-element counts by class are ``per_element``."""
    clocks = max(per_element["total"] / MODEL["issue"],
                 per_element.get("alu", 0.0) / MODEL["alu"],
                 per_element.get("imad", 0.0) / MODEL["imad"],
                 per_element.get("xu", 0.0) / MODEL["xu"])
    issue_rate = MODEL["sms"] * MODEL["ghz"] * 1e9 / clocks if clocks else math.inf
    memory_rate = MODEL["bytes_per_s"] / bytes_per_element
    return issue_rate, memory_rate, min(issue_rate, memory_rate) / memory_rate


def measure(spec, fn, log=None):
    started = time.perf_counter()
    text, regs, spill, shared = compile_sass(fn, spec["types"], spec["constexprs"])
    instrs = sass.parse(text)
    block = spec["constexprs"]["BLOCK"]
    per_thread = spec["elements"](block) / THREADS
    passes = []
    retry = spec.get("retry")
    if retry is not None:
        profile, phase1 = retry
        reach = _profiles(profile)[phase1:]
        queued = reach[0] * spec["elements"](block) if reach else 0.0  # per tile
        passes = [queued * t for t in expected_trips(reach)]
    cost = sass.tile_cost(instrs, passes)
    per = {"total": cost.total / per_thread}
    for cls, v in cost.by_class.items():
        per[cls] = v / per_thread
    issue_rate, memory_rate, share = predict(per, spec["bytes"])
    retry_instr = sum(size * w for size, w in cost.inner_loops) / per_thread
    row = {
        "kernel": spec["name"], "group": spec["group"], "function": spec["kernel"],
        "block": block, "elements_per_thread_per_tile": per_thread,
        "instr_per_element": round(per["total"], 2),
        "by_class": {k: round(v, 2) for k, v in sorted(per.items()) if k != "total"},
        "retry_instr_per_element": round(retry_instr, 2),
        "retry_passes": [round(p, 3) for p in passes],
        "stores": {str(w): round(c / per_thread, 3) for w, c in sorted(cost.stores.items())},
        "loads": {str(w): round(c / per_thread, 3) for w, c in sorted(cost.loads.items())},
        "widest_store_bytes": max(cost.stores, default=0),
        "widest_load_bytes": max(cost.loads, default=0),
        "barriers_per_tile": round(cost.barriers, 2),
        "shared_per_tile": round(cost.shared, 2),
        "registers": regs, "spill_bytes": spill, "shared_bytes": shared,
        "bytes_per_element": spec["bytes"],
        "predicted_g_per_s": round(min(issue_rate, memory_rate) / 1e9, 2),
        "floor_share": round(share, 3),
        "compile_s": round(time.perf_counter() - started, 2),
    }
    if log:
        log(f"{spec['name']}: {row['instr_per_element']} instr/element")
    return row


_PROFILES = {}


def _profiles(name):
    if name not in _PROFILES:
        _PROFILES[name] = retry_profile(name)
    return _PROFILES[name]


def _kernel_fn(spec):
    import importlib

    module = importlib.import_module(f"ascend_rand.backend.triton_kernels.{spec['module']}")
    return getattr(module, spec["kernel"])


def measure_all(log=None, only=None):
    """Every row: the references first, then the project's kernels (``only``: names)."""
    from . import kernel_refs

    rows = []
    for spec in reference_table():
        rows.append(measure(spec, getattr(kernel_refs, spec["kernel"]), log))
    for spec in kernel_table():
        if only and spec["name"] not in only:
            continue
        rows.append(measure(spec, _kernel_fn(spec), log))
    refs = {r["function"]: r for r in rows if r["group"] == "reference"}
    base = refs["randint4x_store"]["instr_per_element"]
    for r in rows:
        r["ratio_to_randint4x"] = round(r["instr_per_element"] / base, 2)
    return rows


# -- targets (issue 30), read against the rows ---------------------------------------------------------

def targets(rows):
    """The targets of docs/performance.md's "Kernels by their compiled code", each MET or
    NOT MET by the model."""
    by = {r["kernel"]: r for r in rows}
    out = []

    def add(text, row_name, met, got):
        out.append({"text": text, "measured_text": f"{row_name}: {got}", "met": bool(met),
                    "ratio": None, "n": None})

    for name in ("raw uint32", "uniform float32", "uniform float16", "uniform bfloat16",
                 "integers int32, range <= 2**32", "bernoulli (bytes)"):
        r = by.get(name)
        if r is None:
            continue
        add("16-byte stores, <= 1.2x randint4x's instructions, >= 95 % of the floor", name,
            r["widest_store_bytes"] >= 16 and r["ratio_to_randint4x"] <= 1.2
            and r["floor_share"] >= 0.95,
            f"{r['widest_store_bytes']} B stores, {r['ratio_to_randint4x']}x, "
            f"{100 * r['floor_share']:.0f} %")
    for name in ("ziggurat float32", "truncated normal float32 [-2, 2] (ziggurat)",
                 "box-muller float32"):
        r = by.get(name)
        if r is not None:
            add(">= 60 % of the memory floor", name, r["floor_share"] >= 0.6,
                f"{100 * r['floor_share']:.0f} %")
    r = by.get("packed mask (per bit)")
    if r is not None:
        ref = by["tl.randint4x + 16-byte store (reference)"]["instr_per_element"]
        ratio = r["instr_per_element"] / ref
        add("<= 1.2x the randint4x word rate per bit", r["kernel"], ratio <= 1.2,
            f"{ratio:.2f}x")
    for name in ("dropout forward float32 + mask", "dropout backward float32 (mask)"):
        r = by.get(name)
        if r is None:
            continue
        # F.dropout moves 9 bytes an element (x in, y out, a bool mask out)
        vs_torch = r["floor_share"] * 9.0 / r["bytes_per_element"]
        add("16-byte loads and stores, <= 2 barriers per tile, >= 1.0x F.dropout", name,
            r["widest_store_bytes"] >= 16 and r["widest_load_bytes"] >= 16
            and r["barriers_per_tile"] <= 2 and vs_torch >= 1.0,
            f"{r['widest_load_bytes']}/{r['widest_store_bytes']} B, "
            f"{r['barriers_per_tile']:g} barriers, {vs_torch:.2f}x F.dropout")
    return out


# -- the model beside a measurement (bench/device_check.sh on a lent GPU) ---------------------------

# The device benchmark's draws (benchmarks/device.py) and the kernels each runs: a draw
# made of two passes (dropout forward + backward) is predicted as their times added.
MEASURED_DRAWS = {
    "uniform float32": ("uniform float32",),
    "normal float32 (ziggurat)": ("ziggurat float32",),
    "normal float32 (Box-Muller)": ("box-muller float32",),
    "truncated normal float32, [-2, 2]": ("truncated normal float32 [-2, 2] (ziggurat)",),
    "packed dropout mask, p_drop 0.1": ("packed mask (per bit)",),
    "dropout forward+backward, float32, p 0.1": ("dropout forward float32 + mask",
                                                  "dropout backward float32 (mask)"),
}


def beside_measured(kernel_rows, device_rows, ours="ascend_rand"):
    """Rows of (draw, n, predicted G/s, measured G/s, measured / predicted) for the device
    benchmark's own rows (``device_rows``: its JSON's ``rows``) at the largest size each
    was timed, and its torch peers' measured G/s beside them; ``kernel_rows`` this
    report's rows."""
    by = {r["kernel"]: r for r in kernel_rows}
    out = []
    for draw, kernels in MEASURED_DRAWS.items():
        if not all(k in by for k in kernels):
            continue
        # one pass of each kernel an element: the passes' times add
        predicted = 1.0 / sum(1.0 / by[k]["predicted_g_per_s"] for k in kernels)
        timed = [r for r in device_rows if r.get("draw") == draw and "gsps" in r]
        mine = [r for r in timed if r.get("peer") == ours]
        if not mine:
            out.append({"draw": draw, "n": None, "predicted_g_per_s": round(predicted, 1),
                        "measured_g_per_s": None, "measured_over_predicted": None,
                        "peers": {}})
            continue
        n = max(r["n"] for r in mine)
        got = next(r for r in mine if r["n"] == n)["gsps"]
        peers = {r["peer"]: round(r["gsps"], 1) for r in timed
                 if r["n"] == n and r.get("peer") != ours}
        out.append({"draw": draw, "n": n, "predicted_g_per_s": round(predicted, 1),
                    "measured_g_per_s": round(got, 1),
                    "measured_over_predicted": round(got / predicted, 2), "peers": peers})
    return out


def beside_markdown(rows):
    lines = ["| draw | n | model G/s | measured G/s | measured / model | peers at n (G/s) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        peers = ", ".join(f"{k} {v:g}" for k, v in r["peers"].items()) or "-"
        got = "-" if r["measured_g_per_s"] is None else f"{r['measured_g_per_s']:g}"
        ratio = "-" if r["measured_over_predicted"] is None else \
            f"{r['measured_over_predicted']:.2f}"
        n = "-" if r["n"] is None else f"{r['n']:.0e}"
        lines.append(f"| {r['draw']} | {n} | {r['predicted_g_per_s']:g} | {got} | {ratio} | "
                     f"{peers} |")
    return "\n".join(lines)


# -- the bench entry -----------------------------------------------------------------------------------

def available():
    """Why the report cannot run here, or None (it needs triton and its nvidia tools)."""
    try:
        import triton  # noqa: F401
    except ImportError as exc:
        return f"triton is not installed ({exc})"
    if not (_bin_dir() / "cuobjdump").exists():
        return f"triton has no cuobjdump in {_bin_dir()}"
    return None


def run(quick=False, sizes=None, log=None):
    """The report as ``ascend-rand bench`` results (rows, targets, machine), computed in a
    subprocess with TRITON_INTERPRET unset."""
    results = {"benchmark": "kernels", "machine": harness.machine_info(), "model": MODEL,
               "rows": [], "targets": []}
    why = available()
    if why:
        results["skipped"] = why
        return results
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", "import sys; from ascend_rand.benchmarks "
                           "import kernel_cost; sys.exit(kernel_cost.main(['--emit-json']))"],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"kernel_cost: the compile run failed:\n{proc.stderr[-4000:]}")
    results["rows"] = json.loads(proc.stdout)
    results["targets"] = targets(results["rows"])
    return results


COLUMNS = ("kernel", "instr/elem", "x randint4x", "alu", "imad", "fma", "xu", "retry/elem",
           "store B", "load B", "bars", "regs", "G/s", "% floor")


def _cells(r):
    c = r["by_class"]
    return (r["kernel"], f"{r['instr_per_element']:.1f}", f"{r['ratio_to_randint4x']:.2f}",
            f"{c.get('alu', 0):.1f}", f"{c.get('imad', 0):.1f}", f"{c.get('fma', 0):.1f}",
            f"{c.get('xu', 0):.1f}", f"{r['retry_instr_per_element']:.1f}",
            str(r["widest_store_bytes"]), str(r["widest_load_bytes"] or "-"),
            f"{r['barriers_per_tile']:g}", str(r["registers"]), f"{r['predicted_g_per_s']:.0f}",
            f"{100 * r['floor_share']:.0f}")


def print_results(results, file=None):
    out = file or sys.stdout
    if results.get("skipped"):
        print(f"kernels: not run: {results['skipped']}", file=out)
        return
    print("Device kernels by their compiled code (sm_90 SASS, per output element; "
          "model: H200)", file=out)
    widths = [max(len(COLUMNS[i]), *(len(_cells(r)[i]) for r in results["rows"]))
              for i in range(len(COLUMNS))]
    print("  ".join(h.ljust(w) for h, w in zip(COLUMNS, widths)), file=out)
    for r in results["rows"]:
        print("  ".join(c.ljust(w) for c, w in zip(_cells(r), widths)), file=out)


def markdown(results):
    if results.get("skipped"):
        return f"(kernels: not run: {results['skipped']})"
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in results["rows"]:
        lines.append("| " + " | ".join(_cells(r)) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ascend_rand.benchmarks.kernel_cost",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--emit-json", action="store_true",
                        help="print the rows as JSON only (what run() reads)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the markdown table")
    parser.add_argument("--only", action="append", metavar="KERNEL",
                        help="measure this kernel (by its row name) and the references")
    args = parser.parse_args(argv)
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        parser.error("TRITON_INTERPRET is set: an interpreted kernel cannot be compiled")
    why = available()
    if why:
        print(f"kernel_cost: {why}", file=sys.stderr)
        return 3
    rows = measure_all(only=args.only)
    if args.emit_json:
        print(json.dumps(rows))
        return 0
    results = {"rows": rows, "targets": targets(rows), "model": MODEL}
    print_results(results)
    if args.markdown:
        print(markdown(results))
    for t in results["targets"]:
        print(f"target: {t['text']}: {t['measured_text']}: {'MET' if t['met'] else 'NOT MET'}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
