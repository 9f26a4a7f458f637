#!/usr/bin/env bash
# bench/run.sh's entry for the launcher: wireup (srun --wireup, wireup-launch plain and with
# --agent-store) vs torchrun at 2, 8 and 32 emulated nodes, to all ranks wired and to the
# first all_reduce (scale_bench.sh), then wireup's own wiring work per task at 2 to 2048
# nodes (wireup-bench-wiring-work). docs/bench-launcher.md.
#   run.sh BUILD_DIR OUT.md [REPS]     knobs: WIREUP_BENCH_REPS, WIREUP_BENCH_NODES, ...
set -uo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-3}}
bash "$(dirname "$0")/scale_bench.sh" "$build" "$out" "$reps"
rc=$?
work=$build/bench/launcher/wireup-bench-wiring-work
if [[ -x $work ]]; then
  { echo; "$work"; } >>"$out" || rc=1
else
  echo "run.sh: no $work (build the wireup-bench-wiring-work target); its section is missing" >&2
  rc=1
fi
exit "$rc"
