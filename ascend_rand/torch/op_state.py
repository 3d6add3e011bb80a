"""The state tensor the operators draw from (ops.py), and its reservation rules.

A draw reads its (seed, offset) from an int64 tensor of 8 elements with the
layout of a Philox engine's slots (SEED, OFFSET, BLOCK, INDEX, BUF01, BUF23,
VALID, FLAGS: engines/philox.py) and moves the offset on by one (docs/spec.md
2.4).  A Generator's own CPU state tensor is its engine's memory
(``state_tensor``), reserved through the engine; any other state (a device
state, a compiler's copy, one made by hand) is read and advanced as data.
"""

import threading
import weakref
from array import array

import torch

from ..engines import Philox
from ..generator import Generator
from . import graph_state
from ._bridge import generator_or_default

STATE_SLOTS = 8
_U64 = 1 << 64
_U63 = 1 << 63

_ATTR = "_torch_state"  # the engine's attribute holding its CPU state view
_ENGINES = weakref.WeakValueDictionary()  # the view's address -> its engine
_make_lock = threading.Lock()


def _not_philox(engine, what):
    return ValueError(
        f"{what}: an {engine.name.upper()} Generator hands out the words of its state in "
        f"order, on the host; under torch.compile (and in graph-safe mode) a draw must take "
        f"its (seed, offset) from a state tensor, which only a counter-based Philox "
        f"Generator has (ascend_rand.Generator(seed), engine='philox')")


@torch.compiler.disable
def _make_state_outside_compiled_code(engine):
    """The CPU state view of ``engine``, made once (``torch.frombuffer`` cannot be traced:
    ``state_tensor`` makes it before compiling wherever it can, see ``prepare``)."""
    with _make_lock:
        view = getattr(engine, _ATTR, None)
        if view is None:
            view = torch.frombuffer(engine._slots, dtype=torch.int64)
            _ENGINES[view.data_ptr()] = engine
            setattr(engine, _ATTR, view)
    return view


def state_tensor(generator=None, what="state_tensor"):
    """The CPU state tensor of ``generator`` (None: the default Generator): its Philox
    engine's slots as an int64 tensor of 8, sharing their memory (no copy), the same
    tensor every call.  ValueError for an MT19937 Generator (it has no such state).

    >>> import ascend_rand as ar
    >>> from ascend_rand.torch import ops
    >>> g = ar.Generator(7)
    >>> _ = g.random(3)
    >>> ops.state_tensor(g).tolist()[:2]  # seed, offset
    [7, 1]
    """
    generator = generator_or_default(generator, what)
    engine = generator.engine
    if not isinstance(engine, Philox):
        raise _not_philox(engine, what)
    view = getattr(engine, _ATTR, None)
    if view is None:
        view = _make_state_outside_compiled_code(engine)
    return view


def prepare(generator=None):
    """Make ``generator``'s state tensor now, outside compiled code (``torch.compile`` cannot
    trace its making; Dropout layers and the eager front ends make it themselves).
    Returns the generator; an MT19937 Generator is returned as it is."""
    generator = generator_or_default(generator, "prepare")
    if isinstance(generator.engine, Philox):
        state_tensor(generator)
    return generator


def state_for(generator, device, what):
    """The state tensor a draw on ``device`` from ``generator`` reads: the device state in
    graph-safe mode (``graph_state.state_for``), else the CPU view.  ValueError for MT19937."""
    device_state = graph_state.state_for(generator, device)
    if device_state is not None:
        return device_state
    return state_tensor(generator, what)


def _check_state(state, what):
    if not isinstance(state, torch.Tensor) or state.dtype != torch.int64 \
            or state.numel() != STATE_SLOTS or state.dim() != 1 or not state.is_contiguous():
        raise ValueError(
            f"{what}: state must be a contiguous int64 tensor of {STATE_SLOTS} elements (a "
            f"Philox engine's slots: ascend_rand.torch.ops.state_tensor), got "
            f"{getattr(state, 'dtype', type(state).__name__)} of shape "
            f"{tuple(getattr(state, 'shape', ()))}")


def _engine_of(state, what):
    """(engine, scratch) for a CPU state tensor: the engine whose memory it is (scratch
    False), or a Philox engine holding a copy of its slots (scratch True: a compiler's
    clone, or a state made by hand), whose slots go back into ``state`` after the draw."""
    engine = _ENGINES.get(state.data_ptr())
    if engine is not None and state.dtype == torch.int64 and state.numel() == STATE_SLOTS:
        return engine, False  # (the memory of a live engine's slots: its view, or a view of it)
    _check_state(state, what)
    scratch = Philox(0)
    slots = array("Q")
    slots.frombytes(state.numpy().tobytes())
    scratch._slots = slots
    return scratch, True


def _live_engine(state, what):
    """The engine whose memory ``state`` is (its ``state_tensor``); ValueError otherwise."""
    engine = _ENGINES.get(state.data_ptr()) if isinstance(state, torch.Tensor) else None
    if engine is None or state.dtype != torch.int64 or state.numel() != STATE_SLOTS:
        raise ValueError(
            f"{what}: state must be a Generator's own state tensor "
            f"(ascend_rand.torch.ops.state_tensor(generator): the engine's memory, through "
            f"which the operator reserves under the engine's lock), got "
            f"{getattr(state, 'dtype', type(state).__name__)} of shape "
            f"{tuple(getattr(state, 'shape', ()))} that is no engine's")
    return engine


def _write_back(state, scratch):
    state.copy_(torch.frombuffer(scratch._slots, dtype=torch.int64))


def _host_generator(engine):
    """A host Generator on ``engine`` (cached on it): how the operators draw on the CPU."""
    gen = engine.__dict__.get("_torch_host_generator")
    if gen is None:
        gen = Generator(engine=engine)
        engine._torch_host_generator = gen
    return gen


def _as_int64(word):
    return word - _U64 if word >= _U63 else word


def _stream_of(drawn_at):
    """(key, counter) from a CPU ``drawn_at`` tensor (seed, offset as int64 bits), checked
    by ``_check_drawn_at``."""
    key, offset = (w % _U64 for w in drawn_at.tolist())
    return key, (0, offset)
