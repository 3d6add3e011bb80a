"""The torch backend: results are torch tensors, on the CPU or on a device.

``backend="torch"`` with ``device=`` ("cpu", "cuda:0", "npu:1", a torch.device)
draws the same bits as the native backend, by two paths:

- a CPU tensor is filled in place by the host kernels (the native core, else
  the NumPy mirror) through a view of its memory, no copy; the fill is the
  custom operator ``torch.ops.ascend_rand.fill_`` (``torch.library``), so
  ``torch.compile`` sees an operator, not opaque Python;
- a tensor on another device is filled by the Triton kernels
  (``triton_kernels/``, one launch per draw) where Triton compiles for that
  device, else by the same algorithms written in torch operations
  (``fallback/``, the one array implementation, as the mirror), on that device.

``device_path.route`` chooses, per draw; ``ASCEND_RAND_DEVICE_KERNELS=triton|torch``
forces a path (``triton`` on CPU tensors: Triton's interpreter), and
``backends()["torch"]["device_kernels"]`` says which path each device type takes.

Engines stay on the host: a Philox draw needs only its (key, counter), and an
MT19937 engine's words are made on the host and copied to the device.  torch
is imported when this backend is first used, never by ``import ascend_rand``;
"npu" (torch_npu on Ascend) is the same backend on the NPU, reported by
``backends()`` with the reason when it cannot run.
"""

import importlib
import importlib.util
import json

import numpy as np

from .. import _dtypes
from . import device_path, torch_out
from .base import DRAW_KERNELS, Backend, host_view

_OP = "ascend_rand::fill_"


def _torch():
    import torch
    return torch


def torch_dtype(name):
    """The torch dtype of a plan's dtype name."""
    torch = _torch()
    return {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
            "bfloat16": torch.bfloat16, "int8": torch.int8, "int16": torch.int16,
            "int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8,
            "uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64,
            "bool": torch.bool}[name]


def as_numpy(x):
    """``x`` as a NumPy array: a torch tensor (any device; bfloat16 as ml_dtypes.bfloat16)
    copied to the host, anything else through ``numpy.asarray``."""
    if type(x).__module__.startswith("torch"):
        torch = _torch()
        if isinstance(x, torch.Tensor):
            x = x.detach().cpu()
            if x.dtype == torch.bfloat16:
                return x.view(torch.int16).numpy().view(_dtypes.NUMPY["bfloat16"])
            return x.numpy()
    return np.asarray(x)


# -- the registered operator --------------------------------------------------------------------

_registered = False


def _host_table():
    """The host kernel table the CPU path runs: the native core's, else the NumPy mirror's."""
    from . import resolve
    return resolve("auto")


def _encode(value, arrays):
    """A kernel argument as JSON, arrays moved to ``arrays`` (referenced by index)."""
    if isinstance(value, np.ndarray):
        arrays.append(value)
        return {"array": len(arrays) - 1}
    if isinstance(value, float):
        return {"float": value.hex()}  # exact, and JSON has no inf or nan
    return value


def _decode(value, arrays):
    if isinstance(value, dict):
        return arrays[value["array"]] if "array" in value else float.fromhex(value["float"])
    return value


def _fill_host(out, kernel, args, arrays):
    """Fill the CPU tensor ``out`` (flat) by host kernel ``kernel``: the operator's body.

    ``args`` is the JSON of [key, ctr_lo, ctr_hi, *params] (floats as hex, arrays as
    indices into ``arrays``), then {"words": index} when the draw reads engine words.
    """
    host = [a.numpy() for a in arrays]
    values = json.loads(args)
    words = None
    if values and isinstance(values[-1], dict) and "words" in values[-1]:
        words = host[values.pop()["words"]].view(np.uint32)
    key, lo, hi, *params = (_decode(v, host) for v in values)
    view = host_view(out, kernel)
    bits = _dtypes.BITS_VIEW.get(_dtypes.dtype_name(view.dtype) or "")
    target = view if bits is None else view.view(bits)
    fn = _host_table().kernel(kernel)
    if words is None:
        fn(target, key, lo, hi, *params)
    else:
        fn(target, key, lo, hi, *params, words=words)


