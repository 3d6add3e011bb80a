"""torch mirrors of ``ascend_rand.fallback``: the same kernels as torch tensor operations.

Each module mirrors the fallback module of the same name, operation for operation,
so that a draw on any torch device gives the native core's bits (docs/spec.md).
torch is imported by these modules only; ``import ascend_rand`` never imports them.
"""
