"""Dropout Cells for MindSpore with ascend_rand's packed masks: the torch front end's bits.

``Dropout``, ``Dropout1d``, ``Dropout2d`` and ``Dropout3d`` (and the function
``dropout``) draw one packed keep mask per call from an ``ascend_rand.Generator``
(``generator.dropout_mask(units, p)``: units = x.size for ``Dropout``, N * C
channels for the channel forms, bit n * C + c for channel c of sample n) and
apply it as ``ascend_rand.apply_mask`` does (docs/spec.md 4.7 and 4.9): kept
values fl_T(x * fl_T(1 / (1 - p))), dropped ones +0.  For the same Generator
state, shape and dtype they give exactly the values of ``ascend_rand.torch``'s
``dropout``, ``dropout1d``, ``dropout2d`` and ``dropout3d``.  Backward
(MindSpore's autograd, through the Cell's ``bprop``) applies the same mask to
the gradient; what it keeps is the packed mask, units / 8 bytes.

As MindSpore's own layers: the mask is drawn only in training
(``cell.set_train()``); in evaluation, or with ``p = 0``, x itself is returned
and nothing is drawn; ``p = 1`` draws and gives +0 everywhere.  MindSpore's seed
(``mindspore.set_seed``) plays no part.  The ranks are MindSpore's:
``Dropout1d`` takes (N, C, L) or (C, L), ``Dropout2d`` (N, C, H, W) and
``Dropout3d`` (N, C, D, H, W).

The mask is drawn and applied on the host (PyNative mode; a Cell compiled in
graph mode cannot call the Generator), the values copied back to x's device.

>>> import mindspore, numpy as np, ascend_rand as ar
>>> from ascend_rand.mindspore import Dropout
>>> layer = Dropout(0.5, generator=ar.Generator(42))
>>> _ = layer.set_train()
>>> layer(mindspore.Tensor(np.ones(8, np.float32))).asnumpy().tolist()
[0.0, 2.0, 2.0, 2.0, 0.0, 2.0, 0.0, 2.0]
"""

import math

import numpy as np
from mindspore import Tensor, nn, ops

from ..distributions.bernoulli import apply_mask, probability
from ..seeding.manual import default_generator
from ._checks import checked_generator as _checked_generator

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "dropout"]

_FLOATS = ("float32", "float64", "float16", "bfloat16")


def _checked_x(x, what):
    if not isinstance(x, Tensor):
        raise TypeError(f"{what}: x must be a mindspore.Tensor, got {type(x).__name__}")
    name = str(x.dtype).lower()
    if name not in _FLOATS:
        raise TypeError(f"{what}: x must be a floating tensor of dtype float32, float64, "
                        f"float16 or bfloat16, got {x.dtype}")
    return x


def _keep(mask, units, shape, channels):
    """The packed keep bits as apply_mask takes them: the mask itself for an elementwise
    draw, a bool array of x's shape for a channel draw (each channel's bit broadcast)."""
    if not channels:
        return mask
    bits = np.unpackbits(mask, count=units, bitorder="little").astype(bool)
    return np.broadcast_to(bits.reshape(tuple(shape[:2]) + (1,) * (len(shape) - 2)), shape)


class _Masked(nn.Cell):
    """y = the mask applied to x; its bprop applies the same mask to the gradient."""

    def __init__(self, p, channels):
        super().__init__()
        self.p, self.channels = p, channels

    def _apply(self, t, mask):
        values = t.asnumpy()
        units = math.prod(t.shape[:2]) if self.channels else values.size
        keep = _keep(mask.asnumpy(), units, values.shape, self.channels)
        return Tensor(apply_mask(values, keep, self.p), dtype=t.dtype)

    def construct(self, x, mask):
        return self._apply(x, mask)

    def bprop(self, x, mask, out, dout):
        return self._apply(dout, mask), ops.zeros_like(mask)


def _call(x, p, training, generator, what, channels, masked=None):
    """One checked call: the mask drawn (one draw) and applied."""
    _checked_x(x, what)
    p = probability(p, "p", what)
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"{what}: training must be a bool, got {training!r}")
    generator = _checked_generator(generator, what)
    if not training or p == 0.0:
        return x
    generator = default_generator() if generator is None else generator
    units = math.prod(x.shape[:2]) if channels else math.prod(x.shape)
    mask = Tensor(generator.dropout_mask(units, p))
    return (masked or _Masked(p, channels))(x, mask)


