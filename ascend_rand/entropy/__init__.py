"""Hardware entropy for secure seeds: sources, NIST SP 800-90B health tests, a pool.

- ``sources()`` lists this machine's sources (rdseed, rdrand, rndrrs, hwrng,
  getrandom, npu) with why the absent ones are absent; ``resolve("auto")``
  picks the best present hardware source, else getrandom (sources.py);
- ``HealthTests``: the Repetition Count and Adaptive Proportion tests on every
  raw sample, with the start-up test; a failure fails closed (health.py);
- ``EntropyPool``: health-tested samples conditioned by SHA-256, or an
  HMAC_DRBG seeded from them; thread- and fork-safe (pool.py, drbg.py);
- ``secure_seed()``: 64 bits from the default pool: what ``Generator(None)``,
  ``MT19937(None)`` and ``distributed.init_seeds(None)`` use.

docs/security.md is the threat model and the reference for every cutoff.
"""

from .drbg import HmacDrbg
from .errors import EntropyError
from .health import HealthTests
from .pool import EntropyPool, default_pool, secure_seed
from .sources import EntropySource, NpuSource, SourceError, register, resolve, sources

__all__ = ["EntropyError", "EntropyPool", "EntropySource", "HealthTests", "HmacDrbg",
           "NpuSource", "SourceError", "default_pool", "register", "resolve", "secure_seed",
           "sources"]
