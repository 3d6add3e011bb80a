#!/usr/bin/env bash
# Every device kernel compiled for Ascend (Atlas A2 and A3) with triton-ascend and
# bishengir, as far as a machine without CANN allows (tools/ascend_compile.py; docs/npu.md,
# "Compiled for Ascend").
#
#   bash tools/ascend_compile.sh [ARGS...]      (default ARGS: --check)
#
# An environment of its own (.venv-ascend): triton-ascend provides a module named triton,
# like upstream Triton, so the two never share one.  It holds triton-ascend, ascendnpu-ir
# (bishengir-compile), pybind11 (triton-ascend's backend imports it) and what importing the
# kernels needs (numpy, ml_dtypes, within the package's ranges); the checkout's kernels are
# compiled from the source tree.  With --check (the default) it fails where a kernel is
# refused before the missing hivmc (other than a refusal the record holds), uses more
# unified buffer than an A2/A3 vector core has, has a mulhi in its TTIR, or where the
# results differ from the committed record (ascend_rand/backend/triton_kernels/
# ascend_record.py); --write rewrites that record.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${ASCEND_VENV:-.venv-ascend}
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q "triton-ascend==3.2.0" "ascendnpu-ir==1.2.0" \
  "numpy>=1.26.4,<2.5" "ml_dtypes>=0.4.0,<0.8" "pybind11>=2.12,<4"
bin=$("$venv/bin/python" -c "import ascendnpuir, os; print(os.path.join(os.path.dirname(ascendnpuir.__file__), 'bin'))")
test -x "$bin/bishengir-compile"
[ $# -gt 0 ] || set -- --check
PATH="$bin:$PATH" "$venv/bin/python" tools/ascend_compile.py "$@"
