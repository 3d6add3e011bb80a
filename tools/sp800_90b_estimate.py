"""NIST SP 800-90B non-IID min-entropy estimate of an entropy source's raw bytes.

    pip install sp800-90b          # needs Debian's libdivsufsort-dev (and libbz2-dev)
    python tools/sp800_90b_estimate.py [SOURCE] [N_BYTES]     # default: rdseed 1000000

Reads N_BYTES raw bytes from ``ascend_rand.entropy.sources.resolve(SOURCE)``
and runs the non-IID track of SP 800-90B (sp800-90b bundles NIST's
EntropyAssessment) on them as 8-bit samples: section 6.3's estimators on the
bytes (the collision, Markov and compression estimators apply to binary data
only, so they run on the bit string) and all ten on the bit string; the
initial entropy estimate (section 3.1.3) is min(H_original, 8 * H_bitstring)
bits per byte.  Prints every estimate with its time and the result as JSON.
"""

import json
import sys
import time


def main(argv):
    import sp800_90b

    from ascend_rand.entropy import sources

    name = argv[1] if len(argv) > 1 else "rdseed"
    n_bytes = int(argv[2]) if len(argv) > 2 else 1_000_000
    source = sources.resolve(name)
    size = (source.sample_bits + 7) // 8
    data = source.read(n_bytes - n_bytes % size)
    d = sp800_90b.Data(data, 8)
    # Non-binary samples: the estimators of section 6.3 that take any alphabet.
    byte_estimators = ["most_common", "t_tuple_and_lrs", "multi_most_common",
                       "lag_prediction", "multi_markov", "lz78y"]
    bit_estimators = ["most_common", "collision", "markov", "compression", "t_tuple_and_lrs",
                      "multi_most_common", "lag_prediction", "multi_markov", "lz78y"]
    result = {"source": source.name, "bytes": len(data), "estimates": {}}
    start = time.perf_counter()
    for prefix, names in (("h_", byte_estimators), ("h_bitstring_", bit_estimators)):
        for est in names:
            t = time.perf_counter()
            value = getattr(d, prefix + est)()
            result["estimates"][prefix + est] = value
            print(f"{prefix + est:34s} {value}  ({time.perf_counter() - t:.2f} s)", flush=True)

    def low(v):  # t-tuple and LRS come as a pair
        return min(v) if isinstance(v, tuple) else v

    h_original = min(low(result["estimates"]["h_" + e]) for e in byte_estimators)
    h_bitstring = min(low(result["estimates"]["h_bitstring_" + e]) for e in bit_estimators)
    result.update(h_original=h_original, h_bitstring=h_bitstring,
                  h_initial=min(h_original, 8 * h_bitstring),
                  seconds=round(time.perf_counter() - start, 1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
