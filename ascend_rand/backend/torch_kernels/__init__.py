"""torch mirrors of the ``fallback/`` kernels: the same bits on any torch device.

File for file the counterpart of ``ascend_rand/fallback/`` (philox.py,
conversions.py, bernoulli.py, permutation.py, mt19937.py, ...), written with
torch tensor operations instead of NumPy; ``kernels.py`` is the kernel table.
Importing this package imports torch: ``import ascend_rand`` never imports it,
only a torch backend does, when it runs.
"""
