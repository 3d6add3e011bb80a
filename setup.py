"""Build ascend_rand: the pybind11 core ``ascend_rand._native`` plus the NumPy fallback.

The extension is optional at install time: when the compiler is missing or the
build fails, the package installs without it, records why in
``ascend_rand/_native_build_error.txt`` and runs on the NumPy fallback
(``ascend_rand.backends()`` reports the reason).
"""

import os
import sys
import traceback

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

# No fused multiply-add anywhere: it changes float bits (docs/spec.md section 3).
EXTRA_COMPILE_ARGS = ["-O3", "-ffp-contract=off", "-fno-math-errno", "-pthread"]
# Extra flags after ours (they win): tools/sanitize.sh builds an ASan + UBSan copy with
# ASCEND_RAND_EXTRA_CFLAGS="-fsanitize=address,undefined -O1 ..." and the same LDFLAGS.
EXTRA_COMPILE_ARGS += os.environ.get("ASCEND_RAND_EXTRA_CFLAGS", "").split()
EXTRA_LINK_ARGS = ["-pthread"] + os.environ.get("ASCEND_RAND_EXTRA_LDFLAGS", "").split()

# Compile the C++ files in parallel (one job per CPU; ASCEND_RAND_BUILD_JOBS overrides).
ParallelCompile("ASCEND_RAND_BUILD_JOBS", default=0).install()

# csrc/ has three layers (docs/architecture.md): core/ (the element maths, header-only,
# also for device compilers), cpu/ (tiling, SIMD dispatch, threads, whole-draw kernels)
# and python/ (the pybind11 module); entropy/ beside them holds the CPU hardware
# random-number instructions (never included by core/).  Sources include each other as "core/...",
# "cpu/...", "python/..." from csrc/.
HEADERS = sorted(
    os.path.join(folder, name)
    for folder, _, names in os.walk("csrc")
    for name in names
    if name.endswith(".h")
)

ext_modules = [
    Pybind11Extension(
        "ascend_rand._native",
        ["csrc/cpu/kernels.cpp", "csrc/cpu/kernels_bits.cpp",
         "csrc/python/bindings.cpp", "csrc/python/bindings_bits.cpp",
         "csrc/python/bindings_mt.cpp", "csrc/python/bindings_bitgen.cpp",
         "csrc/python/bindings_fast.cpp", "csrc/python/bindings_seed.cpp",
         "csrc/python/draw_kernels.cpp",
         "csrc/entropy/hwrng.cpp", "csrc/entropy/reserve.cpp",
         "csrc/python/bindings_entropy.cpp", "csrc/python/bindings_reserve.cpp"],
        include_dirs=["csrc"],
        depends=HEADERS,
        cxx_std=17,
        extra_compile_args=EXTRA_COMPILE_ARGS,
        extra_link_args=EXTRA_LINK_ARGS,
    )
]


class OptionalBuildExt(build_ext):
    """Build the extension if possible; otherwise leave a note and carry on."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # compiler missing: raised before any extension builds
            self._record_failure(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._record_failure(exc)
            # An extension from an earlier build in build/ would otherwise be installed
            # beside the note: a stale core that lacks this version's kernels.
            stale = self.get_ext_fullpath(ext.name)
            if os.path.exists(stale):
                os.remove(stale)
        else:
            for target in self._note_paths():  # a note from an earlier failed build is stale
                if os.path.exists(target):
                    os.remove(target)

    def _note_paths(self):
        roots = {self.build_lib, "."} if self.inplace else {self.build_lib}
        return [os.path.join(root, "ascend_rand", "_native_build_error.txt") for root in roots]

    def _record_failure(self, exc):
        message = f"{type(exc).__name__}: {exc}".strip()
        sys.stderr.write(
            "\nWARNING: ascend_rand._native could not be built; ascend_rand will run on its "
            f"NumPy fallback.\n{traceback.format_exc()}\n"
        )
        for target in self._note_paths():
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as fh:
                fh.write(message + "\n")


setup(
    packages=["ascend_rand", "ascend_rand.backend", "ascend_rand.benchmarks", "ascend_rand.cli",
              "ascend_rand.distributions", "ascend_rand.engines", "ascend_rand.fallback",
              "ascend_rand.seeding", "ascend_rand.tables",
              "ascend_rand.backend.triton_kernels", "ascend_rand.torch", "ascend_rand.mindspore",
              "ascend_rand.entropy"],
    package_dir={"ascend_rand": "ascend_rand", "ascend_rand.fallback": "fallback"},
    # the console script's entry point, outside the package (its import inside the handler)
    py_modules=["ascend_rand_cli"],
    ext_modules=ext_modules,
    cmdclass={"build_ext": OptionalBuildExt},
    zip_safe=False,
)
