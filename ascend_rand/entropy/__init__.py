"""Hardware entropy for secure seeds: sources, NIST SP 800-90B health tests, a pool.

docs/security.md is the threat model and the reference for every cutoff.
"""
