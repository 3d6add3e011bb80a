"""``manual_seed``: one call seeds every random source a training script draws from.

The process's sources are ascend_rand's default Generator (``default_generator``),
Python's ``random``, NumPy's legacy global state (``numpy.random.seed``) and
torch: its CPU generator and the generators of every available device (CUDA,
XPU, MPS, MTIA, and Ascend NPUs when torch_npu is installed).  ``manual_seed``
returns a ``SeedState`` that holds what it replaced and puts it back.

torch stays optional: it is imported here, inside the call, only when it is
installed, and a source that is absent is listed in ``SeedState.skipped``
with the reason rather than failing the call.
"""

import os
import random
import threading

import numpy as np

from .. import _validate
from ..engines import Philox
from ..generator import Generator

# torch's two settings of CUBLAS_WORKSPACE_CONFIG under which cuBLAS is
# deterministic (CUDA 10.2+ release notes, torch's "Reproducibility" page); the
# first costs about 24 MiB of workspace, the second is the small one.
CUBLAS_ENV = "CUBLAS_WORKSPACE_CONFIG"
CUBLAS_DETERMINISTIC = (":4096:8", ":16:8")
_U32 = 1 << 32

_lock = threading.Lock()
_default = None  # the default Generator, made on first use
_root = None  # the seed of the last manual_seed (None: never called, or restored to that)


def default_generator():
    """The process-wide ascend_rand Generator (Philox), keyed from OS entropy on first use.

    ``manual_seed(seed)`` re-keys this same object in place, so a reference
    taken earlier stays valid.  A forked child starts with a copy of the
    parent's state (as with numpy's and torch's global generators): DataLoader
    workers get their own keys from ``ascend_rand.data.worker_init_fn``.

    >>> import ascend_rand as ar
    >>> g = ar.default_generator()
    >>> g is ar.default_generator()
    True
    >>> with ar.manual_seed(7):
    ...     g.state
    {'engine': 'philox', 'seed': 7, 'offset': 0}
    """
    global _default
    g = _default
    if g is None:
        with _lock:
            if _default is None:
                _default = Generator(engine=Philox(None))
            g = _default
    return g


def root_seed():
    """The seed of the last ``manual_seed`` call (None when there was none, or it was restored)."""
    return _root


def numpy_seed(seed):
    """What ``manual_seed(seed)`` passes to ``numpy.random.seed``.

    numpy's legacy seeding takes an int only below 2**32 (it seeds with
    ``init_genrand``) and otherwise a sequence of uint32 words (``init_by_array``).
    A seed below 2**32 goes as it is, so ``manual_seed(s)`` leaves numpy exactly
    where the habitual ``np.random.seed(s)`` would; a larger one goes as its two
    32-bit halves ``[seed & 0xFFFFFFFF, seed >> 32]``, the MT19937 seed the
    project uses for every 64-bit key (docs/spec.md section 7), so all 64 bits
    count and no two such seeds share a state.

    >>> numpy_seed(42)
    42
    >>> numpy_seed(2**40 + 5)
    [5, 256]
    """
    seed = _validate.uint64(seed, "seed")
    return seed if seed < _U32 else [seed & 0xFFFFFFFF, seed >> 32]


def _import_torch():
    """(torch, None), or (None, why not) when torch cannot be imported."""
    try:
        import torch
    except ImportError as exc:
        return None, f"torch is not importable ({exc})"
    return torch, None


def _torch_devices(torch):
    """[(name, module)] of torch's device backends with generators to seed, and
    {name: why skipped} for the others."""
    found, skipped = [], {}
    try:
        import torch_npu  # noqa: F401  (registers torch.npu)
    except Exception as exc:  # not installed, or no CANN driver: reported, not fatal
        skipped["torch.npu"] = f"torch_npu is not importable ({type(exc).__name__}: {exc})"
    for name in ("cuda", "xpu", "mps", "mtia", "npu"):
        module = getattr(torch, name, None)
        if module is None or not hasattr(module, "is_available"):
            skipped.setdefault(f"torch.{name}", f"this torch has no torch.{name}")
            continue
        # A child forked after the parent started the device cannot use it (torch
        # itself skips the device in torch.manual_seed there).
        bad_fork = getattr(module, "_is_in_bad_fork", None)
        if bad_fork is not None and bad_fork():
            skipped[f"torch.{name}"] = "forked from a process that had started the device"
        elif not module.is_available():
            skipped[f"torch.{name}"] = f"no {name} device available"
        else:
            skipped.pop(f"torch.{name}", None)
            found.append((name, module))
    return found, skipped


