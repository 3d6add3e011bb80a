"""``ascend-rand info``: what this installation is and what it can use.

Versions (ascend_rand, Python, NumPy, the compiler of the native core), the
backends and why the unavailable ones are, which kernels the torch backend
draws with on each device type (Triton, the torch-operation mirror, the host)
and why, the SIMD level in use and the levels
this CPU runs, the thread count, the entropy sources (and which one "auto"
picks), which device kernels compile for which Ascend target (the record CI
checks against triton-ascend and bishengir), and the deep-learning frameworks: torch, torch_npu, MindSpore and
TensorFlow, installed or not, their versions and devices.  The frameworks are
imported here, inside the command, never by ``import ascend_rand``; with
``quick=True`` nothing is imported and versions come from the installed
packages' metadata.
"""

import importlib.metadata
import importlib.util
import json
import platform
import sys

import numpy as np

from .. import __version__, backends, get_num_threads
from .._console import progress, rich_console

# (name reported, module, distribution whose version is read, imported for its devices):
# TensorFlow is only the demo's reference for the stream layout, so it is not imported
# (that alone takes many seconds).
FRAMEWORKS = (
    ("torch", "torch", "torch", True),
    ("torch_npu", "torch_npu", "torch_npu", True),
    ("mindspore", "mindspore", "mindspore", True),
    ("tensorflow", "tensorflow", "tensorflow-cpu", False),
)


def simd_levels():
    """(level in use, levels this CPU runs best first), or (None, []) without the native core.

    >>> level, levels = simd_levels()
    >>> level is None or level in levels
    True
    """
    from .. import _extension

    module = _extension.module
    if module is None:
        return None, []
    return module.build_info()["simd"], list(module.simd_levels())


def _distribution_version(module, distribution):
    for name in (distribution, module):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _torch_devices(torch):
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    npu = getattr(torch, "npu", None)  # present once torch_npu is imported
    if npu is not None and npu.is_available():
        devices += [f"npu:{i}" for i in range(npu.device_count())]
    return devices


def _import_quietly(module):
    """Import ``module`` with its banners (Python's and C++ logging's) silenced."""
    import contextlib
    import io

    from .demo import _quiet_fd2

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            _quiet_fd2():
        return importlib.import_module(module)


def framework_state(name, module, distribution, devices=True, quick=False):
    """{"installed", "version", "devices", "error"} of one framework.

    ``quick`` (or ``devices=False``): from the package metadata only (no import, no
    devices).

    >>> framework_state("torch_npu", "torch_npu", "torch_npu", True, quick=True)["installed"]
    False
    """
    if importlib.util.find_spec(module) is None:
        return {"installed": False, "version": None, "devices": [], "error": None}
    state = {"installed": True, "version": _distribution_version(module, distribution),
             "devices": [], "error": None}
    if quick or not devices:
        return state
    try:
        mod = _import_quietly(module)
    except Exception as exc:  # an installed but broken framework is a state to report
        state["error"] = f"{type(exc).__name__}: {exc}"
        return state
    state["version"] = getattr(mod, "__version__", state["version"])
    if name == "torch":
        state["devices"] = _torch_devices(mod)
    elif name == "torch_npu":
        import torch

        state["devices"] = [d for d in _torch_devices(torch) if d.startswith("npu")]
    elif name == "mindspore":
        state["devices"] = [mod.get_context("device_target")]
    return state


def entropy_state():
    """{"sources": entropy.sources(), "auto": the name "auto" picks (or None)}.

    >>> state = entropy_state()
    >>> state["auto"] in state["sources"]
    True
    """
    from .. import entropy

    try:
        auto = entropy.resolve("auto").name
    except entropy.SourceError:
        auto = None
    return {"sources": entropy.sources(), "auto": auto}


def collect(quick=False, show_progress=True):
    """The whole report as a JSON-ready dict (``ascend-rand info --json`` prints it).

    >>> report = collect(quick=True)
    >>> sorted(report)
    ['ascend_compile', 'backends', 'entropy', 'frameworks', 'simd', 'threads', 'versions']
    >>> report["versions"]["ascend_rand"] == __version__
    True
    """
    with progress(2 + len(FRAMEWORKS), "info", enabled=show_progress) as bar:
        report = backends()
        native = report.get("native", {})
        level, levels = simd_levels()
        bar.advance(description="entropy sources")
        entropy = entropy_state()
        frameworks = {}
        for name, module, distribution, devices in FRAMEWORKS:
            bar.advance(description=f"importing {name}")
            frameworks[name] = framework_state(name, module, distribution, devices, quick)
        bar.advance()
    return {
        "versions": {"ascend_rand": __version__, "python": platform.python_version(),
                     "python_implementation": platform.python_implementation(),
                     "numpy": np.__version__, "compiler": native.get("compiler"),
                     "platform": platform.platform()},
        "backends": report,
        "simd": {"level": level, "supported": levels},
        "threads": get_num_threads(),
        "entropy": entropy,
        "frameworks": frameworks,
        "ascend_compile": ascend_compile_state(),
    }


