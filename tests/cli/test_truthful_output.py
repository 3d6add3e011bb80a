"""What ``ascend-rand selftest``, ``bench`` and ``demo`` print is what they did (issue 21 item 5).

- the Box-Muller row says why it was not compared with TensorFlow (selftest does
  not import it; the demo says so only when the import failed), and what it
  checked instead;
- every ratio names its peer and its direction: a table's ratio column is
  ``vs PEER`` with a caption ``PEER's time / this row's``, a target's figure
  ``LABEL = 3.44x``; the entropy table's rates are GB/s against os.urandom, and
  a title names torch's thread count only where a row ran at it;
- no cell is cut with an ellipsis, and output piped to a file has each table
  row on one line (docs/cli.md);
- the demo's normal and mask tables show the numpy row their ratio divides
  by, and the demo ends with one summary line.

No benchmark is timed here: each benchmark's peers are replaced by rows
"timed" at set speeds (``harness.Timed``: nothing is made or called), so the
ratios are known in advance and the real ``run`` / ``print_results`` /
``print_targets`` build the reports.
"""

import io
import os
import pty
import re
import subprocess
import sys

import numpy as np
import pytest

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)
from ascend_rand.cli import demo, selftest
from ascend_rand.benchmarks import (distributions, dropout, entropy, harness, mkl, mt19937,
                                    smalldraws, torch_backend, uniform)

# Seconds per element of each peer (every other peer: 1 ns), so each ratio is known.
SPEED = {uniform.BASELINE: 8e-9, "native": 1e-9, distributions.NORMAL_BASELINE: 6e-9,
         distributions.ZIGGURAT: 1e-9, distributions.MASK_NATIVE: 1e-9,
         distributions.BOX_MULLER: 2e-9, mt19937.RAW_BASELINE: 3e-9,
         mt19937.F64_BASELINE: 4e-9, torch_backend.NATIVE: 1e-9, torch_backend.TORCH_CPU: 2e-9,
         entropy.URANDOM: 2e-9, entropy.POOL_DRBG: 1e-9}
# The mask's numpy row: 5 ns, the normal's 6 (both peers are named "numpy PCG64").
MASK_SPEED = {distributions.MASK_BASELINE: 5e-9}


def timed(seconds_per_element):
    """make(draw, n) that is 'timed' at the given speed without making or calling anything."""
    return lambda draw, n: ("call()", harness.Timed(seconds_per_element * n, 1))


def timed_peers(peers, speeds=SPEED):
    return [(name, threads, timed(speeds.get(name, 1e-9))) for name, threads, _ in peers]


@pytest.fixture
def fake_peers(monkeypatch):
    """Every benchmark's peers replaced by timed stand-ins (its real names and threads)."""
    real_uniform, real_dist = uniform.peers, distributions.peers_for
    monkeypatch.setattr(uniform, "peers", lambda cores: timed_peers(real_uniform(cores)))

    def dist(draw, cores, only=None):
        speeds = {**SPEED, **MASK_SPEED} if draw == distributions.MASK else SPEED
        return timed_peers(real_dist(draw, cores, only), speeds)
    monkeypatch.setattr(distributions, "peers_for", dist)
    real_mt = mt19937.peers_for
    monkeypatch.setattr(mt19937, "peers_for", lambda draw, *args: timed_peers(real_mt(draw, *args)))
    monkeypatch.setattr(mt19937, "measure_jumps", lambda *args: [
        {"operation": "advance(2**20)", "peer": "native", "threads": 1, "method": "advance(n)",
         "ms": 0.5, "reps": 1}])
    real_tb = torch_backend.peers_for
    monkeypatch.setattr(torch_backend, "peers_for",
                        lambda draw, quick: timed_peers(real_tb(draw, quick)))
    real_ent = entropy.peers_for
    monkeypatch.setattr(entropy, "peers_for", lambda draw: timed_peers(real_ent(draw)))

    real_drop = dropout.peers

    def drop(draw, cores, saved):
        out = []
        for name, threads, _ in real_drop(draw, cores, saved):
            def make(draw, n, name=name, threads=threads):
                ours = name in (dropout.PACKED, dropout.PACKED2D)
                saved[(name, threads, n)] = n // 8 if ours else 4 * n
                return ("dropout(mode='regenerate')" if name == dropout.REGENERATE else "call()",
                        harness.Timed((1e-9 if name != dropout.TORCH else 3e-9) * n, 1))
            out.append((name, threads, make))
        return out
    monkeypatch.setattr(dropout, "peers", drop)

    def small(draw, repeats):
        us = {smalldraws.NUMPY: 7.98e-6, smalldraws.GENERATOR: 2.32e-6,
              smalldraws.STATELESS: 2.0e-6, smalldraws.TORCH: 3.87e-6}
        gen, stateless_call, _, torch_call = smalldraws.OPERATIONS[draw]
        names = [smalldraws.NUMPY, smalldraws.GENERATOR]
        names += [smalldraws.STATELESS] if stateless_call is not None else []
        names += [smalldraws.TORCH] if torch_call is not None else []
        return [(name, "torch" if name == smalldraws.TORCH else 1,
                 lambda d, n, name=name: ("call()", harness.Timed(us[name], 1)))
                for name in names]
    monkeypatch.setattr(smalldraws, "peers_for", small)


