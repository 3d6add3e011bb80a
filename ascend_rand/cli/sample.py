"""``ascend-rand sample``: draws of any Generator distribution written to .npy or CSV.

    ascend-rand sample normal --size 1000 --seed 5 --loc 2 --scale 0.5 -o out.npy
    ascend-rand sample integers --size 10,3 --low 1 --high 7 --seed 1 -o -

The output is ``Generator(seed, engine=..., backend=...).<dist>(...)`` bit for
bit: one call with the given size and parameters (a parameter not given takes
the method's default).  The format comes from the suffix: ``.npy`` (numpy.save;
bfloat16 is stored as 2-byte void, read it back with
``np.load(path).view(ml_dtypes.bfloat16)``) or ``.csv`` (one row per element of
a 1-D draw, one line per row of a 2-D one; floats with the digits that give
back the same value: ``%.17g`` for float64, ``%.9g`` for the others, which are
exact in float32); ``-o -`` writes CSV to stdout.  Without ``--seed`` a seed
is drawn from the entropy pool and printed on stderr, so the draw can be
repeated.
"""

import math
import os
import sys
from pathlib import Path

import numpy as np

from .._console import error, progress
from ..backend.torch_arrays import as_numpy

# Each distribution's options, in the order of the Generator method's parameters.
DISTRIBUTIONS = {
    "raw": ("dtype",),
    "random": ("dtype",),
    "uniform": ("low", "high", "dtype"),
    "integers": ("low", "high", "dtype", "endpoint"),
    "normal": ("loc", "scale", "dtype", "method"),
    "standard_normal": ("dtype", "method"),
    "truncated_normal": ("loc", "scale", "a", "b", "dtype"),
    "bernoulli": ("p", "packed"),
    "dropout_mask": ("p_drop",),
    "permutation": (),
    "choice": ("a", "p", "replace"),
}
REQUIRED = {"integers": ("low",), "bernoulli": ("p",), "dropout_mask": ("p_drop",),
            "choice": ("a",)}
# The value options: (flag, help).  Flags that take no value are in FLAGS.
VALUE_OPTIONS = (
    ("dtype", "the output dtype (float32 float64 float16 bfloat16; integers: int8..uint64; "
              "raw: uint32 uint64)"),
    ("loc", "normal, truncated_normal: the mean"),
    ("scale", "normal, truncated_normal: the standard deviation"),
    ("low", "uniform: the lower bound; integers: the lower bound (high given) or the "
            "exclusive upper bound"),
    ("high", "uniform, integers: the upper bound (exclusive unless --endpoint)"),
    ("a", "truncated_normal: the lower cut in standard deviations (-inf allowed); "
          "choice: the population size n (draws from range(n))"),
    ("b", "truncated_normal: the upper cut in standard deviations (inf allowed)"),
    ("p", "bernoulli: the probability of a 1; choice: comma-separated probabilities of "
          "0..n-1"),
    ("p_drop", "dropout_mask: the probability of dropping an element"),
    ("method", "normal, standard_normal: ziggurat or box_muller"),
)
FLAGS = (
    ("endpoint", "integers: include --high"),
    ("packed", "bernoulli: the packed Ascend mask (uint8) instead of bools"),
    ("replace", None),  # --no-replace, below
)
CHUNK_ROWS = 1 << 16  # CSV rows per write (and per progress step)
PROGRESS_ELEMENTS = 1 << 20  # draws at least this large show a progress bar


class UsageError(ValueError):
    """A command-line mistake (shown as one line, exit status 2)."""


def add_arguments(parser, output=True):
    """The sample options on ``parser`` (``plot dist`` shares them, without ``-o``)."""
    parser.add_argument("dist", choices=tuple(DISTRIBUTIONS), metavar="DIST",
                        help="one of: " + ", ".join(DISTRIBUTIONS))
    parser.add_argument("--size", required=True, metavar="SHAPE",
                        help="elements, or a shape such as 100,10 (permutation: n)")
    parser.add_argument("--seed", type=int, default=None,
                        help="the engine's seed (default: from the entropy pool, printed on "
                             "stderr)")
    parser.add_argument("--engine", choices=("philox", "mt19937"), default="philox")
    parser.add_argument("--streams", type=int, default=1, help="MT19937 streams")
    parser.add_argument("--backend", default="auto",
                        help="auto, native, numpy or torch (the same bits on each)")
    for name, text in VALUE_OPTIONS:
        parser.add_argument("--" + name.replace("_", "-"), dest=name, default=None,
                            metavar=name.upper(), help=text)
    parser.add_argument("--endpoint", action="store_true", default=None, help=FLAGS[0][1])
    parser.add_argument("--packed", action="store_true", default=None, help=FLAGS[1][1])
    parser.add_argument("--no-replace", dest="replace", action="store_false", default=None,
                        help="choice: without replacement")
    if output:
        parser.add_argument("-o", "--output", required=True, metavar="PATH",
                            help="out.npy, out.csv, or - for CSV on stdout")


