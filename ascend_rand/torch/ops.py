"""ascend_rand's torch operators: every draw and dropout as a ``torch.library`` operator.

``torch.compile`` cannot trace a Generator (its engine is host memory, its
kernels pybind or NumPy calls): inside compiled code each draw would be a
graph break.  These operators are what a compiled graph holds instead
(namespace ``ascend_rand``):

- ``draw(Tensor(a!) state, str call, SymInt[] size) -> Tensor``: one draw of
  ``size``, named by ``call``: a Generator method or an
  ``ascend_rand.torch.init`` initialiser with its arguments, the result's dtype
  and device, as text (``call_text``, op_calls.py); from any state tensor;
- ``engine_draw(Tensor state, str call, SymInt[] size) -> Tensor``: the same
  draw from a Generator's own state tensor, reserved through its engine;
- ``dropout(Tensor x, Tensor(a!) state, float p, bool keep_mask) -> (Tensor y,
  Tensor mask, Tensor drawn_at)``: one mask draw applied to x (docs/spec.md
  4.7); ``mask`` the packed mask (0 bytes without ``keep_mask``), ``drawn_at``
  the (seed, offset) the draw used, all the regenerate backward needs; and
  ``engine_dropout``, the same from a Generator's own state tensor;
- ``dropout_backward(Tensor grad, Tensor mask, float p) -> Tensor`` and
  ``dropout_regenerate_backward(Tensor grad, Tensor drawn_at, float p) ->
  Tensor``: dx from the packed mask, or from the mask drawn again.

Every argument of a draw is checked before anything is reserved, with the
Generator's messages (op_calls.py), so a refused call takes nothing.

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
  refusal), and the host Generator sees every compiled draw at once.  The
  front ends compile to ``engine_draw`` / ``engine_dropout``, which the
  compiler sees as reading the state and as ordered side effects (an effect
  token keeps every call, in order): it never copies the state, so two
  threads running one compiled graph reserve through the engine's lock and
  never share a draw.  ``draw`` and ``dropout`` declare the state mutated;
  where a compiler hands them a copy (AOTAutograd's functionalization clones a
  mutated input and writes it back after the graph) the copy is read and
  advanced as data: a state the caller owns, for one thread at a time.
- On a device (a Generator in graph-safe mode, ``graph_state``) the state is a
  device tensor that the Triton kernels read and advance there (no host read);
  the DeviceState's lock holds each draw's two launches together.

The torch front ends (``ascend_rand.torch.dropout``, ``Dropout``,
``ascend_rand.torch.init``) call these operators while ``torch.compile``
traces them (``torch.compiler.is_compiling()``) and for a Generator in
graph-safe mode; plain eager calls keep their direct path, which costs less
per call (docs/npu.md, "torch.compile and the operators").
"""

import contextlib
import importlib

import numpy as np
import torch
from torch._higher_order_ops.effects import _EffectType, _register_effectful_op
from torch._library import autograd as _autograd

from ..distributions.bernoulli import probability
from ..generator import Generator, _give_back
from . import graph_state, triton_ops  # noqa: F401  (triton_ops: its operators defined)
from . import dropout_core as D
from .dropout_core import mask_bytes
from ._bridge import float_dtype_name, generator_or_default
from .op_calls import (CALLS, DEVICE_STATE_DRAWS, INITS, METHODS, Call,  # noqa: F401
                       _as_tensor, _device_plan, call_text, checked, checked_plan, parse_call)
from .op_state import (_ENGINES, STATE_SLOTS, _as_int64, _check_state,  # noqa: F401
                       _engine_of, _host_generator, _live_engine, _stream_of, _write_back,
                       prepare, state_for, state_tensor)

NAMESPACE = "ascend_rand"

_LIB = torch.library.Library(NAMESPACE, "FRAGMENT")  # ascend_rand::fill_ lives here too
_LIB.define("draw(Tensor(a!) state, str call, SymInt[] size) -> Tensor")
_LIB.define("dropout(Tensor x, Tensor(a!) state, float p, bool keep_mask) "
            "-> (Tensor, Tensor, Tensor)")
