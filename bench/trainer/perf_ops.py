#!/usr/bin/python3
"""Per-ATen-op CPU profile of any process, wireup-train or the eager peer alike.

Reads `perf script` output of a call-graph recording from stdin and counts the
samples by the library they landed in, by the innermost ATen operator on the
stack (`at::_ops::NAME::call`: the op whose kernel ran), by the outermost one
(the op the program called) and by the innermost wireup::train function.
Since LibTorch is the same library under both programs, the same op names
line up between them. Diagnostic only (docs/bench-trainer.md):

  perf record -e cpu-clock -F 299 --call-graph dwarf,16384 -o w.data \\
      wireup-train --preset small --synthetic_data --num_threads 1 --max_steps 4
  perf script -i w.data | perf_ops.py --hz 299 --steps 4

Figures include process start-up and initialisation, spread over --steps.
"""
import argparse
import collections
import re
import sys

OP = re.compile(r"at::_ops::(\w+)::call")
WIREUP = re.compile(r"(wireup::train::[\w:]+)")
DSO = re.compile(r"\(([^)]*)\)\s*$")


def samples(lines):
    stack = []
    for line in lines:
        if not line.strip():
            if stack:
                yield stack
            stack = []
        elif line[0] in " \t":
            stack.append(line.strip())
    if stack:
        yield stack


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hz", type=float, required=True, help="perf record -F")
    p.add_argument("--steps", type=float, default=1.0, help="training steps recorded")
    p.add_argument("--top", type=int, default=25)
    a = p.parse_args()
    tables = {k: collections.Counter() for k in ("library", "innermost ATen op",
                                                  "outermost ATen op", "innermost wireup frame")}
    total = 0
    for st in samples(sys.stdin):
        total += 1
        ops = [m.group(1) for m in map(OP.search, st) if m]
        w = next((m.group(1) for m in map(WIREUP.search, st) if m), "-")
        d = DSO.search(st[0])
        tables["library"][d.group(1).rsplit("/", 1)[-1] if d else "?"] += 1
        tables["innermost ATen op"][ops[0] if ops else "-"] += 1
        tables["outermost ATen op"][ops[-1] if ops else "-"] += 1
        tables["innermost wireup frame"][w] += 1
    if not total:
        sys.exit("no samples with call chains on stdin (perf record --call-graph dwarf)")
    for name, c in tables.items():
        print(f"\n{name}: {total} samples")
        for k, v in c.most_common(a.top):
            print(f"{v:7d} {100.0 * v / total:5.1f}% {1e3 * v / a.hz / a.steps:8.1f} ms/step  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
