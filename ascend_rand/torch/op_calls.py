"""The text of an operator draw, and its arguments checked before anything is reserved.

``ascend_rand::draw`` names its draw in one string, ``call`` (``call_text``: the
Generator method or initialiser, its arguments, the result's dtype and device;
every argument the dispatcher converts costs a microsecond or more a call, so
they travel together).  ``checked(call, size)`` reads it once (cached) and checks
all of it the way the Generator checks the same call, on every path into a draw
alike (docs/spec.md 2.2: a refused call reserves nothing):

- the device: ``backend.torch_devices.usable_device``, the check a Generator made for that
  device makes (a ValueError naming it; "meta" is a device that holds no values:
  a draw there moves the Generator on and allocates nothing, docs/spec.md 2.4);
- the arguments: ``generator.plan_of``, the Generator method itself run up to its
  plan (its signature, its checks, its messages; nothing drawn);
- the result: the plan's shape and dtype against the ``size`` and dtype asked for
  (what the operator's fake told the compiler).

The host operator, the device-state operator (graph-safe mode), the Triton
state form and ``ascend_rand.torch.ops.draw`` all take a draw through here.
"""

import threading

import numpy as np
import torch

from ..backend.torch_arrays import NAMES, dtype_name, torch_dtype
from ..backend.torch_devices import torch_device, usable_device
from ..generator import Generator, plan_of
from ._bridge import host_tensor

# -- the text of a draw ---------------------------------------------------------------------------

# The Generator methods whose result is (size, dtype) exactly, with their dtype argument.
METHODS = ("raw", "random", "uniform", "integers", "normal", "standard_normal",
           "truncated_normal")
# ascend_rand.torch.init's initialisers: they fill a tensor of (size, dtype) in place.
INITS = ("uniform_", "normal_", "trunc_normal_", "xavier_uniform_", "xavier_normal_",
         "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_")
# Generator draws whose result is not (size, dtype): their own sizes travel as ``n``.
_OTHERS = ("bernoulli", "dropout_mask", "permutation")
CALLS = frozenset(METHODS + _OTHERS + tuple(f"init.{name}" for name in INITS))


def _encode(value):
    """One argument as text: floats exactly (hex), ints, bools, None, names."""
    if value is None:
        return "n:"
    if isinstance(value, bool):
        return "b:1" if value else "b:0"
    if isinstance(value, int):
        return f"i:{value}"
    if isinstance(value, float):
        return f"f:{value.hex()}"
    if isinstance(value, str) and value.isidentifier():
        return f"s:{value}"
    raise TypeError(f"ascend_rand.torch.ops: cannot pass {value!r} to a draw operator "
                    f"(numbers, bools, None and names only)")


def call_text(name, dtype, device="cpu", **params):
    """The ``call`` argument of ``ascend_rand::draw``: draw ``name`` with ``params``, its
    result of the torch ``dtype`` on ``device``, as text (floats in hex: exact).

    >>> import torch
    >>> call_text("uniform", torch.float32, low=-1.0, high=0.5)
    'uniform dtype=s:float32 device=d:cpu low=f:-0x1.0000000000000p+0 high=f:0x1.0000000000000p-1'
    """
    name_of = dtype_name(dtype) if isinstance(dtype, torch.dtype) else None
    if name_of is None:
        raise TypeError(f"ascend_rand.torch.ops: dtype must be a torch dtype of "
                        f"{', '.join(str(torch_dtype(n)) for n in NAMES)}, got {dtype!r}")
    return " ".join([name, f"dtype=s:{name_of}", f"device=d:{device}"]
                    + [f"{k}={_encode(v)}" for k, v in params.items()])


def _decode(text):
    tag, _, body = text.partition(":")
    if tag == "f":
        return float.fromhex(body)
    if tag == "i":
        return int(body)
    if tag == "b" and body in ("0", "1"):
        return body == "1"
    if tag == "n" and not body:
        return None
    if tag in ("s", "d"):
        return body
    raise ValueError(f"bad argument text {text!r}")


class Call:
    """A parsed ``call`` text: the draw's ``name``, its ``params``, the result's ``dtype``
    (a torch dtype) and ``device``."""

    __slots__ = ("name", "params", "dtype", "device")

    def __init__(self, call):
        what = "ascend_rand::draw"
        name, *items = call.split(" ")
        if name not in CALLS:
            raise ValueError(f"{what}: unknown draw {name!r} in {call!r}; the operator "
                             f"draws {', '.join(sorted(CALLS))}")
        try:
            params = {k: _decode(v) for k, _, v in (item.partition("=") for item in items)}
            dtype = torch_dtype(params.pop("dtype"))
            device = params.pop("device")
        except (ValueError, KeyError, RuntimeError) as exc:
            raise ValueError(f"{what}: a call is 'name dtype=s:<dtype> device=d:<device> "
                             f"arg=<value> ...' (call_text), got {call!r} ({exc})") from None
        # read with the Generator's messages; whether it can be used is checked at the
        # draw (CheckedDraw), not here: a trace for an absent device parses calls too
        device = torch_device(device)
        self.name, self.params, self.dtype, self.device = name, params, dtype, device


_CALL_CACHE = {}


def parse_call(call):
    """The ``Call`` of a ``call`` text (cached); ValueError naming a bad one."""
    parsed = _CALL_CACHE.get(call)
    if parsed is None:
        if len(_CALL_CACHE) >= 4096:
            _CALL_CACHE.clear()
        parsed = _CALL_CACHE[call] = Call(call)
    return parsed



