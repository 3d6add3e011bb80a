"""The dependency ranges pyproject.toml declares are the ranges the suite runs against.

Every runtime dependency has a lower bound that tools/oldest_deps.sh installs and runs
the dtype known answers at (a step of .ci/run), and an upper bound below the next
release that could change a rounding or a printed repr; the README's test command runs
the newest release the range allows, so the installed version must be inside it.
"""

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def version_tuple(text):
    return tuple(int(part) for part in re.match(r"[0-9.]+", text).group().rstrip(".").split("."))


def bounds(requirement):
    """(name, lower, upper) of a 'name>=a,<b' requirement."""
    name = re.match(r"[A-Za-z0-9_.-]+", requirement).group()
    lower = re.search(r">=\s*([0-9.]+)", requirement)
    upper = re.search(r"<\s*([0-9.]+)", requirement)
    return name, lower and lower.group(1), upper and upper.group(1)


@pytest.mark.parametrize("requirement", PROJECT["dependencies"])
def test_runtime_dependency_is_bounded_both_ways(requirement):
    name, lower, upper = bounds(requirement)
    assert lower and upper, f"{requirement}: declare the tested lower bound and an upper bound"
    assert version_tuple(lower) < version_tuple(upper)


@pytest.mark.parametrize("requirement", PROJECT["dependencies"])
def test_installed_runtime_dependency_is_inside_its_range(requirement):
    name, lower, upper = bounds(requirement)
    installed = version_tuple(metadata.version(name))
    assert version_tuple(lower) <= installed < version_tuple(upper), (name, installed)


def test_extras_are_bounded_above():
    # An extra without an upper bound lets a fresh install pick a release nobody ran.
    for extra, requirements in PROJECT["optional-dependencies"].items():
        for requirement in requirements:
            spec = requirement.split(";")[0]
            assert "==" in spec or "<" in spec, f"[{extra}] {requirement}: no upper bound"


def test_ci_runs_the_oldest_declared_versions():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "step bash tools/oldest_deps.sh .venv/bin/python" in ci
    script = (ROOT / "tools" / "oldest_deps.sh").read_text()
    # the script reads the lower bounds from pyproject.toml (no second copy to drift) and
    # checks that it imported the copied build under exactly those versions
    assert 'tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]' in script
    assert "numpy.__version__ == numpy_low and ml_dtypes.__version__ == mldtypes_low" in script
    for test_file in ("conformance/test_known_answers.py", "distributions/test_conversions.py",
                      "distributions/test_normal.py", "distributions/test_truncated_normal.py",
                      "distributions/test_initializers.py"):
        assert f"tests/{test_file}" in script and (ROOT / "tests" / test_file).exists()


def test_pytest_reports_the_slowest_tests():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "--durations=25" in options["addopts"].split()


def test_ci_runs_the_triton_tests_under_the_newest_triton_too():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "step bash tools/newest_triton.sh .venv/bin/python" in ci
    script = (ROOT / "tools" / "newest_triton.sh").read_text()
    assert "tests/device/test_triton_*.py" in script and 'assert not triton.__version__.startswith("3.2.")' in script
    # the suite itself runs them under the version triton-ascend 3.2.0 is based on
    test_extra = PROJECT["optional-dependencies"]["test"]
    assert any(r.startswith("triton==3.2.0") for r in test_extra), test_extra