def _register():
    """Define ``torch.ops.ascend_rand.fill_`` once (a mutating op with no outputs)."""
    global _registered
    if _registered:
        return
    torch = _torch()

    @torch.library.custom_op(_OP, mutates_args=("out",), device_types="cpu")
    def fill_(out: torch.Tensor, kernel: str, args: str, arrays: list[torch.Tensor]) -> None:
        _fill_host(out, kernel, args, arrays)

    @fill_.register_fake
    def _(out, kernel, args, arrays):
        return None

    _registered = True


def _fill_direct(flat, kernel, key, counter, params, words):
    """The operator's body without the dispatcher: what eager calls run."""
    view = host_view(flat, kernel)
    bits = _dtypes.BITS_VIEW.get(_dtypes.dtype_name(view.dtype) or "")
    fn = _host_table().kernel(kernel)
    target = view if bits is None else view.view(bits)
    if words is None:
        fn(target, key, counter[0], counter[1], *params)
    else:
        fn(target, key, counter[0], counter[1], *params, words=words)


def fill_cpu(flat, kernel, key, counter, params, words=None):
    """Fill the flat CPU tensor ``flat`` by host kernel ``kernel``.

    Under ``torch.compile`` through the registered operator (the graph holds
    ``ascend_rand::fill_``); in eager mode the same body is called directly,
    since the dispatcher and the argument encoding cost about 50 us a call.
    """
    torch = _torch()
    if not torch.compiler.is_compiling():
        _fill_direct(flat, kernel, key, counter, params, words)
        return
    _register()
    arrays = []
    args = [key, counter[0], counter[1]] + [_encode(p, arrays) for p in params]
    if words is not None:
        arrays.append(np.ascontiguousarray(words, dtype=np.uint32))
        args.append({"words": len(arrays) - 1})
    # (uint32 travels as int32 bits: torch's uint32 supports few operations)
    tensors = [torch.from_numpy(a.view(np.int32) if a.dtype == np.uint32 else
                                np.require(a, requirements=("C", "W"))) for a in arrays]
    torch.ops.ascend_rand.fill_(flat, kernel, json.dumps(args), tensors)


