"""What one draw asks of a device: kernel launches and host synchronisations, counted.

``counting()`` counts, while its block runs, every torch operation that
reaches a backend kernel (a ``TorchDispatchMode``: below autograd and the
composite operations, so what a device would run) and every Triton kernel
launch (at the runtime's entry: the interpreter's grid executor under
``TRITON_INTERPRET=1``, ``JITFunction.run`` compiled).  The same count runs
on CPU tensors, so the device paths' launch counts are measured without a
device: the torch-operation mirror forced on CPU tensors has the operations a
GPU or NPU would launch one by one, and the Triton kernels under the
interpreter have the launches they make compiled.

Not counted as launches: views (``func.is_view``: no kernel), allocations
(``empty`` and its kin: no kernel), and the torch operations Triton's
interpreter runs inside a launch to move a tensor's memory (artefacts of
interpreting, not of the draw).  Counted separately as host synchronisations:
the operations whose result the host must wait for (``.item()``'s
``_local_scalar_dense``; ``nonzero`` and ``masked_select``, whose output size
is data).
"""

import collections
import contextlib
import importlib
import importlib.util
import sys

# Operations that launch nothing on a device: allocations (views are asked of the op).
ALLOCATIONS = frozenset({"empty", "empty_strided", "empty_like", "new_empty",
                         "new_empty_strided", "lift_fresh", "lift_fresh_copy"})
# Operations that make the host wait for the device.
SYNCS = frozenset({"_local_scalar_dense", "nonzero", "masked_select", "unique", "_unique2",
                   "unique_dim", "unique_consecutive"})


class Count:
    """The counts of one block: ``ops`` {torch op: calls}, ``triton`` (Triton launches),
    ``syncs`` {op: calls}; ``launches`` is the torch ops plus the Triton launches."""

    def __init__(self):
        self.ops = collections.Counter()
        self.triton = 0
        self.syncs = collections.Counter()

    @property
    def launches(self):
        return sum(self.ops.values()) + self.triton

    def as_dict(self):
        return {"launches": self.launches, "torch_ops": sum(self.ops.values()),
                "triton_launches": self.triton, "host_syncs": sum(self.syncs.values()),
                "ops": dict(self.ops), "syncs": dict(self.syncs)}


def import_triton(interpret):
    """Import triton (and torch._dynamo, which imports it) now, interpreted or compiled.

    Triton decides at its first import whether its own ``@triton.jit`` functions are
    interpreted (TRITON_INTERPRET=1), and entering a ``TorchDispatchMode`` imports
    torch._dynamo, which imports triton: so the counting below would decide it, in
    whatever mode the environment says, unless triton was imported first.  Returns the
    mode the process has ("interpreted" or "compiled"), None without triton.
    """
    from ..backend import device_path

    if importlib.util.find_spec("triton") is None:
        return None
    if "triton" not in sys.modules:
        if interpret:
            with device_path.interpreting():
                importlib.import_module("triton")
                importlib.import_module("torch._dynamo")
        else:
            importlib.import_module("triton")
    return device_path.loaded_mode()


def _triton_entries():
    """(class, method name) of the Triton runtime's launch entries, where triton is imported
    (never imported here: see ``import_triton``)."""
    if "triton" not in sys.modules:
        return []
    from triton.runtime import interpreter, jit
    return [(interpreter.GridExecutor, "__call__"), (jit.JITFunction, "run")]


@contextlib.contextmanager
def counting():
    """Yields a ``Count`` that the block's torch operations and Triton launches fill.

    A RuntimeError after the block where triton was first imported inside it (its
    launches could not be watched): ``import_triton`` first, and draw once before
    counting."""
    from torch.utils._python_dispatch import TorchDispatchMode

    count = Count()
    inside = [0]  # > 0 while a Triton launch runs (the interpreter's own torch ops)

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if not inside[0]:
                name = func.overloadpacket.__name__
                if name in SYNCS:
                    count.syncs[name] += 1
                if not func.is_view and name not in ALLOCATIONS:
                    count.ops[name] += 1
            return func(*args, **(kwargs or {}))

    saved = []
    for cls, name in _triton_entries():
        original = getattr(cls, name)

        def counted(self, *args, _original=original, **kwargs):
            count.triton += 1
            inside[0] += 1
            try:
                return _original(self, *args, **kwargs)
            finally:
                inside[0] -= 1

        saved.append((cls, name, original))
        setattr(cls, name, counted)
    watched = bool(saved)
    try:
        with Counter():
            yield count
    finally:
        for cls, name, original in saved:
            setattr(cls, name, original)
    if not watched and "triton" in sys.modules:
        raise RuntimeError("triton was first imported inside the counted block, so its "
                           "launches were not counted: call import_triton() and run the draw "
                           "once before counting it")


def count(fn):
    """The ``Count`` of one call of ``fn()`` (run it once before: see ``counting``)."""
    with counting() as c:
        fn()
    return c
