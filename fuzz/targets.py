"""Fuzz targets over the native layer's Python entry points (fuzz/fuzz_native.py runs them).

Each target takes a ``Junk`` (fuzz/junk.py) and makes one call, or a short
sequence, with structured junk arguments.  It returns normally or raises; the
harness judges the outcome (``fuzz_native.judge``): a result, or an exception
of the kinds the target allows, is a pass.  The public API may answer bad
input only with ValueError or TypeError; the raw ``_native`` functions also
with OverflowError (a Python int outside the C type pybind11 converts to) and
BufferError (a buffer that cannot be exported as asked).
"""

import ctypes
import math
import pickle

import numpy as np

import ascend_rand
from ascend_rand import _native, stateless

from junk import SANE_BYTES

PUBLIC = (ValueError, TypeError)
RAW = (ValueError, TypeError, OverflowError, BufferError)

ENGINES = ["philox", "mt19937"]
BACKENDS = ["native", "numpy", "auto"]
DRAWS = ["raw", "random", "uniform", "integers", "normal", "standard_normal", "truncated_normal",
         "bernoulli", "dropout_mask", "permutation", "shuffle", "choice"]


def elements(size):
    """The element count a size argument asks for, or None when it is not a plain size."""
    if size is None:
        return 1
    if isinstance(size, (bool, np.bool_)):
        return None
    if isinstance(size, (int, np.integer)):
        return int(size)
    if isinstance(size, np.ndarray) and size.ndim <= 1 and size.dtype.kind in "iu":
        size = [int(d) for d in size.reshape(-1)]
    if isinstance(size, (tuple, list)) and all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in size):
        count = 1
        for d in size:
            count *= int(d)
        return count
    return None


def too_big(*sizes):
    """True when some size asks for more than SANE_BYTES (MemoryError is then an answer)."""
    return any(n is not None and n * 16 > SANE_BYTES for n in map(elements, sizes))


def _args(j, name):
    """Positional and keyword junk for the draw `name` (the Generator's signature)."""
    size, kw = j.size(), {}
    if j.chance():
        kw["dtype"] = j.dtype()
    if j.chance():
        kw["out"] = j.out()
    if name in ("raw", "random", "standard_normal"):
        args = ()
    elif name == "uniform":
        args = (j.number(), j.number())
    elif name == "integers":
        args = (j.integer(), j.integer() if j.chance() else None)
        kw["endpoint"] = j.value() if j.small(3) == 0 else j.chance()
    elif name == "normal":
        args = (j.number(), j.number())
    elif name == "truncated_normal":
        args = (j.number(), j.number(), j.number(), j.number())
    elif name in ("bernoulli", "dropout_mask"):
        kw.pop("dtype", None)
        args = (j.probability(),)
        if name == "bernoulli" and j.chance():
            kw["packed"] = j.value() if j.small(3) == 0 else True
    else:
        args = ()
    if name in ("normal", "standard_normal") and j.chance():
        kw["method"] = j.pick(["ziggurat", "box_muller", "polar", None, 1])
    return size, args, kw


def generator_draw(j):
    """A Generator (any engine/backend) draw with junk arguments."""
    gen = ascend_rand.Generator(j.u64() % 2**64, engine=j.pick(ENGINES), backend=j.pick(BACKENDS))
    name = j.pick(DRAWS)
    if name in ("permutation", "shuffle"):
        x = j.size() if j.chance() else j.array()
        if name == "shuffle" and j.chance():
            x = j.array()
        return getattr(gen, name)(x)
    if name == "choice":
        a = j.size() if j.chance() else j.array(n=j.small(8))
        size = j.size()
        p = None if j.chance() else j.array(n=j.small(8))
        return gen.choice(a, size=size, replace=j.chance(), p=p)
    size, args, kw = _args(j, name)
    if name == "dropout_mask":
        return gen.dropout_mask(size, *args, **kw)
    if name == "bernoulli":
        return gen.bernoulli(*args, size=size, **kw)
    return getattr(gen, name)(*args, size=size, **kw)


def stateless_draw(j):
    """ascend_rand.stateless.<draw>(size, key, counter, ...) with junk."""
    name = j.pick([n for n in DRAWS if n not in ("random", "standard_normal")])
    key = j.u64() if j.small(4) else j.value()
    counter = j.counter()
    backend = j.pick(BACKENDS)
    if name in ("permutation", "shuffle"):
        x = j.size() if j.chance() else j.array()
        return getattr(stateless, name)(x, key, counter, backend=backend)
    if name == "choice":
        a = j.size() if j.chance() else j.array(n=j.small(8))
        size = j.size()
        return stateless.choice(a, key, counter, size=size, replace=j.chance(),
                                backend=backend)
    size, args, kw = _args(j, name)
    if name == "integers":
        low, high = args
        return stateless.integers(size, key, low, high, counter, backend=backend, **kw)
    if name in ("bernoulli", "dropout_mask"):
        kw.pop("packed", None) if name == "dropout_mask" else None
        return getattr(stateless, name)(size, key, args[0], counter, backend=backend, **kw)
    fn = getattr(stateless, name)
    return fn(size, key, counter, *args, backend=backend, **kw)


