"""The one array implementation of every ascend_rand algorithm, over NumPy arrays or torch tensors.

Installed as ``ascend_rand.fallback``.  File for file the counterpart of the
portable core ``csrc/core/`` (``philox.py`` <-> ``philox.h``, ``conversions.py``
<-> ``conversions.h``, ...; ``core/device.h`` has no counterpart, and the
generated constants and tables, which the whole package reads, are
``ascend_rand/tables/``), with ``kernels.py``, the kernel table, as the
counterpart of ``csrc/cpu/kernels.*``; tests/backends/test_portable_core.py
holds the table.  Written over ``arrays.py``'s namespace, it runs as the NumPy
backend (host arrays: where the native extension is absent, and as the second
implementation the native core is held to, bit for bit) and as the torch
backend's mirror path (tensors on any device).  It imports nothing of the
package but ``ascend_rand.tables``.
"""
