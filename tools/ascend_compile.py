"""Compile every device kernel for Ascend, as far as a machine without CANN allows.

Run by ``tools/ascend_compile.sh`` in an environment of its own: triton-ascend==3.2.0
(Huawei's Triton, whose ``triton`` module replaces upstream's: never in the test
environment) and ascendnpu-ir==1.2.0 (``bishengir-compile``).  Each kernel of
``KERNELS``, in the NPU's int32 word form with the NPU's launch parameters
(``launch.npu_block``), goes through triton-ascend's own stages for each target:

1. ``ttir``: Triton's front end (the kernel's Python to TTIR);
2. ``adapter``: ``triton-adapter-opt``, TTIR to linalg / HIVM MLIR;
3. ``bishengir``: ``bishengir-compile``'s HFusion and HIVM pipelines, its memory
   planner among them, with the options triton-ascend passes for Atlas A2/A3;
4. ``hivmc``: the CANN toolkit's last step, missing here.

A kernel *passes* when bishengir gets as far as handing its module to ``hivmc``
("External hivmc run fails"): every check that can run without the toolkit has run.
Anything else *refuses* it, and the record names the stage and the compiler's
message.  For a kernel that passes, the module bishengir would hand ``hivmc`` (kept
with ``--save-temps``) gives its unified-buffer use (the highest ``pointer_cast``
offset plus its buffer's size, double buffers included) and the integer vector
compares left in it (``hivm.hir.vcmp`` on integers: triton-ascend's guide says they
run on the scalar unit).  The TTIR is checked for ``mulhi`` (triton-ascend lowers
``umulhi`` to a signed product: the int32 form must never use it).

Every compile starts from an empty Triton cache (``TRITON_CACHE_DIR``, a new
directory) so nothing earlier stands in for a change.  Kernels compile in parallel,
one process each (bishengir can crash).  ``--write`` compiles every kernel for every
target in full and rewrites the record (``ascend_rand/backend/triton_kernels/
ascend_record.py``, what ``ascend-rand info`` and docs/npu.md report), each entry with
the digest of the TTIR it was compiled from and the compile's time.  ``--check`` (CI)
takes every kernel to TTIR, compiles in full those whose recorded compile took at most
``FULL_BELOW_S`` and every one whose TTIR digest differs from its record, and fails
where the results differ from the record: bishengir 1.2.0 takes 5 to 25 minutes for
the samplers and the dropout (two cores), more than a CI run can give every time, and
a kernel whose TTIR is unchanged is given to the same pinned adapter and bishengir
exactly as when it was recorded.

Usage: python tools/ascend_compile.py [--jobs N] [--only NAME ...] [--target T ...]
       [--block N] [--check | --write] [--json PATH]
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The targets recorded and checked: Atlas A2 (Ascend 910B3) and Atlas A3 (Ascend 910C, the
# Ascend910_93xx parts bishengir names; Ascend910_9392 stands for them: the same 192 KiB
# unified buffer per vector core).
TARGETS = ("Ascend910B3", "Ascend910_9392")
OTHER_TARGETS = ()
UB_BITS = 192 * 1024 * 8
TIMEOUT_S = 2400
# A check (CI) compiles in full every kernel whose recorded compile took at most this many
# seconds, and any other whose TTIR has changed since it was recorded.
FULL_BELOW_S = 150
PASSED = "every offline check (stops at the missing hivmc)"

_S = {"n": "i32", **{k: "i32" for k in ("key_lo", "key_hi", "ctr0", "ctr1", "ctr2", "ctr3")}}
_STATE = dict(_S, key_lo="*i32")  # the graph-safe state form: key_lo is the state tensor


def _f(*names):
    return {k: "fp32" for k in names}


def _i(*names):
    return {k: "i32" for k in names}


def kernels():
    """name -> (module, kernel, signature, constexprs, launch family): every kernel an NPU
    launches (float64 draws are refused there, spec A.6: their kernels are not here)."""
    drop = dict(in_ptr="*i32", mask_ptr="*u8")
    drop_t = dict(**_i("nbytes", "t_minus_1", "t_nonzero"), **_f("scale32"),
                  **_i("scale_hi", "scale_lo"))
    zig = dict(**_f("loc", "scale", "lo", "hi"), W="*fp32", K="*i32", F="*fp32", scratch="*i32")
    prop = dict(**_f("a", "b", "width", "m2", "lam", "loc", "scale"), scratch="*i32")
    chan = dict(**_i("n", "inner"), **_f("scale32"), **_i("scale_hi", "scale_lo"),
                **_f("a32", "b32"), **_i("a_hi", "a_lo", "b_hi", "b_lo", "dropped"))
    out = {
        "raw words (32-bit)": ("words", "raw_kernel", dict(out_ptr="*i32", **_S),
                               dict(SWAP_HALVES=False), "words"),
        "raw words (64-bit)": ("words", "raw_kernel", dict(out_ptr="*i32", **_S),
                               dict(SWAP_HALVES=True), "words"),
        "uniform float32": ("uniform", "uniform_f32_kernel",
                            dict(out_ptr="*fp32", **_S, **_f("low", "span")),
                            dict(SCALED=True), "uniform"),
        "uniform float16": ("uniform", "uniform_16_kernel",
                            dict(out_ptr="*i16", **_S, **_f("low", "span")),
                            dict(SCALED=True, FP16=True), "uniform"),
        "uniform bfloat16": ("uniform", "uniform_16_kernel",
                             dict(out_ptr="*i16", **_S, **_f("low", "span")),
                             dict(SCALED=True, FP16=False), "uniform"),
        "uniform float32 (state)": ("uniform", "uniform_f32_kernel",
                                    dict(out_ptr="*fp32", **_STATE, **_f("low", "span")),
                                    dict(SCALED=True), "uniform"),
        "integers (range <= 2**32)": ("integers", "integers_64_kernel",
                                      dict(out_ptr="*i32", **_S, **_i("low_hi", "low_lo", "rm1")),
                                      dict(WIDTH=32), "integers"),
        "integers (64-bit)": ("integers", "integers_64_kernel",
                              dict(out_ptr="*i32", **_S, **_i("low_hi", "low_lo", "rm1")),
                              dict(WIDTH=64), "integers"),
        "integers (range > 2**32)": ("integers", "integers_128_kernel",
                                     dict(out_ptr="*i32", **_S,
                                          **_i("low_hi", "low_lo", "r_hi", "r_lo")),
                                     dict(FULL=False), "integers_128"),
        "bernoulli (scalar p)": ("bernoulli", "bernoulli_kernel",
                                 dict(out_ptr="*u8", **_S, **_i("t_minus_1", "t_nonzero")),
                                 dict(probs_ptr=None, HAS_PROBS=False), "bernoulli"),
        "bernoulli (per-element p)": ("bernoulli", "bernoulli_kernel",
                                      dict(out_ptr="*u8", **_S, **_i("t_minus_1", "t_nonzero"),
                                           probs_ptr="*fp32"),
                                      dict(HAS_PROBS=True), "bernoulli"),
        "packed mask": ("bernoulli", "bernoulli_packed_kernel",
                        dict(out_ptr="*u8", **_S, **_i("nbytes", "t_minus_1", "t_nonzero")),
                        dict(probs_ptr=None, HAS_PROBS=False), "bernoulli_packed"),
        "ziggurat float32": ("rejection", "ziggurat_kernel", dict(out_ptr="*fp32", **_S, **zig),
                             dict(BOUNDED=False, SCALED=True, OUT16=False, FP16=False),
                             "ziggurat"),
        "ziggurat bfloat16, bounded": ("rejection", "ziggurat_kernel",
                                       dict(out_ptr="*i16", **_S, **zig),
                                       dict(BOUNDED=True, SCALED=True, OUT16=True, FP16=False),
                                       "ziggurat"),
        "truncated normal (uniform proposal)": ("rejection", "proposal_kernel",
                                                dict(out_ptr="*fp32", **_S, **prop),
                                                dict(EXPONENTIAL=False, MIRROR=False,
                                                     SCALED=True, OUT16=False, FP16=False),
                                                "proposal"),
        "truncated normal (exponential proposal)": ("rejection", "proposal_kernel",
                                                    dict(out_ptr="*fp32", **_S, **prop),
                                                    dict(EXPONENTIAL=True, MIRROR=True,
                                                         SCALED=True, OUT16=False, FP16=False),
                                                    "proposal"),
        "box-muller float32": ("normal", "box_muller_kernel",
                               dict(out_ptr="*fp32", **_S, **_f("loc", "scale")),
                               dict(SCALED=True, OUT16=False, FP16=False), "box_muller"),
        "dropout forward float32": ("dropout", "dropout_kernel",
                                    dict(out_ptr="*i32", **drop, **_S, **drop_t),
                                    dict(FMT=0, DRAW=True, WRITE_MASK=True), "dropout"),
        "dropout forward float16": ("dropout", "dropout_kernel",
                                    dict(out_ptr="*i16", in_ptr="*i16", mask_ptr="*u8", **_S,
                                         **drop_t),
                                    dict(FMT=2, DRAW=True, WRITE_MASK=True), "dropout"),
        "dropout forward bfloat16 (state)": ("dropout", "dropout_kernel",
                                             dict(out_ptr="*i16", in_ptr="*i16",
                                                  mask_ptr="*u8", **_STATE, **drop_t),
                                             dict(FMT=3, DRAW=True, WRITE_MASK=True),
                                             "dropout"),
        "dropout backward (mask)": ("dropout", "dropout_kernel",
                                    dict(out_ptr="*i32", **drop, **_S, **drop_t),
                                    dict(FMT=0, DRAW=False, WRITE_MASK=False), "dropout"),
        "dropout backward (regenerate)": ("dropout", "dropout_kernel",
                                          dict(out_ptr="*i32", in_ptr="*i32", **_S, **drop_t),
                                          dict(mask_ptr=None, FMT=0, DRAW=True,
                                               WRITE_MASK=False), "dropout"),
        "channel dropout float32": ("channel_dropout", "channel_kernel",
                                    dict(out_ptr="*i32", in_ptr="*i32", mask_ptr="*u8", **chan),
                                    dict(FMT=0, MODE=0, WIDE=True), "channel_dropout"),
        "alpha dropout float16": ("channel_dropout", "channel_kernel",
                                  dict(out_ptr="*i16", in_ptr="*i16", mask_ptr="*u8", **chan),
                                  dict(FMT=2, MODE=1, WIDE=False), "channel_dropout"),
        "state advance": ("state", "advance_kernel", dict(state_ptr="*i32"), dict(), None),
    }
    return out


# -- one kernel, one target (a process of its own) -------------------------------------------------

_POINTER = re.compile(r"hivm\.hir\.pointer_cast\(([^)]*)\)\s*:\s*memref<([^>]*?),?\s*"
                      r"#hivm\.address_space<ub>>")
_CONST = re.compile(r"(%c[\w]*)\s*=\s*arith\.constant\s+(-?\d+)\s*:\s*i64")
_BITS = {"i1": 8, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32,
         "f64": 64}


def ub_bits(hivm):
    """Bits of the unified buffer a HIVM module uses: the largest offset + size over its
    ``pointer_cast`` buffers in the ``ub`` address space (None where it has none)."""
    consts = {name: int(value) for name, value in _CONST.findall(hivm)}
    top = None
    for args, memref in _POINTER.findall(hivm):
        dims = memref.split(",")[0].split("x")
        elem = dims[-1].strip()
        if elem not in _BITS:
            continue
        size = _BITS[elem]
        for d in dims[:-1]:
            size *= int(d) if d.strip().isdigit() else 1
        for arg in args.split(","):
            arg = arg.strip()
            offset = consts.get(arg)
            if offset is None and re.fullmatch(r"%c(\d+)_i64(_\d+)?", arg):
                offset = int(re.fullmatch(r"%c(\d+)_i64(_\d+)?", arg).group(1))
            if offset is not None:
                end = 8 * offset + size
                top = end if top is None else max(top, end)
    return top


def integer_compares(hivm):
    """The integer vector compares in a HIVM module: the calls bishengir lowers them to
    (``@vcmp_<op>_1d_int32_t`` and the like), or ``hivm.hir.vcmp`` operations on integer
    vectors where they are not yet lowered."""
    calls = re.findall(r"func\.call @vcmp_\w*?_u?int(?:8|16|32|64)_t\b", hivm)
    ops = [ln for ln in hivm.splitlines() if "hivm.hir.vcmp" in ln
           and re.search(r"memref<[^>]*x(i8|i16|i32|i64)\b", ln)]
    return len(calls) + len(ops)


def _stand_ins(work):
    """What triton-ascend imports but this machine lacks: a ``torch_npu`` module (its driver
    reads torch_npu.version) and an empty ASCEND_HOME_PATH; neither is reached by a compile."""
    stub = work / "stub" / "torch_npu"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text(
        '"""A stand-in for tools/ascend_compile.py: no NPU runtime on this machine."""\n'
        "class version:\n    git_version = 'none'\n")
    home = work / "ascend_home"
    home.mkdir()
    return stub.parent, home


def ttir_digest(ttir):
    """SHA-256 of a TTIR module's text without its source locations (the file paths and
    line numbers a checkout and an edit move): what the adapter and bishengir are given."""
    import hashlib

    lines = [ln for ln in ttir.splitlines() if not ln.startswith("#loc")]
    text = re.sub(r"\s*loc\([^()]*(\([^()]*\)[^()]*)*\)", "", "\n".join(lines))
    return hashlib.sha256(text.encode()).hexdigest()


def compile_one(name, target, block, full=True):
    """Compile one kernel for one target (in this process); returns its record.  With
    ``full`` false, only to TTIR: the record has the TTIR's digest and no stage."""
    import triton
    import triton.backends
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    module, kernel, signature, constexprs, _ = kernels()[name]
    sys.path.insert(0, str(ROOT))
    import importlib

    from ascend_rand.backend.triton_kernels import launch, pending

    fn = getattr(importlib.import_module(f"ascend_rand.backend.triton_kernels.{module}"),
                 kernel)
    const = dict(constexprs, LIMBS16=launch.INT32_WORDS)
    if block is not None:
        const["BLOCK"] = block
        if "scratch" in signature:
            const["CAP"] = pending.ring_size(4 * block)
    record = {"kernel": name, "target": target, "block": block}
    backend = triton.backends.backends["ascend"].compiler
    glob = backend.add_stages.__globals__
    work = Path(os.environ["ASCEND_COMPILE_WORK"])

    class Arch:
        def get_arch(self):
            return target

    glob["NPUUtils"] = lambda: Arch()
    seen = {}

    def keep_ttir(original):
        def make(mod, metadata, opt):
            out = original(mod, metadata, opt)
            seen["ttir"] = str(out)
            return out
        return make

    def adapter(original):
        def run(mod, metadata, opt, **kw):
            if not full:
                raise _Reached("TTIR only")
            seen["stage"] = "adapter"
            out = original(mod, metadata, opt, **kw)
            seen["stage"] = "bishengir"
            return out
        return run

    def bishengir(linalg, metadata, opt):
        linalg, metadata = glob["_parse_linalg_metadata"](linalg, metadata)
        temps = work / "temps"
        temps.mkdir()
        src = work / "kernel.ttadapter.mlir"
        src.write_text(linalg)
        options = [f"--target={target}"]
        if metadata.get("multibuffer") is not None:
            options.append(f"--enable-auto-multi-buffer={metadata['multibuffer']}")
        options += ["--enable-hfusion-compile=true", "--enable-hivm-compile=true",
                    "--enable-triton-kernel-compile=true", f"--save-temps={temps}"]
        try:
            done = subprocess.run(["bishengir-compile", str(src), *options, "-o",
                                   str(work / "kernel")], capture_output=True, text=True,
                                  timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            seen["stage"] = "timeout"
            raise _Reached(f"bishengir-compile did not finish in {TIMEOUT_S} s")
        text = done.stdout + done.stderr
        seen["bishengir_output"] = text
        hivm = temps / "module.hivm.opt.mlir"
        if hivm.exists():
            seen["hivm"] = hivm.read_text()
        raise _Reached(text)

    glob["make_ttir"] = keep_ttir(glob["make_ttir"])
    glob["ttir_to_linalg"] = adapter(glob["ttir_to_linalg"])
    glob["linalg_to_bin_enable_npu_compile_A2_A3"] = bishengir
    sig = dict(signature, **{k: "constexpr" for k in const})
    started = time.perf_counter()
    seen["stage"] = "ttir"
    try:
        triton.compile(ASTSource(fn, sig, const), target=GPUTarget("npu", target, 0),
                       options={})
        record.update(stage="hivmc", passed=False, message="compiled to a binary: hivmc "
                      "was found, which this check does not expect")
    except Exception as exc:  # every stage's failure, classified below
        text = seen.get("bishengir_output") or _detail(exc)
        if not full and "ttir" in seen:
            record.update(stage=None, passed=None, message="TTIR only")
        elif seen["stage"] == "timeout":
            record.update(stage="timeout", passed=False,
                          message=f"bishengir-compile did not finish in {TIMEOUT_S} s")
        elif "External hivmc run fails" in text:
            record.update(stage="hivmc", passed=True, message=PASSED)
        else:
            record.update(stage=seen["stage"], passed=False, message=_first_error(text),
                          log=text[-4000:])
    record["seconds"] = round(time.perf_counter() - started, 1)
    if "ttir" in seen:
        record["ttir_mulhi"] = len(re.findall(r"mulhi", seen["ttir"]))
        record["ttir_sha256"] = ttir_digest(seen["ttir"])
    if "hivm" in seen:
        record["ub_bits"] = ub_bits(seen["hivm"])
        record["integer_compares"] = integer_compares(seen["hivm"])
    return record


class _Reached(Exception):
    """bishengir-compile has run (its output is the exception's text)."""


def _detail(exc):
    text = str(exc)
    for attr in ("stderr", "output"):
        extra = getattr(exc, attr, None)
        if isinstance(extra, bytes):
            extra = extra.decode(errors="replace")
        if extra:
            text += "\n" + extra
    cause = exc.__cause__ or exc.__context__
    if cause is not None and cause is not exc:
        text += "\n" + _detail(cause)
    return text


def _first_error(text):
    """The compiler's own message: its first ``error:``, ``LLVM ERROR`` or assertion line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if re.search(r"error:|LLVM ERROR|Assertion|assert", ln) and "[ERROR][Triton]" not in ln:
            return re.sub(r"/tmp/[^\s:\"]+", "<tmp>", ln)[:400]
    tail = [ln for ln in lines if not ln.startswith("#") and "[ERROR][Triton]" not in ln]
    return re.sub(r"/tmp/[^\s:\"]+", "<tmp>", " / ".join(tail[-3:]))[:400]


# -- the driver ----------------------------------------------------------------------------------

def _child(name, target, block, full=True):
    """Run compile_one in a fresh process with a fresh Triton cache; its record."""
    with tempfile.TemporaryDirectory(prefix="ascend-compile-") as d:
        work = Path(d)
        stub, home = _stand_ins(work)
        env = dict(os.environ, TRITON_CACHE_DIR=str(work / "cache"), ASCEND_HOME_PATH=str(home),
                   ASCEND_COMPILE_WORK=str(work), TRITON_INTERPRET="0",
                   PYTHONPATH=os.pathsep.join([str(stub), str(ROOT)]))
        code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import ascend_compile as a; "
                "print('RECORD ' + json.dumps(a.compile_one(sys.argv[2], sys.argv[3], "
                "None if sys.argv[4] == 'none' else int(sys.argv[4]), sys.argv[5] == 'full')))")
        started = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, "-c", code, str(ROOT / "tools"), name, target,
                                   "none" if block is None else str(block),
                                   "full" if full else "ttir"],
                                  capture_output=True, text=True, env=env,
                                  timeout=TIMEOUT_S + 60, cwd=work)
        except subprocess.TimeoutExpired:
            return {"kernel": name, "target": target, "block": block, "stage": "timeout",
                    "passed": False, "message": f"no result in {TIMEOUT_S + 60} s",
                    "seconds": round(time.perf_counter() - started, 1)}
        for line in done.stdout.splitlines():
            if line.startswith("RECORD "):
                return json.loads(line[len("RECORD "):])
        return {"kernel": name, "target": target, "block": block, "stage": "driver",
                "passed": False, "seconds": round(time.perf_counter() - started, 1),
                "message": _first_error(done.stdout + done.stderr) or f"exit {done.returncode}"}


def run(names, targets, jobs, block=None, full=True, only=None, log=print):
    """Every (kernel, target) compile (``only``: just these pairs), ``jobs`` at a time;
    ``block`` forces every kernel's BLOCK (a sweep), else launch.npu_block's; ``full``
    false: to TTIR only."""
    sys.path.insert(0, str(ROOT))
    from ascend_rand.backend.triton_kernels import launch

    table = kernels()
    work = [(n, t, None if table[n][4] is None else block or launch.npu_block(table[n][4]), full)
            for n in names for t in targets if only is None or (n, t) in only]
    records = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_child, *w): w for w in work}
        for f in concurrent.futures.as_completed(futures):
            r = f.result()
            records.append(r)
            if not full and r["stage"] is None:
                continue
            log(f"{r['kernel']} [{r['target']}, BLOCK {r['block']}]: "
                f"{'passed' if r['passed'] else 'REFUSED at ' + str(r['stage'])} "
                f"({r['seconds']} s){'' if r['passed'] else ': ' + r['message']}")
    order = {n: k for k, n in enumerate(names)}
    records.sort(key=lambda r: (order[r["kernel"]], targets.index(r["target"])))
    return records


def merged(names, targets, jobs, paths, log=print):
    """Full compiles from earlier runs' --json files (the latest for each kernel and target)
    with the TTIR digests of the sources now: a result whose run had no digest takes
    today's, so the sources must not have changed since that run (``git stash`` nothing
    between them)."""
    done = {}
    for path in paths:
        for r in json.loads(Path(path).read_text()):
            if r.get("stage") is not None:
                done[(r["kernel"], r["target"])] = r
    missing = [(n, t) for n in names for t in targets if (n, t) not in done]
    if missing:
        raise SystemExit(f"--merge: no full compile of {missing} in {paths}")
    out = []
    for r in run(names, targets, jobs, full=False, log=log):
        old = done[(r["kernel"], r["target"])]
        if old.get("ttir_sha256") not in (None, r["ttir_sha256"]):
            raise SystemExit(f"--merge: {r['kernel']} [{r['target']}]: its TTIR has changed "
                             "since it was compiled")
        out.append(dict(old, ttir_sha256=r["ttir_sha256"], ttir_mulhi=r["ttir_mulhi"]))
    return out


def run_check(names, targets, jobs, recorded, log=print):
    """The CI run: every kernel to TTIR, then in full those whose recorded compile took at
    most ``FULL_BELOW_S`` and every one whose TTIR digest differs from its record (or has
    none).  A kernel whose slow compile is not rerun is the record's, confirmed by its
    TTIR: the adapter and bishengir, pinned, are given exactly what they were given when
    it was recorded.  Returns the results, each marked ``checked`` (``compiled`` or
    ``ttir digest``)."""
    by = {(r["kernel"], r["target"]): r for r in recorded}
    ttir = run(names, targets, jobs, full=False, log=log)
    again = set()
    for r in ttir:
        key = (r["kernel"], r["target"])
        old = by.get(key)
        if r.get("ttir_sha256") is None or old is None \
                or old.get("ttir_sha256") != r["ttir_sha256"] \
                or (old.get("seconds") or 0) <= FULL_BELOW_S:
            again.add(key)
    full = {(r["kernel"], r["target"]): r for r in run(names, targets, jobs, only=again,
                                                       log=log)}
    out = []
    for r in ttir:
        key = (r["kernel"], r["target"])
        if key in full:
            out.append(dict(full[key], checked="compiled"))
        else:
            out.append(dict(by[key], ttir_mulhi=r["ttir_mulhi"], checked="ttir digest"))
            log(f"{key[0]} [{key[1]}]: TTIR as recorded ({r['seconds']} s): the record's "
                f"{'pass' if by[key]['passed'] else 'refusal'} stands")
    return out


def faults(records, recorded=()):
    """What fails the step: a refusal, a kernel over the buffer, mulhi in the int32 form.
    A refusal the record already holds (``recorded``: the same kernel, target and stage)
    is a known gap, listed by ``known`` and not failed on: the record says which kernels
    do not compile yet, and a check fails only where that changes."""
    out = []
    known_refusals = {(r["kernel"], r["target"], r["stage"]) for r in recorded
                      if not r["passed"]}
    for r in records:
        where = f"{r['kernel']} [{r['target']}]"
        if not r["passed"] and (r["kernel"], r["target"], r["stage"]) not in known_refusals:
            message = r.get("message", "(the record keeps no message)")
            out.append(f"{where}: refused at {r['stage']}: {message}")
        if r.get("ub_bits") and r["ub_bits"] > UB_BITS:
            out.append(f"{where}: uses {r['ub_bits']} bits of the unified buffer, over {UB_BITS}")
        if r.get("ttir_mulhi"):
            out.append(f"{where}: its TTIR has {r['ttir_mulhi']} mulhi (lowered to a signed "
                       "product on Ascend)")
    return out


def known(records, recorded):
    """The refusals the record already holds (see ``faults``)."""
    keys = {(r["kernel"], r["target"], r["stage"]) for r in recorded if not r["passed"]}
    return [r for r in records if not r["passed"] and (r["kernel"], r["target"], r["stage"]) in keys]


RECORD_FIELDS = ("kernel", "target", "block", "stage", "passed", "ub_bits",
                 "integer_compares", "ttir_sha256", "seconds")
# What a check compares with the record (a compile's time varies from machine to machine).
COMPARED = RECORD_FIELDS[:-1]
RECORD_PATH = ROOT / "ascend_rand" / "backend" / "triton_kernels" / "ascend_record.py"
_RECORD_HEAD = '''"""Which device kernels compile for which Ascend target, as far as a machine without
CANN can tell: tools/ascend_compile.py's record, checked against the compilers on every
CI run (tools/ascend_compile.sh), read by ``ascend-rand info`` and docs/npu.md.

