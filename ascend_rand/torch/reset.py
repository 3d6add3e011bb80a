"""``reset_parameters``: re-initialise a whole model from an ascend_rand Generator.

Each layer gets torch's own default scheme (its ``reset_parameters``), written
with ``ascend_rand.torch.init`` so that every random value comes from the
Generator and none from torch's random state.  The order of the draws is the
model's: ``module.modules()`` (the module, then its children, depth first),
and within a module its parameters in torch's order for that layer.
"""

import math

import torch
from torch import nn

from . import init
from ._bridge import generator_or_default


# -- torch's default schemes, as steps ------------------------------------------------------------
# A scheme maps a module to its steps [(parameter name, step)], in draw order;
# ``step(generator)`` initialises that parameter.  Nothing is drawn while the
# steps are built, so an unknown layer anywhere fails before any draw.

def _uniform_bias_bound(weight):
    """1 / sqrt(fan_in) of the weight, 0 when fan_in is 0 (torch's Linear and _ConvNd)."""
    fan_in, _ = init._fans(weight)
    return 1 / math.sqrt(fan_in) if fan_in > 0 else 0


def _kaiming_layer(module, zero_bias=False):
    """Linear and convolutions: kaiming_uniform_(a=sqrt(5)) weight, U(+-1/sqrt(fan_in)) bias."""
    steps = [("weight", lambda g: init.kaiming_uniform_(module.weight, a=math.sqrt(5),
                                                        generator=g))]
    if module.bias is not None:
        if zero_bias:
            steps.append(("bias", lambda g: init.zeros_(module.bias)))
        else:
            bound = _uniform_bias_bound(module.weight)
            steps.append(("bias", lambda g: init.uniform_(module.bias, -bound, bound,
                                                          generator=g)))
    return steps


def _bilinear(module):
    if module.in1_features <= 0:
        raise ValueError(f"reset_parameters: {module!r} has in1_features <= 0")
    bound = 1 / math.sqrt(module.weight.size(1))
    steps = [("weight", lambda g: init.uniform_(module.weight, -bound, bound, generator=g))]
    if module.bias is not None:
        steps.append(("bias", lambda g: init.uniform_(module.bias, -bound, bound, generator=g)))
    return steps


def _embedding(module):
    def weight(g):
        init.normal_(module.weight, generator=g)
        if module.padding_idx is not None:
            with torch.no_grad():
                module.weight[module.padding_idx].fill_(0)
    return [("weight", weight)]


def _affine(module, ones="weight", zeros="bias"):
    """Norm layers: weight ones, bias zeros (where present)."""
    steps = []
    if getattr(module, ones, None) is not None:
        steps.append((ones, lambda g: init.ones_(getattr(module, ones))))
    if zeros is not None and getattr(module, zeros, None) is not None:
        steps.append((zeros, lambda g: init.zeros_(getattr(module, zeros))))
    return steps


def _batch_norm(module):
    """_NormBase (BatchNorm, InstanceNorm, SyncBatchNorm): running statistics reset too."""
    return [(None, lambda g: module.reset_running_stats())] + _affine(module)


def _rnn(module):
    """RNN, LSTM, GRU and their cells: every parameter U(+-1/sqrt(hidden_size))."""
    stdv = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0

    def uniform(param):
        return lambda g: init.uniform_(param, -stdv, stdv, generator=g)

    return [(name, uniform(param)) for name, param in module.named_parameters(recurse=False)]


def _prelu(module):
    return [("weight", lambda g: init.constant_(module.weight, module.init))]


def _multihead_attention(module):
    """MultiheadAttention's own parameters (its out_proj is a Linear of its own, visited next)."""
    names = (["in_proj_weight"] if module._qkv_same_embed_dim
             else ["q_proj_weight", "k_proj_weight", "v_proj_weight"])
    steps = [(name, lambda g, name=name: init.xavier_uniform_(getattr(module, name),
                                                              generator=g)) for name in names]
    if module.in_proj_bias is not None:
        steps.append(("in_proj_bias", lambda g: init.zeros_(module.in_proj_bias)))
    for name in ("bias_k", "bias_v"):
        if getattr(module, name) is not None:
            steps.append((name, lambda g, name=name: init.xavier_normal_(getattr(module, name),
                                                                          generator=g)))
    return steps


SCHEMES = {
    nn.Linear: _kaiming_layer,
    nn.modules.conv._ConvNd: _kaiming_layer,
    nn.Bilinear: _bilinear,
    nn.Embedding: _embedding,
    nn.EmbeddingBag: _embedding,
    nn.modules.batchnorm._NormBase: _batch_norm,
    nn.LayerNorm: _affine,
    nn.GroupNorm: _affine,
    nn.modules.rnn.RNNBase: _rnn,
    nn.modules.rnn.RNNCellBase: _rnn,
    nn.PReLU: _prelu,
    nn.MultiheadAttention: _multihead_attention,
}
if hasattr(nn, "RMSNorm"):  # torch >= 2.4
    SCHEMES[nn.RMSNorm] = lambda module: _affine(module, zeros=None)


