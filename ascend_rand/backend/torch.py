"""The torch backend: results are torch tensors, on the CPU or on a device.

``backend="torch"`` with ``device=`` ("cpu", "cuda:0", "npu:1", a torch.device)
draws the same bits as the native backend, by two paths:

- a CPU tensor is filled in place by the host kernels (the native core, else
  the NumPy fallback) through a view of its memory, no copy; the fill is the
  custom operator ``torch.ops.ascend_rand.fill_`` (host_fill_op.py), so
  ``torch.compile`` sees an operator, not opaque Python;
- a tensor on another device is filled by the Triton kernels
  (``triton_kernels/``, one launch per draw) where Triton compiles for that
  device, else by the same algorithms written in torch operations
  (``fallback/``, the one array implementation, as the mirror), on that device.

``device_path.decide`` chooses, per draw, in ``prepare``; ``ASCEND_RAND_DEVICE_KERNELS=triton|torch``
forces a path (``triton`` on CPU tensors: Triton's interpreter), and
``backends()["torch"]["device_kernels"]`` says which path each device type takes.

Engines stay on the host: a Philox draw needs only its (key, counter), and an
MT19937 engine's words are made on the host and copied to the device.  torch
is imported when this backend is first used, never by ``import ascend_rand``;
"npu" (torch_npu on Ascend) is the same backend on the NPU, reported by
``backends()`` with the reason when it cannot run.
"""

import importlib.util

import numpy as np

from . import device_path, torch_out
from .base import DRAW_KERNELS, Backend
from .host_fill_op import _host_table, fill_cpu
from .torch_arrays import _torch, empty_cpu, torch_dtype
from .torch_devices import npu_state, usable_device


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

    def prepare(self, plan, engine_words=False):
        """(out, flat, fresh, route): the result tensor (a new one, or the caller's), the
        flat tensor the kernel fills, whether ``flat`` is a fresh tensor that
        ``out.copy_`` takes in through autograd (backend/torch_out.py), and the draw's
        route: ``device_path.decide``'s, for a draw that reads an engine's words where
        ``engine_words``.  Everything that can refuse the draw (the device path,
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
        return out, flat, fresh, self._route(plan, flat, engine_words)

    def _route(self, plan, flat, engine_words):
        """(path, payload): (HOST, None), (TRITON, the Triton kernel table) or (MIRROR, the
        plan's parameters with its arrays on flat's device)."""
        path, table = device_path.route(flat.device.type, plan, self._cpu_kernels, engine_words)
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
        if output is None:
            output = self.prepare(plan, engine_words=words is not None)
        out, flat, fresh, (path, payload) = output
        if plan.count:
            if path == device_path.HOST:
                fill_cpu(flat, plan.kernel, key, counter, plan.params, words)
            elif path == device_path.TRITON:
                if words is not None:  # (decide sends an engine's words to the mirror)
                    raise RuntimeError(f"{plan.kernel}: a draw of engine words was routed to "
                                       "the Triton kernels; prepare it with engine_words=True")
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
