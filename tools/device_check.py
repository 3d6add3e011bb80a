"""The work of bench/device_check.sh: build offline, test the Triton kernels compiled, benchmark.

It lives with the checkout's other drivers in tools/, not in the package: it copies and
builds this source tree and runs its tests/, then the package's own device benchmark
(``ascend_rand/benchmarks/device.py``, through ``ascend-rand bench --only device``).
Standard library only: it runs in any python3 and drives the target interpreter
(``--python``) in subprocesses, each bounded in time so that the whole run ends
within ``--time-limit`` seconds (default 290, under the 5 minutes issue 23 gives it):

1. environment: the versions of torch, triton, numpy, pybind11, setuptools,
   pytest, ml_dtypes, and whether a CUDA device is visible;
2. build, without network, in a copy of the source tree under DIR/work (the
   checkout is left as it is): ``pip install --no-build-isolation --no-deps
   --no-index --target``; where that fails and the setuptools there is older
   than the pyproject's pin (>= 77, for the PEP 639 license fields), the same
   with those two fields written in the older form, in the copy only; then
   ``setup.py build_ext --inplace`` with the copy on PYTHONPATH; and if the
   native core cannot be built at all, the copy as it is: the NumPy fallback,
   bit-equal to the core by the suite, is then the reference (tests that call
   the native backend skip themselves, the benchmark's bit checks use the
   fallback).  A missing ml_dtypes is installed from ``--wheels`` (no index);
3. tests: tests/device/test_triton_kernels.py, test_triton_normal.py and
   test_triton_dropout.py with ASCEND_RAND_TRITON_TEST_DEVICE=cuda, so they
   run compiled on the GPU (without a CUDA device: under Triton's
   interpreter, as in CI), and the graph-safe device state's tests
   (test_triton_state.py, test_graph_capture.py's torch.cuda.graph
   capture and replay, test_torch_compile.py's CUDA variant);
4. the device benchmark, ``ascend-rand bench --only device`` (``--quick`` when
   little time is left);
4b. the kernels' compiled-code report (``ascend-rand bench --only kernels``: every
   kernel compiled for sm_90 and read from its SASS) and its predicted G samples/s
   beside the rates step 4 measured, draw by draw, with torch's peers at the same size
   (``kernel_cost.beside_measured``);
5. DIR/device_check.json (everything, the benchmark's results included) and
   DIR/device_check.md (the steps, the tests, the benchmark's tables); the
   logs of each step in DIR/logs/.

Exit status: 0 every step passed; 1 a test failed or a draw's bits differed
from the host backend's; 2 bad arguments; 3 the checks could not run.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEST_FILES = ("tests/device/test_triton_kernels.py", "tests/device/test_triton_normal.py",
              "tests/device/test_triton_dropout.py",
              # the graph-safe device state: capture/replay and compiled training on CUDA
              "tests/device/test_triton_state.py", "tests/device/test_graph_capture.py",
              "tests/frameworks/test_torch_compile.py")
SWITCH = "ASCEND_RAND_TRITON_TEST_DEVICE"  # the test files' compiled-mode switch
TIME_LIMIT_S = 290.0
BENCH_RESERVE_S = {True: 100.0, False: 40.0}  # time kept for the benchmark (CUDA, CPU)
FULL_BENCH_BELOW_S = 150.0  # less time than this left: the benchmark's --quick sizes
SETUPTOOLS_PIN = (77, 0)  # pyproject's build-system pin: PEP 639 license fields
# Not copied: anywhere, these names; at the top of the tree (or in bench/), these folders.
COPY_IGNORE = (".git", ".venv*", "*.egg-info", "__pycache__", "*.so", ".pytest_cache",
               ".hypothesis", "_native_build_error.txt")
COPY_IGNORE_AT = {REPO: {"build", "dist", "site", "work"}, REPO / "bench": {"results"}}

PROBE = r"""
import importlib, json, sys
out = {"python": sys.version.split()[0], "executable": sys.executable, "versions": {}}
for name in ("torch", "triton", "numpy", "pybind11", "setuptools", "pytest", "ml_dtypes",
             "wheel"):
    try:
        out["versions"][name] = getattr(importlib.import_module(name), "__version__", "?")
    except Exception as exc:
        out["versions"][name] = None
