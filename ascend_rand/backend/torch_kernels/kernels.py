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

from .bernoulli import bernoulli, bernoulli_packed
from .conversions import integers, raw, uniform
from .mt19937 import mt19937_uniform
from .permutation import choice_sparse, permutation

# -- kernels built on the deterministic float functions (torch_kernels/detmath.py) ----------------
# normal and truncated_normal come from torch_kernels/normal.py, and weighted_choice
# needs detmath.log_f64 (bit-exact with fallback/detmath.py); both modules are written
# separately.  When they exist, this is where they join the table:
#     from .normal import normal, truncated_normal
#     from .detmath import log_f64
#     weighted_choice = functools.partial(permutation.weighted_choice, log_f64=log_f64)
# (permutation.weighted_choice is complete and tested with the host log_f64; it only
# needs a device log_f64 bound to it.)

__all__ = [
    "bernoulli",
    "bernoulli_packed",
    "choice_sparse",
    "integers",
    "mt19937_uniform",
    "permutation",
    "raw",
    "uniform",
]
