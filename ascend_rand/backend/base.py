"""The backend protocol, and its implementation for host NumPy arrays.

Every backend runs the same kernel table (``KERNEL_NAMES``): a kernel is
called as ``kernel(out, key, ctr_lo, ctr_hi, *params, words=None)`` on the
flat bits view of the output and fills it from the Philox stream ``(key,
(ctr_lo, ctr_hi))``, or from ``words`` (an engine's uint32 words in stream
order; ``(key, counter)`` then names only the retry region).  The host tables
(native and NumPy) take ``word_count=``, the plan's words, too: the kernel
checks it against what it reads (a ValueError naming it), and the native
bindings size their work by it instead of restating the words rule.  The MT19937
state kernels (``mt19937_*``) update an engine's (key, pos) arrays in place;
``derive(out, seeds, tags)`` is one step of seed derivation over uint64 arrays.
"""

import numpy as np

from .. import _dtypes
from . import torch_out

_NUMPY = _dtypes.NUMPY
_BITS_VIEW = _dtypes.BITS_VIEW

# The kernels every backend provides, by name (docs/architecture.md, "Backends: one protocol,
# one kernel table").
DRAW_KERNELS = (
    "raw", "uniform", "integers", "normal", "truncated_normal",
    "bernoulli", "bernoulli_packed", "permutation", "choice_sparse", "weighted_choice",
    "mt19937_uniform",
)
MT19937_KERNELS = (
    "mt19937_seed", "mt19937_seed_by_array", "mt19937_fill", "mt19937_advance",
    "mt19937_jump_streams",
)
# Seed derivation: derive(out, seeds, tags) over uint64 arrays (docs/spec.md section 7).
SEED_KERNELS = ("derive",)
# Consumers of a draw: apply_mask(out, x, mask, scale), Ascend's DropOutDoMask (spec 4.7).
MASK_KERNELS = ("apply_mask",)
KERNEL_NAMES = DRAW_KERNELS + MT19937_KERNELS + SEED_KERNELS + MASK_KERNELS


class BackendUnavailableError(RuntimeError):
    """A backend was asked for by name but cannot run here.

    It says why; ``ascend_rand.backends()`` gives every backend's reason
    without raising.  A RuntimeError, so one ``except RuntimeError`` also
    catches it:

    >>> import ascend_rand as ar
    >>> issubclass(ar.BackendUnavailableError, RuntimeError)
    True
    >>> if not ar.backends()["npu"]["available"]:  # no torch_npu on this machine
    ...     try:
    ...         ar.Generator(0, backend="npu")
    ...     except ar.BackendUnavailableError as exc:
    ...         print(str(exc).startswith("backend 'npu' is unavailable"))
    ... else:
    ...     print(True)
    True
    """


