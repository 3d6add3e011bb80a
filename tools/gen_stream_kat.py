"""Write tests/data/stream_kat.json from an outside peer: TensorFlow's Philox.

The known answers of docs/spec.md sections 2-3 (raw words, uniform in the four
float formats, integers) must not come from the code they check, nor from the
test suite's own reference (``Ref`` in tests/conftest.py), or a shared mistake
would pass.  So every 32-bit word here is TensorFlow's:
``tf.raw_ops.StatelessRandomUniformFullIntV2(dtype=uint32, key=[key],
counter=[lo, hi], alg=1)`` (Philox4x32-10, the layout of spec section 2.5).
The conversions are then applied in this script, written from the spec in
exact rational arithmetic (``fractions.Fraction`` and a round-to-nearest-even
of its own):

- raw uint64 is TensorFlow's own uint64 FullInt with its two halves swapped
  (spec 3.1), and must equal the pair of uint32 words;
- uniform [0, 1) is TensorFlow's own ``StatelessRandomUniformV2`` bits, and must
  equal the spec 3.2 formula on the words;
- uniform [low, high) is spec 3.3, integers spec 3.5, on the words.

Run from the repository root (needs ``tensorflow-cpu``, the ``test`` extra):

    python tools/gen_stream_kat.py            # rewrites tests/data/stream_kat.json
    python tools/gen_stream_kat.py --check    # exit 1 if the file differs

tests/conformance/test_known_answers.py regenerates the cases with ``build_cases`` and
compares them with the file.
"""

import argparse
import json
import math
import os
import pathlib
import sys
from fractions import Fraction

import numpy as np

FORMAT = 2  # docs/spec.md section 8: the stream format these answers belong to
PATH = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "stream_kat.json"
TOP = (1 << 64) - 1
N = 8  # elements per case

# (key, (counter lo, counter hi)): plain, a 64-bit key with both counter halves set,
# a carry from lo into hi inside the draw, and the wrap modulo 2**128.
STREAMS = [
    (0, (0, 0)),
    (0xDEADBEEFCAFEF00D, (5, 9)),
    (1, ((1 << 64) - 3, 7)),
    (TOP, ((1 << 64) - 2, TOP)),
]
# Scaled uniforms (dtype, stream index, low, high): ordinary spans, a low just above a
# bfloat16 tie, huge bounds, subnormal outputs.
SCALED = [
    ("float32", 0, 0.1, 0.7),
    ("float16", 1, -3.0, 5.5),
    ("bfloat16", 2, 1.0039062509313226, 2.0),
    ("float64", 3, -1e300, 1e300),
    ("float16", 0, 0.0, 1.7881393432617188e-07),
    ("bfloat16", 1, 1e38, 3e38),
    ("float32", 2, 1e-40, 1e-39),
    ("float64", 3, 5e-324, 1e-320),
]
# Integers (dtype, stream index, low, high, endpoint): both word counts (r <= 2**32 and
# r > 2**32), full 64-bit ranges, a one-value range.
INTEGERS = [
    ("int8", 0, -100, 27, False),
    ("uint8", 1, 0, 255, True),
    ("int32", 2, -(1 << 31), 1 << 31, False),
    ("int64", 3, -(1 << 31), (1 << 31) + 1, False),
    ("int64", 0, -(1 << 63), (1 << 63) - 1, True),
    ("uint64", 1, 0, 1 << 64, False),
    ("uint64", 2, 5, (1 << 40) + 6, False),
    ("int16", 3, -5, -5, True),
]

# (explicit mantissa bits, minimum normal exponent, maximum exponent) of IEEE-754 formats.
FORMATS = {
    "float64": (52, -1022, 1023),
    "float32": (23, -126, 127),
    "float16": (10, -14, 15),
    "bfloat16": (7, -126, 127),
}
# The [0, 1) value of a word (spec 3.2): its low mantissa bits over 2**bits.
UNIT_BITS = {"float32": 23, "float16": 10, "bfloat16": 7}


def tensorflow():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    return tf


def tf_args(tf, n, key, counter):
    return dict(
        shape=tf.constant([n], dtype=tf.int64),
        key=tf.constant([key], dtype=tf.uint64),
        counter=tf.constant(list(counter), dtype=tf.uint64),
        alg=tf.constant(1, dtype=tf.int32),  # 1 = Philox4x32-10
    )


