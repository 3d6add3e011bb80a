"""The plan cache: plans of arguments seen before, shared by Generator and stateless.

A plan depends only on its arguments, so a repeated call looks its plan up
instead of checking its arguments again.  Only keys whose equality means "the
same plan" are cached (``cache_key``): strings, None, ints (not bools), floats
other than -0.0 (which equals 0.0 but can flip a result's sign) and shapes of
ints.  ``plan_get`` is the lookup every call makes first: the native core's
(one C call) where it is built, else the same rule in Python.  A draw into a
caller's ``out=`` array is cached too (``bound_to_out``), under its arguments
and the layout of ``out``, and bound to each call's ``out``.
"""

import math

import numpy as np

from ..backend import native as _native_backend

PLANS = {}
MAX_PLANS = 4096
_copysign = math.copysign


def cache_key(name, size, args, numbers=(int, float)):
    """The key under which the plan of these arguments may be cached, or None.

    ``numbers`` are the types a number in ``args`` may have ((int,): no floats).
    """
    ts = type(size)
    if ts is tuple:
        for d in size:
            if type(d) is not int:
                return None
    elif ts is not int and size is not None:
        return None
    for a in args:
        ta = type(a)
        if ta is str or a is None:
            continue
        if ta not in numbers or (ta is float and a == 0.0 and _copysign(1.0, a) < 0):
            return None
    return (name, size) + args


def cached(key, build):
    """The plan cached under ``key``, built by ``build()`` the first time (key None: no cache)."""
    if key is None:
        return build()
    plan = PLANS.get(key)
    if plan is None:
        plan = build()
        _store(key, plan)
    return plan


def _store(key, plan):
    """PLANS[key] = plan, emptying the cache first when it is full."""
    if len(PLANS) >= MAX_PLANS:
        PLANS.clear()
    PLANS[key] = plan


def _plan_get(cache, key):
    """``cache[key]`` when every item of the tuple ``key`` may be a key item, else None."""
    for a in key:
        t = type(a)
        if t is str or t is int or a is None:
            continue
        if t is float:
            if a or _copysign(1.0, a) > 0:
                continue
            return None
        if t is tuple:
            for d in a:
                if type(d) is not int:
                    return None
            continue
        return None
    return cache.get(key)


def bound_to_out(key, out, backend, build):
    """The plan of a draw into ``out``: ``build()``'s, made (and ``out`` checked) once.

    ``key`` is ``cache_key`` of the draw's arguments (None: build every time).
    Where ``out`` is a NumPy array (exactly ``np.ndarray``) and ``backend`` a
    host backend, the checks ``build`` makes of ``out`` (the backend's
    ``check_out``: dtype, shape, writable, C-contiguous) depend on nothing more
    than the key below holds, so the plan is cached under it and a later call
    with an array of the same layout takes it, bound to that array
    (``Plan.with_out``).  Any other ``out`` (a tensor, a subclass) is checked
    every time.
    """
    if key is None or type(out) is not np.ndarray or backend.name not in _HOST_BACKENDS:
        return build()
    flags = out.flags
    key = key + ("out", backend.name, out.dtype, out.shape, flags.writeable, flags.c_contiguous)
    plan = PLANS.get(key)
    if plan is None:
        plan = build()
        template = plan.with_out(None)  # the cache keeps no caller's array alive
        template.fast = _native_backend.fast_form(template)  # bound copies share it
        _store(key, template)
        return plan
    return plan.with_out(out)


_HOST_BACKENDS = ("native", "numpy")


# csrc/python/bindings_fast.cpp's plan_get is the same rule in one C call.
_extension = _native_backend.extension()
plan_get = _plan_get if _extension is None else _extension.plan_get
