"""ascend_rand's torch operators: every draw and dropout as a ``torch.library`` operator.

``torch.compile`` cannot trace a Generator (its engine is host memory, its
kernels pybind or NumPy calls): inside compiled code each draw would be a
graph break.  These operators are what a compiled graph holds instead
(namespace ``ascend_rand``):

- ``draw(Tensor(a!) state, str call, SymInt[] size) -> Tensor``: one draw of
  ``size``, named by ``call``: a Generator method or an
  ``ascend_rand.torch.init`` initialiser with its arguments, the result's dtype
  and device, as text (``call_text``; every argument the dispatcher converts
  costs a microsecond or more a call, so they travel in one string);
- ``dropout(Tensor x, Tensor(a!) state, float p, bool keep_mask) -> (Tensor y,
  Tensor mask, Tensor drawn_at)``: one mask draw applied to x (docs/spec.md
  4.7); ``mask`` the packed mask (0 bytes without ``keep_mask``), ``drawn_at``
  the (seed, offset) the draw used, all the regenerate backward needs;
- ``dropout_backward(Tensor grad, Tensor mask, float p) -> Tensor`` and
  ``dropout_regenerate_backward(Tensor grad, Tensor drawn_at, float p) ->
  Tensor``: dx from the packed mask, or from the mask drawn again.

Each has a fake implementation (shapes only, for tracing) and ``dropout`` its
autograd formula; the implementations are registered for the CPU, CUDA and
PrivateUse1 (torch_npu's "npu") dispatch keys.

The state tensor.  A draw reads its (seed, offset) from ``state``, an int64
tensor of 8 elements with the layout of a Philox engine's slots (SEED, OFFSET,
BLOCK, INDEX, BUF01, BUF23, VALID, FLAGS: engines/philox.py), and moves the
offset on by one (docs/spec.md 2.4), so a compiled graph never holds a
(seed, offset) as a constant: it would replay the same mask every step, or
recompile every step.

- On the CPU (``state_tensor``) it *is* the engine's memory,
  ``torch.frombuffer(engine._slots)``: an operator reserves through the engine
  itself (its lock, the partly-read-subsequence skip, the end-of-stream
  refusal), and the host Generator sees every compiled draw at once.  Where a
  compiler hands the operator a copy (AOTAutograd's functionalization clones a
  mutated input and writes it back after the graph), the copy is read and
  advanced by the same rules, and the write-back lands in the engine.
- On a device (a Generator in graph-safe mode, ``graph_state``) the state is a
  device tensor that the Triton kernels read and advance there (no host read).

The torch front ends (``ascend_rand.torch.dropout``, ``Dropout``,
``ascend_rand.torch.init``) call these operators while ``torch.compile``
traces them (``torch.compiler.is_compiling()``) and for a Generator in
graph-safe mode; plain eager calls keep their direct path, which costs less
per call (docs/npu.md, "torch.compile and the operators").
"""

import contextlib
import importlib
import threading
import weakref
from array import array

import numpy as np
import torch
from torch._library import autograd as _autograd

from ..engines import Philox
from ..generator import Generator, _give_back
from . import graph_state, triton_ops  # noqa: F401  (triton_ops: its operators defined)
from ._bridge import generator_or_default, host_tensor

NAMESPACE = "ascend_rand"
STATE_SLOTS = 8
_U64 = 1 << 64
_U63 = 1 << 63

_LIB = torch.library.Library(NAMESPACE, "FRAGMENT")  # ascend_rand::fill_ lives here too
_LIB.define("draw(Tensor(a!) state, str call, SymInt[] size) -> Tensor")
_LIB.define("dropout(Tensor x, Tensor(a!) state, float p, bool keep_mask) "
            "-> (Tensor, Tensor, Tensor)")
_LIB.define("dropout_backward(Tensor grad, Tensor mask, float p) -> Tensor")
_LIB.define("dropout_regenerate_backward(Tensor grad, Tensor drawn_at, float p) -> Tensor")

