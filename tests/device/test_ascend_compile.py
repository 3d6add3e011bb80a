"""tools/ascend_compile.py, the Ascend compile check, from this side: what it compiles, how
it reads bishengir's output, and the record it keeps (the compiles themselves run in CI's
own environment, tools/ascend_compile.sh: triton-ascend cannot share this one).

- its kernel list is every kernel an NPU launches, each signature in the kernel's own
  parameter order (Triton 3.2's ASTSource reads a signature by position) and complete;
- ``ub_bits`` and ``integer_compares`` read HIVM text written here, ``_first_error``
  finds the compiler's message in a log written here;
- the committed record (``ascend_record.py``) holds every kernel and target at the NPU's
  tiles, and docs/npu.md's table is the record's;
- ``launch.block_for`` gives an NPU launch the NPU's tile, any other device its table's.
"""

import importlib
import inspect
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import ascend_compile as ac  # noqa: E402
import triton_support  # noqa: E402  (tests/triton_support.py, on sys.path by conftest)

from ascend_rand.backend.triton_kernels import ascend_record, launch  # noqa: E402

MODULES = ("words", "uniform", "integers", "bernoulli", "rejection", "normal", "truncated",
           "dropout", "channel_dropout", "state")
# the kernel modules imported as the other Triton test files import them (the interpreter's
# mode, which triton fixes at its first import)
with triton_support.kernel_imports():
    triton_support.import_triton()
    KERNEL_MODULES = {m: importlib.import_module(f"ascend_rand.backend.triton_kernels.{m}")
                      for m in MODULES}

# Kernels that only draw float64, which an NPU refuses before any launch (spec A.6).
FLOAT64_ONLY = {"uniform_f64_kernel", "ziggurat_f64_kernel", "box_muller_f64_kernel",
                "proposal_f64_kernel"}


def _entry_points():
    found = {}
    for m, module in KERNEL_MODULES.items():
        for name, obj in vars(module).items():
            fn = getattr(obj, "fn", None)  # a JITFunction's or an InterpretedFunction's
            if name.endswith("_kernel") and callable(fn) and fn.__module__ == module.__name__:
                found[name] = fn
    return found


def test_every_npu_kernel_is_compiled():
    entry = _entry_points()
    assert len(entry) >= 14
    listed = {kernel for _, kernel, _, _, _ in ac.kernels().values()}
    assert listed == set(entry) - FLOAT64_ONLY


@pytest.mark.parametrize("name", sorted(ac.kernels()))
def test_signature_in_parameter_order(name):
    module, kernel, signature, constexprs, family = ac.kernels()[name]
    fn = getattr(KERNEL_MODULES[module], kernel).fn
    params = list(inspect.signature(fn).parameters)
    runtime = [p for p in params if p in signature]
    assert list(signature) == runtime, (name, params)
    given = set(signature) | set(constexprs) | {"LIMBS16"}
    if family is not None:
        given |= {"BLOCK"} | ({"CAP"} if "scratch" in signature else set())
    assert set(params) == given, (name, set(params) ^ given)
    if family is not None:
        assert family in launch.NPU_BLOCKS


HIVM = """
    %c0_i64 = arith.constant 0 : i64
    %c4096_i64 = arith.constant 4096 : i64
    %c_big = arith.constant 65536 : i64
    %0 = hivm.hir.pointer_cast(%c0_i64) : memref<256x2x2xf32, #hivm.address_space<ub>>
    %1 = hivm.hir.pointer_cast(%c4096_i64, %c_big) : memref<256xi32, #hivm.address_space<ub>>
    %2 = hivm.hir.pointer_cast(%c0_i64) : memref<1024xi16, #hivm.address_space<gm>>
    hivm.hir.vcmp ins(%a, %b : memref<256xi32, #hivm.address_space<ub>>) outs(%m)
    hivm.hir.vcmp ins(%c, %d : memref<256xf32, #hivm.address_space<ub>>) outs(%n)
    func.call @vcmp_eq_1d_int32_t(%e, %f, %g) : (memref<?xi32>, memref<?xi32>, memref<?xi1>) -> ()
    func.call @vcmp_lt_1d_float_t(%e, %f, %g) : (memref<?xf32>, memref<?xf32>, memref<?xi1>) -> ()
    func.call @vcmp_ne_1d_uint8_t(%e, %f, %g) : (memref<?xi8>, memref<?xi8>, memref<?xi1>) -> ()
"""