def _device_rng_state(module):
    """Every device's generator state (the ``*_all`` API; MPS has one device)."""
    if hasattr(module, "get_rng_state_all"):
        return module.get_rng_state_all()
    return module.get_rng_state()


def _set_device_rng_state(module, state):
    if hasattr(module, "set_rng_state_all"):
        module.set_rng_state_all(state)
    else:
        module.set_rng_state(state)


def _seed_sources(seed, torch, devices):
    """Seed every source with the checked uint64 ``seed``; returns the names seeded.

    The default Generator is re-keyed in place (fresh stream: Philox(seed),
    offset 0).  ``devices`` is ``_torch_devices``'s list; torch.manual_seed
    seeds the CPU and every device torch knows, and each listed device is also
    seeded explicitly (torch_npu's generators are not always among torch's).
    """
    default_generator().set_state({"engine": "philox", "seed": seed, "offset": 0})
    random.seed(seed)
    np.random.seed(numpy_seed(seed))
    seeded = ["ascend_rand", "random", "numpy"]
    if torch is not None:
        torch.manual_seed(seed)
        seeded.append("torch")
        for name, module in devices:
            if hasattr(module, "manual_seed_all"):
                module.manual_seed_all(seed)
            else:
                module.manual_seed(seed)
            seeded.append(f"torch.{name}")
    return tuple(seeded)


def seed_process(seed):
    """Seed every source as ``manual_seed`` does, but record neither a state to
    restore nor the root: what a DataLoader worker does with its own key
    (ascend_rand.data).  Returns (names seeded, {name: why skipped})."""
    seed = _validate.uint64(seed, "seed")
    torch, why = _import_torch()
    skipped = {"torch": why} if torch is None else {}
    devices = []
    if torch is not None:
        devices, skipped = _torch_devices(torch)
    return _seed_sources(seed, torch, devices), skipped


class SeedState:
    """What one ``manual_seed`` call replaced, and the means to put it back.

    ``seeded`` names the sources it seeded ("ascend_rand", "random", "numpy",
    "torch", "torch.cuda", "torch.npu", ...); ``skipped`` maps each source it
    left alone to the reason (torch not installed, no device).  ``restore()``
    sets every seeded source, the deterministic settings it changed and the
    recorded root back to exactly what they were before the call; the first
    call restores, later calls do nothing (so draws made after a restore are
    never rewound by a second one).  As a context manager it restores on exit.

    >>> import random, ascend_rand as ar
    >>> before = random.getstate()
    >>> with ar.manual_seed(5) as s:
    ...     "random" in s.seeded
    True
    >>> random.getstate() == before
    True
    """

    def __init__(self, seed, deterministic, torch, devices, skipped):
        self.seed = seed
        self.deterministic = deterministic
        self.seeded = ()
        self.skipped = dict(skipped)
        self._restored = False
        self._torch = torch
        # Captured before anything changes.
        self._root = _root
        self._default = default_generator().state
        self._random = random.getstate()
        self._numpy = np.random.get_state()
        self._torch_cpu = None if torch is None else torch.get_rng_state()
        self._devices = [(module, _device_rng_state(module)) for _, module in devices]
        self._flags = None
        if deterministic:
            cudnn = torch.backends.cudnn
            self._flags = (torch.are_deterministic_algorithms_enabled(),
                           torch.is_deterministic_algorithms_warn_only_enabled(),
                           cudnn.deterministic, cudnn.benchmark, os.environ.get(CUBLAS_ENV))

    @property
    def restored(self):
        """True once ``restore()`` has run."""
        return self._restored

    def restore(self):
        """Put back what ``manual_seed`` replaced (once; a second call does nothing)."""
        global _root
        if self._restored:
            return
        self._restored = True
        torch = self._torch
        if self._flags is not None:
            enabled, warn_only, cudnn_deterministic, benchmark, env = self._flags
            torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
            torch.backends.cudnn.deterministic = cudnn_deterministic
            torch.backends.cudnn.benchmark = benchmark
            if env is None:
                os.environ.pop(CUBLAS_ENV, None)
            else:
                os.environ[CUBLAS_ENV] = env
        for module, state in self._devices:
            _set_device_rng_state(module, state)
        if self._torch_cpu is not None:
            torch.set_rng_state(self._torch_cpu)
        np.random.set_state(self._numpy)
        random.setstate(self._random)
        default_generator().set_state(self._default)
        _root = self._root

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.restore()
        return False

    def __repr__(self):
        return (f"SeedState(seed={self.seed}, deterministic={self.deterministic}, "
                f"seeded={list(self.seeded)}, skipped={sorted(self.skipped)}, "
                f"restored={self._restored})")