def empty_cpu(count, dtype):
    """A new CPU tensor of ``count`` items in NumPy's memory (no copy).

    NumPy asks the kernel for huge pages on large arrays and torch's CPU
    allocator does not: a fresh 40 MB torch.empty then costs more page faults
    than drawing into it (measured: 2.4x the time of the whole native draw).
    """
    torch = _torch()
    if dtype == "bfloat16":
        return torch.from_numpy(np.empty(count, np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.empty(count, _dtypes.NUMPY[dtype]))


# -- the backend --------------------------------------------------------------------------------

def npu_state():
    """(available, reason) of torch_npu here, importing it (and torch) to find out."""
    if importlib.util.find_spec("torch") is None:
        return False, "torch is not installed (pip install 'ascend_rand[torch]')"
    if importlib.util.find_spec("torch_npu") is None:
        return False, "torch_npu is not installed (Ascend's PyTorch adapter, with CANN)"
    try:
        importlib.import_module("torch_npu")
    except (ImportError, OSError) as exc:  # e.g. libhccl.so missing: CANN is not installed
        return False, f"torch_npu is installed but cannot be imported: {type(exc).__name__}: {exc}"
    torch = _torch()
    npu = getattr(torch, "npu", None)
    if npu is None:
        return False, "torch_npu imported but torch.npu is missing"
    try:
        count = npu.device_count() if npu.is_available() else 0
    except RuntimeError as exc:
        return False, f"torch_npu cannot query devices: {exc}"
    if not count:
        return False, "torch_npu works but no NPU device is visible (torch.npu.is_available() is False)"
    return True, None


# Devices found usable (``_unusable``): checked once a process.
_USABLE = {"cpu"}


def _unusable(torch, dev):
    """Why torch cannot make tensors on ``dev`` here, or None when it can.

    torch's own answers are an AssertionError (a CUDA-less build), a
    NotImplementedError (a device type with no kernels here: "xla" without
    torch_xla), a RuntimeError (an index past the last device) or an ImportError;
    a ValueError naming the device, when the Generator is made, says it instead
    (Backend.on).  The check is an empty tensor there.
    """
    if dev.type == "cuda":
        if not torch.backends.cuda.is_built():
            return "it was built without CUDA (a CPU-only torch)"
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if not count:
            return "no CUDA device is visible (torch.cuda.is_available() is False)"
        if dev.index is not None and dev.index >= count:
            return f"it sees {count} CUDA device(s), so the indices are 0..{count - 1}"
    try:
        torch.empty(0, device=dev)
    except (AssertionError, NotImplementedError, RuntimeError, ImportError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"it has no {dev.type!r} device here ({type(exc).__name__}: {reason})"
    return None


def torch_device(device):
    """``device`` read as a torch.device, with the messages a Generator made for it gives:
    BackendUnavailableError for "npu" without a working torch_npu, ValueError naming a
    string torch does not read as a device.  Reads only: whether tensors can be made
    there is ``usable_device``'s question (a trace for an absent device reads devices).

    >>> torch_device("cuda:1")
    device(type='cuda', index=1)
    """
    torch = _torch()
    if isinstance(device, torch.device):
        return device
    if isinstance(device, str) and device.split(":")[0] == "npu":
        ok, why = npu_state()
        if not ok:
            from .base import BackendUnavailableError
            raise BackendUnavailableError(f"device {device!r}: {why}")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device {device!r} is not a torch device ({exc})") from None


def usable_device(device):
    """``device`` as a torch.device where this torch can make tensors on it ("meta"
    included), else the error a Generator made for it gives: ValueError naming it (not a
    device, or one this torch cannot use, and why), BackendUnavailableError for "npu"
    without a working torch_npu.  The one device check of every path into a draw (the
    Generator, ``ascend_rand.torch.ops.draw`` and the operators), made before anything
    is reserved.

    >>> usable_device("cpu")
    device(type='cpu')
    >>> usable_device("meta")  # (a draw there allocates and computes nothing)
    device(type='meta')
    """
    torch = _torch()
    dev = torch_device(device)
    name = str(dev)
    if name not in _USABLE and dev.type != "meta":
        if dev.type == "npu":
            ok, why = npu_state()
            if not ok:
                from .base import BackendUnavailableError
                raise BackendUnavailableError(f"device {name!r}: {why}")
        why = _unusable(torch, dev)
        if why is not None:
            shown = device if isinstance(device, str) else name  # (as a Generator names it)
            raise ValueError(f"device {shown!r} cannot be used by this torch "
                             f"({torch.__version__}): {why}")
        _USABLE.add(name)
    return dev


class TorchBackend(Backend):
    """torch tensors on ``device`` (default "cpu"); the same bits as the native backend.

    ``cpu_kernels`` chooses the CPU path: "host" (the native core fills the tensor
    in place) or "torch" (the device path's torch operations, on the CPU: how the
    test suite holds the device code to the native core without a device).  On a
    device the Triton kernels draw where Triton compiles for it, else the torch
    operations; ``ASCEND_RAND_DEVICE_KERNELS`` forces either, on CPU tensors too
    (``device_path``; "torch" there is ``cpu_kernels="torch"``, "triton" Triton's
    interpreter; an explicit ``cpu_kernels="torch"`` stays the torch operations).
    """

    name = "torch"
    _default_device = "cpu"

    def __init__(self, device=None, cpu_kernels="host"):
        if cpu_kernels not in ("host", "torch"):
            raise ValueError(f"cpu_kernels must be 'host' or 'torch', got {cpu_kernels!r}")
        self._device = device
        self._cpu_kernels = cpu_kernels
        self._host = None
        self._fns = {}

    # -- availability ---------------------------------------------------------------------

    @property
    def available(self):
        return importlib.util.find_spec("torch") is not None

    @property
    def reason(self):
        return None if self.available else "torch is not installed (pip install 'ascend_rand[torch]')"

    def report(self):
        info = super().report()
        if self.available:
            torch = _torch()
            info["torch"] = torch.__version__
            info["cuda"] = torch.cuda.is_available()
            info["device_kernels"] = device_path.report()
        return info

    # -- devices --------------------------------------------------------------------------

    @property
    def device(self):
        return str(self._device or self._default_device)

    def on(self, device):
        if device is None:
            return self
        dev = usable_device(device)
        if dev.type == "meta":
            raise ValueError(f"device {device!r} holds no values, so nothing can be drawn there; "
                             "ascend_rand.torch's init functions, reset_parameters and dropout "
                             "leave meta tensors as they are and move the Generator as a real "
                             "draw would (docs/spec.md 2.4)")
        return type(self)(str(dev), self._cpu_kernels)

    def _torch_device(self):
        return _torch().device(self.device)

    # -- kernels --------------------------------------------------------------------------

    def _host_backend(self):
        if self._host is None:
            self._host = _host_table()
        return self._host

    def kernel(self, name):
        # Engines call state kernels (mt19937_fill, derive) on their host buffers.
        if name not in DRAW_KERNELS:
            return self._host_backend().kernel(name)
        fn = self._fns.get(name)
        if fn is None:
            # The mirror: fallback/'s one array implementation, on tensors.
            from ..fallback import kernels as table
            fn = self._fns[name] = getattr(table, name)
        return fn

    def allocate(self, shape, dtype, device=None):
        if device is None:
            backend = self
        else:
            try:
                backend = self.on(device)
            except RuntimeError as exc:  # BackendUnavailableError: that device is not here
                raise ValueError(f"cannot allocate on device {device!r}: {exc}") from None
        return _torch().empty(shape, dtype=torch_dtype(dtype), device=backend._torch_device())

    def check_out(self, out, shape, dtype, what):
        torch = _torch()
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"{what}: out must be a torch.Tensor on backend 'torch', "
                            f"got {type(out).__name__}")
        want = torch_dtype(dtype)
        if out.dtype != want:
            raise TypeError(f"{what}: out has dtype {out.dtype}, expected {want}")
        if shape is not None and tuple(out.shape) != shape:
            raise ValueError(f"{what}: out has shape {tuple(out.shape)}, expected {shape}")
        if not out.is_contiguous():
            raise ValueError(f"{what}: out must be contiguous (strides {tuple(out.stride())})")
        if out.is_meta:
            raise ValueError(f"{what}: out is a meta tensor, which holds no values to draw "
                             "into (ascend_rand.torch.init leaves meta tensors as they are)")
        torch_out.check_writable(out, what)
        return tuple(out.shape)

    def prepare(self, plan):
        """(out, flat, fresh, route): the result tensor (a new one, or the caller's), the
        flat tensor the kernel fills, whether ``flat`` is a fresh tensor that
        ``out.copy_`` takes in through autograd (backend/torch_out.py), and the draw's
        route (``_route``).  Everything that can refuse the draw (the device path,
        ASCEND_RAND_DEVICE_KERNELS) is decided here, before the stream is reserved."""
        torch = _torch()
        out = plan.out
        fresh = False
        if out is None:
            device = self._torch_device()
            out = flat = (empty_cpu(plan.count, plan.dtype) if device.type == "cpu" else
                          torch.empty(plan.count, dtype=torch_dtype(plan.dtype), device=device))
        elif torch_out.recorded(out):
            flat = torch.empty(plan.count, dtype=out.dtype, device=out.device)
            fresh = True
        else:
            flat = out.detach().view(-1)
        return out, flat, fresh, self._route(plan, flat)

    def _route(self, plan, flat):
        """(path, payload): (HOST, None), (TRITON, the Triton kernel table) or (MIRROR, the
        plan's parameters with its arrays on flat's device)."""
        path, table = device_path.route(flat.device.type, plan, self._cpu_kernels)
        if path == device_path.MIRROR:
            return path, self._mirror_params(plan, flat)
        return path, table

    @staticmethod
    def _mirror_params(plan, flat):
        torch = _torch()
        if not plan.count:
            return plan.params
        return [torch.as_tensor(p if p.flags.writeable else p.copy(), device=flat.device)
                if isinstance(p, np.ndarray) else p for p in plan.params]

    def run(self, plan, key, counter, words=None, output=None):
        torch = _torch()
        out, flat, fresh, (path, payload) = self.prepare(plan) if output is None else output
        if plan.count:
            if words is not None and path == device_path.TRITON:
                # engine words (MT19937) are not a Philox stream: the mirror draws them
                path, payload = device_path.MIRROR, self._mirror_params(plan, flat)
            if path == device_path.HOST:
                fill_cpu(flat, plan.kernel, key, counter, plan.params, words)
            elif path == device_path.TRITON:
                device_path.fill(payload, plan, flat, key, counter)
            else:
                fn = self.kernel(plan.kernel)
                if words is None:
                    fn(flat, key, counter[0], counter[1], *payload)
                else:
                    w = torch.from_numpy(np.asarray(words, dtype=np.int64)).to(flat.device)
                    fn(flat, key, counter[0], counter[1], *payload, words=w)
        if plan.out is None:
            if plan.reshape or plan.scalar:
                out = out.reshape(plan.shape)
        else:
            torch_out.written(plan.out, flat if fresh else None)
        if plan.finish is not None:
            return plan.finish(self, out)
        return out

    def small_draw(self, engine):
        # On the CPU the host backend's one-call draw (a NumPy result) is handed to torch
        # without a copy; it declines what it does not take, as on the host.
        if self.device != "cpu" or self._cpu_kernels != "host":
            return None
        try:  # a forced device path takes the general draw (a bad value is its error)
            if device_path.choice() != "auto":
                return None
        except ValueError:
            return None
        host = self._host_backend()
        draw = host.small_draw(engine)
        if draw is None:
            return None
        adopt = host.adopt  # this backend's general path is not the host's: the host's own
        torch = _torch()    # form is made here, on the first draw of a plan
        from_numpy, bfloat16 = torch.from_numpy, torch.bfloat16

        def small(plan):
            adopt(plan)
            result = draw(plan)
            if result is None:
                return None
            if plan.dtype == "bfloat16":
                return from_numpy(np.asarray(result).view(np.int16)).view(bfloat16)
            return from_numpy(np.asarray(result))

        return small

    def words(self, count):
        return np.empty(count, dtype=np.uint32)  # engines fill their words on the host

    def take(self, array, index):
        torch = _torch()
        source = array if isinstance(array, torch.Tensor) else torch.as_tensor(array)
        return source.to(index.device)[index]

    def searchsorted(self, sorted_values, values):
        torch = _torch()
        table = torch.as_tensor(sorted_values, device=values.device)
        return torch.searchsorted(table, values, right=True).to(torch.int64)


class NpuBackend(TorchBackend):
    """The torch backend on Ascend NPUs (torch_npu); ``backends()`` says why it cannot run."""

    name = "npu"
    _default_device = "npu"

    def __init__(self, device=None, cpu_kernels="host"):
        super().__init__(device, cpu_kernels)

    @property
    def available(self):
        return npu_state()[0]

    @property
    def reason(self):
        return npu_state()[1]

    def report(self):
        return {"available": self.available, "reason": self.reason}