def test_ub_bits_is_the_highest_buffer_end():
    # the buffers: [0, 4096) bytes, and 1024 bytes at 4096 and (double buffered) at 65536;
    # the gm one is not the unified buffer
    assert ac.ub_bits(HIVM) == 8 * (65536 + 1024)
    assert ac.ub_bits("func.func @k() { return }") is None


def test_integer_compares_count_integer_vectors_only():
    # the i32 hivm.hir.vcmp, the int32 and uint8 calls; not the f32 ones
    assert ac.integer_compares(HIVM) == 3


def test_first_error_is_the_compilers_message():
    log = ("[NOTE] Due to Ub overflow, automatically set enable-code-motion to false\n"
           "///------------------[ERROR][Triton][BEG]------------------\n"
           'loc("/tmp/tmpab12/kernel.ttadapter.mlir":3:3): error: ub overflow, requires '
           "3481600 bits while 1572864 bits available!\n"
           "[ERROR] Failed to run BiShengIR pipeline\n")
    msg = ac._first_error(log)
    assert msg.startswith('loc("<tmp>":3:3): error: ub overflow, requires 3481600 bits')
    assert ac._first_error("LLVM ERROR: PlanMemory Traverse IR Failed!\n#0 0x1 frame\n") == \
        "LLVM ERROR: PlanMemory Traverse IR Failed!"


def test_faults_name_refusals_overflows_and_mulhi():
    ok = {"kernel": "k", "target": "Ascend910B3", "passed": True, "stage": "hivmc",
          "ub_bits": 1000, "ttir_mulhi": 0}
    assert ac.faults([ok]) == []
    over = dict(ok, ub_bits=ac.UB_BITS + 8)
    mulhi = dict(ok, ttir_mulhi=2)
    refused = dict(ok, passed=False, stage="bishengir", message="error: x")
    got = ac.faults([over, mulhi, refused])
    assert len(got) == 3 and "unified buffer" in got[0] and "mulhi" in got[1]
    assert got[2] == "k [Ascend910B3]: refused at bishengir: error: x"
    # a refusal the record holds is a known gap, not a failure; one at another stage fails
    recorded = [dict(refused, message="older words")]
    assert ac.faults([refused], recorded) == [] and ac.known([refused], recorded) == [refused]
    moved = dict(refused, stage="adapter")
    assert len(ac.faults([moved], recorded)) == 1 and ac.known([moved], recorded) == []


def test_the_record_holds_every_kernel_and_target_at_the_npu_tiles():
    table = ac.kernels()
    got = {(r["kernel"], r["target"]): r for r in ascend_record.RECORD}
    assert set(got) == {(k, t) for k in table for t in ac.TARGETS}
    assert set(ascend_record.TARGETS) == set(ac.TARGETS)
    for (kernel, _), r in got.items():
        family = table[kernel][4]
        assert r["block"] == (None if family is None else launch.npu_block(family)), r
        assert set(r) == set(ac.RECORD_FIELDS)
        assert r["passed"] == (r["stage"] == "hivmc"), r
        if r["passed"]:
            assert 0 < r["ub_bits"] <= ac.UB_BITS, r
    # the record is what --write writes
    assert ac.record_text(ascend_record.RECORD) == \
        Path(ascend_record.__file__).read_text()


def test_npu_md_holds_the_records_table():
    text = (ROOT / "docs" / "npu.md").read_text()
    assert ac.markdown(ascend_record.RECORD, seconds=False) in text


class _Device:
    def __init__(self, kind):
        self.type = kind