def _set_deterministic(torch):
    # cuBLAS reads the variable when it makes its handle: it must be in the
    # environment before the process's first CUDA matmul.  A user's own
    # deterministic setting is kept.
    if os.environ.get(CUBLAS_ENV) not in CUBLAS_DETERMINISTIC:
        os.environ[CUBLAS_ENV] = CUBLAS_DETERMINISTIC[0]
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def manual_seed(seed, deterministic=False):
    """Seed ascend_rand's default Generator, Python's random, NumPy and torch with ``seed``.

    ``seed`` is a uint64 (an int in [0, 2**64)).  Each source gets it the way
    its own seeding function takes it:

    - ``default_generator()``: re-keyed in place to a fresh ``Philox(seed)``
      stream (offset 0), the stream of ``ascend_rand.Generator(seed)``;
    - ``random.seed(seed)``;
    - ``numpy.random.seed(numpy_seed(seed))``: ``seed`` itself below 2**32 (as
      ``np.random.seed(seed)``), its two 32-bit halves above (see ``numpy_seed``);
    - torch, when installed: ``torch.manual_seed(seed)`` (the CPU and the
      devices torch knows) and ``manual_seed_all(seed)`` of each available
      device, including ``torch.npu`` when torch_npu is installed.

    ``seed`` also becomes the process's root seed (``root_seed()``), from which
    ``ascend_rand.data`` keys DataLoader workers.

    ``deterministic=True`` (needs torch) also turns on
    ``torch.use_deterministic_algorithms(True)``, ``torch.backends.cudnn.deterministic``,
    turns off ``torch.backends.cudnn.benchmark`` and sets
    ``CUBLAS_WORKSPACE_CONFIG=:4096:8`` (kept if it already holds ``:16:8``).
    cuBLAS reads that variable once, when the process first uses it: call
    ``manual_seed`` before any CUDA work.  With a CUDA device present the call
    starts CUDA, to save the device generators' states.

    Returns a ``SeedState``: what was seeded and skipped, and ``restore()``
    (or ``with manual_seed(s): ...``) to put every touched state back.  A bad
    ``seed`` raises before anything changes.

    >>> import ascend_rand as ar
    >>> state = ar.manual_seed(1234)
    >>> ar.default_generator().random(2).tolist() == ar.Generator(1234).random(2).tolist()
    True
    >>> state.restore()
    """
    seed = _validate.uint64(seed, "seed")
    deterministic = _validate.flag(deterministic, "deterministic", "manual_seed")
    torch, why = _import_torch()
    if torch is None:
        if deterministic:
            raise RuntimeError(f"manual_seed(deterministic=True) sets torch's deterministic "
                               f"algorithms, but {why}; install torch or pass deterministic=False")
        devices, skipped = [], {"torch": why}
    else:
        devices, skipped = _torch_devices(torch)
    state = SeedState(seed, deterministic, torch, devices, skipped)
    global _root
    try:
        if deterministic:
            _set_deterministic(torch)
        state.seeded = _seed_sources(seed, torch, devices)
        _root = seed
    except BaseException:
        state.restore()  # all or nothing
        raise
    return state
