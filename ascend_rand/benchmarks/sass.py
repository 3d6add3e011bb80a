"""Reading a CUDA kernel's SASS: instructions, basic blocks, loops and one tile's cost.

The parser behind ``kernel_cost`` (``ascend-rand bench --only kernels``), kept apart
from Triton so that it is tested on SASS text written in the tests.  ``cuobjdump
-sass`` prints one instruction a line, ``/*ADDR*/  [@[!]Pn] OPCODE operands ;``;
``parse`` keeps those lines.  A kernel's grid loop is its outermost backward branch
(``BRA`` to a lower address: Triton lays a ``for`` loop out as one contiguous range),
and the loops nested in it (a sampler's ``while``) are the backward branches inside
that range.

``tile_cost`` counts what one trip of the grid loop executes on one thread, the way a
full tile runs it: blocks inside a nested loop count ``passes`` times (the loop's
expected trips, from the caller), and where the loop body forks (a full tile's
unmasked store against a partial tile's masked one) the cheapest way through counts,
found over the body's blocks in address order (forward branches only; the backward
ones are the loops).  Instructions are grouped by the pipe that issues them on sm_90
(``CLASSES``), with the global loads and stores by width and the barriers.
"""

import re
from dataclasses import dataclass, field

_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_PRED = re.compile(r"^@!?U?P[0-9T]\s+")
_TARGET = re.compile(r"\b0x([0-9a-f]+)\b")

# The issue pipes of sm_90 (per SM per clock: fma 128 thread-instructions, the integer
# ALU and IMAD 64, the conversion / special-function unit 16), by opcode prefix.
CLASSES = (
    ("imad", ("IMAD", "IMUL")),
    ("xu", ("MUFU", "I2F", "F2I", "F2F", "I2I", "FRND", "POPC", "FLO", "BREV")),
    ("fma", ("FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "FSEL", "FSET", "FCHK",
             "DADD", "DMUL", "DFMA", "DSETP", "HADD2", "HMUL2", "HFMA2")),
    ("memory", ("LDG", "STG", "LDS", "STS", "LDC", "ULDC", "LDL", "STL", "ATOM", "RED",
                "LD", "ST", "SHFL")),
    ("control", ("BRA", "BAR", "EXIT", "BSSY", "BSYNC", "WARPSYNC", "NOP", "YIELD",
                 "CALL", "RET", "JMP", "BMOV", "VOTE", "REDUX", "S2R", "S2UR", "CS2R",
                 "MEMBAR", "DEPBAR", "ERRBAR")),
)
# Uniform-datapath instructions (U-prefixed, once per warp, not per thread) are their own
# class: they issue, but on the uniform pipe.
UNIFORM = "uniform"
# Everything else integer or logical (IADD3, LOP3, SHF, ISETP, SEL, LEA, PRMT, IMNMX, ...)
ALU = "alu"


def opclass(opcode):
    """The pipe class of an opcode: ``imad``, ``xu``, ``fma``, ``memory``, ``control``,
    ``uniform`` or ``alu``.

    >>> opclass("IMAD.WIDE.U32"), opclass("LOP3.LUT"), opclass("UIADD3"), opclass("STG.E.128")
    ('imad', 'alu', 'uniform', 'memory')
    """
    if opcode.startswith("U") and not opcode.startswith("ULDC"):
        return UNIFORM
    for name, prefixes in CLASSES:
        if any(opcode == p or opcode.startswith(p + ".") for p in prefixes):
            return name
    return ALU


@dataclass
class Instr:
    addr: int
    predicate: str
    opcode: str
    operands: str

    @property
    def base(self):
        """The opcode without its modifiers (``STG`` of ``STG.E.128``)."""
        return self.opcode.split(".")[0]

    def target(self):
        """A branch's target address, or None."""
        if self.base not in ("BRA", "JMP"):
            return None
        m = _TARGET.search(self.operands)
        return int(m.group(1), 16) if m else None


def parse(text):
    """The instructions of ``cuobjdump -sass`` output (one function's), in address order."""
    out = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        body = m.group(2)
        pm = _PRED.match(body)
        predicate = pm.group(0).strip() if pm else ""
        rest = body[pm.end():] if pm else body
        opcode, _, operands = rest.partition(" ")
        out.append(Instr(int(m.group(1), 16), predicate, opcode, operands.strip()))
    return out


def loops(instrs):
    """Every backward branch as a loop (start address, branch address), outermost first
    (a wider range before the ranges inside it)."""
    found = []
    for ins in instrs:
        t = ins.target()
        if t is not None and t <= ins.addr:
            found.append((t, ins.addr))
    return sorted(set(found), key=lambda r: (r[0] - r[1], r[0]))


