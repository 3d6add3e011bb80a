"""Triton kernels for the Philox draws: one launch per draw, the native backend's bits.

The device path of docs/spec.md sections 1-4 written once in Triton: compiled
for NVIDIA GPUs by ``triton``, for Ascend NPUs by ``triton-ascend`` (through
torch_npu), and interpreted on CPU tensors by Triton's interpreter
(``TRITON_INTERPRET=1``, set before these modules are imported; see
``interpreter.py``), which is how the test suite holds them to the native
core without a device.

Its modules:

- the host's entry points, one launch per draw, all in one table:
  ``kernels.py`` (the table, with the names and arguments of
  ``fallback.kernels``; ``fill`` and ``fill_from_state`` run a Plan; its
  ``dropout`` is ``dropout_draws.py``), ``normal_draws.py`` (the normal and
  truncated normal draws' launches) and ``dropout_draws.py`` (the fused
  dropout's launches, its graph-safe forms and the channel and alpha
  dropouts' one pass); ``ascend_rand.torch`` reaches them through the table
  ``device_path`` hands it;
- the kernels of each draw (device code): ``words.py`` (raw words),
  ``uniform.py``, ``integers.py``, ``bernoulli.py`` (bits and packed masks),
  ``normal.py`` (Box-Muller, and the float64 ziggurat), ``rejection.py`` (the
  float32 ziggurat and truncated normals: one grid loop), ``pending.py``
  (their second phase, the rejected elements retried alone), ``dropout.py``
  (the fused dropout) and ``channel_dropout.py`` (channel and alpha dropout's
  masks applied in one pass);
- device functions they share: ``philox.py`` (the block function and
  counter arithmetic), ``wordops.py`` (a 32-bit word's operations in the
  uint32 or the int32 form), ``conversions.py`` (words to values),
  ``detmath.py`` (spec Appendix A's log, exp, sin and cos), ``retry.py``
  (spec 5.2's retry region), ``ziggurat.py`` and ``truncated.py`` (the
  samplers, per element);
- host code: ``launch.py`` (grid, tiles, arguments, the launch count),
  ``word_forms.py`` (the word forms' constants, below the launcher and the
  device functions), ``state.py`` (a graph-safe Generator's device state,
  a draw's stream arguments and the state's advance kernel), ``interpreter.py`` (running under Triton's interpreter) and
  ``ascend_record.py`` (which kernels compile for which Ascend target,
  tools/ascend_compile.py's record).

Importing this package imports nothing; the kernel modules import triton.
"""
