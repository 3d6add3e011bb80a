"""The numbers docs/spec.md fixes and the scalar rules that derive from them, shared by every
implementation.

- ``constants.py``: the stream format's constants (slots, codes, thresholds, retry
  region), written by tools/gen_constants.py from csrc/constants.toml, with
  csrc/core/constants.h and csrc/python/constants_table.h;
- ``ziggurat_tables.py``: the ziggurat's layers (tools/gen_ziggurat_tables.py, with
  csrc/core/ziggurat_tables.h);
- ``mt19937_charpoly.py``: MT19937's characteristic polynomial for jump-ahead
  (tools/gen_mt19937_charpoly.py, with csrc/core/mt19937_charpoly.h);
- ``masks.py`` (hand-written): the packed mask's length and the keep threshold T(p)
  (spec 4.1-4.5), from the generated constants;
- ``formats.py`` (hand-written): the 16-bit float formats and the one correctly rounded
  float64 -> float16 / bfloat16 conversion (spec 3.3, 4.7), on a scalar parameter or
  on arrays;
- ``math_constants.py`` (hand-written, its float32 polynomials from
  tools/gen_detmath_constants.py): the deterministic math's constants (spec Appendix A)
  and Box-Muller's (5.4).

The engines, the plans, the backends, the Triton kernels and the NumPy fallback all
read them here; this package imports nothing of the rest of ascend_rand.
"""
