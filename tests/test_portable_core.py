"""The portable core: csrc/core/ is element maths that a device kernel can include.

A stream's bits are defined element by element (docs/spec.md sections 2 and 9),
so a CUDA or Ascend C kernel that calls the core's functions gives the CPU's
bits.  That needs the core headers to stand alone, to use no intrinsics, OS
calls or CPU-only headers, to mark every function with the one host/device
macro (core/device.h) and to compile under a device compiler.  fallback/
mirrors csrc/core/ file for file.
"""

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "csrc" / "core"
FALLBACK = ROOT / "fallback"
KERNEL_CU = ROOT / "tests" / "data" / "portable_core_kernel.cu"

CORE_HEADERS = sorted(p.name for p in CORE.glob("*.h"))

# What a core header may include: other core headers and these standard headers,
# all usable in CUDA device code (no allocation, threads or I/O).
ALLOWED_STANDARD = {"cstddef", "cstdint", "cstring", "cmath"}

# Signs of CPU-only code: intrinsics, OS calls, threads, containers that allocate,
# Python, inline assembly, GCC attributes (target, vector types).
FORBIDDEN = [
    r"_mm\w*", r"__m\d+", r"__builtin_ia32\w*", r"__builtin_cpu\w*", r"\bv(?:ld|st)\d\w*",
    r"getpid", r"pthread\w*", r"std::thread", r"std::mutex", r"std::atomic",
    r"std::condition_variable", r"std::vector", r"std::map", r"std::string", r"\bnew\b",
    r"\bmalloc\b", r"\bprintf\b", r"std::getenv", r"\bpybind11\b", r"\bPy\w+", r"__asm__",
    r"\basm\b", r"__attribute__", r"std::min\b", r"std::max\b", r"<algorithm>",
]

# core/<name>.h <-> fallback/<module>.py, the documented exceptions as None.
MIRROR = {
    "bernoulli.h": "bernoulli.py",
    "conversions.h": "conversions.py",
    "derive.h": "derive.py",
    "detmath.h": "detmath.py",
    "device.h": None,  # execution-space macros: nothing to mirror in NumPy
    "mt19937.h": "mt19937.py",
    "mt19937_charpoly.h": "mt19937_charpoly.py",
    "normal.h": "normal.py",
    "permutation.h": "permutation.py",
    "philox.h": "philox.py",
    "ziggurat_tables.h": "ziggurat_tables.py",
}
# fallback modules that mirror no core header: the package, and the kernel table
# (the counterpart of csrc/cpu/kernels.*).
FALLBACK_ONLY = {"__init__.py", "kernels.py"}