def dropout(x, p=0.5, training=True, generator=None):
    """Elementwise dropout of a MindSpore tensor: ``ascend_rand.torch.dropout``'s values.

    >>> import mindspore, numpy as np, ascend_rand as ar
    >>> x = mindspore.Tensor(np.ones(8, np.float32))
    >>> dropout(x, 0.5, generator=ar.Generator(42)).asnumpy().tolist()
    [0.0, 2.0, 2.0, 2.0, 0.0, 2.0, 0.0, 2.0]
    """
    return _call(x, p, training, generator, "dropout", False)


class Dropout(nn.Cell):
    """mindspore.nn.Dropout drawing its masks from an ascend_rand Generator.

    ``p`` the drop probability, in [0, 1]; ``generator`` an ``ascend_rand.Generator``,
    None for ``ascend_rand.default_generator()`` at each call.

    >>> import mindspore, numpy as np, ascend_rand as ar
    >>> layer = Dropout(0.25, generator=ar.Generator(1))
    >>> x = mindspore.Tensor(np.ones(4, np.float32))
    >>> layer(x) is x  # (a Cell starts in evaluation mode)
    True
    """

    _what = "Dropout"
    _channels = False
    _ranks = None

    def __init__(self, p=0.5, generator=None):
        super().__init__()
        self.p = probability(p, "p", self._what)
        self.generator = _checked_generator(generator, self._what)
        self._masked = _Masked(self.p, self._channels)

    def construct(self, x):
        """x with the layer's mask applied in training (one draw), x itself otherwise.

        >>> import mindspore, numpy as np, ascend_rand as ar
        >>> layer = Dropout(0.5, generator=ar.Generator(42))
        >>> _ = layer.set_train()
        >>> layer.construct(mindspore.Tensor(np.ones(4, np.float32))).asnumpy().tolist()
        [0.0, 2.0, 2.0, 2.0]
        """
        _checked_x(x, self._what)
        if self._ranks is not None and x.ndim not in self._ranks:
            raise ValueError(f"{self._what}: expected a {' or '.join(map(str, self._ranks))}-D "
                             f"input, got shape {tuple(x.shape)}")
        if not self.training or self.p == 0.0:
            return x
        if self._channels and x.ndim == 2:  # Dropout1d's (C, L): one sample
            return self._call(x.expand_dims(0)).squeeze(0)
        return self._call(x)

    def _call(self, x):
        return _call(x, self.p, self.training, self.generator, self._what, self._channels,
                     self._masked)

    def extend_repr(self):
        """The layer's settings as its repr shows them.

        >>> Dropout(0.1).extend_repr()
        'p=0.1'
        """
        return f"p={self.p}"


class Dropout1d(Dropout):
    """mindspore.nn.Dropout1d: whole channels of (N, C, L) or (C, L) inputs dropped.

    >>> import mindspore, numpy as np, ascend_rand as ar
    >>> layer = Dropout1d(0.5, generator=ar.Generator(7))
    >>> _ = layer.set_train()
    >>> layer(mindspore.Tensor(np.ones((3, 2), np.float32))).asnumpy().tolist()
    [[0.0, 0.0], [0.0, 0.0], [2.0, 2.0]]
    """

    _what, _channels, _ranks = "Dropout1d", True, (2, 3)


class Dropout2d(Dropout):
    """mindspore.nn.Dropout2d: whole channels of (N, C, H, W) inputs dropped.

    >>> import mindspore, numpy as np, ascend_rand as ar
    >>> layer = Dropout2d(0.5, generator=ar.Generator(4))
    >>> _ = layer.set_train()
    >>> layer(mindspore.Tensor(np.ones((1, 2, 1, 1), np.float32))).asnumpy().ravel().tolist()
    [2.0, 0.0]
    """

    _what, _channels, _ranks = "Dropout2d", True, (4,)


class Dropout3d(Dropout):
    """mindspore.nn.Dropout3d: whole channels of (N, C, D, H, W) inputs dropped.

    >>> import mindspore, numpy as np, ascend_rand as ar
    >>> layer = Dropout3d(0.5, generator=ar.Generator(5))
    >>> _ = layer.set_train()
    >>> y = layer(mindspore.Tensor(np.ones((1, 3, 1, 1, 2), np.float32))).asnumpy()
    >>> y[0, :, 0, 0, 0].tolist()
    [0.0, 2.0, 0.0]
    """

    _what, _channels, _ranks = "Dropout3d", True, (5,)
