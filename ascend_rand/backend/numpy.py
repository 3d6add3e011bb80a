"""The NumPy backend: ``fallback/`` (installed as ``ascend_rand.fallback``).

The same algorithms as csrc/, file for file, in vectorised NumPy; always
available, and the second implementation the tests hold the native core to.
"""

from ..fallback import kernels as _kernels
from .base import HostBackend


class NumpyBackend(HostBackend):
    """Pure NumPy kernels on host arrays (one thread)."""

    name = "numpy"
    description = "NumPy fallback of the native core (the host backend where it is not built)"

    def _table(self):
        return _kernels

    @property
    def available(self):
        return True

    @property
    def reason(self):
        return None

    def report(self):
        return {**super().report(), "threads": 1}