def _width(ins):
    """The bytes a global load or store moves per thread."""
    mods = ins.opcode.split(".")[1:]
    for m, w in (("128", 16), ("64", 8), ("U8", 1), ("S8", 1), ("U16", 2), ("S16", 2)):
        if m in mods:
            return w
    return 4


@dataclass
class TileCost:
    """What one grid-loop trip executes per thread (see ``tile_cost``)."""
    total: float = 0.0
    by_class: dict = field(default_factory=dict)
    stores: dict = field(default_factory=dict)  # bytes per thread -> instructions
    loads: dict = field(default_factory=dict)
    barriers: float = 0.0
    shared: float = 0.0  # LDS / STS
    inner_loops: list = field(default_factory=list)  # (instructions per pass, passes)
    opcodes: dict = field(default_factory=dict)  # opcode -> weighted count

    def add(self, ins, weight):
        self.total += weight
        self.opcodes[ins.opcode] = self.opcodes.get(ins.opcode, 0.0) + weight
        cls = opclass(ins.opcode)
        self.by_class[cls] = self.by_class.get(cls, 0.0) + weight
        if ins.base in ("STG", "LDG"):
            table = self.stores if ins.base == "STG" else self.loads
            w = _width(ins)
            table[w] = table.get(w, 0.0) + weight
        elif ins.base == "BAR":
            self.barriers += weight
        elif ins.base in ("LDS", "STS"):
            self.shared += weight


def _blocks(body):
    """Split ``body`` (instructions in address order) into basic blocks: lists of
    instructions, a block ending at a branch or exit, or before a branch target."""
    targets = {ins.target() for ins in body} - {None}
    blocks, cur = [], []
    for ins in body:
        if cur and ins.addr in targets:
            blocks.append(cur)
            cur = []
        cur.append(ins)
        if ins.base in ("BRA", "JMP", "EXIT", "RET"):
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    return blocks


def tile_cost(instrs, trips=()):
    """The cost of one trip of the outermost loop (TileCost), per thread.

    ``trips``: how many times, on average, each loop nested in it runs its body in one
    trip of the outer loop (not per entry: a retry loop entered in one tile in fifty
    has trips near 0.02 times its passes), the nested loops in address order of their
    starts; a missing one counts 1.  An instruction counts the trips of the innermost
    loop holding it.  ValueError where the kernel has no loop.
    """
    found = [r for r in loops(instrs) if r[0] < r[1]]  # (a branch to itself is a trap)
    if not found:
        raise ValueError("no loop in this SASS: the kernel has no grid loop")
    start, end = found[0]
    inner = sorted(r for r in found[1:] if start <= r[0] and r[1] <= end)
    weights = {r: (trips[k] if k < len(trips) else 1.0) for k, r in enumerate(inner)}
    body = [ins for ins in instrs if start <= ins.addr <= end]
    blocks = _blocks(body)
    addr_of = {b[0].addr: k for k, b in enumerate(blocks)}

    def innermost(addr):
        holding = [r for r in inner if r[0] <= addr <= r[1]]
        return min(holding, key=lambda r: r[1] - r[0]) if holding else None

    def weight(ins):
        r = innermost(ins.addr)
        return 1.0 if r is None else weights[r]

    # Cheapest way from the first block to the last (the loop's branch back): dynamic
    # programming in address order over forward edges.  Nested loops are counted by
    # their trips whatever way is taken, so their blocks cost nothing here.
    inf = float("inf")
    cost = [inf] * len(blocks)
    prev = [None] * len(blocks)
    cost[0] = 0.0
    for k, b in enumerate(blocks):
        if cost[k] == inf:
            continue
        here = cost[k] + sum(weight(ins) for ins in b if innermost(ins.addr) is None)
        last = b[-1]
        succ = []
        t = last.target()
        unconditional = last.base in ("BRA", "JMP") and not last.predicate
        if not (last.base in ("EXIT", "RET") and not last.predicate):
            if not unconditional and k + 1 < len(blocks):
                succ.append(k + 1)
            if t is not None and t > last.addr and t in addr_of:
                succ.append(addr_of[t])
            if innermost(last.addr) is not None and k + 1 < len(blocks) \
                    and k + 1 not in succ:
                succ.append(k + 1)  # out of a nested loop's back branch
        for s in succ:
            if here < cost[s]:
                cost[s], prev[s] = here, k
    k = len(blocks) - 1
    if cost[k] == inf:
        raise ValueError("the grid loop's branch back is not reachable from its start")
    on_path = set()
    while k is not None:
        on_path.add(k)
        k = prev[k]
    result = TileCost()
    for k, b in enumerate(blocks):
        for ins in b:
            if innermost(ins.addr) is not None:
                result.add(ins, weight(ins))
            elif k in on_path:
                result.add(ins, 1.0)
    for r in inner:
        size = sum(1 for ins in body if innermost(ins.addr) == r)
        result.inner_loops.append((size, weights[r]))
    return result
