#!/usr/bin/env bash
# The Triton kernel tests under the NEWEST triton the project accepts (the README's test
# command runs them under triton==3.2.0, the base of triton-ascend 3.2.0).
#
#   bash tools/newest_triton.sh [PYTHON]
#
# PYTHON (default .venv/bin/python) is the test environment, with ascend_rand, torch and
# pytest installed.  A throwaway environment (.venv-triton) holds only the newest triton
# below TRITON_BELOW; a .pth file adds PYTHON's site-packages after its own, so everything
# else (torch, numpy, the built package) is the test environment's, and triton is the
# newer one.  Only the kernel test files run: the rest of the suite does not import triton.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}
# The newest minor release checked by hand; a newer one may change the interpreter or the
# language, so it is allowed only once it has been run.
TRITON_BELOW=${TRITON_BELOW:-3.10}

rm -rf .venv-triton
python3 -m venv .venv-triton
.venv-triton/bin/pip install -q --no-deps "triton<$TRITON_BELOW"
own=$(.venv-triton/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
# an "import" line, not a bare path: addsitedir also reads that folder's own .pth files
# (an editable install's finder is one)
"$python" -c "import sysconfig; print(f'import site; site.addsitedir({sysconfig.get_paths()[\"purelib\"]!r})')" \
  > "$own/test_environment.pth"

# -P: the checkout is not on sys.path (the installed package is the one tested).
.venv-triton/bin/python -P - <<'EOF'
import triton, torch, ascend_rand
assert not triton.__version__.startswith("3.2."), triton.__version__
print("triton", triton.__version__, "from", triton.__file__)
print("torch", torch.__version__, "ascend_rand", ascend_rand.__file__)
EOF
tests=$(ls tests/device/test_triton_*.py)
.venv-triton/bin/python -P -m pytest -q -p no:cacheprovider $tests
