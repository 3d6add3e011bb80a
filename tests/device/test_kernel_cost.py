"""The device kernels held to budgets by their compiled code, and the SASS reader itself.

``ascend_rand.benchmarks.kernel_cost`` compiles every Triton kernel for sm_90 with
Triton's own ptxas (no GPU) and reads one grid-loop trip from the SASS
(``ascend_rand.benchmarks.sass``).  The compiled code is the same on every machine, so
a budget can be held in CI: a change that adds instructions, narrows a store from 16
bytes, adds barriers or spills registers fails here.  The budgets are the figures of
docs/performance.md's table ("Kernels by their compiled code") plus about 5 %.

The reader is tested first, on SASS written here, so that the budgets rest on counts
that are known to be right.
"""

import importlib.util

import pytest

from ascend_rand.benchmarks import sass

# -- the reader, on SASS written here -------------------------------------------------------------

# A grid loop (0x0040 .. 0x0120) holding a fork (the full tile's one wide store at 0x00a0,
# the partial tile's two narrow ones at 0x00c0 .. 0x00d0) and a retry loop (0x0100 ..
# 0x0110, its branch back at 0x0110), then the exit and the trap after it.
_SASS = """
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   IMAD.SHL.U32 R2, R0, 0x4, RZ ;
        /*0030*/                   ULDC UR4, c[0x0][0x210] ;
        /*0040*/                   IMAD.HI.U32 R4, R2, R3, RZ ;
        /*0050*/                   LOP3.LUT R5, R4, R2, RZ, 0x3c, !PT ;
        /*0060*/                   I2FP.F32.U32 R6, R5 ;
        /*0070*/                   FMUL R6, R6, 5.9604644775390625e-08 ;
        /*0080*/                   ISETP.GE.AND P0, PT, R7, 0x1000, PT ;
        /*0090*/              @!P0 BRA 0xc0 ;
        /*00a0*/                   STG.E.128 desc[UR6][R8.64], R12 ;
        /*00b0*/                   BRA 0xe0 ;
        /*00c0*/               @P1 STG.E desc[UR6][R8.64], R12 ;
        /*00d0*/               @P2 STG.E desc[UR6][R8.64+0x4], R13 ;
        /*00e0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*00f0*/                   UIADD3 UR5, UR5, 0x1, URZ ;
        /*0100*/                   MUFU.LG2 R9, R9 ;
        /*0110*/               @P3 BRA 0x100 ;
        /*0120*/               @P4 BRA 0x40 ;
        /*0130*/                   EXIT ;
        /*0140*/                   BRA 0x140;
"""


def test_parse_reads_addresses_predicates_and_opcodes():
    ins = sass.parse(_SASS)
    assert len(ins) == 21 and ins[0].addr == 0 and ins[-1].addr == 0x140
    st = ins[12]
    assert (st.addr, st.predicate, st.opcode, st.base) == (0xC0, "@P1", "STG.E", "STG")
    assert ins[9].target() == 0xC0 and ins[9].predicate == "@!P0"
    assert ins[10].target() is None  # a store is not a branch


def test_loops_outermost_first():
    ins = sass.parse(_SASS)
    # the trap's branch to itself is a loop of one instruction; tile_cost leaves it out
    assert sass.loops(ins) == [(0x40, 0x120), (0x100, 0x110), (0x140, 0x140)]


def test_tile_cost_takes_the_full_tiles_way_and_weights_the_retry_loop():
    ins = sass.parse(_SASS)
    cost = sass.tile_cost(ins, [2.5])
    # on the way: 0x40-0x90 (6), the wide store and its branch (2), 0xe0, 0xf0 (2), the
    # loop's own branch back (1); the retry loop's two instructions 2.5 times each
    assert cost.total == pytest.approx(11 + 2 * 2.5)
    assert cost.stores == {16: 1.0}  # the partial tile's narrow stores are not on it
    assert cost.barriers == 1.0
    assert cost.by_class["xu"] == pytest.approx(2.5)  # MUFU, in the retry loop
    assert cost.by_class["uniform"] == 1.0  # UIADD3
    assert cost.by_class["imad"] == 1.0 and cost.by_class["fma"] == 1.0
    assert cost.inner_loops == [(2, 2.5)]
    # a retry loop that runs no pass costs nothing
    assert sass.tile_cost(ins, [0.0]).total == pytest.approx(11)


