"""What the Triton kernel test files share: where they run, the interpreter switch, bit comparisons.

tests/device/test_triton_kernels.py, test_triton_normal.py and test_triton_dropout.py
run under Triton's interpreter on CPU tensors (TRITON_INTERPRET=1), or, with
``ASCEND_RAND_TRITON_TEST_DEVICE=cuda`` (bench/device_check.sh), compiled for
that CUDA device.  Triton decides at ``@triton.jit`` time (its own standard
library's when triton is first imported), so a test file imports triton, the
kernel modules and its own test kernels inside ``kernel_imports()``; Triton
3.3+ also reads the variable at launch, so the tests set it while they run
(the ``interpret_env`` fixture).

Imported by name (``import triton_support``: conftest puts tests/ on sys.path,
as for tests/peers.py), after the test file's ``pytest.importorskip("torch")``.
Its fixtures are used by importing them into the test module.
"""

import contextlib
import os

import numpy as np
import pytest
import torch

# ASCEND_RAND_TRITON_TEST_DEVICE=cuda: the tests compiled for that device; unset or "cpu":
# interpreted.
DEVICE = os.environ.get("ASCEND_RAND_TRITON_TEST_DEVICE") or "cpu"
COMPILED = DEVICE != "cpu"


def skip_without_the_device():
    """Skip the calling test module when the device asked for is not here."""
    if COMPILED and not (DEVICE.startswith("cuda") and torch.cuda.is_available()):
        pytest.skip(f"ASCEND_RAND_TRITON_TEST_DEVICE={DEVICE}: no such CUDA device here",
                    allow_module_level=True)


@contextlib.contextmanager
def kernel_imports():
    """TRITON_INTERPRET for the imports and ``@triton.jit`` definitions in the block ("1"
    interpreted, "0" compiled), as it was after: other test files find the process as it was."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TRITON_INTERPRET", "0" if COMPILED else "1")
        yield


def import_triton():
    """triton, or the calling module skipped with the reason."""
    return pytest.importorskip(
        "triton", reason="triton is not installed (the test extra pins triton==3.2.0)")


@pytest.fixture
def interpret_env(monkeypatch):
    """TRITON_INTERPRET=1 while a test runs (interpreted): Triton 3.2 read it at import,
    later versions also when a launch imports more of triton.  Nothing when compiled."""
    if not COMPILED:
        monkeypatch.setenv("TRITON_INTERPRET", "1")


@pytest.fixture
def on_test_device(interpret_env):
    """``interpret_env``, and compiled: the test's tensors on that device (torch's default
    device while it runs)."""
    if not COMPILED:
        yield
        return
    torch.set_default_device(DEVICE)
    try:
        yield
    finally:
        torch.set_default_device(None)


@pytest.fixture
def launch_counter(monkeypatch):
    """Counts launches at the runtime's entry: the interpreter's grid executor (every
    ``kernel[grid](...)`` under TRITON_INTERPRET=1) and the compiled JITFunction.run."""
    from triton.runtime import interpreter, jit

    count = {"n": 0}
    for cls, name in ((interpreter.GridExecutor, "__call__"), (jit.JITFunction, "run")):
        original = getattr(cls, name)

        def counted(self, *args, _original=original, **kwargs):
            count["n"] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, name, counted)
    return count


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SAME_WIDTH_INT = {torch.bool: torch.uint8, torch.bfloat16: torch.int16}


def bits(array):
    """A tensor's (any device) or array's element bits as unsigned integers, flat."""
    if isinstance(array, torch.Tensor):
        t = array.detach().reshape(-1).cpu()
        array = t.view(_SAME_WIDTH_INT.get(t.dtype, t.dtype)).numpy()
    a = np.ascontiguousarray(array).reshape(-1)
    return a.view(_UNSIGNED[a.dtype.itemsize])


def assert_same_bits(got, want, what):
    """``got`` and ``want`` (tensors or arrays) hold the same bits; returns got's."""
    got, want = bits(got), bits(want)
    assert got.shape == want.shape, f"{what}: {got.shape} elements, expected {want.shape}"
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{what}: {bad.size} of {got.size} elements differ, first at "
                           f"{bad[:5].tolist()}: {[hex(v) for v in got[bad[:5]]]} != "
                           f"{[hex(v) for v in want[bad[:5]]]}")
    return got


# -- compiled for CUDA without a GPU: Triton's compiler down to PTX, in a child process ---------

# The child's script: PTX_HEAD, then the test file's source defining ``cases`` (name ->
# (kernel, signature in parameter order, constexpr values)), then PTX_TAIL, which compiles
# each for sm_90 with fusion off (as every launch does, spec 3.3) and prints their PTX as JSON.
PTX_HEAD = r"""
import inspect, json, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
"""
PTX_TAIL = r"""
# Triton 3.2 names the constexpr values "constants", later versions "constexprs"
word = "constants" if "constants" in inspect.signature(ASTSource.__init__).parameters \
    else "constexprs"
out = {}
for name, (kernel, signature, constants) in cases.items():
    signature = dict(signature, **{k: "constexpr" for k in constants})
    try:
        compiled = triton.compile(ASTSource(fn=kernel, signature=signature, **{word: constants}),
                                  target=GPUTarget("cuda", 90, 32),
                                  options={"enable_fp_fusion": False})
    except triton.compiler.errors.CompilationError as exc:  # the kernel's own fault: fail
        print(json.dumps({"compile_error": f"{name}: {exc}"[-3000:]}))
        sys.exit(0)
    except Exception as exc:  # no NVIDIA backend or toolchain here
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:500]}))
        sys.exit(0)
    out[name] = compiled.asm["ptx"]
print(json.dumps(out))
"""


def compile_to_ptx(cases_source, timeout=300):
    """{case name: PTX} of the kernels ``cases_source`` names, compiled for sm_90 in a child
    process (this process's kernels are the interpreter's; only a process without
    TRITON_INTERPRET has compilable ones); the test skipped where this Triton cannot
    compile for CUDA (no NVIDIA backend or toolchain), failed where a kernel does not
    compile (a CompilationError)."""
    import json
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    try:
        done = subprocess.run([sys.executable, "-c", PTX_HEAD + cases_source + PTX_TAIL],
                              capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"compiling the kernels for CUDA took over {timeout} s")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "compile_error" not in result, result.get("compile_error")
    if "error" in result:
        pytest.skip(f"this Triton cannot compile for CUDA here: {result['error']}")
    return result


def import_interpreted():
    """Import triton (where installed) and torch._dynamo, which imports it, with
    TRITON_INTERPRET=1, the variable as it was after: for test files that do not run the
    kernels themselves but reach them through torch (a dispatch mode, opcheck), so that
    triton's first import, which fixes its mode, is the interpreter's.  Whether triton is
    installed."""
    import importlib.util

    with pytest.MonkeyPatch.context() as env:
        env.setenv("TRITON_INTERPRET", "1")
        have = importlib.util.find_spec("triton") is not None
        if have:
            import triton  # noqa: F401
        import torch._dynamo  # noqa: F401
    return have