class Backend:
    """What the front end needs of a backend.

    ``name`` selects it (``backend="name"``); ``available``/``reason`` say
    whether it runs here.  Arrays are the backend's own (NumPy for the host
    backends, tensors for torch): the front end never touches their data.

    >>> from ascend_rand.backend import Backend, resolve
    >>> b = resolve("numpy")
    >>> isinstance(b, Backend), b.name, b.device
    (True, 'numpy', 'cpu')
    """

    name = None
    # What the backend is, in a report's words ("the native core"; device_path's report).
    description = None
    # Whether results are NumPy arrays in host memory: "auto" chooses among these, in the
    # registry's order, and engines run their own words on one.
    host = False

    @property
    def available(self):
        """Whether the backend can run here (numpy always can).

        >>> from ascend_rand.backend import resolve
        >>> resolve("numpy").available
        True
        """
        raise NotImplementedError

    @property
    def reason(self):
        """Why the backend cannot run here (None when it can).

        >>> from ascend_rand.backend import resolve
        >>> print(resolve("numpy").reason)
        None
        """
        raise NotImplementedError

    def report(self):
        """``backends()``'s entry: {"available", "reason", ...details}.

        >>> from ascend_rand.backend import resolve
        >>> report = resolve("numpy").report()
        >>> report["available"], report["reason"]
        (True, None)
        """
        return {"available": self.available, "reason": self.reason}

    def set_num_threads(self, n):
        """Threads for one large draw; results never depend on it.

        ``ascend_rand.set_num_threads`` calls it on every host backend:

        >>> import ascend_rand as ar
        >>> from ascend_rand.backend import resolve
        >>> x = ar.stateless.uniform(10**6, key=3)
        >>> resolve("numpy").set_num_threads(1)
        >>> bool((ar.stateless.uniform(10**6, key=3, backend="numpy") == x).all())
        True
        >>> resolve("numpy").set_num_threads(ar.get_num_threads())  # back to the setting
        """

    def kernel(self, name):
        """The callable of kernel ``name`` (one of ``KERNEL_NAMES``).

        A draw kernel fills a flat array from the Philox stream (key, (ctr_lo, ctr_hi)):

        >>> import numpy as np
        >>> from ascend_rand.backend import resolve
        >>> out = np.empty(4, dtype=np.uint32)
        >>> resolve("numpy").kernel("raw")(out, 0, 0, 0)
        >>> [hex(w) for w in out.tolist()]  # Random123's known answer for key 0, counter 0
        ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
        """
        raise NotImplementedError

    def on(self, device):
        """This backend drawing on ``device`` (None: its default); a ValueError naming the
        device where it cannot.

        >>> from ascend_rand.backend import resolve
        >>> resolve("numpy").on("cpu") is resolve("numpy")
        True
        >>> resolve("numpy").on("npu:0")
        Traceback (most recent call last):
        ...
        ValueError: backend 'numpy' draws into host memory only, got device='npu:0'; ...
        """
        raise NotImplementedError

    @property
    def device(self):
        """Where this backend's results live ("cpu" for the host backends).

        >>> from ascend_rand.backend import resolve
        >>> resolve("numpy").device
        'cpu'
        """
        return "cpu"

    def allocate(self, shape, dtype, device=None):
        """An uninitialised array of ``shape`` and dtype name ``dtype``.

        >>> from ascend_rand.backend import resolve
        >>> a = resolve("numpy").allocate((2, 3), "bfloat16")
        >>> a.shape, a.dtype.name
        ((2, 3), 'bfloat16')
        """
        raise NotImplementedError

    def check_out(self, out, shape, dtype, what):
        """Check a caller's ``out=``; return the shape to draw (out's when ``shape`` is None).

        >>> import numpy as np
        >>> from ascend_rand.backend import resolve
        >>> b = resolve("numpy")
        >>> b.check_out(np.empty((2, 5), np.float32), None, "float32", "random")
        (2, 5)
        >>> b.check_out(np.empty(3, np.float64), None, "float32", "random")
        Traceback (most recent call last):
        ...
        TypeError: random: out has dtype float64, expected float32
        """
        raise NotImplementedError

    def prepare(self, plan, engine_words=False):
        """Everything a run of ``plan`` allocates (its output above all), as the ``output``
        argument of ``run``: a Generator calls it before it reserves the draw's offset,
        so a draw that cannot be allocated reserves nothing (docs/spec.md 2.2).  The
        form is the backend's own; ``run`` calls it itself when given none.
        ``engine_words``: the draw will read an engine's words (MT19937), which a backend
        that routes draws needs to know before it decides (the torch backend).

        >>> from ascend_rand.backend import resolve
        >>> from ascend_rand.distributions.uniform import plan_integers
        >>> b = resolve("numpy")
        >>> plan = plan_integers(3, "int64", 0, 100, False)
        >>> output = b.prepare(plan)  # the draw's memory, before any reservation
        >>> b.run(plan, 42, (0, 0), output=output).tolist()
        [61, 7, 98]
        """
        return None

    def run(self, plan, key, counter, words=None, output=None):
        """Fill ``plan.out`` (or a new array) by ``plan.kernel``; return the result.

        ``output`` is ``prepare(plan)``'s (None: prepared here).  A Generator draw is
        ``run(plan, *engine.reserve(plan, backend), output)`` with ``output``
        prepared before the reservation:

        >>> import ascend_rand as ar
        >>> from ascend_rand.backend import resolve
        >>> from ascend_rand.distributions.uniform import plan_integers
        >>> plan = plan_integers((2, 3), "int64", 0, 100, False)
        >>> resolve("numpy").run(plan, 42, (0, 0)).tolist()
        [[61, 7, 98], [51, 82, 60]]
        >>> ar.Generator(42).integers(0, 100, size=(2, 3)).tolist()
        [[61, 7, 98], [51, 82, 60]]
        """
        raise NotImplementedError

    def words(self, count):
        """An uninitialised uint32 buffer for ``count`` engine words.

        >>> from ascend_rand.backend import resolve
        >>> w = resolve("numpy").words(624)
        >>> w.dtype, w.shape
        (dtype('uint32'), (624,))
        """
        raise NotImplementedError

    def small_draw(self, engine):
        """A shortcut ``draw(plan)`` for a Generator on ``engine`` that reserves and fills
        in one step and returns the result, or None where the plan needs the general
        path; None when the backend has no shortcut.  Same bits as ``run``.

        >>> import ascend_rand as ar
        >>> from ascend_rand.backend import resolve
        >>> print(resolve("numpy").small_draw(ar.Philox(0)))  # numpy: the general path
        None
        >>> shortcut = resolve("auto").small_draw(ar.Philox(0))  # native: one C++ call
        >>> callable(shortcut) == ar.backends()["native"]["available"]
        True
        """
        return None

    def stateless_small_draw(self):
        """A shortcut ``draw(key, counter, plan)`` for stateless draws that checks ``key``
        and ``counter`` itself and returns the result, or None where the plan or the
        arguments need the general path; None when the backend has no shortcut.

        >>> import ascend_rand as ar
        >>> from ascend_rand.backend import resolve
        >>> print(resolve("numpy").stateless_small_draw())
        None
        >>> shortcut = resolve("auto").stateless_small_draw()  # native: one C++ call
        >>> callable(shortcut) == ar.backends()["native"]["available"]
        True
        """
        return None

    def adopt(self, plan):
        """Attach this backend's own form of ``plan`` (what its shortcuts read) before the
        plan cache keeps it, so every later draw of the plan, and its copies bound to
        other ``out=`` arrays, find it made; nothing for a backend without one.

        >>> import ascend_rand as ar
        >>> from ascend_rand.backend import resolve
        >>> from ascend_rand.distributions.uniform import plan_raw
        >>> plan = plan_raw(4, "uint32")
        >>> resolve("numpy").adopt(plan); print(plan.native_form)
        None
        >>> resolve("auto").adopt(plan)  # native: the kernel code, shape, words ...
        >>> bool(plan.native_form) == ar.backends()["native"]["available"]
        True
        """

    def take(self, array, index):
        """``array[index]`` along axis 0 (a new array).

        >>> import numpy as np
        >>> from ascend_rand.backend import resolve
        >>> resolve("numpy").take(np.array([10, 20, 30]), np.array([2, 0])).tolist()
        [30, 10]
        """
        raise NotImplementedError

    def searchsorted(self, sorted_values, values):
        """Indices (int64) where ``values`` go in ``sorted_values``, right side.

        >>> import numpy as np
        >>> from ascend_rand.backend import resolve
        >>> resolve("numpy").searchsorted(np.array([0.25, 0.5, 1.0]), np.array([0.5, 0.1])).tolist()
        [2, 0]
        """
        raise NotImplementedError


