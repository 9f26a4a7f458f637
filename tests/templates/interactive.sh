#!/usr/bin/env bash
# interactive.sh on the cluster: salloc --wireup, one line per node, and a
# command in the allocation whose sruns are wired (wireup-train on 2 x 2 ranks).
# shellcheck source=tests/templates/lib.sh
source "$(dirname "$0")/lib.sh"
set +e
NODES=2 RANKS_PER_NODE=2 TIME=5 timeout 120 "$TEMPLATES/interactive.sh" -- \
  srun wireup-train --preset tiny --synthetic_data --max_steps 3 --num_threads 1 \
  </dev/null >"$WORK/alloc.out" 2>&1
rc=$?
set -e
show alloc
out=$(cat "$WORK/alloc.out")
check "interactive.sh -- CMD: exit code" "$rc" 0
contains "allocation: every srun wired" "$out" "every srun here is wired"
check "one line per node" "$(grep -c '^\[node\] ip-127-0-0-[0-9]* node_rank=[01] gpus=0 master=127\.0\.0\.[0-9]*:6' <<<"$out")" 2
contains "wireup-train wired by salloc --wireup" "$out" "world=4 local_world=2 nodes=2"
contains "wireup-train finished" "$out" "[summary] steps=3"
contains "allocation released" "$out" "Relinquishing job allocation"
out=$("$TEMPLATES/interactive.sh" --help)
contains "--help prints the header" "$out" "an interactive allocation"
nodes_idle
finish
