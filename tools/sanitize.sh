#!/usr/bin/env bash
# ASan + UBSan build of ascend_rand._native, and the runs that use it (docs/robustness.md).
#
#   tools/sanitize.sh build            build the sanitized extension in a copy of this tree
#   tools/sanitize.sh tests [FILES]    build, then pytest FILES (default: SANITIZE_TESTS below)
#   tools/sanitize.sh fuzz SECONDS     build, then fuzz/fuzz_native.py under ASan for SECONDS
#   tools/sanitize.sh all [SECONDS]    build, tests, fuzz
# CI (.ci/run) runs `tests`; the fuzzer runs there on the plain build (tools/fuzz.sh),
# where a huge request is a clean MemoryError: under ASan a C++ operator new past
# max_allocation_size_mb ends the process even with allocator_may_return_null=1.
#
# The copy lives in $SANITIZE_DIR (default /tmp/ascend_rand-sanitize): the checkout's own
# build/ and in-place extension are never touched.  SANITIZE_REUSE=1 keeps the sanitized
# extension already built there and only refreshes the Python sources and tests (for a
# rerun after a test or Python change; csrc/ changes need a build).  Python is $SANITIZE_PYTHON (default
# .venv/bin/python, else python3); it needs numpy, pybind11, pytest, hypothesis (and
# atheris for `fuzz`).  Exit status: non-zero on any sanitizer report, test failure or
# fuzzing finding.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${SANITIZE_PYTHON:-$([ -x .venv/bin/python ] && echo "$ROOT/.venv/bin/python" || echo python3)}
DIR=${SANITIZE_DIR:-/tmp/ascend_rand-sanitize}

# The native-facing test files: every kernel and binding (raw words, conversions, integers,
# normals, Bernoulli/masks, permutations/choice, MT19937 and its jumps, the small-draw fast
# path, bitgen capsules, derive, the entropy reserve), plus the bad-input and property tests
# that feed the bindings edge and junk arguments.  Left out: the statistical batteries,
# peers (TensorFlow, torch, MindSpore, randomgen), docs, CLI and entropy-pool files, which
# reach no native code that these files do not already cover, and would triple the time.
SANITIZE_TESTS=(
  tests/conformance/test_known_answers.py tests/backends/test_backend_conformance.py tests/backends/test_backends_agree.py
  tests/backends/test_small_draws.py tests/conformance/test_bad_input.py tests/conformance/test_generator.py
  tests/engines/test_generator_mt19937.py tests/engines/test_mt19937.py tests/engines/test_mt_uniform_kernel.py
  tests/engines/test_engines.py tests/distributions/test_bernoulli.py tests/distributions/test_permutation.py
  tests/distributions/test_choice_kernels.py tests/seeding/test_derive.py tests/backends/test_simd_levels.py
  tests/entropy/test_entropy_reserve.py tests/conformance/test_fuzz_regressions.py tests/conformance/test_api_properties.py
  tests/engines/test_capsule_lifetime.py tests/engines/test_end_of_stream.py tests/engines/test_numpy_protocol.py
  tests/engines/test_numpy_reset.py
)

# libstdc++ is preloaded too: python itself does not link it, and ASan's __cxa_throw
# interceptor, set up as libasan loads, must find the real one ("CHECK failed:
# asan_interceptors.cpp ... real___cxa_throw" on the first C++ exception otherwise).
PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)"
# detect_leaks=0: CPython keeps its interned objects and arenas to exit (the leak check is
# tools/leak_check.py under valgrind).  allocator_may_return_null=1 with a 4 GiB cap: a
# request past it is a MemoryError in Python (the tests of huge sizes expect one), not a
# report.  Each report halts the run with a non-zero status.
# Reports go to $DIR/reports/*.PID as well as stderr: pytest captures file descriptor 2,
# and a report that ends the process would be lost with the capture.
REPORTS=$DIR/reports
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=4096:halt_on_error=1:abort_on_error=0:exitcode=86:detect_stack_use_after_return=0:log_path=$REPORTS/asan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=87:log_path=$REPORTS/ubsan}

