"""The torch backend's kernel table: the draw kernels of ``fallback/kernels.py``, on tensors.

Same names and arguments as ``ascend_rand.fallback.kernels`` and the native
core (``ascend_rand/backend/base.py`` DRAW_KERNELS): each draw kernel is
``kernel(out, key, ctr_lo, ctr_hi, *params, words=None)`` and fills a flat,
contiguous ``out`` tensor of the plan's own dtype, on any device, from the
Philox stream ``(key, (ctr_lo, ctr_hi))`` or from ``words`` (a 1-D int64
tensor of MT19937 engine words on out's device).  The bits equal the native
core's.  The MT19937 state kernels (``mt19937_seed`` ...) and ``derive`` are
not here: engines and seed derivation run on the host.

>>> import torch
>>> out = torch.empty(4, dtype=torch.uint32)
>>> raw(out, 0, 0, 0)
>>> out.tolist()  # Random123's known answer for a zero key and counter
[1713891541, 3781805453, 3159862348, 2600524760]
"""

import functools

from . import permutation as _permutation
from .bernoulli import bernoulli, bernoulli_packed
from .conversions import integers, raw, uniform
from .mt19937 import mt19937_uniform
from .detmath import log_f64
from .normal import normal, truncated_normal
from .permutation import choice_sparse, permutation

# The normals and the weighted choice take their logarithms, exponentials and sines
# from detmath.py, bit-exact with fallback/detmath.py (torch.log is not the same on
# every device).
weighted_choice = functools.partial(_permutation.weighted_choice, log_f64=log_f64)

__all__ = [
    "bernoulli",
    "bernoulli_packed",
    "choice_sparse",
    "integers",
    "mt19937_uniform",
    "normal",
    "permutation",
    "raw",
    "truncated_normal",
    "uniform",
    "weighted_choice",
]