try:
    import torch
    out["cuda"] = bool(torch.cuda.is_available())
    out["device_name"] = torch.cuda.get_device_name(0) if out["cuda"] else None
except Exception as exc:
    out["cuda"], out["device_name"] = False, None
    out["torch_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""

NATIVE_PROBE = r"""
import json, ascend_rand
info = ascend_rand.backends()
print(json.dumps({"native": info["native"], "path": ascend_rand.__file__,
                  "device_kernels": info["torch"].get("device_kernels")}))
"""

MARKDOWN = r"""
import json, sys
from ascend_rand.benchmarks import device
print(device.markdown(json.load(open(sys.argv[1]))))
"""


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="bench/device_check.sh",
        description="Build ascend_rand offline, run the Triton kernels' bit-equality tests "
                    "compiled on a CUDA device (interpreted without one) and the device "
                    "benchmark; write DIR/device_check.json and DIR/device_check.md.")
    parser.add_argument("dir", help="the folder for the report (made if missing)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter with torch and triton (default: this one)")
    parser.add_argument("--wheels", metavar="WHEELDIR",
                        help="a folder of wheels for a missing dependency (ml_dtypes), "
                             "installed with pip --no-index")
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT_S, metavar="S",
                        help=f"seconds for the whole run (default {TIME_LIMIT_S:g})")
    args = parser.parse_args(argv)
    out = Path(args.dir)
    if out.exists() and not out.is_dir():
        parser.error(f"DIR {args.dir!r} exists and is not a folder")
    if not args.time_limit > 0:
        parser.error(f"--time-limit must be > 0 seconds, got {args.time_limit:g}")
    if args.wheels is not None and not Path(args.wheels).is_dir():
        parser.error(f"--wheels {args.wheels!r} is not a folder")
    found = shutil.which(args.python)
    if found is None:
        parser.error(f"--python {args.python!r} is not an interpreter here")
    args.python = os.path.abspath(found)  # not resolved: a venv's python is a symlink
    return args


