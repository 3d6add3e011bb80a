#!/usr/bin/env bash
# Leak check of the native extension: tools/leak_check.py under valgrind --leak-check=full
# (docs/robustness.md).  Uses the ascend_rand that PYTHON imports from /tmp: the installed
# package in CI (PYTHONPATH selects another build), built normally (valgrind and ASan do
# not mix).
#
#   tools/leak_check.sh [PYTHON]        default .venv/bin/python, else python3
#
# Passes when valgrind reports no memory error and no block "definitely lost" or
# "indirectly lost" whose stack passes through _native (our code).  What is not ours is not
# counted: CPython's and NumPy's blocks still reachable or possibly lost at exit
# (interned objects, type caches, arenas the OS frees), and the errors this interpreter
# shows under valgrind without ascend_rand's native code at all (glibc's ld.so strncmp
# reading past a strdup'd rpath; "uninitialised value" reports in CPython's GC, small-int
# cache and eval loop: `python -c "import numpy"` under valgrind shows them too).
# Filtering records by the _native frames in their stacks does the job of a suppressions
# file without hiding a report of ours that shares a CPython frame.  PYTHONMALLOC=malloc
# makes every Python object a malloc block, so a reference our code leaks is a lost block.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-$([ -x .venv/bin/python ] && echo "$PWD/.venv/bin/python" || echo python3)}
case $PY in */*) PY=$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY") ;; esac  # absolute: we cd below
LOG=${LEAK_LOG:-/tmp/ascend_rand-valgrind.log}
SCRIPT=$PWD/tools/leak_check.py

# Run from /tmp so that the interpreter imports ascend_rand from sys.path (PYTHONPATH or
# the installed package), not by accident from this checkout's sources.
(cd /tmp && PYTHONMALLOC=malloc ASCEND_RAND_NUM_THREADS=2 valgrind --leak-check=full \
   --show-leak-kinds=definite,indirect --errors-for-leak-kinds=none --num-callers=40 \
   --log-file="$LOG" "$PY" "$SCRIPT" --rounds 3 --scale 1 --no-growth-check) || {
  echo "leak_check: the workload failed under valgrind (log: $LOG)"; tail -40 "$LOG"; exit 1; }

"$PY" "$PWD/tools/valgrind_judge.py" "$LOG"
