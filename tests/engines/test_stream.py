"""``ascend-rand stream``: the bytes external batteries read (ascend_rand/cli/stream.py)."""

import math
import subprocess
import sys

import numpy as np
import pytest

import ascend_rand as ar
from ascend_rand.cli import stream

N = 70_000  # more than one chunk of CHUNK elements


def run(*args, n):
    out = subprocess.run([sys.executable, "-m", "ascend_rand", "stream", *args, "--bytes", str(n)],
                         capture_output=True, check=True)
    assert out.stderr == b""
    assert len(out.stdout) == n
    return out.stdout


def test_philox_raw_is_the_generator_s_one_raw_call_and_numpy_s_words():
    data = run("--engine", "philox", "--dist", "raw", "--seed", str(2**64 - 5), n=4 * N)
    words = np.frombuffer(data, "<u4")
    assert words.tolist() == ar.Generator(2**64 - 5).raw(N).tolist()
    # numpy's full-range uint32 integers are its next_uint32: our engine's words in order
    np_words = np.random.Generator(ar.Philox(2**64 - 5)).integers(0, 2**32, N, dtype=np.uint32)
    assert words.tolist() == np_words.tolist()
    assert words.tolist() == ar.stateless.raw(N, 2**64 - 5, (0, 0)).tolist()


def test_mt19937_raw_is_std_mt19937():
    words = np.frombuffer(run("--engine", "mt19937", "--seed", "5489", n=4 * N), "<u4")
    legacy = np.random.RandomState(5489)  # numpy's legacy seeding is std::mt19937's
    assert words.tolist() == legacy.randint(0, 2**32, N, dtype=np.uint64).tolist()
    assert words[0] == 3499211612


def test_uniform_is_the_23_mantissa_bits_of_each_float32():
    data = run("--dist", "uniform", "--seed", "7", n=23 * N // 8)
    bits = np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little").reshape(-1, 23)
    m = (bits.astype(np.uint64) << np.arange(23, dtype=np.uint64)).sum(axis=1)
    g = ar.Generator(7)
    u = np.concatenate([g.random(stream.CHUNK), g.random(stream.CHUNK)])[:N]
    assert (m.astype(np.float64) * 2.0**-23).tolist() == u.astype(np.float64).tolist()


def test_normal_is_phi_of_each_float64_normal():
    data = run("--dist", "normal", "--seed", "3", n=4 * 1000)
    got = np.frombuffer(data, "<u4")
    z = ar.Generator(3).standard_normal(1000, dtype="float64")
    want = [min(math.floor(0.5 * math.erfc(-x / math.sqrt(2.0)) * 2.0**32), 2**32 - 1) for x in z]
    assert got.tolist() == want


def test_mask_is_fair_mask_bytes():
    data = run("--dist", "mask", "--seed", "11", "--engine", "mt19937", n=5000)
    want = ar.Generator(11, engine="mt19937").dropout_mask(stream.CHUNK * 8, 0.5)[:5000]
    assert data == want.tobytes()
    bits = np.unpackbits(np.frombuffer(data, np.uint8))
    assert abs(bits.mean() - 0.5) < 4 * 0.5 / math.sqrt(bits.size)  # a fair coin, 4 s.e.


def test_a_closed_pipe_ends_it_quietly():
    proc = subprocess.Popen([sys.executable, "-m", "ascend_rand", "stream", "--dist", "raw"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.read(1 << 16)
    proc.stdout.close()  # the battery stops reading
    assert proc.wait(timeout=60) == 0
    assert proc.stderr.read() == b""
    assert len(first) == 1 << 16


@pytest.mark.parametrize("args, message", [
    (["--seed", "-1"], "seed"), (["--engine", "mt19937", "--seed", str(2**32)], "2**32"),
    (["--bytes", "-3"], "--bytes"), (["--dist", "gamma"], "invalid choice"),
])
def test_bad_arguments(args, message):
    out = subprocess.run([sys.executable, "-m", "ascend_rand", "stream", *args, "--bytes", "8"]
                         if "--bytes" not in args else
                         [sys.executable, "-m", "ascend_rand", "stream", *args],
                         capture_output=True, text=True)
    assert out.returncode == 2 and message in out.stderr and out.stdout == ""


def test_training_layouts():
    data = run("--layout", "offsets", "--seed", "9", n=4 * 64)
    words = np.frombuffer(data, "<u4").reshape(4, 16)
    for o in range(4):
        assert words[o].tolist() == ar.stateless.raw(16, 9, (0, o)).tolist()
    data = run("--layout", "seeds", n=4 * 256 * 8)
    words = np.frombuffer(data, "<u4").reshape(8, 256)  # word j of seed s at 256 j + s
    for s in (0, 1, 255):
        assert words[:, s].tolist() == ar.stateless.raw(8, s).tolist()


def test_multi_stream_mt19937():
    data = run("--engine", "mt19937", "--streams", "3", "--seed", "5", n=4 * 300)
    assert np.frombuffer(data, "<u4").tolist() == ar.MT19937(5, streams=3).random_raw(300).tolist()


def test_layouts_are_for_raw_philox_words():
    out = subprocess.run([sys.executable, "-m", "ascend_rand", "stream", "--layout", "seeds",
                          "--dist", "uniform", "--bytes", "8"], capture_output=True, text=True)
    assert out.returncode == 2 and "raw Philox" in out.stderr
