"""One draw, from a call's arguments to its result: the path every front door takes.

numpy's Generator has ``cont()``/``disc()`` (numpy/random/_common.pyx): each method
names its sampler and checks, then one helper handles size, out and locking.  Here
``Generator`` and ``stateless`` methods name their plan builder and the stream they
draw from, then call ``draw``, which

1. looks the plan of these arguments up (``cache.plan_get``: one C call where the core
   is built) or builds it once (``cache.cached``), or, for a caller's ``out=``, binds
   the plan checked for that layout to this array (``cache.bound_to_out``);
2. tries the backend's one-call draw (``small``: ``Backend.small_draw(engine)`` for a
   Generator, ``Backend.stateless_small_draw()`` for a stateless draw), which reads the
   backend's own form of the plan and declines (None) what it does not take;
3. runs the general path (``general``: a Generator's reserve-then-run, stateless's
   check-then-run) where it declined.

It never asks which backend or engine it holds: what is fast is the backend's to say.

    >>> import ascend_rand as ar
    >>> from ascend_rand.distributions import dispatch
    >>> g = ar.Generator(0)
    >>> words = dispatch.draw(("raw", 4, "uint32"), dispatch.build_raw, None, g._backend,
    ...                       g._small_draw, g._draw)
    >>> [hex(w) for w in words.tolist()]  # Random123's known answer for key 0, counter 0
    ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
"""

from .bernoulli import plan_bernoulli, plan_dropout_mask
from .cache import PLANS, bound_to_out, cached, checked_key, plan_get
from .normal import plan_normal, plan_truncated_normal
from .permutation import plan_permutation
from .uniform import plan_integers, plan_raw, plan_uniform


def plan_for(key, build, out, backend, cacheable=True):
    """The plan of a draw: ``key`` is (name, size, *args), ``build(key, out, backend)``
    checks them and makes the plan.  ``cacheable=False``: arguments whose plan must be
    built every time (integers given floats, which equal ints as keys; a non-bool flag).

    >>> from ascend_rand.distributions import dispatch
    >>> plan = dispatch.plan_for(("raw", 3, "uint32"), dispatch.build_raw, None, None)
    >>> plan
    Plan('raw', shape=(3,), dtype='uint32', params=(), words=3)
    >>> plan is dispatch.plan_for(("raw", 3, "uint32"), dispatch.build_raw, None, None)  # cached
    True
    """
    if out is None:
        if cacheable:
            plan = plan_get(PLANS, key)
            if plan is None:
                plan = cached(checked_key(key), lambda: build(key, None, None))
            return plan
        return build(key, None, None)
    return bound_to_out(checked_key(key) if cacheable else None, out, backend,
                        lambda: build(key, out, backend))


def draw(key, build, out, backend, small, general, stream=None, cacheable=True):
    """The result of the draw ``key`` (see ``plan_for``): ``small(plan)``, the backend's
    one-call draw, or where it declines (None) ``general(plan)``; with a ``stream`` (a
    stateless draw's (key, counter, backend, device)) both take it after the plan.
    ``backend`` is used only to bind ``out`` (None without one)."""
    if out is None and cacheable:  # the common case, inline: a lookup, then the call
        plan = plan_get(PLANS, key)
        if plan is None:
            plan = cached(checked_key(key), lambda: build(key, None, None))
    else:
        plan = plan_for(key, build, out, backend, cacheable)
    if stream is None:  # a Generator's draw: plain calls (a *() call costs more)
        result = small(plan)
        return general(plan) if result is None else result
    result = small(plan, stream)
    return general(plan, stream) if result is None else result


# -- plan builders -------------------------------------------------------------------------
# Of (key, out, backend), key = (method, size, *arguments) as the front doors spell it:
# made once, not a closure per call.  A flag (endpoint, packed) is in the key as 0/1 where
# it is a bool (``flag_key``), and wrapped in a 1-tuple otherwise: never cached, and handed
# to the check as given, which refuses it.

def flag_key(flag):
    """The key item of a bool flag (0 or 1), or ``(flag,)`` for anything else.

    >>> from ascend_rand.distributions.dispatch import flag_key
    >>> flag_key(True), flag_key(1)
    (1, (1,))
    """
    return int(flag) if type(flag) is bool else (flag,)


def _flag(item):
    return item[0] if type(item) is tuple else bool(item)


def build_raw(key, out, b):
    return plan_raw(key[1], key[2], out, b)


def build_random(key, out, b):
    return plan_uniform(key[1], key[2], 0.0, 1.0, out, b, "random")


def build_uniform(key, out, b):
    return plan_uniform(key[1], key[2], key[3], key[4], out, b)


def build_integers(key, out, b):
    return plan_integers(key[1], key[2], key[3], key[4], _flag(key[5]), out, b)


def build_normal(key, out, b):
    return plan_normal(key[1], key[2], key[3], key[4], key[5], out, b)


def build_standard_normal(key, out, b):
    return plan_normal(key[1], key[2], 0.0, 1.0, key[3], out, b, "standard_normal")


def build_truncated_normal(key, out, b):
    return plan_truncated_normal(key[1], key[2], key[3], key[4], key[5], key[6], out, b)


def build_bernoulli(key, out, b):
    return plan_bernoulli(key[2], key[1], _flag(key[3]), out, b)


def build_dropout_mask(key, out, b):
    return plan_dropout_mask(key[1], key[2], out, b)


def build_permutation(key, out, b):
    return plan_permutation(key[1])
