#!/usr/bin/env bash
# Leak check of the native extension: tools/leak_check.py under valgrind --leak-check=full
# (docs/robustness.md).  Uses the ascend_rand that `python -c "import ascend_rand"` finds
# from the current directory's parent of tools/ (the installed package in CI; PYTHONPATH
# selects another), built normally (valgrind and ASan do not mix).
#
#   tools/leak_check.sh [PYTHON]        default .venv/bin/python, else python3
#
# Passes when valgrind reports no memory errors and no block "definitely lost" or
# "indirectly lost" whose allocation stack passes through _native (our code).  CPython's
# and NumPy's own blocks still reachable at exit (interned objects, type caches, arenas
# freed by the OS) are not ours and are not counted; PYTHONMALLOC=malloc makes every
# Python object a malloc block, so a reference our code leaks is a lost block here.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-$([ -x .venv/bin/python ] && echo "$PWD/.venv/bin/python" || echo python3)}
LOG=${LEAK_LOG:-/tmp/ascend_rand-valgrind.log}
SCRIPT=$PWD/tools/leak_check.py

# Run from /tmp so that the interpreter imports ascend_rand from sys.path (PYTHONPATH or
# the installed package), not by accident from this checkout's sources.
(cd /tmp && PYTHONMALLOC=malloc ASCEND_RAND_NUM_THREADS=2 valgrind --leak-check=full \
   --show-leak-kinds=definite,indirect --errors-for-leak-kinds=none --num-callers=40 \
   --error-exitcode=99 --log-file="$LOG" \
   "$PY" "$SCRIPT" --rounds 3 --scale 1 --no-growth-check) || {
  echo "leak_check: valgrind or the workload failed (log: $LOG)"; tail -40 "$LOG"; exit 1; }

"$PY" - "$LOG" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
errors = re.search(r"ERROR SUMMARY: (\d+) errors", text)
records = re.split(r"\n==\d+== \n", text)
ours = [r for r in records if re.search(r"are (definitely|indirectly) lost", r) and "_native" in r]
summary = re.findall(r"(definitely lost|indirectly lost|possibly lost|still reachable): ([\d,]+ bytes in [\d,]+ blocks)", text)
print("leak_check: valgrind", "; ".join(f"{k} {v}" for k, v in summary))
print(f"leak_check: {errors.group(1) if errors else '?'} memory errors, {len(ours)} lost records from _native")
for r in ours:
    print(r)
sys.exit(1 if ours or not errors or errors.group(1) != "0" else 0)
EOF