DISPATCH_KEYS = ("CPU", "CUDA", "PrivateUse1")


# -- the state tensor --------------------------------------------------------------------------

_ATTR = "_torch_state"  # the engine's attribute holding its CPU state view
_ENGINES = weakref.WeakValueDictionary()  # the view's address -> its engine
_make_lock = threading.Lock()


def _not_philox(engine, what):
    return ValueError(
        f"{what}: an {engine.name.upper()} Generator hands out the words of its state in "
        f"order, on the host; under torch.compile (and in graph-safe mode) a draw must take "
        f"its (seed, offset) from a state tensor, which only a counter-based Philox "
        f"Generator has (ascend_rand.Generator(seed), engine='philox')")


@torch.compiler.disable
def _make_state_outside_compiled_code(engine):
    """The CPU state view of ``engine``, made once (``torch.frombuffer`` cannot be traced:
    ``state_tensor`` makes it before compiling wherever it can, see ``prepare``)."""
    with _make_lock:
        view = getattr(engine, _ATTR, None)
        if view is None:
            view = torch.frombuffer(engine._slots, dtype=torch.int64)
            _ENGINES[view.data_ptr()] = engine
            setattr(engine, _ATTR, view)
    return view


def state_tensor(generator=None, what="state_tensor"):
    """The CPU state tensor of ``generator`` (None: the default Generator): its Philox
    engine's slots as an int64 tensor of 8, sharing their memory (no copy), the same
    tensor every call.  ValueError for an MT19937 Generator (it has no such state).

    >>> import ascend_rand as ar
    >>> from ascend_rand.torch import ops
    >>> g = ar.Generator(7)
    >>> _ = g.random(3)
    >>> ops.state_tensor(g).tolist()[:2]  # seed, offset
    [7, 1]
    """
    generator = generator_or_default(generator, what)
    engine = generator.engine
    if not isinstance(engine, Philox):
        raise _not_philox(engine, what)
    view = getattr(engine, _ATTR, None)
    if view is None:
        view = _make_state_outside_compiled_code(engine)
    return view


def prepare(generator=None):
    """Make ``generator``'s state tensor now, outside compiled code (``torch.compile`` cannot
    trace its making; Dropout layers and the eager front ends make it themselves).
    Returns the generator; an MT19937 Generator is returned as it is."""
    generator = generator_or_default(generator, "prepare")
    if isinstance(generator.engine, Philox):
        state_tensor(generator)
    return generator


def state_for(generator, device, what):
    """The state tensor a draw on ``device`` from ``generator`` reads: the device state in
    graph-safe mode (``graph_state.state_for``), else the CPU view.  ValueError for MT19937."""
    device_state = graph_state.state_for(generator, device)
    if device_state is not None:
        return device_state
    return state_tensor(generator, what)


def _check_state(state, what):
    if not isinstance(state, torch.Tensor) or state.dtype != torch.int64 \
            or state.numel() != STATE_SLOTS or state.dim() != 1 or not state.is_contiguous():
        raise ValueError(
            f"{what}: state must be a contiguous int64 tensor of {STATE_SLOTS} elements (a "
            f"Philox engine's slots: ascend_rand.torch.ops.state_tensor), got "
            f"{getattr(state, 'dtype', type(state).__name__)} of shape "
            f"{tuple(getattr(state, 'shape', ()))}")


def _engine_of(state, what):
    """(engine, scratch) for a CPU state tensor: the engine whose memory it is (scratch
    False), or a Philox engine holding a copy of its slots (scratch True: a compiler's
    clone, or a state made by hand), whose slots go back into ``state`` after the draw."""
    engine = _ENGINES.get(state.data_ptr())
    if engine is not None and state.dtype == torch.int64 and state.numel() == STATE_SLOTS:
        return engine, False  # (the memory of a live engine's slots: its view, or a view of it)
    _check_state(state, what)
    scratch = Philox(0)
    slots = array("Q")
    slots.frombytes(state.numpy().tobytes())
    scratch._slots = slots
    return scratch, True