def parse_size(text):
    """``"1000"`` -> (1000,); ``"100,10"`` or ``"100x10"`` -> (100, 10).

    >>> parse_size("100,10")
    (100, 10)
    """
    parts = str(text).replace("x", ",").split(",")
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise UsageError(f"--size must be whole numbers such as 1000 or 100,10, got {text!r}") \
            from None
    if any(n < 0 for n in shape):
        raise UsageError(f"--size must not be negative, got {text!r}")
    return shape


def _float(name, text):
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"--{name.replace('_', '-')} must be a number, got {text!r}") from None


def _int(name, text):
    try:
        return int(text, 0)
    except ValueError:
        raise UsageError(f"--{name.replace('_', '-')} must be an integer, got {text!r}") \
            from None


def _value(dist, name, text):
    """The option's text as the Generator method's argument."""
    if name in ("dtype", "method"):
        return text
    if dist == "integers" and name in ("low", "high"):
        return _int(name, text)
    if dist == "choice" and name == "a":
        return _int(name, text)
    if dist == "choice" and name == "p":
        return np.array([_float(name, t) for t in text.split(",")], dtype=np.float64)
    return _float(name, text)


def _flag(name):
    return "--no-replace" if name == "replace" else "--" + name.replace("_", "-")


def call_arguments(args):
    """(positional, keyword) arguments of ``Generator.<args.dist>`` from the options.

    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p, output=False)
    >>> call_arguments(p.parse_args(["normal", "--size", "3", "--loc", "2"]))
    ((), {'size': (3,), 'loc': 2.0})
    """
    dist, size = args.dist, parse_size(args.size)
    allowed = DISTRIBUTIONS[dist]
    given = {name: getattr(args, name) for name, _ in (*VALUE_OPTIONS, *FLAGS)
             if getattr(args, name) is not None}
    wrong = [n for n in given if n not in allowed]
    if wrong:
        flags = ", ".join(map(_flag, wrong))
        takes = ", ".join(map(_flag, allowed)) or "no options"
        raise UsageError(f"{flags} does not apply to {dist} (it takes {takes})")
    missing = [n for n in REQUIRED.get(dist, ()) if n not in given]
    if missing:
        raise UsageError(f"{dist} needs {_flag(missing[0])}")
    kwargs = {name: _value(dist, name, text) if name not in ("endpoint", "packed", "replace")
              else text for name, text in given.items()}
    if dist == "permutation":
        if len(size) != 1:
            raise UsageError(f"permutation draws a permutation of range(n): --size must be one "
                             f"number n, got {args.size!r}")
        return (size[0],), {}
    if dist == "dropout_mask":
        return (size, kwargs.pop("p_drop")), kwargs
    if dist == "choice":
        return (kwargs.pop("a"),), {"size": size, **kwargs}
    return (), {"size": size, **kwargs}


def make_generator(args):
    """(Generator, seed): ``args.seed``, or a fresh seed from the entropy pool."""
    from .. import Generator
    from ..entropy import secure_seed

    seed = args.seed if args.seed is not None else secure_seed()
    # streams: the engine says whether it has them (Engine.create refuses streams != 1).
    return Generator(seed, engine=args.engine, backend=args.backend, streams=args.streams), seed


def draw(args):
    """(NumPy array, seed) of the draw the options describe."""
    pos, kwargs = call_arguments(args)
    gen, seed = make_generator(args)
    return as_numpy(getattr(gen, args.dist)(*pos, **kwargs)), seed


def csv_format(dtype):
    """The printf format that writes ``dtype``'s values so they read back exactly.

    >>> csv_format(np.dtype("float64")), csv_format(np.dtype("int8"))
    ('%.17g', '%d')
    """
    if dtype.kind in "iub":
        return "%d"
    if dtype == np.float64:
        return "%.17g"
    return "%.9g"  # float32, and float16 / bfloat16 widened exactly to float32


