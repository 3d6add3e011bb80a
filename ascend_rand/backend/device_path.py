"""Which kernels fill a torch tensor: the Triton kernels, the torch-operation mirror or the host.

``decide`` is the one owner of that choice, made before a draw reserves its
stream (docs/spec.md 2.2: a refused draw takes nothing).  The torch backend
(backend/torch.py) asks it once per draw, graph-safe mode (``device_state``), the
fused dropout and ``verify-npu`` ask it too, and ``report`` says what it decides:

- a CUDA or NPU tensor takes the Triton kernels (``triton_kernels/``, one
  launch per draw) when Triton compiles for that device here: ``triton`` on
  CUDA, ``triton-ascend`` (through torch_npu) on Ascend; else, and for a plan
  the kernels do not run, the torch-operation mirror (``fallback/`` on tensors);
- a CPU tensor takes the host kernels (the native core, else its NumPy
  mirror), as it always has.

``ASCEND_RAND_DEVICE_KERNELS`` (read at each draw) forces a path: ``torch``
the mirror, on every device; ``triton`` the Triton kernels for every plan they
run (the others take the mirror), compiled on a device, and on CPU tensors
under Triton's interpreter (``TRITON_INTERPRET=1``: how the test suite, and a
user without an accelerator, check them).  Unset, empty or ``auto`` is the
default; any other value is a ValueError naming it.  Forced ``triton`` where
the kernels cannot run (triton missing, a device Triton does not compile for,
kernels imported in the other mode) is an error saying why, never a quiet
fall back to the mirror.

Triton decides at ``@triton.jit`` time whether a kernel is compiled or
interpreted, so one process has the kernels one way: interpreted where
TRITON_INTERPRET=1 was set when they were first imported (``kernels(True)``
sets it for that import), compiled otherwise.  ``report()`` says which path
each device type takes and why, for ``ar.backends()`` and ``ascend-rand info``.
"""

import collections
import contextlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys

ENV = "ASCEND_RAND_DEVICE_KERNELS"
CHOICES = ("auto", "triton", "torch")
KERNELS_MODULE = "ascend_rand.backend.triton_kernels.kernels"
# The device types whose tensors the Triton kernels fill compiled, and the Triton target
# (driver.active.get_current_target().backend) that compiles for each.
TARGETS = {"cuda": "cuda", "npu": "npu"}

HOST, TRITON, MIRROR = "host", "triton", "mirror"


class DeviceKernelsError(RuntimeError):
    """The Triton kernels were asked for (ASCEND_RAND_DEVICE_KERNELS=triton) but cannot run."""


# os.environ.get of a missing name raises and catches a KeyError inside (1.6 us measured on
# the development VM, a tenth of a 10^4-element draw): the draw reads the variable from the
# mapping's own store, where the platform's os.environ has one.
try:
    _STORE, _KEY, _DECODE = os.environ._data, os.environ.encodekey(ENV), os.environ.decodevalue
except AttributeError:  # another os.environ: its get
    _STORE = None


def _raw():
    if _STORE is None:
        return os.environ.get(ENV)
    value = _STORE.get(_KEY)
    return None if value is None else _DECODE(value)


def choice():
    """The forced path: "auto" (unset or empty), "triton" or "torch"; a ValueError otherwise."""
    raw = _raw()
    if raw is None or raw == "" or raw in CHOICES:
        return raw or "auto"
    raise ValueError(f"{ENV}={raw!r} is not a device-kernel path: expected 'triton' (the Triton "
                     f"kernels), 'torch' (the torch-operation mirror), or unset / 'auto'")


# -- the kernel modules and their mode -------------------------------------------------------------

def _jit_functions(module):
    return [v for v in vars(module).values()
            if type(v).__name__ in ("JITFunction", "InterpretedFunction")]


def _mode_of(modules):
    """The set of modes (True: interpreted) of the jit functions defined in ``modules``."""
    modes = set()
    for module in modules:
        modes.update(type(f).__name__ == "InterpretedFunction" for f in _jit_functions(module))
    return modes


def loaded_mode():
    """"interpreted", "compiled", "mixed" or None (nothing imported yet): how this process
    has the kernels, as far as imports have decided it.

    Triton's own standard library (``triton.language.standard``: ``tl.cdiv`` and the
    others are ``@triton.jit`` functions) counts as well: decorated when triton was first
    imported, compiled ones fail inside an interpreted kernel ("Cannot call @triton.jit'd
    outside of the scope of a kernel").  So TRITON_INTERPRET=1 must be set before triton
    itself is first imported, not only before this package's kernels.
    """
    prefix = "ascend_rand.backend.triton_kernels."
    ours = [m for name, m in list(sys.modules.items())
            if name.startswith(prefix) and m is not None]
    standard = sys.modules.get("triton.language.standard")
    modes = _mode_of(ours + ([standard] if standard is not None else []))
    if not modes:
        return None
    if len(modes) > 1:
        return "mixed"
    return "interpreted" if modes.pop() else "compiled"