def _write_back(state, scratch):
    state.copy_(torch.frombuffer(scratch._slots, dtype=torch.int64))


def _host_generator(engine):
    """A host Generator on ``engine`` (cached on it): how the operators draw on the CPU."""
    gen = engine.__dict__.get("_torch_host_generator")
    if gen is None:
        gen = Generator(engine=engine)
        engine._torch_host_generator = gen
    return gen


def _as_int64(word):
    return word - _U64 if word >= _U63 else word


def _stream_of(drawn_at):
    """(key, counter) from a CPU ``drawn_at`` tensor (seed, offset as int64 bits)."""
    if not isinstance(drawn_at, torch.Tensor) or drawn_at.dtype != torch.int64 \
            or drawn_at.numel() != 2:
        raise ValueError(f"dropout backward: drawn_at must be an int64 tensor of 2 "
                         f"(seed, offset), got {getattr(drawn_at, 'dtype', drawn_at)!r}")
    key, offset = (w % _U64 for w in drawn_at.tolist())
    return key, (0, offset)


# -- the text of a draw ---------------------------------------------------------------------------

_TORCH_TO_NAME = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
                  torch.bfloat16: "bfloat16", torch.int8: "int8", torch.int16: "int16",
                  torch.int32: "int32", torch.int64: "int64", torch.uint8: "uint8",
                  torch.uint16: "uint16", torch.uint32: "uint32", torch.uint64: "uint64",
                  torch.bool: "bool"}
_NAME_TO_TORCH = {v: k for k, v in _TORCH_TO_NAME.items()}
# The Generator methods whose result is (size, dtype) exactly, with their dtype argument.
METHODS = ("raw", "random", "uniform", "integers", "normal", "standard_normal",
           "truncated_normal")
# ascend_rand.torch.init's initialisers: they fill a tensor of (size, dtype) in place.
INITS = ("uniform_", "normal_", "trunc_normal_", "xavier_uniform_", "xavier_normal_",
         "kaiming_uniform_", "kaiming_normal_", "orthogonal_")
# Generator draws whose result is not (size, dtype): their own sizes travel as ``n``.
_OTHERS = ("bernoulli", "dropout_mask", "permutation")
CALLS = frozenset(METHODS + _OTHERS + tuple(f"init.{name}" for name in INITS))


def _encode(value):
    """One argument as text: floats exactly (hex), ints, bools, None, names."""
    if value is None:
        return "n:"
    if isinstance(value, bool):
        return "b:1" if value else "b:0"
    if isinstance(value, int):
        return f"i:{value}"
    if isinstance(value, float):
        return f"f:{value.hex()}"
    if isinstance(value, str) and value.isidentifier():
        return f"s:{value}"
    raise TypeError(f"ascend_rand.torch.ops: cannot pass {value!r} to a draw operator "
                    f"(numbers, bools, None and names only)")


def call_text(name, dtype, device="cpu", **params):
    """The ``call`` argument of ``ascend_rand::draw``: draw ``name`` with ``params``, its
    result of the torch ``dtype`` on ``device``, as text (floats in hex: exact).

    >>> import torch
    >>> call_text("uniform", torch.float32, low=-1.0, high=0.5)
    'uniform dtype=s:float32 device=d:cpu low=f:-0x1.0000000000000p+0 high=f:0x1.0000000000000p-1'
    """
    return " ".join([name, f"dtype=s:{_TORCH_TO_NAME[dtype]}", f"device=d:{device}"]
                    + [f"{k}={_encode(v)}" for k, v in params.items()])


def _decode(text):
    tag, _, body = text.partition(":")
    if tag == "f":
        return float.fromhex(body)
    if tag == "i":
        return int(body)
    if tag == "b" and body in ("0", "1"):
        return body == "1"
    if tag == "n" and not body:
        return None
    if tag in ("s", "d"):
        return body
    raise ValueError(f"bad argument text {text!r}")