def test_tile_cost_refuses_code_without_a_loop():
    with pytest.raises(ValueError, match="no loop"):
        sass.tile_cost(sass.parse("        /*0000*/                   EXIT ;\n"))


@pytest.mark.parametrize("opcode, cls", [
    ("IMAD.WIDE.U32", "imad"), ("IMAD.HI.U32", "imad"), ("LOP3.LUT", "alu"),
    ("IADD3.X", "alu"), ("FMUL", "fma"), ("FSETP.GT.AND", "fma"), ("MUFU.EX2", "xu"),
    ("I2F.U32", "xu"), ("STG.E.128", "memory"), ("ULDC.64", "memory"),
    ("UIADD3", "uniform"), ("BAR.SYNC.DEFER_BLOCKING", "control")])
def test_opclass(opcode, cls):
    assert sass.opclass(opcode) == cls


# -- the kernels, compiled ------------------------------------------------------------------------

# Instructions per output element at most (about 5 % over docs/performance.md's figure);
# and, where given, the narrowest widest-store and widest-load (bytes) and the barriers a
# tile may have.  Every kernel: no register spills.
BUDGETS = {
    "raw uint32": (18.5, 16, None, 0),
    "uniform float32": (21.7, 16, None, 0),
    "uniform float16": (26.8, 16, None, 0),
    "uniform bfloat16": (22.1, 16, None, 0),
    "uniform float64": (39.7, 16, None, 0),
    "integers int32, range <= 2**32": (53.3, 16, None, 0),
    "integers int64, range > 2**32": (146.5, 16, None, 0),
    "bernoulli (bytes)": (27.1, 16, None, 0),
    "packed mask (per bit)": (24.1, None, None, 0),
    "ziggurat float32": (54.1, 16, None, 4),
    "truncated normal float32 [-2, 2] (ziggurat)": (101.6, 16, None, 12),
    "truncated normal float32 [1, 1.5] (uniform proposal)": (314.4, 16, None, 44),
    "truncated normal float32 [2, 5] (exponential proposal)": (313.9, 16, None, 22),
    "box-muller float32": (80.0, 16, None, 0),
    "dropout forward float32 + mask": (35.9, 16, 16, 0),
    "dropout backward float32 (mask)": (12.7, 16, 16, 2),
    "dropout backward float32 (regenerate)": (33.7, 16, 16, 0),
    "channel dropout float32 (channels of 64)": (39.7, 16, 16, 0),
    "raw uint32 [int32 words]": (81.5, 16, None, 0),
    "uniform float32 [int32 words]": (84.7, 16, None, 0),
    "uniform float16 [int32 words]": (90.0, 16, None, 0),
    "integers int32, range <= 2**32 [int32 words]": (202.5, 16, None, 0),
    "bernoulli (bytes) [int32 words]": (90.9, None, None, 0),
    "packed mask (per bit) [int32 words]": (87.5, None, None, 0),
    "ziggurat float32 [int32 words]": (135.5, 16, None, 4),
    "box-muller float32 [int32 words]": (144.1, 16, None, 0),
    "dropout forward float32 + mask [int32 words]": (99.8, 16, 16, 0),
}

needs_triton = pytest.mark.skipif(importlib.util.find_spec("triton") is None,
                                  reason="triton is not installed")


@pytest.fixture(scope="module")
def report():
    from ascend_rand.benchmarks import kernel_cost

    why = kernel_cost.available()
    if why:
        pytest.skip(why)
    return kernel_cost.run()


@needs_triton
def test_every_kernel_has_a_budget(report):
    names = {r["kernel"] for r in report["rows"] if r["group"] != "reference"}
    assert names == set(BUDGETS)


@needs_triton
@pytest.mark.parametrize("name", sorted(BUDGETS))
def test_kernel_within_budget(report, name):
    row = next(r for r in report["rows"] if r["kernel"] == name)
    instr, store, load, barriers = BUDGETS[name]
    assert row["instr_per_element"] <= instr, row
    if store is not None:
        assert row["widest_store_bytes"] >= store, row
    if load is not None:
        assert row["widest_load_bytes"] >= load, row
    if barriers is not None:
        assert row["barriers_per_tile"] <= barriers, row
    assert not row["spill_bytes"], row


