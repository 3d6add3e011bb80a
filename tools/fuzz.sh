#!/usr/bin/env bash
# Fuzz the native layer (fuzz/fuzz_native.py, docs/robustness.md) for SECONDS seconds.
#
#   tools/fuzz.sh [SECONDS] [PYTHON] [libFuzzer options...]
#
# SECONDS defaults to 60, PYTHON to .venv/bin/python (else python3), which needs atheris
# and imports the ascend_rand under test from sys.path (the installed package, or
# PYTHONPATH=<checkout with an in-place build>).  The corpus grows in $FUZZ_DIR/corpus
# (default /tmp/ascend_rand-fuzz) so that a later run starts where this one stopped; a
# finding is written to $FUZZ_DIR/crash-* / timeout-* / oom-* (replay: PYTHON
# fuzz/fuzz_native.py FILE), and the run fails with the harness's report.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-60}
PY=${2:-$([ -x .venv/bin/python ] && echo "$PWD/.venv/bin/python" || echo python3)}
shift $(( $# > 2 ? 2 : $# ))
DIR=${FUZZ_DIR:-/tmp/ascend_rand-fuzz}
mkdir -p "$DIR/corpus"
LOG=$DIR/fuzz.log
if "$PY" fuzz/fuzz_native.py "$DIR/corpus" -max_total_time="$SECONDS_TO_RUN" -timeout=30 \
     -rss_limit_mb=3072 -artifact_prefix="$DIR/" -print_final_stats=1 "$@" > "$LOG" 2>&1; then
  grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)' "$LOG" \
    | sed 's/^/fuzz: /'
  echo "fuzz: corpus $(ls "$DIR/corpus" | wc -l) inputs, no finding (log: $LOG)"
else
  status=$?
  # The harness's report (an uncaught PropertyViolation, or a libFuzzer/sanitizer summary).
  sed -n '/=== Uncaught Python exception/,$p;/ERROR: /,$p' "$LOG" | head -80
  grep -h 'Test unit written to' "$LOG" | sed 's/^/fuzz: /' || true
  echo "fuzz: FAILED with status $status (log: $LOG)"
  exit "$status"
fi
