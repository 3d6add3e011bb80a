"""CUDA graph capture of graph-safe draws: each replay draws fresh numbers, the eager sequence's.

A Generator in graph-safe mode (``ascend_rand.torch.graph_safe``) keeps its
Philox (seed, offset) in a device tensor that the Triton kernels read and
advance on the device (docs/npu.md, "Graph capture and the device state").  So
a ``torch.cuda.graph`` that captured a few draws and a dropout forward and
backward, replayed k times, gives on replay r the numbers of round r of the
same calls made eagerly on the host from the same state, and the state then
equals the host Generator's.  Needs a CUDA device with a Triton that compiles
for it, and the kernels compiled in this process: otherwise skipped with the
reason (tests/device/test_triton_state.py holds the device state to the host under
Triton's interpreter, everywhere).
"""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="graph capture is torch's")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device here: torch.cuda.graph needs one (the device state is held to "
                "the host under Triton's interpreter in tests/device/test_triton_state.py)",
                allow_module_level=True)
if os.environ.get("TRITON_INTERPRET") == "1":
    pytest.skip("TRITON_INTERPRET=1: the Triton kernels are interpreted in this process, and a "
                "CUDA graph captures compiled kernels only", allow_module_level=True)
pytest.importorskip("triton", reason="triton is not installed (the test extra pins "
                                     "triton==3.2.0)")

import ascend_rand as ar  # noqa: E402
from ascend_rand.backend import device_path  # noqa: E402
from ascend_rand.distributions.normal import plan_normal, plan_truncated_normal  # noqa: E402
from ascend_rand.distributions.uniform import plan_uniform  # noqa: E402
from ascend_rand.torch import graph_safe  # noqa: E402

ok, why = device_path.compiles("cuda")
if not ok:
    pytest.skip(f"the Triton kernels do not compile for CUDA in this process: {why} (run "
                f"this file in a process of its own)", allow_module_level=True)

SEED = 0x0123456789ABCDEF
N = 3000
P = 0.2
REPLAYS = 3


def host_bits(a):
    a = np.ascontiguousarray(a).reshape(-1)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def device_bits(t):
    t = t.detach().reshape(-1).cpu()
    return host_bits(t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32,
                             8: torch.int64}[t.element_size()]).numpy())


def host_round(g, x, grad):
    """One round of the captured calls, eagerly on the host from ``g``: (uniform, normal,
    truncated normal, dropout y, its mask, dx)."""
    u = g.random(N)
    z = g.normal(0.5, 2.0, N)
    tz = g.truncated_normal(0.0, 1.0, 3.0, 5.0, N)
    mask = g.dropout_mask(N, P)
    y = ar.apply_mask(x, mask, P)
    dx = ar.apply_mask(grad, mask, P)
    return u, z, tz, y, mask, dx


@pytest.mark.parametrize("regenerate", [False, True], ids=["packed", "regenerate"])
def test_replays_draw_the_eager_sequence(regenerate):
    device = torch.device("cuda")
    x_host = np.linspace(-3.0, 3.0, N, dtype=np.float32)
    grad_host = np.linspace(1.0, 2.0, N, dtype=np.float32)
    x = torch.from_numpy(x_host).to(device)
    grad = torch.from_numpy(grad_host).to(device)
    plans = (plan_uniform((N,), "float32", 0.0, 1.0),
             plan_normal((N,), "float32", 0.5, 2.0, "ziggurat"),
             plan_truncated_normal((N,), "float32", 0.0, 1.0, 3.0, 5.0))
    outs = [torch.empty(N, dtype=torch.float32, device=device) for _ in plans]
    host = ar.Generator(SEED)
    lent = ar.Generator(SEED)
    with graph_safe(lent, device) as ds:
        def step():
            for plan, out in zip(plans, outs):
                ds.fill(plan, out)
            y, mask, drawn_at = ds.dropout_forward(x, P)
            if regenerate:
                dx = ds.dropout_backward(grad, P, drawn_at=drawn_at)
            else:
                dx = ds.dropout_backward(grad, P, mask=mask)
            return y, mask, dx

        # Warm up on a side stream (Triton compiles, the ziggurat tables reach the
        # device): one eager round, which the host's first round matches.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            warm = step()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        rounds = [tuple(o.clone() for o in outs) + tuple(t.clone() for t in warm)]

        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = step()
        # Capture records the kernels and runs none: the state has not moved.
        assert ds.sync() == host_state_after(1)
        for _ in range(REPLAYS):
            graph.replay()
            torch.cuda.synchronize()
            rounds.append(tuple(o.clone() for o in outs) + tuple(t.clone() for t in captured))

        for r, got in enumerate(rounds):
            want = host_round(host, x_host, grad_host)
            for name, g, w in zip(("uniform", "normal", "truncated", "y", "mask", "dx"), got,
                                  want):
                np.testing.assert_array_equal(device_bits(g), host_bits(w),
                                              err_msg=f"round {r}: {name}")
        # fresh numbers on each replay
        assert not torch.equal(rounds[1][0], rounds[2][0])
        assert ds.sync() == host.state == {"engine": "philox", "seed": SEED,
                                           "offset": 4 * (1 + REPLAYS)}
        assert [v % 2**64 for v in ds.state.tolist()] == list(host.engine._slots)
    assert lent.state == host.state


def host_state_after(rounds):
    return {"engine": "philox", "seed": SEED, "offset": 4 * rounds}


def test_sync_inside_a_capture_is_refused():
    lent = ar.Generator(SEED)
    with graph_safe(lent, "cuda") as ds:
        out = torch.empty(16, device="cuda")
        ds.fill(plan_uniform((16,), "float32", 0.0, 1.0), out)  # warm
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with pytest.raises(RuntimeError, match="while a graph is being captured"):
            with torch.cuda.graph(graph):
                ds.fill(plan_uniform((16,), "float32", 0.0, 1.0), out)
                ds.sync()