class Call:
    """A parsed ``call`` text: the draw's ``name``, its ``params``, the result's ``dtype``
    (a torch dtype) and ``device``."""

    __slots__ = ("name", "params", "dtype", "device")

    def __init__(self, call):
        what = "ascend_rand::draw"
        name, *items = call.split(" ")
        if name not in CALLS:
            raise ValueError(f"{what}: unknown draw {name!r} in {call!r}; the operator "
                             f"draws {', '.join(sorted(CALLS))}")
        try:
            params = {k: _decode(v) for k, _, v in (item.partition("=") for item in items)}
            dtype = _NAME_TO_TORCH[params.pop("dtype")]
            device = torch.device(params.pop("device"))
        except (ValueError, KeyError, RuntimeError) as exc:
            raise ValueError(f"{what}: a call is 'name dtype=s:<dtype> device=d:<device> "
                             f"arg=<value> ...' (call_text), got {call!r} ({exc})") from None
        self.name, self.params, self.dtype, self.device = name, params, dtype, device


_CALL_CACHE = {}


def parse_call(call):
    """The ``Call`` of a ``call`` text (cached); ValueError naming a bad one."""
    parsed = _CALL_CACHE.get(call)
    if parsed is None:
        if len(_CALL_CACHE) >= 4096:
            _CALL_CACHE.clear()
        parsed = _CALL_CACHE[call] = Call(call)
    return parsed


# -- the draws ------------------------------------------------------------------------------------

def _as_tensor(values):
    """A host draw's result as a CPU tensor sharing its memory (a tensor as it is)."""
    return host_tensor(values if isinstance(values, (np.ndarray, torch.Tensor))
                       else np.asarray(values))


def _runner(parsed, size):
    """A function of a Generator making this draw: the values as a tensor (on the CPU for
    a host Generator; ``_draw_impl`` moves them)."""
    name, params = parsed.name, parsed.params
    if name.startswith("init."):
        from . import init
        fill = getattr(init, name[5:])
        dtype = parsed.dtype

        def run(generator):
            out = torch.empty(size, dtype=dtype)
            fill(out, **params, generator=generator)
            return out
        return run
    if name in METHODS:
        method = getattr(Generator, name)
        kwargs = dict(params, size=size, dtype=_TORCH_TO_NAME[parsed.dtype])
        return lambda generator: _as_tensor(method(generator, **kwargs))
    if name == "bernoulli":
        kwargs = dict(params)
        kwargs["size"] = kwargs.pop("n", size)
        return lambda generator: _as_tensor(generator.bernoulli(**kwargs))
    if name == "dropout_mask":
        n, p_drop = params["n"], params["p_drop"]
        return lambda generator: _as_tensor(generator.dropout_mask(n, p_drop))
    n = params["n"]  # permutation
    return lambda generator: _as_tensor(generator.permutation(n))


def _check_size(parsed, size, call):
    """ValueError, before anything is drawn, where ``size`` is not the shape the draw gives
    (the draws sized by their own ``n``)."""
    name, params = parsed.name, parsed.params
    n = params.get("n")
    if name == "dropout_mask" or (name == "bernoulli" and params.get("packed") and n is not None):
        want = (mask_bytes(n),) if isinstance(n, int) else None
    elif name == "permutation":
        want = (n,)
    elif name == "bernoulli" and n is not None:
        want = (n,) if isinstance(n, int) else None
    else:
        return
    if want != size:
        raise ValueError(f"ascend_rand::draw: {call!r} gives the shape {want}, not the "
                         f"{size} asked for")


_RUNNERS = {}


def _checked_runner(call, size):
    """``_runner`` for (call, size), cached; its first result is checked against the size
    and dtype asked for (the fake's), later ones are the same draw's."""
    key = (call, size)
    run = _RUNNERS.get(key)
    if run is not None:
        return run
    parsed = parse_call(call)
    _check_size(parsed, size, call)
    first = _runner(parsed, size)

    def checked(generator):
        values = first(generator)
        if tuple(values.shape) != size or values.dtype != parsed.dtype:
            raise ValueError(f"ascend_rand::draw: {call!r} gives {values.dtype} of shape "
                             f"{tuple(values.shape)}, not the {parsed.dtype} of shape "
                             f"{size} asked for")
        if len(_RUNNERS) >= 4096:
            _RUNNERS.clear()
        _RUNNERS[key] = first
        return values
    return checked


