"""How the Triton kernels are launched: the grid, tile sizes, arguments and the launch count.

Host side only (no kernel here, and triton is imported only to ask an NPU its core count).  Following triton-ascend's guidance for
vector operators, every kernel runs on a 1-D grid no larger than the
device's core count, each program looping over tiles ``pid, pid + grid, ...``
(``range(pid, tiles, num_programs)`` inside the kernel); a tile is ``BLOCK``
Philox blocks (``4 * BLOCK`` words).  The tile sizes keep a program's live
tiles within an Ascend A2/A3 vector core's 192 KiB unified buffer: a Philox
tile holds about a dozen uint32 vectors (counter lanes, product halves,
carries), 48 KiB at BLOCK = 1024; the two heavier kernels (the 128-bit
integer product, the packed mask's two blocks per byte) use half that.

Every launch goes through ``launch``: it passes ``enable_fp_fusion=False``
(no fused multiply-add changes a float's bits, docs/spec.md section 3.3),
selects the word form and high-word product (``LIMBS16``, ``word_form``) and
counts the launch.
"""

import contextlib
import contextvars
import os

from .word_forms import INT32_WORDS, WORD_FORMS, WORDS_ENV  # noqa: F401  (launch.WORDS_ENV: tests)

# Philox blocks per tile on a GPU, by kernel (powers of two: tl.arange's rule).  The byte
# Bernoulli's is 512, the smallest whose tile is 16 bytes a thread (16-byte stores): 30 % of
# the memory floor by the compiled code's model against 28 % at 1,024 (docs/performance.md;
# 256: 31 % with 8-byte stores, 2,048: 25 %).
BLOCKS = {"words": 1024, "uniform": 1024, "integers": 1024, "integers_128": 512,
          "bernoulli": 512, "bernoulli_packed": 512}
# Philox blocks per tile on an NPU, by kernel family (launch.BLOCKS', normal_draws.BLOCKS'
# and dropout's): tiles whose buffers, with bishengir's double buffering, fit an Atlas
# A2/A3 vector core's 192 KiB unified buffer (tools/ascend_compile.py compiles each kernel
# at its tile and records its use; docs/npu.md).  The Philox kernels take 256 (raw words
# overflow the buffer at 512), the 128-bit integers and Box-Muller 128 (Box-Muller
# overflows at 256); the samplers take 64, the tile their compiles were first seen to
# pass at: each takes 5 to 12 minutes, and larger ones are not yet tried (they use under
# 70 KiB at 64).  The fused dropout takes 32 mask bytes (256 elements): at 64 bishengir
# ran 20 to 30 minutes without finishing its forward; at 32 the float32 forward compiles
# in 2.5 minutes and uses 191.2 KiB, all but 0.8 KiB of the buffer.  The channel and alpha dropouts' apply kernel
# (no Philox: a tile is elements) takes 1,024 elements, at most 105 KiB.
NPU_BLOCKS = {"words": 256, "uniform": 256, "integers": 256, "integers_128": 128,
              "bernoulli": 256, "bernoulli_packed": 256, "ziggurat": 64, "proposal": 64,
              "box_muller": 128, "dropout": 32, "channel_dropout": 1024}
# True: the high word of a 32 x 32 bit product from 16-bit limbs (Ascend A2/A3 have no
# vector umulhi); False: tl.umulhi.  Read at each launch; both give the same bits.
MULHI_LIMBS16 = False
# Programs per streaming multiprocessor on CUDA (each program a few warps).
CUDA_PROGRAMS_PER_SM = 4
# The most programs a grid may have: triton-ascend's limit (65,535), kept on every device
# (a core count is far below it; each program loops over its tiles).
MAX_GRID = 65535
# Programs under the interpreter, which runs them one after the other: enough for every
# program's loop to take several tiles in a test, at no cost otherwise.
INTERPRETER_PROGRAMS = 4
# A fixed grid size, for tests (None: the device's own).
PROGRAMS = None

# Launches made through ``launch`` since import (the tests also count the runtime's own).
launches = 0

_MASK32 = 0xFFFFFFFF


def is_interpreted(kernel):
    """Whether ``kernel`` runs under Triton's interpreter (TRITON_INTERPRET=1 at its import)."""
    return type(kernel).__name__ == "InterpretedFunction"


def int32(word):
    """A 32-bit word (Python int, taken mod 2**32) as the signed int32 with its bits.

    Kernel arguments in [-2**31, 2**31) are int32 both compiled and interpreted
    (Triton types a Python int by its value); the kernel bitcasts them to uint32.

    >>> int32(0xFFFFFFFF), int32(5)
    (-1, 5)
    """
    word &= _MASK32
    return word - (1 << 32) if word >> 31 else word


