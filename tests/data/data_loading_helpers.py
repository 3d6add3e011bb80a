"""A synthetic dataset for tests/seeding/test_data_loading.py, in a module of its own.

DataLoader workers started with "spawn" unpickle the dataset, so its class must
be importable by name in a fresh interpreter: tests/conftest.py puts tests/data
on sys.path, and spawn hands the parent's sys.path to its children (a test file
cannot serve, the suite imports those in importlib mode).
"""

import random

import numpy as np

import ascend_rand.data as ard

FEATURES = 3


class AugmentedDataset:
    """Sample ``i`` is ``10 * i`` plus a normal "augmentation" drawn from
    ``sample_generator(index)`` (keyed by sample and epoch), with what the loading
    process's global sources draw next (which depend on the worker)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        import torch

        noise = ard.sample_generator(index).normal(size=FEATURES)  # float32
        x = np.full(FEATURES, 10 * int(index), dtype=np.float32) + noise
        info = torch.utils.data.get_worker_info()
        draws = [random.getrandbits(32),
                 int(np.random.randint(0, 2**31)),
                 int(torch.randint(0, 2**31, (1,)).item()),
                 int(ard.worker_generator().raw())]
        return {"index": int(index), "epoch": index.epoch, "x": torch.from_numpy(x),
                "worker": -1 if info is None else info.id,
                "draws": torch.tensor(draws, dtype=torch.int64)}