def engine_state(j):
    """set_state with a valid state dict mutated (a key dropped, added or junked), then draws,
    pickling, spawn, and numpy draws through the engine's capsule."""
    engine_name = j.pick(ENGINES)
    if engine_name == "philox":
        engine = ascend_rand.Philox(j.u64() % 2**64)
    else:
        engine = ascend_rand.MT19937(j.small(2**32 - 1), streams=1 + j.small(3))
    gen = ascend_rand.Generator(engine=engine, backend=j.pick(BACKENDS))
    gen.random(j.small(9))
    state = dict(gen.state)
    for _ in range(1 + j.small(2)):
        field = j.pick(sorted(state) + ["extra", "words", "spawned", "retry_key"])
        action = j.small(4)
        if action == 0:
            state.pop(field, None)
        elif action == 1 and field == "key":
            state["key"] = j.array(dtype=j.pick([np.uint32, np.int64, np.float64, object]),
                                   n=624 * j.small(3))
        elif action == 2:
            state[field] = j.pick([j.integer(), 2**64, -1, 2**66, 624, 625])
        else:
            state[field] = j.value()
    try:
        gen.set_state(state if j.small(8) else j.value())
    finally:  # a refused state must leave a working engine behind
        _after_state(gen, j)
    return None


def _after_state(gen, j):
    """Draws, numpy draws through the capsule, pickling and spawn after set_state; an
    engine at offset 2**64 (or one whose spawn count nears 2**64) refuses to draw (spawn)
    with its documented OverflowError, and numpy's draw past the end of a Philox stream
    (all 2**130 words) with the lock's (docs/spec.md 2.6)."""
    try:
        gen.random(3)
        np.random.Generator(gen._engine).integers(0, 10, size=j.small(5))
        pickle.loads(pickle.dumps(gen)).normal(size=2)
        gen._engine.spawn(1 + j.small(2))
    except OverflowError as exc:
        if "2**64" not in str(exc) and "2**130" not in str(exc):
            raise


def _plan(j):
    """A fake plan whose ``native_form`` (dtype, shape, scalar, kernel, words, params) is junk."""

    class Plan:
        pass

    plan = Plan()
    if j.small(6) == 0:
        plan.native_form = j.value()
        return plan
    params = tuple(j.pick([j.integer(), j.number(), j.chance(), j.small(4)])
                   for _ in range(j.small(11)))
    shape = tuple(j.small(9) for _ in range(j.small(3))) if j.small(6) else j.size()
    plan.native_form = (j.dtype() if j.small(3) == 0 else j.pick(
                     [np.uint32, np.uint64, np.float32, np.float64, np.float16, np.int8, np.int64,
                      np.uint8, np.bool_, object]),
                 shape, j.chance(), j.small(9) if j.small(5) else j.integer(), j.small(64), params)
    k = j.small(4)  # the caller's out= (bindings_fast.cpp output_of): none, junk, or a fitting array
    if k == 1:
        plan.out = j.out()
    elif k == 2 and type(shape) is tuple and math.prod(shape) <= 1 << 16:
        try:
            plan.out = np.zeros(shape, dtype=plan.native_form[0])
        except (TypeError, ValueError):
            plan.out = None
    elif k == 3:
        plan.out = None
    return plan


def fast_functions(j):
    """_native.philox_draw / stateless_draw / plan_get with junk plans, slots and keys."""
    which = j.small(2)
    if which == 0:
        return _native.stateless_draw(j.u64() if j.small(5) else j.value(), j.counter(), _plan(j))
    if which == 1:
        slots = j.array(dtype=j.pick([np.uint64, np.uint64, np.int64, np.float64, np.uint32]),
                        n=j.pick([8, 8, 8, 4, 16])) if j.small(5) else j.value()
        if isinstance(slots, np.ndarray) and slots.dtype.itemsize == 8 and slots.size == 8 and j.chance():
            slots[...] = 0  # the common case: a fresh engine
        acquire = j.pick([lambda: None, lambda: True, None, 3])
        return _native.philox_draw(slots, acquire, acquire, _plan(j))
    cache = {(j.value(), j.value()): 1} if j.chance() else j.value()
    return _native.plan_get(cache, j.value() if j.chance() else (j.value(), j.value()))


