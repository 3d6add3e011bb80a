"""The graph-safe mode of a Generator: its Philox (seed, offset) in a device tensor.

A graph captured with ``torch.cuda.graph`` (or torch_npu's ``torch.npu.graph``)
replays its kernels with the arguments they had at capture: a draw whose
(key, counter) is a host scalar would replay the same numbers every time.  In
the graph-safe mode the Generator's state lives in a small device tensor that
the Triton kernels read (``tl.load``) and advance on the device, as torch's own
CUDA generator keeps its Philox offset, so each replay draws the next numbers:
the same ones the same sequence of eager calls draws (docs/npu.md, "Graph
capture and the device state"; the layout and end-of-stream rule: docs/spec.md
2.4, "The device state").

API (H-OPS's operators and the torch front ends use exactly this)
------------------------------------------------------------------

``ascend_rand.torch.graph_safe(generator, device) -> DeviceState``
    Put ``generator`` (an ``ascend_rand.Generator`` on a Philox engine; None:
    ``ascend_rand.default_generator()``) in graph-safe mode on ``device`` (a
    torch device or its name: "cuda", "cuda:0", "npu:0"; "cpu" only where the
    Triton kernels run there, under the interpreter with
    ``ASCEND_RAND_DEVICE_KERNELS=triton``).  The device state is made from the
    engine as the next ``reserve`` would see it: a subsequence the word
    interface read part of is skipped (its BLOCK/INDEX/VALID become 0), so the
    next device draw uses the offset the host's next draw would have used.
    ValueError: an MT19937 engine (its draws are words, not a counter), a
    device where the Triton kernels do not run (the reason is named), an
    engine already in graph-safe mode.  TypeError: not a Generator.
    Usable as a context manager: ``with graph_safe(g, "cuda") as ds: ...``
    closes (syncs and leaves the mode) on exit.

``DeviceState``
    ``.state``: the int64 tensor of 8 elements on ``device``, the layout of
    ``engine._slots`` (SEED, OFFSET, BLOCK, INDEX, BUF01, BUF23, VALID, FLAGS;
    uint64 bits held as int64).  The same tensor for the mode's whole life (a
    captured graph holds its address): never replaced, only written in place.
    ``.device``, ``.generator``, ``.engine``.
    ``.fill(plan, out)``: one graph-safe draw of a Plan into ``out`` (a tensor
    on ``device`` of ``plan.count`` items of ``plan.dtype``): the draw kernel
    reads (seed, offset) from ``.state``, then the one-program advance kernel
    moves the offset on by one; two launches, no host read.
    ``.sync()``: copy the device state back into the host engine (a device to
    host copy: call it outside a captured region) and return the Generator's
    ``state`` dict.  OverflowError where draws were made after the last
    offset (the engine is then left exhausted, as the host's would be);
    RuntimeError where the host engine moved while its state was on the device
    (numpy's draws through its capsule, ``advance``, ``set_state``), the engine
    then left past every offset either side used.  While the mode lasts the
    host refuses the Generator's own draws when they are made (RuntimeError:
    the engine's FLAGS carry DEVICE, docs/spec.md 2.4).
    ``.load()``: the reverse, after ``generator.set_state(...)`` (a checkpoint
    restored): the engine's state written into ``.state`` in place.
    ``.close()``: ``sync()`` and leave graph-safe mode (idempotent); in a
    ``with`` block that raises, a failing close is a note on the block's own
    exception.
    ``.reserve_lock``: held around each draw's two launches (``reserving``), so
    two threads drawing from one graph-safe Generator never read one offset.

``graph_state.active(generator) -> DeviceState | None``
    The Generator's device state while it is in graph-safe mode (an attribute
    read: cheap, and Dynamo-traceable), else None.
``graph_state.state_for(generator, device) -> torch.Tensor | None``
    ``active(generator).state`` where the mode is on ``device``; None outside
    the mode; RuntimeError where the mode is on another device (a draw there
    from the stale host engine would reuse the device's offsets).

The Triton side (backend/triton_kernels/), which the operators call through the
kernel table (``table`` below: kernels.py; ``table.dropout`` is dropout_draws.py):

- ``table.fill_from_state(plan, out, state)``: one draw, then the advance;
- ``table.dropout.forward_from_state(x, state, p, keep_mask=True, out=None)`` ->
  ``(y, mask or None, drawn_at)``; ``drawn_at`` is an int64 tensor of 2
  (seed, offset actually used) written by the forward kernel's program 0, all
  a regenerate-mode backward needs;
- ``table.dropout.backward_regenerate_at(grad, drawn_at, p, out=None)`` -> dx;
- ``table.dropout.backward_from_mask(out, grad, mask, scale)`` (unchanged), with
  ``table.dropout.dropout_scale(p, dtype)``.
"""

