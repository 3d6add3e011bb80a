"""``ascend-rand battery quick|full``: external test batteries on ascend_rand's streams.

Each stream of ``STREAMS`` is written by ``ascend-rand stream`` (stream.py) into
the battery's standard input:

- ``rngtest`` (FIPS 140-2, Debian's ``rng-tools``) on 2000 blocks of 20,000
  bits, judged by its failure count, not its exit status: an ideal source
  fails a block with probability about 0.0008 (rngtest's documentation), so a
  count above the Poisson tail bound at 1e-6 fails;
- ``dieharder`` (Debian's ``dieharder``, ``-g 200`` reads stdin): in ``quick``
  the birthday spacings, 32x32 binary rank and runs tests; in ``full`` every
  test (``-a``), for raw Philox and MT19937 words only (hours; outside CI).

A dieharder p-value outside [1e-6, 1 - 1e-6] fails only if it repeats with a
second seed (seed + 1): one extreme p-value in many is what chance gives.
A battery not installed is a row saying so, never a pass.
"""

import json
import math
import re
import shutil
import subprocess
import sys

STREAMS = {
    "Philox raw words": [],
    "uniform float32 mantissa bits": ["--dist", "uniform"],
    "MT19937 words": ["--engine", "mt19937"],
    "MT19937, 4 streams": ["--engine", "mt19937", "--streams", "4"],
    "mask bits, p = 0.5": ["--dist", "mask"],
    "Philox, one draw per offset": ["--layout", "offsets"],
    "Philox, seeds 0..255 interleaved": ["--layout", "seeds"],
}
FULL_STREAMS = ("Philox raw words", "MT19937 words")
QUICK_DIEHARDER = (0, 2, 15)  # diehard_birthdays, diehard_rank_32x32, diehard_runs
RNGTEST_BLOCKS = 2000
FIPS_BLOCK_FAILURE = 0.0008  # an ideal source's chance of failing one FIPS 140-2 block
EXTREME = 1e-6


def poisson_limit(blocks, p=FIPS_BLOCK_FAILURE, tail=1e-6):
    """The smallest k with P(Poisson(blocks * p) > k) < tail: more failures than k fail."""
    lam = blocks * p
    term = cdf = math.exp(-lam)
    k = 0
    while 1.0 - cdf >= tail:
        k += 1
        term *= lam / k
        cdf += term
    return k


def _stream_command(args, seed):
    return [sys.executable, "-m", "ascend_rand", "stream", *args, "--seed", str(seed)]


def _feed(args, seed, battery, timeout=1800):
    """Run ``battery`` (argv) on the stream; its (stdout + stderr) text.  ``timeout``
    in seconds (None: no limit, for ``dieharder -a``)."""
    producer = subprocess.Popen(_stream_command(args, seed), stdout=subprocess.PIPE)
    try:
        result = subprocess.run(battery, stdin=producer.stdout, capture_output=True, text=True,
                                timeout=timeout)
    finally:
        producer.stdout.close()
        producer.kill()
        producer.wait()
    return result.stdout + result.stderr


def rngtest(args, seed):
    """(failures, limit, passed) of rngtest on ``RNGTEST_BLOCKS`` blocks of the stream."""
    text = _feed(args, seed, ["rngtest", "-c", str(RNGTEST_BLOCKS)])
    match = re.search(r"FIPS 140-2 failures:\s*(\d+)", text)
    if not match:
        raise RuntimeError(f"rngtest printed no failure count: {text[-300:]!r}")
    failures, limit = int(match.group(1)), poisson_limit(RNGTEST_BLOCKS)
    return failures, limit, failures <= limit


def dieharder_results(lines):
    """[(test, ntup, p-value, assessment)] of dieharder's result lines among ``lines``
    (``test|ntup|tsamples|psamples|p-value|Assessment``; the header and other lines are
    skipped)."""
    results = []
    for line in lines:
        cells = [c.strip() for c in line.split("|")]
        if len(cells) >= 6:
            try:
                p = float(cells[4])
            except ValueError:
                continue  # the header
            results.append((cells[0], cells[1], p, cells[5]))
    return results