def raw_kernels(j):
    """The pybind11 kernels (raw, uniform, normal, ..., apply_mask, derive) with junk buffers."""
    name = j.pick(["raw", "uniform", "integers", "normal", "truncated_normal", "bernoulli",
                   "bernoulli_packed", "permutation", "choice_sparse", "weighted_choice",
                   "apply_mask", "derive", "mt19937_uniform", "rdrand64", "rdseed64"])
    n = j.small(40)
    out = j.array(n=n) if j.small(4) else j.value()
    words = None if j.chance() else (j.array(dtype=np.uint32, n=j.small(200)) if j.small(3)
                                     else j.value())
    k = (j.u64(), j.u64(), j.u64())
    fmt = j.pick(["float32", "float64", "float16", "bfloat16", "int8", ""])
    num = j.pick([0.0, 1.0, -2.0, 0.5, 3.0]) if j.small(4) else j.number()
    # Huge n only where the kernel's own allocation (n 16-byte keys) cannot be attempted:
    # n past the C++ size computation (bad_array_new_length) or past uint64 (TypeError).
    # A raw kernel trusts a sane n (the Python layer allocates the n-element output first),
    # and under ASan a 2**40-key operator new would end the run instead of raising.
    small_n = j.small(300) if j.small(6) else j.pick([-1, 2**62, 2**63, 2**64 - 1, 2**64, 2**70])
    # the kernel's own request (n 16-byte keys): MemoryError (bad_array_new_length) is an
    # answer to a huge one (a permutation of 2**62 into 7 entries: found by seed 12, 60 s)
    j.sizes.append(small_n)
    fn = getattr(_native, name)
    if name == "raw":
        return fn(out, *k, words)
    if name in ("uniform", "mt19937_uniform"):
        return fn(out, *k, fmt, num, 1.0, j.chance(), words)
    if name == "integers":
        return fn(out, *k, j.u64(), j.pick([0, 1, 6, 2**32 - 1, 2**32, 2**64 - 1]), words)
    if name == "normal":
        return fn(out, *k, fmt, j.pick(["ziggurat", "box_muller", "x"]), num, 1.0, j.chance(),
                  words)
    if name == "truncated_normal":
        # Parameters as _validate/distributions build them for [-2, 2]: the kernel's
        # rejection loops trust them (validation is in Python), junk only in the method.
        return fn(out, *k, fmt, 0.0, 1.0, j.chance(), j.small(3) if j.small(4) else j.integer(),
                  -2.0, 2.0, 4.0, 0.0, 0.0, j.chance(), words)
    if name == "bernoulli":
        probs = None if j.chance() else j.array(n=n)
        return fn(out, *k, j.pick([0, 1, 2**31, 2**32, 2**32 + 1, 2**64 - 1]), probs, words)
    if name == "bernoulli_packed":
        probs = None if j.chance() else j.array(n=small_n if isinstance(small_n, int) and 0 <= small_n < 400 else 0)
        return fn(out, *k, small_n, j.pick([0, 2**31, 2**32, 2**33]), probs, words)
    if name in ("permutation", "choice_sparse"):
        return fn(out, *k, small_n, words)
    if name == "weighted_choice":
        return fn(out, *k, j.array(n=j.small(40)), words)
    if name == "apply_mask":
        return fn(out, j.array(n=n), j.array(n=j.small(8)), num)
    if name == "derive":
        return fn(out, j.array(n=n if j.small(3) else j.small(40)),
                  j.array(n=n if j.small(3) else j.small(40)))
    try:  # rdrand64 / rdseed64: RuntimeError is their documented answer when the CPU gives up
        return fn(j.array(dtype=np.uint64, n=j.small(8)), j.small(1000))
    except RuntimeError as exc:
        if name[:6] not in str(exc):
            raise
        return None


