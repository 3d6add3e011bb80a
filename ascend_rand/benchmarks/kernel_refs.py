"""The reference kernels ``kernel_cost`` compiles beside the project's, in the same run.

Each is written the way the project's kernels are launched (a 1-D grid loop over
tiles of ``4 * BLOCK`` float32 outputs, the count ``n`` not specialised, fusion off):

- ``store_zeros``: zeros, 16-byte stores for full tiles: the memory floor;
- ``randint4x_store``: ``tl.randint4x`` once per 4 outputs (Triton's Philox, a 64-bit
  counter), the 4 words joined into one 16-byte store: the floor of a counter-based
  generator in Triton;
- ``rand_per_element``: ``tl.rand(seed, offset)`` once per element, what
  torch.compile's inductor emits for ``torch.rand`` (a Philox block per element, one
  lane kept).

Imported by ``kernel_cost`` only (it imports triton).
"""

import triton
import triton.language as tl


@triton.jit(do_not_specialize=["n"])
def store_zeros(out_ptr, n, BLOCK: tl.constexpr):
    k = tl.arange(0, 4 * BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 4 * BLOCK), tl.num_programs(0)):
        base = tl.cast(tile, tl.int64) * (4 * BLOCK)
        left = tl.minimum(n - base, 4 * BLOCK).to(tl.int32)
        zero = tl.zeros([4 * BLOCK], tl.float32)
        if left >= 4 * BLOCK:
            tl.store(out_ptr + base + k, zero)
        else:
            tl.store(out_ptr + base + k, zero, mask=k < left)


@triton.jit(do_not_specialize=["n", "seed"])
def randint4x_store(out_ptr, n, seed, BLOCK: tl.constexpr):
    j = tl.arange(0, BLOCK)
    k = tl.arange(0, 4 * BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 4 * BLOCK), tl.num_programs(0)):
        first = tl.cast(tile, tl.int64) * BLOCK
        x0, x1, x2, x3 = tl.randint4x(seed, (first + j).to(tl.uint32))
        y = tl.reshape(tl.join(tl.join(x0, x2), tl.join(x1, x3)), [4 * BLOCK])
        y = y.to(tl.int32, bitcast=True)
        left = tl.minimum(n - 4 * first, 4 * BLOCK).to(tl.int32)
        if left >= 4 * BLOCK:
            tl.store(out_ptr + 4 * first + k, y)
        else:
            tl.store(out_ptr + 4 * first + k, y, mask=k < left)


@triton.jit(do_not_specialize=["n", "seed"])
def rand_per_element(out_ptr, n, seed, BLOCK: tl.constexpr):
    k = tl.arange(0, 4 * BLOCK)
    for tile in range(tl.program_id(0), tl.cdiv(n, 4 * BLOCK), tl.num_programs(0)):
        base = tl.cast(tile, tl.int64) * (4 * BLOCK)
        idx = base + k
        y = tl.rand(seed, idx.to(tl.uint32))
        left = tl.minimum(n - base, 4 * BLOCK).to(tl.int32)
        if left >= 4 * BLOCK:
            tl.store(out_ptr + idx, y)
        else:
            tl.store(out_ptr + idx, y, mask=k < left)