def tf_words(tf, n, key, counter):
    """Words 0 .. n-1 of the stream (key, counter), as Python ints, from TensorFlow."""
    out = tf.raw_ops.StatelessRandomUniformFullIntV2(dtype=tf.uint32, **tf_args(tf, n, key, counter))
    return [int(w) for w in out.numpy()]


def tf_uint64(tf, n, key, counter):
    """TensorFlow's uint64 FullInt with its halves swapped: spec 3.1's uint64 (first word high)."""
    out = tf.raw_ops.StatelessRandomUniformFullIntV2(dtype=tf.uint64, **tf_args(tf, n, key, counter))
    return [((int(v) & 0xFFFFFFFF) << 32) | (int(v) >> 32) for v in out.numpy()]


def tf_unit_bits(tf, n, key, counter, dtype):
    """TensorFlow's own uniform [0, 1) of ``dtype``, as unsigned bit patterns."""
    tf_dtype = {"float32": tf.float32, "float16": tf.float16, "bfloat16": tf.bfloat16, "float64": tf.float64}
    out = tf.raw_ops.StatelessRandomUniformV2(dtype=tf_dtype[dtype], **tf_args(tf, n, key, counter)).numpy()
    width = out.dtype.itemsize
    return [int(b) for b in np.ascontiguousarray(out).view(f"u{width}")]


def round_to(q, fmt):
    """The Fraction ``q`` rounded to nearest, ties to even, in ``fmt``; +-inf on overflow."""
    if q == 0:
        return Fraction(0)
    mant, emin, emax = FORMATS[fmt]
    sign, a = (-1, -q) if q < 0 else (1, q)
    e = math.floor(math.log2(a.numerator) - math.log2(a.denominator))
    while Fraction(2) ** e > a:  # log2 of big ints can be off by one near powers of two
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    quantum = Fraction(2) ** (max(e, emin) - mant)  # subnormals share emin's quantum
    scaled = a / quantum
    whole, rest = divmod(scaled.numerator, scaled.denominator)
    if 2 * rest > scaled.denominator or (2 * rest == scaled.denominator and whole % 2):
        whole += 1
    value = whole * quantum
    if value >= Fraction(2) ** (emax + 1):
        return sign * math.inf
    return sign * value


def bits_of(value, fmt):
    """IEEE-754 bit pattern of an exactly representable value (a Fraction, 0 or +-inf)."""
    mant, emin, emax = FORMATS[fmt]
    width = {"float64": 64, "float32": 32, "float16": 16, "bfloat16": 16}[fmt]
    exp_bits = width - 1 - mant
    sign = 1 if value < 0 else 0
    a = abs(value)
    if a == math.inf:
        return (sign << (width - 1)) | (((1 << exp_bits) - 1) << mant)
    if a == 0:
        return sign << (width - 1)
    a = Fraction(a)
    e = emax
    while Fraction(2) ** e > a and e > emin:
        e -= 1
    if a < Fraction(2) ** emin:  # subnormal: biased exponent 0
        m = a / Fraction(2) ** (emin - mant)
        assert m.denominator == 1
        return (sign << (width - 1)) | m.numerator
    m = a / Fraction(2) ** (e - mant) - (1 << mant)
    assert m.denominator == 1 and 0 <= m.numerator < (1 << mant)
    return (sign << (width - 1)) | ((e + (1 << (exp_bits - 1)) - 1) << mant) | m.numerator


def unit(dtype, words, i):
    """Spec 3.2: element i's [0, 1) value, exact."""
    if dtype == "float64":
        u = (words[2 * i] << 32) | words[2 * i + 1]
        return Fraction(u & ((1 << 52) - 1), 1 << 52)
    bits = UNIT_BITS[dtype]
    return Fraction(words[i] & ((1 << bits) - 1), 1 << bits)


def scaled_uniform(dtype, words, low, high):
    """Spec 3.3: fl(fl(x * span) + low) with low, high, span rounded to the format."""
    low_t = round_to(Fraction(float(low)), dtype)
    high_t = round_to(Fraction(float(high)), dtype)
    span_t = round_to(high_t - low_t, dtype)
    assert all(abs(v) != math.inf for v in (low_t, high_t, span_t)) and low_t < high_t
    return [round_to(round_to(unit(dtype, words, i) * span_t, dtype) + low_t, dtype) for i in range(N)]


