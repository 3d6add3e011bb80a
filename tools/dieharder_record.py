"""Turn `dieharder -a` outputs into the table docs/quality.md records.

Each input file holds what this command wrote (the `start`/`end` lines give the wall
time):

    ( echo "start $(date -u +%FT%TZ)"; ascend-rand stream --engine E --dist raw --seed S \\
        | dieharder -g 200 -a; echo "end $(date -u +%FT%TZ) seconds=$SECONDS" ) > E.txt

Usage: python tools/dieharder_record.py NAME=FILE [NAME=FILE ...]
prints a summary table (tests, PASSED / WEAK / FAILED, wall time) and one table of every
test's p-value, one column per file.
"""

import sys
from collections import Counter

from ascend_rand.cli.battery import dieharder_results


def parse(path):
    """(rows [(test, ntup, p, assessment)], start, seconds or None) of one output file."""
    start, seconds = None, None
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        if line.startswith("start "):
            start = line.split()[1]
        elif line.startswith("end ") and "seconds=" in line:
            seconds = int(line.rsplit("seconds=", 1)[1])
    return dieharder_results(lines), start, seconds


def main(argv):
    runs = [arg.split("=", 1) for arg in argv]
    parsed = {name: parse(path) for name, path in runs}
    print("| stream | tests | PASSED | WEAK | FAILED | wall time |")
    print("|---|---|---|---|---|---|")
    for name, (rows, start, seconds) in parsed.items():
        c = Counter(r[3] for r in rows)
        wall = f"{seconds / 3600:.2f} h (from {start})" if seconds else f"not finished (from {start})"
        print(f"| {name} | {len(rows)} | {c['PASSED']} | {c['WEAK']} | {c['FAILED']} | {wall} |")
    print()
    keys = []
    for rows, _, _ in parsed.values():
        for test, ntup, _, _ in rows:
            if (test, ntup) not in keys:
                keys.append((test, ntup))
    print("| test | ntup | " + " | ".join(parsed) + " |")
    print("|---|---|" + "---|" * len(parsed))
    for test, ntup in keys:
        cells = []
        for rows, _, _ in parsed.values():
            hit = [f"{p:.4f}" + ("" if a == "PASSED" else f" {a}") for t, n, p, a in rows if (t, n) == (test, ntup)]
            cells.append(", ".join(hit) if hit else "-")
        print(f"| {test} | {ntup} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
