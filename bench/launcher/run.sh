#!/usr/bin/env bash
# bench/run.sh's entry for the launcher: wireup (srun --wireup, wireup-launch plain and with
# --agent-store) vs torchrun at 2, 8 and 32 emulated nodes, to all ranks wired and to the
# first all_reduce (scale_bench.sh; docs/bench-launcher.md).
#   run.sh BUILD_DIR OUT.md [REPS]     knobs: WIREUP_BENCH_REPS, WIREUP_BENCH_NODES, ...
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-3}}
exec bash "$(dirname "$0")/scale_bench.sh" "$build" "$out" "$reps"