def _draw_impl(state, call, size):
    size = tuple(size)
    if not state.is_cpu:
        return _draw_from_device_state(state, parse_call(call), size, call)
    engine, scratch = _engine_of(state, "ascend_rand::draw")
    run = _checked_runner(call, size)
    if scratch:
        values = run(Generator(engine=engine))
        _write_back(state, engine)
    else:
        values = run(_host_generator(engine))
    device = parse_call(call).device
    return values if device.type == "cpu" else values.to(device)


def _device_table(device):
    return graph_state._kernels_for(device)


def _kernel_mode(interpreted):
    from ..backend import device_path
    return device_path.interpreting() if interpreted else contextlib.nullcontext()


def _plan_of(parsed, size):
    """The plan of a Generator-method draw (for the device state's kernels)."""
    from ..distributions.normal import plan_normal, plan_truncated_normal
    from ..distributions.uniform import plan_integers, plan_raw, plan_uniform

    name, params, dtype_name = parsed.name, parsed.params, _TORCH_TO_NAME[parsed.dtype]
    if name == "raw":
        return plan_raw(size, dtype_name)
    if name in ("random", "uniform"):
        return plan_uniform(size, dtype_name, params.get("low", 0.0), params.get("high", 1.0))
    if name == "integers":
        return plan_integers(size, dtype_name, params["low"], params.get("high"),
                             params.get("endpoint", False))
    if name == "truncated_normal":
        return plan_truncated_normal(size, dtype_name, params.get("loc", 0.0),
                                     params.get("scale", 1.0), params.get("a", -2.0),
                                     params.get("b", 2.0))
    return plan_normal(size, dtype_name, params.get("loc", 0.0), params.get("scale", 1.0),
                       params.get("method", "ziggurat"))


def _device_plan(parsed, size):
    """The plan of a draw from a device state; ValueError for a draw not made so."""
    if parsed.name not in METHODS:
        raise ValueError(f"ascend_rand::draw: {parsed.name!r} draws are not made from a "
                         f"device state; in graph-safe mode the operator draws "
                         f"{', '.join(METHODS)}")
    return _plan_of(parsed, size)


def _draw_from_device_state(state, parsed, size, call=None):
    """A draw from a device state (graph-safe mode): the Triton kernels' state form, the
    draw reading (seed, offset) on the device and a second launch advancing it; compiled
    kernels through the triton_op ``ascend_rand::triton_fill_from_state`` (triton_ops.py:
    the launches visible to a functionalizing trace), interpreted ones directly."""
    _check_state(state, "ascend_rand::draw")
    plan = _device_plan(parsed, size)
    table, interpreted = _device_table(state.device)
    if not interpreted:
        if call is None:
            call = call_text(parsed.name, parsed.dtype, parsed.device, **parsed.params)
        out = torch.ops.ascend_rand.triton_fill_from_state(state, call, list(size))
    else:
        out = torch.empty(size, dtype=parsed.dtype, device=state.device)
        with _kernel_mode(interpreted):
            table.fill_from_state(plan, out, state)
    return out if parsed.device == out.device else out.to(parsed.device)


def _draw_fake(state, call, size):
    parsed = parse_call(call)
    return torch.empty(size, dtype=parsed.dtype, device=parsed.device)


# -- dropout --------------------------------------------------------------------------------------

_DROPOUT = []


def _dropout_module():
    # (the package's name ``dropout`` is the function: ascend_rand/torch/__init__.py)
    if not _DROPOUT:
        _DROPOUT.append(importlib.import_module("ascend_rand.torch.dropout"))
    return _DROPOUT[0]