def printed(module, results):
    out = io.StringIO()  # not a terminal: the pipe console
    module.print_results(results, file=out)
    return out.getvalue()


def header(text, column):
    """The table header line that has ``column``."""
    lines = [line for line in text.splitlines() if column in line and "implementation" in line]
    assert lines, f"no header with {column!r} in:\n{text}"
    return lines[0]


# -- selftest and the demo: the Box-Muller row ----------------------------------------------------

def test_selftest_box_muller_row_says_it_did_not_import_tensorflow(monkeypatch):
    """TensorFlow installed or not, selftest never imports it: the row must not claim it
    'is not importable', and says what it checked instead."""
    monkeypatch.setattr(selftest, "cross_backend", lambda rows, names: None)
    monkeypatch.setattr(selftest, "entropy_health", lambda rows: None)
    monkeypatch.setattr(demo, "backend_agreement", lambda rows, names: None)
    rows = selftest.run(show_progress=False)
    normal = [r for r in rows if r[1] == "normal"]
    assert normal and all(ok for *_, ok in normal)
    for _, _, backend, detail, _ in normal:
        assert "not importable" not in detail
        assert detail.startswith("Box-Muller: 4099 float32 finite, std 0.969 (within 0.05 of 1)")
        assert detail.endswith("not compared with TF: selftest does not import TensorFlow "
                               "(ascend-rand demo compares live)")


def test_demo_box_muller_row_without_tensorflow_says_the_import_failed():
    rows = []
    demo.distributions(rows, ["numpy"], None)
    (_, _, detail, ok), = [r for r in rows if r[0] == "normal"]
    assert ok and detail == ("Box-Muller: 4099 float32 finite, std 0.969 (within 0.05 of 1); "
                             "not compared with TF: TensorFlow not importable")


class FakeTensorFlow:
    """tensorflow's calls the Box-Muller check makes, answering ours plus ``shift``."""

    uint64, float32 = "uint64", "float32"

    def __init__(self, shift):
        from ascend_rand import stateless

        want = stateless.normal((4099,), 5, (0, 3), method="box_muller", backend="numpy")
        answer = type("Tensor", (), {"numpy": lambda self: want + np.float32(shift)})()
        self.raw_ops = type("RawOps", (), {
            "StatelessRandomNormalV2": staticmethod(lambda **kw: answer)})()

    @staticmethod
    def constant(value, dtype):
        return value


@pytest.mark.parametrize("shift, ok, diff", [(1e-6, True, "1.0e-06"), (1e-3, False, "1.0e-03")])
def test_demo_box_muller_row_with_tensorflow_compares_with_it(shift, ok, diff):
    rows = []
    demo.distributions(rows, ["numpy"], FakeTensorFlow(shift))
    (_, _, detail, passed), = [r for r in rows if r[0] == "normal"]
    assert passed is ok
    assert detail == f"Box-Muller vs TF StatelessRandomNormalV2: max |diff| {diff}"


