#!/usr/bin/env bash
# One command for a Kunpeng (or any) host: build ascend_rand in a fresh virtual
# environment and print the benchmark table at every SIMD level this CPU runs
# (aarch64: scalar and neon; x86-64: scalar, avx2, avx512), with the machine's name,
# as docs/performance.md shows it.  The results land in bench/results/ as JSON.
#
#   bash bench/run_on_this_machine.sh            # full sizes (a few minutes)
#   bash bench/run_on_this_machine.sh --quick    # 1e6 elements only
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-bench
.venv-bench/bin/pip install -q ".[bench]"
mkdir -p bench/results
out="bench/results/$(uname -m)-$(hostname -s)-$(date -u +%Y%m%dT%H%M%SZ).json"
.venv-bench/bin/ascend-rand info --quick
.venv-bench/bin/ascend-rand bench --levels --markdown --json "$out" "$@"
echo "results: $out"