import contextlib
import threading
import weakref

import torch

from ..engines import Philox
from ..engines.philox import BLOCK, DEVICE, EXHAUSTED, FLAGS, INDEX, OFFSET, SEED
from ._bridge import generator_or_default

_ATTR = "_graph_state"  # the engine's attribute naming its DeviceState while in the mode
_SLOTS = 8
_U64 = 1 << 64
_U63 = 1 << 63
_MASK64 = _U64 - 1
_PAST_END_SHIFT = 32  # the device's count of draws past the end: FLAGS' high word
_BY_STATE = weakref.WeakValueDictionary()  # a DeviceState's tensor's address -> the DeviceState


def reserving(state):
    """The lock that makes one device draw (its draw launch and its advance launch) one
    reservation, for ``state`` a DeviceState's tensor: two threads drawing from one
    Generator in graph-safe mode launch their pairs one after the other, so on one stream
    (and on the CPU under the interpreter) they never read the same offset.  A state
    tensor made by hand is the caller's to share: no lock."""
    ds = _BY_STATE.get(state.data_ptr())
    return contextlib.nullcontext() if ds is None else ds.reserve_lock


def active(generator):
    """The DeviceState of ``generator`` while it is in graph-safe mode, else None."""
    return getattr(generator.engine, _ATTR, None)


def skip(generator, plan):
    """Move ``generator`` on as a draw of ``plan`` would, drawing and allocating nothing
    (the draw into a meta tensor, docs/spec.md 2.4): in graph-safe mode the device state
    (one launch of the advance kernel, the state form of an empty draw), else the host
    engine (``Generator._skip``), which in the mode would be refused."""
    ds = getattr(generator.engine, _ATTR, None)
    if ds is None:
        generator._skip(plan)
    else:
        ds.skip()


def state_for(generator, device):
    """The device state tensor for a draw on ``device`` from ``generator``: None outside
    graph-safe mode; RuntimeError where the mode is on another device."""
    ds = getattr(generator.engine, _ATTR, None)
    if ds is None:
        return None
    if torch.device(device) != ds.device:
        raise RuntimeError(
            f"this Generator is in graph-safe mode on {ds.device}: its state lives there, "
            f"so a draw on {torch.device(device)} (from the stale host state) would reuse "
            f"the device's offsets; draw on {ds.device}, or close() the mode first")
    return ds.state


def _device_slots(slots):
    """The device state of engine slots ``slots`` as 8 uint64: the next ``reserve``'s view.

    A subsequence the word interface read part of (BLOCK or INDEX) is skipped, as
    ``Philox._reserve_rare`` skips it, so the first device draw uses the offset the
    host's next draw would; past the last offset that is the exhausted state
    (offset 0, EXHAUSTED).  BLOCK, INDEX, the buffer and VALID are 0; FLAGS keeps
    only EXHAUSTED (its other bits count numpy's filler words, not state: spec 2.6).
    """
    seed, offset = slots[SEED], slots[OFFSET]
    exhausted = bool(slots[FLAGS] & EXHAUSTED)
    if not exhausted and (slots[BLOCK] or slots[INDEX]):
        offset += 1
        if offset == _U64:
            offset, exhausted = 0, True
    state = [0] * _SLOTS
    state[SEED], state[OFFSET] = seed, (0 if exhausted else offset)
    state[FLAGS] = EXHAUSTED if exhausted else 0
    return state


def _as_int64(words):
    return [w - _U64 if w >= _U63 else w for w in words]


def _kernels_for(device):
    """(the kernel table, interpreted) for graph-safe draws on ``device``: the device path's
    own decision (``device_path.device_state``); ValueError where the Triton kernels do not
    run there (the mirror and the host keep no device state)."""
    from ..backend import device_path

    try:
        return device_path.device_state(device.type)
    except ValueError as exc:
        raise ValueError(f"graph_safe: no device state on {device}: {exc}") from None