# -- bench: every ratio names its peer and its direction -------------------------------------------

def test_small_draw_target_names_both_peers_and_directions(fake_peers):
    results = smalldraws.run(quick=True)
    gen = next(t for t in results["targets"] if t["text"].startswith("random float32: Generator"))
    assert gen["text"] == ("random float32: Generator call's time at most 1.5x numpy's "
                           "(numpy's time / ours >= 0.67), and below torch's")
    assert harness.measured(gen) == ("numpy PCG64's time / ours = 3.44x at n = 16 (ours 2.32 "
                                     "us, torch 3.87 us: torch's time / ours = 1.67x)")
    assert gen["met"]
    # choice has no torch call: its target says nothing of torch
    choice = next(t for t in results["targets"] if t["text"].startswith("choice"))
    assert "torch" not in choice["text"] and "torch" not in harness.measured(choice)
    assert len(results["targets"]) == 2 * len(smalldraws.OPERATIONS) - 1  # choice: no stateless
    text = printed(smalldraws, results)
    assert "vs numpy PCG64" in header(text, "vs numpy PCG64")
    assert ("one call of 16 elements; vs numpy PCG64 = numpy PCG64's time / this row's at the "
            "same n (above 1: faster)") in text
    assert " 16 " in text and "2e1" not in text  # n = 16 is not rounded to one digit


# (module, run's keyword arguments, the label of each target that has a ratio)
LABELS = [
    (uniform, {}, ["numpy Philox's time / native's", f"{mkl.PEER}'s time / native's"]),
    (distributions, {}, ["numpy PCG64's time / native ziggurat's",
                         "numpy PCG64's time / native Box-Muller's",
                         "numpy PCG64's time / native ziggurat's",
                         "numpy PCG64's time / native mask's",
                         f"the best {mkl.PEER} method's time / native ziggurat's"]),
    (mt19937, {}, ["numpy MT19937's time / native's", None]),
    (torch_backend, {}, ["the native backend's time / the torch backend's (cpu)"] * 3),
    (dropout, {}, ["torch F.dropout's time / ascend_rand packed's"]),
    (entropy, {}, [None, None] + ["os.urandom's time / the DRBG pool's"] * 2),
]


@pytest.mark.parametrize("module, kwargs, labels", LABELS,
                         ids=[m.__name__.rsplit(".", 1)[-1] for m, _, _ in LABELS])
def test_every_targets_figure_names_what_it_divides(fake_peers, module, kwargs, labels):
    results = module.run(quick=True, sizes=[1000] if module is not entropy else None, **kwargs)
    for target, label in zip(results["targets"], labels, strict=True):
        if label is None:  # a time limit, or a ratio whose label depends on the source
            continue
        assert target["ratio_label"] == label
        got = harness.measured(target)
        if got is not None:  # measured: the figure carries its label
            assert got.startswith(f"{label} = {target['ratio']:.2f}x at n = ")


def test_ratios_divide_in_the_direction_their_labels_say(fake_peers):
    results = uniform.run(quick=True, sizes=[1000])
    target = results["targets"][0]
    # numpy Philox takes 8 ns an element, native 1: numpy's time / native's = 8
    assert harness.measured(target) == "numpy Philox's time / native's = 8.00x at n = 1e3"
    results = entropy.run(quick=True)
    drbg = [t for t in results["targets"] if t["text"].startswith("DRBG")]
    assert [harness.measured(t) for t in drbg] == [
        "os.urandom's time / the DRBG pool's = 2.00x at n = 32",
        "os.urandom's time / the DRBG pool's = 2.00x at n = 1048576"]
    raw = [t for t in results["targets"] if t["text"].startswith("raw-entropy")]
    for t in raw:
        assert t["ratio_label"].startswith("the pool's output rate x ")