def _dropout_impl(x, state, p, keep_mask):
    D = _dropout_module()
    what = "ascend_rand::dropout"
    dtype_name = D.float_dtype_name(x, "x", what)
    p = D.probability(p, "p", what)
    if not state.is_cpu:
        _check_state(state, what)
        y, mask, drawn_at = _dropout_from_device_state(x, state, p, keep_mask)
    else:
        engine, scratch = _engine_of(state, what)
        plan = D.mask_plan(x.numel(), p)
        key, counter, _ = engine.reserve(plan, None)
        try:
            y, mask = D.forward_at(x, key, counter, p, keep_mask, dtype_name=dtype_name)
        except BaseException:  # a failed call reserves nothing (docs/spec.md 2.2)
            if not scratch:
                _give_back(engine, counter)
            raise
        if scratch:
            _write_back(state, engine)
        drawn_at = torch.from_numpy(np.array([_as_int64(key), _as_int64(counter[1])],
                                             dtype=np.int64))
    if mask is None:
        mask = torch.empty(0, dtype=torch.uint8, device=x.device)
    return y, mask, drawn_at


def _dropout_from_device_state(x, state, p, keep_mask):
    from ..backend.triton_kernels import dropout as fused

    _, interpreted = _device_table(state.device)
    if not interpreted:  # (triton_ops.py: the launches visible to a functionalizing trace)
        return torch.ops.ascend_rand.triton_dropout_forward(x, state, p, keep_mask)
    with _kernel_mode(interpreted):
        y, mask, drawn_at = fused.forward_from_state(x, state, p, keep_mask)
    return y, mask, drawn_at


def mask_bytes(n):
    """ceil(n / 128) * 16: the packed mask's length (docs/spec.md 4.5); SymInt-safe."""
    return (n + 127) // 128 * 16


def _dropout_fake(x, state, p, keep_mask):
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    mask = torch.empty(mask_bytes(x.numel()) if keep_mask else 0, dtype=torch.uint8,
                       device=x.device)
    return y, mask, torch.empty(2, dtype=torch.int64, device=state.device)


def _backward_impl(grad, mask, p):
    D = _dropout_module()
    if not grad.is_cpu and p != 1.0:
        # fused where the eager backward would run fused (D._fused_for: the device path's
        # rule, float64 on an NPU excepted); compiled kernels through the triton_op
        D.float_dtype_name(grad, "grad", "dropout backward")
        D._check_mask(mask, grad.numel(), grad, "dropout backward")
        fused = D._fused_for(grad, D.mask_plan(grad.numel(), p))
        if fused is not None and not _launch().interpreting(fused.dropout_kernel):
            return torch.ops.ascend_rand.triton_dropout_backward(grad, mask, p)
    return D.backward_from_mask(grad, mask, p)


def _launch():
    return importlib.import_module("ascend_rand.backend.triton_kernels.launch")


def _regenerate_backward_impl(grad, drawn_at, p):
    if not drawn_at.is_cpu:
        from ..backend.triton_kernels import dropout as fused
        _, interpreted = _device_table(drawn_at.device)
        if not interpreted:
            return torch.ops.ascend_rand.triton_dropout_regenerate_backward(grad, drawn_at, p)
        with _kernel_mode(interpreted):
            return fused.backward_regenerate_at(grad, drawn_at, p)
    key, counter = _stream_of(drawn_at)
    return _dropout_module().backward_regenerate(grad, key, counter, p)


def _backward_fake(grad, saved, p):
    return torch.empty(grad.shape, dtype=grad.dtype, device=grad.device)


def _setup_context(ctx, inputs, output):
    _, _, p, keep_mask = inputs
    _, mask, drawn_at = output
    ctx.p, ctx.keep_mask = p, keep_mask
    ctx.save_for_backward(mask if keep_mask else drawn_at)


