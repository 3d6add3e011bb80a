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
    host copy: call it outside a captured region) and return the engine's
    ``state`` dict.  OverflowError where draws were made after the last
    offset (the engine is then left exhausted, as the host's would be);
    RuntimeError where the host engine drew while its state was on the device
    (those draws used offsets the device uses too).
    ``.load()``: the reverse, after ``generator.set_state(...)`` (a checkpoint
    restored): the engine's state written into ``.state`` in place.
    ``.close()``: ``sync()`` and leave graph-safe mode (idempotent).

``graph_state.active(generator) -> DeviceState | None``
    The Generator's device state while it is in graph-safe mode (an attribute
    read: cheap, and Dynamo-traceable), else None.
``graph_state.state_for(generator, device) -> torch.Tensor | None``
    ``active(generator).state`` where the mode is on ``device``; None outside
    the mode; RuntimeError where the mode is on another device (a draw there
    from the stale host engine would reuse the device's offsets).

The Triton side (backend/triton_kernels/), which the operators call:

- ``kernels.fill_from_state(plan, out, state)``: one draw, then the advance;
- ``dropout.forward_from_state(x, state, p, keep_mask=True, out=None)`` ->
  ``(y, mask or None, drawn_at)``; ``drawn_at`` is an int64 tensor of 2
  (seed, offset actually used) written by the forward kernel's program 0, all
  a regenerate-mode backward needs;
- ``dropout.backward_regenerate_at(grad, drawn_at, p, out=None)`` -> dx;
- ``dropout.backward_from_mask(out, grad, mask, scale)`` (unchanged), with
  ``dropout.dropout_scale(p, dtype)``.
"""
