"""Seed derivation in NumPy, mirroring csrc/core/derive.h (docs/spec.md section 7).

uint64 array arithmetic wraps mod 2**64, as C++'s does.
"""

import numpy as np

DERIVE_GAMMA = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's increment
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def mix64(z):
    """SplitMix64's finaliser of a uint64 array (a new array)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


def derive(out, seeds, tags):
    """out[i] = derive(seeds[i], tags[i]) over uint64 arrays of one size (out may be seeds)."""
    out[...] = mix64(seeds ^ mix64(tags ^ DERIVE_GAMMA))
