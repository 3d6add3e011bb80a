"""The README's quick starts print what the README says they print.

Each block after a ``<!-- quickstart: NAME -->`` marker runs in a fresh interpreter
from the repository root (as a new user pastes it), and its stdout must equal the
``text`` block that follows it, line for line.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = re.compile(
    r"<!-- quickstart: (\w+) -->\s*```python\n(.*?)```\s*prints\s*```text\n(.*?)```", re.S)


def quickstarts():
    found = QUICKSTART.findall((ROOT / "README.md").read_text())
    assert [name for name, _, _ in found] == ["numpy", "torch"], "the README's quick starts moved"
    return found


@pytest.mark.parametrize("name, code, expected", quickstarts(), ids=lambda v: v if v in ("numpy", "torch") else "")
def test_quickstart_prints_what_the_readme_shows(name, code, expected):
    if name == "torch":
        pytest.importorskip("torch")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == expected.splitlines()


def test_readme_commands_are_what_ci_runs():
    # The README's test command is the one .ci/run runs on a fresh clone.
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = 'python3 -m venv .venv && .venv/bin/pip install ".[test,torch]" && .venv/bin/pytest'
    demo_command = ('python3 -m venv .venv-demo && .venv-demo/bin/pip install ".[demo]"'
                    ' && .venv-demo/bin/ascend-rand demo')
    assert readme.count(test_command) == 1 and readme.count(demo_command) == 1
    assert '.venv/bin/pip install -q ".[test,torch]" && .venv/bin/pytest' in ci
    # ... and the demo command, in an environment of its own (the README's, too: the two
    # commands stand alone, neither reuses what the other installed)
    assert '.venv-demo/bin/pip install -q ".[demo]"' in ci and ".venv-demo/bin/ascend-rand demo" in ci
    assert "rm -rf .venv-demo" in ci


def test_readme_commands_use_separate_environments():
    readme = (ROOT / "README.md").read_text()
    commands = [line for line in readme.splitlines() if line.startswith("python3 -m venv ")]
    assert len(commands) == 2
    envs = [line.split()[3] for line in commands]
    assert envs == [".venv-demo", ".venv"], envs
    for env, line in zip(envs, commands):
        # each command installs into and runs from its own environment only
        assert {word.split("/")[0] for word in line.split() if "/bin/" in word} == {env}, line
