"""numpy's BitGenerator protocol around the words (docs/spec.md section 2.6).

The engines hand numpy a ``bitgen_t`` capsule; this module adds what numpy's
users reach for next, in numpy's own names and layout:

- ``ctypes_interface`` / ``cffi_interface``: numpy's
  ``interface(state_address, state, next_uint64, next_uint32, next_double,
  bit_generator)`` over the capsule's ``bitgen_t``, which also keeps the
  engine alive (numpy's does not keep its BitGenerator);
- pickling and ``copy.deepcopy`` of a ``numpy.random.Generator`` or
  ``RandomState`` built on an engine.  numpy's own ``__reduce__`` rebuilds
  the container through ``numpy.random._pickle``, which accepts only
  subclasses of numpy's ``BitGenerator``; so this module registers, in
  ``copyreg.dispatch_table`` (which ``pickle`` and ``copy`` consult before
  ``__reduce__``), a reducer for those two exact types that handles the
  ones on our engines and hands every other one to numpy's ``__reduce__``
  unchanged (numpy's own pickles are byte for byte what they were).
"""

import collections
import copyreg
import ctypes
import threading

import numpy as np

try:  # numpy's own namedtuple, so that isinstance(engine.ctypes, interface) holds as for numpy's
    from numpy.random._common import interface
except ImportError:  # pragma: no cover - a numpy without it: the same fields
    interface = collections.namedtuple(
        "interface",
        ["state_address", "state", "next_uint64", "next_uint32", "next_double", "bit_generator"])

_CAPSULE_NAME = b"BitGenerator"


class _BitgenT(ctypes.Structure):
    """numpy/random/bitgen.h's ``bitgen_t``: the field order is numpy's ABI."""

    _fields_ = [("state", ctypes.c_void_p), ("next_uint64", ctypes.c_void_p),
                ("next_uint32", ctypes.c_void_p), ("next_double", ctypes.c_void_p),
                ("next_raw", ctypes.c_void_p)]


def _bitgen_of(capsule):
    """(address of the capsule's bitgen_t, that bitgen_t read through ctypes)."""
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get_pointer(capsule, _CAPSULE_NAME)  # a wrong name raises ValueError, never NULL
    return address, _BitgenT.from_address(address)


class EngineInterface(interface):
    """numpy's ``interface`` (the same fields; ``isinstance(x, interface)`` holds) that
    also keeps its engine alive: every pointer in it points into the engine's memory,
    so ``Philox(0).cffi.next_uint32(...)`` on a temporary engine stays valid."""

    def __new__(cls, engine, *fields):
        made = super().__new__(cls, *fields)
        made._engine = engine  # (a cycle with the engine's cache: the collector frees both)
        return made


def ctypes_interface(capsule, engine):
    """numpy's ctypes ``interface`` over the ``bitgen_t`` in ``capsule`` of ``engine``.

    Each ctypes object in it keeps the engine alive, as the interface does.
    Like numpy's, calling the functions takes no lock: hold ``engine.lock``
    when another thread may draw from the engine.
    """
    address, bitgen = _bitgen_of(capsule)
    fields = [
        ctypes.c_void_p(bitgen.state),
        ctypes.cast(bitgen.next_uint64, ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)),
        ctypes.cast(bitgen.next_uint32, ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)),
        ctypes.cast(bitgen.next_double, ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)),
        ctypes.c_void_p(address)]
    for field in fields:
        field._engine = engine
    return EngineInterface(engine, bitgen.state, *fields)


def cffi_interface(capsule, engine):
    """numpy's cffi ``interface`` over the ``bitgen_t`` in ``capsule`` of ``engine``;
    ImportError without cffi, as numpy's ``BitGenerator.cffi``.  (A cffi pointer
    cannot hold a reference: keep the interface or the engine while using one.)"""
    try:
        import cffi
    except ImportError as exc:
        raise ImportError("cffi cannot be imported: install it to use engine.cffi") from exc
    ffi = cffi.FFI()
    address, bitgen = _bitgen_of(capsule)
    return EngineInterface(
        engine,
        bitgen.state,
        ffi.cast("void *", bitgen.state),
        ffi.cast("uint64_t (*)(void *)", bitgen.next_uint64),
        ffi.cast("uint32_t (*)(void *)", bitgen.next_uint32),
        ffi.cast("double (*)(void *)", bitgen.next_double),
        ffi.cast("void *", address))