def _check_csv(values):
    if values.ndim > 2:
        raise UsageError(f"CSV holds at most 2 dimensions, the draw has shape {values.shape}; "
                         "write .npy instead")


def write_csv(stream, values, bar=None):
    """Write a 0-, 1- or 2-D array as CSV lines, in chunks (``bar.advance()`` per chunk)."""
    _check_csv(values)
    fmt = csv_format(values.dtype)
    if values.dtype.kind == "b":
        values = values.astype(np.uint8)
    elif values.dtype.kind not in "iu" and values.dtype != np.float64:
        values = values.astype(np.float32)  # float16, bfloat16: exact in float32
    values = np.atleast_1d(values)
    for start in range(0, max(1, len(values)), CHUNK_ROWS):
        np.savetxt(stream, values[start:start + CHUNK_ROWS], fmt=fmt, delimiter=",")
        if bar is not None:
            bar.advance()


def write(values, output, bar=None):
    """Write ``values`` to ``output`` (.npy, .csv or "-"); returns the path written or "-"."""
    if output == "-":
        write_csv(sys.stdout, values, bar)
        sys.stdout.flush()
        return "-"
    path = Path(output)
    suffix = path.suffix.lower()  # the format: .npy / .NPY / .Csv alike
    if suffix == ".csv":
        _check_csv(values)  # before the file is created
    elif suffix != ".npy":
        raise UsageError(f"unknown output format {path.suffix or '(no suffix)'!r} in "
                         f"{output!r}: use .npy or .csv, or -o - for CSV on stdout")
    # Opened here, so the file is exactly the name given: numpy.save on a path appends
    # ".npy" to any name that does not end in lower-case ".npy" (out.NPY -> out.NPY.npy).
    mode, newline = ("wb", None) if suffix == ".npy" else ("w", "")
    fh = open(path, mode, newline=newline)
    try:
        with fh:  # closing flushes, and can fail too (a full disk)
            if suffix == ".npy":
                np.save(fh, values)
                if bar is not None:
                    bar.advance()
            else:
                write_csv(fh, values, bar)
    except BaseException:
        path.unlink(missing_ok=True)  # no half-written file left behind
        raise
    return str(path)


def _quiet_stdout():
    """Point stdout at /dev/null, dropping what is buffered for it: after a write to it
    failed, the interpreter's own flush at exit would fail again with a traceback."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(args):
    """``ascend-rand sample``: 0, or 2 with a one-line error."""
    from .. import BackendUnavailableError

    try:
        shape = parse_size(args.size)
        elements = math.prod(shape)
        csv = args.output == "-" or str(args.output).lower().endswith(".csv")
        steps = 1 + (max(1, -(-elements // CHUNK_ROWS)) if csv else 1)  # draw, then writes
        with progress(steps, f"sampling {args.dist}",
                      enabled=elements >= PROGRESS_ELEMENTS) as bar:
            values, seed = draw(args)
            bar.advance(description=f"writing {args.output}")
            where = write(values, args.output, bar)
    except BrokenPipeError:
        # `ascend-rand sample ... -o - | head` closed the pipe: not an error; stdout goes
        # to /dev/null so that Python's flush at exit does not complain either.
        _quiet_stdout()
        return 0
    except MemoryError as exc:
        # numpy's "Unable to allocate 373. GiB for an array with shape ...", or the
        # library's own: a draw too large for this machine is a bad value, not a crash.
        return error("sample", f"--size {args.size}: not enough memory "
                               f"({exc or type(exc).__name__})")
    except OSError as exc:  # the output cannot be written: a missing folder, a full disk
        if args.output == "-":
            _quiet_stdout()  # the interpreter's flush at exit would fail on it again
        where = "to stdout" if args.output == "-" else repr(str(args.output))
        return error("sample", f"cannot write {where}: {exc.strerror or exc}")
    except (UsageError, ValueError, TypeError, BackendUnavailableError) as exc:
        return error("sample", exc)
    if args.seed is None:
        print(f"seed {seed}", file=sys.stderr)
    if where != "-":
        print(f"wrote {values.size} {values.dtype} values, shape {values.shape}, to {where}",
              file=sys.stderr)
    return 0
