"""A device torch cannot use is a ValueError naming it and why, when the Generator is made.

Found by hostile probing (issue 22, defect 13): on a CPU-only torch,
``Generator(backend="torch", device="cuda")`` raised torch's AssertionError at
the first draw and ``device="xla"`` a NotImplementedError; ``Backend.on``
documents a ValueError naming the device.
"""

import pytest

torch = pytest.importorskip("torch")

import ascend_rand as ar  # noqa: E402


def _cuda_devices():
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


UNUSABLE = ["xla", "lazy", "mps", "ipu"] + (["cuda", "cuda:0"] if not _cuda_devices() else [])


@pytest.mark.parametrize("device", UNUSABLE)
def test_an_unusable_device_is_refused_at_construction(device):
    with pytest.raises(ValueError, match=rf"device '{device}' cannot be used by this torch"):
        ar.Generator(1, backend="torch", device=device)
    with pytest.raises(ValueError, match=rf"device '{device}'"):
        ar.stateless.uniform(3, key=1, backend="torch", device=device)


@pytest.mark.skipif(bool(_cuda_devices()), reason="a CUDA device is visible")
def test_the_cuda_reason_says_what_is_missing():
    with pytest.raises(ValueError) as info:
        ar.Generator(1, backend="torch", device=torch.device("cuda", 0))
    reason = ("built without CUDA" if not torch.backends.cuda.is_built()
              else "no CUDA device is visible")
    assert reason in str(info.value)


def test_an_index_past_the_last_cuda_device_is_refused():
    count = _cuda_devices()
    if not count:
        pytest.skip("no CUDA device")
    with pytest.raises(ValueError, match=rf"indices are 0\.\.{count - 1}"):
        ar.Generator(1, backend="torch", device=f"cuda:{count}")


def test_the_meta_device_is_refused_with_its_reason():
    """Meta tensors hold no values: a Generator there would spend offsets (and MT19937
    words) on nothing, or fail in a data-dependent kernel after its reservation."""
    with pytest.raises(ValueError, match="'meta' holds no values"):
        ar.Generator(1, backend="torch", device="meta")
    g = ar.Generator(1, backend="torch")
    with pytest.raises(ValueError, match="out is a meta tensor"):
        g.normal(out=torch.empty(3, device="meta"))
    with pytest.raises(ValueError, match="out is on meta"):
        ar.Generator(1, backend="numpy").normal(out=torch.empty(3, device="meta"))
    assert g.offset == 0


def test_usable_devices_still_work():
    assert ar.Generator(1, backend="torch", device="cpu").random(2).device.type == "cpu"
    if _cuda_devices():
        assert ar.Generator(1, backend="torch", device="cuda:0").random(2).is_cuda


def test_a_name_that_is_no_device_is_still_a_value_error():
    with pytest.raises(ValueError, match="is not a torch device"):
        ar.Generator(1, backend="torch", device="gpu0")