_LIB.define("dropout_backward(Tensor grad, Tensor mask, float p) -> Tensor")
_LIB.define("dropout_regenerate_backward(Tensor grad, Tensor drawn_at, float p) -> Tensor")
# A Generator's own draws under torch.compile: the state is the engine's memory, which the
# operator reserves through (under the engine's lock) and which the compiler sees as read
# only; an ordered side effect (an effect token threads them) keeps each call, in order.
_LIB.define("engine_draw(Tensor state, str call, SymInt[] size) -> Tensor")
_LIB.define("engine_dropout(Tensor x, Tensor state, float p, bool keep_mask) "
            "-> (Tensor, Tensor, Tensor)")

DISPATCH_KEYS = ("CPU", "CUDA", "PrivateUse1")


# -- the draws ------------------------------------------------------------------------------------

def _draw_impl(state, call, size):
    # (state is a tensor: the schema's; _engine_of and the device path check its layout)
    draw = checked(call, tuple(size))  # every argument, before anything is reserved
    if not state.is_cpu:
        return _draw_from_device_state(state, draw.parsed, draw.size, call)
    engine, scratch = _engine_of(state, "ascend_rand::draw")
    if not scratch:
        return draw.run(_host_generator(engine))
    # (a graph-safe state on the CPU: its DeviceState's lock makes the read, the draw and
    # the write-back one reservation; a state made by hand is its owner's to share)
    with graph_state.reserving(state):
        engine, _ = _engine_of(state, "ascend_rand::draw")
        values = draw.run(Generator(engine=engine))
        _write_back(state, engine)
    return values


def _engine_draw_impl(state, call, size):
    draw = checked(call, tuple(size))
    return draw.run(_host_generator(_live_engine(state, "ascend_rand::engine_draw")))


def _device_table(device):
    return graph_state._kernels_for(device)


def _kernel_mode(interpreted):
    from ..backend import device_path
    return device_path.interpreting() if interpreted else contextlib.nullcontext()


def _draw_from_device_state(state, parsed, size, call=None):
    """A draw from a device state (graph-safe mode): the Triton kernels' state form, the
    draw reading (seed, offset) on the device and a second launch advancing it; compiled
    kernels through the triton_op ``ascend_rand::triton_fill_from_state`` (triton_ops.py:
    the launches visible to a functionalizing trace), interpreted ones directly.  The
    two launches are one reservation: a DeviceState's lock holds them together
    (graph_state.reserving), so two threads never read the same offset."""
    _check_state(state, "ascend_rand::draw")
    plan = _device_plan(parsed, size)
    table, interpreted = _device_table(state.device)
    if not interpreted:
        if call is None:
            call = call_text(parsed.name, parsed.dtype, parsed.device, **parsed.params)
        out = torch.ops.ascend_rand.triton_fill_from_state(state, call, list(size))
    else:
        out = torch.empty(size, dtype=parsed.dtype, device=state.device)
        with _kernel_mode(interpreted), graph_state.reserving(state):
            table.fill_from_state(plan, out, state)
    return out if parsed.device == out.device else out.to(parsed.device)


def _draw_fake(state, call, size):
    parsed = parse_call(call)
    if any(isinstance(d, int) and d < 0 for d in size):
        # (refused by the operator when it runs, with the Generator's message: an error
        # raised while tracing would reach the user as the compiler's, not the draw's)
        size = [0] * len(size)
    return torch.empty(size, dtype=parsed.dtype, device=parsed.device)


# -- dropout --------------------------------------------------------------------------------------

def _dropout_args(x, state, p, what):
    """x's dtype name and p, checked as ``ascend_rand.torch.dropout`` checks them, with its
    messages (the front end's checks under torch.compile are these)."""
    dtype_name = float_dtype_name(x, "x", "dropout")
    p = probability(p, "p", "dropout")
    _check_state(state, what)
    return dtype_name, p


def _drawn_at(key, counter):
    return torch.from_numpy(np.array([_as_int64(key), _as_int64(counter[1])], dtype=np.int64))