def stream_args(key, ctr_lo, ctr_hi):
    """(k0, k1, c0, c1, c2, c3): the key and counter words of docs/spec.md section 2.1, as int32."""
    for name, value in (("key", key), ("ctr_lo", ctr_lo), ("ctr_hi", ctr_hi)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"triton kernels: {name} must be an int, got {value!r}")
        if not 0 <= value < 1 << 64:
            raise ValueError(f"triton kernels: {name} must be in [0, 2**64), got {value}")
    return (int32(key), int32(key >> 32), int32(ctr_lo), int32(ctr_lo >> 32),
            int32(ctr_hi), int32(ctr_hi >> 32))


def _core_count(device):
    if device.type == "cuda":
        import torch
        return torch.cuda.get_device_properties(device).multi_processor_count * CUDA_PROGRAMS_PER_SM
    if device.type == "npu":
        # triton-ascend's driver reports the vector core count (the migration guide's grid).
        import triton
        props = triton.runtime.driver.active.utils.get_device_properties(device.index or 0)
        return int(props["num_vectorcore"])
    return os.cpu_count() or 1


def programs(kernel, device, tiles):
    """The grid size: at most one program per core, no more programs than tiles, and at
    most ``MAX_GRID`` (triton-ascend's limit on a grid's programs)."""
    if PROGRAMS is not None:
        cores = PROGRAMS
    elif is_interpreted(kernel):
        cores = INTERPRETER_PROGRAMS
    else:
        cores = _core_count(device)
    return max(1, min(tiles, cores, MAX_GRID))


def check_device(kernel, out):
    """A clear error where a compiled kernel meets a CPU tensor (it needs the interpreter)."""
    if out.device.type == "cpu" and not is_interpreted(kernel):
        raise RuntimeError(
            "the Triton kernels run on CPU tensors only under Triton's interpreter: set "
            "TRITON_INTERPRET=1 before ascend_rand.backend.triton_kernels is imported")


# A function every compiled kernel is passed through before its launch, for a block
# (``wrapping``): torch.library.wrap_triton inside a torch.library.triton_op, so that
# tracing (torch.compile, make_fx) records the launch; None: launched as it is.
_WRAPPER = contextvars.ContextVar("ascend_rand_triton_wrapper", default=None)


@contextlib.contextmanager
def wrapping(wrapper):
    """Launch the block's compiled kernels as ``wrapper(kernel)[grid](...)`` (e.g.
    ``torch.library.wrap_triton``); interpreted kernels are launched as they are."""
    token = _WRAPPER.set(wrapper)
    try:
        yield
    finally:
        _WRAPPER.reset(token)


def word_form(device):
    """The ``LIMBS16`` constexpr for a launch on ``device``: ``INT32_WORDS`` where
    ``ASCEND_RAND_TRITON_WORDS=int32`` or, unset, on an NPU; else ``MULHI_LIMBS16`` (uint32
    words).  ValueError naming any other value of the variable."""
    forced = os.environ.get(WORDS_ENV, "")
    if forced not in ("",) + WORD_FORMS:
        raise ValueError(f"{WORDS_ENV} must be one of {', '.join(WORD_FORMS)} (or unset), "
                         f"got {forced!r}")
    if forced == "int32" or (not forced and device.type == "npu"):
        return INT32_WORDS
    return MULHI_LIMBS16


def launch(kernel, out, tiles, *args, **constexprs):
    """Launch ``kernel`` once over ``tiles`` tiles (one program per core at most)."""
    global launches
    check_device(kernel, out)
    limbs16 = word_form(out.device)  # validated before anything is launched
    grid = (programs(kernel, out.device, tiles),)
    launches += 1
    wrapper = _WRAPPER.get()
    if wrapper is not None and not is_interpreted(kernel):
        kernel = wrapper(kernel)
    kernel[grid](*args, LIMBS16=limbs16, enable_fp_fusion=False, **constexprs)


def npu_block(family):
    """The tile (Philox blocks) of a kernel family on an NPU (``NPU_BLOCKS``)."""
    return NPU_BLOCKS[family]


def block_for(family, block, device):
    """A launch's tile on ``device``: the NPU's (``npu_block``) on an NPU, else ``block``
    (the family's entry in its kernels' table).  Tiles change no bits: an element's value
    depends on its index alone."""
    return npu_block(family) if device.type == "npu" else block


def cdiv(a, b):
    return -(-a // b)