@contextlib.contextmanager
def interpreting():
    """TRITON_INTERPRET=1 for the block, as it was after: read by Triton at ``@triton.jit``
    (the import) and, from Triton 3.3, at each launch (triton.knobs)."""
    previous = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = previous


def _mode_error(want, have):
    if want == "interpreted":
        return (f"the Triton kernels run on CPU tensors only under Triton's interpreter, but "
                f"this process has triton's kernels {have}: TRITON_INTERPRET was not '1' when "
                f"triton (or ascend_rand.backend.triton_kernels) was first imported, and Triton "
                f"decides at import; set TRITON_INTERPRET=1 in the environment before anything "
                f"imports triton, or unset {ENV}")
    return (f"the Triton kernels are {have} in this process (TRITON_INTERPRET=1 when triton "
            f"or ascend_rand.backend.triton_kernels was first imported), so they cannot be "
            f"compiled for a device here; start the process without TRITON_INTERPRET=1")


_LOADED = []  # [(mode, kernel table)] once this module has imported the table


def process_mode():
    """How this process has (or, imported now, would have) the kernels: "interpreted",
    "compiled", "mixed", or None where nothing decides it yet."""
    if _LOADED:
        return _LOADED[0][0]
    mode = loaded_mode()
    if mode is None and os.environ.get("TRITON_INTERPRET") == "1":
        return "interpreted"  # an import now would make them so
    return mode


def kernels(interpret):
    """The Triton kernel table (triton_kernels.kernels), interpreted or compiled.

    Imports it in that mode the first time (``interpret``: with TRITON_INTERPRET=1);
    a DeviceKernelsError when triton is missing or the process already has the
    kernels in the other mode.
    """
    want = "interpreted" if interpret else "compiled"
    if _LOADED:
        mode, table = _LOADED[0]
        if mode != want:
            raise DeviceKernelsError(_mode_error(want, mode))
        return table
    have = process_mode()
    if have is not None and have != want:
        raise DeviceKernelsError(_mode_error(want, have))
    if importlib.util.find_spec("triton") is None:
        raise DeviceKernelsError("triton is not installed (pip install triton; on Ascend "
                                 "triton-ascend beside torch_npu, docs/npu.md)")
    try:
        if interpret:
            with interpreting():
                table = importlib.import_module(KERNELS_MODULE)
        else:
            table = importlib.import_module(KERNELS_MODULE)
    except ImportError as exc:
        raise DeviceKernelsError(f"the Triton kernels cannot be imported: "
                                 f"{type(exc).__name__}: {exc}") from None
    mode = loaded_mode()
    if mode != want:  # a kernel module imported earlier in the other mode
        raise DeviceKernelsError(_mode_error(want, mode))
    _LOADED.append((mode, table))
    return table


# -- can Triton compile for a device type here ---------------------------------------------------

_COMPILES = {}  # device type -> (ok, why): asked once a process (it imports triton)


