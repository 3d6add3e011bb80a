"""Pure NumPy implementations of every ascend_rand algorithm.

Installed as ``ascend_rand.fallback``; file for file the mirror of ``csrc/``.
Used when the native extension is absent, and as the second implementation
that tests hold the native core to, bit for bit.
"""
