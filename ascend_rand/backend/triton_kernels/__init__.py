"""Triton kernels for the Philox draws: one launch per draw, the native backend's bits.

The device path of docs/spec.md sections 1-4 written once in Triton: compiled
for NVIDIA GPUs by ``triton``, for Ascend NPUs by ``triton-ascend`` (through
torch_npu), and interpreted on CPU tensors by Triton's interpreter
(``TRITON_INTERPRET=1``, set before these modules are imported; see
``interpreter.py``), which is how the test suite holds them to the native
core without a device.

Kernel files read like ``csrc/core/`` plus a grid loop: ``philox.py`` (the
block function and counter arithmetic), ``conversions.py`` (the element
maths), ``words.py``, ``uniform.py``, ``integers.py``, ``bernoulli.py`` (one
kernel per draw, each citing its spec section); ``launch.py`` sizes the
grid and counts launches; ``kernels.py`` is the entry-point table, with the
names and arguments of ``fallback.kernels`` (and ``run_plan`` for a
Plan).  Importing this package imports nothing; ``kernels`` imports triton.
"""
