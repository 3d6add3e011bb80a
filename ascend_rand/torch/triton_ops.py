"""The graph-safe draws' Triton launches as ``torch.library.triton_op`` operators.

``ascend_rand.torch.ops`` registers its operators (``ascend_rand::draw``,
``dropout``, ``dropout_backward``, ``dropout_regenerate_backward``) with a
Python kernel per dispatch key; for a device state (graph-safe mode) those
kernels launch the Triton kernels' state forms.  A plain Python kernel is
opaque to tracing: make_fx, AOTAutograd and inductor see the operator, never
the launches inside it.  The operators here hold exactly those launches,
each compiled kernel passed through ``torch.library.wrap_triton``
(``launch.wrapping``), so that a functionalizing trace (AOTAutograd,
``torch.export``) records each launch as a ``triton_kernel_wrapper_*`` node
naming the kernel:

- ``triton_fill_from_state(Tensor(a!) state, str call, SymInt[] size) ->
  Tensor``: one Generator-method draw (``call`` as ``ascend_rand::draw``
  takes it) from the device state, then the state's advance: two launches
  (``kernels.fill_from_state``; the advance alone for an empty draw);
- ``triton_dropout_forward(Tensor x, Tensor(a!) state, float p, bool
  keep_mask) -> (y, mask, drawn_at)``: the fused forward and the advance
  (``dropout.forward_from_state``), mask of 0 bytes without ``keep_mask``;
- ``triton_dropout_backward(Tensor grad, Tensor mask, float p)`` and
  ``triton_dropout_regenerate_backward(Tensor grad, Tensor drawn_at, float
  p)``: one launch each, no state.

The state is mutated in place (declared: ``mutates_args``), the layout of
docs/spec.md 2.4.  They are the kernels of ``ops``' operators on a device, called
below autograd: the differentiable operator is ``ascend_rand::dropout`` (its formula
calls ``dropout_backward`` / ``dropout_regenerate_backward``, whose device kernels
call the two backward operators here), so none is registered here (torch refuses one
for an operator that mutates an input).  In eager calls ``triton_op`` launches the kernels directly
(its own rule: plain tensors need no wrapper), the same launches as the
direct call, so the bits are those of ``fill_from_state`` / ``forward_from_state``.
Interpreted kernels (TRITON_INTERPRET=1) cannot be wrapped (``wrap_triton``
returns them as they are); ``ops`` keeps calling the launchers directly
there.  A ``torch.compile`` graph holds ``ops``' operators, not these: inductor calls
them as they are and does not compile our kernels itself, which would drop the
launch's ``enable_fp_fusion=False`` (docs/spec.md 3.3).  What was verified where:
docs/npu.md, "torch.compile and the operators".
"""

import contextlib
import importlib
from typing import Sequence

import torch

from . import graph_state, op_calls

NAMESPACE = "ascend_rand"
_LAUNCH_MODULE = "ascend_rand.backend.triton_kernels.launch"


def kernels(device):
    """(kernel table, its dropout entries, launch module, interpreted) for ``device``
    (``graph_state._kernels_for``'s choice, the device path's; ValueError where the
    Triton kernels do not run there)."""
    table, interpreted = graph_state._kernels_for(device)
    return table, table.dropout, importlib.import_module(_LAUNCH_MODULE), interpreted


@contextlib.contextmanager
def _launching(launch, interpreted):
    """The block's compiled launches through ``wrap_triton``; interpreted ones under
    TRITON_INTERPRET=1 (Triton 3.3+ reads it at each launch), unwrapped."""
    if interpreted:
        from ..backend import device_path
        with device_path.interpreting():
            yield
        return
    with launch.wrapping(torch.library.wrap_triton):
        yield


@torch.library.triton_op(f"{NAMESPACE}::triton_fill_from_state", mutates_args=("state",))
def triton_fill_from_state(state: torch.Tensor, call: str, size: Sequence[int]) -> torch.Tensor:
    """One draw ``call`` of ``size`` from the device state ``state`` (on the state's
    device), then the state's offset moved on by one."""
    parsed = op_calls.parse_call(call)
    size = tuple(size)
    plan = op_calls._device_plan(parsed, size)
    table, _, launch, interpreted = kernels(state.device)
    out = torch.empty(size, dtype=parsed.dtype, device=state.device)
    with _launching(launch, interpreted):
        table.fill_from_state(plan, out, state)
    return out


@torch.library.triton_op(f"{NAMESPACE}::triton_dropout_forward", mutates_args=("state",))
def triton_dropout_forward(x: torch.Tensor, state: torch.Tensor, p: float,
                           keep_mask: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(y, packed mask or 0 bytes, drawn_at) for the next draw of ``state``, which then
    moves on by one offset (docs/spec.md 4.5-4.7)."""
    _, fused, launch, interpreted = kernels(x.device)
    with _launching(launch, interpreted):
        y, mask, drawn_at = fused.forward_from_state(x, state, p, keep_mask)
    if mask is None:
        mask = torch.empty(0, dtype=torch.uint8, device=x.device)
    return y, mask, drawn_at


@torch.library.triton_op(f"{NAMESPACE}::triton_dropout_backward", mutates_args=())
def triton_dropout_backward(grad: torch.Tensor, mask: torch.Tensor, p: float) -> torch.Tensor:
    """dx = DropOutDoMask(grad) with the forward's packed ``mask``: one launch (none for
    p = 1, where every element was dropped)."""
    if p == 1.0:
        return torch.zeros(grad.shape, dtype=grad.dtype, device=grad.device)
    _, fused, launch, interpreted = kernels(grad.device)
    flat = grad.detach().contiguous().view(-1)
    dx = torch.empty_like(flat)
    with _launching(launch, interpreted):
        fused.backward_from_mask(dx, flat, mask, fused.dropout_scale(p, grad.dtype))
    return dx.view(grad.shape)


@torch.library.triton_op(f"{NAMESPACE}::triton_dropout_regenerate_backward", mutates_args=())
def triton_dropout_regenerate_backward(grad: torch.Tensor, drawn_at: torch.Tensor,
                                       p: float) -> torch.Tensor:
    """dx with the forward's mask drawn again from ``drawn_at`` (its seed, offset): one
    launch."""
    _, fused, launch, interpreted = kernels(grad.device)
    with _launching(launch, interpreted):
        return fused.backward_regenerate_at(grad, drawn_at, p)


OPERATORS = ("triton_fill_from_state", "triton_dropout_forward", "triton_dropout_backward",
             "triton_dropout_regenerate_backward")
