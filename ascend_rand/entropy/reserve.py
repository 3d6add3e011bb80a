"""The entropy pool's output buffer: secret bytes waiting to be handed out, each once.

``SecretReserve()`` is the native one (csrc/entropy/reserve.h) when the core is built:
bytes are wiped as they are taken, kept out of core dumps, and forgotten in a forked
child however it forked, and ``take`` is one C call (the pool's small-read path).
``PyReserve`` does the same in Python for the NumPy-only install (a bytearray, forgotten
when the process id changes; Python cannot promise the wipes).
"""

import os

from ..backend import native as _native_backend


class PyReserve:
    """``SecretReserve`` in Python: ``take(n)``, ``put(data)``, ``clear()``,
    ``available``, ``taken``.

    >>> r = PyReserve(); r.put(b"abcdef")
    >>> r.take(4), r.take(4), r.available, r.taken
    (b'abcd', None, 2, 4)
    """

    def __init__(self):
        self._data = bytearray()
        self._pid = os.getpid()
        self._taken = 0

    def _forget_if_forked(self):
        if self._pid != os.getpid():
            self.clear()
            self._pid = os.getpid()

    @property
    def available(self):
        self._forget_if_forked()
        return len(self._data)

    @property
    def taken(self):
        return self._taken

    def take(self, n):
        if type(n) is not int:
            raise TypeError("take(n: int)")
        if n < 0:
            raise ValueError(f"take(n) needs n >= 0, got {n}")
        if self.available < n:
            return None
        out = bytes(self._data[:n])
        del self._data[:n]
        self._taken += n
        return out

    def put(self, data):
        self._forget_if_forked()
        self._data += memoryview(data).cast("B")

    def clear(self):
        self._data[:] = bytes(len(self._data))
        self._data.clear()


def new_reserve():
    """A native ``SecretReserve`` when the core is built, else a ``PyReserve``."""
    module = _native_backend.extension()
    if module is not None and hasattr(module, "SecretReserve"):
        return module.SecretReserve()
    return PyReserve()