def _dropout_on_engine(x, engine, scratch, state, p, keep_mask, dtype_name):
    """One mask draw reserved from ``engine`` and applied to x (a meta x: reserved only)."""
    plan = D.mask_plan(x.numel(), p)
    key, counter, _ = engine.reserve(plan, None)
    if x.is_meta:  # the Generator moves on as the draw would, nothing drawn (docs/spec.md 2.4)
        y = torch.empty_like(x)
        mask = torch.empty(mask_bytes(x.numel()) if keep_mask else 0, dtype=torch.uint8,
                           device="meta")
    else:
        try:
            y, mask = D.forward_at(x, key, counter, p, keep_mask, dtype_name=dtype_name)
        except BaseException:  # a failed call reserves nothing (docs/spec.md 2.2)
            if not scratch:
                _give_back(engine, counter)
            raise
    if scratch:
        _write_back(state, engine)
    if mask is None:
        mask = torch.empty(0, dtype=torch.uint8, device=x.device)
    return y, mask, _drawn_at(key, counter)


def _dropout_impl(x, state, p, keep_mask):
    what = "ascend_rand::dropout"
    dtype_name, p = _dropout_args(x, state, p, what)
    if not state.is_cpu:
        y, mask, drawn_at = _dropout_from_device_state(x, state, p, keep_mask)
        if mask is None:
            mask = torch.empty(0, dtype=torch.uint8, device=x.device)
        return y, mask, drawn_at
    engine, scratch = _engine_of(state, what)
    if not scratch:
        return _dropout_on_engine(x, engine, False, state, p, keep_mask, dtype_name)
    with graph_state.reserving(state):  # (as in _draw_impl)
        engine, _ = _engine_of(state, what)
        return _dropout_on_engine(x, engine, True, state, p, keep_mask, dtype_name)


def _engine_dropout_impl(x, state, p, keep_mask):
    what = "ascend_rand::engine_dropout"
    dtype_name, p = _dropout_args(x, state, p, what)
    engine = _live_engine(state, what)
    return _dropout_on_engine(x, engine, False, state, p, keep_mask, dtype_name)


def _dropout_meta(x, state, p, keep_mask):
    """A meta x with a CPU state (the Meta dispatch key): the draw reserved, as the eager
    front end reserves it; a device state's meta draw is refused (it would need a launch)."""
    what = "ascend_rand::dropout"
    dtype_name, p = _dropout_args(x, state, p, what)
    if not state.is_cpu:
        raise ValueError(f"{what}: a meta x draws nothing, and a device state moves on only "
                         f"by a launch on {state.device}: give a real x")
    engine, scratch = _engine_of(state, what)
    return _dropout_on_engine(x, engine, scratch, state, p, keep_mask, dtype_name)


def _engine_dropout_meta(x, state, p, keep_mask):
    what = "ascend_rand::engine_dropout"
    dtype_name, p = _dropout_args(x, state, p, what)
    return _dropout_on_engine(x, _live_engine(state, what), False, state, p, keep_mask,
                              dtype_name)


def _dropout_from_device_state(x, state, p, keep_mask):
    table, interpreted = _device_table(state.device)
    fused = table.dropout
    if not interpreted:  # (triton_ops.py: the launches visible to a functionalizing trace)
        return torch.ops.ascend_rand.triton_dropout_forward(x, state, p, keep_mask)
    with _kernel_mode(interpreted), graph_state.reserving(state):
        y, mask, drawn_at = fused.forward_from_state(x, state, p, keep_mask)
    return y, mask, drawn_at


def _dropout_fake(x, state, p, keep_mask):
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    mask = torch.empty(mask_bytes(x.numel()) if keep_mask else 0, dtype=torch.uint8,
                       device=x.device)
    return y, mask, torch.empty(2, dtype=torch.int64, device=state.device)


def _backward_impl(grad, mask, p):
    if not grad.is_cpu and p != 1.0:
        # fused where the eager backward would run fused (D._fused_for: the device path's
        # rule, float64 on an NPU excepted); compiled kernels through the triton_op
        float_dtype_name(grad, "grad", "dropout backward")
        D._check_mask(mask, grad.numel(), grad, "dropout backward")
        fused = D._fused_for(grad, D.mask_plan(grad.numel(), p))
        if fused is not None and not _launch().is_interpreted(fused.dropout_kernel):
            return torch.ops.ascend_rand.triton_dropout_backward(grad, mask, p)
    return D.backward_from_mask(grad, mask, p)