def _dropout_autograd(ctx, grad_y, grad_mask, grad_drawn_at):
    (saved,) = ctx.saved_tensors
    if ctx.keep_mask:
        dx = torch.ops.ascend_rand.dropout_backward(grad_y, saved, ctx.p)
    else:
        dx = torch.ops.ascend_rand.dropout_regenerate_backward(grad_y, saved, ctx.p)
    return dx, None, None, None


for _key in DISPATCH_KEYS:
    _LIB.impl("draw", _draw_impl, _key)
    _LIB.impl("dropout", _dropout_impl, _key)
    _LIB.impl("dropout_backward", _backward_impl, _key)
    _LIB.impl("dropout_regenerate_backward", _regenerate_backward_impl, _key)
del _key
torch.library.register_fake(f"{NAMESPACE}::draw", _draw_fake, lib=_LIB)
torch.library.register_fake(f"{NAMESPACE}::dropout", _dropout_fake, lib=_LIB)
torch.library.register_fake(f"{NAMESPACE}::dropout_backward", _backward_fake, lib=_LIB)
torch.library.register_fake(f"{NAMESPACE}::dropout_regenerate_backward", _backward_fake,
                            lib=_LIB)
# The autograd formula, registered as torch.library.register_autograd registers one, less its
# refusal of a mutating operator: the tensor mutated here is the int64 state, which never
# requires grad, so the concern behind the refusal (an in-place change to a differentiable
# input) cannot arise; torch.library.custom_op allows the same for its mutating operators.
_LIB.impl("dropout", _autograd.make_autograd_impl(
    torch.ops.ascend_rand.dropout.default, _autograd.Info(_dropout_autograd, _setup_context)),
    "Autograd", with_keyset=True)


# -- the Python entry points ---------------------------------------------------------------------

def _in_operator(generator):
    """Whether a draw from ``generator`` goes through the operator: under torch.compile,
    and in graph-safe mode (its state on a device); plain eager calls draw directly."""
    return torch.compiler.is_compiling() or graph_state.active(generator) is not None


def draw(generator, name, size, dtype, device="cpu", **params):
    """One draw ``name`` (a Generator method, or ``"init.<initialiser>"``) with ``params``:
    a tensor of ``size`` and the torch ``dtype`` on ``device``; the Generator moves on by
    one draw.  Under torch.compile (and in graph-safe mode) the operator
    ``ascend_rand::draw``; in eager code the Generator's own call, the same values.

    >>> import torch, ascend_rand as ar
    >>> from ascend_rand.torch import ops
    >>> t = ops.draw(ar.Generator(42), "random", (4,), torch.float32)
    >>> t.tolist() == ar.Generator(42).random(4).tolist()
    True
    """
    generator = generator_or_default(generator, "draw")
    size = tuple(size)
    call = call_text(name, dtype, device, **params)
    if _in_operator(generator):
        state = state_for(generator, device, "draw")
        return torch.ops.ascend_rand.draw(state, call, list(size))
    values = _checked_runner(call, size)(generator)
    return values if torch.device(device).type == "cpu" else values.to(device)


def init_(tensor, name, generator, **params):
    """``ascend_rand.torch.init.<name>`` through the operator: the values drawn into a new
    tensor of ``tensor``'s shape, dtype and device, then copied into ``tensor`` (returned).
    What the initialisers do under torch.compile."""
    generator = generator_or_default(generator, name)
    state = state_for(generator, tensor.device, name)
    values = torch.ops.ascend_rand.draw(
        state, call_text(f"init.{name}", tensor.dtype, tensor.device, **params),
        list(tensor.shape))
    with torch.no_grad():
        tensor.copy_(values)
    return tensor


def dropout(x, generator, p, mode):
    """``ascend_rand::dropout`` for ``ascend_rand.torch.dropout``'s checked arguments: y."""
    state = state_for(generator, x.device, "dropout")
    y, _, _ = torch.ops.ascend_rand.dropout(x, state, p, mode == "packed")
    return y


__all__ = ["CALLS", "call_text", "draw", "init_", "parse_call", "prepare", "state_tensor"]
