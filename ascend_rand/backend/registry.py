"""The registry of backends: each by its name, and which one a ``backend=`` argument means.

Holds no backend itself (backend/__init__.py registers them), so any module may ask
it which backend runs a draw without importing the backends: the torch backend asks
it for the host kernel table its CPU path runs.
"""

from .base import Backend, BackendUnavailableError

_REGISTRY = {}
_HOST = []  # the host backends ("auto" chooses from these, in registration order)


def register(backend):
    """Make ``backend`` (a ``Backend`` instance) selectable by its ``name``.

    >>> from ascend_rand import backend
    >>> backend.register(backend.resolve("numpy")) is backend.resolve("numpy")
    True
    >>> backend.register("numpy")
    Traceback (most recent call last):
    ...
    TypeError: register: expected a Backend instance, got str
    """
    if not isinstance(backend, Backend):
        raise TypeError(f"register: expected a Backend instance, got {type(backend).__name__}")
    _REGISTRY[backend.name] = backend
    _HOST[:] = [b for b in _REGISTRY.values() if b.host]
    return backend


def names():
    """Registered backend names, the default's preference order (native first).

    >>> from ascend_rand import backend
    >>> backend.names()
    ('native', 'numpy', 'torch', 'npu')
    """
    return tuple(_REGISTRY)


def default_backend():
    """The first host backend that can run here ("native", else "numpy").

    >>> import ascend_rand as ar
    >>> from ascend_rand import backend
    >>> backend.default_backend() == ("native" if ar.backends()["native"]["available"] else "numpy")
    True
    """
    for backend in _HOST:
        if backend.available:
            return backend.name
    raise BackendUnavailableError("no backend can run here")  # numpy always can


def resolve(name):
    """The ``Backend`` for a ``backend=`` argument ("auto" or a registered name).

    >>> from ascend_rand import backend
    >>> backend.resolve("numpy").name
    'numpy'
    >>> backend.resolve("auto").name == backend.default_backend()
    True
    >>> backend.resolve("gpu")
    Traceback (most recent call last):
    ...
    ValueError: unknown backend 'gpu'; expected one of ('auto', 'native', 'numpy', 'torch', 'npu')
    """
    if type(name) is str:  # every call's case, first
        if name == "auto":
            for backend in _HOST:
                if backend.available:
                    return backend
        else:
            backend = _REGISTRY.get(name)
            if backend is not None and backend.available:
                return backend
    return _resolve_checked(name)


def host_backend(name):
    """The host backend (NumPy arrays) for ``name``: itself, or "auto"'s for a backend of
    tensors (engines keep their state in host memory whatever backend draws).

    >>> from ascend_rand import backend
    >>> backend.host_backend("numpy").name
    'numpy'
    >>> backend.host_backend("auto").name == backend.default_backend()  # also for "torch"
    True
    """
    backend = resolve(name)
    return backend if backend.host else resolve("auto")


def host_backends():
    """The registered host backends (NumPy arrays), in registration order."""
    return tuple(_HOST)


def _resolve_checked(name):
    if isinstance(name, Backend):
        return name
    if not isinstance(name, str):
        raise TypeError(f"backend must be a string, one of {('auto',) + names()}, got {name!r}")
    if name == "auto":
        name = default_backend()
    backend = _REGISTRY.get(name)
    if backend is None:
        raise ValueError(f"unknown backend {name!r}; expected one of {('auto',) + names()}")
    if not backend.available:
        raise BackendUnavailableError(f"backend {name!r} is unavailable: {backend.reason}")
    return backend


def backends():
    """Each backend with whether it can run here and, if not, why.

    Returns ``{name: {"available": bool, "reason": str | None, ...}}``.

    >>> import ascend_rand as ar
    >>> info = ar.backends()
    >>> sorted(info)
    ['native', 'npu', 'numpy', 'torch']
    >>> info["numpy"]["available"], info["numpy"]["reason"]
    (True, None)
    """
    return {name: backend.report() for name, backend in _REGISTRY.items()}
