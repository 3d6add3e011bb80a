#!/usr/bin/env bash
# One command for a CUDA machine that cannot download anything: build ascend_rand there
# without network, run the Triton kernels' bit-equality tests compiled for the GPU, then the
# device benchmark, and write one JSON file and one markdown table into DIR.
#
#   bash bench/device_check.sh DIR [--python PY] [--wheels WHEELDIR] [--time-limit S]
#
# Needs python3 with torch >= 2.6, triton >= 3.2, numpy, pybind11, setuptools and pytest
# (and ml_dtypes, ascend_rand's one other dependency: a wheel of it in WHEELDIR where it is
# not installed).  Without a CUDA device it says so and runs the same steps on the CPU (the
# tests under Triton's interpreter, the benchmark's launch table): the dry run.
# tools/device_check.py does the work (standard library only: it runs before the build, in
# any python3); docs/performance.md says what each step checks.  Exit status: 0 all passed, 1 a test failed or a draw's bits
# differed, 2 bad arguments, 3 the checks could not run (a missing dependency, no build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="python3"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --python) [ $# -ge 2 ] || { echo "device_check.sh: --python needs a path" >&2; exit 2; }
              python="$2"; shift 2 ;;
    --python=*) python="${1#--python=}"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
if ! command -v "$python" >/dev/null 2>&1; then
  echo "device_check.sh: no python interpreter '$python' (pass --python PATH)" >&2
  exit 3
fi
exec "$python" "$here/../tools/device_check.py" --python "$(command -v "$python")" ${args[@]+"${args[@]}"}