class DeviceState:
    """A Generator's Philox state on a device while it is in graph-safe mode (module
    docstring); made by ``graph_safe``."""

    def __init__(self, generator, device, table, interpreted, slots):
        self.generator = generator
        self.engine = generator.engine
        self.kernels = table
        self._interpreted = interpreted
        self.dropout_kernels = table.dropout  # (the table's, imported in its mode)
        self.state = torch.tensor(_as_int64(slots), dtype=torch.int64).to(device)
        self.device = self.state.device
        self._synced = list(slots)  # the device state as of the last sync / load
        self._host = tuple(self.engine._slots)  # the engine's slots then
        self.closed = False
        self.reserve_lock = threading.Lock()  # (``reserving``)
        _BY_STATE[self.state.data_ptr()] = self

    def __repr__(self):
        return f"DeviceState(device={str(self.device)!r}, engine={self.engine!r})"

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None:
            self.close()
            return False
        # The block's own exception stays the one raised: a close() that fails too is
        # told as a note on it (the mode is left all the same).
        try:
            self.close()
        except Exception as close_error:
            exc.add_note(f"and then graph_safe's close() failed: "
                         f"{type(close_error).__name__}: {close_error}")
        return False

    def kernel_mode(self):
        """TRITON_INTERPRET=1 for the block where the kernels are interpreted (Triton 3.3+
        reads it at each launch); nothing where they are compiled."""
        if self._interpreted:
            from ..backend import device_path
            return device_path.interpreting()
        return contextlib.nullcontext()

    def _check_open(self, what):
        if self.closed:
            raise RuntimeError(f"{what}: this DeviceState was closed (the Generator left "
                               f"graph-safe mode); make a new one with graph_safe")

    # -- draws: the Triton kernels' state forms, two launches each, no host read ----------------

    def fill(self, plan, out):
        """One draw of ``plan`` into ``out`` (on this device) from the device state."""
        self._check_open("fill")
        with self.kernel_mode(), self.reserve_lock:
            return self.kernels.fill_from_state(plan, out, self.state)

    def skip(self):
        """The device state's offset moved on by one, nothing drawn: a meta tensor's draw
        (``graph_state.skip``); one launch, as an empty draw's."""
        self._check_open("skip")
        with self.kernel_mode():
            from ..backend.triton_kernels import state as state_kernels
        with self.kernel_mode(), self.reserve_lock:
            state_kernels.advance(self.state)

    def dropout_forward(self, x, p, keep_mask=True):
        """(y, packed mask or None, drawn_at): ``dropout.forward_from_state`` on this state."""
        self._check_open("dropout_forward")
        with self.kernel_mode(), self.reserve_lock:
            return self.dropout_kernels.forward_from_state(x, self.state, p, keep_mask)

    def dropout_backward(self, grad, p, drawn_at=None, mask=None):
        """dx from the forward's packed ``mask``, or (``mask`` None) drawn again from its
        ``drawn_at``; one launch, nothing read on the host.  Draws nothing from the state."""
        fused = self.dropout_kernels
        with self.kernel_mode():
            if mask is not None:
                flat = grad.detach().contiguous().view(-1)
                dx = torch.empty_like(flat)
                fused.backward_from_mask(dx, flat, mask, fused.dropout_scale(p, grad.dtype))
                return dx.view(grad.shape)
            if drawn_at is None:
                raise TypeError("dropout_backward: needs the forward's mask or its drawn_at")
            return fused.backward_regenerate_at(grad, drawn_at, p)

    # -- the host side ----------------------------------------------------------------------

    def _capturing(self):
        """Whether this device's current stream is capturing a graph (torch.cuda's, or
        torch_npu's NPUGraph where torch_npu has one)."""
        if self.device.type == "cuda":
            return torch.cuda.is_current_stream_capturing()
        if self.device.type == "npu":
            capturing = getattr(getattr(torch, "npu", None), "is_current_stream_capturing", None)
            return bool(capturing()) if capturing is not None else False
        return False

    def _read(self):
        if self._capturing():
            raise RuntimeError("sync: the device state cannot be read while a graph is being "
                               "captured (a device-to-host copy); sync after the capture")
        return [w & _MASK64 for w in self.state.to("cpu").tolist()]

    def sync(self):
        """The device state written back into the host engine; returns ``generator.state``.

        One device-to-host copy, on the current stream (a graph replayed on another
        stream: synchronise it first).  A state no draw has moved since the last
        sync or load leaves the engine as it is (a partly read subsequence too).
        OverflowError where draws were made after the last offset (the engine is
        left exhausted, as the host's is after its last draw); RuntimeError where
        the host engine changed since (numpy's draws through the engine's capsule,
        which cannot refuse, an ``advance`` or a ``set_state``: after set_state,
        ``load()`` instead).  A Generator's own host draws are refused when they are
        made (the engine's DEVICE flag).  When the host moved on the same seed, the
        engine is left past every offset either side used, never behind the
        device: no later draw repeats one of the device's.
        """
        self._check_open("sync")
        words = self._read()
        engine = self.engine
        with engine.lock:
            s = engine._slots
            if tuple(s) != self._host:
                if s[SEED] == words[SEED]:  # (a new seed, set by hand: load() sends it)
                    self._past_both(words)
                raise RuntimeError(
                    "sync: the host engine changed while its state was on "
                    f"{self.device} (numpy's draws, advance or set_state on the host): its "
                    "words and the device's may come from the same offsets; the engine is "
                    "left past both; after set_state call load() to send the new state to "
                    "the device")
            past = words[FLAGS] >> _PAST_END_SHIFT
            if words != self._synced:
                self._write_host(words)
        if past:
            raise OverflowError(
                f"this generator used all 2**64 offsets of its seed and {past} draw(s) were "
                f"made on {self.device} after that: their numbers are not fresh (the device "
                f"cannot refuse a draw); reseed it (set_state, then load())")
        return self.generator.state

    def _write_host(self, words):
        """The engine's slots set to the device state ``words`` (under the engine's lock),
        DEVICE kept: the mode goes on."""
        s = self.engine._slots
        for slot in range(_SLOTS):
            s[slot] = 0
        s[SEED] = words[SEED]
        if words[FLAGS] & EXHAUSTED:
            s[FLAGS] = EXHAUSTED | DEVICE  # offset 0: the host's exhausted slots
        else:
            s[OFFSET] = words[OFFSET]
            s[FLAGS] = DEVICE
        self._synced = words
        self._host = tuple(s)

    def _past_both(self, words):
        """After the host moved on the device's seed: the engine at the later of the two
        positions (the device's next offset, or the host's own, a partly read
        subsequence skipped), so no offset either side used is handed out again."""
        engine = self.engine
        host_next = _device_slots(tuple(engine._slots))
        device_done = bool(words[FLAGS] & EXHAUSTED)
        host_done = bool(host_next[FLAGS] & EXHAUSTED)
        if device_done or (not host_done and words[OFFSET] > host_next[OFFSET]):
            self._write_host(words)
        else:
            self._write_host(host_next)

    def load(self):
        """The host engine's state (after ``generator.set_state``, a checkpoint restored)
        written into ``.state`` in place, so graphs captured on it draw from there."""
        self._check_open("load")
        if self._capturing():
            raise RuntimeError("load: cannot write the device state while a graph is captured")
        with self.engine.lock, self.reserve_lock:
            host = tuple(self.engine._slots)
            slots = _device_slots(host)
            self.state.copy_(torch.tensor(_as_int64(slots), dtype=torch.int64))
            self._synced, self._host = list(slots), host

    def close(self):
        """``sync()`` and leave graph-safe mode (the Generator draws on the host again);
        the mode is left even where sync raises.  A second close does nothing."""
        if self.closed:
            return
        try:
            self.sync()
        finally:
            self.closed = True
            engine = self.engine
            with engine.lock:
                engine._slots[FLAGS] &= ~DEVICE & _MASK64  # the host draws again
                if getattr(engine, _ATTR, None) is self:
                    delattr(engine, _ATTR)