def integers(words, low, high, endpoint):
    """Spec 3.5: low + floor(u * r / 2**64) of two words, or / 2**128 of four when r > 2**32."""
    r = high - low + (1 if endpoint else 0)
    if r <= 1 << 32:
        return [low + ((((words[2 * i] << 32) | words[2 * i + 1]) * r) >> 64) for i in range(N)]
    out = []
    for i in range(N):
        w = words[4 * i:4 * i + 4]
        out.append(low + ((((w[0] << 96) | (w[1] << 64) | (w[2] << 32) | w[3]) * r) >> 128))
    return out


def hexes(patterns, dtype):
    width = {"float64": 16, "float32": 8, "float16": 4, "bfloat16": 4}[dtype]
    return [format(p, f"0{width}x") for p in patterns]


def build_cases(tf):
    """The cases of tests/data/stream_kat.json, computed from TensorFlow's words now."""
    words = [tf_words(tf, 4 * N, key, counter) for key, counter in STREAMS]
    cases = []
    for (key, counter), w in zip(STREAMS, words):
        base = {"key": key, "counter": list(counter)}
        cases.append({"op": "raw", "dtype": "uint32", **base, "values": w[:N]})
        u64 = tf_uint64(tf, N, key, counter)
        assert u64 == [(w[2 * i] << 32) | w[2 * i + 1] for i in range(N)], "TF uint64 is not its uint32 pairs"
        cases.append({"op": "raw", "dtype": "uint64", **base, "values": u64})
        for dtype in ("float32", "float16", "bfloat16", "float64"):
            theirs = tf_unit_bits(tf, N, key, counter, dtype)
            ours = [bits_of(unit(dtype, w, i), dtype) for i in range(N)]
            assert theirs == ours, f"spec 3.2 {dtype} differs from TensorFlow's uniform for {key}, {counter}"
            cases.append({"op": "uniform", "dtype": dtype, **base, "low": 0.0, "high": 1.0,
                          "bits": hexes(theirs, dtype)})
    for dtype, s, low, high in SCALED:
        key, counter = STREAMS[s]
        values = scaled_uniform(dtype, words[s], low, high)
        cases.append({"op": "uniform", "dtype": dtype, "key": key, "counter": list(counter),
                      "low": low, "high": high, "bits": hexes([bits_of(v, dtype) for v in values], dtype)})
    for dtype, s, low, high, endpoint in INTEGERS:
        key, counter = STREAMS[s]
        cases.append({"op": "integers", "dtype": dtype, "key": key, "counter": list(counter),
                      "low": low, "high": high, "endpoint": endpoint,
                      "values": integers(words[s], low, high, endpoint)})
    return cases


def peer_name(tf):
    return f"tensorflow {tf.__version__}"


def document(tf, cases=None):
    """The whole file's content; ``cases`` (from ``build_cases``) saves asking TensorFlow twice."""
    return {
        "format": FORMAT,
        "peer": peer_name(tf),
        "generator": "tools/gen_stream_kat.py",
        "about": (
            "Known answers for ascend_rand stream format 2 (docs/spec.md sections 2-3). Every 32-bit "
            "word is TensorFlow's Philox4x32-10 (StatelessRandomUniformFullIntV2, dtype uint32, "
            "key=[key], counter=[lo, hi], alg=1); raw uint64 is TensorFlow's uint64 FullInt with its "
            "halves swapped (spec 3.1); uniform [0, 1) is TensorFlow's StatelessRandomUniformV2 bits "
            "(equal to spec 3.2 on the words, asserted when generated); scaled uniforms (spec 3.3) and "
            "integers (spec 3.5) are the spec's formulas applied to TensorFlow's words in exact "
            "arithmetic by tools/gen_stream_kat.py. Each case: op (raw/uniform/integers), dtype, key, "
            "counter [lo, hi], parameters; 'values' are integers, 'bits' the hex bit patterns of float "
            "outputs. Draw shape is (len,)."
        ),
        "cases": build_cases(tf) if cases is None else cases,
    }


def dumps(doc):
    """One case per line, as the file has always been laid out (reviewable diffs)."""
    head = {k: v for k, v in doc.items() if k != "cases"}
    lines = ["{"] + [f"{json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines.append('"cases": [')
    lines.append(",\n".join(json.dumps(c) for c in doc["cases"]))
    lines.append("]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file instead")
    args = parser.parse_args(argv)
    text = dumps(document(tensorflow()))
    if args.check:
        same = PATH.read_text() == text
        print("stream_kat.json is up to date" if same else "stream_kat.json differs from TensorFlow's answers")
        return 0 if same else 1
    PATH.write_text(text)
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