class Check:
    """One run: its folder, clock, environment and the steps' records."""

    def __init__(self, args):
        self.args = args
        self.dir = Path(args.dir).resolve()
        self.logs = self.dir / "logs"
        self.work = self.dir / "work"
        self.started = time.monotonic()
        self.deadline = self.started + args.time_limit
        self.steps = []
        self.pythonpath = []
        self.report = {"tool": "bench/device_check.sh",
                       "started_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                       "time_limit_s": args.time_limit, "steps": self.steps}

    def left(self):
        return self.deadline - time.monotonic()

    def env(self, **extra):
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", SWITCH)}
        env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONNOUSERSITE="1")
        if self.pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(str(p) for p in self.pythonpath)
        env.update({k: v for k, v in extra.items() if v is not None})
        return env

    def call(self, name, cmd, log, timeout, cwd=None, env=None):
        """Run ``cmd``; (returncode or None when it ran past ``timeout``, output)."""
        timeout = max(1.0, min(timeout, self.left()))
        with open(self.logs / log, "a") as out:
            out.write(f"$ {' '.join(map(str, cmd))}\n")
            out.flush()
            try:
                done = subprocess.run([str(c) for c in cmd], cwd=cwd or self.work,
                                      env=env or self.env(), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                text = exc.stdout if isinstance(exc.stdout, str) else \
                    (exc.stdout or b"").decode(errors="replace")
                out.write(text + f"\n[{name}: stopped after {timeout:.0f} s]\n")
                return None, text
            out.write(done.stdout + "\n")
            return done.returncode, done.stdout

    def step(self, name, status, started, detail):
        record = {"step": name, "status": status, "seconds": round(time.monotonic() - started, 1),
                  "detail": detail}
        self.steps.append(record)
        print(f"device_check: {name}: {status} ({record['seconds']} s): {detail}", flush=True)
        return record


# -- the steps -------------------------------------------------------------------------------------

def environment(check):
    t0 = time.monotonic()
    code, text = check.call("environment", [check.args.python, "-c", PROBE], "environment.log",
                            60)
    try:
        probe = json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        check.step("environment", "error", t0, f"the interpreter could not be probed: {text[-300:]}")
        return None
    check.report["environment"] = probe
    missing = [n for n in ("torch", "numpy", "pybind11", "setuptools", "pytest")
               if probe["versions"].get(n) is None]
    if missing:
        check.step("environment", "error", t0, f"missing here: {', '.join(missing)}")
        return None
    versions = ", ".join(f"{k} {v}" for k, v in probe["versions"].items() if v)
    if probe["cuda"]:
        where = f"CUDA device: {probe['device_name']}"
    else:
        where = ("no CUDA device found (torch.cuda.is_available() is False): this is the dry "
                 "run, the tests run under Triton's interpreter on CPU tensors and the benchmark "
                 "prints the launch table of both device paths")
    check.step("environment", "ok", t0, f"python {probe['python']}, {versions}; {where}")
    return probe


def _copy_source(check):
    src = check.work / "src"
    if src.exists():
        shutil.rmtree(src)
    skip = shutil.ignore_patterns(*COPY_IGNORE)

    def ignore(folder, names):
        dropped = set(skip(folder, names)) | (COPY_IGNORE_AT.get(Path(folder), set()) &
                                              set(names))
        here = Path(folder).resolve()
        return dropped | {n for n in names if (here / n) == check.dir}  # DIR inside the tree
    shutil.copytree(REPO, src, symlinks=True, ignore=ignore)
    return src


def _old_license_form(src):
    """Rewrite the copy's PEP 639 license fields for a setuptools older than 77."""
    path = src / "pyproject.toml"
    text = path.read_text()
    text = re.sub(r'(?m)^license\s*=\s*"([^"]+)"\s*$', r'license = {text = "\1"}', text)
    text = re.sub(r"(?m)^license-files\s*=.*$\n?", "", text)
    path.write_text(text)


def _version_tuple(text):
    return tuple(int(p) for p in re.findall(r"\d+", text or "0")[:2]) or (0,)


def _source_stamp(check):
    """A digest of the tree build() copies (paths, sizes, modification times) and of the
    interpreter: a rerun with the same one reuses the build (device time is short)."""
    digest = hashlib.sha256(f"{check.args.python} {sys.version}".encode())
    skip = shutil.ignore_patterns(*COPY_IGNORE)
    for folder, dirs, names in os.walk(REPO):
        here = Path(folder)
        dropped = set(skip(folder, dirs + names)) | COPY_IGNORE_AT.get(here, set())
        dirs[:] = sorted(d for d in dirs if d not in dropped and (here / d).resolve() != check.dir)
        for name in sorted(n for n in names if n not in dropped):
            st = (here / name).lstat()
            digest.update(f"{(here / name).relative_to(REPO)} {st.st_size} {st.st_mtime_ns}\n"
                          .encode())
    return digest.hexdigest()


def build(check, probe):
    t0 = time.monotonic()
    stamp_path = check.work / "build_stamp.json"
    stamp = _source_stamp(check)
    try:
        kept = json.loads(stamp_path.read_text())
    except (OSError, ValueError):
        kept = None
    if kept and kept.get("stamp") == stamp:
        check.pythonpath = [Path(p) for p in kept["pythonpath"]]
        info = kept["info"]
        check.report["build"] = {**info, "reused": True}
        check.step("build", "ok", t0, f"reused {check.work}'s build of the same sources "
                   f"({info['method']})")
        return info
    if stamp_path.exists():
        stamp_path.unlink()
    src = _copy_source(check)
    site = check.work / "site"
    py = check.args.python
    pip = [py, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
           "--no-cache-dir", "--target", site, src]
    attempts = []

    def pip_install(label):
        if site.exists():
            shutil.rmtree(site)
        code, _ = check.call("build", pip, "build.log", 240)
        attempts.append(f"{label}: {_outcome(code)}")
        return code == 0

    method = None
    if pip_install("pip install --no-build-isolation --no-deps --target"):
        method, check.pythonpath = "pip install --no-build-isolation --no-deps", [site]
    elif _version_tuple(probe["versions"]["setuptools"]) < SETUPTOOLS_PIN:
        _old_license_form(src)
        if pip_install(f"the same, license fields in setuptools {probe['versions']['setuptools']}"
                       f"'s form"):
            method = "pip install --no-build-isolation --no-deps (license fields rewritten)"
            check.pythonpath = [site]
    if method is None:
        code, _ = check.call("build", [py, "setup.py", "build_ext", "--inplace"], "build.log", 240,
                             cwd=src)
        attempts.append(f"setup.py build_ext --inplace: {_outcome(code)}")
        check.pythonpath = [src]
        method = "setup.py build_ext --inplace, PYTHONPATH" if code == 0 else \
            "the source copy without a native core (the NumPy fallback is the reference)"
    deps = _ml_dtypes(check, probe, attempts)
    if deps is False:
        check.step("build", "error", t0, "ml_dtypes (ascend_rand's dependency for bfloat16) is "
                   "not installed here and no wheel of it was found: pass --wheels DIR with an "
                   f"ml_dtypes wheel for Python {probe['python']}; " + "; ".join(attempts))
        return None
    code, text = check.call("build", [py, "-c", NATIVE_PROBE], "build.log", 120)
    try:
        info = json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        why = "the time limit was reached" if code is None else \
            f"ascend_rand does not import: {text[-400:]}"
        check.step("build", "error", t0, f"{why}; {'; '.join(attempts)} (logs/build.log)")
        return None
    native = info["native"]
    info.update(method=method, attempts=attempts, reference="native" if native["available"]
                else "numpy")
    check.report["build"] = info
    stamp_path.write_text(json.dumps({"stamp": stamp, "info": info,
                                      "pythonpath": [str(p) for p in check.pythonpath]}))
    core = "native core built" if native["available"] else \
        f"no native core ({native['reason']}): the NumPy fallback is the reference"
    check.step("build", "ok", t0, f"{method}; {core}; {'; '.join(attempts)}")
    return info


def _outcome(code):
    return "ok" if code == 0 else "stopped at the time limit" if code is None else \
        f"failed (exit {code})"


def _ml_dtypes(check, probe, attempts):
    """None: ml_dtypes importable; a path added; False: missing with no wheel for it."""
    if probe["versions"].get("ml_dtypes") is not None:
        return None
    if check.args.wheels is None:
        return False
    deps = check.work / "deps"
    code, _ = check.call("build", [check.args.python, "-m", "pip", "install", "--no-index",
                                   "--no-deps", "--find-links", Path(check.args.wheels).resolve(),
                                   "--target", deps, "ml_dtypes"], "build.log", 60)
    attempts.append(f"ml_dtypes from {check.args.wheels}: {_outcome(code)}")
    if code != 0:
        return False
    check.pythonpath.append(deps)
    return deps


def _junit(path):
    """{file: {"passed", "failed", "skipped"}} and totals from pytest's junit XML."""
    per, totals = {}, {"passed": 0, "failed": 0, "skipped": 0}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("file") or (case.get("classname") or "?").split(".")[-1] + ".py"
        kind = ("failed" if case.find("failure") is not None or case.find("error") is not None
                else "skipped" if case.find("skipped") is not None else "passed")
        per.setdefault(Path(name).name, {"passed": 0, "failed": 0, "skipped": 0})[kind] += 1
        totals[kind] += 1
    return per, totals


def tests(check, probe, build_info):
    t0 = time.monotonic()
    src = check.work / "src"
    cuda = probe["cuda"]
    files = []
    for rel in TEST_FILES:
        path = src / rel
        if not path.exists():
            files.append({"file": rel, "mode": "missing"})
            continue
        honours = SWITCH in path.read_text()
        mode = ("compiled on cuda" if cuda and honours else
                "interpreted (the file has no compiled switch)" if cuda else
                "interpreted (no CUDA device)")
        files.append({"file": rel, "mode": mode})
    present = [src / f["file"] for f in files if f["mode"] != "missing"]
    junit = check.logs / "tests.xml"
    if junit.exists():
        junit.unlink()
    budget = check.left() - BENCH_RESERVE_S[cuda]
    if budget < 5:
        check.report["tests"] = {"files": files, "returncode": None, "summary": "not run"}
        check.step("tests", "failed", t0, f"not run: {check.left():.0f} s were left of "
                   f"--time-limit {check.args.time_limit:g}, {BENCH_RESERVE_S[cuda]:.0f} s of "
                   f"them kept for the benchmark")
        return False
    env = check.env(**{SWITCH: "cuda" if cuda else None})
    code, text = check.call("tests", [check.args.python, "-m", "pytest", *present, "-q",
                                      "-p", "no:cacheprovider", "--junitxml", junit,
                                      "--rootdir", src], "tests.log", budget, env=env)
    record = {"files": files, "returncode": code}
    if junit.exists():
        record["per_file"], record["totals"] = _junit(junit)
    summary = (text.strip().splitlines() or [""])[-1]
    if code is None:  # stopped: what pytest's progress characters had said by then
        marks = "".join(line for line in text.splitlines()
                        if re.fullmatch(r"[.FEsxX]+(\s+\[\s*\d+%\])?", line.strip()))
        summary = (f"{marks.count('.')} passed, {marks.count('F') + marks.count('E')} failed, "
                   f"{marks.count('s')} skipped so far")
    record["summary"] = summary
    check.report["tests"] = record
    if code is None:
        status, detail = "failed", f"stopped after {budget:.0f} s (the time limit): {summary}"
    elif code == 0:
        status, detail = "ok", summary
    else:
        status, detail = "failed", summary
    modes = "; ".join(f"{Path(f['file']).name}: {f['mode']}" for f in files)
    check.step("tests", status, t0, f"{detail} [{modes}; reference: {build_info['reference']}]")
    return status == "ok"


def bench(check, probe):
    t0 = time.monotonic()
    out = check.logs / "bench.json"
    if out.exists():
        out.unlink()
    quick = check.left() < FULL_BENCH_BELOW_S
    cmd = [check.args.python, "-m", "ascend_rand", "bench", "--only", "device", "--json", out]
    if quick:
        cmd.append("--quick")
    code, text = check.call("bench", cmd, "bench.txt", check.left() - 15)
    if code != 0 or not out.exists():
        why = "stopped at the time limit" if code is None else f"exit {code}: {text[-300:]}"
        check.step("bench", "failed", t0, why)
        return None
    results = json.loads(out.read_text())
    check.report["bench"] = results
    rows = results.get("launch_rows", [])
    differ = [r for r in rows if r.get("same_bits") is False]
    met = [t for t in results.get("targets", []) if t.get("met")]
    where = results.get("device") or "CPU tensors (no device)"
    detail = (f"{where}{', quick sizes' if quick else ''}; {len(rows)} launch rows, "
              f"{len(differ)} with bits differing from the host backend; targets met: "
              f"{len(met)} of {len(results.get('targets', []))}")
    check.step("bench", "failed" if differ else "ok", t0, detail)
    return results


# The model's prediction beside the measured rates: the compiled-code report (no GPU needed),
# then kernel_cost.beside_measured over the device benchmark's rows.
MODEL_SCRIPT = r"""
import json, sys
from ascend_rand.benchmarks import kernel_cost
kernels = kernel_cost.run()
device = json.loads(open(sys.argv[1]).read()) if sys.argv[1] != "-" else {"rows": []}
rows = kernel_cost.beside_measured(kernels["rows"], device.get("rows", []))
print(json.dumps({"kernels": kernels["rows"], "targets": kernels["targets"], "beside": rows,
                  "markdown": kernel_cost.beside_markdown(rows)}))
"""


def model(check, results):
    """The kernels' compiled-code report (``ascend-rand bench --only kernels``) and its
    predictions beside the device benchmark's measured G samples/s, into the report; a
    step of its own, failed only where the report cannot run (it needs no device)."""
    t0 = time.monotonic()
    source = check.logs / "bench.json" if results is not None else "-"
    budget = check.left() - 5
    if budget < 20:
        check.step("model", "failed", t0, f"not run: {check.left():.0f} s were left")
        return None
    code, text = check.call("model", [check.args.python, "-c", MODEL_SCRIPT, source],
                            "model.log", budget)
    if code != 0:
        check.step("model", "failed", t0, f"exit {code}: {text[-300:]}")
        return None
    out = json.loads(text.strip().splitlines()[-1])
    check.report["model"] = out
    measured = [r for r in out["beside"] if r["measured_g_per_s"] is not None]
    check.step("model", "ok", t0, f"{len(out['kernels'])} kernels compiled for sm_90; "
               f"{len(measured)} draws measured beside the model")
    return out


# -- the report ----------------------------------------------------------------------------------

def markdown(check):
    r = check.report
    lines = ["# bench/device_check.sh", "",
             f"{r['started_utc']}, {r['status']}, {r['wall_s']} s of {r['time_limit_s']:g}", "",
             "| step | status | seconds | detail |", "|---|---|---|---|"]
    lines += [f"| {s['step']} | {s['status']} | {s['seconds']} | "
              f"{str(s['detail']).replace('|', '/')} |" for s in r["steps"]]
    per = r.get("tests", {}).get("per_file")
    if per:
        modes = {Path(f["file"]).name: f["mode"] for f in r["tests"]["files"]}
        lines += ["", "| test file | mode | passed | failed | skipped |", "|---|---|---|---|---|"]
        lines += [f"| {name} | {modes.get(name, '?')} | {c['passed']} | {c['failed']} | "
                  f"{c['skipped']} |" for name, c in per.items()]
    if "model" in r:
        lines += ["", "The model (docs/performance.md, \"Kernels by their compiled code\") beside "
                  "the measurement:", "", r["model"]["markdown"]]
    if "bench" in r:
        path = check.logs / "bench.json"
        code, text = check.call("report", [check.args.python, "-c", MARKDOWN, path],
                                "report.log", 60)
        if code == 0:
            lines += ["", text.strip()]
    return "\n".join(lines) + "\n"


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    check = Check(args)
    check.logs.mkdir(parents=True, exist_ok=True)
    check.work.mkdir(parents=True, exist_ok=True)
    status = 3
    probe = environment(check)
    if probe is not None:
        info = build(check, probe)
        if info is not None:
            passed = tests(check, probe, info)
            results = bench(check, probe)
            model(check, results)
            status = 0 if passed and results is not None and \
                all(s["status"] == "ok" for s in check.steps) else 1
    check.report["status"] = {0: "passed", 1: "failed", 3: "could not run"}[status]
    check.report["exit_code"] = status
    check.report["wall_s"] = round(time.monotonic() - check.started, 1)
    (check.dir / "device_check.json").write_text(json.dumps(check.report, indent=2) + "\n")
    (check.dir / "device_check.md").write_text(markdown(check))
    print(f"device_check: {check.report['status']} in {check.report['wall_s']} s; "
          f"{check.dir / 'device_check.json'}, {check.dir / 'device_check.md'}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
