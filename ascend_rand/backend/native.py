"""The native backend: C++ kernels of the compiled core (csrc/) on host NumPy arrays.

Kernels release the GIL and split large draws over a thread pool by counter
ranges; the bits never depend on the split (docs/spec.md section 9).  The
extension is loaded once, by ``ascend_rand._extension``; where it is missing (or
an installed copy of another version lacks this backend's entry points), importing
warns once and ``backends()`` says why.

This backend alone builds the native form of a plan (``adopt``: ``plan.native_form``,
what its one-call draws read) and hands out those draws (``small_draw``,
``stateless_small_draw``); the front doors only call the protocol.
"""

import functools
import warnings

import numpy as np

from .. import _dtypes, _extension
from ..tables.constants import FLOAT_FORMAT_CODES, KERNEL_CODES, NORMAL_METHOD_CODES
from .base import KERNEL_NAMES, HostBackend

# What the one-call draws and the plan cache call besides the kernel table.
_ENTRY_POINTS = KERNEL_NAMES + ("philox_draw", "stateless_draw", "plan_get", "build_info",
                                "get_num_threads", "set_num_threads")
# The counter-based algorithm whose slots philox_draw reads and advances
# (engines/base.py ``Engine.counter_state``).
_ALGORITHM = "philox4x32_10"


def _incomplete(module):
    """Why ``module`` (a loaded extension) cannot serve this backend, or None."""
    missing = _extension.missing(_ENTRY_POINTS, module)
    if not missing:
        return None
    return (f"the installed extension {getattr(module, '__file__', module)} is from another "
            f"version (no {', '.join(missing)}): reinstall with pip install .")


# The one kernel of the one-call path that allocates after the call reserved its offset
# (a table of 16 bytes per member): larger permutations take the general path, where a
# failed allocation gives the reservation back (generator.py, docs/spec.md 2.2).
_SMALL_PERMUTATION = 1 << 16
_FORMATS = FLOAT_FORMAT_CODES
_METHODS = NORMAL_METHOD_CODES


def native_form(plan):
    """The native form of ``plan`` for ``_native.philox_draw`` / ``stateless_draw``: (numpy
    dtype, shape, scalar, kernel code, words, params), or False for a plan they do not take.

    Kernel codes from the generated constants (ascend_rand/tables/constants.py, from
    csrc/constants.toml by tools/gen_constants.py); plans with a finishing step,
    per-element probabilities or an ``out=`` other than an exact NumPy array take the
    general path (the native call fills an ``out`` array only when it is writable,
    C-contiguous, aligned and of the plan's dtype and shape, and declines otherwise).
    """
    if plan.finish is not None or not plan.count:
        return False  # (a permutation of an array indexes with it: the general path)
    if plan.out is not None and type(plan.out) is not np.ndarray:
        return False
    k, p = plan.kernel, plan.params
    if k == "raw":
        args = ()
    elif k == "uniform":
        args = (_FORMATS[p[0]],) + p[1:]
    elif k == "integers":
        args = p
    elif k == "normal":
        args = (_FORMATS[p[0]], _METHODS[p[1]]) + p[2:]
    elif k == "truncated_normal":
        args = (_FORMATS[p[0]],) + p[1:]
    elif k == "bernoulli" and p[1] is None:
        args = (p[0],)
    elif k == "bernoulli_packed" and p[2] is None:
        args = (p[0], p[1])
    elif k == "permutation" and p[0] <= _SMALL_PERMUTATION:
        args = p
    else:
        return False
    code = KERNEL_CODES[k]
    return (np.dtype(_dtypes.NUMPY[plan.dtype]), tuple(plan.shape), bool(plan.scalar), code,
            plan.words, args)


class NativeBackend(HostBackend):
    """C++17 kernels on host NumPy arrays (SIMD level chosen at import, thread pool)."""

    name = "native"
    description = "native core"

    def __init__(self):
        super().__init__()
        self._checked = (None, None)  # (extension, whether it has every entry point)

    @property
    def module(self):
        return _extension.module

    def _table(self):
        return _extension.module

    @property
    def available(self):
        # Asked on every draw that resolves "auto": the extension is checked once.
        module = _extension.module
        if module is None:
            return False
        checked, complete = self._checked
        if module is not checked:
            complete = _incomplete(module) is None
            self._checked = (module, complete)
        return complete

    @property
    def reason(self):
        module = _extension.module
        return _extension.unavailable_reason() if module is None else _incomplete(module)

    def report(self):
        info = super().report()
        if self.available:
            info.update(_extension.module.build_info())
            info["threads"] = _extension.module.get_num_threads()
        return info

    def set_num_threads(self, n):
        _extension.module.set_num_threads(n)

    def adopt(self, plan):
        # The native form is computed once per plan and shared by its bound copies.
        if plan.native_form is None:
            plan.native_form = native_form(plan)

    def prepare(self, plan, engine_words=False):
        if plan.native_form is None:  # the one-call draws take the plan from now on
            plan.native_form = native_form(plan)
        return super().prepare(plan, engine_words)

    def run(self, plan, key, counter, words=None, output=None):
        # Plans of the common kernels go to the kernel in one native call that
        # allocates, fills and shapes the output (csrc/python/bindings_fast.cpp); the
        # rest, engine words and a prepared output (a Generator's draw, allocated
        # before its reservation) take the general path.
        if words is None and output is None:
            if plan.native_form is None:
                plan.native_form = native_form(plan)
            if plan.native_form:
                result = _extension.module.stateless_draw(key, counter, plan)
                if result is not None:
                    return result
        return super().run(plan, key, counter, words, output)

    def small_draw(self, engine):
        # A Generator's draws on an engine whose counter state is Philox4x32-10's slots:
        # one native call reserves the offset under the engine's lock, allocates and
        # fills; it declines (None) plans without their native form (``adopt``, or set by
        # ``prepare``/``run`` on the first draw) and engine states off the common case.
        state = engine.counter_state
        if not self.available or state is None or state[0] != _ALGORITHM:
            return None
        return functools.partial(_extension.module.philox_draw, state[1], engine.lock.acquire,
                                 engine.lock.release)

    def stateless_small_draw(self):
        # stateless_draw checks key and counter itself (plain ints in range) and declines
        # anything else, and plans without their native form.
        return _extension.module.stateless_draw if self.available else None


if _extension.module is None or _incomplete(_extension.module) is not None:
    warnings.warn(
        f"ascend_rand: the native core is unavailable, so every draw runs on the slower NumPy "
        f"backend ({NativeBackend().reason}); ascend_rand.backends() reports it",
        RuntimeWarning,
        stacklevel=2,
    )
