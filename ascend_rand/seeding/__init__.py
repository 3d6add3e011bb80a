"""Seeds: the derivation hierarchy (docs/spec.md section 7, docs/seeding.md).

``derive`` (derive.py) is the one step of every path: root -> rank -> device
-> named stream, and an engine's ``spawn``.  ``SeedManager`` (manager.py)
hands out a process's named streams in sync or independent mode and
checkpoints them.  ``ascend_rand.distributed`` runs it over torch.distributed;
``ascend_rand.data`` seeds DataLoader workers and orders epochs.

This package's ``__init__`` imports only ``derive``: engines use it, and the
manager imports the engines.
"""

from .derive import derive, string_tag

__all__ = ["derive", "string_tag"]