def _is_cpu(device):
    """A device argument naming the host: "cpu" or torch.device("cpu")."""
    return str(device) == "cpu"


def host_view(x, what):
    """A writable NumPy view of the memory of ``x``: a CPU torch tensor (bfloat16 included)
    or any array exporting DLPack in host memory; a TypeError/ValueError otherwise."""
    if type(x).__module__.startswith("torch"):
        import torch  # only here: the caller already has torch
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{what}: out must be an array or a tensor, got {type(x).__name__}")
        if x.device.type != "cpu":
            raise ValueError(f"{what}: out is on {x.device}; this backend writes host memory "
                             "(use backend='torch' for device tensors)")
        if not x.is_contiguous():
            raise ValueError(f"{what}: out must be contiguous (strides {tuple(x.stride())})")
        x = x.detach()
        if x.dtype == torch.bfloat16:  # NumPy has no bfloat16: through its bits
            return x.view(torch.int16).numpy().view(_dtypes.NUMPY["bfloat16"])
        if x.is_conj() or x.is_neg():
            raise ValueError(f"{what}: out is a lazily conjugated or negated view")
        return x.numpy()
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"{what}: out must be a numpy.ndarray, a CPU torch tensor or a DLPack "
                        f"array, got {type(x).__name__}")
    try:
        view = np.from_dlpack(x)
    except (BufferError, TypeError, RuntimeError) as exc:
        raise ValueError(f"{what}: out cannot be shared with NumPy through DLPack ({exc})") from None
    if not view.flags.writeable:
        raise ValueError(f"{what}: out is read-only through DLPack")
    return view