def mt_functions(j):
    """The MT19937 functions (seed, seed_by_array, fill, advance, jump_streams, xpow_mod,
    bitgen) on junk key / pos buffers, including out arrays that alias the state."""
    streams = 1 + j.small(3)
    key = j.array(dtype=np.uint32, n=624 * streams) if j.small(3) else j.array(n=j.pick([624, 623, 1248, 0]))
    pos = (np.array([j.pick([0, 1, 623, 624, 625, -1]) for _ in range(streams)], dtype=np.int64)
           if j.small(3) else j.array(n=streams))
    name = j.pick(["mt19937_seed", "mt19937_seed_by_array", "mt19937_fill", "mt19937_advance",
                   "mt19937_jump_streams", "mt19937_xpow_mod", "mt19937_bitgen"])
    fn = getattr(_native, name)
    if name == "mt19937_seed":
        return fn(key, j.integer())
    if name == "mt19937_seed_by_array":
        return fn(key, j.array(dtype=np.uint32, n=j.small(8)) if j.chance() else j.array())
    if name == "mt19937_fill":
        out = j.array(n=j.small(700))
        if j.small(4) == 0 and isinstance(pos, np.ndarray) and pos.dtype == np.int64:
            out = pos.view(np.uint32)  # the output aliases the positions
        return fn(out, key, pos)
    if name == "mt19937_advance":
        return fn(key, pos, [j.u64() for _ in range(j.small(3))] if j.small(4) else j.value())
    if name == "mt19937_jump_streams":
        return fn(key, pos)
    if name == "mt19937_xpow_mod":
        limbs = [j.u64() for _ in range(j.small(3))] if j.small(4) else j.value()
        return fn(limbs, j.pick(["auto", "portable", "pclmul", "x"]))
    holder = np.zeros(2, np.uint64) if j.small(4) else j.array(n=j.pick([2, 1, 3]))
    capsule = fn(key, pos, holder)  # holder: the engine's uint64[2] of the state's addresses
    return _through_capsule(capsule, j.small(700))


def philox_capsule(j):
    """_native.philox_bitgen over a junk 8-slot buffer, then words through the capsule."""
    # np.ulonglong exports format "Q", the one the engine's array("Q") slots have.
    state = j.array(dtype=j.pick([np.ulonglong, np.ulonglong, np.uint64, np.int64, np.uint32]),
                    n=j.pick([8, 8, 16, 7])) if j.small(5) else j.value()
    capsule = _native.philox_bitgen(state)
    return _through_capsule(capsule, j.small(40))


class _Bitgen(ctypes.Structure):
    """numpy's bitgen_t (numpy/random/bitgen.h): the state and four next_* functions."""
    _fields_ = [("state", ctypes.c_void_p), ("next_uint64", ctypes.c_void_p),
                ("next_uint32", ctypes.c_void_p), ("next_double", ctypes.c_void_p),
                ("next_raw", ctypes.c_void_p)]


_GET_POINTER = ctypes.pythonapi.PyCapsule_GetPointer
_GET_POINTER.restype = ctypes.c_void_p
_GET_POINTER.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _through_capsule(capsule, n):
    """n words through the capsule's next_uint32 / next_uint64 / next_double, as numpy calls them."""
    bitgen = _Bitgen.from_address(_GET_POINTER(capsule, b"BitGenerator"))
    u32 = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)(bitgen.next_uint32)
    u64 = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)(bitgen.next_uint64)
    dbl = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)(bitgen.next_double)
    return [f(bitgen.state) for f in (u32, u64, dbl) for _ in range(n)]


def reserve_ops(j):
    """_native.SecretReserve: put / take / clear in a junk sequence; the bytes come out in order."""
    r = _native.SecretReserve()
    held = b""
    for _ in range(j.small(12)):
        op = j.small(3)
        if op == 0:
            data = j.fdp.ConsumeBytes(j.small(5000)) if j.small(4) else j.value()
            r.put(data)
            held += bytes(memoryview(data).cast("B")) if not isinstance(data, (bytes, bytearray)) else bytes(data)
        elif op == 1:
            n = j.small(6000) if j.small(4) else j.value()
            got = r.take(n)
            want = held[:n] if len(held) >= n else None
            if got != want:
                raise AssertionError(f"SecretReserve.take({n}) gave {got!r:.60}, expected {want!r:.60}")
            if got is not None:
                held = held[n:]
        else:
            r.clear()
            held = b""
        if r.available != len(held):
            raise AssertionError(f"SecretReserve.available {r.available}, expected {len(held)}")
    return None


def mask_functions(j):
    """ascend_rand.apply_mask / unpack_mask with junk x, mask, p_drop and size."""
    if j.chance():
        return ascend_rand.unpack_mask(j.array() if j.small(4) else j.value(), j.size())
    x = j.array(dtype=j.pick([np.float32, np.float64, np.float16, np.int32, object]), n=j.small(40))
    mask = j.array(dtype=j.pick([np.uint8, np.uint8, np.int8, np.bool_]), n=j.small(8))
    return ascend_rand.apply_mask(x if j.small(5) else j.value(), mask, j.probability())


# name -> (target, the exceptions it may raise)
TARGETS = [
    ("generator_draw", generator_draw, PUBLIC),
    ("stateless_draw", stateless_draw, PUBLIC),
    ("engine_state", engine_state, PUBLIC),
    ("mask_functions", mask_functions, PUBLIC),
    ("fast_functions", fast_functions, RAW),
    ("raw_kernels", raw_kernels, RAW),
    ("mt_functions", mt_functions, RAW),
    ("philox_capsule", philox_capsule, RAW),
    ("reserve_ops", reserve_ops, RAW),
]