def test_block_for_gives_an_npu_its_tile():
    assert launch.block_for("dropout", 256, _Device("npu")) == launch.NPU_BLOCKS["dropout"]
    assert launch.block_for("dropout", 256, _Device("cuda")) == 256
    assert launch.block_for("words", 1024, _Device("cpu")) == 1024
    with pytest.raises(KeyError):
        launch.block_for("no such family", 4, _Device("npu"))


def test_ci_runs_the_ascend_compile_check():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "step bash tools/ascend_compile.sh" in ci
    script = (ROOT / "tools" / "ascend_compile.sh").read_text()
    assert '"triton-ascend==3.2.0" "ascendnpu-ir==1.2.0"' in script
    assert "set -- --check" in script


def test_a_grid_has_at_most_65535_programs(monkeypatch):
    """triton-ascend's grid limit holds whatever a device reports as its core count."""
    monkeypatch.setattr(launch, "PROGRAMS", None)
    monkeypatch.setattr(launch, "_core_count", lambda device: 10 ** 6)
    compiled = object()  # not an InterpretedFunction: the device's own core count applies
    assert launch.programs(compiled, _Device("npu"), 10 ** 9) == 65535
    assert launch.programs(compiled, _Device("npu"), 7) == 7


TTIR_A = """#loc = loc("/checkout-a/ascend_rand/backend/triton_kernels/words.py":90:0)
module {
  tt.func public @raw_kernel(%arg0: !tt.ptr<i32> loc("/checkout-a/x.py":90:0)) {
    %c1_i32 = arith.constant 1 : i32 loc(#loc1)
    tt.return loc(#loc2)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("/checkout-a/ascend_rand/backend/triton_kernels/words.py":94:8)
#loc2 = loc(callsite(#loc3 at #loc1))
"""


def test_ttir_digest_ignores_where_the_source_is_not_what_it_says():
    moved = TTIR_A.replace("/checkout-a", "/checkout-b").replace(":94:8", ":97:8")
    assert ac.ttir_digest(moved) == ac.ttir_digest(TTIR_A)
    changed = TTIR_A.replace("arith.constant 1 : i32", "arith.constant 2 : i32")
    assert ac.ttir_digest(changed) != ac.ttir_digest(TTIR_A)


def test_check_compiles_the_fast_and_the_changed_and_trusts_the_rest(monkeypatch):
    """run_check: every kernel to TTIR; in full those recorded as fast, those whose TTIR
    digest moved and those with no record; a slow unchanged one keeps its record."""
    names, targets = ["fast", "slow", "moved", "new"], ["Ascend910B3"]
    recorded = [dict(kernel=n, target="Ascend910B3", block=64, stage="hivmc", passed=True,
                     ub_bits=100, integer_compares=0, ttir_sha256=f"d-{n}",
                     seconds=10 if n == "fast" else 900) for n in names[:3]]
    calls = []

    def fake_run(names_, targets_, jobs, block=None, full=True, only=None, log=print):
        calls.append((full, only))
        picked = [(n, t) for n in names_ for t in targets_ if only is None or (n, t) in only]
        return [dict(kernel=n, target=t, block=64, stage="hivmc" if full else None,
                     passed=True if full else None, ub_bits=100 if full else None,
                     integer_compares=0, ttir_mulhi=0, seconds=1.0,
                     ttir_sha256="d-x" if n == "moved" else f"d-{n}") for n, t in picked]

    monkeypatch.setattr(ac, "run", fake_run)
    out = ac.run_check(names, targets, 2, recorded, log=lambda *_: None)
    assert calls[0] == (False, None)
    assert calls[1][0] is True and calls[1][1] == {("fast", "Ascend910B3"),
                                                   ("moved", "Ascend910B3"),
                                                   ("new", "Ascend910B3")}
    by = {r["kernel"]: r for r in out}
    assert by["slow"]["checked"] == "ttir digest" and by["slow"]["seconds"] == 900
    assert all(by[n]["checked"] == "compiled" for n in ("fast", "moved", "new"))
