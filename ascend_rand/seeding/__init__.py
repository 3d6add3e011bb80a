"""Seeds: the derivation hierarchy (docs/spec.md section 7, docs/seeding.md).

``derive`` (engines/derive.py, where the engines' ``spawn`` finds it without an
arrow back up to this package) is the one step of every path: root -> rank ->
device -> named stream, and an engine's ``spawn``.  ``SeedManager`` (manager.py)
hands out a process's named streams in sync or independent mode and
checkpoints them.  ``ascend_rand.distributed`` runs it over torch.distributed;
``ascend_rand.data`` seeds DataLoader workers and orders epochs.

This package's ``__init__`` imports only ``derive``, so ``from ascend_rand.seeding
import derive`` stays the short spelling; the manager imports the engines.
"""

from ..engines.derive import derive, string_tag

__all__ = ["derive", "string_tag"]