class HostBackend(Backend):
    """A backend whose arrays are host NumPy arrays; subclasses give the kernel table."""

    host = True

    def __init__(self):
        self._fns = {}

    def _table(self):
        """The module holding the kernels (None where unavailable)."""
        raise NotImplementedError

    def kernel(self, name):
        fn = self._fns.get(name)
        if fn is None:
            fn = self._fns[name] = getattr(self._table(), name)
        return fn

    def on(self, device):
        if device is None or _is_cpu(device):
            return self
        raise ValueError(f"backend {self.name!r} draws into host memory only, got device="
                         f"{device!r}; use backend='torch' for torch tensors on a device")

    def allocate(self, shape, dtype, device=None):
        if not (device is None or _is_cpu(device)):
            raise ValueError(f"backend {self.name!r} allocates on the CPU only, got device={device!r}")
        return np.empty(shape, dtype=_dtypes.NUMPY[dtype])

    def check_out(self, out, shape, dtype, what):
        """``out`` may be a NumPy array, a CPU torch tensor or any DLPack array in host
        memory: the draw writes into its memory and returns ``out`` itself."""
        if not isinstance(out, np.ndarray):
            if torch_out.is_tensor(out):  # torch's in-place rules (backend/torch_out.py)
                torch_out.check_writable(out, what)
            out = host_view(out, what)
        want = _dtypes.NUMPY[dtype]
        if out.dtype != want:
            raise TypeError(f"{what}: out has dtype {out.dtype}, expected {want}")
        if shape is not None and tuple(out.shape) != shape:
            raise ValueError(f"{what}: out has shape {out.shape}, expected {shape}")
        if not out.flags.writeable:
            raise ValueError(f"{what}: out is not writable")
        if not out.flags.c_contiguous:
            raise ValueError(f"{what}: out must be C-contiguous (strides {out.strides})")
        return tuple(out.shape)

    def prepare(self, plan, engine_words=False):
        """(flat, into, tensor, fresh): the flat array the kernel fills; an array to copy
        it into afterwards, or None; the caller's torch tensor, whose write autograd must
        learn of (backend/torch_out.py), or None; and whether ``flat`` is a fresh array
        that ``out.copy_`` takes in through autograd."""
        out = plan.out
        if out is None:  # allocated flat; shaped on the way out
            return np.empty(plan.count, dtype=_NUMPY[plan.dtype]), None, None, False
        if isinstance(out, np.ndarray):
            flat, tensor = out.reshape(-1), None
        else:  # a torch tensor or DLPack array (checked): filled through a view
            flat = host_view(out, plan.kernel).reshape(-1)
            tensor = out if torch_out.is_tensor(out) else None
            if tensor is not None and torch_out.recorded(tensor):
                return np.empty_like(flat), None, tensor, True
        # The native kernels store whole items and refuse memory not aligned to the
        # item size (docs/robustness.md); an out at an odd address (a view into a byte
        # buffer) is filled through an aligned buffer, with the same bits (spec 9).
        if plan.count and not flat.flags.aligned:
            return np.empty_like(flat), flat, tensor, False
        return flat, None, tensor, False

    def run(self, plan, key, counter, words=None, output=None):
        flat, into, tensor, fresh = self.prepare(plan) if output is None else output
        if plan.count:
            bits = _BITS_VIEW.get(plan.dtype)
            fn = self._fns.get(plan.kernel) or self.kernel(plan.kernel)
            fn(flat if bits is None else flat.view(bits), key, counter[0], counter[1],
               *plan.params, words=words, word_count=plan.words)
            if into is not None:
                into[...] = flat
        if tensor is not None:
            torch_out.written(tensor, flat if fresh else None)
        out = plan.out
        if out is None:
            out = flat.reshape(plan.shape) if plan.reshape else flat
        if plan.finish is not None:
            return plan.finish(self, out)
        return out[()] if plan.scalar else out

    def words(self, count):
        return np.empty(count, dtype=np.uint32)

    def take(self, array, index):
        return array[index]

    def searchsorted(self, sorted_values, values):
        return np.searchsorted(sorted_values, values, side="right").astype(np.int64)
