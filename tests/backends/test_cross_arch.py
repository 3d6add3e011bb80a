"""The native kernels give the same bits on aarch64 (NEON and scalar) as on this host.

tools/cross_check.cpp runs the csrc/cpu/ entry points on cases read from stdin. It is
built twice, for this host and with aarch64-linux-gnu-g++ (static), and the aarch64
binary runs under qemu-aarch64 user-mode emulation, at its NEON level and with
ASCEND_RAND_SIMD=scalar. Every case's bytes must agree with the host's at every
level, and the host binary agrees with the installed extension on the cases the
public API can express, so the aarch64 bits are the library's bits. The same binary
checks the RNDRRS source (FEAT_RNG): present under `-cpu max`, returning distinct
words; absent on a Cortex-A72.

Needs g++-aarch64-linux-gnu and qemu-user (Debian packages; .ci/run installs them).
Skips without them, except in CI, where a missing cross toolchain fails the run.
"""

import os
import platform
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import ascend_rand as ar
import peers  # tests/peers.py
from ascend_rand import stateless
from ascend_rand.distributions.normal import truncation_plan, working

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["tools/cross_check.cpp", "csrc/cpu/kernels.cpp", "csrc/cpu/kernels_bits.cpp", "csrc/entropy/hwrng.cpp"]
FLAGS = ["-std=c++17", "-O2", "-ffp-contract=off", "-fno-math-errno", "-pthread", f"-I{ROOT / 'csrc'}"]
CROSS, QEMU = "aarch64-linux-gnu-g++", "qemu-aarch64"
ON_X86 = platform.machine() in ("x86_64", "AMD64")


def _tools_or_skip():
    if not ON_X86:
        pytest.skip("the cross check runs on an x86_64 host")
    # Skips on a machine without them; fails in CI, which installs them (.ci/run).
    for tool in ("g++", CROSS, QEMU):
        peers.program(tool)


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    _tools_or_skip()
    out = tmp_path_factory.mktemp("cross")
    jobs = {"host": ["g++", *FLAGS], "arm": [CROSS, *FLAGS, "-static"]}

    def build(name):
        cmd = [*jobs[name], *SOURCES, "-o", str(out / name)]
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)

    with ThreadPoolExecutor(2) as pool:
        results = dict(zip(jobs, pool.map(build, jobs)))
    for name, r in results.items():
        assert r.returncode == 0, f"{name} build failed:\n{r.stderr[-3000:]}"
    return out


def run(binaries, target, lines, level=None, cpu="max"):
    env = dict(os.environ)
    env.pop("ASCEND_RAND_SIMD", None)
    if level:
        env["ASCEND_RAND_SIMD"] = level
    cmd = [str(binaries / "host")] if target == "host" else [QEMU, "-cpu", cpu, str(binaries / "arm")]
    r = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    results = []
    for line in r.stdout.splitlines():
        count, _, data = line.partition(" ")
        blob = bytes.fromhex(data)
        assert len(blob) == int(count)
        results.append(blob)
    assert len(results) == len(lines)
    return results


def h(x):
    return float(x).hex()


# Counters where the 128-bit counter carries from the low half and wraps at 2**128.
COUNTERS = [(0, 0), (5, 7), (2**64 - 3, 0), (2**64 - 1, 2**64 - 1), (2**64 - 2, 2**64 - 1)]
KEYS = [0, 1, 0xDEADBEEFCAFEF00D, 2**64 - 1]


def cases():
    lines = []
    for i, (lo, hi) in enumerate(COUNTERS):
        key = KEYS[i % len(KEYS)]
        w = f"{key} {lo} {hi}"
        for n in (1, 3, 1027, 5000):
            lines += [f"raw32 {n} {w}", f"raw64 {n} {w}"]
        n = 2053  # not a multiple of a tile, a block or a vector
        lines += [
            f"uf32 {n} {w} 0 0x0p+0 0x1p+0",
            f"uf32 {n} {w} 1 {h(np.float32(-1.5))} {h(np.float32(3.25))}",
            f"uf64 {n} {w} 0 0x0p+0 0x1p+0",
            f"uf64 {n} {w} 1 {h(-1e300)} {h(1.5e300)}",
            f"u16 {n} {w} 0 0 0x0p+0 0x1p+0",
            f"u16 {n} {w} 1 1 {h(-2.0)} {h(5.0)}",
            f"int {n} {w} 1 246 9",  # int8 in [-10, 0)
            f"int {n} {w} 4 0 {2**32 - 1}",
            f"int {n} {w} 8 {2**63} {2**64 - 1}",
            f"int {n} {w} 8 5 {3 * 2**60}",
            f"bern {n} {w} {2**31}",
            f"bernpacked {n} {w} {int(0.9 * 2**32)}",
            f"perm 100 100 {w}",
            f"choice 7 {10**12} {w}",
            f"weighted 5 {w} " + " ".join(h(p) for p in (0.1, 0.0, 0.5, 0.25, 0.15, 1e-300)),
        ]
        for fmt in range(4):
            for method in (0, 1):
                lines.append(f"normal {n} {w} {fmt} {method} 0 0x0p+0 0x1p+0")
            lines.append(f"normal 1001 {w} {fmt} 0 1 {h(3.0)} {h(0.02)}")
            for a, b in ((-2.0, 2.0), (0.5, 0.6), (3.0, 4.0), (-10.0, -9.0), (5.0, 1e9)):
                method, ta, tb, width, m2, lam, mirror = truncation_plan(a, b, working("float64" if fmt == 1 else "float32"))
                lines.append(f"trunc 777 {w} {fmt} 0 0x0p+0 0x1p+0 {method} {h(ta)} {h(tb)} {h(width)} {h(m2)} {h(lam)} {int(mirror)}")
    for fmt in range(4):
        lines.append(f"mtuf 1500 5489 {fmt} 0 0x0p+0 0x1p+0")
    lines.append(f"mtuf 999 7 0 1 {h(np.float32(2.0))} {h(np.float32(0.5))}")
    lines += ["mtstreams 3000 5489 1", "mtstreams 3001 42 4"]
    lines += [f"derive {s} {t}" for s in (0, 1, 2**64 - 1) for t in (0, 7, 2**63)]
    return lines