@pytest.mark.parametrize("module, column", [
    (uniform, "vs numpy Philox"), (distributions, "vs numpy PCG64"),
    (mt19937, "vs numpy MT19937"), (mt19937, "vs numpy RandomState"),
    (torch_backend, "vs native backend"), (dropout, "vs torch F.dropout"),
    (entropy, "vs os.urandom")])
def test_ratio_columns_name_their_peer(fake_peers, module, column):
    results = module.run(quick=True, sizes=[1000] if module is not entropy else None)
    text = printed(module, results)
    assert column in header(text, column)
    if module is entropy:  # bytes, against os.urandom: no "samples", no numpy
        assert "GB/s" in header(text, column) and "G samples/s" not in text
        assert "vs numpy" not in text
        assert ("GB/s = bytes per second / 1e9; vs os.urandom = os.urandom's time / this "
                "row's at the same n (above 1: faster)") in text
    if module is distributions:  # the truncated normal is held to the normal table's row
        assert ("vs numpy PCG64 = numpy PCG64's time in the normal float32 table / this "
                "row's") in text


@pytest.mark.parametrize("module, torch_rows", [
    (uniform, True), (mt19937, False), (entropy, False), (dropout, False),
    (torch_backend, True)])
def test_title_names_torch_threads_only_where_a_row_ran_at_them(fake_peers, module, torch_rows):
    if torch_rows:
        peers.module("torch")
    results = module.run(quick=True, sizes=[1000] if module is not entropy else None)
    title = harness.title(results)
    assert "None" not in title
    assert ("torch threads" in title) is torch_rows
    if torch_rows:
        assert title.endswith(f", torch threads {results['torch_threads']}")
        assert isinstance(results["torch_threads"], int)


def test_measure_marks_the_rows_that_ran_at_torchs_thread_count():
    peers = [("ours", 1, timed(1e-9)), ("torch", "torch", timed(2e-9))]
    rows = harness.measure(("d",), (10,), lambda draw: peers, 3, 0.1, torch_threads=7)
    assert [(r["peer"], r["threads"], r.get("threads_of")) for r in rows] == [
        ("ours", 1, None), ("torch", 7, "torch")]


def test_markdown_names_the_ratio_peer_and_its_direction(fake_peers):
    text = entropy.markdown(entropy.run(quick=True))
    assert "| draw | n | implementation | call | threads | GB/s | vs os.urandom |" in text
    assert ("32-byte reads, 1 MiB reads: GB/s = bytes per second / 1e9; vs os.urandom = "
            "os.urandom's time / this row's at the same n (above 1: faster)") in text
    assert "torch threads" not in text


# -- no cell cut; piped output unwrapped ----------------------------------------------------------

def test_dropout_table_cuts_no_cell(fake_peers):
    text = printed(dropout, dropout.run(quick=True, sizes=[1000]))
    assert "…" not in text
    row = next(line for line in text.splitlines() if "dropout(mode='regenerate')" in line)
    assert row.split()[:2] == ["1e3", "ascend_rand"] and row.split()[-1] == "3.00"


def test_a_narrow_terminal_folds_a_long_cell_never_cuts_it(fake_peers, monkeypatch):
    Console = pytest.importorskip("rich.console").Console
    results = dropout.run(quick=True, sizes=[1000])
    monkeypatch.setenv("COLUMNS", "60")  # rich reads the terminal's width from COLUMNS
    master, slave = pty.openpty()
    chunks = []
    try:
        with os.fdopen(slave, "w", closefd=False) as tty:
            console = Console(file=tty)
            assert console.is_terminal and console.width == 60  # what the table is given
            dropout.print_results(results, file=tty)
            tty.flush()
        os.close(slave)
        slave = None
        # One read returns what the line discipline has passed on so far, which can be part
        # of the table (seen once in CI): read until the closed slave side reports the end.
        while True:
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # EIO: the slave side is closed and everything was read
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)
    text = b"".join(chunks).decode()
    assert "…" not in text
    # folded over lines of its column: every character of the call is there, in order
    rest = iter(re.sub(r"\x1b\[[0-9;]*m|\s", "", text))
    assert all(c in rest for c in "dropout(mode='regenerate')")


