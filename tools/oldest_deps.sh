#!/usr/bin/env bash
# The library's dtype known answers under the OLDEST numpy and ml_dtypes that pyproject.toml
# declares (the README's test command runs them under the newest the ranges allow).
#
#   bash tools/oldest_deps.sh [PYTHON]
#
# PYTHON (default .venv/bin/python) is an environment where ascend_rand is installed and
# built; its installed package (the compiled core included) is copied beside a throwaway
# environment (.venv-oldest) that holds only the lower bounds, pytest and the two
# libraries the selected tests import.  The 16-bit formats are the ones a newer ml_dtypes
# has changed before (0.7: float64 -> bfloat16 rounds once, and a new repr), so every
# float16 and bfloat16 known answer runs: TensorFlow's stream known answers, the spec's
# conversion formulas, the normal and truncated-normal references, the init rules and the
# backend equality tests.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}

# The lower bounds, read from pyproject.toml so the declared range and the tested one
# cannot drift apart.
read -r numpy_low mldtypes_low < <("$python" - <<'EOF'
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
low = {}
for dep in deps:
    name, bound = re.match(r"([A-Za-z_.-]+)\s*>=\s*([0-9.]+)", dep).groups()
    low[name.lower().replace("-", "_")] = bound
print(low["numpy"], low["ml_dtypes"])
EOF
)
echo "oldest declared: numpy==$numpy_low ml_dtypes==$mldtypes_low"

rm -rf .venv-oldest
python3 -m venv .venv-oldest
# scipy 1.13.1: the newest scipy with wheels for numpy 1.26; pytest and hypothesis as the
# test extra allows.
.venv-oldest/bin/pip install -q "numpy==$numpy_low" "ml_dtypes==$mldtypes_low" \
  "pytest>=8,<10" "hypothesis>=6,<7" "scipy==1.13.1"

pkg=$(mktemp -d)
trap 'rm -rf "$pkg"' EXIT
# -P: the installed package, not the checkout in the working directory (a clean clone has no
# built extension there)
installed=$("$python" -P -c "import ascend_rand, os; print(os.path.dirname(ascend_rand.__file__))")
cp -rL "$installed" "$pkg/ascend_rand"
find "$pkg" -name __pycache__ -prune -exec rm -rf {} +

# The copy must be the one imported (-P: the checkout is not on sys.path), and the versions
# the ones asked for.
PYTHONPATH="$pkg" .venv-oldest/bin/python -P - "$pkg" "$numpy_low" "$mldtypes_low" <<'EOF'
import sys, numpy, ml_dtypes, ascend_rand
pkg, numpy_low, mldtypes_low = sys.argv[1:]
assert ascend_rand.__file__.startswith(pkg), ascend_rand.__file__
assert numpy.__version__ == numpy_low and ml_dtypes.__version__ == mldtypes_low
assert ascend_rand.backends()["native"]["available"], ascend_rand.backends()["native"]
print("ascend_rand", ascend_rand.__file__, "numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)
EOF

# -p no:cacheprovider: the run leaves nothing in the checkout.
# TensorFlow is not in this environment (tensorflow-cpu's pins want a newer numpy), and in CI
# (CI set) a missing peer fails its test rather than skipping it, so the tests that ask
# TensorFlow itself (every one has "tensorflow" in its name) run in the main suite only;
# here the library's own answers are compared: the stream KAT file's words (from
# TensorFlow, committed), the spec's formulas and the references written in the tests.
PYTHONPATH="$pkg" .venv-oldest/bin/python -P -m pytest -q -p no:cacheprovider \
  tests/conformance/test_known_answers.py tests/distributions/test_conversions.py -k "not tensorflow"
PYTHONPATH="$pkg" .venv-oldest/bin/python -P -m pytest -q -p no:cacheprovider \
  tests/distributions/test_normal.py tests/distributions/test_truncated_normal.py tests/distributions/test_initializers.py \
  tests/backends/test_backends_agree.py tests/distributions/test_numeric_edges.py \
  -k "(float16 or bfloat16 or 16) and not tensorflow"
