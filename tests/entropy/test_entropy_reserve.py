"""The entropy pool's output reserve: native SecretReserve and PyReserve.

Both are held to a bytearray model over random operation sequences; forks (through
Python's os.fork and through the C library's fork(), which skips Python's fork hooks)
leave a child with nothing to hand out; the pool's small-read path keeps its promises
with either reserve.
"""

import ctypes
import os
import random

import pytest

from ascend_rand import _extension
from ascend_rand.entropy import pool as pool_mod
from ascend_rand.entropy import reserve as reserve_mod
from ascend_rand.entropy.pool import EntropyPool

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

NATIVE = _extension.module
needs_native = peers.needs_native  # skipped without the core, an error in CI


def kinds():
    out = [pytest.param(reserve_mod.PyReserve, id="python")]
    if NATIVE is not None:
        out.append(pytest.param(lambda: NATIVE.SecretReserve(), id="native"))
    return out


class Urandom:
    name, sample_bits, min_entropy = "urandom", 8, 8.0

    def read(self, n):
        return os.urandom(n)


@pytest.mark.parametrize("make", kinds())
@pytest.mark.parametrize("seed", range(6))
def test_reserve_follows_a_bytearray_model(make, seed):
    rnd = random.Random(seed)
    r, model, taken = make(), bytearray(), 0
    for _ in range(3000):
        op = rnd.random()
        if op < 0.35:  # puts of every size, from empty to larger than all held so far
            data = rnd.randbytes(rnd.choice([0, 1, 7, 32, 100, 4096, 5000, 70000]))
            r.put(data if rnd.random() < 0.5 else bytearray(data))
            model += data
        elif op < 0.95:
            n = rnd.choice([0, 1, 8, 31, 32, 256, 4097, len(model), len(model) + 1])
            got = r.take(n)
            if n <= len(model):
                assert got == bytes(model[:n])
                del model[:n]
                taken += n
            else:
                assert got is None
        else:
            r.clear()
            model.clear()
        assert r.available == len(model) and r.taken == taken


@pytest.mark.parametrize("make", kinds())
def test_reserve_refuses_bad_arguments(make):
    r = make()
    with pytest.raises(ValueError, match="-1"):
        r.take(-1)
    for bad in (1.0, "3", None, True):
        with pytest.raises(TypeError, match="take"):
            r.take(bad)
    with pytest.raises(TypeError):
        r.put(5)
    with pytest.raises(TypeError):
        r.put("text")
    assert r.available == 0 and r.taken == 0


@needs_native
def test_native_reserve_takes_no_arguments_and_accepts_any_buffer():
    with pytest.raises(TypeError, match="no arguments"):
        NATIVE.SecretReserve(16)
    import numpy as np

    r = NATIVE.SecretReserve()
    r.put(np.arange(4, dtype="<u4"))
    r.put(memoryview(b"xyz"))
    assert r.available == 19
    assert r.take(16) == np.arange(4, dtype="<u4").tobytes() and r.take(3) == b"xyz"


def _in_child(fork, body):
    """Run body() in a child made by fork(); its bytes through a pipe."""
    rd, wr = os.pipe()
    pid = fork()
    if pid == 0:
        try:
            os.close(rd)
            os.write(wr, body())
        finally:
            os._exit(0)
    os.close(wr)
    out = b""
    while chunk := os.read(rd, 65536):
        out += chunk
    os.close(rd)
    os.waitpid(pid, 0)
    return out


def _libc_fork():
    return ctypes.CDLL(None, use_errno=True).fork()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@needs_native
@pytest.mark.parametrize("fork", [os.fork, _libc_fork], ids=["os.fork", "libc fork"])
def test_native_reserve_is_empty_in_a_forked_child(fork):
    r = NATIVE.SecretReserve()
    r.put(b"secret" * 100)
    before = NATIVE.fork_generation()
    child = _in_child(fork, lambda: repr((r.available, r.take(6), NATIVE.fork_generation() - before)).encode())
    assert child == b"(0, None, 1)"
    assert r.available == 600 and r.take(6) == b"secret" and NATIVE.fork_generation() == before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@needs_native
@pytest.mark.parametrize("mode", ["raw", "drbg"])
def test_pool_child_forked_behind_pythons_back_gets_other_bytes(mode):
    # libc's fork() runs no os.register_at_fork hook: only the reserve's fork generation
    # (and the pool's process-id check behind it) stop the child from handing out the
    # bytes the parent hands out next.
    pool = EntropyPool(Urandom(), mode=mode)
    pool.read(32)
    assert pool._ready.available >= 64
    child = _in_child(_libc_fork, lambda: pool.read(32) + pool.read(32))
    parent = pool.read(32) + pool.read(32)
    assert len(child) == 64 and child != parent
    assert child[:32] not in pool.read(8192)


@pytest.mark.parametrize("mode", ["raw", "drbg"])
def test_pool_on_the_python_reserve(monkeypatch, mode):
    # The NumPy-only install's reserve gives the pool the same behaviour.
    monkeypatch.setattr(pool_mod, "new_reserve", reserve_mod.PyReserve)
    pool = EntropyPool(Urandom(), mode=mode)
    assert isinstance(pool._ready, reserve_mod.PyReserve)
    chunks = [pool.read(k) for k in [1, 32, 256, 257, 5000] * 20]
    assert [len(c) for c in chunks] == [1, 32, 256, 257, 5000] * 20
    long = [c for c in chunks if len(c) >= 32]  # (one-byte reads repeat by chance)
    assert len(set(long)) == len(long) == 80
    assert pool.stats()["bytes_produced"] == 20 * 5546
    if hasattr(os, "fork"):
        child = _in_child(os.fork, lambda: pool.read(32))
        assert len(child) == 32 and child != pool.read(32)


def test_new_reserve_is_native_when_the_core_is_built():
    r = reserve_mod.new_reserve()
    if NATIVE is None:
        assert isinstance(r, reserve_mod.PyReserve)
    else:
        assert type(r).__name__ == "SecretReserve" and type(r).__module__ == "ascend_rand._native"