def _scheme_for(module, schemes):
    for cls in type(module).__mro__:
        if cls in schemes:
            return cls, schemes[cls]
    return None, None


def _plan(model, user_schemes):
    """[(parameter or None, step)] for the whole model, in draw order; raises before any draw."""
    schemes = {**SCHEMES, **user_schemes}
    # torch's MultiheadAttention zeroes its out_proj's bias (when it has in-projection biases).
    zero_bias = {id(m.out_proj) for m in model.modules()
                 if isinstance(m, nn.MultiheadAttention) and m.in_proj_bias is not None
                 and nn.MultiheadAttention not in user_schemes}
    plan = []
    for module in model.modules():
        own = dict(module.named_parameters(recurse=False))
        lazy = [name for name, p in own.items()
                if isinstance(p, nn.parameter.UninitializedParameter)]
        if lazy:
            raise ValueError(
                f"reset_parameters: {type(module).__name__} has uninitialised (lazy) parameters "
                f"{lazy}: run a forward pass first")
        cls, scheme = _scheme_for(module, schemes)
        if scheme is None and not own:
            continue  # containers, activations, dropout: nothing to draw
        if scheme is None:
            raise TypeError(
                f"reset_parameters: no initialisation scheme for {type(module).__name__} "
                f"(parameters {sorted(own)}); pass schemes={{{type(module).__name__}: fn}} with "
                f"fn(module, generator) initialising it with ascend_rand.torch.init")
        if cls in user_schemes:
            plan.append((None, lambda g, m=module, fn=scheme: fn(m, g)))
            continue
        if scheme is _kaiming_layer and id(module) in zero_bias:
            steps = _kaiming_layer(module, zero_bias=True)
        else:
            steps = scheme(module)
        missed = sorted(set(own) - {name for name, _ in steps})
        if missed:
            raise TypeError(
                f"reset_parameters: {type(module).__name__} has parameters {missed} that torch's "
                f"scheme for {cls.__name__} does not initialise; pass "
                f"schemes={{{type(module).__name__}: fn}}")
        plan += [(None if name is None else own[name], step) for name, step in steps]
    return plan


def reset_parameters(module, generator=None, *, schemes=None):
    """Re-initialise every parameter of ``module`` with torch's default scheme, from ``generator``.

    Layers and their schemes (torch's ``reset_parameters`` of each):
    Linear and Conv*d / ConvTranspose*d: ``kaiming_uniform_(weight,
    a=sqrt(5))``, bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)); Bilinear: both
    U(+-1/sqrt(in1_features)); Embedding / EmbeddingBag: N(0, 1), the
    padding row zeroed; BatchNorm / InstanceNorm / SyncBatchNorm: running
    statistics reset, weight ones, bias zeros; LayerNorm, GroupNorm,
    RMSNorm: ones and zeros; RNN / LSTM / GRU and their cells: every
    parameter U(+-1/sqrt(hidden_size)); PReLU: its ``init`` constant;
    MultiheadAttention: ``xavier_uniform_`` projections, zero biases (its
    out_proj's bias too), ``xavier_normal_`` bias_k / bias_v.  Subclasses get
    their base's scheme.

    Order: ``module.modules()``, and each module's parameters in the order
    above; a parameter shared by several modules is set by the first.  A
    module with parameters and no scheme (or with parameters its base's
    scheme does not cover) raises TypeError naming it before anything is
    drawn: pass ``schemes={ModuleType: fn}``, ``fn(module, generator)``
    initialising that module's own parameters (never torch's random state is
    used).  ``generator``: an ascend_rand Generator, None for the default one.

    >>> import torch, ascend_rand as ar
    >>> from ascend_rand.torch import reset_parameters
    >>> model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.LayerNorm(3))
    >>> reset_parameters(model, ar.Generator(1))
    >>> model[1].weight.tolist()
    [1.0, 1.0, 1.0]
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"reset_parameters: module must be a torch.nn.Module, "
                        f"got {type(module).__name__}")
    generator = generator_or_default(generator, "reset_parameters")
    if schemes is None:
        schemes = {}
    if not isinstance(schemes, dict) or not all(isinstance(k, type) and callable(v)
                                                for k, v in schemes.items()):
        raise TypeError("reset_parameters: schemes must be a dict {module type: "
                        "fn(module, generator)}")
    seen = set()
    for param, step in _plan(module, schemes):
        if param is not None:
            if id(param) in seen:
                continue
            seen.add(id(param))
        step(generator)