def graph_safe(generator=None, device="cuda"):
    """Put ``generator`` in graph-safe mode on ``device``: a DeviceState (module docstring).

    >>> import ascend_rand as ar, ascend_rand.torch as art
    >>> art.graph_safe(ar.Generator(0, engine="mt19937"), "cuda")
    Traceback (most recent call last):
    ...
    ValueError: graph_safe: an MT19937 Generator hands out words, not a (key, counter): only a Philox Generator has a device state
    """
    what = "graph_safe"
    generator = generator_or_default(generator, what)
    engine = generator.engine
    if not isinstance(engine, Philox):
        raise ValueError(f"{what}: an {engine.name.upper()} Generator hands out words, not a "
                         f"(key, counter): only a Philox Generator has a device state")
    try:
        device = torch.device(device)
    except (TypeError, RuntimeError) as exc:
        raise ValueError(f"{what}: device {device!r} is not a torch device ({exc})") from None
    current = getattr(engine, _ATTR, None)
    if current is not None:
        raise ValueError(f"{what}: this Generator's engine is already in graph-safe mode on "
                         f"{current.device}; close() that DeviceState first")
    table, interpreted = _kernels_for(device)
    with engine.lock:
        slots = _device_slots(tuple(engine._slots))
    ds = DeviceState(generator, device, table, interpreted, slots)
    with engine.lock:
        if getattr(engine, _ATTR, None) is not None or tuple(engine._slots) != ds._host:
            raise RuntimeError(f"{what}: the engine changed while its device state was made; "
                               f"try again")
        setattr(engine, _ATTR, ds)
        # From now on the host refuses to draw (engines/philox.py: DEVICE sends every
        # draw, the native one-call draw's too, to the check that raises).
        engine._slots[FLAGS] |= DEVICE
        ds._host = tuple(engine._slots)
    return ds