def _distribution(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def installed(device_type):
    """(ok, why) from what is installed alone (no import): is there a Triton for ``device_type``?"""
    if importlib.util.find_spec("triton") is None:
        if device_type == "npu":
            return False, "triton-ascend is not installed (pip install triton-ascend, docs/npu.md)"
        return False, "triton is not installed"
    ascend = _distribution("triton-ascend")
    if device_type == "npu":
        if ascend is None:
            return False, (f"the triton installed ({_distribution('triton') or 'unknown'}) is "
                           "not triton-ascend, which compiles for Ascend NPUs")
        if importlib.util.find_spec("torch_npu") is None:
            return False, "torch_npu is not installed (triton-ascend launches through it)"
        return True, f"triton-ascend {ascend}"
    if ascend is not None:
        return False, f"the triton installed is triton-ascend {ascend}, which compiles for NPUs"
    return True, f"triton {_distribution('triton') or 'unknown'}"


def compiles(device_type, cached=True):
    """(ok, why): whether Triton compiles the kernels for ``device_type`` in this process.

    Triton's active driver is asked (it needs the device present): its target's backend
    must be TARGETS[device_type]; and the kernels must not be interpreted here.  A draw
    asks once a process (``cached``); the report asks afresh and keeps nothing.
    """
    if device_type not in TARGETS:
        return False, f"Triton does not compile for {device_type!r} tensors"
    if cached and device_type in _COMPILES:
        return _COMPILES[device_type]
    if process_mode() in ("interpreted", "mixed"):
        return False, "the Triton kernels are interpreted in this process (TRITON_INTERPRET=1)"
    ok, why = installed(device_type)
    answer = _ask_driver(device_type, why) if ok else (False, why)
    if cached:
        _COMPILES[device_type] = answer
    return answer


def _ask_driver(device_type, why):
    try:
        triton = importlib.import_module("triton")
        target = triton.runtime.driver.active.get_current_target()
    except Exception as exc:  # no driver, no device, a broken install: all say "not here"
        return False, f"triton is not usable here ({type(exc).__name__}: {exc})"
    if target.backend != TARGETS[device_type]:
        return False, (f"triton {triton.__version__} compiles for {target.backend!r}, "
                       f"not {TARGETS[device_type]!r}")
    return True, f"{why} compiles for {target.backend} (arch {target.arch})"


# -- the route of one draw -----------------------------------------------------------------------

class Decision(collections.namedtuple("Decision", "path table interpreted why")):
    """The route of a draw (``decide``): ``path`` HOST, TRITON or MIRROR; ``table`` the
    Triton kernel table (TRITON only, else None); ``interpreted`` whether that table runs
    under Triton's interpreter; ``why`` the reason for the path, in words."""

    __slots__ = ()


# The decisions that depend on nothing but the choice (a CPU draw's cost includes them).
_CPU_HOST = (Decision(HOST, None, False,
                      f"CPU draws are the host's, which fills the tensor in place (the Triton "
                      f"kernels run on CPU tensors only under Triton's interpreter, with "
                      f"{ENV}=triton)"), None, False)
_CPU_MIRROR = (Decision(MIRROR, None, False, "cpu_kernels='torch' names the torch-operation "
                        "mirror for CPU tensors"), None, False)
_FORCED_MIRROR = Decision(MIRROR, None, False, f"{ENV}=torch forces the torch-operation mirror")


def _triton_table(device_type, forced, cpu_kernels):
    """(Decision or None, table, interpreted): the Triton kernels for ``device_type`` where
    the forced choice and the device allow them, else a Decision for another path."""
    if device_type == "cpu":
        if forced == "auto" and cpu_kernels == "host":
            return _CPU_HOST
        if cpu_kernels != "host":  # TorchBackend(cpu_kernels="torch"): the mirror, by name
            return _CPU_MIRROR
        return None, kernels(interpret=True), True
    if forced == "auto":
        ok, why = compiles(device_type)
        if not ok:
            return Decision(MIRROR, None, False, f"the Triton kernels do not run on "
                            f"{device_type!r} tensors here: {why}"), None, False
        return None, kernels(interpret=False), False
    # forced triton on a device: compiled where Triton compiles for it, else the
    # interpreter where the process has the kernels interpreted (slow: for checking)
    if process_mode() == "interpreted":
        return None, kernels(interpret=True), True
    ok, why = compiles(device_type)
    if not ok:
        raise DeviceKernelsError(f"{ENV}=triton: the Triton kernels cannot run on "
                                 f"{device_type!r} tensors here: {why}")
    return None, kernels(interpret=False), False


def decide(device_type, plan=None, cpu_kernels="host", engine_words=False):
    """The one routing decision of the device path (a ``Decision``), made before a draw
    reserves anything: the torch backend's draws, graph-safe mode (``device_state``), the
    fused dropout and ``verify-npu`` all ask it.  ``plan`` the draw (None: which kernels
    a device would take, whatever the draw); ``cpu_kernels`` the TorchBackend's choice
    for CPU tensors; ``engine_words`` whether the draw reads an engine's words (MT19937)
    rather than a Philox stream, which the Triton kernels do not take.  Raises
    DeviceKernelsError or ValueError (a bad ASCEND_RAND_DEVICE_KERNELS) where a forced
    path cannot run.

    The rules, in order: ``ASCEND_RAND_DEVICE_KERNELS=torch`` takes the mirror; a CPU
    tensor is the host's unless the Triton kernels are forced (then Triton's
    interpreter); a device takes the compiled kernels where Triton compiles for it (else
    the mirror, or an error where they were forced, unless the process has them
    interpreted); then the mirror for what the kernels do not run: a kernel not in their
    table, float64 on an NPU (Ascend's vector units have no float64, spec A.6) and an
    engine's words.
    """
    forced = choice()
    if forced == "torch":
        return _FORCED_MIRROR
    other, table, interpreted = _triton_table(device_type, forced, cpu_kernels)
    if other is not None:
        return other
    if plan is not None and not table.supports(plan):
        return Decision(MIRROR, None, False, f"the Triton kernels do not run {plan.kernel!r} draws")
    if plan is not None and device_type == "npu" and plan.dtype == "float64":
        return Decision(MIRROR, None, False, "float64 on an NPU: Ascend's vector units have no "
                        "float64 arithmetic (docs/spec.md A.6)")
    if engine_words:
        return Decision(MIRROR, None, False, "the engine hands out words (MT19937), not a "
                        "Philox stream the kernels can name")
    where = "Triton's interpreter" if interpreted else "compiled"
    return Decision(TRITON, table, interpreted, f"the Triton kernels, {where}")


def route(device_type, plan, cpu_kernels="host", engine_words=False):
    """(path, kernels): ``decide``'s path and kernel table for ``plan`` on a
    ``device_type`` tensor."""
    decision = decide(device_type, plan, cpu_kernels, engine_words)
    return decision.path, decision.table


def device_state(device_type):
    """(kernel table, interpreted) for a graph-safe Generator's draws on ``device_type``
    (``decide``'s Triton kernels); ValueError saying why where the draws there would not
    take them (the host and the mirror keep no device state)."""
    if device_type != "cpu" and device_type not in TARGETS:
        raise ValueError(f"the Triton kernels do not run on {device_type!r} tensors")
    try:
        decision = decide(device_type)
    except DeviceKernelsError as exc:
        raise ValueError(str(exc)) from None
    if decision.path != TRITON:
        raise ValueError(f"{decision.why}; the {decision.path} keeps no device state")
    return decision.table, decision.interpreted


def fill(table, plan, flat, key, counter):
    """Run ``plan`` by the Triton kernel table into ``flat``: one launch (interpreted kernels
    with TRITON_INTERPRET=1 set while they run)."""
    if _LOADED and _LOADED[0][0] == "interpreted":
        with interpreting():
            table.fill(plan, flat, key, counter)
    else:
        table.fill(plan, flat, key, counter)


# -- the report ----------------------------------------------------------------------------------

def _host_name():
    from .registry import resolve
    return resolve("auto").description


def _cpu_line(forced):
    if forced == "torch":
        return f"mirror: {ENV}=torch"
    if forced == "auto":
        return f"host: the {_host_name()} fills the tensor in place"
    if importlib.util.find_spec("triton") is None:
        return f"error: {ENV}=triton but triton is not installed"
    mode = process_mode()
    if mode not in (None, "interpreted"):
        return f"error: {_mode_error('interpreted', mode)}"
    return f"triton: Triton's interpreter ({ENV}=triton), the mirror for draws it does not run"


def _device_present(torch, device_type):
    if device_type == "cuda":
        return torch.cuda.is_available(), "no CUDA device is visible"
    from .torch_devices import npu_state  # imports torch_npu only where it is installed
    ok, why = npu_state()
    return ok, why


def _device_line(torch, device_type, forced):
    if forced == "torch":
        return f"mirror: {ENV}=torch"
    present, absent = _device_present(torch, device_type)
    if not present:
        ok, why = installed(device_type)
        would = "the Triton kernels" if ok else f"the mirror ({why})"
        return f"none: {absent}; a device would take {would}"
    ok, why = compiles(device_type, cached=False)
    if ok:
        return (f"triton: {why}; the mirror for draws the kernels do not run"
                f"{' (float64, here)' if device_type == 'npu' else ''} and for an MT19937 "
                f"Generator's words")
    if forced == "triton":
        if process_mode() == "interpreted":
            return f"triton: Triton's interpreter ({ENV}=triton, TRITON_INTERPRET=1)"
        return f"error: {ENV}=triton but {why}"
    return f"mirror: {why}"


def report():
    """{device type: "PATH: why"} for "cpu", "cuda" and "npu"; PATH is host, triton,
    mirror, none (no such device here) or error (what a draw would raise)."""
    try:
        forced = choice()
    except ValueError as exc:
        return {t: f"error: {exc}" for t in ("cpu", "cuda", "npu")}
    import torch

    return {"cpu": _cpu_line(forced), "cuda": _device_line(torch, "cuda", forced),
            "npu": _device_line(torch, "npu", forced)}
