"""Distributions: each checks its arguments once and returns a backend-neutral ``Plan``.

``uniform`` (raw words, uniforms, integers), ``normal`` (ziggurat, Box-Muller,
truncated), ``bernoulli`` (bits, Ascend dropout masks and their consumers),
``permutation`` (permutations, shuffle, choice); ``plan`` holds the Plan and
the words-per-element rule.  ``initializers`` holds the parameter initialisers'
value rules (fans, gains, bounds), which ``ascend_rand.torch.init`` and
``ascend_rand.mindspore`` share.
"""
