"""Running the kernels under Triton's interpreter (``TRITON_INTERPRET=1``, CPU tensors).

Triton decides at ``@triton.jit`` time whether a kernel is compiled or
interpreted, so ``TRITON_INTERPRET=1`` must be set before this package's
kernel modules are imported, and it must stay set while they run (Triton
3.3 and later read it again at launch, through ``triton.knobs``);
``enable()`` sets it for a process that has not imported them yet.

One repair: Triton 3.2's interpreter reads a scalar (a program id, a loop
bound) as ``int(array)`` of a one-element 1-D array, which NumPy 2.4 refuses
("only 0-dimensional arrays can be converted to Python scalars"), so a
grid-stride loop ``for tile in range(pid, tiles, num_programs)`` fails
there.  ``patch()`` makes that read take the array's one element; it
changes nothing in later Triton versions (their interpreter reads the
scalar with ``squeeze()``) and nothing compiled.
"""

import inspect
import os

_patched = False


def enable():
    """Set TRITON_INTERPRET=1 for kernel modules imported from now on."""
    os.environ["TRITON_INTERPRET"] = "1"


def _scalar_index(tensor):
    return int(tensor.handle.data.reshape(-1)[0])


def patch():
    """Let the interpreter read one-element scalars under NumPy 2.4 (see the module docstring)."""
    global _patched
    if _patched:
        return
    from triton.runtime import interpreter

    original = getattr(interpreter, "_patch_lang_tensor", None)
    # Triton 3.2's form, _patch_lang_tensor(tensor); later interpreters take a scope as well
    # and read a scalar with squeeze(), which NumPy accepts: nothing to repair there.
    if original is None or len(inspect.signature(original).parameters) != 1:
        _patched = True
        return

    def patch_lang_tensor(tensor):
        original(tensor)
        tensor.__index__ = _scalar_index

    interpreter._patch_lang_tensor = patch_lang_tensor
    _patched = True