Generated by ``tools/ascend_compile.py --write``; do not edit.  One entry per kernel and
target: ``stage`` the last stage reached (``hivmc``, CANN's, is missing here: ``passed``
means every check before it ran), ``block`` the NPU tile (launch.NPU_BLOCKS),
``ub_bits`` the unified buffer the kernel uses (of 1,572,864 on A2/A3),
``integer_compares`` the integer vector compares left in its HIVM module.
"""

TOOLS = {"triton-ascend": "3.2.0", "ascendnpu-ir": "1.2.0"}
TARGETS = {"Ascend910B3": "Atlas A2", "Ascend910_9392": "Atlas A3"}
'''


def as_record(records):
    return [{k: r.get(k) for k in RECORD_FIELDS} for r in records]


def record_text(records):
    """The record module's text (``--write``)."""
    import pprint

    return _RECORD_HEAD + "RECORD = " + pprint.pformat(as_record(records), width=96,
                                                       sort_dicts=False) + "\n"


def read_record(path):
    """The RECORD list of a record module."""
    scope = {}
    exec(compile(Path(path).read_text(), str(path), "exec"), scope)
    return scope["RECORD"]


def markdown(records, seconds=True):
    """The results as a markdown table (``seconds``: with each compile's time)."""
    head = ["kernel", "target", "BLOCK", "stage reached", "UB used (of 192 KiB)",
            "integer compares"] + (["s"] if seconds else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        ub = "-" if not r.get("ub_bits") else f"{r['ub_bits'] / 8 / 1024:.1f} KiB"
        stage = ("every offline check" if r["passed"] else
                 "unfinished: bishengir ran past its time" if r["stage"] == "timeout" else
                 f"refused at {r['stage']}")
        compares = r.get("integer_compares")
        cells = [r["kernel"], r["target"], str(r["block"] or "-"), stage, ub,
                 "-" if compares is None else str(compares)]
        if seconds:
            cells.append(str(r.get("seconds", "-")))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", action="append", metavar="KERNEL")
    parser.add_argument("--target", action="append", choices=TARGETS + OTHER_TARGETS)
    parser.add_argument("--merge", nargs="+", metavar="JSON",
                        help="with --write: take the full compiles from these --json files "
                        "(earlier runs of the same sources) instead of compiling again; the "
                        "TTIR digests are taken now")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--block", type=int, help="every kernel's BLOCK (a sweep; not with "
                        "--check or --write)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true",
                       help=f"fail where the results differ from {RECORD_PATH.name}")
    group.add_argument("--write", action="store_true", help=f"rewrite {RECORD_PATH.name}")
    args = parser.parse_args(argv)
    names = args.only or list(kernels())
    unknown = [n for n in names if n not in kernels()]
    if unknown:
        parser.error(f"unknown kernel(s) {unknown}; expected some of {list(kernels())}")
    targets = args.target or list(TARGETS)
    started = time.perf_counter()
    if args.block and (args.check or args.write):
        parser.error("--block is for sweeps: the record holds launch.npu_block's tiles")
    if args.merge and not args.write:
        parser.error("--merge goes with --write")
    if args.check:
        records = run_check(names, targets, args.jobs, read_record(RECORD_PATH))
    elif args.merge:
        records = merged(names, targets, args.jobs, args.merge)
    else:
        records = run(names, targets, args.jobs, args.block)
    print(markdown(records))
    print(f"{len(records)} compiles in {time.perf_counter() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1) + "\n")
    recorded = read_record(RECORD_PATH) if args.check else ()
    problems = faults(records, recorded)
    for r in known(records, recorded):
        print(f"KNOWN: {r['kernel']} [{r['target']}]: refused at {r['stage']}, as recorded: "
              f"{r.get('message', '')}")
    for p in problems:
        print(f"FAIL: {p}")
    if args.write:
        RECORD_PATH.write_text(record_text(records))
    if args.check:
        recorded = [r for r in read_record(RECORD_PATH) if r["kernel"] in names
                    and r["target"] in targets]
        compared = [{k: r.get(k) for k in COMPARED} for r in records]
        wanted = [{k: r.get(k) for k in COMPARED} for r in recorded]
        if compared != wanted:
            for got, want in zip(compared, wanted):
                if got != want:
                    print(f"FAIL: {got['kernel']} [{got['target']}]: now {got}, "
                          f"recorded {want}")
            if len(compared) != len(wanted):
                print(f"FAIL: {len(compared)} results, {len(wanted)} recorded")
            print(f"FAIL: the results differ from {RECORD_PATH} (rerun with --write and "
                  "commit it with the change that moved them)")
            return 1
        print(f"as recorded: {sum(r['checked'] == 'compiled' for r in records)} compiled, "
              f"{sum(r['checked'] == 'ttir digest' for r in records)} by their TTIR digest")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