# -- pickling numpy's containers built on an engine ------------------------------------------

# The engine class (base.Engine), handed over by ``register``: base imports this module,
# so this one never imports base.
_ENGINE = []


def _is_engine(bit_generator):
    return bool(_ENGINE) and isinstance(bit_generator, _ENGINE[0])


def generator_on(engine):
    """Unpickling: ``numpy.random.Generator(engine)`` (the engine was restored first)."""
    return np.random.Generator(engine)


def random_state_on(engine, has_gauss, gauss):
    """Unpickling: ``numpy.random.RandomState(engine)`` with its cached Gaussian."""
    rs = np.random.RandomState(engine)
    if has_gauss:
        _through_probe(rs, lambda: rs.set_state(
            {"bit_generator": "", "state": {}, "has_gauss": 1, "gauss": float(gauss)}))
    return rs


class _Probe:
    """Stands in for a RandomState's bit generator while numpy's get_state/set_state
    read or write the cached Gaussian: to the thread that swapped it in, its state
    has the two keys they need; any other thread is sent on to the engine."""

    def __init__(self, engine):
        self._engine = engine
        self._owner = threading.get_ident()

    @property
    def state(self):
        if threading.get_ident() != self._owner:
            return self._engine.state  # waits for the lock, then as without the probe
        return {"bit_generator": "", "state": {}}

    @state.setter
    def state(self, value):
        if threading.get_ident() != self._owner:
            self._engine.state = value
        # The owner's own set_state only carries the cached Gaussian: no words.


def _through_probe(rs, call):
    """``call()`` with ``rs``'s bit generator swapped for the probe.

    RandomState keeps the cached Gaussian of its polar method (``has_gauss``,
    ``gauss``) where only ``get_state`` and ``set_state`` reach it, and both
    also read or write ``bit_generator.state`` in numpy's format, which is not
    an engine's.  They read and write the cache holding the engine's lock, as
    every RandomState draw does, so the pair read is one draw's; the words (in
    the bitgen_t numpy copied from the capsule) are not touched.  (Not called
    holding the lock: numpy takes it, and it is not reentrant.)
    """
    engine = rs._bit_generator
    try:
        rs._bit_generator = _Probe(engine)
    except AttributeError:  # pragma: no cover - a numpy whose RandomState hides it
        raise TypeError(
            "this numpy's RandomState does not let its cached Gaussian be read: "
            "pickle the engine and rebuild the RandomState instead") from None
    try:
        return call()
    finally:
        rs._bit_generator = engine


def _reduce_generator(g):
    bit_generator = g.bit_generator
    if _is_engine(bit_generator):
        return generator_on, (bit_generator,)
    return _numpy_reduce(g, _previous_generator)


def _reduce_random_state(rs):
    bit_generator = rs._bit_generator
    if _is_engine(bit_generator):
        st = _through_probe(rs, lambda: rs.get_state(legacy=False))
        return random_state_on, (bit_generator, int(st["has_gauss"]), float(st["gauss"]))
    return _numpy_reduce(rs, _previous_random_state)


def _numpy_reduce(obj, previous):
    return previous(obj) if previous is not None else obj.__reduce__()


def _previous(cls):
    """A reducer someone registered for ``cls`` before us (kept: we chain to it)."""
    reducer = copyreg.dispatch_table.get(cls)
    return None if getattr(reducer, "_ascend_rand", False) else reducer


_reduce_generator._ascend_rand = _reduce_random_state._ascend_rand = True
_previous_generator = _previous(np.random.Generator)
_previous_random_state = _previous(np.random.RandomState)


def register(engine_class):
    """Pickle numpy's Generator and RandomState built on an ``engine_class`` instance by
    their engine (the reducers chain to any registered before them for the rest); called
    once by engines/base.py with ``Engine``."""
    _ENGINE[:] = [engine_class]
    copyreg.pickle(np.random.Generator, _reduce_generator)
    copyreg.pickle(np.random.RandomState, _reduce_random_state)