@pytest.fixture(scope="module")
def host_results(binaries):
    lines = cases()
    return lines, run(binaries, "host", lines)


def test_host_binary_is_the_installed_library(binaries, host_results):
    # Tie the harness to the library: the cases the public API can express directly.
    if not peers.NATIVE_OK:
        pytest.fail("the native core must be installed for this check")
    lines, results = host_results
    got = dict(zip(lines, results))
    for i, (lo, hi) in enumerate(COUNTERS):
        key = KEYS[i % len(KEYS)]
        w = f"{key} {lo} {hi}"
        assert got[f"raw32 5000 {w}"] == stateless.raw(5000, key, (lo, hi), backend="native").tobytes()
        assert got[f"uf32 2053 {w} 0 0x0p+0 0x1p+0"] == stateless.uniform(2053, key, (lo, hi), backend="native").tobytes()
        for fmt, dtype in enumerate(["float32", "float64"]):
            for method, name in enumerate(["ziggurat", "box_muller"]):
                lib = stateless.normal(2053, key, (lo, hi), dtype=dtype, method=name, backend="native")
                assert got[f"normal 2053 {w} {fmt} {method} 0 0x0p+0 0x1p+0"] == lib.tobytes(), (w, dtype, name)
            lib = stateless.truncated_normal(777, key, (lo, hi), a=-2.0, b=2.0, dtype=dtype, backend="native")
            plan = truncation_plan(-2.0, 2.0, working(dtype))
            line = f"trunc 777 {w} {fmt} 0 0x0p+0 0x1p+0 {plan[0]} " + " ".join(h(v) for v in plan[1:6]) + f" {int(plan[6])}"
            assert got[line] == lib.tobytes()
    assert got["mtstreams 3000 5489 1"] == ar.MT19937(5489).raw(3000).astype("<u4").tobytes()
    assert got["mtstreams 3001 42 4"] == ar.MT19937(42, streams=4).raw(3001).astype("<u4").tobytes()
    assert got["mtstreams 3000 5489 1"][:4] == (3499211612).to_bytes(4, "little")  # std::mt19937's first word


@pytest.mark.parametrize("level, cpu", [("neon", "max"), ("scalar", "max"), ("neon", "cortex-a72")])
def test_aarch64_gives_the_hosts_bits(binaries, host_results, level, cpu):
    lines, expected = host_results
    name = run(binaries, "arm", ["level"], level=level if level == "scalar" else None, cpu=cpu)[0].decode()
    assert name == level
    got = run(binaries, "arm", lines, level=level if level == "scalar" else None, cpu=cpu)
    bad = [line for line, a, b in zip(lines, got, expected) if a != b]
    assert not bad, f"{len(bad)} of {len(lines)} cases differ on aarch64 {level}, first: {bad[:3]}"


def test_host_levels_agree(binaries, host_results):
    lines, expected = host_results
    best = ar.backends()["native"]["simd"]
    for level in ("scalar", "avx2", "avx512")[: ("scalar", "avx2", "avx512").index(best) + 1]:
        got = run(binaries, "host", lines, level=level)
        assert got == expected, level


def test_rndrrs_under_emulation(binaries):
    # FEAT_RNG present (qemu's "max" CPU): every sample read, all distinct (64 random
    # 64-bit words collide with probability below 2**-52).
    have, got, distinct = run(binaries, "arm", ["rndrrs 64"], cpu="max")[0].decode().split()
    assert (have, got, distinct) == ("1", "64", "64")
    # A Cortex-A72 has no FEAT_RNG: reported absent, nothing executed.
    assert run(binaries, "arm", ["rndrrs 64"], cpu="cortex-a72")[0].decode() == "0 0 0"
