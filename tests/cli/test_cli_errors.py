"""``ascend-rand sample`` and ``stream`` when the output or the memory runs out.

docs/cli.md: a bad value, a draw too large for memory and an output that cannot be
written are one line, ``ascend-rand COMMAND: error: ...``, and exit status 2, never a
traceback; ``-o PATH`` writes exactly PATH, its suffix read whatever its case.  Where
the exit status and the bytes on stderr matter the command runs as ``python -P -m
ascend_rand`` with its stdout on /dev/full; elsewhere in-process through ``cli.main``.
"""

import errno
import os
import subprocess
import sys

import numpy as np
import pytest

from ascend_rand import Generator, cli
from ascend_rand.cli import sample

ENV = {**os.environ, "TERM": "dumb"}
needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


def run_to_dev_full(*args, cwd):
    """``python -P -m ascend_rand ARGS > /dev/full``: every write to stdout fails (ENOSPC)."""
    with open("/dev/full", "wb") as full:
        return subprocess.run([sys.executable, "-P", "-m", "ascend_rand", *args], cwd=cwd, env=ENV,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)


def one_line(err, command, *words):
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"ascend-rand {command}: error: "), lines
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("name", ["out.NPY", "out.Npy", "out.npy"])
def test_npy_suffix_in_any_case_writes_exactly_that_file(tmp_path, capsys, name):
    path = tmp_path / name
    assert cli.main(["sample", "normal", "--size", "5", "--seed", "5", "-o", str(path)]) == 0
    assert capsys.readouterr().err.strip().endswith(f"to {path}")
    assert os.listdir(tmp_path) == [name]  # before the fix: out.NPY.npy
    assert np.load(path).tobytes() == Generator(5).normal(size=5).tobytes()


def test_csv_suffix_in_any_case(tmp_path):
    path = tmp_path / "out.CSV"
    assert cli.main(["sample", "integers", "--size", "4", "--low", "9", "--seed", "2",
                     "-o", str(path)]) == 0
    assert os.listdir(tmp_path) == ["out.CSV"]
    assert np.loadtxt(path, dtype=np.int64).tolist() == Generator(2).integers(9, size=4).tolist()


def test_a_draw_too_large_for_memory_is_one_line(tmp_path, capsys):
    # 2**56 float32 values are 2**58 bytes, beyond any 64-bit address space (57 bits with
    # 5-level paging), so the allocation fails at once on every machine, overcommit or not
    # (the report's 10**11 values, 373 GiB, could be granted and then touched).
    out = tmp_path / "h.npy"
    assert cli.main(["sample", "normal", "--size", str(2**56), "--seed", "5", "-o", str(out)]) == 2
    one_line(capsys.readouterr().err, "sample", f"--size {2**56}", "not enough memory")
    assert not out.exists()


def test_an_output_folder_that_does_not_exist_is_one_line(tmp_path, capsys):
    out = tmp_path / "missing" / "x.npy"
    assert cli.main(["sample", "normal", "--size", "5", "--seed", "5", "-o", str(out)]) == 2
    one_line(capsys.readouterr().err, "sample", "cannot write", str(out), "No such file")


def test_a_write_that_fails_part_way_leaves_no_file(tmp_path, capsys, monkeypatch):
    def half_then_full(stream, values, bar=None):
        stream.write("0.5\n")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(sample, "write_csv", half_then_full)
    out = tmp_path / "x.csv"
    assert cli.main(["sample", "normal", "--size", "5", "--seed", "5", "-o", str(out)]) == 2
    one_line(capsys.readouterr().err, "sample", "cannot write", "No space left on device")
    assert os.listdir(tmp_path) == []


@needs_dev_full
@pytest.mark.parametrize("argv", [
    ["stream", "--engine", "philox", "--dist", "raw", "--seed", "0", "--bytes", "100000"],
    ["stream", "--bytes", "16"],  # buffered: the failure comes at the flush
    ["stream", "--dist", "uniform"],  # endless
], ids=["raw 100000", "16 bytes", "endless uniform"])
def test_stream_to_a_full_disk_is_one_line_and_exit_2(tmp_path, argv):
    proc = run_to_dev_full(*argv, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]  # before the fix: 1 and an OSError traceback
    one_line(proc.stderr, "stream", "No space left on device")


@needs_dev_full
def test_sample_csv_to_a_full_stdout_is_one_line_and_exit_2(tmp_path):
    proc = run_to_dev_full("sample", "normal", "--size", "100000", "--seed", "5", "-o", "-",
                           cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    one_line(proc.stderr, "sample", "cannot write to stdout", "No space left on device")


@pytest.mark.parametrize("command", [["sample", "uniform", "--size", "4", "-o", "-"],
                                     ["stream", "--bytes", "8"]])
def test_streams_for_an_engine_without_streams_is_refused_not_ignored(command, capsys):
    """--streams is an MT19937 option: given to Philox it is an error naming it, as the
    engine's own create refuses it (before, `sample` dropped it silently)."""
    assert cli.main([*command, "--engine", "philox", "--streams", "3", "--seed", "1"]) == 2
    one_line(capsys.readouterr().err, command[0], "streams is an MT19937 option", "got 3")