def _launch():
    return importlib.import_module("ascend_rand.backend.triton_kernels.launch")


def _check_drawn_at(drawn_at, grad):
    """drawn_at is what the forward returned: an int64 tensor of shape (2,) (seed, offset)
    on grad's device (or the CPU); ValueError naming what it got otherwise."""
    ok = isinstance(drawn_at, torch.Tensor) and drawn_at.dtype == torch.int64 \
        and tuple(drawn_at.shape) == (2,)
    if not ok:
        raise ValueError(
            f"dropout backward: drawn_at must be the forward's int64 tensor of shape (2,) "
            f"(the draw's seed, offset), got "
            f"{getattr(drawn_at, 'dtype', type(drawn_at).__name__)} of shape "
            f"{tuple(getattr(drawn_at, 'shape', ()))}")
    if not drawn_at.is_cpu and isinstance(grad, torch.Tensor) and drawn_at.device != grad.device:
        raise ValueError(f"dropout backward: drawn_at is on {drawn_at.device}, the gradient "
                         f"on {grad.device} (a device's drawn_at stays on its device)")


def _regenerate_backward_impl(grad, drawn_at, p):
    _check_drawn_at(drawn_at, grad)
    if not drawn_at.is_cpu:
        table, interpreted = _device_table(drawn_at.device)
        fused = table.dropout
        if not interpreted:
            return torch.ops.ascend_rand.triton_dropout_regenerate_backward(grad, drawn_at, p)
        with _kernel_mode(interpreted):
            return fused.backward_regenerate_at(grad, drawn_at, p)
    key, counter = _stream_of(drawn_at)
    return D.backward_regenerate(grad, key, counter, p)


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


# Double backward: dx = D grad with D diagonal (the kept elements' scale, 0 elsewhere), so
# the gradient of dx with respect to grad is D again: each backward operator is its own
# derivative, to any order (a gradient penalty through dropout is exact).
def _backward_setup(ctx, inputs, output):
    _, saved, p = inputs
    ctx.p = p
    ctx.save_for_backward(saved)


def _mask_backward_autograd(ctx, grad_dx):
    (mask,) = ctx.saved_tensors
    return torch.ops.ascend_rand.dropout_backward(grad_dx, mask, ctx.p), None, None


def _regenerate_backward_autograd(ctx, grad_dx):
    (drawn_at,) = ctx.saved_tensors
    return torch.ops.ascend_rand.dropout_regenerate_backward(grad_dx, drawn_at, ctx.p), None, None


for _key in DISPATCH_KEYS:
    _LIB.impl("draw", _draw_impl, _key)
    _LIB.impl("dropout", _dropout_impl, _key)
    _LIB.impl("dropout_backward", _backward_impl, _key)
    _LIB.impl("dropout_regenerate_backward", _regenerate_backward_impl, _key)
_LIB.impl("engine_draw", _engine_draw_impl, "CPU")  # (the state is host memory)
_LIB.impl("engine_dropout", _engine_dropout_impl, "CPU")
for _key in ("CUDA", "PrivateUse1"):  # (x on a device, the state on the host)
    _LIB.impl("engine_dropout", _engine_dropout_impl, _key)
del _key
torch.library.register_fake(f"{NAMESPACE}::draw", _draw_fake, lib=_LIB)
torch.library.register_fake(f"{NAMESPACE}::engine_draw", _draw_fake, lib=_LIB)
torch.library.register_fake(f"{NAMESPACE}::dropout", _dropout_fake, lib=_LIB)
torch.library.register_fake(f"{NAMESPACE}::engine_dropout", _dropout_fake, lib=_LIB)
torch.library.register_fake(f"{NAMESPACE}::dropout_backward", _backward_fake, lib=_LIB)
torch.library.register_fake(f"{NAMESPACE}::dropout_regenerate_backward", _backward_fake,
                            lib=_LIB)