@needs_triton
def test_references_are_what_they_claim(report):
    """The reference kernels compiled the same way: the store-only floor is a handful of
    instructions with 16-byte stores; randint4x's Philox is 10 rounds of two 32 x 32 bit
    products per block (ours has 20 IMAD-class an element at most: 4 per round per block,
    less what the compiler folds); inductor's per-element tl.rand costs about 4 of them."""
    by = {r["function"]: r for r in report["rows"] if r["group"] == "reference"}
    floor, r4x, rand = by["store_zeros"], by["randint4x_store"], by["rand_per_element"]
    assert floor["instr_per_element"] < 2 and floor["widest_store_bytes"] == 16
    assert 8 <= r4x["by_class"]["imad"] <= 10 and r4x["widest_store_bytes"] == 16
    assert 3 <= rand["instr_per_element"] / r4x["instr_per_element"] <= 4.5
    assert floor["floor_share"] == 1.0


@needs_triton
def test_the_retry_work_is_counted(report):
    """The samplers' second phase runs for their rejected elements only: the ziggurat's
    retry loop's weight per element is near P(rejected at step 1) (1.5 %) times the cost
    of a pass, not the pass itself; the truncated normal's [-2, 2] rejects four times as
    many; the uniform proposal on [1, 1.5] rejects about 27 % at attempt 0 and the
    exponential on [2, 5] about 7 %, so their retries are under half their work."""
    by = {r["kernel"]: r for r in report["rows"]}
    zig = by["ziggurat float32"]
    trunc = by["truncated normal float32 [-2, 2] (ziggurat)"]
    assert 0 < zig["retry_instr_per_element"] < 0.25 * zig["instr_per_element"]
    assert 3 < trunc["retry_instr_per_element"] / zig["retry_instr_per_element"] < 8
    uniform = by["truncated normal float32 [1, 1.5] (uniform proposal)"]
    expo = by["truncated normal float32 [2, 5] (exponential proposal)"]
    assert 0 < uniform["retry_instr_per_element"] < 0.5 * uniform["instr_per_element"]
    assert 0 < expo["retry_instr_per_element"] < 0.2 * expo["instr_per_element"]


def test_beside_measured_sets_the_model_beside_the_rates():
    """bench/device_check.sh's table: the model's G samples/s beside the device benchmark's,
    at the largest size timed; dropout's two passes predicted as their times added."""
    from ascend_rand.benchmarks import kernel_cost

    kernels = [{"kernel": "uniform float32", "predicted_g_per_s": 1000.0},
               {"kernel": "dropout forward float32 + mask", "predicted_g_per_s": 500.0},
               {"kernel": "dropout backward float32 (mask)", "predicted_g_per_s": 500.0}]
    device = [{"draw": "uniform float32", "n": 10 ** 6, "peer": "ascend_rand", "gsps": 300.0},
              {"draw": "uniform float32", "n": 10 ** 8, "peer": "ascend_rand", "gsps": 800.0},
              {"draw": "uniform float32", "n": 10 ** 8, "peer": "torch.rand", "gsps": 700.0},
              {"draw": "uniform float32", "n": 10 ** 8, "peer": "ascend_rand", "launches": 1}]
    rows = {r["draw"]: r for r in kernel_cost.beside_measured(kernels, device)}
    u = rows["uniform float32"]
    assert (u["n"], u["predicted_g_per_s"], u["measured_g_per_s"]) == (10 ** 8, 1000.0, 800.0)
    assert u["measured_over_predicted"] == 0.8 and u["peers"] == {"torch.rand": 700.0}
    d = rows["dropout forward+backward, float32, p 0.1"]
    assert d["predicted_g_per_s"] == 250.0 and d["measured_g_per_s"] is None
    assert "normal float32 (ziggurat)" not in rows  # no kernel row for it here
    table = kernel_cost.beside_markdown(list(rows.values()))
    assert "| uniform float32 | 1e+08 | 1000 | 800 | 0.80 | torch.rand 700 |" in table