def _code(text):
    """The text without comments (string literals in the core hold no comment markers)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _gxx():
    return peers.program("g++")  # CI installs it: a missing g++ fails there


# -- 1. each header on its own ------------------------------------------------------------------

@pytest.mark.parametrize("header", CORE_HEADERS)
def test_core_header_compiles_on_its_own(header, tmp_path):
    src = tmp_path / "one.cpp"
    src.write_text(f'#include "{header}"\n')
    proc = subprocess.run(
        [_gxx(), "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
         "-I", str(CORE), str(src)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


# -- 2. nothing CPU-only ------------------------------------------------------------------------

@pytest.mark.parametrize("header", CORE_HEADERS)
def test_core_header_includes_only_core_and_basic_standard_headers(header):
    code = _code((CORE / header).read_text())
    for line in re.findall(r"^\s*#\s*include\s*(\S+)", code, flags=re.M):
        name = line.strip('<>"')
        if line.startswith("<"):
            assert name in ALLOWED_STANDARD, f"{header} includes {line}"
        else:
            assert name in CORE_HEADERS, f"{header} includes {line}, which is not a core header"


@pytest.mark.parametrize("header", CORE_HEADERS)
def test_core_header_has_no_intrinsic_os_call_or_cpu_only_code(header):
    code = _code((CORE / header).read_text())
    found = sorted({m.group(0) for pattern in FORBIDDEN for m in re.finditer(pattern, code)})
    assert not found, f"{header} uses {found}"


_FUNCTION = re.compile(
    r"^[ \t]*(?P<head>(?:[\w:<>,*&]+[ \t]+)+)(?P<name>operator\s*(?:\(\)|[^\s(]+)|\w+)\s*"
    r"\((?P<args>[^;{}]*)\)\s*(?:const\s*)?\{",
    flags=re.M,
)
_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "else"}


@pytest.mark.parametrize("header", [h for h in CORE_HEADERS if h != "device.h"])
def test_every_core_function_carries_the_host_device_macro(header):
    code = _code((CORE / header).read_text())
    assert not re.search(r"\binline\b", code), f"{header}: plain `inline` (use ASCEND_RAND_HD)"
    bare = [m.group("name") for m in _FUNCTION.finditer(code)
            if m.group("name") not in _KEYWORDS and "ASCEND_RAND_HD" not in m.group("head")]
    assert not bare, f"{header}: functions without ASCEND_RAND_HD: {bare}"
    # Tables: every array constant is ASCEND_RAND_TABLE, so that device code can read it.
    arrays = re.findall(r"^(.*\bconstexpr\b[^=;]*\w\s*\[[^\]]*\]\s*=)", code, flags=re.M)
    untagged = [a for a in arrays if "ASCEND_RAND_TABLE" not in a]
    assert not untagged, f"{header}: tables without ASCEND_RAND_TABLE: {untagged}"


def test_the_checks_above_see_a_violation():
    """The function and table patterns match the forms the core uses (a guard for the guards)."""
    sample = _code(
        "inline int f(int x) {\n  return x;\n}\n"
        "ASCEND_RAND_HD int g(int x) { return x; }\n"
        "struct S {\n  bool operator()(float v) const { return v > 0; }\n};\n"
        "constexpr float kT[2] = {1.0f, 2.0f};\n"
        "ASCEND_RAND_TABLE constexpr float kU[2] = {1.0f, 2.0f};\n"
    )
    names = [m.group("name") for m in _FUNCTION.finditer(sample)
             if m.group("name") not in _KEYWORDS and "ASCEND_RAND_HD" not in m.group("head")]
    assert names == ["f", "operator()"]
    arrays = re.findall(r"^(.*\bconstexpr\b[^=;]*\w\s*\[[^\]]*\]\s*=)", sample, flags=re.M)
    assert [a for a in arrays if "ASCEND_RAND_TABLE" not in a] == ["constexpr float kT[2] ="]


# -- 3. a device compiler -----------------------------------------------------------------------

def test_core_compiles_for_a_cuda_device(tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found on PATH: the CUDA device compile of csrc/core/ is not checked")
    source = KERNEL_CU.read_text()
    included = set(re.findall(r'^#include "([^"]+)"', source, flags=re.M))
    assert included == set(CORE_HEADERS), "tests/data/portable_core_kernel.cu includes every core header"
    proc = subprocess.run(
        [nvcc, "-std=c++17", "-x", "cu", "-c", "-Werror", "all-warnings", "-I", str(CORE),
         str(KERNEL_CU), "-o", str(tmp_path / "portable_core_kernel.o")],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- 4. the fallback mirrors the core ------------------------------------------------------------

def test_fallback_mirrors_the_core_file_for_file():
    assert set(MIRROR) == set(CORE_HEADERS), "a new core header needs its row in MIRROR"
    for header, module in MIRROR.items():
        if module is None:
            continue
        assert Path(header).stem == Path(module).stem, (header, module)
        assert (FALLBACK / module).is_file(), f"core/{header} has no fallback/{module}"
    mirrored = {m for m in MIRROR.values() if m is not None}
    modules = {p.name for p in FALLBACK.glob("*.py")}
    assert modules - FALLBACK_ONLY == mirrored, "a fallback module mirrors no core header"
    # The kernel table's counterpart.
    assert (ROOT / "csrc" / "cpu" / "kernels.h").is_file()
    assert (FALLBACK / "kernels.py").is_file()


# -- the 128-bit product without a 128-bit integer -----------------------------------------------

def test_portable_high_product_equals_the_exact_one(tmp_path):
    """mul_hi_u64's 32-bit form (for compilers without __int128) gives the exact integers."""
    rng = random.Random(20240601)
    top = (1 << 64) - 1
    edges = [0, 1, 2, 0xFFFFFFFF, 1 << 32, (1 << 32) + 1, 1 << 63, top - 1, top]
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [(rng.getrandbits(64), rng.getrandbits(64)) for _ in range(2000)]
    # integer_offset_128 on four words and r - 1 in [2^32, 2^64 - 2] (r = 2^64 is a shortcut)
    quads = [(rng.getrandbits(128), rng.randrange(1 << 32, top)) for _ in range(2000)]
    quads += [(top << 64 | top, top - 1), (0, 1 << 32), ((1 << 128) - 1, 1 << 32)]
    body = "\n".join(f"  show(ar::mul_hi_u64({a}ull, {b}ull));" for a, b in pairs)
    body += "\n" + "\n".join(
        "  { const uint32_t w[4] = {%du, %du, %du, %du}; show(ar::integer_offset_128(w, %dull)); }"
        % (u >> 96, (u >> 64) & 0xFFFFFFFF, (u >> 32) & 0xFFFFFFFF, u & 0xFFFFFFFF, r1)
        for u, r1 in quads)
    src = tmp_path / "mul_hi.cpp"
    src.write_text(
        "#include <cstdio>\n#include \"conversions.h\"\n"
        "namespace ar = ascend_rand;\n"
        "static void show(unsigned long long v) { std::printf(\"%llu\\n\", v); }\n"
        "int main() {\n" + body + "\n  return 0;\n}\n"
    )
    exe = tmp_path / "mul_hi"
    proc = subprocess.run(
        [_gxx(), "-std=c++17", "-O1", "-DASCEND_RAND_NO_INT128", "-I", str(CORE), str(src),
         "-o", str(exe)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True,
                                          check=True).stdout.split()]
    want = [(a * b) >> 64 for a, b in pairs] + [(u * (r1 + 1)) >> 128 for u, r1 in quads]
    assert got == want
