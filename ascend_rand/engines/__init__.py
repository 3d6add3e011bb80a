"""Engines: the word sources a Generator draws from, by name (docs/architecture.md).

Each engine implements ``Engine`` (engines/base.py).  ``Generator(engine=...)``
takes a registered name ("philox", "mt19937") or an engine object; a new
engine is one module here and one ``register`` line.
"""

from .base import Engine
from .mt19937 import MT19937
from .philox import Philox

_REGISTRY = {}


def register(cls):
    """Make the Engine subclass ``cls`` selectable by its ``name``.

    >>> from ascend_rand import engines
    >>> engines.register(int)
    Traceback (most recent call last):
    ...
    TypeError: register: expected an Engine subclass with a name, got <class 'int'>
    >>> engines.register(engines.Philox) is engines.Philox  # re-registering is harmless
    True
    """
    if not (isinstance(cls, type) and issubclass(cls, Engine)) or not cls.name:
        raise TypeError(f"register: expected an Engine subclass with a name, got {cls!r}")
    _REGISTRY[cls.name] = cls
    return cls


register(Philox)
register(MT19937)


def names():
    """The registered engine names, in registration order.

    >>> from ascend_rand import engines
    >>> engines.names()
    ('philox', 'mt19937')
    """
    return tuple(_REGISTRY)


def by_name(name):
    """The Engine class registered as ``name``.

    >>> from ascend_rand import engines
    >>> engines.by_name("mt19937")
    <class 'ascend_rand.engines.mt19937.MT19937'>
    >>> engines.by_name("pcg64")
    Traceback (most recent call last):
    ...
    ValueError: unknown engine 'pcg64'; expected one of ('philox', 'mt19937')
    """
    if not isinstance(name, str):
        raise TypeError(f"engine must be one of {names()} or an engine object, got {name!r}")
    cls = _REGISTRY.get(name)
    if cls is None:
        raise ValueError(f"unknown engine {name!r}; expected one of {names()}")
    return cls


def from_state(state):
    """A new engine of the kind ``state["engine"]`` names, in that state.

    >>> from ascend_rand import engines
    >>> engines.from_state({"engine": "philox", "seed": 3, "offset": 8})
    Philox(seed=3, offset=8)
    """
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict, got {type(state).__name__}")
    return by_name(state.get("engine")).from_state(state)


__all__ = ["Engine", "MT19937", "Philox", "by_name", "from_state", "names", "register"]
