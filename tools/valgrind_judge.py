"""Judge a valgrind memcheck log for tools/leak_check.sh: fail on records that are ours.

A record (valgrind separates them with an empty ``==PID==`` line) is ours when its
stacks pass through the extension (``_native`` in an object name, or a ``csrc/``
source line).  Fails on any memory-error record of ours and any "definitely lost" or
"indirectly lost" record of ours; prints valgrind's leak summary either way.

    python tools/valgrind_judge.py LOG
"""

import re
import sys

ERROR_KINDS = re.compile(r"Invalid (read|write|free)|Use of uninitialised|Conditional jump|"
                         r"Syscall param|Mismatched free|Source and destination overlap")
LOST = re.compile(r"are (definitely|indirectly) lost")
SUMMARY = re.compile(r"(definitely lost|indirectly lost|possibly lost|still reachable): "
                     r"([\d,]+ bytes in [\d,]+ blocks)")


def ours(record):
    return "_native" in record or "csrc/" in record


def judge(text):
    """(report lines, the records of ours); a log without a leak summary is a failure."""
    records = re.split(r"\n==\d+== \n", text)
    errors = [r for r in records if ERROR_KINDS.search(r)]
    mine = [r for r in errors if ours(r)]
    lost = [r for r in records if LOST.search(r) and ours(r)]
    summary = SUMMARY.findall(text)
    lines = ["leak_check: valgrind " + "; ".join(f"{k} {v}" for k, v in summary),
             f"leak_check: {len(errors)} error records, {len(mine)} through _native; "
             f"{len(lost)} lost-block records through _native"]
    if not summary:
        lines.append("leak_check: no leak summary in the log (did valgrind finish?)")
    return lines, mine + lost, bool(summary)


def main(argv):
    with open(argv[1]) as fh:
        lines, bad, complete = judge(fh.read())
    print("\n".join(lines))
    for record in bad:
        print(record)
    return 1 if bad or not complete else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