# A meta x (deferred initialisation) moves the Generator on, as the eager front end does
# (docs/spec.md 2.4); tracing uses the fakes above, never these.
_LIB.impl("dropout", _dropout_meta, "Meta")
_LIB.impl("engine_dropout", _engine_dropout_meta, "Meta")
for _name in ("engine_draw", "engine_dropout"):
    _register_effectful_op(getattr(torch.ops.ascend_rand, _name).default, _EffectType.ORDERED)
# The autograd formula, registered as torch.library.register_autograd registers one, less its
# refusal of a mutating operator: the tensor mutated here is the int64 state, which never
# requires grad, so the concern behind the refusal (an in-place change to a differentiable
# input) cannot arise; torch.library.custom_op allows the same for its mutating operators.
for _name in ("dropout", "engine_dropout"):
    _LIB.impl(_name, _autograd.make_autograd_impl(
        getattr(torch.ops.ascend_rand, _name).default,
        _autograd.Info(_dropout_autograd, _setup_context)), "Autograd", with_keyset=True)
del _name
torch.library.register_autograd(f"{NAMESPACE}::dropout_backward", _mask_backward_autograd,
                                setup_context=_backward_setup, lib=_LIB)
torch.library.register_autograd(f"{NAMESPACE}::dropout_regenerate_backward",
                                _regenerate_backward_autograd, setup_context=_backward_setup,
                                lib=_LIB)


# -- the Python entry points ---------------------------------------------------------------------

def _in_operator(generator):
    """Whether a draw from ``generator`` goes through the operator: under torch.compile,
    and in graph-safe mode (its state on a device); plain eager calls draw directly."""
    return torch.compiler.is_compiling() or graph_state.active(generator) is not None


def _operator_state(generator, device, what):
    """(state, draw operator, dropout operator) for a draw on ``device`` from ``generator``:
    in graph-safe mode the device state and the mutating operators (the kernels advance
    it there); otherwise the engine's own CPU state and ``engine_draw`` /
    ``engine_dropout``, which reserve through the engine under its lock (so two threads
    running one compiled graph never share a draw: docs/npu.md)."""
    device_state = graph_state.state_for(generator, device)
    if device_state is not None:
        return device_state, torch.ops.ascend_rand.draw, torch.ops.ascend_rand.dropout
    return (state_tensor(generator, what), torch.ops.ascend_rand.engine_draw,
            torch.ops.ascend_rand.engine_dropout)


def draw(generator, name, size, dtype, device="cpu", **params):
    """One draw ``name`` (a Generator method, or ``"init.<initialiser>"``) with ``params``:
    a tensor of ``size`` and the torch ``dtype`` on ``device``; the Generator moves on by
    one draw.  Under torch.compile the operator ``ascend_rand::engine_draw`` (in
    graph-safe mode ``ascend_rand::draw`` on the device state); in eager code the
    Generator's own call, the same values.  Every argument (device, dtype, size and
    the draw's own) is checked before anything is reserved, with the Generator's
    messages: a refused draw leaves the Generator where it was.

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
        state, operator, _ = _operator_state(generator, device, "draw")
        return operator(state, call, list(size))
    return checked(call, size).run(generator)


def init_(tensor, name, generator, **params):
    """``ascend_rand.torch.init.<name>`` through the operator: the values drawn into a new
    tensor of ``tensor``'s shape, dtype and device, then copied into ``tensor`` (returned).
    What the initialisers do under torch.compile."""
    generator = generator_or_default(generator, name)
    state, operator, _ = _operator_state(generator, tensor.device, name)
    values = operator(state, call_text(f"init.{name}", tensor.dtype, tensor.device, **params),
                      list(tensor.shape))
    with torch.no_grad():
        tensor.copy_(values)
    return tensor


def dropout(x, generator, p, mode):
    """The dropout operator for ``ascend_rand.torch.dropout``'s checked arguments: y."""
    state, _, operator = _operator_state(generator, x.device, "dropout")
    y, _, _ = operator(x, state, p, mode == "packed")
    return y


__all__ = ["CALLS", "call_text", "draw", "init_", "parse_call", "prepare", "state_tensor"]