def dieharder(args, seed, test):
    """[(test name, p-value)] of ``dieharder -g 200`` (``test``: a -d number or test name,
    or "all" for ``-a``, hours on a pipe)."""
    which = ["-a"] if test == "all" else ["-d", str(test)]
    text = _feed(args, seed, ["dieharder", "-g", "200", *which], timeout=None if test == "all" else 1800)
    rows, seen = [], {}
    for test, ntup, p, _ in dieharder_results(text.splitlines()):
        name = f"{test} (ntup {ntup})"
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:  # diehard_runs reports runs up and runs down
            name += f" #{seen[name]}"
        rows.append((name, p))
    if not rows:
        raise RuntimeError(f"dieharder printed no p-value: {text[-300:]!r}")
    return rows


def _extreme(p):
    return not EXTREME <= p <= 1.0 - EXTREME


def run(kind="quick", seed=1, log=None):
    """The battery's rows: {stream, battery, test, seed, value, result}."""
    if kind not in ("quick", "full"):
        raise ValueError(f"kind must be 'quick' or 'full', got {kind!r}")
    rows = []
    have = {name: shutil.which(name) is not None for name in ("rngtest", "dieharder")}
    streams = STREAMS if kind == "quick" else {k: STREAMS[k] for k in FULL_STREAMS}
    for name, args in streams.items():
        if log:
            log(f"{name}")
        if kind == "quick":
            if have["rngtest"]:
                failures, limit, ok = rngtest(args, seed)
                rows.append({"stream": name, "battery": "rngtest", "test": "FIPS 140-2",
                             "seed": seed, "value": f"{failures} of {RNGTEST_BLOCKS} blocks failed "
                             f"(limit {limit})", "result": "PASSED" if ok else "FAILED"})
            else:
                rows.append({"stream": name, "battery": "rngtest", "test": "-", "seed": seed,
                             "value": "not installed (apt-get install rng-tools)",
                             "result": "MISSING"})
        if not have["dieharder"]:
            rows.append({"stream": name, "battery": "dieharder", "test": "-", "seed": seed,
                         "value": "not installed (apt-get install dieharder)", "result": "MISSING"})
            continue
        for test in (QUICK_DIEHARDER if kind == "quick" else ("all",)):
            for test_name, p in dieharder(args, seed, test):
                row = {"stream": name, "battery": "dieharder", "test": test_name, "seed": seed,
                       "value": f"p = {p:.6f}", "result": "PASSED"}
                if _extreme(p):  # once is chance; the same test again on the next seed
                    # (only that test: "name (ntup k)" reruns as -d name)
                    again = dict(dieharder(args, seed + 1, test_name.split(" (")[0])).get(test_name)
                    row["value"] += f"; seed {seed + 1}: p = {again:.6f}"
                    row["result"] = "FAILED" if again is None or _extreme(again) else "PASSED"
                rows.append(row)
    return rows


def main(kind="quick", seed=1, as_json=False):
    """Print the table (or JSON); exit status 1 if a row failed or a battery is missing."""
    rows = run(kind, seed, log=lambda s: print(f"... {s}", file=sys.stderr, flush=True))
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        widths = [max(len(str(r[k])) for r in rows + [dict(zip(COLUMNS, COLUMNS))])
                  for k in COLUMNS]
        for r in [dict(zip(COLUMNS, COLUMNS))] + rows:
            print("  ".join(str(r[k]).ljust(w) for k, w in zip(COLUMNS, widths)).rstrip())
    return 0 if all(r["result"] == "PASSED" for r in rows) else 1


COLUMNS = ("stream", "battery", "test", "seed", "value", "result")
