"""Which devices torch can use here: torch_npu's state, a device string read as a torch.device,
and the one usability check every path into a draw makes before it reserves anything.

Imports nothing of the package but ``base`` (its error type) and ``torch_arrays``; torch (and torch_npu, where
installed) is imported on first use.
"""

import importlib
import importlib.util

from .base import BackendUnavailableError
from .torch_arrays import _torch


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
                    raise BackendUnavailableError(f"device {name!r}: {why}")
        why = _unusable(torch, dev)
        if why is not None:
            shown = device if isinstance(device, str) else name  # (as a Generator names it)
            raise ValueError(f"device {shown!r} cannot be used by this torch "
                             f"({torch.__version__}): {why}")
        _USABLE.add(name)
    return dev