copy_tree() {
  # The working tree as it is (uncommitted edits included), without builds and venvs.
  tar --exclude=./.venv --exclude=./build --exclude=./.git --exclude='*.so' \
      --exclude=./ascend_rand/_native_build_error.txt -cf - . | tar -xf - -C "$DIR"
}

build() {
  if [ "${SANITIZE_REUSE:-0}" = 1 ] && ls "$DIR"/ascend_rand/_native*.so >/dev/null 2>&1; then
    copy_tree; echo "sanitize: reusing $(ls "$DIR"/ascend_rand/_native*.so)"; return
  fi
  rm -rf "$DIR" && mkdir -p "$DIR"
  copy_tree
  local jobs=${ASCEND_RAND_BUILD_JOBS:-2}
  (cd "$DIR" && ASCEND_RAND_BUILD_JOBS=$jobs \
     ASCEND_RAND_EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -g" \
     ASCEND_RAND_EXTRA_LDFLAGS="-fsanitize=address,undefined" \
     "$PY" setup.py -q build_ext --inplace > "$DIR/build.log" 2>&1) || true
  # setup.py never fails (the extension is optional): check that it really built.
  if [ -e "$DIR/ascend_rand/_native_build_error.txt" ] || ! ls "$DIR"/ascend_rand/_native*.so >/dev/null 2>&1; then
    tail -40 "$DIR/build.log"; echo "sanitize: the sanitized extension did not build" >&2; exit 1
  fi
  if ! ldd "$DIR"/ascend_rand/_native*.so | grep -q libasan; then
    echo "sanitize: the extension is not linked against libasan" >&2; exit 1
  fi
}

# Python with the sanitizer runtime preloaded (CPython itself is not instrumented) and the
# sanitized copy first on the path; the check below proves which extension was loaded.
sanitized() {
  mkdir -p "$REPORTS"
  local status=0
  (cd "$DIR" && LD_PRELOAD="$PRELOAD" PYTHONPATH="$DIR" ASCEND_RAND_NUM_THREADS=2 "$PY" "$@") || status=$?
  if ls "$REPORTS"/* >/dev/null 2>&1; then
    echo "sanitize: sanitizer reports (exit status $status):" >&2
    cat "$REPORTS"/* >&2
    rm -f "$REPORTS"/*
    return 1
  fi
  return "$status"
}

check_loaded() {
  sanitized -c 'import ascend_rand, sys
from ascend_rand import _extension
m = _extension.module
assert m is not None and m.__file__.startswith(sys.argv[1]), m
print("sanitize: loaded", m.__file__)' "$DIR"
}

run_tests() {
  check_loaded
  local files=("$@")
  [ ${#files[@]} -eq 0 ] && files=("${SANITIZE_TESTS[@]}")
  # --capture=sys: pytest leaves file descriptor 2 alone, so that a UBSan report (which
  # ignores log_path when it runs inside ASan's runtime) reaches the log.
  sanitized -m pytest -q -p no:cacheprovider --capture=sys -x "${files[@]}"
}

run_fuzz() {
  check_loaded
  # With gcc's libasan preloaded, atheris gets no coverage feedback (libasan provides the
  # coverage symbols; atheris warns so): the run mutates blindly, so it starts from the
  # corpus a plain-build run grew (tools/fuzz.sh; $FUZZ_SEED_CORPUS) and replays it
  # under the sanitizers first.
  local seeds=${FUZZ_SEED_CORPUS:-/tmp/ascend_rand-fuzz/corpus}
  [ -d "$seeds" ] || seeds=
  LD_PRELOAD="$PRELOAD" PYTHONPATH="$DIR" ASCEND_RAND_NUM_THREADS=2 FUZZ_DIR="$DIR/fuzz" \
    bash tools/fuzz.sh "$1" "$PY" -rss_limit_mb=8192 ${seeds:+"$seeds"}
}

case "${1:-all}" in
  build) build ;;
  tests) shift; build; run_tests "$@" ;;
  fuzz) build; run_fuzz "${2:-60}" ;;
  all) build; run_tests; run_fuzz "${2:-60}" ;;
  *) echo "usage: $0 build | tests [FILES] | fuzz SECONDS | all [SECONDS]" >&2; exit 2 ;;
esac