def ascend_compile_state():
    """Which device kernels compile for which Ascend target, from the record CI checks
    against triton-ascend and bishengir (backend/triton_kernels/ascend_record.py): per
    target, the kernels that pass every offline check and those refused, with the stage.

    >>> state = ascend_compile_state()
    >>> sorted(state["targets"])
    ['Ascend910B3', 'Ascend910_9392']
    >>> all(t["kernels"] == len(t["passed"]) + len(t["refused"]) for t in state["targets"].values())
    True
    """
    from ..backend.triton_kernels import ascend_record as rec

    targets = {}
    for target, label in rec.TARGETS.items():
        rows = [r for r in rec.RECORD if r["target"] == target]
        targets[target] = {
            "label": label, "kernels": len(rows),
            "passed": [r["kernel"] for r in rows if r["passed"]],
            "refused": {r["kernel"]: r["stage"] for r in rows if not r["passed"]},
            "most_ub_bits": max((r["ub_bits"] or 0 for r in rows if r["passed"]), default=0),
        }
    return {"tools": rec.TOOLS, "targets": targets}


def ascend_compile_lines(state):
    """The Ascend compile record as text lines.

    >>> ascend_compile_lines({"tools": {"triton-ascend": "3.2.0"}, "targets": {"Ascend910B3":
    ...     {"label": "Atlas A2", "kernels": 2, "passed": ["a"], "refused": {"b": "bishengir"},
    ...      "most_ub_bits": 786432}}})[1:]
    ['Ascend compile, offline (triton-ascend 3.2.0; CI: tools/ascend_compile.sh; no device):', '  Ascend910B3 (Atlas A2): 1 of 2 kernels pass every check before hivmc (CANN), at most 96 KiB of the unified buffer', '    refused at bishengir: b']
    """
    tools = ", ".join(f"{k} {v}" for k, v in state["tools"].items())
    out = ["", f"Ascend compile, offline ({tools}; CI: tools/ascend_compile.sh; no device):"]
    for target, t in state["targets"].items():
        out.append(f"  {target} ({t['label']}): {len(t['passed'])} of {t['kernels']} kernels "
                   f"pass every check before hivmc (CANN), at most "
                   f"{t['most_ub_bits'] // 8192} KiB of the unified buffer")
        for kernel, stage in t["refused"].items():
            why = ("unfinished (bishengir ran past its time)" if stage == "timeout"
                   else f"refused at {stage}")
            out.append(f"    {why}: {kernel}")
    return out


def _detail(info, skip):
    return ", ".join(f"{k}={v}" for k, v in info.items() if k not in skip and v is not None)


def device_kernel_lines(backends_report):
    """The torch backend's path by device type (backend/device_path.py), as text lines.

    >>> device_kernel_lines({"torch": {"device_kernels": {"cpu": "host: the native core"}}})
    ['', 'torch backend kernels by device (ASCEND_RAND_DEVICE_KERNELS=triton|torch forces):', '  cpu        host: the native core']
    >>> device_kernel_lines({"torch": {"available": False}})
    []
    """
    paths = backends_report.get("torch", {}).get("device_kernels")
    if not paths:
        return []
    return ["", "torch backend kernels by device (ASCEND_RAND_DEVICE_KERNELS=triton|torch "
                "forces):"] + [f"  {device:10} {path}" for device, path in paths.items()]


def lines(report):
    """The report as plain text lines (what ``ascend-rand info`` prints).

    >>> any(line.startswith("ascend_rand ") for line in lines(collect(quick=True)))
    True
    """
    v = report["versions"]
    out = [f"ascend_rand {v['ascend_rand']}", f"python      {v['python']} "
           f"({v['python_implementation']}, {v['platform']})", f"numpy       {v['numpy']}",
           f"compiler    {v['compiler'] or '- (no native core)'}", "", "backends:"]
    for name, info in report["backends"].items():
        state = (f"available    {_detail(info, ('available', 'reason', 'device_kernels'))}"
                 if info["available"] else f"unavailable  {info['reason']}")
        out.append(f"  {name:10} {state}")
    out += device_kernel_lines(report["backends"])
    out += ascend_compile_lines(report["ascend_compile"])
    simd = report["simd"]
    out += ["", f"SIMD level  {simd['level'] or '- (no native core)'} "
                f"(this CPU runs: {', '.join(simd['supported']) or '-'}; "
                "ASCEND_RAND_SIMD picks a lower one)",
            f"threads     {report['threads']} (ascend_rand.set_num_threads, "
            "ASCEND_RAND_NUM_THREADS)", "", "entropy sources:"]
    entropy = report["entropy"]
    for name, info in entropy["sources"].items():
        mark = "  <- auto" if name == entropy["auto"] else ""
        if info["available"]:
            grade = "seed grade" if info.get("seed_grade", True) else "not seed grade"
            out.append(f"  {name:10} available    {info['sample_bits']}-bit samples, "
                       f"min-entropy {info['min_entropy']}, {grade}{mark}")
        else:
            out.append(f"  {name:10} unavailable  {info['reason']}")
    out += ["", "frameworks:"]
    for name, state in report["frameworks"].items():
        if not state["installed"]:
            out.append(f"  {name:10} not installed")
            continue
        text = f"  {name:10} {state['version'] or 'version unknown'}"
        if state["error"]:
            text += f", import failed: {state['error']}"
        elif state["devices"]:
            text += f", devices: {', '.join(state['devices'])}"
        out.append(text)
    return out


def main(as_json=False, quick=False):
    """``ascend-rand info``: print the report (``as_json``: as JSON); returns 0."""
    report = collect(quick=quick)
    if as_json:
        print(json.dumps(report, indent=2, default=str))
        return 0
    console = rich_console()
    for line in lines(report):
        if console is None:
            print(line)
        else:
            console.print(line, markup=False)
    sys.stdout.flush()
    return 0
