"""ascend_rand for torch: dropout and parameter initialisation from ascend_rand Generators.

Imported on its own (``import ascend_rand.torch``): ``import ascend_rand``
never imports torch.  Every random value comes from an ``ascend_rand.Generator``
(None: ``ascend_rand.default_generator()``), is drawn by its backend (on the
host, or on a device for ``backend="torch"``) and copied to the tensor's
device, so it is the same on CPU, CUDA and Ascend NPUs and never touches
torch's own random state.

- ``dropout`` / ``Dropout``: torch_npu-format packed keep masks, applied as
  Ascend's DropOutDoMask; backward keeps the packed mask (n / 8 bytes) or
  only the draw's Philox key and counter (``mode="regenerate"``);
- ``dropout1d`` / ``dropout2d`` / ``dropout3d`` (``Dropout1d`` ...): whole channels
  dropped, one mask bit per channel; ``alpha_dropout`` / ``feature_alpha_dropout``
  (``AlphaDropout``, ``FeatureAlphaDropout``): dropped values set to SELU's saturation;
- ``init``: torch.nn.init's random initialisers with a ``generator=`` keyword;
- ``reset_parameters(module, generator)``: re-initialise a whole model with
  torch's default scheme of each layer.

>>> import torch, ascend_rand as ar
>>> import ascend_rand.torch as art
>>> layer = torch.nn.Linear(4, 2)
>>> art.reset_parameters(layer, ar.Generator(0))
>>> first = layer.weight.detach().clone()
>>> art.reset_parameters(layer, ar.Generator(0))
>>> torch.equal(first, layer.weight)
True
"""

try:
    import torch as _torch  # noqa: F401  (absolute: the library, not this package)
except ImportError as _error:
    raise ImportError(
        "ascend_rand.torch needs torch, which is not installed: pip install 'ascend_rand[torch]' "
        f"({_error})") from _error

from . import init
from .channel_dropout import (AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout,
                              alpha_dropout, dropout1d, dropout2d, dropout3d,
                              feature_alpha_dropout)
from .dropout import Dropout, dropout
from .graph_state import graph_safe
from .reset import reset_parameters

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
           "FeatureAlphaDropout", "alpha_dropout", "dropout", "dropout1d", "dropout2d",
           "dropout3d", "feature_alpha_dropout", "graph_safe", "init", "reset_parameters"]
