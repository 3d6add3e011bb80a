"""``import ascend_rand as ar`` and then ``ar.entropy``, ``ar.distributed``, ``ar.data``,
``ar.torch``, ``ar.mindspore``: each submodule resolves on first attribute access
(PEP 562) and none of them, nor torch or MindSpore, is imported before that; a missing
optional dependency is an ImportError that names the extra to install."""

import json
import subprocess
import sys

import pytest

import ascend_rand

SUBMODULES = ["entropy", "distributed", "data", "torch", "mindspore"]


def run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_import_imports_no_submodule_and_no_framework():
    got = run("import sys, json, ascend_rand\n"
              f"print(json.dumps([m for m in {['ascend_rand.' + s for s in SUBMODULES] + ['torch', 'mindspore']!r}"
              " if m in sys.modules]))")
    assert got == []


def test_host_submodules_resolve_without_torch():
    got = run("import sys, json, ascend_rand as ar\n"
              "names = [ar.entropy.EntropyPool.__name__, ar.distributed.init_seeds.__name__,\n"
              "         ar.data.worker_key.__name__]\n"
              "print(json.dumps([names, 'torch' in sys.modules]))")
    assert got == [["EntropyPool", "init_seeds", "worker_key"], False]


@pytest.mark.parametrize("name", SUBMODULES)
def test_attribute_is_the_submodule(name):
    if name in ("torch", "mindspore"):
        pytest.importorskip(name)
    module = getattr(ascend_rand, name)
    assert module is sys.modules[f"ascend_rand.{name}"]
    assert module.__name__ == f"ascend_rand.{name}"
    assert name in dir(ascend_rand)


@pytest.mark.parametrize("name", ["torch", "mindspore"])
def test_missing_framework_names_the_extra(name):
    got = run(f"import sys, json; sys.modules[{name!r}] = None\n"
              "import ascend_rand as ar\n"
              "try:\n"
              f"    ar.{name}\n"
              "except ImportError as e:\n"
              "    print(json.dumps(str(e)))\n")
    assert f"pip install 'ascend_rand[{name}]'" in got
    assert got.startswith(f"ascend_rand.{name} needs ")


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'entropi'"):
        ascend_rand.entropi