# -- the checked draw -----------------------------------------------------------------------------

def _as_tensor(values):
    """A host draw's result as a CPU tensor sharing its memory (a tensor as it is)."""
    return host_tensor(values if isinstance(values, (np.ndarray, torch.Tensor))
                       else np.asarray(values))


def _plan_args(parsed, size):
    """(args, kwargs) of the Generator method a draw ``parsed`` of ``size`` calls."""
    name, params = parsed.name, dict(parsed.params)
    if name in METHODS:
        return (), dict(params, size=size, dtype=dtype_name(parsed.dtype))
    if name == "bernoulli":  # (its own size travels as n where it is not the result's)
        params["size"] = params.pop("n", size)
        return (), params
    # dropout_mask(n, p_drop) and permutation(n): n is the method's first argument
    args = (params.pop("n"),) if "n" in params else ()
    return args, params


def checked_plan(parsed, size, call=None):
    """The plan of the Generator draw ``parsed`` of ``size``, checked as that Generator
    call checks it, and its result against the shape and dtype asked for; nothing
    reserved.  TypeError / ValueError as the Generator gives them."""
    args, kwargs = _plan_args(parsed, size)
    plan = plan_of(parsed.name, *args, **kwargs)
    shape = tuple(plan.shape)
    if shape != size or plan.dtype != dtype_name(parsed.dtype):
        raise ValueError(
            f"ascend_rand::draw: {call or parsed.name!r} gives {plan.dtype} of shape {shape}, "
            f"not the {dtype_name(parsed.dtype)} of shape {size} asked for")
    return plan


class CheckedDraw:
    """A call text and size whose every argument was checked: ``run(generator)`` makes the
    draw from ``generator`` (one draw; on "meta" the Generator moves on as that draw
    would and nothing is allocated) and returns it on the call's device."""

    __slots__ = ("parsed", "size", "plan", "device", "_values", "_where")

    def __init__(self, call, size):
        parsed = parse_call(call)
        self.parsed, self.size = parsed, size
        self.device = usable_device(parsed.device)
        self._where = self.device.type if self.device.type in ("cpu", "meta") else None
        if parsed.name.startswith("init."):
            self.plan = None  # (the initialiser checks its own arguments before it draws)
            self._values = self._initialiser(parsed, size)
            return
        self.plan = checked_plan(parsed, size, call)
        args, kwargs = _plan_args(parsed, size)
        method = getattr(Generator, parsed.name)
        self._values = lambda generator: _as_tensor(method(generator, *args, **kwargs))

    def _initialiser(self, parsed, size):
        fill, params, dtype = _INITIALISERS[parsed.name[5:]], parsed.params, parsed.dtype
        meta = self.device.type == "meta"

        def run(generator):
            # (on meta the initialiser itself moves the Generator on and draws nothing)
            out = torch.empty(size, dtype=dtype, device="meta" if meta else "cpu")
            fill(out, **params, generator=generator)
            return out
        return run

    def run(self, generator):
        where = self._where
        if where == "cpu":  # (the common case first: a small draw's cost is this call)
            return self._values(generator)
        if where == "meta":
            if self.plan is not None:
                generator._skip(self.plan)  # (a host Generator: graph-safe draws are METHODS'
                # plans on the device state, never meta: graph_state.state_for refuses it)
                return torch.empty(self.size, dtype=self.parsed.dtype, device="meta")
            return self._values(generator)
        return self._values(generator).to(self.device)


def _device_plan(parsed, size):
    """The plan of a draw from a device state, checked as the Generator checks the same
    call; ValueError for a draw not made so."""
    if parsed.name not in DEVICE_STATE_DRAWS:
        raise ValueError(f"ascend_rand::draw: {parsed.name!r} draws are not made from a "
                         f"device state; in graph-safe mode the operator draws "
                         f"{', '.join(DEVICE_STATE_DRAWS)}")
    return checked_plan(parsed, size)


# The draws a device state makes: the Generator methods of one (size, dtype) result, and the
# packed dropout mask (the channel and alpha dropouts' draw, torch/channel_dropout.py).
DEVICE_STATE_DRAWS = METHODS + ("dropout_mask",)


# The initialisers a call "init.NAME" runs: ascend_rand.torch.init's functions, handed over
# by that module when it is imported (``register_initialisers``; ascend_rand.torch imports
# it), so that the operators below it never import it.
_INITIALISERS = {}


def register_initialisers(functions):
    """Make ``functions`` ({name in INITS: function}) the initialisers of "init.NAME"
    calls; ValueError for a name INITS does not hold."""
    unknown = sorted(set(functions) - set(INITS))
    if unknown:
        raise ValueError(f"register_initialisers: {unknown} are not in INITS")
    _INITIALISERS.update(functions)


_CHECKED = {}
_checked_lock = threading.Lock()


def checked(call, size):
    """The ``CheckedDraw`` of (``call``, ``size``) (cached: a call's checks depend on its
    text only); TypeError / ValueError, as the Generator gives them, for a bad one."""
    key = (call, size)
    draw = _CHECKED.get(key)
    if draw is None:
        draw = CheckedDraw(call, size)
        with _checked_lock:
            if len(_CHECKED) >= 4096:
                _CHECKED.clear()
            _CHECKED[key] = draw
    return draw