def test_bench_piped_to_a_file_prints_each_row_on_one_line(tmp_path):
    """``ascend-rand bench`` with stdout a pipe (timings replaced: nothing long is run)."""
    code = ("import sys; from ascend_rand.benchmarks import harness; "
            "harness.time_calls = lambda fns, reps, budget_s, before=None: "
            "[(1e-3 * (j + 1), 1) for j in range(len(fns))]; "
            "from ascend_rand.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-P", "-c", code, "bench", "--only", "dropout",
                           "--quick", "--sizes", "1000"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert "…" not in out and "\x1b[" not in out  # nothing cut, no colour codes
    lines = out.splitlines()
    rows = [line for line in lines if line.lstrip().startswith("1e3 ")]
    assert len(rows) == 10  # 3 + 2 (dropout2d) implementations at 1 and at 2 threads, whole
    for line in rows:
        fields = line.split()
        assert fields[1] in ("ascend_rand", "torch") and fields[-1].replace(".", "").isdigit()
    assert any("dropout(mode='regenerate')" in line for line in rows)
    assert dropout.CAPTION in lines  # the caption on one line, however long
    target = next(line for line in lines if dropout.TARGET in line)
    assert target.rstrip().endswith("MET")  # the target's row and its result on one line
    assert "torch F.dropout's time / ascend_rand packed's = " in target
    assert max(map(len, lines)) > 80  # rich's default width for a pipe would wrap these


# -- the demo: peer rows and one summary line ----------------------------------------------------

def test_demo_shows_each_ratios_peer_row_and_ends_with_a_summary(fake_peers, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # the recorded outputs: no TF import
    assert demo.main() == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "…" not in out and "\x1b[" not in out
    for draw, peer, ratio in ((distributions.NORMAL, distributions.ZIGGURAT, "6.00"),
                              (distributions.MASK, distributions.MASK_NATIVE, "5.00")):
        table = lines[[line.strip() for line in lines].index(draw):]
        table = table[:next(i for i, line in enumerate(table) if "faster)" in line) + 1]
        assert "vs numpy PCG64" in header("\n".join(table), "vs numpy PCG64")
        assert [line.split()[-1] for line in table if "numpy PCG64  " in line] == ["1.00"]
        assert [line.split()[-1] for line in table if peer in line] == [ratio]
        assert "vs numpy PCG64 = numpy PCG64's time / this row's" in table[-1]
    check_rows = [line for line in lines if line.lstrip().startswith(("Random123", "TF "))]
    assert check_rows and all(line.rstrip().endswith("PASS") for line in check_rows)
    checks = len([line for line in lines if line.rstrip().endswith(("PASS", "FAIL"))])
    assert lines[-1] == (f"demo: {checks} of {checks} checks passed; native, 1 thread, n = 1e6: "
                         "uniform float32 8.00x the speed of numpy Philox, normal float32 6.00x "
                         "the speed of numpy PCG64, dropout mask 5.00x the speed of numpy PCG64")


def test_demo_summary_counts_failures_and_says_when_no_throughput_ran():
    rows = [("a", "native", "x", True), ("b", "native", "y", False)]
    assert demo.summary(rows) == ("demo: 1 of 2 checks FAILED; throughput not measured "
                                  "(--no-bench)")
    assert demo.summary(rows[:1], {"rows": []}) == (
        "demo: 1 of 1 checks passed; native, 1 thread, n = 0: uniform float32 not measured, "
        "normal float32 not measured, dropout mask not measured")


def test_the_report_helpers_examples_hold():
    """The docstring examples of the helpers above (``_n``, ``ratio_column``, ``title``,
    ``headline``, ``summary``, ``rich_console``) print what they show."""
    import doctest

    from ascend_rand import _console

    for module in (harness, demo, _console):
        failed, attempted = doctest.testmod(module)[:2]
        assert failed == 0 and attempted > 0, module.__name__
