"""Pure NumPy implementations of every ascend_rand algorithm.

Installed as ``ascend_rand.fallback``.  File for file the mirror of the
portable core ``csrc/core/`` (``philox.py`` <-> ``philox.h``, ``conversions.py``
<-> ``conversions.h``, ...; ``core/device.h`` has no counterpart), with
``kernels.py``, the kernel table, as the counterpart of ``csrc/cpu/kernels.*``;
tests/backends/test_portable_core.py holds the table.  Used when the native extension is
absent, and as the second implementation that tests hold the native core to,
bit for bit.
"""
