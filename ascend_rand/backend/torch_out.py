"""A draw into a caller's torch tensor (``out=``), kept honest with autograd.

The kernels write a tensor's memory directly (a NumPy view on the host, the
tensor itself on a device), which autograd cannot see.  So every backend that
takes a torch ``out=`` (torch, native, numpy) applies torch's own rules for an
in-place write (docs/npu.md, "Devices, torch tensors given as out=, and meta
tensors"):

- refused, before anything is reserved: in grad mode, a leaf that requires
  grad or a view of one (torch: "a leaf Variable that requires grad is being
  used in an in-place operation"); outside inference mode, an inference tensor;
- in grad mode, a tensor that requires grad (an intermediate result) is
  written by ``out.copy_(draw)``, the draw made into a fresh tensor first:
  autograd records the write as it records torch's own ``normal_`` (the old
  value gets no gradient) and bumps the version;
- any other write bumps the tensor's version counter afterwards
  (``torch.autograd.graph.increment_version``), so a backward that saved the
  tensor raises, as after torch's own in-place write.

torch is imported only where the caller already has a tensor.
"""


def is_tensor(x):
    """Whether ``x`` is a torch tensor (never imports torch)."""
    if not type(x).__module__.startswith("torch"):
        return False
    import torch
    return isinstance(x, torch.Tensor)


def check_writable(tensor, what):
    """Refuse, as torch's in-place operations refuse, an ``out`` autograd cannot let us write."""
    import torch
    if torch.is_grad_enabled() and tensor.requires_grad:
        if tensor.is_leaf:
            raise ValueError(
                f"{what}: out is a leaf tensor that requires grad (shape {tuple(tensor.shape)}), "
                "and torch refuses in-place writes to it in grad mode (\"a leaf Variable that "
                "requires grad is being used in an in-place operation\"); draw into it under "
                "torch.no_grad(), as torch.nn.init does")
        base = tensor._base
        if base is not None and base.is_leaf and base.requires_grad:
            raise ValueError(
                f"{what}: out is a view of a leaf tensor that requires grad, and torch refuses "
                "in-place writes to it in grad mode (\"a view of a leaf Variable that requires "
                "grad is being used in an in-place operation\"); draw under torch.no_grad()")
    if tensor.is_inference() and not torch.is_inference_mode_enabled():
        raise ValueError(
            f"{what}: out is an inference tensor, and torch refuses in-place writes to it "
            "outside torch.inference_mode(); draw inside it, or into a clone")


def recorded(tensor):
    """Whether a write into ``tensor`` must go through autograd (``out.copy_``)."""
    import torch
    return tensor.requires_grad and torch.is_grad_enabled()


def written(tensor, fresh=None):
    """After the kernel: copy ``fresh`` (the flat draw, a tensor or a host NumPy array, for
    a ``recorded`` tensor) into ``tensor`` through autograd, or bump ``tensor``'s version
    counter."""
    import torch
    if fresh is not None:
        if not isinstance(fresh, torch.Tensor):
            fresh = (torch.from_numpy(fresh.view("int16")).view(torch.bfloat16)
                     if tensor.dtype == torch.bfloat16 else torch.from_numpy(fresh))
        tensor.copy_(fresh.view(tensor.shape))
    elif not tensor.is_inference():  # (inference tensors keep no version counter)
        torch.autograd.graph.increment_version(tensor)
