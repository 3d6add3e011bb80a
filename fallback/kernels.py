"""The NumPy backend's kernel table: the same entry points as ``ascend_rand._native``.

Mirrors ``csrc/cpu/kernels.cpp``, ``csrc/cpu/kernels_bits.cpp``, ``csrc/core/mt19937.h`` and
their bindings: each draw kernel fills a flat, validated ``out`` from the
stream ``(key, (ctr_lo, ctr_hi))`` or a caller's ``words`` buffer
(``mt19937_uniform`` converts MT19937 engine words only); the MT19937 state
kernels update an engine's (key, pos) arrays in place.
"""

from .bernoulli import apply_mask, bernoulli, bernoulli_packed
from .conversions import integers, raw, uniform
from .derive import derive
from .mt19937 import (
    mt19937_advance,
    mt19937_fill,
    mt19937_jump_streams,
    mt19937_seed,
    mt19937_seed_by_array,
    mt19937_uniform,
)
from .normal import normal, truncated_normal
from .permutation import choice_sparse, permutation, weighted_choice

__all__ = [
    "apply_mask",
    "bernoulli",
    "bernoulli_packed",
    "choice_sparse",
    "derive",
    "integers",
    "mt19937_advance",
    "mt19937_fill",
    "mt19937_jump_streams",
    "mt19937_seed",
    "mt19937_seed_by_array",
    "mt19937_uniform",
    "normal",
    "permutation",
    "raw",
    "truncated_normal",
    "uniform",
    "weighted_choice",
]
